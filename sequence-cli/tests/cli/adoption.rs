//! A live typegoose service adopted by a Rust model, end to end with the command line: the
//! sequence is found where its record and counter are, without `--counters` for what reads,
//! and every refusal says where the counter is instead of inviting a duplicate.

use mongodb::bson::{doc, oid::ObjectId, Document};
use sequence_runtime::options::Layout;
use sequence_runtime::{Sequence, SequenceOptions};

use crate::support::{all, cli, fresh_database, json, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typegoose_service_is_found_and_never_duplicated() {
    let (db, database) = fresh_database("nodeapp").await;
    // The Node service: 46 tickets, its counter at 46 (typegoose's `AutoIncrementID`).
    let tickets = database.collection::<Document>("tickets");
    for n in 1..=46_i64 {
        tickets.insert_one(doc! { "_id": n }).await.unwrap();
    }
    let counters = database.collection::<Document>("identitycounters");
    counters
        .insert_one(doc! {
            "_id": ObjectId::new(), "field": "_id", "modelName": "Ticket", "count": 46_i64, "__v": 0,
        })
        .await
        .unwrap();
    // The Rust model beside it, `layout = "typegoose", start = 0`, which records the sequence.
    let options = SequenceOptions::builder("Ticket")
        .layout(Layout::Typegoose)
        .start(0)
        .build();
    assert_eq!(
        Sequence::new(&database, options)
            .unwrap()
            .next()
            .await
            .unwrap(),
        47
    );

    let listed = json(&["list", &db]);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let row = &listed[0];
    assert_eq!(
        (
            &row["name"],
            &row["counters"],
            &row["layout"],
            &row["last_issued"]
        ),
        (
            &"Ticket".into(),
            &"identitycounters".into(),
            &"typegoose".into(),
            &47.into()
        ),
        "{row}"
    );
    let shown = json(&["show", &db, "Ticket"]);
    assert_eq!(
        (&shown["counters"], &shown["last_issued"], &shown["gapless"]),
        (&"identitycounters".into(), &47.into(), &false.into()),
        "{shown}"
    );
    let synced = json(&[
        "sync",
        &format!("{db}.tickets"),
        "--name",
        "Ticket",
        "--dry-run",
    ]);
    assert_eq!(
        synced["counters"],
        serde_json::json!([{
            "counter": "Ticket", "old": 47, "new": 47, "stored": 46, "ids": 46, "moved": false,
        }]),
        "the live counter, and no second one"
    );
    assert_eq!(all(&counters).await.len(), 1);

    // Writes name the collection; nothing suggests `--create`.
    let next = cli(&["next", &db, "Ticket"]);
    assert_eq!(next.status.code(), Some(2));
    assert_eq!(
        stderr(&next),
        format!(
            "error: sequence `Ticket` is in `{db}.identitycounters` (@typegoose/auto-increment's \
             layout, recorded): a command that writes names that collection; nothing was done\n\
             hint: give `--counters identitycounters`\n"
        )
    );
    let next = cli(&["next", &db, "Ticket", "--counters", "identitycounters"]);
    assert_eq!(stdout(&next), "48\n", "{}", stderr(&next));
    let elsewhere = cli(&["next", &db, "Ticket", "--counters", "counters"]);
    assert_eq!(
        stderr(&elsewhere),
        format!(
            "error: `--counters counters` contradicts the record of sequence `Ticket`, which is \
             in `{db}.identitycounters.sequences`: its counters are in \
             `{db}.identitycounters`; nothing was done\nhint: give `--counters \
             identitycounters`, or leave `--counters` out\n"
        )
    );
    let contradicted = cli(&["show", &db, "Ticket", "--layout", "default"]);
    assert_eq!(
        stderr(&contradicted),
        "error: `--layout default` (recorded: `typegoose`) contradicts the record of sequence \
         `Ticket` in `identitycounters.sequences`; nothing was done\nhint: leave the flag out: \
         the record says how the sequence's counters and IDs look\n"
    );
    let typo = cli(&["next", &db, "Tiket"]);
    assert_eq!(
        stderr(&typo),
        format!(
            "error: sequence `Tiket` has no counter and no record in any counters collection \
             of `{db}`; nothing was done\nhint: check the name with `mongo-sequence list \
             {db}`; `--create` starts a new counter in `{db}.counters`\n"
        )
    );
    let indexes = cli(&[
        "ensure-indexes",
        &format!("{db}.accounts"),
        "--name",
        "acount",
    ]);
    assert_eq!(indexes.status.code(), Some(1), "{}", stderr(&indexes));
    assert!(stderr(&indexes).contains("`acount` has no counter and no record"));
    let back = cli(&[
        "set-next",
        &db,
        "Ticket",
        "10",
        "--counters",
        "identitycounters",
        "--dry-run",
    ]);
    assert_eq!(
        stderr(&back),
        "error: refusing to move `Ticket` backwards from last issued 48 to next 10: the \
         numbers 10 to 48 would be issued again; nothing was written\nhint: `--force` moves it \
         anyway, if no document holds these values\n"
    );
    assert_eq!(all(&counters).await.len(), 1, "still one counter");
}

/// `check` and `repair` take the ID field and the scope fields from the record of `--name`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_takes_the_id_field_from_the_record() {
    let (db, database) = fresh_database("cli_check_record").await;
    let options = SequenceOptions::builder("slip").id_field("number").build();
    let number = Sequence::new(&database, options)
        .unwrap()
        .next()
        .await
        .unwrap();
    let doc_id = ObjectId::new();
    database
        .collection::<Document>("slips")
        .insert_one(doc! { "_id": doc_id, "number": number })
        .await
        .unwrap();
    database
        .collection::<Document>("slips.claims.number")
        .insert_one(doc! { "_id": number, "doc": doc_id })
        .await
        .unwrap();
    let target = format!("{db}.slips");
    let clean = cli(&["check", &target, "--name", "slip"]);
    assert!(clean.status.success(), "{}", stderr(&clean));
    assert!(
        stdout(&clean).contains(&format!("against `{db}.slips.claims.number`: 0 documents")),
        "{}",
        stdout(&clean)
    );
    let other = cli(&["check", &target, "--name", "slip", "--field", "_id"]);
    assert_eq!(
        stderr(&other),
        "error: `--field _id` contradicts the record of sequence `slip` (recorded: `number`); \
         nothing was done\nhint: leave the flag out: the record says where the documents store \
         the ID\n"
    );
    let neither = cli(&["check", &target]);
    assert_eq!(neither.status.code(), Some(2), "{}", stderr(&neither));
}
