//! `--verify-backlog N` (fio's `verify_backlog`): during a verifying run, after every N
//! completed writes a job reads those blocks back and checks them before it writes on.
//!
//! The job ([`crate::job::Job`]) tells its backlog of each write it plans (the block's
//! offset, the write's generation and content pick) and each that comes back; after N
//! have come back it hands out a read of each block written since the last check (a
//! block written twice is read once) before the generator's next I/O. The backend hands
//! the read's bytes to the job while it still holds them ([`IoSource::check_read`]), and
//! the block is checked against what may be on the medium:
//!
//! - a read is handed out only for a block with no write of this job in flight (one
//!   that is gets checked when it comes back);
//! - writes to one block in flight together land in either order: any of them is
//!   accepted (the generations from the lowest in flight with the newest to the newest);
//! - a block this job writes again while its read is in flight is not checked (the read
//!   raced the write); it is queued again when that write comes back;
//! - an intact block of this run at its own offset written by another job (jobs share
//!   the span) is accepted: this job cannot know the order of another's writes.
//!
//! When the job's generator has spent its byte budget (`--size`/`--io_size`: the last
//! writes are out), the job checks its tail itself: every block written since the last
//! check is read as its write comes back ([`Backlog::flush`]), the job waiting for those
//! writes ([`crate::source::Next::Completion`]) rather than ending, so each block a job
//! wrote is read back once by its backlog at any depth. A run ended by its `--runtime`
//! (or stopped) leaves that tail to the pass: reads past the deadline would stretch the
//! time measured.
//!
//! So a check never reports a block a correct target may hold. A block found otherwise
//! is classified as the verify pass classifies ([`crate::verify::classify`]) and stops
//! the run.
//!
//! [`IoSource::check_read`]: crate::source::IoSource::check_read

use std::collections::{HashMap, VecDeque};

use crate::block_header::{block_crc, header};
use crate::data::DataPool;
pub use crate::verify::BacklogFound;
use crate::verify::{classify, expected, Written, LISTED_MISMATCHES};

/// The tag ([`crate::op::AnyOp::tag`]) of a backlog's read; the generator's I/Os carry 0.
pub const CHECK_TAG: u32 = 1;

/// What one job knows of a block it wrote and has not checked yet.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// This job's writes to it handed out and not come back.
    writes_in_flight: u32,
    /// The oldest generation the block may hold once those are back (writes in flight
    /// together land in either order).
    lo: u64,
    /// The newest generation written to it, and the content pick of that write.
    hi: u64,
    hi_pick: u64,
    /// A write to it failed or was never planned: what it holds is not known.
    unknown: bool,
    /// Waiting for its check read to be handed out.
    queued: bool,
    /// Its check read is in flight.
    reading: bool,
    /// Written again while its read was in flight: the read is not checked.
    spoiled: bool,
}

/// One job's backlog (see the module documentation).
pub struct Backlog {
    every: u64,
    seed: u64,
    job: u32,
    bs: u32,
    blocks: HashMap<u64, Block>,
    /// Blocks whose writes came back since the last check, in that order.
    pending: Vec<u64>,
    /// Blocks to read now, before the generator's next I/O.
    to_read: VecDeque<u64>,
    /// Writes back since the last check.
    since: u64,
    /// This job's writes handed out and not come back.
    in_flight: u64,
    /// The generator is done: every write that comes back is read at once.
    tail: bool,
    pub found: BacklogFound,
    expected: Vec<u8>,
}

impl Backlog {
    /// A backlog that checks after every `every` writes of job `job` in a run seeded
    /// `seed`, writing blocks of `bs` bytes.
    pub fn new(every: u64, seed: u64, job: u32, bs: u32) -> Backlog {
        Backlog {
            every: every.max(1),
            seed,
            job,
            bs,
            blocks: HashMap::new(),
            pending: Vec::new(),
            to_read: VecDeque::new(),
            since: 0,
            in_flight: 0,
            tail: false,
            found: BacklogFound::default(),
            expected: Vec::new(),
        }
    }

    /// A write of generation `generation` (content pick `pick`) to the block at `offset`
    /// is handed out.
    pub fn planned(&mut self, offset: u64, generation: u64, pick: u64) {
        let b = self.blocks.entry(offset).or_insert(Block {
            writes_in_flight: 0,
            lo: generation,
            hi: generation,
            hi_pick: pick,
            unknown: false,
            queued: false,
            reading: false,
            spoiled: false,
        });
        if b.writes_in_flight == 0 {
            // Every earlier write is back: this one lands after them.
            b.lo = generation;
            b.unknown = false;
        }
        b.hi = generation;
        b.hi_pick = pick;
        b.writes_in_flight += 1;
        b.spoiled |= b.reading;
        self.in_flight += 1;
    }

    /// A write to the block at `offset` came back (`ok`: whole).
    pub fn written(&mut self, offset: u64, ok: bool) {
        let b = self.blocks.entry(offset).or_insert(Block {
            writes_in_flight: 1,
            lo: 0,
            hi: 0,
            hi_pick: 0,
            unknown: true,
            queued: false,
            reading: false,
            spoiled: false,
        });
        b.writes_in_flight = b.writes_in_flight.saturating_sub(1);
        b.unknown |= !ok;
        if b.writes_in_flight == 0 && !b.queued && !b.unknown {
            b.queued = true;
            self.pending.push(offset);
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        self.since += 1;
        if self.since >= self.every || self.tail {
            self.since = 0;
            self.to_read.extend(self.pending.drain(..));
        }
        self.forget_if_settled(offset);
    }

    /// The generator is done (its last write handed out): check the tail now, every
    /// block written since the last check, and each write still in flight once it is
    /// back.
    pub fn flush(&mut self) {
        self.tail = true;
        self.since = 0;
        self.to_read.extend(self.pending.drain(..));
    }

    /// Whether a read of the tail may still come due once an I/O in flight is back (a
    /// write, or a read raced by a write whose block is to be read again).
    pub fn waiting(&self) -> bool {
        self.in_flight > 0 || !self.pending.is_empty()
    }

    /// The next block to read back now, if a check is due.
    pub fn next_read(&mut self) -> Option<u64> {
        while let Some(offset) = self.to_read.pop_front() {
            let Some(b) = self.blocks.get_mut(&offset) else {
                continue;
            };
            b.queued = false;
            if b.writes_in_flight == 0 && b.reading && !b.unknown {
                // Its last read raced a write: read again at the next check.
                b.queued = true;
                self.pending.push(offset);
                continue;
            }
            if b.writes_in_flight > 0 || b.unknown {
                // Queued again when its write is back; an unknown block is not checked.
                self.forget_if_settled(offset);
                continue;
            }
            b.reading = true;
            b.spoiled = false;
            return Some(offset);
        }
        None
    }

    /// Bytes of each block (of each read).
    pub fn block_bytes(&self) -> u32 {
        self.bs
    }

    /// Whether a check is due (a read to hand out before the generator's next I/O).
    pub fn due(&self) -> bool {
        !self.to_read.is_empty()
    }

    /// Check the bytes a backlog read of the block at `offset` found, with `pool` the
    /// run's write content: false when they are not as written (the mismatch kept).
    pub fn check(&mut self, pool: &DataPool, offset: u64, found: &[u8]) -> bool {
        let Some(&b) = self.blocks.get(&offset) else {
            return true;
        };
        if b.spoiled || b.unknown {
            return true;
        }
        self.found.checked += 1;
        if let Some(h) = header(found) {
            let intact = h.offset == offset
                && h.len as usize == found.len()
                && h.seed == self.seed
                && h.crc == block_crc(found);
            let ours = h.job == self.job && (b.lo..=b.hi).contains(&h.generation);
            if intact && (ours || h.job != self.job) {
                return true;
            }
        }
        let last = Written {
            job: self.job,
            generation: b.hi,
            pick: b.hi_pick,
        };
        self.expected.resize(found.len(), 0);
        expected(pool, self.seed, offset, last, &mut self.expected);
        let Some(m) = classify(offset, found, &self.expected, last, self.seed) else {
            return true;
        };
        self.found.bad += 1;
        self.found.classes.add(m.class);
        if self.found.mismatches.len() < LISTED_MISMATCHES {
            self.found.mismatches.push(m);
        }
        false
    }

    /// A backlog read of the block at `offset` came back (checked or failed).
    pub fn read_done(&mut self, offset: u64) {
        if let Some(b) = self.blocks.get_mut(&offset) {
            b.reading = false;
        }
        self.forget_if_settled(offset);
    }

    /// Drop what is known of a block with nothing left to do.
    fn forget_if_settled(&mut self, offset: u64) {
        if let Some(b) = self.blocks.get(&offset) {
            if b.writes_in_flight == 0 && !b.queued && !b.reading {
                self.blocks.remove(&offset);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{tests::workload, OpGen};
    use crate::job::{Job, StopFlags};
    use crate::op::AnyOp;
    use crate::series::{Aggregator, Recorder};
    use crate::source::{IoSource, Next};
    use crate::spec::{DataPattern, RwMode};
    use crate::verify::Class;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    const SEED: u64 = 7;
    const BS: usize = 4096;

    /// Block `offset` as write `generation` (pick `pick`) of job 0 made it.
    fn content(pool: &DataPool, offset: u64, generation: u64, pick: u64) -> Vec<u8> {
        let mut b = vec![0u8; BS];
        let wr = Written {
            job: 0,
            generation,
            pick,
        };
        expected(pool, SEED, offset, wr, &mut b);
        b
    }

    fn pool() -> std::sync::Arc<DataPool> {
        DataPool::new(DataPattern::Random, BS as u32, SEED, true)
    }

    /// A job of a verifying sequential write with `--verify-backlog every`, run one I/O
    /// at a time against a target in memory; `damage` may alter what a check read finds
    /// (the block's offset and bytes). Returns the job's findings, whether it stopped,
    /// and the reads and writes done.
    fn run_job(
        every: u64,
        writes: u64,
        damage: &mut dyn FnMut(u64, &mut Vec<u8>),
    ) -> (BacklogFound, bool, u64, u64) {
        let mut w = workload(RwMode::Write, 1);
        w.verify = true;
        w.randseed = SEED;
        let agg = Aggregator::new(0, 1_000_000_000, 0, 1);
        let user = AtomicBool::new(false);
        let stop = StopFlags {
            user: &user,
            abort: AtomicBool::new(false),
        };
        let mut job = Job::new(
            0,
            OpGen::new(&w, 0),
            DataPool::for_workload(&w),
            Recorder::new(&agg, 0, u64::MAX),
            &stop,
            0,
            None,
            Some(writes * BS as u64),
            false,
        )
        .with_backlog(every, SEED, BS as u32);
        let mut disk: HashMap<u64, Vec<u8>> = HashMap::new();
        let (mut reads, mut wrote) = (0, 0);
        let mut t = 1;
        while let Next::Io(op) = job.next(t) {
            let mut buf = vec![0u8; BS];
            let mut go = true;
            if op.op == drivelab_trace::Op::Write {
                IoSource::fill(&mut job, &op, &mut buf);
                disk.insert(op.offset_bytes, buf);
                wrote += 1;
            } else {
                assert_eq!(op.tag, CHECK_TAG);
                buf.clone_from(&disk[&op.offset_bytes]);
                damage(op.offset_bytes, &mut buf);
                go = job.check_read(&op, &buf);
                reads += 1;
            }
            go &= IoSource::complete(&mut job, &op, t, t + 1, BS as i64);
            t += 2;
            if !go {
                break;
            }
        }
        job.finish();
        let found = job.backlog.take().unwrap().found;
        (found, stop.abort.load(Ordering::Relaxed), reads, wrote)
    }

    #[test]
    fn every_n_writes_the_job_reads_them_back_before_writing_on() {
        let (found, stopped, reads, wrote) = run_job(4, 10, &mut |_, _| {});
        // Checks after writes 4 and 8, and of the last two once the generator is done.
        assert_eq!((wrote, reads), (10, 10));
        assert_eq!(found.checked, 10);
        assert_eq!((found.bad, stopped), (0, false));
    }

    #[test]
    fn a_byte_corrupted_between_the_write_and_its_check_stops_the_run_at_its_offset() {
        let mut target = None;
        let (found, stopped, reads, wrote) = run_job(4, 32, &mut |offset, buf| {
            // The sixth block read back, one byte 1000 bytes in.
            let t = *target.get_or_insert(offset + 5 * BS as u64);
            if offset == t {
                buf[1000] ^= 0x10;
            }
        });
        assert!(stopped);
        assert_eq!(reads, 6, "the run stops at the damaged block");
        assert!(wrote < 32);
        assert_eq!((found.checked, found.bad), (6, 1));
        let m = &found.mismatches[0];
        assert_eq!(m.class, Class::Corrupt);
        assert_eq!(m.offset_bytes, target.unwrap());
        assert_eq!(m.first_bad_byte_offset_bytes, target.unwrap() + 1000);
        assert_eq!(found.classes.corrupt, 1);
    }

    #[test]
    fn a_block_rewritten_while_its_check_is_in_flight_is_checked_again_not_blamed() {
        let p = pool();
        let mut b = Backlog::new(1, SEED, 0, BS as u32);
        b.planned(0, 0, 11);
        b.written(0, true);
        assert_eq!(b.next_read(), Some(0));
        // Written again while the read is in flight: the read may find either write,
        // or parts of both.
        b.planned(0, 1, 12);
        let mut mixed = content(&p, 0, 0, 11);
        mixed[2048..].copy_from_slice(&content(&p, 0, 1, 12)[2048..]);
        assert!(b.check(&p, 0, &mixed));
        b.read_done(0);
        assert_eq!(b.found.checked, 0);
        // Queued again once that write is back, and checked against it.
        b.written(0, true);
        assert_eq!(b.next_read(), Some(0));
        assert!(b.check(&p, 0, &content(&p, 0, 1, 12)));
        b.read_done(0);
        assert_eq!((b.found.checked, b.found.bad), (1, 0));
        assert!(b.blocks.is_empty(), "nothing kept of a checked block");
    }

    #[test]
    fn writes_in_flight_together_may_land_in_either_order_but_not_an_older_one() {
        let p = pool();
        let mut b = Backlog::new(2, SEED, 0, BS as u32);
        // Generations 0 and 1 in flight together: either may be on the medium.
        b.planned(0, 0, 10);
        b.planned(0, 1, 11);
        b.written(0, true);
        // Not read while a write to it is in flight.
        b.written(0, true);
        assert_eq!(b.next_read(), Some(0));
        assert!(b.check(&p, 0, &content(&p, 0, 0, 10)));
        b.read_done(0);
        // Generation 2 written after both were back: generation 1 found is an older
        // write, not as written.
        b.planned(0, 2, 12);
        b.written(0, true);
        b.planned(4096, 3, 13);
        b.written(4096, true);
        assert_eq!(b.next_read(), Some(0));
        assert!(!b.check(&p, 0, &content(&p, 0, 1, 11)));
        let m = &b.found.mismatches[0];
        assert_eq!((m.class, m.found_generation), (Class::Older, Some(1)));
        assert_eq!(m.expected_generation, 2);
        // A write in flight when its check comes due: skipped, queued when it is back.
        b.read_done(0);
        assert_eq!(b.next_read(), Some(4096));
        b.read_done(4096);
        b.planned(8192, 4, 14);
        b.written(8192, true);
        b.planned(8192, 5, 15);
        b.planned(12288, 6, 16);
        b.written(12288, true);
        // 8192 is passed over (a write to it in flight), 12288 is read.
        assert_eq!(b.next_read(), Some(12288));
        assert_eq!(b.next_read(), None);
        b.read_done(12288);
        b.written(8192, true);
        b.planned(16384, 7, 17);
        b.written(16384, true);
        assert_eq!(b.next_read(), Some(8192));
    }

    #[test]
    fn another_jobs_intact_block_is_accepted_and_a_zeroed_one_is_not() {
        let p = pool();
        let mut b = Backlog::new(1, SEED, 1, BS as u32);
        b.planned(0, 0, 10);
        b.written(0, true);
        assert_eq!(b.next_read(), Some(0));
        // Job 0's intact write of the same block (jobs share the span).
        assert!(b.check(&p, 0, &content(&p, 0, 9, 3)));
        b.read_done(0);
        b.planned(0, 1, 10);
        b.written(0, true);
        assert_eq!(b.next_read(), Some(0));
        assert!(!b.check(&p, 0, &[0u8; BS]));
        assert_eq!(b.found.mismatches[0].class, Class::Zeros);
        // AnyOp tags: the generator's I/Os carry none.
        assert_eq!(
            AnyOp::from(crate::op::IoOp {
                dir: crate::op::Dir::Read,
                offset: 0,
                len: 4096
            })
            .tag,
            0
        );
    }
}
