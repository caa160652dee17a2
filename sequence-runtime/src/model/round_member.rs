//! What waits in a group for a round (`gapless_group.rs`): an insert's document, serialized as
//! the driver serializes it with a placeholder in its ID field (or its ID, when it took its
//! number before it queued), where its answer goes, and how the ID field stores a number, so
//! that a round writes the numbers it takes into the documents as the model's serializer would.

use mongodb::bson::{Bson, Document};
use serde::Serialize;
use tokio::sync::oneshot;

use super::insert;
use super::sequential_id::SequentialId;
use crate::error::{Error, Result};
use crate::id::{IdValue, Rendering};
use crate::sequence::{Issued, Sequence};

/// An insert waiting for a round: its document, serialized with the ID field set to a
/// placeholder (or to its ID, when it took its number before it queued: `taken`), and where
/// its ID (or its error) goes.
pub(super) struct Member<I> {
    pub(super) doc: Document,
    /// The size of `doc` serialized.
    pub(super) bytes: usize,
    /// The number the insert took before it queued, with the counter it came from.
    pub(super) taken: Option<(I, Issued)>,
    /// In a round of first values (`first_values.rs`): the sequence in the member's scope
    /// value.
    pub(super) scoped: Option<Sequence>,
    pub(super) reply: oneshot::Sender<Reply<I>>,
}

impl<I> Member<I> {
    /// The member of `doc` as the driver serializes it (given an `_id` if it has none, so that
    /// the documents of a commit of unknown outcome can be looked up), with the number it took
    /// if any, and where its reply arrives.
    pub(super) fn new<S: Serialize>(
        doc: &S,
        taken: Option<(I, Issued)>,
    ) -> Result<(Self, oneshot::Receiver<Reply<I>>)> {
        let (doc, bytes) = insert::fixed_document_and_size(doc)?;
        let (reply, rx) = oneshot::channel();
        let member = Member {
            doc,
            bytes,
            taken,
            scoped: None,
            reply,
        };
        Ok((member, rx))
    }

    /// The member as the first value of the scope value `seq` is in.
    pub(super) fn in_scope(mut self, seq: Sequence) -> Self {
        self.scoped = Some(seq);
        self
    }

    /// Answers the member.
    pub(super) fn answer(self, reply: Reply<I>) {
        let _ = self.reply.send(reply);
    }
}

/// What a member of a round is answered: its ID, its error, or `Ok(None)`: its number met a
/// claim, so it inserts alone with a new one.
pub(super) type Reply<I> = Result<Option<I>>;

/// How the ID field stores a counter value, as the model's serializer writes it.
#[derive(Clone, Copy)]
pub(super) enum StoredAs {
    Int32,
    Int64,
    Text,
}

impl StoredAs {
    /// The shape of `stored`, the ID field of a document serialized with the ID of counter
    /// value `value` rendered with `rendering`, if that is how this module would store it.
    pub(super) fn of(stored: &Bson, value: i64, rendering: &Rendering) -> Option<Self> {
        let shape = match stored {
            Bson::Int32(_) => StoredAs::Int32,
            Bson::Int64(_) => StoredAs::Int64,
            Bson::String(_) => StoredAs::Text,
            _ => return None,
        };
        (shape.bson(value, rendering, "a placeholder").ok()? == *stored).then_some(shape)
    }

    /// The stored ID of counter value `value` rendered with `rendering`.
    pub(super) fn bson(
        self,
        value: i64,
        rendering: &Rendering,
        target: &'static str,
    ) -> Result<Bson> {
        Ok(match self {
            StoredAs::Text => Bson::String(rendering.text(value)?),
            StoredAs::Int64 => Bson::Int64(rendering.number(value, target)?),
            StoredAs::Int32 => {
                let n = rendering.number(value, target)?;
                Bson::Int32(i32::try_from(n).map_err(|_| Error::IdOutOfRange { value: n, target })?)
            }
        })
    }
}

/// `doc` serialized as a member of a group, with a placeholder ID; `None` if the model stores
/// its ID field in a way this module cannot reproduce (its own serializer).
#[allow(clippy::type_complexity)]
pub(super) fn prepare<T: SequentialId>(
    doc: &mut T,
    seq: &Sequence,
) -> Result<Option<(Member<T::Id>, oneshot::Receiver<Reply<T::Id>>, StoredAs)>> {
    let start = seq.start()?;
    let rendering = seq.issued(start)?.slot.rendering.clone();
    doc.set_id(T::Id::render(start, &rendering)?);
    let (member, rx) = Member::new(&*doc, None)?;
    let field = T::SEQUENCE.id_field;
    let Some(shape) = member
        .doc
        .get(field)
        .and_then(|stored| StoredAs::of(stored, start, &rendering))
    else {
        return Ok(None);
    };
    Ok(Some((member, rx, shape)))
}

#[cfg(test)]
mod tests {
    use mongodb::bson::doc;
    use serde::{Serialize, Serializer};

    use super::*;
    use crate::model::insert::tests::ByFormat;
    use crate::options::SequenceConfig;

    #[test]
    fn shapes_store_a_counter_value_as_the_id_type_does() {
        let dated = Rendering::new("251122", Some(6));
        assert_eq!(
            StoredAs::Int64.bson(7, &dated, "i64").unwrap(),
            Bson::Int64(251_122_000_007)
        );
        assert_eq!(
            StoredAs::Text.bson(7, &dated, "String").unwrap(),
            Bson::String("251122000007".into())
        );
        assert!(matches!(
            StoredAs::Int32.bson(7, &dated, "i32"),
            Err(Error::IdOutOfRange {
                value: 251_122_000_007,
                target: "i32"
            })
        ));
        assert_eq!(
            StoredAs::Int32.bson(7, &Rendering::plain(), "i32").unwrap(),
            Bson::Int32(7)
        );
        assert!(matches!(
            StoredAs::Int64.bson(7, &Rendering::new("T-", Some(4)), "i64"),
            Err(Error::InvalidConfig { key: "prefix", .. })
        ));
    }

    #[test]
    fn a_shape_is_found_only_for_a_placeholder_stored_as_this_module_would_store_it() {
        let plain = Rendering::plain();
        assert!(matches!(
            StoredAs::of(&Bson::Int32(1), 1, &plain),
            Some(StoredAs::Int32)
        ));
        assert!(matches!(
            StoredAs::of(&Bson::Int64(1), 1, &plain),
            Some(StoredAs::Int64)
        ));
        let padded = Rendering::new("T-", Some(4));
        assert!(matches!(
            StoredAs::of(&Bson::String("T-0001".into()), 1, &padded),
            Some(StoredAs::Text)
        ));
        assert!(StoredAs::of(&Bson::String("T-1".into()), 1, &padded).is_none());
        assert!(StoredAs::of(&Bson::Int64(1001), 1, &plain).is_none());
        assert!(StoredAs::of(&Bson::Double(1.0), 1, &plain).is_none());
    }

    /// Numbered in `_id`.
    #[derive(Serialize)]
    struct Order {
        #[serde(rename = "_id")]
        id: i64,
        item: &'static str,
    }

    impl SequentialId for Order {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("order").gapless(true);
        fn set_id(&mut self, id: i64) {
            self.id = id;
        }
    }

    /// Numbered in a field of its own, from 100.
    #[derive(Serialize)]
    struct Invoice {
        number: i32,
    }

    impl SequentialId for Invoice {
        type Id = i32;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("invoice")
            .id_field("number")
            .start(100)
            .gapless(true);
        fn set_id(&mut self, id: i32) {
            self.number = id;
        }
    }

    /// Numbered as text with a prefix.
    #[derive(Serialize)]
    struct Ticket {
        code: String,
    }

    impl SequentialId for Ticket {
        type Id = String;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("ticket")
            .id_field("code")
            .prefix("T-")
            .width(4)
            .gapless(true);
        fn set_id(&mut self, id: String) {
            self.code = id;
        }
    }

    /// Stores its number shifted by its own serializer.
    #[derive(Serialize)]
    struct Shifted {
        #[serde(serialize_with = "plus_1000")]
        number: i64,
    }

    fn plus_1000<S: Serializer>(n: &i64, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_i64(n + 1000)
    }

    impl SequentialId for Shifted {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("shifted")
            .id_field("number")
            .gapless(true);
        fn set_id(&mut self, id: i64) {
            self.number = id;
        }
    }

    /// `doc` prepared as a member of a group of its model's sequence (in memory).
    fn prepared<T: SequentialId>(doc: &mut T) -> Option<(Member<T::Id>, StoredAs)> {
        let seq = Sequence::in_memory(T::SEQUENCE.options()).unwrap();
        prepare(doc, &seq)
            .unwrap()
            .map(|(member, _, shape)| (member, shape))
    }

    #[test]
    fn a_member_holds_its_document_with_the_first_value_as_placeholder() {
        let (member, shape) = prepared(&mut Invoice { number: 0 }).unwrap();
        assert!(matches!(shape, StoredAs::Int32));
        assert_eq!(member.doc.get("number"), Some(&Bson::Int32(100)));
        assert!(
            matches!(member.doc.get("_id"), Some(Bson::ObjectId(_))),
            "an `_id` to find the document by after a commit of unknown outcome"
        );
        assert_eq!(
            member.bytes,
            mongodb::bson::to_vec(&member.doc).unwrap().len()
        );
    }

    #[test]
    fn an_id_in_id_is_the_placeholder_itself() {
        let (member, shape) = prepared(&mut Order { id: 0, item: "tea" }).unwrap();
        assert!(matches!(shape, StoredAs::Int64));
        assert_eq!(member.doc, doc! { "_id": 1_i64, "item": "tea" });
    }

    #[test]
    fn a_text_id_holds_the_rendered_first_value() {
        let (member, shape) = prepared(&mut Ticket {
            code: String::new(),
        })
        .unwrap();
        assert!(matches!(shape, StoredAs::Text));
        assert_eq!(member.doc.get_str("code"), Ok("T-0001"));
    }

    /// Holds a field that serializes by format.
    #[derive(Serialize)]
    struct Stamped {
        number: i64,
        stamp: ByFormat,
    }

    impl SequentialId for Stamped {
        type Id = i64;
        const SEQUENCE: SequenceConfig = SequenceConfig::new("stamped")
            .id_field("number")
            .gapless(true);
        fn set_id(&mut self, id: i64) {
            self.number = id;
        }
    }

    #[test]
    fn a_member_is_serialized_as_the_driver_serializes_its_document() {
        let (member, _) = prepared(&mut Stamped {
            number: 0,
            stamp: ByFormat,
        })
        .unwrap();
        assert_eq!(member.doc.get("stamp"), Some(&Bson::Int32(1)));
        assert_eq!(
            member.doc.keys().next().map(String::as_str),
            Some("_id"),
            "the `_id` first, where an insert of the model puts it"
        );
    }

    #[test]
    fn a_model_that_stores_its_id_its_own_way_is_not_grouped() {
        assert!(prepared(&mut Shifted { number: 0 }).is_none());
    }
}
