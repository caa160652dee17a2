//! The actions the operations of a [`Sequence`] return: each is awaited directly, and those that
//! talk to the server take the caller's session first (`.session(&mut session)`), as the
//! driver's own actions do.

use std::future::IntoFuture;
use std::marker::PhantomData;
use std::sync::Arc;

use jiff::civil::DateTime;
use mongodb::bson::Document;
use mongodb::{ClientSession, Collection};

use super::Sequence;
use crate::engine::{self, Source, SyncReport, SyncedCounter, Target};
use crate::error::{Error, Result};
use crate::observability::ADMIN;
use crate::store::BoxFuture;
use crate::values::{IdRange, IdValue, Slot};

/// Declares an action that runs `Sequence::$run(args, session)`.
macro_rules! session_action {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) => $run:ident -> $out:ty) => {
        $(#[$doc])*
        #[must_use = "an action does nothing until it is awaited"]
        pub struct $name<'a> {
            seq: &'a Sequence,
            $($arg: $ty,)*
            session: Option<&'a mut ClientSession>,
        }

        impl<'a> $name<'a> {
            pub(super) fn new(seq: &'a Sequence $(, $arg: $ty)*) -> Self {
                $name {
                    seq,
                    $($arg,)*
                    session: None,
                }
            }

            /// Runs the operation in `session`: inside its transaction, if one is started.
            pub fn session(mut self, session: &'a mut ClientSession) -> Self {
                self.session = Some(session);
                self
            }
        }

        impl<'a> IntoFuture for $name<'a> {
            type Output = Result<$out>;
            type IntoFuture = BoxFuture<'a, Result<$out>>;

            fn into_future(self) -> Self::IntoFuture {
                let $name { seq, $($arg,)* session } = self;
                Box::pin(seq.$run($($arg,)* session))
            }
        }
    };
}

session_action!(
    /// The action returned by [`Sequence::current`]; `.await` it.
    Current() => current_in -> Option<i64>
);

session_action!(
    /// The action returned by [`Sequence::reset`]; `.await` it.
    Reset() => reset_in -> ()
);

session_action!(
    /// The action returned by [`Sequence::delete`]; `.await` it.
    Delete() => delete_in -> bool
);

session_action!(
    /// The action returned by [`Sequence::purge_periods_before`]; `.await` it.
    PurgePeriods(before: DateTime) => purge_periods_in -> u64
);

session_action!(
    /// The action returned by [`Sequence::count_periods_before`]; `.await` it.
    CountPeriods(before: DateTime) => count_periods_in -> u64
);

/// The action returned by [`Sequence::set_next`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SetNext<'a> {
    seq: &'a Sequence,
    next: i64,
    force: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a> SetNext<'a> {
    pub(super) fn new(seq: &'a Sequence, next: i64) -> Self {
        SetNext {
            seq,
            next,
            force: false,
            session: None,
        }
    }

    /// Allows moving the counter backwards.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Moves the counter in `session`: inside its transaction, if one is started (for
    /// example together with an import of the documents the new value goes past).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }
}

impl<'a> IntoFuture for SetNext<'a> {
    type Output = Result<()>;
    type IntoFuture = BoxFuture<'a, Result<()>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.seq.set_next_in(self.next, self.force, self.session))
    }
}

/// The action returned by [`Sequence::reserve`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Reserve<'a> {
    seq: &'a Sequence,
    n: u64,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Reserve<'a> {
    pub(super) fn new(seq: &'a Sequence, n: u64) -> Self {
        Reserve {
            seq,
            n,
            session: None,
        }
    }

    /// Reserves with a counter update in `session` (counter strategy only).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The values reserved, and the counter they belong to.
    async fn run(self) -> Result<(IdRange, Arc<Slot>)> {
        self.seq.reserve_range(self.n, self.session).await
    }
}

impl<'a> IntoFuture for Reserve<'a> {
    type Output = Result<IdRange>;
    type IntoFuture = BoxFuture<'a, Result<IdRange>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { Ok(self.run().await?.0) })
    }
}

/// The action returned by [`Sequence::reserve_ids`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct ReserveIds<'a, T> {
    reserve: Reserve<'a>,
    ids: PhantomData<fn() -> T>,
}

impl<'a, T> ReserveIds<'a, T> {
    pub(super) fn new(seq: &'a Sequence, n: u64) -> Self {
        ReserveIds {
            reserve: Reserve::new(seq, n),
            ids: PhantomData,
        }
    }

    /// Reserves with a counter update in `session` (counter strategy only).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.reserve = self.reserve.session(session);
        self
    }
}

impl<'a, T: IdValue> IntoFuture for ReserveIds<'a, T> {
    type Output = Result<Vec<T>>;
    type IntoFuture = BoxFuture<'a, Result<Vec<T>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let (range, slot) = self.reserve.run().await?;
            render_all(range, &slot)
        })
    }
}

/// The action returned by [`Sequence::sync_counters`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SyncCounters<'a> {
    pub(super) seq: &'a Sequence,
    pub(super) coll: &'a Collection<Document>,
    pub(super) id_field: &'a str,
    pub(super) scope_fields: Option<&'a [&'a str]>,
    pub(super) text: bool,
    pub(super) dry_run: bool,
}

impl<'a> SyncCounters<'a> {
    /// The names the documents store the `scope` fields under, in `scope` order (default: the
    /// `scope` names).
    pub fn scope_fields(mut self, fields: &'a [&'a str]) -> Self {
        self.scope_fields = Some(fields);
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
}

impl<'a> IntoFuture for SyncCounters<'a> {
    type Output = Result<SyncReport>;
    type IntoFuture = BoxFuture<'a, Result<SyncReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let seq = self.seq;
            let engine = seq.engine()?;
            let options = &seq.state.options;
            let counters = engine.kind.counters("sync_counters")?;
            let shards = counters.shards().map(|shards| &**shards);
            let scope_names: Vec<&str> = options.scope.iter().map(String::as_str).collect();
            let stored = self.scope_fields.unwrap_or(&scope_names);
            if stored.len() != scope_names.len() {
                return Err(Error::InvalidArgument {
                    argument: "scope_fields",
                    reason: format!(
                        "sequence `{}` is scoped by {} field(s), but {} stored name(s) were given",
                        options.name,
                        scope_names.len(),
                        stored.len()
                    ),
                });
            }
            let source = Source {
                coll: self.coll,
                field: self.id_field,
                scope: scope_names
                    .iter()
                    .copied()
                    .zip(stored.iter().copied())
                    .collect(),
                text: self.text,
            };
            let target = Target {
                name: &options.name,
                store: &engine.store,
                bounds: engine.bounds,
                format: &engine.format,
                pattern: engine.format.pattern(),
                width: engine.format.width(),
                shards,
                now: engine.shared.now(&options.clock),
            };
            let report = engine::sync(&source, &target, self.dry_run).await?;
            if report.counters.iter().any(SyncedCounter::moved) && !self.dry_run {
                // Values cached below a counter's new value are taken by stored documents.
                engine.shared.invalidate().await;
            }
            tracing::info!(
                target: ADMIN,
                sequence = %options.name,
                counters = report.counters.len(),
                moved = report.counters.iter().filter(|c| c.moved()).count(),
                skipped = report.skipped,
                dryRun = self.dry_run,
                "Counters synced"
            );
            Ok(report)
        })
    }
}

/// The values of `range`, rendered as the IDs of `slot`.
fn render_all<T: IdValue>(range: IdRange, slot: &Slot) -> Result<Vec<T>> {
    range
        .iter()
        .map(|value| T::render(value, &slot.rendering))
        .collect()
}
