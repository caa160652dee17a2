//! The one guarded update of a counter document in MongoDB: the filter and the update of a
//! `findAndModify` that reserves values (or moves the counter up to a floor) only where they
//! fit, and writes nothing otherwise; and the same reservation as a statement of a round of
//! several counters, whose room is checked by the update itself.

use mongodb::bson::{doc, Bson, Document};
use sequence_rules::limits::MAX_EXACT_DOUBLE;

use super::layout::CounterLayout;
use crate::error::Result;
use crate::id::{Bounds, CounterKey};

/// How far one findAndModify moves a counter: to `max(last issued, floor) + n`.
#[derive(Clone, Copy, Debug)]
pub(super) struct CounterMove {
    pub(super) n: u64,
    pub(super) floor: Option<i64>,
}

/// The stored values from which a reservation of `n` values fits: integers in `[low, high]`,
/// doubles in `[double_low, double_high]` (where the sum stays an exact integer).
struct Room {
    low: i64,
    high: i64,
    double_low: i64,
    double_high: i64,
}

impl Room {
    fn new(layout: &CounterLayout, n: u64, bounds: Bounds, highest_last: i64) -> Self {
        let (low, high) = (
            layout.stored_before_start(bounds),
            highest_last + layout.offset(),
        );
        Room {
            low,
            high,
            double_low: low.max(-MAX_EXACT_DOUBLE),
            double_high: high.min(MAX_EXACT_DOUBLE.saturating_sub(n as i64)),
        }
    }
}

/// The filter and the update of a step of `key` whose last issued value may be at most
/// `highest_last`: a reservation of `n` values, above `floor` if given (with `n = 0`, a move
/// up to `floor`).
///
/// Only a number in range matches; anything else (a string, a missing field, a value too close
/// to `max`) makes the upsert collide with the existing document, and the duplicate key is
/// classified afterwards. A fractional number matches but is left as it is by the update, and
/// reported as corrupt. In every failing case nothing is written. Arrays are excluded
/// explicitly, since a query on an array field matches any of its elements, and a double only
/// matches while the sum stays an exact integer, so it is never rounded.
pub(super) fn reservation(
    layout: &CounterLayout,
    key: &CounterKey,
    step: CounterMove,
    bounds: Bounds,
    highest_last: i64,
) -> Result<(Document, Vec<Document>)> {
    let n = step.n;
    let off = layout.offset();
    let field = &layout.field;
    let mut filter = layout.key_filter(key)?;
    let room = Room::new(layout, n, bounds, highest_last);
    filter.insert(
        "$or",
        vec![
            doc! { field: {
                "$type": ["int", "long"],
                "$gte": room.low,
                "$lte": room.high,
                "$not": { "$type": "array" },
            } },
            doc! { field: {
                "$type": "double",
                "$gte": room.double_low,
                "$lte": room.double_high,
                "$not": { "$type": "array" },
            } },
        ],
    );
    let start = Bson::Int64(layout.stored_before_start(bounds));
    let current = doc! { "$ifNull": [format!("${field}"), start] };
    let from = match step.floor {
        Some(floor) => Bson::Document(doc! { "$max": [current, Bson::Int64(floor + off)] }),
        None => Bson::Document(current),
    };
    let mut set = doc! { field: { "$let": {
        "vars": { "v": from },
        "in": { "$cond": [
            { "$eq": ["$$v", { "$trunc": "$$v" }] },
            { "$add": ["$$v", Bson::Int64(n as i64)] },
            "$$v",
        ] },
    } } };
    set.extend(kept_on_insert(layout, key));
    Ok((filter, vec![doc! { "$set": set }]))
}

/// The filter and the update of a reservation of `n` values of `key` in a round of several
/// counters, writing `mark` beside the counter (`"$$to"` in it stands for the value the
/// reservation left).
///
/// The filter is the counter's key alone, so that the server finds a counter keyed by `_id`
/// directly, without planning a query; the update checks the room that the filter of
/// [`reservation`] checks. Where the counter has no room (or holds anything but an integer, or
/// a double that stays exact, or nothing), it leaves the document as it was, mark included, so
/// that nothing is written. Only a document an upsert is creating (found by other fields than
/// `_id`, it has no `_id` yet) starts without the counter field.
pub(super) fn marked_reservation(
    layout: &CounterLayout,
    key: &CounterKey,
    n: u64,
    bounds: Bounds,
    highest_last: i64,
    (mark_field, mark): (&str, Document),
) -> Result<(Document, Vec<Document>)> {
    let filter = layout.key_filter(key)?;
    let room = Room::new(layout, n, bounds, highest_last);
    let kind = doc! { "$type": "$$v" };
    let between = |low: i64, high: i64| {
        vec![
            doc! { "$gte": ["$$v", low] },
            doc! { "$lte": ["$$v", high] },
        ]
    };
    let mut exact = between(room.double_low, room.double_high);
    exact.push(doc! { "$eq": ["$$v", { "$trunc": "$$v" }] });
    let new = doc! { "$eq": [{ "$type": "$_id" }, "missing"] };
    let room_left = doc! { "$switch": {
        "branches": [
            { "case": { "$in": [kind.clone(), ["int", "long"]] },
              "then": { "$and": between(room.low, room.high) } },
            { "case": { "$eq": [kind.clone(), "double"] }, "then": { "$and": exact } },
            { "case": { "$eq": [kind, "missing"] }, "then": new },
        ],
        "default": false,
    } };
    let start = Bson::Int64(layout.stored_before_start(bounds));
    let mut set = doc! { &layout.field: "$$to" };
    set.extend(kept_on_insert(layout, key));
    set.insert(mark_field, mark);
    let moved = doc! { "$let": {
        "vars": { "to": { "$add": [{ "$ifNull": ["$$v", start] }, Bson::Int64(n as i64)] } },
        "in": { "$mergeObjects": ["$$ROOT", set] },
    } };
    let update = doc! { "$replaceWith": { "$let": {
        "vars": { "v": format!("${}", layout.field) },
        "in": { "$cond": [room_left, moved, "$$ROOT"] },
    } } };
    Ok((filter, vec![update]))
}

/// The fields a new counter document of the layout needs that the filter does not fix, as
/// expressions of an update: a value already stored is kept.
fn kept_on_insert(layout: &CounterLayout, key: &CounterKey) -> Document {
    (layout.on_insert(key).into_iter())
        .map(|(name, value)| {
            let kept = doc! { "$ifNull": [format!("${name}"), { "$literal": value }] };
            (name, Bson::Document(kept))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter_move(n: u64, floor: Option<i64>) -> CounterMove {
        CounterMove { n, floor }
    }

    fn branches(filter: &Document) -> (Document, Document) {
        let or = filter.get_array("$or").unwrap();
        let branch = |i: usize| {
            or[i]
                .as_document()
                .unwrap()
                .get_document("seq")
                .unwrap()
                .clone()
        };
        (branch(0), branch(1))
    }

    #[test]
    fn a_reservation_matches_only_counters_with_room_for_it() {
        let layout = CounterLayout::new();
        let bounds = Bounds::new(1, 100).unwrap();
        let (filter, _) = reservation(
            &layout,
            &CounterKey::named("c"),
            counter_move(10, None),
            bounds,
            90,
        )
        .unwrap();
        assert_eq!(filter.get_str("_id"), Ok("c"));
        let (ints, doubles) = branches(&filter);
        assert_eq!(
            (ints.get_i64("$gte"), ints.get_i64("$lte")),
            (Ok(0), Ok(90))
        );
        assert_eq!(
            (doubles.get_i64("$gte"), doubles.get_i64("$lte")),
            (Ok(0), Ok(90))
        );
    }

    #[test]
    fn doubles_only_match_while_the_sum_stays_exact() {
        let layout = CounterLayout::new()
            .field("n")
            .stores(crate::options::Stores::NextFree);
        let bounds = Bounds::new(1, i64::MAX - 1).unwrap();
        let (filter, update) = reservation(
            &layout,
            &CounterKey::named("c"),
            counter_move(5, None),
            bounds,
            i64::MAX - 6,
        )
        .unwrap();
        let n = filter.get_array("$or").unwrap()[1]
            .as_document()
            .unwrap()
            .get_document("n")
            .unwrap()
            .clone();
        // Stored values are one ahead (next free), and a double may reach 2^53 - 1 after the add.
        assert_eq!(n.get_i64("$gte"), Ok(1));
        assert_eq!(n.get_i64("$lte"), Ok(MAX_EXACT_DOUBLE - 5));
        let start = update[0]
            .get_document("$set")
            .and_then(|s| s.get_document("n"))
            .and_then(|n| n.get_document("$let"))
            .and_then(|l| l.get_document("vars"))
            .and_then(|v| v.get_document("v"))
            .and_then(|v| v.get_array("$ifNull"))
            .unwrap()[1]
            .clone();
        assert_eq!(
            start,
            Bson::Int64(1),
            "a new counter starts at `start` - 1 + offset"
        );
    }

    #[test]
    fn a_floor_moves_the_counter_up_first() {
        let layout = CounterLayout::new();
        let bounds = Bounds::new(1, 1000).unwrap();
        let (_, update) = reservation(
            &layout,
            &CounterKey::named("c"),
            counter_move(0, Some(500)),
            bounds,
            1000,
        )
        .unwrap();
        let v = update[0]
            .get_document("$set")
            .and_then(|s| s.get_document("seq"))
            .and_then(|n| n.get_document("$let"))
            .and_then(|l| l.get_document("vars"))
            .and_then(|v| v.get_document("v"))
            .unwrap()
            .clone();
        assert_eq!(
            v,
            doc! { "$max": [{ "$ifNull": ["$seq", Bson::Int64(0)] }, Bson::Int64(500)] }
        );
    }
}
