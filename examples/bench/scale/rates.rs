//! The rate curves of the modes against concurrency: processes of 8 tasks each, all on one
//! counter, and tasks in one process, both run by a [`Fleet`] (of one process for the tasks
//! curve) whose modes alternate in slices of time.
//!
//! A point's ratio compares modes that ran interleaved: within a round, the machine's drift
//! (a mode's server CPU per document moved by up to 30% between runs a minute apart) falls on
//! every mode alike, down to the length of a slice, where runs of their own one after the
//! other took it into their ratio. A task changes mode when it starts a call, so a slice has
//! no drain and no ramp: no task waits for the slowest one before the next mode starts.

use std::time::Duration;

use crate::measure::{Result, Run};
use crate::scenarios::{Fleet, Model, Slices};

use super::{fresh_db, in_order, progress, Bench, RateRow, Samples};

/// The modes of the rate curves, plain (the baseline) first.
const MODES: &[Model] = &Model::ALL;

/// The process counts of the processes curve.
const PROCESSES: &[usize] = &[1, 2, 4, 8, 16];

/// The tasks of each process in the processes curve.
const TASKS_PER_PROCESS: usize = 8;

/// The task counts of the tasks curve.
const TASKS: &[usize] = &[1, 8, 64, 512, 1024];

/// The shortest slice of a run, and the slice's length per task in all, if longer: 25 times
/// the latency of a call of plain inserts at this machine's 3,500 inserts per second or so, so
/// that the calls that straddle the change of mode at a slice's start (every task's first call
/// of the slice starts when its last call of the slice before ends) weigh on a slice's rate
/// by a few percent of the two modes' difference at most.
const SLICE_MIN: Duration = Duration::from_millis(250);
const SLICE_PER_TASK: Duration = Duration::from_millis(8);

/// The least time each mode runs per round, in slices of [`SLICE_MIN`] or longer: at every
/// point of the curves, a mode's round has two slices or more, one in each half of the round.
const MODE_TIME: Duration = Duration::from_secs(4);

/// How long before the first slice the processes are told about the slices: to read their
/// input and start their tasks.
const LEAD: Duration = Duration::from_millis(300);

/// Every mode from 1 to 16 processes at once, 8 tasks each, the documents of a run split over
/// all their tasks.
pub async fn against_processes(bench: &Bench) -> Result<Vec<RateRow>> {
    let mut rows = Vec::new();
    for &count in PROCESSES {
        let tasks = TASKS_PER_PROCESS * count;
        let at = format!("processes {count} x {TASKS_PER_PROCESS} tasks");
        let point = measure_point(bench, "processes", &at, tasks, count).await?;
        rows.extend(point.rows(count as u64, tasks));
    }
    Ok(rows)
}

/// Every mode from 1 to 1024 tasks in this process, the documents of a run split over them.
pub async fn against_tasks(bench: &Bench) -> Result<Vec<RateRow>> {
    let mut rows = Vec::new();
    for &tasks in TASKS {
        let at = format!("tasks {tasks}");
        let point = measure_point(bench, "tasks", &at, tasks, 1).await?;
        rows.extend(point.rows(tasks as u64, tasks));
    }
    Ok(rows)
}

/// The rounds of one point: `tasks` tasks in all over `processes` processes, which in each
/// round, on a fresh database (dropped after), [warm up](Fleet::warm_up) for every mode and
/// then [alternate](Fleet::alternate) between the modes in slices, each mode into a
/// collection of its own, the modes' order reversed from round to round.
async fn measure_point(
    bench: &Bench,
    curve: &str,
    at: &str,
    tasks: usize,
    processes: usize,
) -> Result<Samples> {
    let modes = bench.modes_of(MODES);
    let mut samples = Samples::new(modes.clone());
    let (slice, per_mode) = slicing(bench.quick, tasks);
    for round in 0..bench.rounds {
        let db = fresh_db(&bench.client, curve).await?;
        let run = Run {
            db: db.clone(),
            uri: bench.uri.clone(),
            tasks,
            calls_per_task: 0,
        };
        let mut fleet = Fleet::start(&run, processes).await?;
        for &model in &modes {
            db.create_collection(model.coll()).await?;
            fleet.warm_up(model, &model.coll()).await?;
        }
        let order = in_order(&modes, round);
        let with_colls = order.iter().map(|&m| (m, m.coll())).collect();
        let slices = Slices::after(LEAD, slice, per_mode, with_colls);
        for (&model, measured) in order.iter().zip(fleet.alternate(&slices).await?) {
            progress(at, round, bench.rounds, model, &measured);
            samples.record(model, &measured);
        }
        fleet.finish()?;
        db.drop().await?;
    }
    Ok(samples)
}

/// The slice of a run at `tasks` tasks, and the slices of each mode per round: an even number,
/// so that the modes' order and its reverse alternate whole.
fn slicing(quick: bool, tasks: usize) -> (Duration, u32) {
    if quick {
        return (Duration::from_millis(50), 2);
    }
    let slice = SLICE_MIN.max(SLICE_PER_TASK * tasks as u32);
    let pairs = MODE_TIME.as_nanos().div_ceil(2 * slice.as_nanos()).max(1);
    (slice, 2 * pairs as u32)
}
