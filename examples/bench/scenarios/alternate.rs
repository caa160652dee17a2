//! Modes alternating in slices of time: every task of every process inserts without a pause,
//! each call in the mode of the slice it starts in, so that the modes share the machine's
//! drift down to the length of a slice.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use mongodb::Database;

use super::processes::Call;
use super::Model;
use crate::measure::{new_histogram, BoxError, Measured, Result};

/// When the slices of a run start, how long each lasts and which mode each belongs to.
#[derive(Clone, Debug)]
pub struct Slices {
    /// The start of the first slice, in nanoseconds since the Unix epoch: the processes of a
    /// run share the clock of one machine.
    pub start_unix_ns: u64,
    pub slice: Duration,
    /// Slices per mode.
    pub per_mode: u32,
    /// The modes, each with its collection, in the order of the first slices.
    pub modes: Vec<(Model, String)>,
}

impl Slices {
    /// Slices of `slice` starting `after` from now, `per_mode` for each of `modes`.
    pub fn after(
        after: Duration,
        slice: Duration,
        per_mode: u32,
        modes: Vec<(Model, String)>,
    ) -> Slices {
        let start = SystemTime::now() + after;
        let start_unix_ns = start
            .duration_since(UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_nanos() as u64;
        Slices {
            start_unix_ns,
            slice,
            per_mode,
            modes,
        }
    }

    /// The mode of slice `k`: the modes in order, then in reverse (`A B B A` for two), again
    /// and again, so that no mode always comes first or runs only after the same one.
    pub fn mode_of(&self, k: u32) -> usize {
        let m = self.modes.len() as u32;
        let p = k % (2 * m);
        (if p < m { p } else { 2 * m - 1 - p }) as usize
    }

    /// Every slice of the run.
    pub fn count(&self) -> u32 {
        self.per_mode * self.modes.len() as u32
    }

    /// When slice `k` starts (`k == count()`: when the last one ends), on this process's clock.
    pub fn start_of(&self, k: u32) -> Instant {
        let start = UNIX_EPOCH + Duration::from_nanos(self.start_unix_ns);
        let (now, system_now) = (Instant::now(), SystemTime::now());
        let first = match start.duration_since(system_now) {
            Ok(until) => now + until,
            Err(past) => now - past.duration(),
        };
        first + self.slice * k
    }

    /// The slices as a worker's input line gives them: `START SLICE PER_MODE MODEL:COLL...`.
    pub fn words(&self) -> String {
        let modes: Vec<String> = self
            .modes
            .iter()
            .map(|(model, coll)| format!("{}:{coll}", model.name()))
            .collect();
        format!(
            "{} {} {} {}",
            self.start_unix_ns,
            self.slice.as_nanos(),
            self.per_mode,
            modes.join(" ")
        )
    }

    /// The slices of a worker's input line, as [`words`](Self::words) wrote them.
    pub fn parse(words: &[&str]) -> Result<Slices> {
        let [start, slice, per_mode, modes @ ..] = words else {
            return Err("expected START SLICE PER_MODE MODEL:COLL...".into());
        };
        let modes = modes
            .iter()
            .map(|m| {
                let (model, coll) = m.split_once(':').ok_or("MODEL:COLL")?;
                Ok((Model::named(model)?, coll.to_owned()))
            })
            .collect::<Result<Vec<_>>>()?;
        if modes.is_empty() {
            return Err("alternate: no modes".into());
        }
        Ok(Slices {
            start_unix_ns: start.parse()?,
            slice: Duration::from_nanos(slice.parse()?),
            per_mode: per_mode.parse()?,
            modes,
        })
    }
}

/// The slices run in `tasks` tasks of this process, the documents numbered from `first`: what
/// each mode measured, in the order of `slices.modes`. A mode's time is the length of its
/// slices; its documents, the calls started in them (the last slice's calls end after it).
pub async fn alternate(
    db: &Database,
    tasks: usize,
    slices: &Slices,
    first: u64,
) -> Result<Vec<Measured>> {
    let calls: Arc<Vec<Call>> = Arc::new(
        slices
            .modes
            .iter()
            .map(|(model, coll)| model.call(db, coll))
            .collect(),
    );
    let start = slices.start_of(0);
    let slice = slices.slice;
    let handles: Vec<_> = (0..tasks as u64)
        .map(|task| {
            let (calls, slices) = (calls.clone(), slices.clone());
            tokio::spawn(async move {
                let mut measured: Vec<(u64, Histogram<u64>)> =
                    calls.iter().map(|_| (0, new_histogram())).collect();
                tokio::time::sleep_until(start.into()).await;
                let mut n = first + (task << 32);
                loop {
                    let k = (start.elapsed().as_nanos() / slice.as_nanos()) as u32;
                    if k >= slices.count() {
                        break;
                    }
                    let m = slices.mode_of(k);
                    let t = Instant::now();
                    calls[m](n).await?;
                    let (ids, latency) = &mut measured[m];
                    *ids += 1;
                    latency.saturating_record(t.elapsed().as_nanos() as u64);
                    n += 1;
                }
                Ok::<_, BoxError>(measured)
            })
        })
        .collect();
    let mut out: Vec<Measured> = (0..slices.modes.len())
        .map(|_| Measured::new(0, slice * slices.per_mode, new_histogram()))
        .collect();
    for handle in handles {
        for (m, (ids, latency)) in handle.await??.into_iter().enumerate() {
            out[m].ids += ids;
            out[m].latency.add(&latency)?;
        }
    }
    Ok(out)
}
