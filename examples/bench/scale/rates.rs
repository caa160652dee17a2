//! The rate curves of the modes against concurrency: processes of 8 tasks each, all on one
//! counter (the multi-process machinery of the scenarios), and tasks in one process (the
//! scenario functions themselves).

use crate::measure::{with_server_work, BoxFuture, Measured, Result, Run};
use crate::scenarios::models::{BProxy, B1, B25};
use crate::scenarios::{
    insert_gapless, insert_with_id, plain_insert_one, processes, warm_up, Model,
};

use super::{docs_of, fresh_db, in_order, progress, Bench, RateRow, Samples};

/// The modes of the rate curves, plain (the baseline) first.
const MODES: &[Model] = &Model::ALL;

/// The process counts of the processes curve.
const PROCESSES: &[usize] = &[1, 2, 4, 8, 16];

/// The tasks of each process in the processes curve.
const TASKS_PER_PROCESS: usize = 8;

/// The task counts of the tasks curve.
const TASKS: &[usize] = &[1, 8, 64, 512, 1024];

/// The fewest calls each task of a run of the rate curves makes, unless the run is a smoke
/// run: with the default `--docs`, more documents than that at 512 and 1,024 tasks (every
/// point of the processes curve has 78 calls per task or more). With a handful of calls per
/// task (10,000 documents over 1,024 tasks are 9 each) a run ends with its slowest tasks, and
/// one call that waited for a counter round trip behind the pool's queue (a fifth of a second
/// there) lengthens its task, and so the run, by a ninth: the ratio then measures the run's
/// last calls rather than the rate the mode keeps.
const MIN_CALLS_PER_TASK: u64 = 40;

/// Every mode from 1 to 16 processes at once, 8 tasks each, the documents of a run split over
/// all their tasks.
pub async fn against_processes(bench: &Bench) -> Result<Vec<RateRow>> {
    let mut rows = Vec::new();
    for &count in PROCESSES {
        let tasks = TASKS_PER_PROCESS * count;
        let at = format!("processes {count} x {TASKS_PER_PROCESS} tasks");
        let point = measure_point(bench, "processes", &at, tasks, |run, model| {
            processes(run, model, count)
        })
        .await?;
        rows.extend(point.rows(count as u64, tasks));
    }
    Ok(rows)
}

/// Every mode from 1 to 1024 tasks in this process, the documents of a run split over them,
/// each run after a warm-up of its tasks on its database (as each process of the processes
/// curve).
pub async fn against_tasks(bench: &Bench) -> Result<Vec<RateRow>> {
    let mut rows = Vec::new();
    for &tasks in TASKS {
        let at = format!("tasks {tasks}");
        let point = measure_point(bench, "tasks", &at, tasks, |run, model| {
            Box::pin(async move {
                warm_up(model, &run.db, run.tasks, 0).await?;
                let client = run.db.client().clone();
                with_server_work(&client, in_one_process(model)(run)).await
            })
        })
        .await?;
        rows.extend(point.rows(tasks as u64, tasks));
    }
    Ok(rows)
}

/// The scenario of `model` run by the main bench, in this process alone.
fn in_one_process(model: Model) -> fn(Run) -> BoxFuture<Result<Measured>> {
    match model {
        Model::Plain => plain_insert_one,
        Model::B1 => insert_with_id::<B1>,
        Model::B25 => insert_with_id::<B25>,
        Model::Gapless => insert_gapless,
        Model::Proxy => insert_with_id::<BProxy>,
    }
}

/// The rounds of one point: every mode once per round at `tasks` tasks in all, each run by
/// `start` on a fresh database (dropped after).
async fn measure_point(
    bench: &Bench,
    curve: &str,
    at: &str,
    tasks: usize,
    start: impl Fn(Run, Model) -> BoxFuture<Result<Measured>>,
) -> Result<Samples> {
    let modes = bench.modes_of(MODES);
    let mut samples = Samples::new(modes.clone());
    for round in 0..bench.rounds {
        for model in in_order(&modes, round) {
            let db = fresh_db(&bench.client, curve).await?;
            let fewest = if bench.quick { 1 } else { MIN_CALLS_PER_TASK };
            let calls_per_task = (docs_of(model, bench.docs) / tasks as u64).max(fewest);
            let measured = start(
                Run {
                    db: db.clone(),
                    uri: bench.uri.clone(),
                    tasks,
                    calls_per_task,
                },
                model,
            )
            .await?;
            db.drop().await?;
            progress(at, round, bench.rounds, model, &measured);
            samples.record(model, &measured);
        }
    }
    Ok(samples)
}
