//! I/O backends, one file each, behind one small interface (fio's `engines/` in spirit).
//!
//! A backend carries out every job's I/O until each job says stop, reading timestamps from
//! the clock it is given and handing completions to the jobs' recorders. It decides only
//! *how* I/O is issued: threads blocking in pread/pwrite ([`sync`]), rings
//! ([`uring`]), nothing at all ([`null`]), or a device model in virtual time
//! ([`virtual_time`]).

pub mod null;
pub mod sync;
pub mod uring;
pub mod virtual_time;

use std::fs::File;
use std::sync::Mutex;

use crate::clock::Clock;
use crate::job::Job;
use crate::spec::Workload;

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
