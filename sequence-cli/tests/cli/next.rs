//! `next`: values taken with the counter's options, IDs rendered in each format, and names that
//! are not there, which create nothing.

use mongodb::bson::{doc, Document};
use sequence_runtime::options::CheckDigit;
use sequence_runtime::{jiff, Sequence, SequenceOptions};

use crate::support::{cli, counters, fresh_database, json, json_error, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_takes_values_with_the_counters_options() {
    let (db, database) = counters("cli_next").await;
    let counters = database.collection::<Document>("counters");
    let seq = |id: &'static str| {
        let counters = counters.clone();
        async move {
            counters
                .find_one(doc! { "_id": id })
                .await
                .unwrap()
                .unwrap()
                .get_i64("seq")
                .unwrap()
        }
    };
    assert_eq!(
        json(&["next", &db, "userid"]),
        serde_json::json!({ "name": "userid", "ids": [42], "dry_run": false })
    );
    assert_eq!(
        json(&["next", &db, "userid", "3"])["ids"],
        serde_json::json!([43, 44, 45])
    );
    let text = cli(&["next", &db, "userid", "2"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert_eq!(stdout(&text), "46\n47\n");
    assert_eq!(seq("userid").await, 47, "the values are issued");

    // Rendered IDs, a scope, and the bounds given.
    let ids = json(&[
        "next", &db, "ticket", "2", "--prefix", "T-", "--width", "4", "--create",
    ]);
    assert_eq!(ids["ids"], serde_json::json!(["T-0001", "T-0002"]));
    let scoped = json(&["next", &db, "order", "2", "--scope", "tenant=acme"]);
    assert_eq!(scoped["ids"], serde_json::json!([8, 9]));
    let small = ["--start", "100", "--max", "101", "--create"];
    let first = json(&[&["next", &db, "small", "2"][..], &small].concat());
    assert_eq!(first["ids"], serde_json::json!([100, 101]));
    let exhausted = json_error(&[&["next", &db, "small"][..], &small].concat(), 1);
    assert!(
        exhausted["error"].as_str().unwrap().contains("exhausted"),
        "{exhausted}"
    );
    assert!(
        exhausted["hint"].as_str().unwrap().contains("--max"),
        "{exhausted}"
    );
    assert_eq!(seq("small").await, 101, "nothing was written");

    // A counter written by other code: the next free value in `COUNT`.
    counters
        .insert_one(doc! { "_id": "invoice", "COUNT": 1042_i64 })
        .await
        .unwrap();
    let taken = json(&[
        "next",
        &db,
        "invoice",
        "--field",
        "COUNT",
        "--stores",
        "next_free",
    ]);
    assert_eq!(taken["ids"], serde_json::json!([1042]));
    let invoice = counters
        .find_one(doc! { "_id": "invoice" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invoice.get_i64("COUNT"), Ok(1043));

    json_error(&["next", &db, "userid", "0"], 2);
    json_error(&["next", &db, "userid", "--stores", "next"], 2);
}

/// Sequences whose IDs have a template, check digits or another encoding: `next` prints the
/// IDs as the documents hold them, from the sequence's record or the options given, and
/// `show` the last ID issued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_and_show_write_ids_of_each_format() {
    let (db_name, db) = fresh_database("cli_formats").await;
    let account = SequenceOptions::builder("account")
        .format("ACC-{n:08}-{check}")
        .check_digit(CheckDigit::Luhn)
        .build();
    let seq = Sequence::new(&db, account).unwrap();
    assert_eq!(seq.next_id::<String>().await.unwrap(), "ACC-00000001-8");
    // From the record: the template and the check digits.
    let ids = json(&["next", &db_name, "account", "2"]);
    assert_eq!(
        ids["ids"],
        serde_json::json!(["ACC-00000002-6", "ACC-00000003-4"])
    );
    let shown = json(&["show", &db_name, "account"]);
    assert_eq!(shown["last_id"], "ACC-00000003-4");
    let table = cli(&["show", &db_name, "account"]);
    assert!(
        stdout(&table).contains("last ID: ACC-00000003-4"),
        "{}",
        stdout(&table)
    );
    // From the options given: a Crockford code with its check symbol.
    let ids = json(&[
        "next",
        &db_name,
        "order",
        "2",
        "--encoding",
        "crockford32",
        "--width",
        "4",
        "--check-digit",
        "crockford",
        "--create",
    ]);
    assert_eq!(ids["ids"], serde_json::json!(["00011", "00022"]));
    let refused = json_error(
        &[
            "next",
            &db_name,
            "order",
            "--check-digit",
            "lunh",
            "--create",
        ],
        2,
    );
    assert!(refused.to_string().contains("luhn"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_names_create_nothing_and_periods_and_scopes_are_listed() {
    let (db_name, db) = counters("cli_known").await;
    let before = db
        .collection::<Document>("counters")
        .count_documents(doc! {})
        .await
        .unwrap();
    for args in [
        &["next", &db_name, "newcounter"][..],
        &["set-next", &db_name, "newcounter", "5"],
    ] {
        let typo = json_error(args, 1);
        assert!(
            typo["hint"].as_str().unwrap().contains("--create"),
            "{typo}"
        );
    }
    assert_eq!(
        db.collection::<Document>("counters")
            .count_documents(doc! {})
            .await
            .unwrap(),
        before,
        "a typo creates nothing"
    );
    assert_eq!(
        json(&["set-next", &db_name, "newcounter", "5", "--create"])["next"],
        5
    );

    // A sequence of periods, and one of scopes: `show` lists the flags that name their counters.
    let inv = json_error(&["show", &db_name, "inv"], 1);
    assert_eq!(
        inv["hint"],
        "name one: --period 20251120, --period 20251121, --period 20251122"
    );
    let order = json_error(&["show", &db_name, "order"], 1);
    assert_eq!(order["hint"], "name one: --scope tenant=acme");
    // `next` takes the recorded options: the period of today, a scope value when given.
    let today = jiff::Timestamp::now().strftime("%y%m%d").to_string();
    let ids = json(&["next", &db_name, "inv"])["ids"].clone();
    assert!(
        ids[0].as_str().unwrap().starts_with(&today),
        "{ids} is of today's period"
    );
    let order = json_error(&["next", &db_name, "order"], 1);
    assert_eq!(order["hint"], "name one: --scope tenant=acme");
    assert_eq!(
        json(&["next", &db_name, "order", "--scope", "tenant=acme"])["ids"],
        serde_json::json!([8])
    );
}
