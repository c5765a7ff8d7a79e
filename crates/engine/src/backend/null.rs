//! `null`: no I/O at all. Measures the engine's own cost per I/O (generation, content,
//! timestamps, recording), like fio's null ioengine. Each batch of `iodepth` I/Os
//! "completes" at one clock reading, which is also the submission time of the next batch.

use super::{per_job_threads, Backend, BackendCtx};
use crate::buf::AlignedBuf;
use crate::job::Job;
use crate::op::{Dir, IoOp};

pub struct NullBackend;

impl Backend for NullBackend {
    fn name(&self) -> &'static str {
        "null"
    }

    fn run(&mut self, jobs: &mut [Job<'_>], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let max_bs = ctx.workload.max_bs() as usize;
        let qd = ctx.workload.iodepth as usize;
        let clock = ctx.clock;
        per_job_threads(jobs, |job| {
            let mut buf = AlignedBuf::try_new(max_bs)?;
            job.init_buffer(buf.as_mut_slice());
            let per_write = job.per_write_data();
            let mut batch: Vec<IoOp> = Vec::with_capacity(qd);
            let mut t0 = clock.now_ns();
            loop {
                batch.clear();
                while batch.len() < qd {
                    match job.next_op(t0) {
                        Some(op) => {
                            if per_write && op.dir == Dir::Write {
                                // Without I/O, this is what the content costs.
                                let f0 = clock.now_ns();
                                job.fill(&op, &mut buf.as_mut_slice()[..op.len as usize]);
                                job.data_ns += clock.now_ns() - f0;
                            } else {
                                job.fill(&op, &mut buf.as_mut_slice()[..op.len as usize]);
                            }
                            batch.push(op);
                        }
                        None => break,
                    }
                }
                if batch.is_empty() {
                    return Ok(());
                }
                let t1 = clock.now_ns();
                for op in &batch {
                    job.complete(op, t0, t1, op.len as i64);
                }
                t0 = t1;
            }
        })
    }
}
