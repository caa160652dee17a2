//! Scoped counters (mongoose-sequence's `reference_fields`): one counter per value of the scope
//! fields, values matched by equality only. Run against a real server and, where it applies,
//! against the in-memory store.

use crate::common;

use std::sync::Arc;

use futures_util::TryStreamExt;
use mongo_sequence::id::{Bounds, CounterKey};
use mongo_sequence::jiff::Timestamp;
use mongo_sequence::store::{CounterStore, MongoStore};
use mongo_sequence::{clock::ManualClock, Error, Scope, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Bson, Document};
use serde::{Deserialize, Serialize};

use sequence_testkit::{unique_db_name, TestServer};

use crate::backend::Backend;
use crate::both;

fn tenant(name: &str) -> Scope {
    Scope::new().with("tenant", name)
}

both!(
    tenants_count_independently,
    operator_looking_values_stay_literal,
    numbers_match_by_value,
    scopes_and_periods_combine,
    scope_values_in_use_get_a_cache_of_their_own,
    scope_caches_follow_the_period,
    first_values_of_many_scope_values_are_taken_together,
    scope_values_that_come_back_get_a_cache_on_their_first_call,
);

/// With `batch`, a scope value's first call reserves its one value; from its second on, the
/// value's own cache serves it, a batch per reservation; `release` gives every cache's unused
/// values back, and an admin operation on the sequence drops them.
async fn scope_values_in_use_get_a_cache_of_their_own(b: Backend) {
    let seq = b.sequence(
        SequenceOptions::builder("order")
            .scope(["tenant"])
            .batch(25)
            .build(),
    );
    let acme = seq.in_scope(tenant("acme")).unwrap();
    let globex = seq.in_scope(tenant("globex")).unwrap();
    assert_eq!(acme.next().await.unwrap(), 1);
    assert_eq!(
        acme.current().await.unwrap(),
        Some(1),
        "a first call takes one value"
    );
    assert_eq!(globex.next().await.unwrap(), 1);
    for want in 2..=30 {
        assert_eq!(acme.next().await.unwrap(), want);
    }
    assert_eq!(globex.next().await.unwrap(), 2);
    // acme's cache reserved 2..=26 and 27..=51, and may have prefetched 52..=76; globex's
    // 2..=26.
    let acme_held = acme.current().await.unwrap().unwrap();
    assert!(
        [51, 76].contains(&acme_held),
        "acme's counter at {acme_held}"
    );
    assert_eq!(globex.current().await.unwrap(), Some(26));
    // Every unused value goes back: acme's 31..=51 (and the prefetch, which may land after
    // the read above), globex's 3..=26.
    let released = seq.release().await.unwrap();
    assert!(
        [21 + 24, 46 + 24].contains(&released),
        "{released} given back"
    );
    assert_eq!(acme.current().await.unwrap(), Some(30));
    assert_eq!(globex.current().await.unwrap(), Some(2));
    // Numbering goes on where it stopped: a first call again, then a cache.
    assert_eq!(acme.next().await.unwrap(), 31);
    assert_eq!(acme.next().await.unwrap(), 32);
    assert_eq!(acme.current().await.unwrap(), Some(56), "a batch from 32");
    // Moving one counter drops every cached value of the sequence (they may lie below it).
    acme.set_next(100).await.unwrap();
    assert_eq!(acme.next().await.unwrap(), 100);
    assert_eq!(acme.next().await.unwrap(), 101);
    // The runtime refuses an adaptive batch with a scope, as the derive does.
    let adaptive = SequenceOptions::builder("adaptive")
        .scope(["tenant"])
        .batch(10..=1000)
        .build();
    assert!(matches!(
        mongo_sequence::Sequence::in_memory(adaptive),
        Err(Error::InvalidConfig { key: "batch", .. })
    ));
}

/// Once most calls of a sequence find their scope value remembered, a new value's first call
/// makes its cache (a batch reserved), so that its second call takes a value from memory, and
/// the cache prefetches from its first range on; once most calls meet values seen for the first
/// time, a new value's first call takes its one value again.
async fn scope_values_that_come_back_get_a_cache_on_their_first_call(b: Backend) {
    let seq = b.sequence(
        SequenceOptions::builder("order")
            .scope(["tenant"])
            .batch(25)
            .build(),
    );
    let next = |name: String| {
        let scoped = seq.in_scope(tenant(&name)).unwrap();
        async move { scoped.next().await.unwrap() }
    };
    // 40 tenants called twice each: half of the calls find their value.
    for i in 0..40 {
        assert_eq!(next(format!("t{i}")).await, 1);
        assert_eq!(next(format!("t{i}")).await, 2);
    }
    let new = seq.in_scope(tenant("new")).unwrap();
    let before = seq.stats().reservations;
    assert_eq!(new.next().await.unwrap(), 1);
    assert_eq!(
        new.current().await.unwrap(),
        Some(25),
        "a batch on the first call"
    );
    assert_eq!(new.next().await.unwrap(), 2);
    assert_eq!(
        seq.stats().reservations - before,
        1,
        "the second call takes its value from memory"
    );
    // The 13th value is half the first range: the prefetch of the next starts there, not at
    // `prefetch_at` (0.1: the 3rd value), so that a tenant whose inserts fit in half a batch
    // reserves one range.
    for want in 3..=12 {
        assert_eq!(new.next().await.unwrap(), want);
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        new.current().await.unwrap(),
        Some(25),
        "no prefetch before half the first range is used"
    );
    assert_eq!(new.next().await.unwrap(), 13);
    let mut counter = new.current().await.unwrap();
    for _ in 0..100 {
        if counter == Some(50) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        counter = new.current().await.unwrap();
    }
    assert_eq!(counter, Some(50), "the first range's prefetch");
    // 200 tenants called once each: a new value's first call takes one value again.
    for i in 0..200 {
        assert_eq!(next(format!("s{i}")).await, 1);
    }
    let spread = seq.in_scope(tenant("spread")).unwrap();
    assert_eq!(spread.next().await.unwrap(), 1);
    assert_eq!(spread.current().await.unwrap(), Some(1), "one value");
    // `release` gives every unused value back: `new` keeps 13, `spread` 1.
    seq.release().await.unwrap();
    assert_eq!(new.current().await.unwrap(), Some(13));
    assert_eq!(spread.current().await.unwrap(), Some(1));
}

/// The first calls of many scope values at once share their round trips (one reservation of
/// several counters); each still gets its counter's first value, and a counter with no room left
/// or a corrupt one gives its caller the error it gives alone, without holding back the others.
async fn first_values_of_many_scope_values_are_taken_together(b: Backend) {
    let options = SequenceOptions::builder("order")
        .scope(["tenant"])
        .max(5)
        .build();
    let seq = b.sequence(options.clone());
    let full = seq.in_scope(tenant("full")).unwrap();
    assert_eq!(full.reserve(5).await.unwrap().last(), 5);
    let broken = seq.in_scope(tenant("broken")).unwrap();
    assert_eq!(broken.next().await.unwrap(), 1);
    if let Some(db) = b.database() {
        let key = CounterKey::of("order", None, Some(&tenant("broken")));
        db.collection::<Document>("counters")
            .update_one(doc! { "_id": key.value() }, doc! { "$set": { "seq": "x" } })
            .await
            .unwrap();
    }
    let before = seq.stats().reservations;
    let names: Vec<String> = (0..40)
        .map(|i| match i {
            7 => "full".to_owned(),
            23 if b.database().is_some() => "broken".to_owned(),
            i => format!("t{i}"),
        })
        .collect();
    let tasks: Vec<_> = names
        .iter()
        .map(|name| {
            let scoped = seq.in_scope(tenant(name)).unwrap();
            tokio::spawn(async move { scoped.next().await })
        })
        .collect();
    for (name, task) in names.iter().zip(tasks) {
        match (name.as_str(), task.await.unwrap()) {
            ("full", Err(Error::Exhausted { last: 5, .. })) => {}
            ("broken", Err(Error::CorruptCounter { .. })) => {}
            (_, Ok(1)) => {
                let scoped = seq.in_scope(tenant(name)).unwrap();
                assert_eq!(scoped.current().await.unwrap(), Some(1), "{name}");
            }
            (name, other) => panic!("{name}: {other:?}"),
        }
    }
    if b.database().is_some() {
        // The first caller goes alone; those queued meanwhile share the next rounds.
        let reservations = seq.stats().reservations - before;
        assert!(
            reservations <= 10,
            "{reservations} reservations for the first values of 40 scope values"
        );
    }
}

/// The first refills of many scope values' caches share their rounds, as their first values
/// do: 40 tenants called three times at once each get 1, 2, 3, each counter holds a batch past
/// its first value, and far fewer reservations were made than one per tenant and call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refills_of_many_scope_caches_share_rounds() {
    let db = common::database("scoped_refills").await;
    let options = SequenceOptions::builder("order")
        .scope(["tenant"])
        .batch(10)
        .build();
    let seq = Sequence::new(&db, options).unwrap();
    let tenants: Vec<Sequence> = (0..40)
        .map(|i| seq.in_scope(tenant(&format!("t{i}"))).unwrap())
        .collect();
    for call in 1..=3 {
        let tasks: Vec<_> = tenants
            .iter()
            .map(|scoped| {
                let scoped = scoped.clone();
                tokio::spawn(async move { scoped.next().await.unwrap() })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap(), call);
        }
    }
    for scoped in &tenants {
        assert_eq!(scoped.current().await.unwrap(), Some(11), "1, then 2..=11");
    }
    let reservations = seq.stats().reservations;
    assert!(
        reservations <= 20,
        "{reservations} reservations for 40 first values and 40 refills"
    );
}

/// A reservation of several counters at once whose read-back another such reservation
/// overtakes: the counter it overtook is reserved again alone (its first values stay unused),
/// the others keep what the first round took; in the default layout and mongoose-sequence's.
/// (Counters a round creates are not read back: these exist before.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overtaken_reservation_of_several_counters_is_made_again_alone() {
    let name = unique_db_name("scoped_overtaken");
    // The fail point holds this client's read-back (by app name), not the other tests'.
    let app = format!("overtaken-{name}");
    let uri = TestServer::shared_or_panic().uri();
    let slow = common::client_with_app(uri, &app, |_| {}).await;
    let other = common::client_with_app(uri, &format!("{app}-other"), |_| {}).await;
    let key = |q: &str| CounterKey::of("job", None, Some(&Scope::new().with("queue", q)));
    let bounds = Bounds::new(1, i64::MAX).unwrap();
    for (layout, options) in common::job_by_queue_in_both_layouts() {
        let store = MongoStore::new(&slow.database(&name), &options).unwrap();
        let overtaking = MongoStore::new(&other.database(&name), &options).unwrap();
        for q in ["a", "b", "c"] {
            store.reserve(&key(q), 1, bounds, None).await.unwrap();
        }
        let fault = common::fail_point(
            &slow.database("admin"),
            doc! { "times": 1 },
            doc! {
                "failCommands": ["find"],
                "blockConnection": true,
                "blockTimeMS": 400,
                "appName": &app,
            },
        )
        .await;
        let mine = [(key("a"), 3), (key("b"), 1)];
        let theirs = [(key("a"), 2), (key("c"), 1)];
        let (mine, theirs) = tokio::join!(store.reserve_many(&mine, bounds), async {
            tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            overtaking.reserve_many(&theirs, bounds).await
        });
        assert_eq!(fault.off().await, 1);
        let ranges = |rs: Vec<mongo_sequence::Result<mongo_sequence::store::Reservation>>| {
            rs.into_iter()
                .map(|r| {
                    let r = r.unwrap().range;
                    (r.first(), r.last())
                })
                .collect::<Vec<_>>()
        };
        // `a`: 2..=4 taken first and overtaken by 5..=6, then 7..=9 alone.
        assert_eq!(ranges(mine), [(7, 9), (2, 2)], "{layout:?}");
        assert_eq!(ranges(theirs), [(5, 6), (2, 2)], "{layout:?}");
        assert_eq!(
            store.last_issued(&key("a"), bounds, None).await.unwrap(),
            Some(9)
        );
    }
}

async fn tenants_count_independently(b: Backend) {
    let seq = b.sequence(SequenceOptions::builder("order").scope(["tenant"]).build());
    let acme = seq.in_scope(tenant("acme")).unwrap();
    let globex = seq.in_scope(tenant("globex")).unwrap();
    assert_eq!(acme.next().await.unwrap(), 1);
    assert_eq!(acme.next().await.unwrap(), 2);
    assert_eq!(globex.next().await.unwrap(), 1);
    assert_eq!(acme.next().await.unwrap(), 3);
    assert_eq!(globex.reserve(5).await.unwrap().last(), 6);
    assert_eq!(acme.current().await.unwrap(), Some(3));
    assert_eq!(globex.current().await.unwrap(), Some(6));

    match seq.next().await {
        Err(Error::ScopeRequired { counter, fields }) => {
            assert_eq!((counter.as_str(), fields.as_str()), ("order", "`tenant`"));
        }
        other => panic!("expected ScopeRequired, got {other:?}"),
    }
    assert!(matches!(
        seq.current().await,
        Err(Error::ScopeRequired { .. })
    ));
    assert!(matches!(
        seq.in_scope(Scope::new().with("tenat", "acme")),
        Err(Error::InvalidArgument {
            argument: "scope",
            ..
        })
    ));
    assert!(matches!(
        seq.in_scope(tenant("acme").with("year", 2025)),
        Err(Error::InvalidArgument {
            argument: "scope",
            ..
        })
    ));

    globex.reset().await.unwrap();
    assert_eq!(globex.next().await.unwrap(), 1);
    assert_eq!(acme.next().await.unwrap(), 4, "other scopes are left alone");
    assert!(acme.delete().await.unwrap());
    assert_eq!(acme.next().await.unwrap(), 1);
    assert_eq!(
        seq.stats().issued,
        12,
        "scoped handles share the statistics"
    );
}

async fn operator_looking_values_stay_literal(b: Backend) {
    let seq = b.sequence(SequenceOptions::builder("tagged").scope(["tag"]).build());
    let tag = |v: Bson| seq.in_scope(Scope::new().with("tag", v)).unwrap();
    // A plain counter with some values, which an operator would match.
    let plain = tag(Bson::String("plain".into()));
    for _ in 0..5 {
        plain.next().await.unwrap();
    }
    let values = [
        Bson::String("$gt".into()),
        Bson::Document(doc! { "$ne": Bson::Null }),
        Bson::Document(doc! { "~$ne": Bson::Null }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::Null,
        Bson::Array(vec![Bson::Document(doc! { "$in": [1] })]),
        Bson::Document(doc! { "a.b": 1 }),
    ];
    for v in &values {
        assert_eq!(
            tag(v.clone()).next().await.unwrap(),
            1,
            "{v}: a counter of its own"
        );
    }
    for v in &values {
        assert_eq!(
            tag(v.clone()).next().await.unwrap(),
            2,
            "{v}: the same counter again"
        );
    }
    assert_eq!(
        plain.current().await.unwrap(),
        Some(5),
        "never matched by an operator"
    );

    if let Some(db) = b.database() {
        let stored = db
            .collection::<Document>("counters")
            .find_one(
                doc! { "_id": { "seq": "tagged", "scope": { "tag": { "~$ne": Bson::Null } } } },
            )
            .await
            .unwrap()
            .expect("`$`-prefixed names are escaped inside `_id`");
        assert_eq!(stored.get_i64("seq").unwrap(), 2);
        let count = db
            .collection::<Document>("counters")
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(count, 1 + values.len() as u64);
    }
}

async fn numbers_match_by_value(b: Backend) {
    let seq = b.sequence(SequenceOptions::builder("yearly").scope(["year"]).build());
    let year = |v: Bson| seq.in_scope(Scope::new().with("year", v)).unwrap();
    assert_eq!(year(Bson::Int32(2025)).next().await.unwrap(), 1);
    assert_eq!(year(Bson::Int64(2025)).next().await.unwrap(), 2);
    assert_eq!(year(Bson::Double(2025.0)).next().await.unwrap(), 3);
    assert_eq!(year(Bson::String("2025".into())).next().await.unwrap(), 1);
}

/// A scope value's cache serves the counter of the current period: when the period changes, the
/// old period's cached numbers are dropped and the new period's counter starts at 1.
async fn scope_caches_follow_the_period(b: Backend) {
    let (seq, c) = monthly_by_tenant(&b, SequenceOptions::builder("monthly_batch").batch(10));
    let acme = seq.in_scope(tenant("acme")).unwrap();
    for want in 1..=5 {
        assert_eq!(
            acme.next_id::<String>().await.unwrap(),
            format!("2511-{want:03}")
        );
    }
    let november = acme.current().await.unwrap().unwrap();
    assert!(november >= 11, "a batch reserved ahead: {november}");
    c.set("2025-12-01T00:00:00Z".parse().unwrap());
    assert_eq!(acme.next_id::<String>().await.unwrap(), "2512-001");
    assert_eq!(acme.next_id::<String>().await.unwrap(), "2512-002");
    assert_eq!(acme.current_key().unwrap().period(), Some("202512"));
    // The other tenant's numbering is its own, in the new period too.
    let globex = seq.in_scope(tenant("globex")).unwrap();
    assert_eq!(globex.next_id::<String>().await.unwrap(), "2512-001");
}

/// A sequence of `options` numbered per tenant and month (`YYMM-001`), on a clock set to the
/// last day of November 2025.
fn monthly_by_tenant(
    b: &Backend,
    options: mongo_sequence::options::SequenceOptionsBuilder,
) -> (mongo_sequence::Sequence, Arc<ManualClock>) {
    let c = Arc::new(ManualClock::new(
        "2025-11-30T12:00:00Z".parse::<Timestamp>().unwrap(),
    ));
    let options = options.prefix("YYMM-").width(3).scope(["tenant"]).build();
    (b.sequence_at(options, c.clone()), c)
}

async fn scopes_and_periods_combine(b: Backend) {
    let (seq, c) = monthly_by_tenant(&b, SequenceOptions::builder("monthly"));
    let acme = seq.in_scope(tenant("acme")).unwrap();
    let globex = seq.in_scope(tenant("globex")).unwrap();
    assert_eq!(acme.next_id::<String>().await.unwrap(), "2511-001");
    assert_eq!(acme.next_id::<String>().await.unwrap(), "2511-002");
    assert_eq!(globex.next_id::<String>().await.unwrap(), "2511-001");
    c.set("2025-12-01T00:00:00Z".parse().unwrap());
    assert_eq!(acme.next_id::<String>().await.unwrap(), "2512-001");
    let key = acme.current_key().unwrap();
    assert_eq!(key.period(), Some("202512"));
    assert_eq!(key.scope(), Some(&tenant("acme")));
    assert_eq!(
        seq.purge_periods_before(mongo_sequence::jiff::civil::date(2025, 12, 1))
            .await
            .unwrap(),
        2,
        "both tenants' November counters"
    );
}

// ----- Models (real server) -----

/// `number` restarts at 1 for every tenant, so it is not the `_id` (the driver adds an
/// ObjectId).
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(scope = "tenant")]
struct Order {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn order(tenant: &str) -> Order {
    Order {
        number: 0,
        tenant: tenant.to_owned(),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(scope = "tag")]
struct Tagged {
    #[seq(id)]
    number: i64,
    tag: Bson,
}

#[tokio::test]
async fn a_scoped_model_numbers_each_tenant() {
    let db = common::database("scoped_model").await;
    let orders = db.collection::<Order>("orders");
    let mut got = Vec::new();
    for t in ["acme", "acme", "globex", "acme"] {
        got.push(order(t).insert_with_id(&orders).await.unwrap());
    }
    assert_eq!(got, [1, 2, 1, 3]);

    match Order::next_id(&orders).await {
        Err(e @ Error::ScopeRequired { .. }) => {
            assert!(e.to_string().contains("next_id_for"), "{e}");
        }
        other => panic!("expected ScopeRequired, got {other:?}"),
    }
    assert_eq!(order("globex").next_id_for(&orders).await.unwrap(), 2);

    // A configuration the derive would reject reports its own error, scoped or not.
    let bad = mongo_sequence::options::SequenceConfig::new("bad")
        .prefix("YYY")
        .scope(&["tenant"])
        .sequence(&db);
    match bad.in_scope(tenant("acme")) {
        Err(Error::InvalidConfig { message: m, .. }) => {
            assert!(m.contains("unknown prefix token"), "{m}")
        }
        other => panic!("expected the configuration's error, got {other:?}"),
    }

    let counter = db
        .collection::<Document>("counters")
        .find_one(doc! { "_id": { "seq": "order", "scope": { "tenant": "acme" } } })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counter.get_i64("seq").unwrap(), 3);

    // Operator-looking values in the documents themselves.
    let tagged = db.collection::<Tagged>("tagged");
    for (tag, want) in [
        (Bson::String("$gt".into()), 1),
        (Bson::Document(doc! { "$ne": Bson::Null }), 1),
        (Bson::Document(doc! { "$ne": Bson::Null }), 2),
        (Bson::String("$gt".into()), 2),
    ] {
        let mut t = Tagged { number: 0, tag };
        assert_eq!(t.insert_with_id(&tagged).await.unwrap(), want);
    }
    assert_eq!(tagged.count_documents(doc! {}).await.unwrap(), 4);
    let stored = tagged
        .find_one(doc! { "number": 2, "tag": { "$eq": { "$ne": Bson::Null } } })
        .await
        .unwrap();
    assert!(stored.is_some(), "the document keeps its value as written");
}

#[tokio::test]
async fn insert_many_reserves_once_per_scope() {
    let name = sequence_testkit::unique_db_name("scoped_many");
    let (client, round_trips) = common::monitored_client(&name).await;
    let orders = client.database(&name).collection::<Order>("orders");
    let mut docs: Vec<Order> = ["acme", "globex", "acme", "initech", "globex", "acme"]
        .into_iter()
        .map(order)
        .collect();
    let ids = Order::insert_many_with_ids(&mut docs, &orders)
        .await
        .unwrap();
    assert_eq!(ids, [1, 1, 2, 1, 2, 3]);
    assert_eq!(round_trips.round_trips(), 3, "one reservation per tenant");
    assert!(docs.iter().zip(&ids).all(|(d, id)| d.number == *id));

    let stored: Vec<Order> = orders
        .find(doc! { "tenant": "acme" })
        .sort(doc! { "number": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        stored.iter().map(|o| o.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

/// Numbered per shop with a batch: each shop in use gets a cache of its own.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "shop_order", scope = "shop", batch = 25)]
struct ShopOrder {
    #[seq(id)]
    number: i64,
    shop: String,
}

/// 16 tasks insert 40 orders each, spread over 4 shops: every shop's numbers are distinct, the
/// counter made one reservation per batch of 25 (not one per insert), and after `release` each
/// shop's counter is back at the highest number it stored where nothing else took values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_model_with_a_batch_caches_per_shop() {
    let db = common::database("scoped_batch").await;
    let orders = db.collection::<ShopOrder>("orders");
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let orders = orders.clone();
            tokio::spawn(async move {
                for i in 0..40 {
                    let shop = format!("shop{}", (t + i) % 4);
                    ShopOrder { number: 0, shop }
                        .insert_with_id(&orders)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let seq = ShopOrder::sequence(&orders);
    let stats = seq.stats();
    assert_eq!(stats.issued, 640);
    assert!(
        stats.reservations <= 4 * (1 + 2 * 160 / 25 + 2),
        "{} reservations for 640 numbers over 4 shops",
        stats.reservations
    );
    seq.release().await.unwrap();
    let docs: Vec<ShopOrder> = orders
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(docs.len(), 640);
    for s in 0..4 {
        let shop = format!("shop{s}");
        let mut numbers: Vec<i64> = docs
            .iter()
            .filter(|d| d.shop == shop)
            .map(|d| d.number)
            .collect();
        numbers.sort_unstable();
        let n = numbers.len();
        numbers.dedup();
        assert_eq!(numbers.len(), n, "{shop}: a number given twice");
        let counter = seq
            .in_scope(Scope::new().with("shop", shop.as_str()))
            .unwrap()
            .current()
            .await
            .unwrap()
            .unwrap();
        assert!(
            counter >= *numbers.last().unwrap()
                && counter < numbers.last().unwrap() + common::held_at_most(25) as i64,
            "{shop}: counter {counter}, highest stored {}",
            numbers.last().unwrap()
        );
    }
}
