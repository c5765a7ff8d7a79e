//! I/O backends, one file each, behind one small interface (fio's `engines/` in spirit).
//!
//! A backend carries out every job's I/O until each job says stop, reading timestamps from
//! the clock it is given and handing completions to the jobs' recorders. It decides only
//! *how* I/O is issued: threads blocking in pread/pwrite ([`sync`]), rings
//! ([`uring`]), nothing at all ([`null`]), or a device model in virtual time
//! ([`virtual_time`]).
//!
//! The same backends issue an open-loop source's I/Os, a trace's: each offers an
//! [`Issuer`] ([`issuer`] picks the target's) that starts one I/O of any kind the moment
//! the source says and hands back completions, each with its own time. One ring setup,
//! one way to build an SQE, one null and one model for generated and replayed I/O.

pub mod null;
pub mod sync;
pub mod uring;
pub mod virtual_time;

use std::collections::BinaryHeap;
use std::fs::File;
use std::sync::Mutex;

use crate::clock::{Clock, MonotonicClock};
use crate::job::Job;
use crate::model::SensorReading;
use crate::op::AnyOp;
use crate::spec::Workload;
use crate::target::{Target, TargetKind};

/// What every backend is given besides the jobs.
pub struct BackendCtx<'a> {
    pub workload: &'a Workload,
    pub clock: &'a dyn Clock,
    /// The opened target for backends that do real I/O.
    pub file: Option<&'a File>,
    /// Notes for the result: how the backend had to carry out this run, in a sentence.
    pub notes: &'a Mutex<Vec<String>>,
    /// Average busy io_uring kernel workers, when the backend handed I/O to them
    /// (`Totals::kernel_workers_busy_avg`).
    pub workers_busy: &'a Mutex<Option<f64>>,
}

impl BackendCtx<'_> {
    /// Add a note once (jobs that meet the same condition say it once).
    pub fn note(&self, text: String) {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        if !notes.contains(&text) {
            notes.push(text);
        }
    }

    /// Record the average number of busy kernel workers (see [`BackendCtx::workers_busy`]).
    pub fn workers_busy(&self, avg: f64) {
        *self.workers_busy.lock().unwrap_or_else(|e| e.into_inner()) = Some(avg);
    }
}

/// One I/O backend.
pub trait Backend {
    fn name(&self) -> &'static str;
    /// Run every job to its end. Each job's recorder must be finished before returning.
    /// An Err is a failure of the backend itself (e.g. a ring could not be set up), not
    /// an I/O error, which jobs record.
    fn run(&mut self, jobs: &mut [Job<'_>], ctx: &BackendCtx<'_>) -> Result<(), String>;
}

/// Run one closure per job on its own named thread and wait for all; the first error wins.
pub(crate) fn per_job_threads<'j, 'a: 'j, F>(jobs: &'j mut [Job<'a>], f: F) -> Result<(), String>
where
    F: Fn(&mut Job<'a>) -> Result<(), String> + Sync,
{
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter_mut()
            .map(|job| {
                let f = &f;
                std::thread::Builder::new()
                    .name(format!("drivelab-job{}", job.id))
                    .spawn_scoped(s, move || {
                        let r = f(job);
                        job.rec.finish();
                        r
                    })
                    .map_err(|e| format!("cannot start a job thread: {e}"))
            })
            .collect();
        let mut first = Ok(());
        for h in handles {
            let r = match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err("a job thread panicked".into())),
                Err(e) => Err(e),
            };
            if first.is_ok() {
                first = r;
            }
        }
        first
    })
}

/// errno of an io::Error as the negative result convention jobs use.
pub(crate) fn neg_errno(e: &std::io::Error) -> i64 {
    -(e.raw_os_error().unwrap_or(libc::EIO) as i64)
}

/// Longest single wait of an [`Issuer`], so that a stop request is seen within it.
pub(crate) const SLICE_NS: u64 = 100_000_000;

/// Carries out an open-loop source's I/Os (a trace's). Slots are the driver's: a slot is not reused before its
/// completion has been handed back.
pub trait Issuer {
    /// The replay's clock.
    fn now(&self) -> u64;
    /// Start `io` (in slot `slot`) at `at`, a reading of [`Issuer::now`].
    fn submit(&mut self, io: &AnyOp, slot: usize, at: u64) -> Result<(), String>;
    /// Hand back completions as `(slot, done_ns, result)`; `result` is the byte count of
    /// a read or write, 0 for a flush or discard, or a negative errno. Waits for at
    /// least one when `inflight`, but not past `until` (nor longer than 100 ms on a
    /// real clock); with nothing in flight, waits until `until`.
    fn wait(
        &mut self,
        until: Option<u64>,
        inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String>;
    /// Sensor readings taken since the last call (a simulated device's, at every
    /// interval boundary its virtual time crossed).
    fn sensors(&mut self) -> Vec<SensorReading> {
        Vec::new()
    }
}

/// The issuer for this target, on `clock` (a simulated drive keeps its own, virtual
/// one, and reads its sensors every `interval_ns` from its present time on).
pub fn issuer<'t>(
    target: &'t mut Target,
    clock: &'t MonotonicClock,
    interval_ns: u64,
    max_outstanding: u32,
) -> Result<Box<dyn Issuer + 't>, String> {
    let kind = target.info.kind;
    if target.model().is_some() {
        let model = target.model_mut().expect("a model target");
        let now = model.now_ns();
        return Ok(Box::new(virtual_time::ModelIssuer {
            model,
            now,
            heap: BinaryHeap::new(),
            seq: 0,
            interval_ns: interval_ns.max(1),
            next_sample: now,
            readings: Vec::new(),
        }));
    }
    match target.file() {
        Some(f) => Ok(Box::new(uring::UringIssuer::new(
            f,
            clock,
            kind == TargetKind::BlockDevice,
            max_outstanding,
        )?)),
        None => Ok(Box::new(null::NullIssuer {
            clock,
            stamps: Stamps::default(),
            content: crate::data::ContentStream::new(),
            buf: crate::buf::AlignedBuf::new(0),
            ready: Vec::new(),
        })),
    }
}

/// Completion times read from the clock one per completion, strictly increasing within a
/// reap (two readings within one clock tick are told apart by a nanosecond).
#[derive(Default)]
pub(crate) struct Stamps {
    last: u64,
}

impl Stamps {
    pub(crate) fn next(&mut self, clock: &dyn Clock) -> u64 {
        self.last = clock.now_ns().max(self.last + 1);
        self.last
    }
}
