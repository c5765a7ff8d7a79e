//! `sync`: each job is a thread doing one pread/pwrite at a time, so the queue depth is
//! the number of jobs (the method of the enterprise review in the references).

use std::os::unix::fs::FileExt;

use super::{neg_errno, per_job_threads, Backend, BackendCtx};
use crate::buf::AlignedBuf;
use crate::job::Job;
use crate::op::Dir;

pub struct SyncBackend;

impl Backend for SyncBackend {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn run(&mut self, jobs: &mut [Job<'_>], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let file = ctx.file.ok_or("the sync engine needs an opened target")?;
        let max_bs = ctx.workload.max_bs() as usize;
        let clock = ctx.clock;
        per_job_threads(jobs, |job| {
            let mut buf = AlignedBuf::try_new(max_bs)?;
            job.init_buffer(buf.as_mut_slice());
            let per_write = job.per_write_data();
            let mut now = clock.now_ns();
            while let Some(op) = job.next_op(now) {
                let b = &mut buf.as_mut_slice()[..op.len as usize];
                job.fill(&op, b);
                let t0 = clock.now_ns();
                if per_write && op.dir == Dir::Write {
                    job.data_ns += t0 - now;
                }
                let res = match op.dir {
                    Dir::Read => file.read_at(b, op.offset),
                    Dir::Write => file.write_at(b, op.offset),
                };
                now = clock.now_ns();
                let r = match res {
                    Ok(n) => n as i64,
                    Err(e) => neg_errno(&e),
                };
                if !job.complete(&op, t0, now, r) {
                    break;
                }
            }
            Ok(())
        })
    }
}
