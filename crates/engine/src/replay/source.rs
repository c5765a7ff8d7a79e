//! A trace's I/Os as a backend's source ([`IoSource`]): each handed out when due (or,
//! `--afap`, when the trace's concurrency allows), and everything a replay measures of
//! them.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{ReplayIo, ScheduleCounts, Timing, TraceSchedule, LATE_NS};
use crate::data::DataPool;
use crate::hist::Histogram;
use crate::job::IoErrorRecord;
use crate::op::{AnyOp, Dir};
use crate::result::*;
use crate::series::{Aggregator, Recorder};
use crate::source::{Content, IoSource, Next, Pacing, Plan};
use crate::spec::DataPattern;
use drivelab_trace::Op;

/// What held up an I/O that was due (see [`LateCauses`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Held {
    QueueLimit,
    Discard,
    BlockingSubmit,
    Nothing,
}

struct OpAcc {
    h: Histogram,
    bytes: u64,
}

fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
        Op::Discard => 3,
    }
}

/// A trace replayed: the schedule's I/Os in order, and what was measured of them.
pub struct TraceSource<'a, 'l> {
    sched: &'l mut dyn TraceSchedule,
    /// The next I/O, read ahead of its time.
    pending: Option<ReplayIo>,
    source_err: Option<String>,
    afap: bool,
    /// The most I/Os in flight the backend allows (its depth).
    max_out: u32,
    stop: &'a AtomicBool,
    /// The replay's start on the backend's clock: when it first asked for an I/O.
    origin: Option<u64>,
    started: Option<std::time::Instant>,
    /// The latest time seen (a question or a completion): where the replay ends.
    last_ns: u64,
    /// Open loop: idle until this long after the start once the I/Os are done.
    end_due: Option<u64>,
    content: Content,
    rng: fastrand::Rng,
    writes: u64,
    /// The I/Os in flight by tag, with what held each up.
    slots: Vec<(ReplayIo, Held)>,
    free: Vec<u32>,
    inflight: u32,
    most: u32,
    /// Until when the queue was at its limit (the last completion that freed a slot
    /// from it); when the last I/O was handed out (none since a completion).
    limit_until: u64,
    blocked: Option<(u64, Held)>,
    handed: Option<(u64, u32)>,
    // What was measured.
    rec: Recorder<'a>,
    ops: [OpAcc; 4],
    lag: Option<Histogram>,
    late: u64,
    late_causes: LateCauses,
    first_lag: Option<u64>,
    /// The first I/O handed out (whose lag is the start-up that remains).
    first_seq: Option<u64>,
    ratio: Histogram,
    faster: u64,
    slower: u64,
    same: u64,
    fua: u64,
    issued: u64,
    errors: Vec<IoErrorRecord>,
    error_count: u64,
    log: Option<Box<dyn Write + Send + 'l>>,
    log_failed: Option<String>,
}

impl<'a, 'l> TraceSource<'a, 'l> {
    /// `first`: the schedule's first I/O, read before the clock started; `max_out`:
    /// the backend's depth.
    pub fn new(
        sched: &'l mut dyn TraceSchedule,
        first: Option<ReplayIo>,
        agg: &'a Aggregator,
        timing: Timing,
        stop: &'a AtomicBool,
        max_out: u32,
        log: Option<Box<dyn Write + Send + 'l>>,
    ) -> TraceSource<'a, 'l> {
        let hist4 = || OpAcc {
            h: Histogram::new(),
            bytes: 0,
        };
        let afap = matches!(timing, Timing::Afap);
        TraceSource {
            end_due: first.is_none().then(|| sched.end_due_ns()).flatten(),
            sched,
            pending: first,
            source_err: None,
            afap,
            max_out: max_out.max(1),
            stop,
            origin: None,
            started: None,
            last_ns: 0,
            content: Content {
                pool: DataPool::new(DataPattern::Random, 1 << 20, 0x7E91A7, true),
                job: 0,
            },
            rng: fastrand::Rng::with_seed(0x7E91A7),
            writes: 0,
            slots: Vec::new(),
            free: Vec::new(),
            inflight: 0,
            most: 0,
            limit_until: 0,
            blocked: None,
            handed: None,
            rec: Recorder::new(agg, 0, u64::MAX),
            ops: [hist4(), hist4(), hist4(), hist4()],
            lag: (!afap).then(Histogram::new),
            late: 0,
            late_causes: LateCauses::default(),
            first_lag: None,
            first_seq: None,
            ratio: Histogram::new(),
            faster: 0,
            slower: 0,
            same: 0,
            fua: 0,
            issued: 0,
            errors: Vec::new(),
            error_count: 0,
            log,
            log_failed: None,
        }
    }

    /// The replay's start on the backend's clock (None: it never asked).
    pub fn origin(&self) -> Option<u64> {
        self.origin
    }

    /// The last time the replay saw (its end).
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// Wall time from `since` to the replay's start.
    pub fn setup_ns(&self, since: std::time::Instant) -> u64 {
        self.started
            .map_or(0, |t| t.saturating_duration_since(since).as_nanos() as u64)
    }

    pub fn max_out(&self) -> u32 {
        self.max_out
    }

    pub fn counts(&self) -> ScheduleCounts {
        self.sched.counts()
    }

    pub fn log_failed(&self) -> Option<&String> {
        self.log_failed.as_ref()
    }

    pub fn lag_p99_ns(&self) -> u64 {
        self.lag
            .as_ref()
            .and_then(|h| h.percentile(99.0))
            .unwrap_or(0)
    }

    /// The I/O errors (the first 100), their count, and the trace's own error.
    pub fn into_errors(self) -> (Vec<IoErrorRecord>, u64, Option<String>) {
        (self.errors, self.error_count, self.source_err)
    }

    /// The replay's own measurements (its schedule's counts filled in by the caller).
    pub fn measured(
        &self,
        timing: Timing,
        discards: bool,
        setup_ns: u64,
        replay_ns: u64,
    ) -> ReplayMeasured {
        let kept_up = self.afap
            || self.late < super::LATE_COUNT_MIN
            || (self.late as f64) <= super::LATE_SHARE_LIMIT * self.issued.max(1) as f64;
        let compared = self.faster + self.slower + self.same;
        ReplayMeasured {
            timing,
            discards_replayed: discards,
            ios_issued: self.issued,
            ios_completed: self.ops.iter().map(|a| a.h.count()).sum(),
            read: self.op_json(Op::Read),
            write: self.op_json(Op::Write),
            flush: self.op_json(Op::Flush),
            discard: self.op_json(Op::Discard),
            fua_writes: self.fua,
            lag: self.lag.as_ref().map(|h| h.to_json()),
            late_ios: self.late,
            late_causes: self.late_causes,
            setup_ns,
            first_issue_lag_ns: self.first_lag,
            kept_up,
            max_outstanding: self.most,
            replay_ns,
            comparison: (compared > 0).then(|| Comparison {
                compared_ios: compared,
                faster_ios: self.faster,
                slower_ios: self.slower,
                same_ios: self.same,
                ratio_permille: self.ratio.to_json(),
            }),
            schedule: ScheduleCounts::default(),
        }
    }

    fn op_json(&self, op: Op) -> OpMeasured {
        let a = &self.ops[op_index(op)];
        OpMeasured {
            ios: a.h.count(),
            bytes: a.bytes,
            latency: a.h.to_json(),
        }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.error_count > 0
    }

    /// Hand `io` out at `now` (due at `due`): what held it up, its tag.
    fn hand_out(&mut self, io: ReplayIo, now: u64, due: u64) -> AnyOp {
        let why = match self.blocked {
            _ if due < self.limit_until => Held::QueueLimit,
            Some((until, what)) if due < until => what,
            _ => Held::Nothing,
        };
        let tag = match self.free.pop() {
            Some(t) => {
                self.slots[t as usize] = (io, why);
                t
            }
            None => {
                self.slots.push((io, why));
                self.slots.len() as u32 - 1
            }
        };
        self.first_seq.get_or_insert(io.seq);
        self.issued += 1;
        self.fua += (io.fua && io.op == Op::Write) as u64;
        self.inflight += 1;
        self.most = self.most.max(self.inflight);
        self.handed = Some((now, tag));
        self.pending = match self.sched.next_io() {
            Ok(p) => p,
            Err(e) => {
                self.source_err = Some(e);
                None
            }
        };
        if self.pending.is_none() && self.source_err.is_none() {
            self.end_due = self.sched.end_due_ns();
        }
        AnyOp { tag, ..io.any_op() }
    }

    /// The issue lag of `io`, issued at `at` (open loop).
    fn lagged(&mut self, io: &ReplayIo, at: u64, why: Held) {
        let Some(h) = &mut self.lag else { return };
        let origin = self.origin.unwrap_or(0);
        let lag = at.saturating_sub(origin.saturating_add(io.due_ns));
        h.record(lag.min(crate::hist::MAX_TRACKED_NS));
        if self.first_seq == Some(io.seq) {
            self.first_lag = Some(lag);
        }
        if lag > LATE_NS {
            self.late += 1;
            let c = &mut self.late_causes;
            *match why {
                Held::QueueLimit => &mut c.queue_limit_ios,
                Held::Discard => &mut c.discard_ios,
                Held::BlockingSubmit => &mut c.blocking_submit_ios,
                Held::Nothing => &mut c.cpu_ios,
            } += 1;
        }
    }

    /// Count a completion; false when it failed.
    fn measure(&mut self, io: &ReplayIo, issue: u64, done: u64, result: i64) -> bool {
        let want = match io.op {
            Op::Read | Op::Write => io.len_bytes as i64,
            _ => 0,
        };
        if result != want {
            self.error(io, done, result);
            return false;
        }
        let lat = done.saturating_sub(issue);
        let a = &mut self.ops[op_index(io.op)];
        a.h.record(lat.min(crate::hist::MAX_TRACKED_NS));
        a.bytes += io.len_bytes;
        match io.op {
            Op::Read => self.rec.record(Dir::Read, io.len_bytes as u32, issue, done),
            Op::Write => self
                .rec
                .record(Dir::Write, io.len_bytes as u32, issue, done),
            _ => {}
        }
        if let Some(orig) = io.orig_service_ns.filter(|&o| o > 0) {
            let r = (lat as u128 * 1000 / orig as u128).min(crate::hist::MAX_TRACKED_NS as u128);
            self.ratio.record(r as u64);
            match lat.cmp(&orig) {
                std::cmp::Ordering::Less => self.faster += 1,
                std::cmp::Ordering::Greater => self.slower += 1,
                std::cmp::Ordering::Equal => self.same += 1,
            }
        }
        self.log_line(io, issue, done);
        true
    }

    fn log_line(&mut self, io: &ReplayIo, issue: u64, done: u64) {
        let Some(w) = self.log.as_mut() else { return };
        let o = self.origin.unwrap_or(0);
        if let Err(e) = writeln!(
            w,
            "{},{},{},{},{},{},{}",
            io.seq,
            io.op.name(),
            io.offset_bytes,
            io.len_bytes,
            io.due_ns,
            issue.saturating_sub(o),
            done.saturating_sub(o)
        ) {
            self.log_failed = Some(e.to_string());
            self.log = None;
        }
    }

    #[cold]
    fn error(&mut self, io: &ReplayIo, at: u64, result: i64) {
        self.error_count += 1;
        if self.errors.len() >= 100 {
            return;
        }
        let (errno, message) = if result < 0 {
            let e = (-result) as i32;
            (e, std::io::Error::from_raw_os_error(e).to_string())
        } else {
            (
                0,
                format!("short transfer: {result} of {} bytes", io.len_bytes),
            )
        };
        self.errors.push(IoErrorRecord {
            job: 0,
            dir: if io.op == Op::Read {
                Dir::Read
            } else {
                Dir::Write
            },
            offset_bytes: io.offset_bytes,
            len_bytes: io.len_bytes as u32,
            errno,
            message: format!("{} (trace I/O {}, {})", message, io.seq, io.op.name()),
            at_ns: at.saturating_sub(self.origin.unwrap_or(0)),
        });
    }
}

impl IoSource for TraceSource<'_, '_> {
    fn id(&self) -> u32 {
        0
    }

    fn pacing(&self) -> Pacing {
        Pacing::Open
    }

    fn next(&mut self, now: u64) -> Next {
        let origin = *self.origin.get_or_insert_with(|| {
            self.started = Some(std::time::Instant::now());
            now
        });
        self.last_ns = self.last_ns.max(now);
        let handed = self.handed.take();
        if self.stopping() {
            self.pending = None;
            return Next::Done;
        }
        let Some(io) = self.pending else {
            // The rest of the window is idle time of the trace's too.
            return match self.end_due.filter(|_| !self.afap) {
                Some(end) if now < origin.saturating_add(end) => Next::At(origin + end),
                _ => Next::Done,
            };
        };
        if self.inflight >= self.max_out || (self.afap && self.inflight >= io.depth) {
            return Next::Completion;
        }
        let due = origin.saturating_add(io.due_ns);
        if !self.afap && now < due {
            return Next::At(due);
        }
        // Handing the last I/O over took long (the kernel started it inline).
        if let Some((t, tag)) = handed.filter(|&(t, _)| now - t > LATE_NS) {
            let what = match self.slots[tag as usize].0.op {
                Op::Discard => Held::Discard,
                _ => Held::BlockingSubmit,
            };
            self.blocked = Some((now.max(t), what));
        }
        Next::Io(self.hand_out(io, now, due))
    }

    fn may_issue(&self, _now: u64) -> bool {
        !self.stopping()
    }

    fn upcoming(&self) -> Option<AnyOp> {
        self.pending
            .filter(|_| !self.stopping())
            .map(|io| io.any_op())
    }

    /// Buffers for 16 MiB of I/O in flight, from 4 KiB to 1 MiB each (a larger I/O of
    /// the trace gets its own).
    fn slot_bytes(&self, slots: usize, max_bs: usize) -> usize {
        ((16 << 20) / slots.max(1))
            .clamp(4096, 1 << 20)
            .next_multiple_of(4096)
            .max(max_bs)
    }

    fn content(&self) -> &Content {
        &self.content
    }

    fn plan(&mut self, op: &AnyOp) -> Option<Plan> {
        if op.op != Op::Write {
            return None;
        }
        let seq = self.writes;
        self.writes += 1;
        Some((self.rng.u64(..), seq))
    }

    fn data_time(&mut self, _made_ns: u64, _held_ns: u64) {}

    fn complete(&mut self, op: &AnyOp, submit_ns: u64, done_ns: u64, result: i64) -> bool {
        let (io, why) = self.slots[op.tag as usize];
        self.free.push(op.tag);
        if self.inflight >= self.max_out {
            self.limit_until = done_ns;
        }
        self.inflight -= 1;
        self.last_ns = self.last_ns.max(done_ns);
        // Completed as it was handed over (a block device's discard): the thread was
        // held that long.
        if let Some((t, _)) = self.handed.take().filter(|&(_, tag)| tag == op.tag) {
            if done_ns.saturating_sub(t) > LATE_NS {
                let what = if io.op == Op::Discard {
                    Held::Discard
                } else {
                    Held::BlockingSubmit
                };
                self.blocked = Some((done_ns, what));
            }
        }
        self.lagged(&io, submit_ns, why);
        self.measure(&io, submit_ns, done_ns, result)
    }

    fn finish(&mut self) {
        self.rec.finish();
    }
}
