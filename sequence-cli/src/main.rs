//! `mongo-sequence`: the operator's command line of mongo-sequence. It lists and shows the
//! counters of a database, sets a counter, moves counters past the IDs stored in a collection
//! (after an import or a migration), and deletes the counters of old periods. Every write has
//! `--dry-run`; `--json` prints for scripts. Exit status: 0 ok, 1 error, 2 bad usage.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use comfy_table::{presets, Table};
use mongo_sequence_runtime::jiff::civil::Date;
use mongo_sequence_runtime::{
    id::Bounds, id::CounterKey, options::Layout, store::CounterStore, store::MongoStore,
    store::StoredCounter, sync::SyncReport, Error, Scope, Sequence, SequenceOptions,
};
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::WriteConcern;
use mongodb::{Client, Database};
use serde_json::{json, Value};

/// The command line.
#[derive(Parser)]
#[command(
    name = "mongo-sequence",
    version,
    about = "List, show, set, sync and purge the counters of mongo-sequence"
)]
struct Cli {
    /// The MongoDB connection string.
    #[arg(long, env = "MONGODB_URI", global = true, hide_env_values = true)]
    uri: Option<String>,
    /// The collection that holds the counters.
    #[arg(long, default_value = "counters", global = true)]
    counters: String,
    /// Prints JSON for scripts instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists every counter of a database, decoded: name, period, scope, layout, last issued.
    List {
        /// The database.
        db: String,
    },
    /// Shows one counter.
    Show {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
    },
    /// Makes VALUE the next value a counter issues; refuses to move it backwards without
    /// `--force`.
    SetNext {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
        /// The next value to issue.
        value: i64,
        /// Allows moving the counter backwards (only if no document uses the values again).
        #[arg(long)]
        force: bool,
        /// Says what would change, and changes nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Moves every counter of a sequence up to the highest ID stored for it in a collection
    /// (as `sync_counters` does): one per period, scope value or shard; never down.
    Sync(SyncArgs),
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

/// Which counter: a name, and the period and scope values of a counter of a period or scope.
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
    /// The counter is in mongoose-sequence's layout.
    #[arg(long)]
    mongoose: bool,
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
    /// A scope field (repeat for several): one counter per value.
    #[arg(long = "scope")]
    scope: Vec<String>,
    /// The counters are in mongoose-sequence's layout.
    #[arg(long)]
    mongoose: bool,
    /// Says what would move, and moves nothing.
    #[arg(long)]
    dry_run: bool,
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

/// A failure: a usage mistake (exit status 2) or an error (exit status 1).
enum Failure {
    Usage(String),
    Error(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e.to_string())
    }
}

impl From<mongodb::error::Error> for Failure {
    fn from(e: mongodb::error::Error) -> Self {
        Failure::Error(e.to_string())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Error(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let Some(uri) = cli.uri.as_deref() else {
        return Err(Failure::Usage(
            "no deployment: give `--uri mongodb://…` or set MONGODB_URI".into(),
        ));
    };
    let client = Client::with_uri_str(uri)
        .await
        .map_err(|e| Failure::Usage(format!("`--uri` is not a usable connection string: {e}")))?;
    let out = Output { json: cli.json };
    match cli.command {
        Command::List { db } => list(&client.database(&db), &cli.counters, &out).await,
        Command::Show { db, counter } => {
            show(&client.database(&db), &cli.counters, &counter, &out).await
        }
        Command::SetNext {
            db,
            counter,
            value,
            force,
            dry_run,
        } => {
            let db = client.database(&db);
            set_next(&db, &cli.counters, &counter, value, force, dry_run, &out).await
        }
        Command::Sync(args) => sync(&client, &cli.counters, &args, &out).await,
        Command::PurgeBefore {
            db,
            name,
            date,
            prefix,
            tz,
            dry_run,
        } => {
            let mut options = SequenceOptions::builder(&name)
                .counters(&cli.counters)
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
}

/// A counter document as a row: name, period, scope, shard, layout, last issued.
fn row(c: &StoredCounter) -> (Value, Vec<String>) {
    let scope = c.scope.as_ref().map(|s| Bson::Document(s.clone()));
    let last = match &c.last {
        Ok(v) => json!(v),
        Err(why) => json!({ "error": why }),
    };
    let layout = if c.mongoose { "mongoose" } else { "default" };
    let json = json!({
        "name": c.name,
        "period": c.period,
        "scope": scope.clone().map(Bson::into_relaxed_extjson),
        "shard": c.shard,
        "layout": layout,
        "last_issued": last,
    });
    let cells = vec![
        c.name.clone(),
        c.period.clone().unwrap_or_default(),
        scope.map(|s| s.to_string()).unwrap_or_default(),
        c.shard.map(|s| s.to_string()).unwrap_or_default(),
        layout.to_owned(),
        match &c.last {
            Ok(v) => v.to_string(),
            Err(why) => format!("corrupt: {why}"),
        },
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

async fn list(db: &Database, counters: &str, out: &Output) -> Result<(), Failure> {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = db
        .collection::<Document>(counters)
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    let mut found: Vec<StoredCounter> = docs.iter().filter_map(StoredCounter::decode).collect();
    found.sort_by(|a, b| (&a.name, &a.period, a.shard).cmp(&(&b.name, &b.period, b.shard)));
    let (json, rows): (Vec<Value>, Vec<Vec<String>>) = found.iter().map(row).unzip();
    out.print(Value::Array(json), || {
        table(
            &["name", "period", "scope", "shard", "layout", "last issued"],
            rows,
        )
    });
    Ok(())
}

/// The key of the counter `args` names, and the store of its counters collection.
fn key(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
) -> Result<(CounterKey, MongoStore), Failure> {
    let scope = Scope::from_values(args.scope.iter().cloned());
    let key = CounterKey::of(args.name.clone(), args.period.as_deref(), Some(&scope));
    let mut options = SequenceOptions::builder(args.name.clone())
        .counters(counters)
        .write_concern(Some(WriteConcern::majority()));
    if args.mongoose {
        options = options.layout(Layout::Mongoose);
    }
    Ok((key, MongoStore::new(db, &options.build())?))
}

async fn show(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    out: &Output,
) -> Result<(), Failure> {
    let (key, store) = key(db, counters, args)?;
    let found = db
        .collection::<Document>(counters)
        .find_one(store.filter(&key))
        .await?;
    let Some(counter) = found.as_ref().and_then(StoredCounter::decode) else {
        return Err(Failure::Error(format!(
            "counter `{key}` does not exist in `{}.{counters}`; `list` shows the counters there",
            db.name()
        )));
    };
    let (json, cells) = row(&counter);
    out.print(json, || {
        table(
            &["name", "period", "scope", "shard", "layout", "last issued"],
            vec![cells],
        )
    });
    Ok(())
}

async fn set_next(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    value: i64,
    force: bool,
    dry_run: bool,
    out: &Output,
) -> Result<(), Failure> {
    let (key, store) = key(db, counters, args)?;
    // The counter's own `start` and `max` are not known here: any integer is accepted.
    let bounds = Bounds::new(i64::MIN + 1, i64::MAX)?;
    let old = store.last_issued(&key, bounds, None).await?;
    let last = value.checked_sub(1).ok_or_else(|| {
        Failure::Usage(format!(
            "{value} has no value before it; give a larger VALUE"
        ))
    })?;
    if let Some(current) = old.filter(|&current| current > last && !force) {
        return Err(Error::WouldMoveBackwards {
            counter: key.to_string(),
            current,
            requested: value,
        }
        .into());
    }
    if !dry_run {
        store
            .set_last_issued(&key, last, force, bounds, None)
            .await?;
    }
    let verb = if dry_run { "would move" } else { "moved" };
    out.print(
        json!({ "counter": key.to_string(), "old": old, "new": last, "dry_run": dry_run }),
        || {
            let old = old.map_or_else(|| "nothing (new counter)".to_owned(), |o| o.to_string());
            format!("{verb} `{key}` from last issued {old} to {last}: the next value is {value}")
        },
    );
    Ok(())
}

async fn sync(
    client: &Client,
    counters: &str,
    args: &SyncArgs,
    out: &Output,
) -> Result<(), Failure> {
    let Some((db, coll)) = args.target.split_once('.') else {
        return Err(Failure::Usage(format!(
            "`{}` is not `DB.COLLECTION`",
            args.target
        )));
    };
    let db = client.database(db);
    let mut options = SequenceOptions::builder(&args.name)
        .counters(counters)
        .scope(args.scope.iter().cloned());
    if let Some(v) = &args.prefix {
        options = options.prefix(v);
    }
    if let Some(v) = args.width {
        options = options.width(v);
    }
    if let Some(v) = &args.tz {
        options = options.tz(v);
    }
    if let Some(v) = args.digits {
        options = options.digits(v);
    }
    if let Some(v) = args.start {
        options = options.start(v);
    }
    if let Some(v) = args.max {
        options = options.max(v);
    }
    if let Some(v) = args.shards {
        options = options.ranges(v);
    }
    if args.mongoose {
        options = options.layout(Layout::Mongoose);
    }
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
