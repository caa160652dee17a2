//! The `_metrics` rows (built with `--features metrics`): `insert_with_id` and `next_id` with
//! the series of the sequence registered with a Prometheus recorder.

use mongo_sequence::SequentialId;

use super::COLL;
use crate::measure::{BoxFuture, Measured, Result, Run};

/// `scenario` (`insert_with_id` or `next_id` of `M`), with the series of the sequence registered
/// with a recorder.
pub fn with_recorder<M: SequentialId>(
    run: Run,
    scenario: fn(Run) -> BoxFuture<Result<Measured>>,
) -> BoxFuture<Result<Measured>> {
    recorded::<M>(&run);
    scenario(run)
}

/// Registers the series of `M`'s sequence in the run's (fresh) database with the bench's
/// Prometheus recorder: a sequence registers them, on its first use in the process, with the
/// recorder of that moment, here one set for this thread only. What the run records goes to
/// that recorder, from any thread; the other scenarios' sequences record into none.
fn recorded<M: SequentialId>(run: &Run) {
    static RECORDER: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusRecorder> =
        std::sync::OnceLock::new();
    let recorder = RECORDER
        .get_or_init(|| metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder());
    metrics::with_local_recorder(recorder, || {
        M::sequence(&run.db.collection::<M>(COLL));
    });
}
