//! One job (fio's word for a worker): its generator, its write content, its recorder and
//! its limits. Backends drive jobs; a job decides what comes next and when to stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::data::DataPool;
use crate::gen::OpGen;
use crate::op::{AnyOp, Dir, IoOp};
use crate::series::Recorder;
use crate::source::{Content, IoSource, Next, Pacing, Plan};
use crate::verify_backlog::{Backlog, CHECK_TAG};

/// An I/O that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    pub job: u32,
    pub dir: Dir,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    /// errno, or 0 for a short transfer.
    pub errno: i32,
    pub message: String,
    /// Relative to the start of the run.
    pub at_ns: u64,
}

/// Errors kept in full per job; beyond this only counted.
const KEPT_ERRORS: usize = 100;

/// Flags every job watches.
pub struct StopFlags<'a> {
    /// Set by the user (Ctrl-C, SIGTERM): drain and stop.
    pub user: &'a AtomicBool,
    /// Set by the engine after an I/O error without `continue_on_error`.
    pub abort: AtomicBool,
}

impl StopFlags<'_> {
    #[inline(always)]
    pub fn stopped(&self) -> bool {
        self.user.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// One worker's state.
pub struct Job<'a> {
    pub id: u32,
    gen: OpGen,
    content: Content,
    pub rec: Recorder<'a>,
    stop: &'a StopFlags<'a>,
    origin_ns: u64,
    deadline_ns: u64,
    /// Start of the measured time (the end of the ramp).
    window_start_ns: u64,
    /// Latency of measured I/Os spent outside the time the job had work (before the
    /// end of the ramp, after the deadline): what the queue depth held leaves out.
    pub outside_ns: u64,
    /// The part after the end of the ramp of the latency of the I/Os issued in the ramp
    /// and completed after it, which count in no total (they are the ramp's) but in the
    /// queue depth held (see `run::held_inflight`).
    pub closing_ns: u64,
    /// The last completion so far (0: none), failed ones included: where a run ends.
    pub last_done_ns: u64,
    bytes_left: Option<u64>,
    continue_on_error: bool,
    writes: u64,
    /// Writes that came back (done or failed): content made ahead for a write the
    /// deadline left unissued is not among them.
    writes_back: u64,
    /// I/Os handed out so far: a job hands out at least one whatever the deadline.
    issued: u64,
    pub errors: Vec<IoErrorRecord>,
    pub error_count: u64,
    /// Time spent preparing write content (ns), when measured by the backend.
    pub data_ns: u64,
    /// The part of it during which the target waited: made while fewer I/Os than the
    /// depth were in flight (at the sync engine, with none), not ahead of time.
    pub data_held_ns: u64,
    pub data_bytes: u64,
    /// `--verify-backlog`: the writes to read back and check during the run.
    pub backlog: Option<Box<Backlog>>,
}

impl<'a> Job<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        gen: OpGen,
        data: Arc<DataPool>,
        rec: Recorder<'a>,
        stop: &'a StopFlags<'a>,
        origin_ns: u64,
        deadline_ns: Option<u64>,
        bytes_budget: Option<u64>,
        continue_on_error: bool,
    ) -> Job<'a> {
        Job {
            id,
            gen,
            content: Content {
                pool: data,
                job: id,
            },
            rec,
            stop,
            origin_ns,
            deadline_ns: deadline_ns.unwrap_or(u64::MAX),
            window_start_ns: origin_ns,
            outside_ns: 0,
            closing_ns: 0,
            last_done_ns: 0,
            bytes_left: bytes_budget,
            continue_on_error,
            writes: 0,
            writes_back: 0,
            issued: 0,
            errors: Vec::new(),
            error_count: 0,
            data_ns: 0,
            data_held_ns: 0,
            data_bytes: 0,
            backlog: None,
        }
    }

    /// Read back and check the blocks written after every `every` writes
    /// (`--verify-backlog`, see [`crate::verify_backlog`]); `seed`: the run's, `bs` its
    /// one block size.
    pub fn with_backlog(mut self, every: u64, seed: u64, bs: u32) -> Self {
        self.backlog = Some(Box::new(Backlog::new(every, seed, self.id, bs)));
        self
    }

    /// The backlog's next read, when a check is due and the job may still issue.
    #[cold]
    fn backlog_read(&mut self, now_ns: u64) -> Option<AnyOp> {
        if !Job::may_issue(self, now_ns) {
            return None;
        }
        let b = self.backlog.as_mut()?;
        let offset = b.next_read()?;
        let len = b.block_bytes();
        self.issued += 1;
        let mut op = AnyOp::from(IoOp {
            dir: Dir::Read,
            offset,
            len,
        });
        op.tag = CHECK_TAG;
        Some(op)
    }

    /// The generator is done: with its byte budget spent, the backlog checks the writes
    /// since its last check (each as it comes back: the job waits for those in flight);
    /// at the deadline or when stopped, the job is done and they are left to the pass.
    #[cold]
    fn backlog_tail(&mut self, now_ns: u64) -> Next {
        if self.bytes_left != Some(0) || !Job::may_issue(self, now_ns) {
            return Next::Done;
        }
        let Some(b) = self.backlog.as_mut() else {
            return Next::Done;
        };
        b.flush();
        if let Some(op) = self.backlog_read(now_ns) {
            return Next::Io(op);
        }
        match self.backlog.as_ref() {
            Some(b) if b.waiting() => Next::Completion,
            _ => Next::Done,
        }
    }

    /// The next I/O to issue at time `now_ns`, or None when the job is done (deadline
    /// passed, byte budget spent, stop requested). A job that has not issued one I/O by
    /// its deadline (its thread starved of CPU on a busy machine) still issues one: a
    /// step is never a row of zeros for want of a time slice.
    #[inline(always)]
    pub fn next_op(&mut self, now_ns: u64) -> Option<IoOp> {
        if (now_ns >= self.deadline_ns && self.issued > 0) || self.stop.stopped() {
            return None;
        }
        self.issued += 1;
        let mut op = self.gen.next_op();
        if let Some(left) = self.bytes_left.as_mut() {
            if *left == 0 {
                return None;
            }
            if !self.gen.fit(&mut op, *left) {
                *left = 0;
                return None;
            }
            *left -= op.len as u64;
        }
        Some(op)
    }

    /// Where the measured time starts (the end of the ramp; the origin without one).
    pub fn set_window_start(&mut self, at_ns: u64) {
        self.window_start_ns = at_ns;
    }

    /// Whether an I/O prepared earlier may still be issued at `now_ns` (before the
    /// deadline, not stopped).
    #[inline(always)]
    pub fn may_issue(&self, now_ns: u64) -> bool {
        now_ns < self.deadline_ns && !self.stop.stopped()
    }

    /// Writes filled so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Writes that came back (a verifying run's generations `0..writes_back`: a write
    /// prepared ahead and left unissued at the deadline has the highest generation).
    pub fn writes_back(&self) -> u64 {
        self.writes_back
    }

    /// Whether writes need fresh content per I/O.
    pub fn per_write_data(&self) -> bool {
        self.content.pool.per_write()
    }

    /// Fill a buffer once at start (all patterns).
    pub fn init_buffer(&self, buf: &mut [u8]) {
        self.content.pool.init_buffer(buf);
    }

    /// Write content time spent while the target waited (counted in both totals).
    #[inline(always)]
    pub fn data_held(&mut self, ns: u64) {
        self.data_ns += ns;
        self.data_held_ns += ns;
    }

    /// [`Job::fill`] in two halves, for content made on another thread: what write `op`
    /// gets (the pool's pick and the write's number), counted now; `None` when it needs
    /// none. The content is then `pool().write_content(buf, op.offset, pick, seq, id)`.
    pub fn plan_fill(&mut self, op: &IoOp) -> Option<(u64, u64)> {
        if op.dir != Dir::Write || !self.content.pool.per_write() {
            return None;
        }
        let pick = self.gen.data_rng().u64(..);
        let seq = self.writes;
        self.writes += 1;
        self.data_bytes += op.len as u64;
        if let Some(b) = self.backlog.as_mut() {
            b.planned(op.offset, seq, pick);
        }
        Some((pick, seq))
    }

    /// The write content's pool.
    pub fn pool(&self) -> &Arc<DataPool> {
        &self.content.pool
    }

    /// Put the content of write `op` into `buf` (`buf.len() == op.len`).
    #[inline(always)]
    pub fn fill(&mut self, op: &IoOp, buf: &mut [u8]) {
        if let Some((pick, seq)) = self.plan_fill(op) {
            self.content
                .pool
                .write_content(buf, op.offset, pick, seq, self.id);
        }
    }

    /// A completion: `result` is the byte count or a negative errno.
    /// Returns false when the run must stop because of an error.
    #[inline(always)]
    pub fn complete(&mut self, op: &IoOp, submit_ns: u64, done_ns: u64, result: i64) -> bool {
        self.last_done_ns = self.last_done_ns.max(done_ns);
        self.writes_back += u64::from(op.dir == Dir::Write);
        if let Some(b) = self.backlog.as_mut().filter(|_| op.dir == Dir::Write) {
            b.written(op.offset, result == op.len as i64);
        }
        if result == op.len as i64 {
            if submit_ns < self.window_start_ns && done_ns >= self.window_start_ns {
                self.close_ramp(done_ns);
                return true;
            }
            self.rec.record(op.dir, op.len, submit_ns, done_ns);
            if submit_ns < self.window_start_ns || done_ns > self.deadline_ns {
                self.outside(submit_ns, done_ns);
            }
            true
        } else {
            self.error(op, done_ns, result)
        }
    }

    /// An I/O issued in the ramp and completed after it belongs to the ramp (a run with
    /// a ramp measures the I/Os issued between the ramp's end and the deadline, those
    /// drained after the deadline included: see `run::span_end`). Like the ramp's
    /// intervals it counts in no total, and as it completed after the ramp's last
    /// interval (which the job may have handed over already), in no interval either;
    /// its time after the ramp's end counts in the depth held.
    #[cold]
    fn close_ramp(&mut self, done_ns: u64) {
        self.closing_ns += done_ns - self.window_start_ns;
    }

    #[cold]
    fn outside(&mut self, submit_ns: u64, done_ns: u64) {
        self.outside_ns +=
            outside_window(submit_ns, done_ns, self.window_start_ns, self.deadline_ns);
    }

    #[cold]
    fn error(&mut self, op: &IoOp, at_ns: u64, result: i64) -> bool {
        let (errno, message) = if result < 0 {
            let e = (-result) as i32;
            (e, std::io::Error::from_raw_os_error(e).to_string())
        } else {
            (0, format!("short transfer: {result} of {} bytes", op.len))
        };
        self.error_count += 1;
        self.rec.record_error(op.dir, at_ns);
        if self.errors.len() < KEPT_ERRORS {
            self.errors.push(IoErrorRecord {
                job: self.id,
                dir: op.dir,
                offset_bytes: op.offset,
                len_bytes: op.len,
                errno,
                message,
                at_ns: at_ns.saturating_sub(self.origin_ns),
            });
        }
        if !self.continue_on_error {
            self.stop.abort.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// The generator's jobs as a backend's source: closed loop, reads and writes only.
impl IoSource for Job<'_> {
    fn id(&self) -> u32 {
        self.id
    }
    fn pacing(&self) -> Pacing {
        Pacing::Closed
    }
    #[inline(always)]
    fn next(&mut self, now_ns: u64) -> Next {
        if self.backlog.as_ref().is_some_and(|b| b.due()) {
            if let Some(op) = self.backlog_read(now_ns) {
                return Next::Io(op);
            }
        }
        match self.next_op(now_ns) {
            Some(op) => Next::Io(op.into()),
            None if self.backlog.is_some() => self.backlog_tail(now_ns),
            None => Next::Done,
        }
    }
    #[inline(always)]
    fn may_issue(&self, now_ns: u64) -> bool {
        Job::may_issue(self, now_ns)
    }
    fn content(&self) -> &Content {
        &self.content
    }
    #[inline(always)]
    fn plan(&mut self, op: &AnyOp) -> Option<Plan> {
        self.plan_fill(&op.rw()?)
    }
    fn data_time(&mut self, made_ns: u64, held_ns: u64) {
        self.data_ns += made_ns;
        self.data_held_ns += held_ns;
    }
    #[inline(always)]
    fn complete(&mut self, op: &AnyOp, submit_ns: u64, done_ns: u64, result: i64) -> bool {
        let Some(rw) = op.rw() else {
            return true;
        };
        let go = Job::complete(self, &rw, submit_ns, done_ns, result);
        if op.tag == CHECK_TAG {
            if let Some(b) = self.backlog.as_mut() {
                b.read_done(op.offset_bytes);
            }
        }
        go
    }
    fn finish(&mut self) {
        self.rec.finish();
    }
    fn wants_read_check(&self) -> bool {
        self.backlog.is_some()
    }
    /// A backlog read's bytes: checked against what was written (a mismatch stops every
    /// job, as an I/O error does).
    fn check_read(&mut self, op: &AnyOp, buf: &[u8]) -> bool {
        if op.tag != CHECK_TAG {
            return true;
        }
        let Some(b) = self.backlog.as_mut() else {
            return true;
        };
        if b.check(&self.content.pool, op.offset_bytes, buf) {
            return true;
        }
        self.stop.abort.store(true, Ordering::Relaxed);
        false
    }
}

/// The part of an I/O's latency (`submit_ns` to `done_ns`) outside the window `[start_ns,
/// end_ns]`, for an I/O that counts in the totals (done at or after `start_ns`; those
/// done within a ramp count nowhere, so nothing of theirs is subtracted).
pub fn outside_window(submit_ns: u64, done_ns: u64, start_ns: u64, end_ns: u64) -> u64 {
    if done_ns < start_ns {
        return 0;
    }
    let before = start_ns.saturating_sub(submit_ns);
    let after = done_ns.saturating_sub(end_ns.max(submit_ns));
    before + after
}

#[cfg(test)]
mod tests {
    use super::{outside_window, Job, StopFlags};
    use crate::data::DataPool;
    use crate::gen::{tests::workload, OpGen};
    use crate::op::{Dir, IoOp};
    use crate::series::{Aggregator, Recorder};
    use crate::spec::RwMode;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn the_io_in_flight_at_the_end_of_the_ramp_counts_in_the_ramp() {
        // Ramp 100 ns on a 100 ns grid, deadline at 400 ns.
        let w = workload(RwMode::RandRead, 1);
        let agg = Aggregator::new(1_000, 100, 1, 1);
        let user = AtomicBool::new(false);
        let stop = StopFlags {
            user: &user,
            abort: AtomicBool::new(false),
        };
        let pool = DataPool::new(w.data, 4096, 7, false);
        let rec = Recorder::new(&agg, 0, 3);
        let mut job = Job::new(
            0,
            OpGen::new(&w, 0),
            pool,
            rec,
            &stop,
            1_000,
            Some(1_400),
            None,
            false,
        );
        job.set_window_start(1_100);
        let op = IoOp {
            dir: Dir::Read,
            offset: 0,
            len: 4096,
        };
        assert!(job.complete(&op, 1_050, 1_090, 4096)); // in the ramp
        assert!(job.complete(&op, 1_150, 1_160, 4096)); // measured
        assert!(job.complete(&op, 1_060, 1_250, 4096)); // issued in it: the ramp's
        assert!(job.complete(&op, 1_090, 1_130, 4096));
        assert!(job.complete(&op, 1_380, 1_420, 4096)); // drained, measured

        // The ramp's I/Os' time after its end, for the depth held: 150 + 30 ns; the
        // drained one's after the deadline, left out of it: 20 ns.
        assert_eq!(job.closing_ns, 180);
        assert_eq!(job.outside_ns, 20);
        assert_eq!(job.last_done_ns, 1_420);
        job.rec.finish();
        drop(job);
        let (recs, totals, _) = agg.finish(1_400, 1_420);
        assert!(recs.first().unwrap().ramp);
        assert_eq!(recs.first().unwrap().all.ops, 1);
        assert_eq!(recs.iter().map(|r| r.all.ops).sum::<u64>(), 3);
        assert_eq!(totals[0].count(), 2);
    }

    #[test]
    fn latency_outside_the_window_is_what_lies_before_its_start_or_after_its_end() {
        // Inside: nothing.
        assert_eq!(outside_window(10, 20, 0, 100), 0);
        // Straddles the start: the part before it.
        assert_eq!(outside_window(10, 30, 25, 100), 15);
        // Drained after the deadline: the part after it.
        assert_eq!(outside_window(90, 130, 0, 100), 30);
        // Submitted after the deadline (cannot happen, but no underflow): all of it.
        assert_eq!(outside_window(110, 130, 0, 100), 20);
        // Spans the whole window: both ends.
        assert_eq!(outside_window(0, 200, 50, 100), 150);
        // Completed within the ramp: it counts nowhere.
        assert_eq!(outside_window(0, 20, 50, 100), 0);
    }
}
