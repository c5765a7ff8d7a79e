//! `null`: no I/O at all. Measures the engine's own cost per I/O (generation, content,
//! timestamps, recording), like fio's null ioengine. Each batch of `iodepth` I/Os
//! "completes" at one clock reading, which is also the submission time of the next batch.
//! As a trace's [`Issuer`], each I/O completes at its own clock reading after it is
//! issued (write content still prepared).

use super::{per_job_threads, Backend, BackendCtx, Issuer, Stamps, SLICE_NS};
use crate::buf::AlignedBuf;
use crate::clock::{Clock, MonotonicClock};
use crate::data::ContentStream;
use crate::job::Job;
use crate::op::{AnyOp, Dir, IoOp};
use drivelab_trace::Op;

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
                                job.data_held(clock.now_ns() - f0);
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

pub(crate) struct NullIssuer<'c> {
    pub(crate) clock: &'c MonotonicClock,
    pub(crate) stamps: Stamps,
    pub(crate) content: ContentStream,
    pub(crate) buf: AlignedBuf,
    pub(crate) ready: Vec<(usize, u64, i64)>,
}

impl Issuer for NullIssuer<'_> {
    fn now(&self) -> u64 {
        self.clock.now_ns()
    }
    fn submit(&mut self, io: &AnyOp, slot: usize, _at: u64) -> Result<(), String> {
        if io.op == Op::Write {
            let len = io.len_bytes as usize;
            if self.buf.len() < len {
                self.buf = AlignedBuf::try_new(len.next_multiple_of(4096))?;
            }
            self.content
                .fill(&mut self.buf.as_mut_slice()[..len], io.offset_bytes);
        }
        let done = self.stamps.next(self.clock);
        self.ready.push((slot, done, io.expected()));
        Ok(())
    }
    fn wait(
        &mut self,
        until: Option<u64>,
        _inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String> {
        if self.ready.is_empty() {
            if let Some(u) = until {
                let now = self.clock.now_ns();
                crate::clock::sleep_until(self.clock, u.min(now + SLICE_NS));
            }
        }
        out.append(&mut self.ready);
        Ok(())
    }
}
