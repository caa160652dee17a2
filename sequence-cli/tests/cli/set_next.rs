//! `set-next`: a counter moved forward, backwards only with `--force`, never outside its
//! bounds, and a gapless sequence kept gapless unless an override names the gap.

use mongodb::bson::{doc, Document};
use sequence_runtime::{Sequence, SequenceOptions};

use crate::support::{cli, counter_doc, counters, fresh_database, json, json_error, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_next_refuses_to_go_backwards_without_force() {
    let (db, database) = counters("cli_set_next").await;
    let current = || async {
        database
            .collection::<Document>("counters")
            .find_one(doc! { "_id": "userid" })
            .await
            .unwrap()
            .unwrap()
            .get_i64("seq")
            .unwrap()
    };
    let dry = json(&["set-next", &db, "userid", "100", "--dry-run"]);
    assert_eq!(
        (dry["old"].as_i64(), dry["new"].as_i64()),
        (Some(41), Some(99))
    );
    assert_eq!(current().await, 41, "a dry run writes nothing");
    json(&["set-next", &db, "userid", "100"]);
    assert_eq!(current().await, 99);
    let back = cli(&["set-next", &db, "userid", "50"]);
    assert_eq!(back.status.code(), Some(1));
    assert!(stderr(&back).contains("backwards"), "{}", stderr(&back));
    assert_eq!(
        stderr(&back),
        "error: refusing to move `userid` backwards from last issued 99 to next 50: the \
         numbers 50 to 99 would be issued again; nothing was written\nhint: `--force` moves it \
         anyway, if no document holds these values; `--dry-run` shows the move\n"
    );
    let dry = cli(&["set-next", &db, "userid", "50", "--dry-run"]);
    assert!(
        stderr(&dry)
            .ends_with("hint: `--force` moves it anyway, if no document holds these values\n"),
        "a dry run is not suggested again: {}",
        stderr(&dry)
    );
    let back = json_error(&["set-next", &db, "userid", "50"], 1);
    assert!(
        back["error"].as_str().unwrap().contains("backwards"),
        "{back}"
    );
    assert!(back["hint"].as_str().unwrap().contains("--force"), "{back}");
    assert_eq!(current().await, 99);
    json(&["set-next", &db, "userid", "50", "--force"]);
    assert_eq!(current().await, 49);

    // Values outside start..=max are refused, whatever `--force` says.
    for args in [
        &["set-next", &db, "userid", "0", "--force"][..],
        &["set-next", &db, "userid", "101", "--max", "100"],
        &["set-next", &db, "userid", "60", "--start", "70"],
    ] {
        let error = json_error(args, 2);
        assert!(
            error["error"]
                .as_str()
                .unwrap()
                .contains("outside start..=max"),
            "{error}"
        );
        assert!(error["hint"].as_str().unwrap().contains("--max"), "{error}");
    }
    assert_eq!(current().await, 49, "nothing was written");
    let done = json(&["set-next", &db, "userid", "100", "--max", "100"]);
    assert_eq!(
        (done["new"].as_i64(), done["next"].as_i64()),
        (Some(99), Some(100))
    );
    assert!(
        done["warning"]
            .as_str()
            .unwrap()
            .contains("running processes keep"),
        "{done}"
    );
    let text = cli(&["set-next", &db, "userid", "120"]);
    assert!(text.status.success());
    assert!(
        stderr(&text).starts_with("warning: running processes keep the ranges of `userid`"),
        "{}",
        stderr(&text)
    );
    assert_eq!(current().await, 119);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapless_sequence_is_kept_gapless_unless_an_override_names_the_gap() {
    let (db_name, db) = fresh_database("cli_gapless").await;
    // Three receipts issued by the application, which recorded the sequence as gapless.
    let receipt = Sequence::new(
        &db,
        SequenceOptions::builder("receipt").gapless(true).build(),
    )
    .unwrap();
    receipt.set_next(4).await.unwrap();
    let last = || async {
        counter_doc(&db, doc! { "_id": "receipt" })
            .await
            .unwrap()
            .get_i64("seq")
            .unwrap()
    };

    let refused = json_error(&["next", &db_name, "receipt"], 2);
    assert_eq!(
        refused["error"],
        "sequence `receipt` is gapless: values that `next` takes are never stored, a permanent \
         gap in its numbering; nothing was taken"
    );
    assert_eq!(last().await, 3, "the counter is untouched");
    let forward = json_error(&["set-next", &db_name, "receipt", "10"], 2);
    assert!(
        forward["error"]
            .as_str()
            .unwrap()
            .contains("leaves the numbers 4 to 9 permanently unused"),
        "{forward}"
    );
    assert_eq!(forward["hint"], "`--leave-gap` moves it anyway");
    let back = json_error(&["set-next", &db_name, "receipt", "2", "--force"], 2);
    assert!(
        back["error"]
            .as_str()
            .unwrap()
            .contains("issues the numbers 2 to 3 again"),
        "{back}"
    );
    let delete = json_error(&["delete", &db_name, "receipt", "--force"], 2);
    assert!(
        delete["error"]
            .as_str()
            .unwrap()
            .contains("starts again at 1"),
        "{delete}"
    );
    assert_eq!(last().await, 3, "nothing was written by the refusals");

    // The overrides do what they name.
    assert_eq!(
        json(&["next", &db_name, "receipt", "--leave-gap"])["ids"],
        serde_json::json!([4])
    );
    json(&["set-next", &db_name, "receipt", "10", "--leave-gap"]);
    assert_eq!(last().await, 9);
    json(&["set-next", &db_name, "receipt", "5", "--force", "--reissue"]);
    assert_eq!(last().await, 4);
    json(&[
        "delete",
        &db_name,
        "receipt",
        "--force",
        "--restart-numbering",
    ]);
    assert_eq!(counter_doc(&db, doc! { "_id": "receipt" }).await, None);
}
