//! A verifying run's read-back pass (`io --verify`, and `drivelab verify` later): every
//! block the run wrote is read back and checked, served by the workload's own backend at
//! its queue depth (io_uring with its registered buffers, or the sync engine's threads),
//! as sources ([`IoSource`]) that hand out the blocks in offset order and check each read
//! while the backend still holds its buffer ([`IoSource::check_read`]).
//!
//! In a run, each read is timed and counted like any read: the pass's intervals follow
//! the run's in the series (on its grid, from the interval after the run's last), its
//! reads join the read totals, its time the totals' elapsed time and its CPU the run's.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::assemble::Facts;
use crate::backend::{Backend, BackendCtx};
use crate::clock::{Clock, MonotonicClock};
use crate::data::DataPool;
use crate::hist::Histogram;
use crate::op::{AnyOp, Dir, IoOp};
use crate::series::{Aggregator, IntervalRecord, Recorder};
use crate::source::{Content, IoSource, Next, Pacing, Plan};
use crate::spec::{IoEngine, Workload};
use crate::verify::{
    adjacent_runs, check_workload, plan, read_error, worst_mismatch, Mismatch, VerifyResult,
    Written, LISTED_MISMATCHES, READ_BYTES,
};

/// What the pass found and what its reads measured.
pub struct Pass {
    pub result: VerifyResult,
    records: Vec<IntervalRecord>,
    hist: Histogram,
    bytes: u64,
    elapsed_ns: u64,
    cpu_s: (f64, f64),
}

/// Buffers of the pass's reads in flight are kept within this (a deep queue reads
/// fewer adjacent blocks at once).
const BUFFER_BUDGET: usize = 64 << 20;

/// Read back and check every block the run wrote from `file` (`block`: a block
/// device), timing each read.
pub fn run(w: &Workload, file: &File, block: bool, writes_per_job: Vec<u64>) -> Pass {
    let clock = MonotonicClock::new();
    let cpu0 = crate::sys::process_cpu_s();
    let origin = clock.now_ns();
    let mut result = VerifyResult::unchecked(writes_per_job);
    let sources = w.numjobs.max(1) as usize;
    let agg = Aggregator::new(origin, w.log_interval_ns, 0, sources);
    if let Err(e) = check_workload(w) {
        result.error = Some(e);
    } else {
        read_back(w, file, block, &clock, &agg, &mut result);
    }
    let end = clock.now_ns();
    let (records, [hist, _], [bytes, _]) = agg.finish(end, end);
    let cpu1 = crate::sys::process_cpu_s();
    Pass {
        result,
        records: records.iter().collect(),
        hist,
        bytes,
        elapsed_ns: end - origin,
        cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
    }
}

/// The pass's reads on the workload's backend, one source per job, the blocks' runs
/// dealt out in turn; what they found, in `r`.
fn read_back(
    w: &Workload,
    file: &File,
    block: bool,
    clock: &MonotonicClock,
    agg: &Aggregator,
    r: &mut VerifyResult,
) {
    let bs = w.bs[0].bytes as usize;
    let pool = DataPool::new(w.data, w.max_bs(), w.randseed, true);
    let mut blocks: Vec<(u64, Vec<Written>)> = plan(w, &r.writes_per_job).into_iter().collect();
    blocks.sort_unstable_by_key(|b| b.0);
    let per_read = (READ_BYTES / bs)
        .min(BUFFER_BUDGET / (bs * w.iodepth.max(1) as usize))
        .max(1);
    let runs: Vec<(usize, usize)> = {
        let mut at = 0;
        adjacent_runs(&blocks, bs as u64, per_read)
            .map(|run| {
                let r = (at, run.len());
                at += run.len();
                r
            })
            .collect()
    };
    let n = w.numjobs.max(1) as usize;
    let abort = AtomicBool::new(false);
    let mut sources: Vec<PassSource<'_>> = (0..n)
        .map(|j| PassSource {
            id: j as u32,
            w,
            blocks: &blocks,
            runs: runs.iter().copied().skip(j).step_by(n).collect(),
            next: 0,
            read_bytes: per_read * bs,
            content: Content {
                pool: pool.clone(),
                job: j as u32,
            },
            rec: Recorder::new(agg, j, u64::MAX),
            expected: vec![0u8; bs],
            found: VerifyResult::unchecked(Vec::new()),
            checked: 0,
            bad: 0,
            abort: &abort,
        })
        .collect();
    let notes = Mutex::new(Vec::new());
    let workers_busy = Mutex::new(None);
    let ctx = BackendCtx {
        workload: w,
        clock,
        file: Some(file),
        block,
        notes: &notes,
        workers_busy: &workers_busy,
    };
    let served = match w.ioengine {
        // An engine that moves no bytes cannot read back: the sync engine does.
        IoEngine::Null | IoEngine::Sim | IoEngine::Sync => {
            crate::backend::sync::SyncBackend.run(&mut sources, &ctx)
        }
        IoEngine::IoUring | IoEngine::Libaio => {
            crate::backend::uring::UringBackend::prepare(file, w).run(&mut sources, &ctx)
        }
    };
    let (mut checked, mut bad) = (0, 0);
    for s in sources {
        checked += s.checked;
        bad += s.bad;
        r.classes.add_all(&s.found.classes);
        r.mismatches.extend(s.found.mismatches);
        if r.error.is_none() {
            r.error = s.found.error;
        }
    }
    if let Err(e) = served {
        r.error
            .get_or_insert(format!("the read-back pass could not run: {e}"));
    }
    keep_first(&mut r.mismatches);
    r.blocks_checked = Some(checked);
    r.blocks_bad = Some(bad);
}

/// The first [`LISTED_MISMATCHES`] by offset.
fn keep_first(m: &mut Vec<Mismatch>) {
    m.sort_unstable_by_key(|m| m.offset_bytes);
    m.truncate(LISTED_MISMATCHES);
}

/// One job's share of the pass: runs of adjacent blocks (`(first block, blocks)` in
/// `blocks`), read in offset order.
struct PassSource<'a> {
    id: u32,
    w: &'a Workload,
    blocks: &'a [(u64, Vec<Written>)],
    runs: Vec<(usize, usize)>,
    next: usize,
    read_bytes: usize,
    content: Content,
    rec: Recorder<'a>,
    expected: Vec<u8>,
    /// Its classes, mismatches and error (the counts below).
    found: VerifyResult,
    checked: u64,
    bad: u64,
    /// Set by the first source whose read fails: every source stops.
    abort: &'a AtomicBool,
}

impl PassSource<'_> {
    /// The run read at `offset`.
    fn run_at(&self, offset: u64) -> Option<(usize, usize)> {
        let i = self
            .runs
            .binary_search_by_key(&offset, |r| self.blocks[r.0].0)
            .ok()?;
        Some(self.runs[i])
    }
}

impl IoSource for PassSource<'_> {
    fn id(&self) -> u32 {
        self.id
    }
    fn pacing(&self) -> Pacing {
        Pacing::Closed
    }
    fn next(&mut self, _now_ns: u64) -> Next {
        let Some(&(first, n)) = self
            .runs
            .get(self.next)
            .filter(|_| !self.abort.load(Ordering::Relaxed))
        else {
            return Next::Done;
        };
        self.next += 1;
        let bs = self.w.bs[0].bytes;
        Next::Io(AnyOp::from(IoOp {
            dir: Dir::Read,
            offset: self.blocks[first].0,
            len: bs * n as u32,
        }))
    }
    fn may_issue(&self, _now_ns: u64) -> bool {
        !self.abort.load(Ordering::Relaxed)
    }
    fn content(&self) -> &Content {
        &self.content
    }
    fn plan(&mut self, _op: &AnyOp) -> Option<Plan> {
        None
    }
    fn data_time(&mut self, _made_ns: u64, _held_ns: u64) {}
    fn complete(&mut self, op: &AnyOp, submit_ns: u64, done_ns: u64, result: i64) -> bool {
        if result == op.len_bytes as i64 {
            self.rec
                .record(Dir::Read, op.len_bytes as u32, submit_ns, done_ns);
            return true;
        }
        self.rec.record_error(Dir::Read, done_ns);
        let e = if result < 0 {
            std::io::Error::from_raw_os_error(-result as i32)
        } else {
            std::io::ErrorKind::UnexpectedEof.into()
        };
        self.found
            .error
            .get_or_insert_with(|| read_error(&e, op.len_bytes as usize, op.offset_bytes));
        self.abort.store(true, Ordering::Relaxed);
        false
    }
    fn finish(&mut self) {
        self.rec.finish();
    }
    fn slot_bytes(&self, _slots: usize, _max_bs: usize) -> usize {
        self.read_bytes
    }
    fn per_write_data(&self) -> bool {
        false
    }
    fn init_buffer(&self, _buf: &mut [u8]) {}
    fn wants_read_check(&self) -> bool {
        true
    }
    /// Check each block of the run read (never stops the pass: every block is
    /// classified).
    fn check_read(&mut self, op: &AnyOp, buf: &[u8]) -> bool {
        let Some((first, n)) = self.run_at(op.offset_bytes) else {
            return true;
        };
        let bs = self.w.bs[0].bytes as usize;
        let pool = &self.content.pool;
        for ((offset, writes), got) in self.blocks[first..first + n]
            .iter()
            .zip(buf.chunks_exact(bs))
        {
            self.checked += 1;
            if let Some(m) = worst_mismatch(self.w, pool, *offset, got, writes, &mut self.expected)
            {
                self.bad += 1;
                self.found.classes.add(m.class);
                self.found.mismatches.push(m);
                if self.found.mismatches.len() > 2 * LISTED_MISMATCHES {
                    keep_first(&mut self.found.mismatches);
                }
            }
        }
        true
    }
}

/// `drivelab verify TARGET --from RESULT`: the pass alone, later (its result).
pub fn check(w: &Workload, file: &File, block: bool, writes_per_job: Vec<u64>) -> VerifyResult {
    run(w, file, block, writes_per_job).result
}

impl Pass {
    /// Count the pass in the run's facts (before they are assembled): its intervals
    /// after the run's, its reads in the read totals, its time and CPU in the run's.
    pub fn count_in(&mut self, f: &mut Facts, interval_ns: u64) {
        let next = f.records.last().map_or(0, |r| r.index + 1);
        let cum_write = f.records.last().map_or(0, |r| r.cum_write_bytes);
        for mut r in self.records.drain(..) {
            r.index += next;
            r.start_ns += next * interval_ns;
            r.cum_write_bytes = cum_write;
            f.records.push(r);
        }
        f.hists[0].merge(&self.hist);
        f.bytes[0] += self.bytes;
        f.completed_ios += self.hist.count();
        f.cpu_s = (f.cpu_s.0 + self.cpu_s.0, f.cpu_s.1 + self.cpu_s.1);
        let drain = f.end_ns - f.grid_end_ns;
        f.end_ns = f.origin_ns + next * interval_ns + self.elapsed_ns;
        f.grid_end_ns = f.end_ns - drain;
        f.verify_pass_ns = self.elapsed_ns;
        self.result.pass_ns = Some(self.elapsed_ns);
        self.result.pass_first_index = Some(next);
    }
}
