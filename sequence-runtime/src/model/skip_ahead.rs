//! Inserts that meet IDs already stored (imported or restored documents, another writer's)
//! skip ahead: the highest ID stored for the document's counter is found, the counter moves
//! past it, and the document is inserted again with a new ID ([`past_stored`] gives it to the
//! insert path of one document, which inserts again; [`insert_many`] does it all for a bulk
//! insert). Each round is at most three round trips (find the highest, move and reserve,
//! insert), a bounded number of rounds.
//!
//! Only a duplicate key on the ID field (with the scope fields) skips ahead: for `_id` the
//! server names the index `_id_`; for another ID field, only a unique index on it (and the
//! scope fields) can report one, and the fields the error message names are compared.

use mongodb::bson::Document;
use mongodb::options::InsertManyOptions;
use mongodb::Collection;

use super::document_scope;
use super::sequential_id::SequentialId;
use crate::error::driver::{duplicate_key_fields, insert_many_duplicate, Access};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::sequence::{Issued, Sequence};
use crate::store::literal;
use crate::sync::{IdForm, StoredIds};

/// Rounds of skipping ahead for one insert before it gives up.
pub(crate) const ROUNDS: u32 = 5;

/// What `Error::IdTaken` says when the rounds did not get past the stored IDs.
pub(crate) const AFTER_ROUNDS: &str =
    "; skipping ahead of them 5 times did not get past them (another \
     writer keeps storing IDs ahead of the counter): run `sync_counters` to move the counter past \
     the stored IDs";

/// What `Error::IdTaken` says of an insert in the caller's session.
pub(crate) const IN_SESSION: &str = "; the insert ran in your session, which the duplicate has \
     aborted, so it was not sent again: run `sync_counters` to move the counter past the stored \
     IDs, then retry";

/// Whether `e` is a duplicate key on the ID field of `T`: the only duplicates that skip ahead.
pub(crate) fn on_id_field<T: SequentialId>(e: &Error) -> bool {
    matches!(e, Error::DuplicateKey { message, .. } if id_duplicate::<T>(message))
}

/// Whether a duplicate-key message names `T`'s ID field (with its scope fields, for a scoped
/// model) as the key: `_id_` for `_id`, else a unique index on exactly those fields.
fn id_duplicate<T: SequentialId>(message: &str) -> bool {
    let Some((index, mut fields)) = duplicate_key_fields(message) else {
        return false;
    };
    let config = &T::SEQUENCE;
    if config.id_field == "_id" {
        return index == "_id_";
    }
    let mut want: Vec<&str> = config.stored_scope().map(|(_, stored)| stored).collect();
    want.push(config.id_field);
    want.sort_unstable();
    fields.sort_unstable();
    fields == want
}

/// The position of the document of an ordered `insert_many` whose ID met a stored document,
/// if that is what stopped it.
pub(crate) fn duplicate_at<T: SequentialId>(e: &mongodb::error::Error) -> Option<usize> {
    insert_many_duplicate(e)
        .filter(|(_, message)| id_duplicate::<T>(message))
        .map(|(at, _)| at)
}

/// `Error::IdTaken` for the duplicate `e` of `id`, which `issued` gave.
pub(crate) fn taken<T: SequentialId>(
    coll: &Collection<T>,
    id: &T::Id,
    issued: &Issued,
    e: Error,
    hint: &'static str,
) -> Error {
    match e {
        Error::DuplicateKey { source, .. } => Error::IdTaken {
            namespace: coll.namespace().to_string(),
            id: format!("{id:?}"),
            counter: issued.slot.key.to_string(),
            hint,
            source: Box::new(source),
        },
        other => other,
    }
}

/// `{ <stored scope field>: { $eq: <value> }, … }`: the documents of `doc`'s scope.
pub(crate) fn scope_filter<T: SequentialId>(doc: &T) -> Result<Document> {
    let values = doc.scope_values()?;
    Ok(T::SEQUENCE
        .stored_scope()
        .zip(values)
        .map(|((_, stored), (_, value))| (stored.to_owned(), literal::stored(&value)))
        .collect())
}

/// The highest value stored for the counter `issued` came from, in the documents of `doc`'s
/// scope: at least `issued.value`, which a stored document takes.
pub(crate) async fn stored_floor<T: SequentialId>(
    doc: &T,
    coll: &Collection<T>,
    seq: &Sequence,
    issued: &Issued,
) -> Result<i64> {
    stored_floor_in::<T>(scope_filter(doc)?, coll, seq, issued).await
}

/// Like [`stored_floor`], in the documents `scope` selects (see [`scope_filter`]).
pub(crate) async fn stored_floor_in<T: SequentialId>(
    scope: Document,
    coll: &Collection<T>,
    seq: &Sequence,
    issued: &Issued,
) -> Result<i64> {
    let docs = coll.clone_with_type::<Document>();
    let ids = StoredIds {
        coll: &docs,
        field: T::SEQUENCE.id_field,
        form: id_form::<T>(),
        scope,
    };
    floor_among(&ids, seq, issued).await
}

/// How `T`'s IDs are stored: as text or as numbers.
pub(crate) fn id_form<T: SequentialId>() -> IdForm {
    if T::Id::STORED_AS_TEXT {
        IdForm::Text
    } else {
        IdForm::Number
    }
}

/// The highest value stored among `ids` for the counter `issued` came from: at least
/// `issued.value`, which a stored ID takes.
pub(crate) async fn floor_among(
    ids: &StoredIds<'_>,
    seq: &Sequence,
    issued: &Issued,
) -> Result<i64> {
    let (space, limit) = seq.stored_domain(issued)?;
    let highest = ids.highest(&issued.slot.rendering, space, limit).await?;
    if let Some(stored) = highest.beyond {
        return Err(Error::StoredBeyondMax {
            namespace: ids.coll.namespace().to_string(),
            counter: issued.slot.key.to_string(),
            stored,
            max: space.max,
        });
    }
    Ok(highest.value.map_or(issued.value, |v| v.max(issued.value)))
}

/// The number to try for `doc` after the one `issued` gave met a stored document: the
/// counter moved past the highest ID stored for it.
pub(crate) async fn past_stored<T: SequentialId>(
    doc: &T,
    coll: &Collection<T>,
    seq: &Sequence,
    issued: &Issued,
) -> Result<Issued> {
    let floor = stored_floor(doc, coll, seq, issued).await?;
    seq.skip_ahead(issued, floor).await
}

/// Inserts `docs` with the IDs `issued` gave them in one ordered `insert_many`; when one meets
/// a stored document, the documents from it on get new IDs above the stored ones and are
/// inserted again, a bounded number of rounds. Returns the stored IDs.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    seq: &Sequence,
    mut issued: Vec<(T::Id, Issued)>,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    let mut options = options.cloned().unwrap_or_default();
    options.ordered = Some(true);
    let mut from = 0;
    let mut rounds = 0;
    loop {
        let Err(e) = coll
            .insert_many(&docs[from..])
            .with_options(options.clone())
            .await
        else {
            return Ok(issued.into_iter().map(|(id, _)| id).collect());
        };
        let Some(at) = duplicate_at::<T>(&e).map(|k| from + k) else {
            return Err(Error::from_driver_on(e, coll.namespace(), Access::Insert));
        };
        let (id, at_issued) = issued[at].clone();
        if rounds == ROUNDS {
            return Err(taken(coll, &id, &at_issued, Error::from(e), AFTER_ROUNDS));
        }
        rounds += 1;
        from = at;
        // New IDs for the documents that were not stored, one reservation per counter, above
        // the IDs stored for it.
        let rest = &mut docs[from..];
        for (scoped, members) in document_scope::groups(seq, rest)? {
            let first = from + members[0];
            let collided = if members.contains(&0) {
                &at_issued
            } else {
                &issued[first].1
            };
            let floor = stored_floor(&rest[members[0]], coll, &scoped, collided).await?;
            let (range, slot) = scoped
                .reserve_above(collided, members.len() as u64, floor)
                .await?;
            for (i, value) in members.into_iter().zip(range) {
                let id = T::Id::render(value, &slot.rendering)?;
                rest[i].set_id(id.clone());
                let slot = slot.clone();
                issued[from + i] = (id, Issued { value, slot });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use mongodb::bson::{doc, from_document, Bson};
    use mongodb::error::{CommandError, ErrorKind, InsertManyError};
    use serde::Serialize;

    use super::*;
    use crate::options::SequenceConfig;
    use crate::SequentialId;

    /// A model numbered in `_id`.
    #[derive(Serialize)]
    struct Order {
        #[serde(rename = "_id")]
        id: i64,
    }

    impl SequentialId for Order {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("order");
        fn set_id(&mut self, id: i64) {
            self.id = id;
        }
    }

    /// A model numbered in a field of its own.
    #[derive(Serialize)]
    struct Invoice {
        number: i64,
    }

    impl SequentialId for Invoice {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("invoice").id_field("number");
        fn set_id(&mut self, id: i64) {
            self.number = id;
        }
    }

    /// A model numbered per tenant, the tenant stored as `t`.
    #[derive(Serialize)]
    struct Ticket {
        t: String,
        number: i64,
    }

    impl SequentialId for Ticket {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("ticket")
            .id_field("number")
            .scope(&["tenant"])
            .scope_fields(&["t"]);
        fn set_id(&mut self, id: i64) {
            self.number = id;
        }
        fn scope_values(&self) -> Result<Vec<(&'static str, Bson)>> {
            Ok(vec![("tenant", Bson::String(self.t.clone()))])
        }
    }

    /// The duplicate-key error of one write, as `insert_one` meets it.
    fn duplicate(message: &str) -> Error {
        let e: CommandError =
            from_document(doc! { "code": 11000, "codeName": "DuplicateKey", "errmsg": message })
                .unwrap();
        Error::from(mongodb::error::Error::from(ErrorKind::Command(e)))
    }

    /// The error of an ordered `insert_many` stopped at document `index` with `code`.
    fn insert_many_error(index: i32, code: i32, message: &str) -> mongodb::error::Error {
        let e: InsertManyError = from_document(doc! { "writeErrors": [
            { "index": index, "code": code, "errmsg": message },
        ] })
        .unwrap();
        ErrorKind::InsertMany(e).into()
    }

    const ON_ID: &str =
        "E11000 duplicate key error collection: shop.orders index: _id_ dup key: { _id: 42 }";
    const ON_NUMBER: &str =
        "E11000 duplicate key error collection: shop.invoices index: number_1 dup key: { number: 7 }";
    const ON_EMAIL: &str = "E11000 duplicate key error collection: shop.orders index: email_1 \
                            dup key: { email: \"ada@example.com\" }";

    #[test]
    fn a_duplicate_on_the_id_index_skips_ahead_when_the_id_is_in_id() {
        assert!(on_id_field::<Order>(&duplicate(ON_ID)));
        assert!(!on_id_field::<Order>(&duplicate(ON_EMAIL)));
        // An index named like `_id_` inside a longer name is another index.
        assert!(!on_id_field::<Order>(&duplicate(
            "E11000 duplicate key error collection: shop.orders index: user_id_1 dup key: { \
             user_id: 3 }"
        )));
    }

    /// For an ID field of its own, what counts is the fields of the index, not its name.
    #[test]
    fn a_duplicate_on_a_unique_index_of_the_id_field_skips_ahead() {
        assert!(on_id_field::<Invoice>(&duplicate(ON_NUMBER)));
        assert!(on_id_field::<Invoice>(&duplicate(
            "E11000 duplicate key error collection: shop.invoices index: unique_numbers dup key: \
             { number: 7 }"
        )));
        assert!(
            !on_id_field::<Invoice>(&duplicate(ON_ID)),
            "`_id` is not the ID field"
        );
        assert!(!on_id_field::<Invoice>(&duplicate(ON_EMAIL)));
        assert!(
            !on_id_field::<Invoice>(&duplicate(
                "E11000 duplicate key error collection: shop.invoices index: number_1_year_1 dup \
                 key: { number: 7, year: 2025 }"
            )),
            "a compound index on more than the ID field is another constraint"
        );
    }

    #[test]
    fn a_scoped_model_skips_ahead_on_the_compound_index_of_its_scope_and_id() {
        let compound = "E11000 duplicate key error collection: shop.tickets index: t_1_number_1 \
                        dup key: { t: \"acme\", number: 7 }";
        assert!(on_id_field::<Ticket>(&duplicate(compound)));
        let reversed = "E11000 duplicate key error collection: shop.tickets index: number_1_t_1 \
                        dup key: { number: 7, t: \"acme\" }";
        assert!(on_id_field::<Ticket>(&duplicate(reversed)), "in any order");
        // Values that look like more fields are read as values.
        let tricky = "E11000 duplicate key error collection: shop.tickets index: t_1_number_1 \
                      dup key: { t: \"a, number: 1 }\", number: 7 }";
        assert!(on_id_field::<Ticket>(&duplicate(tricky)));
        let id_alone = "E11000 duplicate key error collection: shop.tickets index: number_1 \
                        dup key: { number: 7 }";
        assert!(
            !on_id_field::<Ticket>(&duplicate(id_alone)),
            "unique across tenants: not the index of the scope's counters"
        );
        let scope_name = "E11000 duplicate key error collection: shop.tickets index: \
                          tenant_1_number_1 dup key: { tenant: \"acme\", number: 7 }";
        assert!(
            !on_id_field::<Ticket>(&duplicate(scope_name)),
            "the scope is stored as `t`"
        );
    }

    #[test]
    fn only_duplicate_keys_skip_ahead() {
        let e = duplicate(ON_ID);
        assert!(matches!(e, Error::DuplicateKey { .. }));
        let other: CommandError = from_document(
            doc! { "code": 121, "codeName": "DocumentValidationFailure", "errmsg": ON_ID },
        )
        .unwrap();
        let other = Error::from(mongodb::error::Error::from(ErrorKind::Command(other)));
        assert!(!on_id_field::<Order>(&other));
        assert!(!on_id_field::<Order>(&duplicate(
            "E11000 duplicate key error"
        )));
    }

    #[test]
    fn an_insert_many_reports_the_position_of_the_document_that_met_a_stored_id() {
        let on_id = insert_many_error(3, 11000, ON_ID);
        assert_eq!(duplicate_at::<Order>(&on_id), Some(3));
        assert_eq!(
            duplicate_at::<Invoice>(&on_id),
            None,
            "not Invoice's ID field"
        );
        let on_number = insert_many_error(0, 11000, ON_NUMBER);
        assert_eq!(duplicate_at::<Invoice>(&on_number), Some(0));
        assert_eq!(
            duplicate_at::<Order>(&insert_many_error(3, 11000, ON_EMAIL)),
            None
        );
        assert_eq!(
            duplicate_at::<Order>(&insert_many_error(3, 121, ON_ID)),
            None,
            "a validation error is no duplicate"
        );
        // Mapped to this crate's error, the same message skips ahead.
        assert!(on_id_field::<Order>(&Error::from(on_id)));
    }

    #[test]
    fn an_insert_many_with_a_write_concern_error_does_not_skip_ahead() {
        let e: InsertManyError = from_document(doc! {
            "writeErrors": [{ "index": 1, "code": 11000, "errmsg": ON_ID }],
            "writeConcernError": { "code": 64, "errmsg": "waiting for replication timed out" },
        })
        .unwrap();
        let e: mongodb::error::Error = ErrorKind::InsertMany(e).into();
        assert_eq!(duplicate_at::<Order>(&e), None);
    }

    /// The stored documents of a scope are found by the stored name of each scope field, each
    /// value compared with `$eq`, so that no value is read as an operator.
    #[test]
    fn the_scope_filter_compares_the_stored_scope_fields_by_equality() {
        let ticket = Ticket {
            t: "$acme".into(),
            number: 0,
        };
        assert_eq!(
            scope_filter(&ticket).unwrap(),
            doc! { "t": { "$eq": "$acme" } }
        );
        assert_eq!(scope_filter(&Order { id: 0 }).unwrap(), doc! {});
    }
}
