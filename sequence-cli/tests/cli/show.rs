//! `show`: one counter of a sequence of shards, and counters of other conventions, named by
//! `--layout` or found by `--filter`.

use mongodb::bson::{doc, Bson, Document};

use crate::support::{cli, counters, fresh_database, json, json_error, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_are_shown_set_and_deleted_one_at_a_time() {
    let (db, database) = counters("cli_shards").await;
    let counters = database.collection::<Document>("counters");
    // Shards 0 and 1 of `--shards 4 --max 100`, as the ranges strategy writes them.
    counters
        .insert_many([
            doc! { "_id": { "seq": "acct", "shard": 0 }, "lo": 1_i64, "hi": 25_i64, "seq": 10_i64 },
            doc! { "_id": { "seq": "acct", "shard": 1 }, "lo": 26_i64, "hi": 50_i64, "seq": 30_i64 },
        ])
        .await
        .unwrap();
    let shard = json(&["show", &db, "acct", "--shard", "1"]);
    assert_eq!(
        (
            shard["shard"].as_i64(),
            shard["last_issued"].as_i64(),
            shard["start"].as_i64(),
            shard["max"].as_i64(),
            shard["room_left"].as_u64(),
            shard["used"].as_f64()
        ),
        (Some(1), Some(30), Some(26), Some(50), Some(20), Some(0.2))
    );
    let listed = json(&["list", &db, "--name", "acct"]);
    let left: Vec<u64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["room_left"].as_u64().unwrap())
        .collect();
    assert_eq!(left, [15, 20]);

    let outside = json_error(&["set-next", &db, "acct", "51", "--shard", "1"], 2);
    assert!(
        outside["error"].as_str().unwrap().contains("(26..=50)"),
        "{outside}"
    );
    let moved = json(&["set-next", &db, "acct", "40", "--shard", "1"]);
    assert_eq!(
        (moved["old"].as_i64(), moved["new"].as_i64()),
        (Some(30), Some(39))
    );
    let stored = counters
        .find_one(doc! { "_id": { "seq": "acct", "shard": 1 } })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.get_i64("seq"), stored.get_i64("hi")),
        (Ok(39), Ok(50))
    );
    let missing = json_error(&["show", &db, "acct", "--shard", "3"], 1);
    assert_eq!(
        missing["hint"], "name one: --shard 0, --shard 1",
        "the shards there: {missing}"
    );
    json_error(
        &["show", &db, "acct", "--shard", "1", "--period", "20251122"],
        2,
    );

    let deleted = json(&["delete", &db, "acct", "--shard", "0", "--force"]);
    assert_eq!(deleted["deleted"], 1);
    assert_eq!(
        counters
            .count_documents(doc! { "_id.seq": "acct" })
            .await
            .unwrap(),
        1
    );

    // The runtime agrees on the slices: it takes the next value of one of the shards.
    let next = json(&["next", &db, "acct", "--shards", "4", "--max", "100"]);
    let value = next["ids"][0].as_i64().unwrap();
    assert!([1, 40, 51, 76].contains(&value), "{next}");
}

/// The counters of typegoose, of mongoose-auto-increment and of a filter of one's own are
/// listed with their layout, and shown and moved by name (`--layout`) or by filter
/// (`--filter`, with the `--prefix` that renders a period).
#[tokio::test]
async fn counters_of_other_conventions_are_listed_shown_and_moved() {
    let (db_name, database) = fresh_database("cli_conventions").await;
    let db = db_name.as_str();
    database
        .collection::<Document>("identitycounters")
        .insert_many([
            doc! { "field": "_id", "modelName": "Ticket", "count": Bson::Int64(9) },
            doc! { "model": "Order", "field": "_id", "groupingField": "acme", "count": 4 },
        ])
        .await
        .unwrap();
    database
        .collection::<Document>("ids")
        .insert_one(doc! { "prefix": 251125, "count": 7 })
        .await
        .unwrap();

    let listed = json(&["list", db, "--counters", "identitycounters"]);
    let rows: Vec<(&str, &str, i64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["layout"].as_str().unwrap(),
                c["last_issued"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("Order", "mongoose_auto_increment", 4),
            ("Ticket", "typegoose", 9)
        ],
        "{listed}"
    );
    let typegoose = ["--counters", "identitycounters", "--layout", "typegoose"];
    let ticket = json(&[&["show", db, "Ticket"][..], &typegoose].concat());
    assert_eq!(ticket["last_issued"], 9);
    let moved = json(&[&["set-next", db, "Ticket", "20"][..], &typegoose].concat());
    assert_eq!(moved["old"], 9);
    let order = json(&[
        "show",
        db,
        "Order",
        "--counters",
        "identitycounters",
        "--layout",
        "mongoose_auto_increment",
        "--scope",
        "groupingField=acme",
    ]);
    assert_eq!(order["last_issued"], 4);

    let seed = [
        "--counters",
        "ids",
        "--field",
        "count",
        "--filter",
        "prefix = period as number",
    ];
    let listed = json(&[&["list", db][..], &seed].concat());
    assert_eq!(
        (
            listed[0]["period"].as_str(),
            listed[0]["last_issued"].as_i64()
        ),
        (Some("251125"), Some(7)),
        "{listed}"
    );
    let day = json(
        &[
            &[
                "show", db, "daily", "--prefix", "YYMMDD", "--period", "20251125",
            ][..],
            &seed,
        ]
        .concat(),
    );
    assert_eq!(day["last_issued"], 7, "{day}");
    let counters = database.collection::<Document>("identitycounters");
    let stored = counters
        .find_one(doc! { "modelName": "Ticket" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("count"), Some(&Bson::Int64(19)), "{stored}");
    let usage = cli(&["show", db, "Ticket", "--layout", "mongoose"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(
        stderr(&usage).contains("mongoose_sequence"),
        "{}",
        stderr(&usage)
    );
}
