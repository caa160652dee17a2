//! [`Sequence::sync_counters`] and its action, which a model's `sync_counters` returns too.

use std::future::IntoFuture;

use mongodb::bson::Document;
use mongodb::{ClientSession, Collection};

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::BoxFuture;
use crate::sync::SyncReport;

impl Sequence {
    /// Moves every counter of this sequence up to the highest ID stored for it in `coll`, whose
    /// documents hold their IDs in `id_field`: after an import, a restore, a migration, or
    /// documents written by another program. One counter per period for prefixed IDs (parsed
    /// back with the pattern and width that render them), one per scope value, one per shard.
    /// A counter never moves down, and a missing one is created. Returns what it found and
    /// did; IDs that belong to no counter (another BSON type, text that does not match the
    /// pattern, values below `start`) are counted as skipped.
    ///
    /// The IDs are read with one aggregation over the documents that have `id_field`. Set the
    /// names the documents store the scope fields under with
    /// [`scope_fields`](SyncCounters::scope_fields) if they differ from the `scope` names,
    /// and say whether the IDs are text with [`text`](SyncCounters::text) (default: numbers).
    /// A derived model has `sync_counters(&coll)`, which sets both.
    ///
    /// A stored value beyond `max` is
    /// [`Error::StoredBeyondMax`](crate::Error::StoredBeyondMax), and nothing is written.
    /// Counter and ranges strategies only.
    ///
    /// ```no_run
    /// # async fn f(seq: sequence_runtime::Sequence, orders: mongodb::Collection<mongodb::bson::Document>) -> sequence_runtime::Result<()> {
    /// let report = seq.sync_counters(&orders, "number").await?;
    /// for counter in &report.counters {
    ///     println!("{}: {:?} -> {}", counter.key, counter.old, counter.new);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn sync_counters<'a>(
        &self,
        coll: &Collection<Document>,
        id_field: &str,
    ) -> SyncCounters<'a> {
        SyncCounters::new(self.clone(), coll.clone(), id_field.to_owned(), None, false)
    }
}

/// The action returned by [`Sequence::sync_counters`] and by a model's `sync_counters`;
/// `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SyncCounters<'a> {
    seq: Sequence,
    coll: Collection<Document>,
    id_field: String,
    scope_fields: Option<Vec<String>>,
    text: bool,
    dry_run: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a> SyncCounters<'a> {
    /// The action of `seq` over the IDs `coll` stores in `id_field`, the scope fields stored
    /// under `scope_fields` (`None`: the `scope` names), as text if `text`.
    pub(crate) fn new(
        seq: Sequence,
        coll: Collection<Document>,
        id_field: String,
        scope_fields: Option<Vec<String>>,
        text: bool,
    ) -> Self {
        SyncCounters {
            seq,
            coll,
            id_field,
            scope_fields,
            text,
            dry_run: false,
            session: None,
        }
    }

    /// The names the documents store the `scope` fields under, in `scope` order (default: the
    /// `scope` names).
    pub fn scope_fields(mut self, fields: &[&str]) -> Self {
        self.scope_fields = Some(fields.iter().map(|f| (*f).to_owned()).collect());
        self
    }

    /// Whether the IDs are stored as text (`String` IDs); by default they are numbers.
    pub fn text(mut self, text: bool) -> Self {
        self.text = text;
        self
    }

    /// Finds what would move, and moves nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    session_setter!(
        /// Reads the stored IDs and moves the counters in `session`: inside its transaction, if
        /// one is started (for example together with the import that stored the IDs).
    );
}

impl<'a> IntoFuture for SyncCounters<'a> {
    type Output = Result<SyncReport>;
    type IntoFuture = BoxFuture<'a, Result<SyncReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let SyncCounters {
                seq,
                coll,
                id_field,
                scope_fields,
                text,
                dry_run,
                session,
            } = self;
            let stored = scope_fields.as_deref();
            seq.sync_counters_in(&coll, &id_field, stored, text, dry_run, session)
                .await
        })
    }
}
