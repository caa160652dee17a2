//! The arguments of each command beyond the counter, limits and sequence flags they share
//! (`set-next`, `delete`, `next`, `sync`, `ensure-indexes`, the claims commands and
//! `purge-before`), and the `--force`, `--dry-run` and overrides of a write.

use clap::Args;
use mongodb::bson::Bson;
use sequence_runtime::claims;
use sequence_runtime::jiff::civil::Date;
use sequence_runtime::options::Stores;

use super::values::{filter_fields, scope_value, stores};
use super::{CounterArgs, Filter, Given, Limits, SequenceArgs, Shape};

/// The arguments of `set-next`.
#[derive(Args)]
pub(crate) struct SetNextArgs {
    /// The database.
    pub(crate) db: String,
    #[command(flatten)]
    pub(crate) counter: CounterArgs,
    /// The next value to issue.
    pub(crate) value: i64,
    #[command(flatten)]
    pub(crate) limits: Limits,
    /// Allows moving the counter backwards (only if no document uses the values again).
    #[arg(long)]
    pub(crate) force: bool,
    /// Creates the counter if it does not exist.
    #[arg(long)]
    pub(crate) create: bool,
    /// Allows moving a gapless sequence's counter forward: the numbers skipped are a
    /// permanent gap.
    #[arg(long)]
    pub(crate) leave_gap: bool,
    /// Allows moving a gapless sequence's counter backwards (with `--force`): the numbers
    /// are issued again, and inserts that meet them skip ahead.
    #[arg(long)]
    pub(crate) reissue: bool,
    /// Says what would change, and changes nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

impl SetNextArgs {
    /// What the flags allow.
    pub(crate) fn change(&self) -> Change {
        Change {
            create: self.create,
            leave_gap: self.leave_gap,
            reissue: self.reissue,
            ..Change::forced(self.force, self.dry_run)
        }
    }
}

/// The arguments of `delete`.
#[derive(Args)]
pub(crate) struct DeleteArgs {
    /// The database.
    pub(crate) db: String,
    #[command(flatten)]
    pub(crate) counter: CounterArgs,
    /// Deletes them.
    #[arg(long)]
    pub(crate) force: bool,
    /// Allows deleting a gapless sequence's counters that have issued numbers: its numbering
    /// starts again at `start` and skips ahead of the stored documents.
    #[arg(long)]
    pub(crate) restart_numbering: bool,
    /// Lists what would be deleted, and deletes nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

impl DeleteArgs {
    /// What the flags allow.
    pub(crate) fn change(&self) -> Change {
        Change {
            restart_numbering: self.restart_numbering,
            ..Change::forced(self.force, self.dry_run)
        }
    }
}

/// The arguments of `next`.
#[derive(Args)]
pub(crate) struct NextArgs {
    /// The database.
    pub(crate) db: String,
    /// The sequence name.
    pub(crate) name: String,
    /// How many values to take.
    #[arg(default_value_t = 1)]
    pub(crate) n: u64,
    /// A scope value, as `field=value` (repeat for several fields): the values come from the
    /// counter of that scope.
    #[arg(long = "scope", value_parser = scope_value)]
    pub(crate) scope: Vec<(String, Bson)>,
    /// The options of the sequence.
    #[command(flatten)]
    pub(crate) sequence: SequenceArgs,
    /// What the counter field is called and holds.
    #[command(flatten)]
    pub(crate) shape: Shape,
    /// Starts a sequence that has neither counters nor a record yet.
    #[arg(long)]
    pub(crate) create: bool,
    /// Takes values from a gapless sequence: they are never stored, a permanent gap in its
    /// numbering.
    #[arg(long)]
    pub(crate) leave_gap: bool,
    /// Says which values it would take, and takes none.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

impl NextArgs {
    /// The flags that say where the sequence is and how it looks, with `--counters`.
    pub(crate) fn given<'a>(&'a self, counters: Option<&'a str>) -> Given<'a> {
        Given {
            counters,
            layout: self.sequence.layout(),
            shape: Some(&self.shape),
            id_field: None,
            prefix: None,
            sequence: Some(&self.sequence),
        }
    }
}

/// The arguments of `sync`.
#[derive(Args)]
pub(crate) struct SyncArgs {
    /// The collection whose documents hold the IDs, as `DB.COLLECTION`.
    pub(crate) target: String,
    /// The sequence name.
    #[arg(long)]
    pub(crate) name: String,
    /// The field the documents store the ID in (default: the recorded one, else `_id`).
    #[arg(long)]
    pub(crate) field: Option<String>,
    /// The IDs are text (`String` IDs); by default they are numbers.
    #[arg(long)]
    pub(crate) text: bool,
    /// The options of the sequence.
    #[command(flatten)]
    pub(crate) sequence: SequenceArgs,
    /// A scope field (repeat for several): one counter per value.
    #[arg(long = "scope")]
    pub(crate) scope: Vec<String>,
    /// The name of the counters' counter field (default `seq`); `--field` is the IDs' field.
    #[arg(long, value_name = "NAME")]
    pub(crate) counter_field: Option<String>,
    /// What the counter field holds: `last_issued` (default) or `next_free`.
    #[arg(long, value_parser = stores)]
    pub(crate) stores: Option<Stores>,
    /// The filter that finds the counter documents, for a convention of one's own.
    #[arg(long, value_parser = filter_fields)]
    pub(crate) filter: Option<Filter>,
    /// Says what would move, and moves nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Syncs a sequence that has neither counters nor a record yet (an import): creates its
    /// counters at the stored IDs.
    #[arg(long)]
    pub(crate) create: bool,
}

impl SyncArgs {
    /// The counter field, what it holds and the filter, as given.
    pub(crate) fn shape(&self) -> Shape {
        Shape {
            field: self.counter_field.clone(),
            stores: self.stores,
            filter: self.filter.clone(),
        }
    }
}

/// The arguments of `ensure-indexes`.
#[derive(Args)]
pub(crate) struct EnsureIndexesArgs {
    /// The collection whose documents hold the IDs, as `DB.COLLECTION`.
    pub(crate) target: String,
    /// The sequence name.
    #[arg(long)]
    pub(crate) name: String,
    /// The field the documents store the ID in, as stored (default: the recorded one, else
    /// `_id`).
    #[arg(long)]
    pub(crate) field: Option<String>,
    /// A scope field, as stored (repeat for several; default: the recorded ones).
    #[arg(long = "scope", value_name = "FIELD")]
    pub(crate) scope: Vec<String>,
    /// The options of the sequence.
    #[command(flatten)]
    pub(crate) sequence: SequenceArgs,
    /// Creates the indexes of a sequence that has neither counters nor a record yet.
    #[arg(long)]
    pub(crate) create: bool,
    /// Says which indexes are there and which are missing, and creates none.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// A collection and the proxy collection that holds the claims of its IDs.
#[derive(Args)]
pub(crate) struct ClaimsArgs {
    /// The collection whose documents hold the IDs, as `DB.COLLECTION`.
    pub(crate) target: String,
    /// The sequence, whose record gives the ID field and the scope fields (as its record
    /// names them: give `--scope` where the documents store them under other names).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// The field the documents store the ID in, as stored (`_id`, `number`; default: the
    /// recorded one of `--name`).
    #[arg(long)]
    pub(crate) field: Option<String>,
    /// A scope field, as stored, in the model's `scope` order (repeat for several): IDs are
    /// unique per scope values (default: the recorded ones of `--name`).
    #[arg(long = "scope", value_name = "FIELD")]
    pub(crate) scope: Vec<String>,
    /// The proxy collection, in the same database (default `<COLLECTION>.claims.<FIELD>`).
    #[arg(long, value_name = "NAME")]
    pub(crate) proxy: Option<String>,
    /// The most items of each kind listed (all are counted).
    #[arg(long, default_value_t = claims::DEFAULT_LIMIT)]
    pub(crate) limit: usize,
}

/// The arguments of `purge-before`.
#[derive(Args)]
pub(crate) struct PurgeBeforeArgs {
    /// The database.
    pub(crate) db: String,
    /// The sequence name.
    pub(crate) name: String,
    /// A date (YYYY-MM-DD) in the sequence's time zone.
    pub(crate) date: Date,
    /// The sequence's period prefix pattern, such as `INV-YYMMDD-` (default: the recorded
    /// one).
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    /// The IANA time zone of the periods (default: the recorded one, else UTC).
    #[arg(long)]
    pub(crate) tz: Option<String>,
    /// Says how many counters would be deleted, and deletes nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// `--force`, `--dry-run` and the overrides of a write.
#[derive(Clone, Copy, Default)]
pub(crate) struct Change {
    /// Whether to write what is refused without `--force`.
    pub(crate) force: bool,
    /// Whether to say what would be written, and write nothing.
    pub(crate) dry_run: bool,
    /// Whether to create a counter that does not exist (`--create`).
    pub(crate) create: bool,
    /// Whether to leave a gap in a gapless sequence (`--leave-gap`).
    pub(crate) leave_gap: bool,
    /// Whether to issue a gapless sequence's numbers again (`--reissue`).
    pub(crate) reissue: bool,
    /// Whether to restart a gapless sequence's numbering (`--restart-numbering`).
    pub(crate) restart_numbering: bool,
}

impl Change {
    /// `--force` and `--dry-run` as given, no override.
    fn forced(force: bool, dry_run: bool) -> Self {
        Change {
            force,
            dry_run,
            ..Change::default()
        }
    }
}
