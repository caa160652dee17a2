//! What the operations return: each is awaited directly (it implements
//! [`IntoFuture`](std::future::IntoFuture)), and first takes the caller's session and, where the
//! driver's call underneath takes them, its options, as the driver's own actions do.
//!
//! A [`Sequence`](crate::Sequence)'s operations and the checks of [`Claims`](crate::claims::Claims)
//! run in their action's file, which also adds the method that returns it, as the driver's
//! actions add theirs to `Collection`. A model's actions are returned by the methods of
//! [`SequentialId`](crate::SequentialId), and awaiting one runs the insert path of the model's
//! strategy.
//!
//! ```no_run
//! # use sequence_runtime::SequentialId;
//! # async fn f<T: SequentialId>(mut doc: T, coll: mongodb::Collection<T>, client: mongodb::Client) -> sequence_runtime::Result<()> {
//! let mut session = client.start_session().await?;
//! session.start_transaction().await?;
//! // With the `counter` strategy the number is taken in the transaction: an abort gives it back.
//! let id = doc.insert_with_id(&coll).session(&mut session).await?;
//! session.commit_transaction().await?;
//! # let _ = id; Ok(()) }
//! ```

/// The setter of the caller's session, which every action that talks to the server has; its
/// doc comment says what runs in the session.
macro_rules! session_setter {
    ($(#[doc = $doc:literal])+) => {
        $(#[doc = $doc])+
        pub fn session(mut self, session: &'a mut mongodb::ClientSession) -> Self {
            self.session = Some(session);
            self
        }
    };
}

/// The setters of the options of the driver's write underneath an action (`with_options`, and
/// `write_concern`, which sets the one option every write has), for an action whose `options`
/// field holds them.
macro_rules! write_setters {
    ($options:ty, $write:literal) => {
        #[doc = concat!("The options of the ", $write, " underneath. The counter's own update keeps write concern `majority`.")]
        pub fn with_options(mut self, options: impl Into<Option<$options>>) -> Self {
            self.options = options.into();
            self
        }

        #[doc = concat!("The write concern of the ", $write, " underneath (not of the counter update, which stays `majority`). A gapless write outside the caller's session refuses one with [`Error::InvalidArgument`](crate::Error::InvalidArgument): it commits its own transaction with `majority`.")]
        pub fn write_concern(mut self, write_concern: mongodb::options::WriteConcern) -> Self {
            self.options
                .get_or_insert_with(<$options>::default)
                .write_concern = Some(write_concern);
            self
        }
    };
}

mod check_claims;
mod current;
mod delete;
mod ensure_indexes;
mod insert_many_with_ids;
mod insert_with_id;
mod next_id;
mod periods;
mod repair_claims;
mod reserve;
mod reset;
mod set_next;
mod sync_counters;
mod upsert_with_id;

pub use check_claims::CheckClaims;
pub use current::Current;
pub use delete::Delete;
pub(crate) use ensure_indexes::{find_index, IndexTarget};
pub use ensure_indexes::{EnsureIndexes, EnsuredIndex, IndexReport};
pub use insert_many_with_ids::InsertManyWithIds;
pub use insert_with_id::InsertWithId;
pub use next_id::{NextId, NextIdFuture};
pub use periods::{CountPeriods, PurgePeriods};
pub use repair_claims::RepairClaims;
pub use reserve::{Reserve, ReserveIds};
pub use reset::Reset;
pub use set_next::SetNext;
pub use sync_counters::SyncCounters;
pub use upsert_with_id::UpsertWithId;
