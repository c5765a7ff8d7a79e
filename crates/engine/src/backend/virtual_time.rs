//! The discrete-event backend: a [`DeviceModel`] completes I/Os in virtual time.
//!
//! Every job keeps `iodepth` I/Os outstanding; each new I/O is submitted at the virtual
//! time its predecessor completed. Events are processed in time order (ties broken by
//! submission order), so the model sees nondecreasing times and a run is deterministic.
//! With `end_fsync` the run ends with a FLUSH to the model.
//! Sensor values are sampled at every interval boundary. No bytes move: a model needs
//! only directions, offsets and lengths.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Backend, BackendCtx};
use crate::job::Job;
use crate::model::DeviceModel;
use crate::op::IoOp;
use crate::series::Aggregator;

pub struct VirtualBackend<'m> {
    pub model: &'m mut dyn DeviceModel,
    pub agg: &'m Aggregator,
}

impl Backend for VirtualBackend<'_> {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn run(&mut self, jobs: &mut [Job<'_>], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let qd = ctx.workload.iodepth as usize;
        let interval = self.agg.interval_ns();
        let mut next_sample = self.agg.origin_ns();
        // (completion time, sequence, slot) → slots hold (job, op, submit time)
        let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
        let mut slots: Vec<(u32, IoOp, u64)> = Vec::with_capacity(jobs.len() * qd);
        let mut seq = 0u64;
        let t0 = self.model.now_ns();
        for (j, job) in jobs.iter_mut().enumerate() {
            for _ in 0..qd {
                if let Some(op) = job.next_op(t0) {
                    let done = self.model.submit(op, t0);
                    heap.push(Reverse((done, seq, slots.len() as u32)));
                    slots.push((j as u32, op, t0));
                    seq += 1;
                }
            }
        }
        let mut last_done = t0;
        while let Some(Reverse((done, _, slot))) = heap.pop() {
            last_done = done;
            while done >= next_sample {
                for r in self.model.sensors(next_sample) {
                    self.agg.sensor(r);
                }
                next_sample += interval;
            }
            let (j, op, submit) = slots[slot as usize];
            let job = &mut jobs[j as usize];
            job.complete(&op, submit, done, op.len as i64);
            if let Some(op) = job.next_op(done) {
                let d = self.model.submit(op, done);
                slots[slot as usize] = (j, op, done);
                heap.push(Reverse((d, seq, slot)));
                seq += 1;
            }
        }
        // --end_fsync: a FLUSH after the last completion; the run lasts until it is done
        // (a model with a volatile write cache makes it wait for the cache).
        if ctx.workload.end_fsync && ctx.workload.writes() {
            last_done = self.model.flush_cache(last_done.max(self.model.now_ns()));
        }
        // The model's clock follows submissions; the run ends at its last completion.
        if last_done > self.model.now_ns() {
            self.model.advance_to(last_done);
        }
        // Values over a span (power) for the last interval, up to the last completion.
        if last_done > t0 {
            for r in self.model.sensors(last_done) {
                self.agg.sensor(r);
            }
        }
        for job in jobs.iter_mut() {
            job.rec.finish();
        }
        Ok(())
    }
}
