//! `mongo-sequence`: the operator's command line of mongo-sequence. It lists and shows the
//! counters of a database with the room they have left, takes values from a counter, sets and
//! deletes counters, moves counters past the IDs stored in a collection (after an import or a
//! migration), deletes the counters of old periods, and checks and repairs the claims of a proxy
//! collection (`unique = "proxy"`). Every write has `--dry-run`; `--json` prints for scripts,
//! errors included (`{"error": …, "hint": …}` on stderr). Exit status: 0 ok, 1 error, 2 bad
//! usage, 3 `check` found problems.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use comfy_table::{presets, Table};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{CollectionOptions, WriteConcern};
use mongodb::{Client, Collection, Database};
use sequence_runtime::claims::{self, Claims, ClaimsReport, RepairReport};
use sequence_runtime::jiff::civil::Date;
use sequence_runtime::{
    id::Bounds, id::CounterKey, options::Layout, options::Stores, store::CounterStore,
    store::MongoStore, store::StoredCounter, sync::SyncReport, Error, Scope, Sequence,
    SequenceOptions,
};
use serde_json::{json, Value};

/// The command line.
#[derive(Parser)]
#[command(
    name = "mongo-sequence",
    version,
    about = "List, show, take, set, delete, sync and purge the counters of mongo-sequence, and \
             check and repair the claims of a proxy collection"
)]
struct Cli {
    /// The MongoDB connection string.
    #[arg(long, env = "MONGODB_URI", global = true, hide_env_values = true)]
    uri: Option<String>,
    /// The collection that holds the counters.
    #[arg(long, default_value = "counters", global = true)]
    counters: String,
    /// Prints JSON for scripts instead of a table; errors too, as `{"error": …, "hint": …}` on
    /// stderr.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists the counters of a database, with the room each has left.
    ///
    /// Each counter decoded: name, period, scope, shard, layout, last issued, and the room left
    /// before `max` (of a shard: its `hi`) with the share used.
    List {
        /// The database.
        db: String,
        /// Lists only the counters whose name matches PATTERN: a name, or a pattern where `*`
        /// stands for any text and `?` for one character (`inv*`).
        #[arg(long, value_name = "PATTERN")]
        name: Option<String>,
        #[command(flatten)]
        limits: Limits,
        #[command(flatten)]
        shape: Shape,
    },
    /// Shows one counter, with the room it has left.
    Show {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
        #[command(flatten)]
        limits: Limits,
    },
    /// Takes N values from a counter (default 1), as `nextval` does.
    ///
    /// The values are issued: no other caller gets them. The counter's options are given as
    /// `sync` takes them.
    Next(NextArgs),
    /// Makes VALUE the next value a counter issues.
    ///
    /// Refuses a VALUE outside `start..=max` (of a shard: its slice `lo..=hi`), and moving the
    /// counter backwards without `--force`. Running processes keep the ranges they already
    /// hold.
    SetNext {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
        /// The next value to issue.
        value: i64,
        #[command(flatten)]
        limits: Limits,
        /// Allows moving the counter backwards (only if no document uses the values again).
        #[arg(long)]
        force: bool,
        /// Says what would change, and changes nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Deletes the counters of a sequence (with `--force`).
    ///
    /// Every counter document of the sequence (its periods, scope values and shards), or the
    /// one `--period`, `--scope` or `--shard` name. Needs `--force`; `--dry-run` lists them and
    /// deletes nothing. A deleted counter starts again at `start`.
    Delete {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
        /// Deletes them.
        #[arg(long)]
        force: bool,
        /// Lists what would be deleted, and deletes nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Moves the counters of a sequence up to the highest ID stored in a collection.
    ///
    /// As `sync_counters` does: one counter per period, scope value or shard; never down.
    Sync(SyncArgs),
    /// Checks the claims of a proxy collection (`unique = "proxy"`) against a collection.
    ///
    /// Lists the documents without a claim of their ID, the claims no document holds (their
    /// document is gone, or holds another ID), and the IDs held by more than one document.
    /// Writes nothing. Exit status 3 when it finds any of these.
    Check(ClaimsArgs),
    /// Claims the documents of a collection that have no claim in its proxy collection.
    ///
    /// Refuses (exit 1, listing them) when two documents hold one ID. With `--prune` it also
    /// deletes the claims no document holds, whose IDs may then be given again.
    Repair {
        #[command(flatten)]
        claims: ClaimsArgs,
        /// Also deletes the claims whose document is gone (or holds another ID now).
        #[arg(long)]
        prune: bool,
        /// Says what would be claimed and deleted, and writes nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Deletes the counters of a sequence's periods before the one DATE falls in.
    PurgeBefore {
        /// The database.
        db: String,
        /// The sequence name.
        name: String,
        /// A date (YYYY-MM-DD) in the sequence's time zone.
        date: Date,
        /// The sequence's period prefix pattern, such as `INV-YYMMDD-`.
        #[arg(long)]
        prefix: String,
        /// The IANA time zone of the periods (default UTC).
        #[arg(long)]
        tz: Option<String>,
        /// Says how many counters would be deleted, and deletes nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Which counter: a name, and the period, scope values or shard of a counter of a period,
/// scope or shard.
#[derive(Args)]
struct CounterArgs {
    /// The sequence name.
    name: String,
    /// The canonical period, such as `20251122` (for a prefix with date tokens).
    #[arg(long)]
    period: Option<String>,
    /// A scope value, as `field=value` (repeat for several fields). The value is read as JSON
    /// where it is JSON (`year=2025` is a number), else as text (`tenant=acme`).
    #[arg(long = "scope", value_parser = scope_value)]
    scope: Vec<(String, Bson)>,
    /// The shard, for a sequence of the `ranges` strategy (`{ _id: { seq: NAME, shard: K } }`).
    #[arg(long, value_name = "K")]
    shard: Option<u32>,
    /// The counter is in mongoose-sequence's layout.
    #[arg(long)]
    mongoose: bool,
    #[command(flatten)]
    shape: Shape,
}

/// What the counter field is called and what it holds, for counters written by other code.
#[derive(Args)]
struct Shape {
    /// The name of the counter field (default `seq`), such as `sequence` or `COUNT`.
    #[arg(long, value_name = "NAME")]
    field: Option<String>,
    /// What the counter field holds: `last_issued` (default) or `next_free`.
    #[arg(long, value_parser = stores)]
    stores: Option<Stores>,
}

impl Shape {
    fn field(&self) -> &str {
        self.field.as_deref().unwrap_or(DEFAULT_FIELD)
    }

    fn stores(&self) -> Stores {
        self.stores.unwrap_or_default()
    }

    fn decode(&self, doc: &Document) -> Option<StoredCounter> {
        StoredCounter::decode_with(doc, self.field(), self.stores())
    }
}

/// The counter field of the default options.
const DEFAULT_FIELD: &str = "seq";

/// The values of the counters read: `start..=max`, for the room they have left.
#[derive(Args)]
struct Limits {
    /// The first value of the counters (default 1); of a shard, its `lo` is used.
    #[arg(long)]
    start: Option<i64>,
    /// The largest value of the counters (default 9223372036854775807, i64::MAX); of a shard,
    /// its `hi` is used.
    #[arg(long)]
    max: Option<i64>,
}

impl Limits {
    /// `start..=max` as given, each at the default of the options when not given.
    fn bounds(&self, name: &str) -> Result<Bounds, Failure> {
        let mut options = SequenceOptions::builder(name);
        if let Some(v) = self.start {
            options = options.start(v);
        }
        if let Some(v) = self.max {
            options = options.max(v);
        }
        Ok(options.build().validate()?)
    }
}

/// The options of a sequence, as its counters were configured.
#[derive(Args)]
struct SequenceArgs {
    /// The period prefix pattern of the IDs, such as `INV-YYMMDD-`.
    #[arg(long)]
    prefix: Option<String>,
    /// The digits of the zero-padded counter part.
    #[arg(long)]
    width: Option<u8>,
    /// The IANA time zone of the periods.
    #[arg(long)]
    tz: Option<String>,
    /// The exact number of digits of every ID.
    #[arg(long)]
    digits: Option<u8>,
    /// The first value of the sequence.
    #[arg(long)]
    start: Option<i64>,
    /// The largest value of the sequence.
    #[arg(long)]
    max: Option<i64>,
    /// The number of shards of a ranges sequence.
    #[arg(long)]
    shards: Option<u32>,
    /// The counters are in mongoose-sequence's layout.
    #[arg(long)]
    mongoose: bool,
}

impl SequenceArgs {
    /// The options of sequence `name` with counters in `counters`, of the counter field `field`
    /// holding `stores`.
    fn options(
        &self,
        name: &str,
        counters: &str,
        field: Option<&str>,
        stores: Option<Stores>,
    ) -> sequence_runtime::options::SequenceOptionsBuilder {
        let mut options = SequenceOptions::builder(name).counters(counters);
        if let Some(v) = &self.prefix {
            options = options.prefix(v);
        }
        if let Some(v) = self.width {
            options = options.width(v);
        }
        if let Some(v) = &self.tz {
            options = options.tz(v);
        }
        if let Some(v) = self.digits {
            options = options.digits(v);
        }
        if let Some(v) = self.start {
            options = options.start(v);
        }
        if let Some(v) = self.max {
            options = options.max(v);
        }
        if let Some(v) = self.shards {
            options = options.ranges(v);
        }
        if self.mongoose {
            options = options.layout(Layout::Mongoose);
        }
        if let Some(v) = field {
            options = options.field(v);
        }
        if let Some(v) = stores {
            options = options.stores(v);
        }
        options
    }
}

#[derive(Args)]
struct NextArgs {
    /// The database.
    db: String,
    /// The sequence name.
    name: String,
    /// How many values to take.
    #[arg(default_value_t = 1)]
    n: u64,
    /// A scope value, as `field=value` (repeat for several fields): the values come from the
    /// counter of that scope.
    #[arg(long = "scope", value_parser = scope_value)]
    scope: Vec<(String, Bson)>,
    #[command(flatten)]
    sequence: SequenceArgs,
    #[command(flatten)]
    shape: Shape,
}

#[derive(Args)]
struct SyncArgs {
    /// The collection whose documents hold the IDs, as `DB.COLLECTION`.
    target: String,
    /// The sequence name.
    #[arg(long)]
    name: String,
    /// The field the documents store the ID in.
    #[arg(long, default_value = "_id")]
    field: String,
    /// The IDs are text (`String` IDs); by default they are numbers.
    #[arg(long)]
    text: bool,
    #[command(flatten)]
    sequence: SequenceArgs,
    /// A scope field (repeat for several): one counter per value.
    #[arg(long = "scope")]
    scope: Vec<String>,
    /// The name of the counters' counter field (default `seq`); `--field` is the IDs' field.
    #[arg(long, value_name = "NAME")]
    counter_field: Option<String>,
    /// What the counter field holds: `last_issued` (default) or `next_free`.
    #[arg(long, value_parser = stores)]
    stores: Option<Stores>,
    /// Says what would move, and moves nothing.
    #[arg(long)]
    dry_run: bool,
}

/// A collection and the proxy collection that holds the claims of its IDs.
#[derive(Args)]
struct ClaimsArgs {
    /// The collection whose documents hold the IDs, as `DB.COLLECTION`.
    target: String,
    /// The field the documents store the ID in, as stored (`_id`, `number`).
    #[arg(long)]
    field: String,
    /// A scope field, as stored, in the model's `scope` order (repeat for several): IDs are
    /// unique per scope values.
    #[arg(long = "scope", value_name = "FIELD")]
    scope: Vec<String>,
    /// The proxy collection, in the same database (default `<COLLECTION>.claims.<FIELD>`).
    #[arg(long, value_name = "NAME")]
    proxy: Option<String>,
    /// The most items of each kind listed (all are counted).
    #[arg(long, default_value_t = claims::DEFAULT_LIMIT)]
    limit: usize,
}

impl ClaimsArgs {
    fn claims(&self, client: &Client) -> Result<Claims, Failure> {
        let Some((db, coll)) = self.target.split_once('.') else {
            return Err(
                Failure::usage(format!("`{}` is not `DB.COLLECTION`", self.target))
                    .hint("name the collection with its database: `shop.orders`"),
            );
        };
        let db = client.database(db);
        let target = db.collection::<Document>(coll);
        let claims = match &self.proxy {
            Some(proxy) => Claims::new(&target, &self.field, &db.collection(proxy)),
            None => Claims::with_default_proxy(&target, &self.field),
        };
        Ok(claims.scope(self.scope.iter().cloned()))
    }
}

/// `field=value`, the value as JSON where it is JSON, else as text.
fn scope_value(arg: &str) -> Result<(String, Bson), String> {
    let (field, value) = arg
        .split_once('=')
        .ok_or_else(|| format!("`{arg}` is not `field=value`"))?;
    let value = match serde_json::from_str::<Value>(value) {
        Ok(json) => Bson::try_from(json).map_err(|e| e.to_string())?,
        Err(_) => Bson::String(value.to_owned()),
    };
    Ok((field.to_owned(), value))
}

/// `last_issued` or `next_free`.
fn stores(arg: &str) -> Result<Stores, String> {
    Stores::from_name(arg).ok_or_else(|| {
        let names: Vec<&str> = Stores::ALL.iter().map(|s| s.name()).collect();
        format!("`{arg}` is not one of {}", names.join(", "))
    })
}

/// A failure: a usage mistake (exit status 2) or an error (exit status 1), with a hint of what
/// to do about it where there is one.
struct Failure {
    usage: bool,
    message: String,
    hint: Option<String>,
    /// What the error lists, as JSON (printed with `--json` as `details`).
    details: Option<Box<Value>>,
    /// The exit status, when it is not 1 or 2.
    status: Option<u8>,
}

impl Failure {
    /// A usage mistake: exit status 2.
    fn usage(message: impl Into<String>) -> Self {
        Failure {
            usage: true,
            message: message.into(),
            hint: None,
            details: None,
            status: None,
        }
    }

    /// An error: exit status 1.
    fn error(message: impl Into<String>) -> Self {
        Failure {
            usage: false,
            message: message.into(),
            hint: None,
            details: None,
            status: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A failure of the command line's parser (exit status 2): its first line, and the tip or
    /// usage line it gives as the hint.
    fn of_parser(e: &clap::Error) -> Self {
        let text = e.render().to_string();
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let message = lines.next().unwrap_or_default();
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let rest: Vec<&str> = lines.collect();
        let hint = rest
            .iter()
            .find_map(|l| l.strip_prefix("tip: "))
            .or_else(|| rest.iter().find(|l| l.starts_with("Usage: ")).copied())
            .unwrap_or("`mongo-sequence --help` lists the commands and their arguments");
        Failure::usage(message).hint(hint)
    }

    /// Prints the failure on stderr (as JSON with `json`) and returns its exit status.
    fn report(self, json: bool) -> ExitCode {
        if let Some(status) = self.status {
            // The result was printed: only the status is left to give.
            return ExitCode::from(status);
        }
        if json {
            let mut error = json!({ "error": self.message, "hint": self.hint });
            if let Some(details) = self.details {
                error["details"] = *details;
            }
            eprintln!("{error}");
        } else {
            eprintln!("error: {}", self.message);
            if let Some(hint) = &self.hint {
                eprintln!("hint: {hint}");
            }
        }
        ExitCode::from(if self.usage { 2 } else { 1 })
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let hint = match &e {
            Error::WouldMoveBackwards { .. } => {
                Some("add --force if no document holds these values; --dry-run shows the move")
            }
            Error::CorruptCounter { .. } => Some(
                "for a counter written by other code, give its field and what it holds: \
                 --field NAME --stores last_issued|next_free",
            ),
            Error::Exhausted { .. } => Some("give the counter's own --max, or use another counter"),
            Error::CounterMismatch { .. } => Some(
                "give the --shards, --start, --max and --digits the sequence is configured with",
            ),
            Error::SharedIds { .. } => Some(
                "give each of these documents an ID of its own (`mongo-sequence check` lists \
                 them), then repair again",
            ),
            _ => None,
        };
        let details = match &e {
            Error::SharedIds { ids, count, .. } => {
                let shared = serde_json::to_value(ids).ok();
                Some(Box::new(json!({ "shared": shared, "shared_count": count })))
            }
            _ => None,
        };
        let usage = matches!(
            e,
            Error::InvalidConfig { .. } | Error::InvalidName { .. } | Error::InvalidArgument { .. }
        );
        Failure {
            usage,
            message: e.to_string(),
            hint: hint.map(str::to_owned),
            details,
            status: None,
        }
    }
}

impl From<mongodb::error::Error> for Failure {
    fn from(e: mongodb::error::Error) -> Self {
        Failure::error(e.to_string())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version`, or a usage mistake without `--json`: as clap prints them.
        Err(e) if !e.use_stderr() || !std::env::args_os().any(|a| a == "--json") => e.exit(),
        Err(e) => return Failure::of_parser(&e).report(true),
    };
    let json = cli.json;
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(json),
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let Some(uri) = cli.uri.as_deref() else {
        return Err(
            Failure::usage("no deployment: give `--uri mongodb://…` or set MONGODB_URI")
                .hint("mongo-sequence --uri mongodb://localhost:27017 list DB"),
        );
    };
    let client = Client::with_uri_str(uri)
        .await
        .map_err(|e| Failure::usage(format!("`--uri` is not a usable connection string: {e}")))?;
    let out = Output { json: cli.json };
    let counters = cli.counters.as_str();
    match cli.command {
        Command::List {
            db,
            name,
            limits,
            shape,
        } => {
            let db = client.database(&db);
            list(&db, counters, name.as_deref(), &limits, &shape, &out).await
        }
        Command::Show {
            db,
            counter,
            limits,
        } => show(&client.database(&db), counters, &counter, &limits, &out).await,
        Command::Next(args) => next(&client, counters, &args, &out).await,
        Command::SetNext {
            db,
            counter,
            value,
            limits,
            force,
            dry_run,
        } => {
            let db = client.database(&db);
            let change = Change { force, dry_run };
            set_next(&db, counters, &counter, &limits, value, change, &out).await
        }
        Command::Delete {
            db,
            counter,
            force,
            dry_run,
        } => {
            let db = client.database(&db);
            let change = Change { force, dry_run };
            delete(&db, counters, &counter, change, &out).await
        }
        Command::Sync(args) => sync(&client, counters, &args, &out).await,
        Command::Check(args) => check(&client, &args, &out).await,
        Command::Repair {
            claims,
            prune,
            dry_run,
        } => repair(&client, &claims, prune, dry_run, &out).await,
        Command::PurgeBefore {
            db,
            name,
            date,
            prefix,
            tz,
            dry_run,
        } => {
            let mut options = SequenceOptions::builder(&name)
                .counters(counters)
                .prefix(prefix);
            if let Some(tz) = tz {
                options = options.tz(tz);
            }
            let seq = Sequence::new(&client.database(&db), options.build())?;
            let n = if dry_run {
                seq.count_periods_before(date).await?
            } else {
                seq.purge_periods_before(date).await?
            };
            let verb = if dry_run { "would delete" } else { "deleted" };
            out.print(
                json!({ "name": name, "before": date.to_string(), "counters": n, "dry_run": dry_run }),
                || format!("{verb} {n} counter(s) of `{name}` before the period of {date}"),
            );
            Ok(())
        }
    }
}

/// `--force` and `--dry-run` of a write.
#[derive(Clone, Copy)]
struct Change {
    force: bool,
    dry_run: bool,
}

/// How results are printed.
struct Output {
    json: bool,
}

impl Output {
    fn print(&self, json: Value, text: impl FnOnce() -> String) {
        if self.json {
            println!("{json}");
        } else {
            println!("{}", text());
        }
    }

    /// A warning on stderr; with `--json` it is a field of the printed object instead.
    fn warn(&self, warning: &str) {
        if !self.json {
            eprintln!("warning: {warning}");
        }
    }
}

/// What a process that holds ranges of a changed counter does.
fn ranges_held_warning(name: &str) -> String {
    format!(
        "running processes keep the ranges of `{name}` they already hold and issue them until \
         they run out; restart them (or call `Sequence::release`) for the change to apply \
         everywhere"
    )
}

/// The integer a BSON number holds exactly.
fn integer(value: Option<&Bson>) -> Option<i64> {
    match value? {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 => Some(*v as i64),
        _ => None,
    }
}

/// The slice `lo..=hi` a shard's counter document holds.
fn slice_of(doc: &Document) -> Option<Bounds> {
    Bounds::new(integer(doc.get("lo"))?, integer(doc.get("hi"))?).ok()
}

/// The values of a counter: of a shard, the slice its document holds; else `limits`.
fn bounds_of(doc: &Document, counter: &StoredCounter, limits: Bounds) -> Bounds {
    counter.shard.and_then(|_| slice_of(doc)).unwrap_or(limits)
}

/// The room left after `last` before `bounds.max`, and the share of `bounds` used.
fn room(last: i64, bounds: Bounds) -> (u64, f64) {
    let (start, max) = (i128::from(bounds.start), i128::from(bounds.max));
    let last = i128::from(last).clamp(start - 1, max);
    let left = u64::try_from(max - last).unwrap_or(u64::MAX);
    // Both as f64: the share, not the exact count, is what is wanted.
    let used = (last - start + 1) as f64 / (max - start + 1) as f64;
    (left, used)
}

/// A share as a percentage that is 0% or 100% only when it is exactly that.
fn percent(share: f64) -> String {
    let text = format!("{:.2}%", share * 100.0);
    match text.as_str() {
        "0.00%" if share > 0.0 => "<0.01%".to_owned(),
        "100.00%" if share < 1.0 => ">99.99%".to_owned(),
        _ => text,
    }
}

/// Why a counter cannot be read, with the field that may hold it when `field` is missing.
fn unreadable(doc: &Document, field: &str, why: &str) -> (String, Option<String>) {
    let candidate = doc
        .iter()
        .filter(|(k, _)| !["_id", "id", "reference_value", "lo", "hi"].contains(&k.as_str()))
        .find(|(_, v)| integer(Some(v)).is_some())
        .map(|(k, _)| k);
    let hint = match candidate {
        Some(k) if !doc.contains_key(field) => Some(format!(
            "the counter may be in `{k}`: give --field {k} (and --stores next_free if it holds \
             the next value)"
        )),
        _ => None,
    };
    (why.to_owned(), hint)
}

const COLUMNS: [&str; 9] = [
    "name",
    "period",
    "scope",
    "shard",
    "layout",
    "last issued",
    "max",
    "left",
    "used",
];

/// A counter document as a row: name, period, scope, shard, layout, last issued, and the room
/// left before the max of `limits` (of a shard: its `hi`).
fn row(doc: &Document, c: &StoredCounter, shape: &Shape, limits: Bounds) -> (Value, Vec<String>) {
    let scope = c.scope.as_ref().map(|s| Bson::Document(s.clone()));
    let bounds = bounds_of(doc, c, limits);
    let layout = if c.mongoose { "mongoose" } else { "default" };
    let (last, room_left, used, cells) = match &c.last {
        Ok(v) => {
            let (left, used) = room(*v, bounds);
            let cells = [v.to_string(), left.to_string(), percent(used)];
            (json!(v), json!(left), json!(used), cells)
        }
        Err(why) => {
            let (why, hint) = unreadable(doc, shape.field(), why);
            let text = match &hint {
                Some(hint) => format!("corrupt: {why} ({hint})"),
                None => format!("corrupt: {why}"),
            };
            let last = json!({ "error": why, "hint": hint });
            (
                last,
                Value::Null,
                Value::Null,
                [text, "-".into(), "-".into()],
            )
        }
    };
    let json = json!({
        "name": c.name,
        "period": c.period,
        "scope": scope.clone().map(Bson::into_relaxed_extjson),
        "shard": c.shard,
        "layout": layout,
        "last_issued": last,
        "start": bounds.start,
        "max": bounds.max,
        "room_left": room_left,
        "used": used,
    });
    let [last, left, used] = cells;
    let cells = vec![
        c.name.clone(),
        c.period.clone().unwrap_or_default(),
        scope.map(|s| s.to_string()).unwrap_or_default(),
        c.shard.map(|s| s.to_string()).unwrap_or_default(),
        layout.to_owned(),
        last,
        bounds.max.to_string(),
        left,
        used,
    ];
    (json, cells)
}

fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_BORDERS_ONLY_CONDENSED);
    table.set_header(header.to_vec());
    for row in rows {
        table.add_row(row);
    }
    table.to_string()
}

/// Whether `name` matches `pattern`, where `*` stands for any text and `?` for one character.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in `name` its match ends for now.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    star = Some((si, sj + 1));
                    i = si + 1;
                    j = sj + 1;
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The counter documents `filter` selects, decoded, in the order of name, period and shard.
async fn find(
    coll: &Collection<Document>,
    filter: Document,
    shape: &Shape,
) -> Result<Vec<(Document, StoredCounter)>, Failure> {
    let docs: Vec<Document> = coll.find(filter).await?.try_collect().await?;
    let mut found: Vec<(Document, StoredCounter)> = docs
        .into_iter()
        .filter_map(|d| shape.decode(&d).map(|c| (d, c)))
        .collect();
    found.sort_by(|(_, a), (_, b)| {
        (&a.name, &a.period, a.shard).cmp(&(&b.name, &b.period, b.shard))
    });
    Ok(found)
}

fn rows(found: &[(Document, StoredCounter)], shape: &Shape, limits: Bounds) -> (Value, String) {
    let (json, rows): (Vec<Value>, Vec<Vec<String>>) = found
        .iter()
        .map(|(doc, c)| row(doc, c, shape, limits))
        .unzip();
    (Value::Array(json), table(&COLUMNS, rows))
}

async fn list(
    db: &Database,
    counters: &str,
    name: Option<&str>,
    limits: &Limits,
    shape: &Shape,
    out: &Output,
) -> Result<(), Failure> {
    let bounds = limits.bounds(name.unwrap_or("list"))?;
    let mut found = find(&db.collection(counters), doc! {}, shape).await?;
    if let Some(pattern) = name {
        found.retain(|(_, c)| matches(pattern, &c.name));
    }
    let (json, text) = rows(&found, shape, bounds);
    out.print(json, || text);
    Ok(())
}

/// The key of the counter `args` names, and the store of its counters collection.
fn key(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
) -> Result<(CounterKey, MongoStore), Failure> {
    let key = match args.shard {
        Some(_) if args.period.is_some() || !args.scope.is_empty() => {
            return Err(Failure::usage(
                "a shard's counter has no period and no scope: give `--shard` alone",
            ))
        }
        Some(shard) => CounterKey::composite(doc! { "seq": &args.name, "shard": shard as i32 }),
        None => {
            let scope = Scope::from_values(args.scope.iter().cloned());
            CounterKey::of(args.name.clone(), args.period.as_deref(), Some(&scope))
        }
    };
    let mut options = SequenceOptions::builder(args.name.clone())
        .counters(counters)
        .write_concern(Some(WriteConcern::majority()));
    if args.mongoose {
        options = options.layout(Layout::Mongoose);
    }
    if let Some(field) = &args.shape.field {
        options = options.field(field);
    }
    if let Some(stores) = args.shape.stores {
        options = options.stores(stores);
    }
    Ok((key, MongoStore::new(db, &options.build())?))
}

/// The counter document of `key`, or the error that it does not exist.
async fn find_counter(
    db: &Database,
    counters: &str,
    key: &CounterKey,
    store: &MongoStore,
) -> Result<Document, Failure> {
    let found = db
        .collection::<Document>(counters)
        .find_one(store.filter(key))
        .await?;
    found.ok_or_else(|| {
        Failure::error(format!(
            "counter `{key}` does not exist in `{}.{counters}`",
            db.name()
        ))
        .hint(format!(
            "`mongo-sequence list {}` shows the counters there",
            db.name()
        ))
    })
}

async fn show(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    limits: &Limits,
    out: &Output,
) -> Result<(), Failure> {
    let bounds = limits.bounds(&args.name)?;
    let (key, store) = key(db, counters, args)?;
    let doc = find_counter(db, counters, &key, &store).await?;
    let Some(counter) = args.shape.decode(&doc) else {
        return Err(Failure::error(format!(
            "the document of `{key}` in `{}.{counters}` is not a counter: {doc}",
            db.name()
        )));
    };
    let (json, cells) = row(&doc, &counter, &args.shape, bounds);
    out.print(json, || table(&COLUMNS, vec![cells]));
    Ok(())
}

async fn next(
    client: &Client,
    counters: &str,
    args: &NextArgs,
    out: &Output,
) -> Result<(), Failure> {
    let db = client.database(&args.db);
    let fields = args.scope.iter().map(|(field, _)| field.clone());
    let options = args
        .sequence
        .options(
            &args.name,
            counters,
            args.shape.field.as_deref(),
            args.shape.stores,
        )
        .scope(fields)
        .build();
    let mut seq = Sequence::new(&db, options)?;
    if !args.scope.is_empty() {
        seq = seq.in_scope(Scope::from_values(args.scope.iter().cloned()))?;
    }
    // IDs with a prefix or zero-padding are text, as a `String` ID field holds them.
    let ids: Vec<Value> = if args.sequence.prefix.is_some() || args.sequence.width.is_some() {
        let ids: Vec<String> = seq.reserve_ids(args.n).await?;
        ids.into_iter().map(Value::from).collect()
    } else {
        let range = seq.reserve(args.n).await?;
        (range.first()..=range.last()).map(Value::from).collect()
    };
    out.print(json!({ "name": args.name, "ids": ids }), || {
        let lines: Vec<String> = ids
            .iter()
            .map(|id| match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        lines.join("\n")
    });
    Ok(())
}

async fn set_next(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    limits: &Limits,
    value: i64,
    change: Change,
    out: &Output,
) -> Result<(), Failure> {
    let (mut key, store) = key(db, counters, args)?;
    let mut bounds = limits.bounds(&args.name)?;
    let mut what = "start..=max";
    if args.shard.is_some() {
        // The shard's slice is what its document holds: the ranges strategy checks it.
        let doc = find_counter(db, counters, &key, &store).await?;
        bounds = slice_of(&doc).ok_or_else(|| {
            Failure::error(format!(
                "the counter document of `{key}` holds no slice `lo..=hi`: {doc}"
            ))
        })?;
        let fixed: Document = ["lo", "hi"]
            .into_iter()
            .filter_map(|f| doc.get(f).map(|v| (f.to_owned(), v.clone())))
            .collect();
        key = key.with_fields(fixed);
        what = "the shard's slice lo..=hi";
    }
    if value < bounds.start || value > bounds.max {
        let hint = if args.shard.is_some() {
            "give a value in the shard's slice".to_owned()
        } else {
            "give a value in that range, or the counter's own --start and --max".to_owned()
        };
        return Err(Failure::usage(format!(
            "{value} is outside {what} of `{key}` ({}..={})",
            bounds.start, bounds.max
        ))
        .hint(hint));
    }
    // The stored value is read whatever it is, so that a counter beyond the bounds given can
    // still be moved.
    let any = Bounds::new(i64::MIN + 1, i64::MAX)?;
    let old = store.last_issued(&key, any, None).await?;
    let last = value.checked_sub(1).ok_or_else(|| {
        Failure::usage(format!(
            "{value} has no value before it; give a larger VALUE"
        ))
    })?;
    if let Some(current) = old.filter(|&current| current > last && !change.force) {
        return Err(Error::WouldMoveBackwards {
            counter: key.to_string(),
            current,
            requested: value,
        }
        .into());
    }
    if !change.dry_run {
        store
            .set_last_issued(&key, last, change.force, any, None)
            .await?;
    }
    let warning = ranges_held_warning(&args.name);
    let verb = if change.dry_run {
        "would move"
    } else {
        "moved"
    };
    out.print(
        json!({
            "counter": key.to_string(),
            "old": old,
            "new": last,
            "next": value,
            "dry_run": change.dry_run,
            "warning": warning,
        }),
        || {
            let old = old.map_or_else(|| "nothing (new counter)".to_owned(), |o| o.to_string());
            format!("{verb} `{key}` from last issued {old} to {last}: the next value is {value}")
        },
    );
    out.warn(&warning);
    Ok(())
}

/// The filter of the counter documents `delete` deletes: every counter of the sequence, or the
/// one of the period, scope or shard given.
fn delete_filter(args: &CounterArgs) -> Result<Document, Failure> {
    let scope = (!args.scope.is_empty()).then(|| Scope::from_values(args.scope.iter().cloned()));
    if args.shard.is_some() && (args.period.is_some() || scope.is_some()) {
        return Err(Failure::usage(
            "a shard's counter has no period and no scope: give `--shard` alone",
        ));
    }
    if args.mongoose {
        if args.period.is_some() {
            return Err(Failure::usage(
                "mongoose-sequence's layout has no periods: `--period` does not apply",
            ));
        }
        let mut filter = doc! { "id": &args.name };
        if let Some(scope) = &scope {
            filter.insert("reference_value", scope.document());
        }
        if let Some(shard) = args.shard {
            filter.insert("reference_value", doc! { "shard": shard as i32 });
        }
        return Ok(filter);
    }
    let mut filter = doc! { "_id.seq": &args.name };
    if let Some(period) = &args.period {
        filter.insert("_id.period", period);
    }
    if let Some(scope) = &scope {
        filter.insert("_id.scope", scope.key_document());
    }
    if let Some(shard) = args.shard {
        filter.insert("_id.shard", shard as i32);
    }
    if args.period.is_none() && scope.is_none() && args.shard.is_none() {
        filter = doc! { "$or": [{ "_id": &args.name }, filter] };
    }
    Ok(filter)
}

async fn delete(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    change: Change,
    out: &Output,
) -> Result<(), Failure> {
    let filter = delete_filter(args)?;
    let options = CollectionOptions::builder()
        .write_concern(WriteConcern::majority())
        .build();
    let coll = db.collection_with_options::<Document>(counters, options);
    let found = find(&coll, filter.clone(), &args.shape).await?;
    let place = format!("{}.{counters}", db.name());
    let name = &args.name;
    if found.is_empty() {
        return Err(
            Failure::error(format!("no counter of `{name}` to delete in `{place}`")).hint(format!(
                "`mongo-sequence list {} --name '{name}*'` shows the counters there",
                db.name()
            )),
        );
    }
    if !change.force && !change.dry_run {
        return Err(Failure::usage(format!(
            "refusing to delete {} counter(s) of `{name}` in `{place}` without --force",
            found.len()
        ))
        .hint(
            "--dry-run lists them; --force deletes them, and their values start again at `start`",
        ));
    }
    let deleted = if change.dry_run {
        found.len() as u64
    } else {
        coll.delete_many(filter).await?.deleted_count
    };
    let bounds = Limits {
        start: None,
        max: None,
    }
    .bounds(name)?;
    let (json, text) = rows(&found, &args.shape, bounds);
    let warning = ranges_held_warning(name);
    let verb = if change.dry_run {
        "would delete"
    } else {
        "deleted"
    };
    out.print(
        json!({
            "name": name,
            "deleted": deleted,
            "dry_run": change.dry_run,
            "counters": json,
            "warning": warning,
        }),
        || format!("{text}\n{verb} {deleted} counter(s) of `{name}` in `{place}`"),
    );
    if !change.dry_run {
        out.warn(&warning);
    }
    Ok(())
}

async fn sync(
    client: &Client,
    counters: &str,
    args: &SyncArgs,
    out: &Output,
) -> Result<(), Failure> {
    let Some((db, coll)) = args.target.split_once('.') else {
        return Err(
            Failure::usage(format!("`{}` is not `DB.COLLECTION`", args.target))
                .hint("name the collection with its database: `shop.orders`"),
        );
    };
    let db = client.database(db);
    let options = args
        .sequence
        .options(
            &args.name,
            counters,
            args.counter_field.as_deref(),
            args.stores,
        )
        .scope(args.scope.iter().cloned());
    let seq = Sequence::new(&db, options.build())?;
    let report = seq
        .sync_counters(&db.collection::<Document>(coll), &args.field)
        .text(args.text)
        .dry_run(args.dry_run)
        .await?;
    out.print(report_json(&report), || report_text(&report));
    Ok(())
}

fn report_json(report: &SyncReport) -> Value {
    let counters: Vec<Value> = report
        .counters
        .iter()
        .map(|c| {
            json!({
                "counter": c.key.to_string(),
                "old": c.old,
                "new": c.new,
                "stored": c.stored,
                "ids": c.ids,
                "moved": c.moved(),
            })
        })
        .collect();
    json!({ "counters": counters, "skipped": report.skipped, "dry_run": report.dry_run })
}

fn report_text(report: &SyncReport) -> String {
    let rows = report
        .counters
        .iter()
        .map(|c| {
            vec![
                c.key.to_string(),
                c.old.map(|o| o.to_string()).unwrap_or_else(|| "-".into()),
                c.new.to_string(),
                c.stored.to_string(),
                c.ids.to_string(),
                if c.moved() { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let moved = if report.dry_run {
        "would move"
    } else {
        "moved"
    };
    format!(
        "{}\n{} counter(s), {} {moved}; {} stored ID(s) skipped (another type, or not of this sequence's pattern)",
        table(&["counter", "old", "new", "stored max", "IDs", moved], rows),
        report.counters.len(),
        report.counters.iter().filter(|c| c.moved()).count(),
        report.skipped
    )
}

/// The exit status of `check` when it finds problems.
const PROBLEMS_FOUND: u8 = 3;

async fn check(client: &Client, args: &ClaimsArgs, out: &Output) -> Result<(), Failure> {
    let claims = args.claims(client)?;
    let report = claims.check().limit(args.limit).await?;
    let json = serde_json::to_value(&report).map_err(|e| Failure::error(e.to_string()))?;
    out.print(json, || {
        let mut text = problems_text(&report);
        text.push_str(&summary(&report, args.limit));
        text
    });
    if report.is_clean() {
        Ok(())
    } else {
        Err(Failure {
            status: Some(PROBLEMS_FOUND),
            ..Failure::error("problems found")
        })
    }
}

async fn repair(
    client: &Client,
    args: &ClaimsArgs,
    prune: bool,
    dry_run: bool,
    out: &Output,
) -> Result<(), Failure> {
    let claims = args.claims(client)?;
    let report = claims
        .repair()
        .prune(prune)
        .dry_run(dry_run)
        .limit(args.limit)
        .await?;
    let json = serde_json::to_value(&report).map_err(|e| Failure::error(e.to_string()))?;
    out.print(json, || repair_text(&report, args.limit));
    Ok(())
}

/// A BSON value as the tables show it.
fn cell(value: &Bson) -> String {
    match value {
        Bson::String(s) => s.clone(),
        Bson::ObjectId(oid) => oid.to_hex(),
        other => other.to_string(),
    }
}

/// The tables of the problems `report` lists, each with its heading.
fn problems_text(report: &ClaimsReport) -> String {
    let mut text = String::new();
    if report.unclaimed_count > 0 {
        let rows = report
            .unclaimed
            .iter()
            .map(|u| {
                vec![
                    cell(&u.id),
                    cell(&u.doc),
                    u.claimed_for.as_ref().map(cell).unwrap_or_default(),
                ]
            })
            .collect();
        text.push_str(&format!(
            "documents without a claim ({}):\n{}\n",
            report.unclaimed_count,
            table(&["ID", "document", "the claim names"], rows)
        ));
    }
    if report.orphan_count > 0 {
        let rows = report
            .orphans
            .iter()
            .map(|o| {
                let holds = match &o.holds {
                    None => "gone".to_owned(),
                    Some(id) => format!("holds {}", cell(id)),
                };
                vec![cell(&o.id), cell(&o.doc), holds]
            })
            .collect();
        text.push_str(&format!(
            "claims without a document ({}):\n{}\n",
            report.orphan_count,
            table(&["ID", "document", "the document"], rows)
        ));
    }
    if report.shared_count > 0 {
        let rows = report
            .shared
            .iter()
            .map(|s| {
                let docs: Vec<String> = s.docs.iter().map(cell).collect();
                vec![cell(&s.id), s.count.to_string(), docs.join(", ")]
            })
            .collect();
        text.push_str(&format!(
            "IDs held by more than one document ({}):\n{}\n",
            report.shared_count,
            table(&["ID", "documents", "their _id"], rows)
        ));
    }
    text
}

/// One line: what `report` counted, and how many of each it lists.
fn summary(report: &ClaimsReport, limit: usize) -> String {
    let listed = if [
        report.unclaimed_count,
        report.orphan_count,
        report.shared_count,
    ]
    .iter()
    .any(|&n| n > limit as u64)
    {
        format!(" (at most {limit} of each listed: --limit lists more)")
    } else {
        String::new()
    };
    format!(
        "`{}` against `{}`: {} document(s) without a claim, {} claim(s) without a document, {} \
         ID(s) held by more than one document, {} document(s) without the ID field{listed}",
        report.collection,
        report.proxy,
        report.unclaimed_count,
        report.orphan_count,
        report.shared_count,
        report.without_id,
    )
}

fn repair_text(report: &RepairReport, limit: usize) -> String {
    let found = &report.found;
    let (claim, prune) = if report.dry_run {
        ("would claim", "would delete")
    } else {
        ("claimed", "deleted")
    };
    let mut text = problems_text(found);
    text.push_str(&format!(
        "{claim} {} document(s) in `{}`",
        report.claimed, found.proxy
    ));
    if report.prune {
        text.push_str(&format!(
            "; {prune} {} claim(s) without a document",
            report.pruned
        ));
    } else if found.orphan_count > 0 {
        text.push_str(&format!(
            "; {} claim(s) without a document left (--prune deletes them)",
            found.orphan_count
        ));
    }
    if report.raced > 0 {
        text.push_str(&format!(
            "; {} document(s) left unclaimed: another writer claimed their ID meanwhile (check again)",
            report.raced
        ));
    }
    if found.orphans.len() < found.orphan_count as usize
        || found.unclaimed.len() < found.unclaimed_count as usize
    {
        text.push_str(&format!(" (at most {limit} of each listed)"));
    }
    text
}
