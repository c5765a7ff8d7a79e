//! I/O backends, one file each, behind one small interface (fio's `engines/` in spirit).
//!
//! A backend carries out every job's I/O until each job says stop, reading timestamps from
//! the clock it is given and handing completions to the jobs' recorders. It decides only
//! *how* I/O is issued: threads blocking in pread/pwrite ([`sync`]), rings
//! ([`uring`]), nothing at all ([`null`]), or a device model in virtual time
//! ([`virtual_time`]).
//!
//! Each backend has one loop, which takes its I/Os from an [`IoSource`]: the workload
//! generator's jobs or a trace's schedule (reads, writes, flushes, discards, each when
//! the source says). One ring setup with its registered buffers, one sync engine, one
//! null and one model for generated and replayed I/O; every completion is stamped on
//! its own.

pub mod null;
pub mod sync;
pub mod uring;
pub mod virtual_time;

use std::fs::File;
use std::sync::Mutex;

use crate::clock::Clock;
use crate::op::AnyOp;
use crate::source::IoSource;
use crate::spec::{IoEngine, Workload};
use drivelab_trace::Op;

/// What every backend is given besides the jobs.
pub struct BackendCtx<'a> {
    pub workload: &'a Workload,
    pub clock: &'a dyn Clock,
    /// The opened target for backends that do real I/O.
    pub file: Option<&'a File>,
    /// The target is a block device (a discard is BLKDISCARD, not a punched hole).
    pub block: bool,
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

/// One I/O backend, for sources of type `S`.
pub trait Backend<S: IoSource> {
    fn name(&self) -> &'static str;
    /// Run every source to its end. Each one's [`IoSource::finish`] must be called before
    /// returning. An Err is a failure of the backend itself (e.g. a ring could not be
    /// set up), not an I/O error, which sources record.
    fn run(&mut self, jobs: &mut [S], ctx: &BackendCtx<'_>) -> Result<(), String>;
}

/// Run one closure per source on its own named thread and wait for all; the first error
/// wins.
pub(crate) fn per_job_threads<S: IoSource, F>(jobs: &mut [S], f: F) -> Result<(), String>
where
    F: Fn(&mut S) -> Result<(), String> + Sync,
{
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter_mut()
            .map(|job| {
                let f = &f;
                std::thread::Builder::new()
                    .name(format!("drivelab-job{}", job.id()))
                    .spawn_scoped(s, move || {
                        let r = f(job);
                        job.finish();
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

/// Hand a read that came back whole to a source that checks what reads find
/// (`check`: its [`IoSource::wants_read_check`]), with its bytes: false when the source
/// must stop.
#[inline(always)]
pub(crate) fn read_checked<S: IoSource>(
    job: &mut S,
    check: bool,
    op: &AnyOp,
    res: i64,
    buf: &[u8],
) -> bool {
    !check || op.op != Op::Read || res != op.len_bytes as i64 || job.check_read(op, buf)
}

/// Longest single wait of a backend for an open-loop source's due time, so that a stop
/// request is seen within it.
pub(crate) const SLICE_NS: u64 = 100_000_000;

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

/// Carry out `op` on `file` with blocking system calls (`buf`: a read's or write's
/// bytes); the result as [`IoSource::complete`] takes it. A discard is BLKDISCARD on a
/// block device (`block`), a punched hole in a file; a FUA write is followed by
/// fdatasync.
pub(crate) fn blocking_io(file: &File, op: &AnyOp, buf: &mut [u8], block: bool) -> i64 {
    use std::os::unix::fs::FileExt;
    let ok = |r: std::io::Result<()>, n: i64| r.map_or_else(|e| neg_errno(&e), |()| n);
    let (off, len) = (op.offset_bytes, op.len_bytes);
    match op.op {
        Op::Read => file
            .read_at(buf, off)
            .map_or_else(|e| neg_errno(&e), |n| n as i64),
        Op::Write => match file.write_at(buf, off) {
            Ok(n) if op.fua => ok(file.sync_data(), n as i64),
            Ok(n) => n as i64,
            Err(e) => neg_errno(&e),
        },
        Op::Flush => ok(file.sync_data(), 0),
        Op::Discard if block => ok(crate::sys::block_discard(file, off, len), 0),
        Op::Discard => ok(crate::sys::punch_hole(file, off, len), 0),
    }
}

/// The backend `w` asks for on a real or null target (a simulated one runs on
/// [`virtual_time::VirtualBackend`]); `uring`: io_uring's probe of the target, made
/// before the clock started.
pub fn for_workload<S: IoSource>(
    w: &Workload,
    uring: Option<uring::UringBackend>,
) -> Box<dyn Backend<S>> {
    match w.ioengine {
        IoEngine::Sync => Box::new(sync::SyncBackend),
        // libaio only comes from fio's results (IoEngine::parse refuses it): should such
        // a config be run, io_uring is drivelab's asynchronous engine.
        IoEngine::IoUring | IoEngine::Libaio => Box::new(uring.unwrap_or_default()),
        IoEngine::Null | IoEngine::Sim => Box::new(null::NullBackend),
    }
}
