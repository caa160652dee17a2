//! The rate curves of the modes against concurrency: processes of 8 tasks each, all on one
//! counter (the multi-process machinery of the scenarios), and tasks in one process (the
//! scenario functions themselves).

use crate::measure::{Measured, Result, Run};
use crate::scenarios::{Fleet, Model};

use super::{docs_of, fresh_db, in_order, progress, Bench, RateRow, Samples};

/// The modes of the rate curves, plain (the baseline) first.
const MODES: &[Model] = &Model::ALL;

/// The process counts of the processes curve.
const PROCESSES: &[usize] = &[1, 2, 4, 8, 16];

/// The tasks of each process in the processes curve.
const TASKS_PER_PROCESS: usize = 8;

/// The task counts of the tasks curve.
const TASKS: &[usize] = &[1, 8, 64, 512, 1024];

/// The fewest calls each task of a run of the rate curves (half a mode's round) makes, unless
/// the run is a smoke run: with the default `--docs`, more documents than that from 128 tasks
/// on. With a handful of calls per task (10,000 documents over 1,024 tasks are 9 each) a run
/// ends with its slowest tasks, and one call that waited for a counter round trip behind the
/// pool's queue (a fifth of a second there) lengthens its task, and so the run, by a ninth:
/// the ratio then measures the run's last calls rather than the rate the mode keeps.
const MIN_CALLS_PER_TASK: u64 = 40;

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
/// then run each mode twice, each run half of the mode's documents into its own collection: the
/// modes in [order](in_order), then in reverse. A mode's round is its two runs together, so
/// that the machine's drift over the round weighs on every mode alike.
async fn measure_point(
    bench: &Bench,
    curve: &str,
    at: &str,
    tasks: usize,
    processes: usize,
) -> Result<Samples> {
    let modes = bench.modes_of(MODES);
    let mut samples = Samples::new(modes.clone());
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
        let mut halves: Vec<Option<Measured>> = modes.iter().map(|_| None).collect();
        for (half, &model) in order.iter().chain(order.iter().rev()).enumerate() {
            let fewest = if bench.quick { 1 } else { MIN_CALLS_PER_TASK };
            let calls = (docs_of(model, bench.docs) / tasks as u64 / 2).max(fewest);
            let offset = half as u64 * calls * tasks as u64;
            let measured = fleet.insert(model, &model.coll(), calls, offset).await?;
            let m = modes.iter().position(|&x| x == model).expect("a mode");
            halves[m] = Some(match halves[m].take() {
                None => measured,
                Some(first) => {
                    let both = first.and(measured)?;
                    progress(at, round, bench.rounds, model, &both);
                    samples.record(model, &both);
                    continue;
                }
            });
        }
        fleet.finish()?;
        db.drop().await?;
    }
    Ok(samples)
}
