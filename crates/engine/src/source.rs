//! Where a backend's I/Os come from: one interface for the workload generator's jobs
//! ([`crate::job::Job`], closed loop) and a trace's schedule
//! ([`crate::replay::TraceSource`], open loop or as fast as the trace's concurrency
//! allows). A backend asks its source for the next I/O, carries it out its own way
//! (threads, rings, nothing, a device model) and hands the completion back; the timing
//! rule is the source's ([`Pacing`], and each [`Next`] answer), so every backend mode
//! (registered buffers, the ring's setup, the depth, the sync engine, virtual time)
//! serves generated and replayed I/O alike.

use std::sync::Arc;

use crate::data::DataPool;
use crate::op::AnyOp;

/// A source's answer to "what next?" at a time on the backend's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Issue this I/O now.
    Io(AnyOp),
    /// Nothing before this time: wait for it (handing back any completion that comes
    /// first, then asking again).
    At(u64),
    /// Nothing until one of this source's I/Os in flight completes.
    Completion,
    /// No more I/Os: drain those in flight.
    Done,
}

/// The timing rule, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// The next I/O goes as soon as the depth allows (the generator): a backend may
    /// ask for it early and prepare it ahead.
    Closed,
    /// Each I/O has its own condition (a trace's: its due time, or with `--afap` the
    /// trace's concurrency at that point): asked only when the backend can issue it.
    Open,
}

/// What a write's content is made from (a pool and the job's number) and what one
/// write gets of it (the pool's pick and the write's number, [`Plan`]).
#[derive(Clone)]
pub struct Content {
    pub pool: Arc<DataPool>,
    pub job: u32,
}

/// One write's share of its [`Content`]: the pool's pick and the write's number.
pub type Plan = (u64, u64);

impl Content {
    /// Make write `plan`'s content, landing at `offset`, in `buf`. A buffer larger than
    /// the pool serves (a trace's writes of up to 64 MiB) is made in pieces, each with
    /// its own pick.
    #[inline(always)]
    pub fn make(&self, buf: &mut [u8], offset: u64, plan: Plan) {
        let piece = self.pool.piece_bytes();
        if buf.len() <= piece {
            self.pool
                .write_content(buf, offset, plan.0, plan.1, self.job);
            return;
        }
        for (i, c) in buf.chunks_mut(piece).enumerate() {
            let pick = plan
                .0
                .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            self.pool
                .write_content(c, offset + (i * piece) as u64, pick, plan.1, self.job);
        }
    }
}

/// A source of I/Os for one backend thread (a job).
pub trait IoSource: Send {
    /// The job's number (thread names, error records).
    fn id(&self) -> u32;
    fn pacing(&self) -> Pacing;
    /// The next I/O at `now_ns`, or why there is none yet.
    fn next(&mut self, now_ns: u64) -> Next;
    /// Whether an I/O prepared earlier may still be issued at `now_ns`.
    fn may_issue(&self, now_ns: u64) -> bool;
    /// Open pacing: the I/O [`IoSource::next`] will hand out next, before its time has
    /// come (None when not known), so that a backend can make a write's content while
    /// other I/Os are in flight. [`IoSource::fill`] for it counts as that write's: the
    /// source hands out exactly this I/O next, unless it stops.
    fn upcoming(&self) -> Option<AnyOp> {
        None
    }
    /// Where write content comes from.
    fn content(&self) -> &Content;
    /// What write `op` gets of the content (counted now), None when it needs none.
    fn plan(&mut self, op: &AnyOp) -> Option<Plan>;
    /// Time spent making write content: `made_ns` in all, `held_ns` of it while the
    /// target waited for it.
    fn data_time(&mut self, made_ns: u64, held_ns: u64);
    /// A completion: `result` is the byte count of a read or write, 0 for a flush or
    /// discard, or a negative errno. False when the source must stop (an error).
    fn complete(&mut self, op: &AnyOp, submit_ns: u64, done_ns: u64, result: i64) -> bool;
    /// The source is done with its backend (its recorder's last interval handed over).
    fn finish(&mut self);

    /// Bytes of each of `slots` preallocated (and registered) I/O buffers, for a
    /// workload whose largest block is `max_bs`; a larger I/O gets a buffer of its own.
    fn slot_bytes(&self, _slots: usize, max_bs: usize) -> usize {
        max_bs
    }
    /// Whether writes need fresh content per I/O.
    fn per_write_data(&self) -> bool {
        self.content().pool.per_write()
    }
    /// Fill a buffer once at start (all patterns).
    fn init_buffer(&self, buf: &mut [u8]) {
        self.content().pool.init_buffer(buf);
    }
    /// Whether the source checks what its reads find ([`IoSource::check_read`]); a
    /// backend asks once, so a source that does not costs nothing per I/O.
    fn wants_read_check(&self) -> bool {
        false
    }
    /// A read that came back whole, with the bytes it found (`buf`), handed over while
    /// the backend still holds them and before [`IoSource::complete`]: false when the
    /// source must stop (they are not what was written: `--verify-backlog`).
    fn check_read(&mut self, _op: &AnyOp, _buf: &[u8]) -> bool {
        true
    }
    /// Put write `op`'s content in `buf` (`buf.len() == op.len_bytes`).
    #[inline(always)]
    fn fill(&mut self, op: &AnyOp, buf: &mut [u8]) {
        if let Some(p) = self.plan(op) {
            self.content().make(buf, op.offset_bytes, p);
        }
    }
}
