//! The discrete-event backend: a [`DeviceModel`] completes I/Os in virtual time.
//!
//! Every job keeps `iodepth` I/Os outstanding; each new I/O is submitted at the virtual
//! time its predecessor completed. Events are processed in time order (ties broken by
//! submission order), so the model sees nondecreasing times and a run is deterministic.
//! With `end_fsync` the run ends with a FLUSH to the model.
//! Sensor values are sampled at every interval boundary. No bytes move: a model needs
//! only directions, offsets and lengths. As a trace's [`Issuer`], the model completes
//! each I/O in virtual time as the source issues it (a flush at once: the model has no
//! write cache).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Backend, BackendCtx, Issuer};
use crate::job::Job;
use crate::model::{DeviceModel, SensorReading};
use crate::op::{AnyOp, Dir, IoOp};
use crate::series::Aggregator;
use drivelab_trace::Op;

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

/// Most virtual time a simulated drive's idle moves on by in one wait.
const MODEL_SLICE_NS: u64 = 60_000_000_000;

pub(crate) struct ModelIssuer<'m> {
    pub(crate) model: &'m mut (dyn DeviceModel + 'static),
    pub(crate) now: u64,
    /// (completion, submission order, slot, result)
    pub(crate) heap: BinaryHeap<Reverse<(u64, u64, usize, i64)>>,
    pub(crate) seq: u64,
    pub(crate) interval_ns: u64,
    /// The next interval boundary at which the model's sensors are read.
    pub(crate) next_sample: u64,
    pub(crate) readings: Vec<SensorReading>,
}

impl ModelIssuer<'_> {
    /// Virtual time moves on to `t`: the sensors at every boundary passed.
    fn advance(&mut self, t: u64) {
        self.now = self.now.max(t);
        while self.now >= self.next_sample {
            let got = self.model.sensors(self.next_sample);
            self.readings.extend(got);
            self.next_sample += self.interval_ns;
        }
    }
}

impl Issuer for ModelIssuer<'_> {
    fn now(&self) -> u64 {
        self.now
    }
    fn sensors(&mut self) -> Vec<SensorReading> {
        std::mem::take(&mut self.readings)
    }
    fn submit(&mut self, io: &AnyOp, slot: usize, at: u64) -> Result<(), String> {
        let rw = |dir| IoOp {
            dir,
            offset: io.offset_bytes,
            len: io.len_bytes as u32,
        };
        let done = match io.op {
            Op::Read => self.model.submit(rw(Dir::Read), at),
            Op::Write => self.model.submit(rw(Dir::Write), at),
            Op::Discard => self.model.discard(io.offset_bytes, io.len_bytes, at),
            Op::Flush => at,
        };
        self.heap
            .push(Reverse((done.max(at), self.seq, slot, io.expected())));
        self.seq += 1;
        Ok(())
    }
    fn wait(
        &mut self,
        until: Option<u64>,
        _inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String> {
        let next = self.heap.peek().map(|r| r.0 .0);
        match (next, until) {
            (Some(d), u) if u.is_none_or(|u| d <= u) => {
                let Reverse((d, _, slot, res)) = self.heap.pop().expect("peeked");
                self.advance(d);
                out.push((slot, d, res));
            }
            // A long idle is crossed a minute of virtual time per call, so that the
            // replay loop sees a stop request between them.
            (_, Some(u)) => self.advance(u.min(self.now.saturating_add(MODEL_SLICE_NS))),
            _ => {}
        }
        Ok(())
    }
}

impl Drop for ModelIssuer<'_> {
    fn drop(&mut self) {
        // The run ends at its last completion on the model's clock.
        if self.now > self.model.now_ns() {
            self.model.advance_to(self.now);
        }
    }
}
