//! The discrete-event backend: a [`DeviceModel`] completes I/Os in virtual time.
//!
//! Every source keeps up to `iodepth` I/Os outstanding; each new I/O is submitted at the
//! virtual time the source is asked (a generator's: when its predecessor completed; a
//! trace's: when it is due, or when a completion lets it go). Events (completions, and
//! the due times sources wait for) are processed in time order (ties broken by order of
//! entry), so the model sees nondecreasing times and a run is deterministic. A flush
//! goes to the model's write cache ([`DeviceModel::flush_cache`]), a discard to
//! [`DeviceModel::discard`]. With `end_fsync` the run ends with a FLUSH to the model.
//! Sensor values are sampled at every interval boundary. No bytes move: a model needs
//! only directions, offsets and lengths.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Backend, BackendCtx};
use crate::model::DeviceModel;
use crate::op::AnyOp;
use crate::series::Aggregator;
use crate::source::{IoSource, Next};
use drivelab_trace::Op;

pub struct VirtualBackend<'m> {
    pub model: &'m mut dyn DeviceModel,
    pub agg: &'m Aggregator,
}

/// An event: a completion (of slot `n`) or a source's due time (source `n`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Done(u32),
    Due(u32),
}

/// Each source's state between events.
#[derive(Clone, Copy, Default)]
struct Src {
    inflight: usize,
    /// The due time it waits for, if any (an older one in the heap is stale).
    due: Option<u64>,
    done: bool,
}

/// The run's events and slots.
struct Sim<'a> {
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    /// (source, I/O, submission time)
    slots: Vec<(u32, AnyOp, u64)>,
    free: Vec<u32>,
    seq: u64,
    qd: usize,
    srcs: Vec<Src>,
    model: &'a mut dyn DeviceModel,
}

impl Sim<'_> {
    fn push(&mut self, t: u64, e: Event) {
        self.heap.push(Reverse((t, self.seq, e)));
        self.seq += 1;
    }

    /// When the model completes `op` submitted at `at`.
    fn submit(&mut self, op: &AnyOp, at: u64) -> u64 {
        let done = match op.rw() {
            Some(rw) => self.model.submit(rw, at),
            None if op.op == Op::Discard => self.model.discard(op.offset_bytes, op.len_bytes, at),
            None => self.model.flush_cache(at),
        };
        done.max(at)
    }

    /// Take what source `j` has to issue at `t`.
    fn poll<S: IoSource>(&mut self, j: usize, job: &mut S, t: u64) {
        while !self.srcs[j].done && self.srcs[j].inflight < self.qd {
            match job.next(t) {
                Next::Io(op) => {
                    let done = self.submit(&op, t);
                    let slot = match self.free.pop() {
                        Some(s) => {
                            self.slots[s as usize] = (j as u32, op, t);
                            s
                        }
                        None => {
                            self.slots.push((j as u32, op, t));
                            self.slots.len() as u32 - 1
                        }
                    };
                    self.push(done, Event::Done(slot));
                    self.srcs[j].inflight += 1;
                }
                Next::At(due) => {
                    if self.srcs[j].due != Some(due) {
                        self.srcs[j].due = Some(due);
                        self.push(due.max(t), Event::Due(j as u32));
                    }
                    break;
                }
                Next::Completion => break,
                Next::Done => self.srcs[j].done = true,
            }
        }
    }
}

impl<S: IoSource> Backend<S> for VirtualBackend<'_> {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn run(&mut self, jobs: &mut [S], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let interval = self.agg.interval_ns();
        let mut next_sample = self.agg.origin_ns();
        let t0 = self.model.now_ns();
        let mut sim = Sim {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
            qd: ctx.workload.iodepth as usize,
            srcs: vec![Src::default(); jobs.len()],
            model: &mut *self.model,
        };
        for (j, job) in jobs.iter_mut().enumerate() {
            sim.poll(j, job, t0);
        }
        let mut last = t0;
        while let Some(Reverse((t, _, e))) = sim.heap.pop() {
            if let Event::Due(j) = e {
                if sim.srcs[j as usize].due != Some(t) {
                    // A due time the source no longer waits for.
                    continue;
                }
            }
            while t >= next_sample {
                for r in sim.model.sensors(next_sample) {
                    self.agg.sensor(r);
                }
                next_sample += interval;
            }
            let j = match e {
                Event::Done(slot) => {
                    let (j, op, submit) = sim.slots[slot as usize];
                    sim.free.push(slot);
                    sim.srcs[j as usize].inflight -= 1;
                    jobs[j as usize].complete(&op, submit, t, op.expected());
                    j as usize
                }
                Event::Due(j) => {
                    sim.srcs[j as usize].due = None;
                    j as usize
                }
            };
            last = t;
            sim.poll(j, &mut jobs[j], t);
        }
        // --end_fsync: a FLUSH after the last completion; the run lasts until it is done
        // (a model with a volatile write cache makes it wait for the cache).
        if ctx.workload.end_fsync && ctx.workload.writes() {
            last = self.model.flush_cache(last.max(self.model.now_ns()));
        }
        // The model's clock follows submissions; the run ends at its last event.
        if last > self.model.now_ns() {
            self.model.advance_to(last);
        }
        // Values over a span (power) for the last interval, up to the last event.
        if last > t0 {
            for r in self.model.sensors(last) {
                self.agg.sensor(r);
            }
        }
        for job in jobs.iter_mut() {
            job.finish();
        }
        Ok(())
    }
}
