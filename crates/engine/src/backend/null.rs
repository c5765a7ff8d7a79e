//! `null`: no I/O at all. Measures the engine's own cost per I/O (generation, content,
//! timestamps, recording), like fio's null ioengine. Up to `iodepth` I/Os are taken from
//! the source, then each "completes" at its own clock reading; the last of them is the
//! submission time of the next batch. A trace's I/Os (any kind, write content still
//! made) go the same way, each batch as far as the source has I/Os due; the thread
//! sleeps until the next is.

use super::{per_job_threads, Backend, BackendCtx, Stamps, SLICE_NS};
use crate::buf::SlotArena;
use crate::op::AnyOp;
use crate::source::{IoSource, Next};
use drivelab_trace::Op;

pub struct NullBackend;

impl<S: IoSource> Backend<S> for NullBackend {
    fn name(&self) -> &'static str {
        "null"
    }

    fn run(&mut self, jobs: &mut [S], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let max_bs = ctx.workload.max_bs() as usize;
        let qd = ctx.workload.iodepth as usize;
        let clock = ctx.clock;
        per_job_threads(jobs, |job| {
            let mut bufs = SlotArena::new(1, job.slot_bytes(1, max_bs))?;
            job.init_buffer(bufs.base.as_mut_slice());
            let per_write = job.per_write_data();
            let mut batch: Vec<AnyOp> = Vec::with_capacity(qd);
            let mut stamps = Stamps::default();
            let mut t0 = clock.now_ns();
            loop {
                batch.clear();
                let mut next = Next::Completion;
                while batch.len() < qd {
                    next = job.next(t0);
                    let Next::Io(op) = next else { break };
                    let b: &mut [u8] = match op.rw() {
                        Some(_) => bufs.get(0, op.len_bytes as usize)?.0,
                        None => &mut [],
                    };
                    if per_write && op.op == Op::Write {
                        // Without I/O, this is what the content costs.
                        let f0 = clock.now_ns();
                        job.fill(&op, b);
                        let made = clock.now_ns() - f0;
                        job.data_time(made, made);
                    } else {
                        job.fill(&op, b);
                    }
                    batch.push(op);
                }
                for op in &batch {
                    let t = stamps.next(clock);
                    job.complete(op, t0, t, op.expected());
                }
                t0 = clock.now_ns();
                if batch.is_empty() {
                    match next {
                        Next::Done => return Ok(()),
                        Next::At(t) => {
                            crate::clock::sleep_until(clock, t.min(t0 + SLICE_NS));
                            t0 = clock.now_ns();
                        }
                        _ => return Err(super::sync::nothing_in_flight()),
                    }
                }
            }
        })
    }
}
