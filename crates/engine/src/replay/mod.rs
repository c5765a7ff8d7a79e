//! Replaying a trace: I/Os issued as a trace says (when, what, where) instead of as a
//! generator draws them. A workload source beside `gen`/`job`: the synthetic engine's
//! hot path is untouched, and the I/Os go out through the same backends
//! ([`crate::backend::Issuer`]: io_uring on files and block devices with the jobs' ring
//! setup, the device model in virtual time, nothing on `null`), and the result is made
//! by the same assembler ([`crate::assemble`]) as a run's.
//!
//! [`schedule`] turns records into timed, placed I/Os; this module issues them when due
//! and measures: the read/write interval series and totals as any run has them, and
//! beside them per-operation histograms (flush and discard too), the issue lag of an
//! open-loop replay, and this target's latency against the trace's, I/O by I/O.
//!
//! One thread issues everything, in trace order, from a clock the engine is given (the
//! model's virtual clock on a simulated device, so a replay there is exact). Open loop:
//! an I/O is issued once its due time has come and fewer than `max_outstanding` are in
//! flight; how late it went out is its lag, and a replay that sent more than 1 % of its
//! I/Os over 1 ms late is flagged as not keeping up. `--afap`: issued as soon as fewer
//! I/Os are outstanding than the trace had at that point ([`schedule`]).

pub mod schedule;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::assemble::Facts;
use crate::backend::Issuer;
use crate::clock::{Clock, MonotonicClock};
use crate::hist::Histogram;
use crate::job::IoErrorRecord;
use crate::op::Dir;
use crate::result::*;
use crate::run::Sensors;
use crate::series::{Aggregator, Recorder};
use crate::spec::Workload;
use crate::target::Target;
use drivelab_trace::Op;
pub use schedule::{Placement, ReplayIo, Schedule, ScheduleCounts, Timing, Window};

/// An I/O issued later than this is late.
pub const LATE_NS: u64 = 1_000_000;
/// A replay with more than this share of late I/Os did not keep up.
pub const LATE_SHARE_LIMIT: f64 = 0.01;
/// ... and at least this many: one late I/O in a trace of three is a hiccup of the host,
/// not a replay that could not keep up.
pub const LATE_COUNT_MIN: u64 = 10;
/// In-flight I/Os an open-loop replay allows by default before it must wait.
pub const DEFAULT_MAX_OUTSTANDING: u32 = 1024;

/// Where the replay's I/Os come from (a [`Schedule`] over a trace).
pub trait IoSource {
    fn next_io(&mut self) -> Result<Option<ReplayIo>, String>;
    fn counts(&self) -> ScheduleCounts;
    /// Open loop: idle until this long after the start once the I/Os are done (the
    /// rest of a window, [`Schedule::end_due_ns`]).
    fn end_due_ns(&self) -> Option<u64> {
        None
    }
}

impl<I: Iterator<Item = Result<drivelab_trace::Record, drivelab_trace::TraceError>>> IoSource
    for Schedule<I>
{
    fn next_io(&mut self) -> Result<Option<ReplayIo>, String> {
        Schedule::next_io(self)
    }
    fn counts(&self) -> ScheduleCounts {
        self.counts.clone()
    }
    fn end_due_ns(&self) -> Option<u64> {
        Schedule::end_due_ns(self)
    }
}

/// Options of one replay besides the I/Os.
pub struct ReplayOptions<'a> {
    pub timing: Timing,
    pub discards: bool,
    pub max_outstanding: u32,
    pub stop: &'a AtomicBool,
    pub progress: Option<&'a (dyn Fn(&Progress<'_>) + Sync)>,
    /// A CSV line per I/O: `seq,op,offset_bytes,len_bytes,due_ns,issue_ns,done_ns`
    /// (times from the replay's start).
    pub issue_log: Option<&'a mut dyn Write>,
}

struct OpAcc {
    h: Histogram,
    bytes: u64,
}

/// Everything measured while replaying.
struct Meter<'a, 'l> {
    origin: u64,
    rec: Recorder<'a>,
    ops: [OpAcc; 4],
    lag: Option<Histogram>,
    late: u64,
    late_causes: LateCauses,
    first_lag: Option<u64>,
    ratio: Histogram,
    faster: u64,
    slower: u64,
    same: u64,
    fua: u64,
    issued: u64,
    errors: Vec<IoErrorRecord>,
    error_count: u64,
    log: Option<&'l mut dyn Write>,
    log_failed: Option<String>,
}

/// What held up an I/O that was due (see [`LateCauses`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Held {
    QueueLimit,
    Discard,
    BlockingSubmit,
    Nothing,
}

fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
        Op::Discard => 3,
    }
}

impl Meter<'_, '_> {
    /// `io` issued at `at`; `why` is what held it up, should it be late.
    fn issued(&mut self, io: &ReplayIo, at: u64, why: Held) {
        self.issued += 1;
        self.fua += (io.fua && io.op == Op::Write) as u64;
        if let Some(h) = &mut self.lag {
            let lag = at.saturating_sub(self.origin.saturating_add(io.due_ns));
            h.record(lag.min(crate::hist::MAX_TRACKED_NS));
            self.first_lag.get_or_insert(lag);
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
    }

    /// Count a completion; false when it failed.
    fn complete(&mut self, io: &ReplayIo, issue: u64, done: u64, result: i64) -> bool {
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
        if let Some(w) = self.log.as_mut() {
            let o = self.origin;
            if let Err(e) = writeln!(
                w,
                "{},{},{},{},{},{},{}",
                io.seq,
                io.op.name(),
                io.offset_bytes,
                io.len_bytes,
                io.due_ns,
                issue - o,
                done - o
            ) {
                self.log_failed = Some(e.to_string());
                self.log = None;
            }
        }
        true
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
            at_ns: at - self.origin,
        });
    }

    fn op_json(&self, op: Op) -> OpMeasured {
        let a = &self.ops[op_index(op)];
        OpMeasured {
            ios: a.h.count(),
            bytes: a.bytes,
            latency: a.h.to_json(),
        }
    }
}

/// Replay `src` on `target`. `w` describes the run for the result (span, engine, depth,
/// interval); I/O errors and interruptions give a partial result with its status.
pub fn run(
    w: &Workload,
    target: &mut Target,
    src: &mut dyn IoSource,
    opts: ReplayOptions<'_>,
) -> Result<RunResult, String> {
    let started_at = crate::assemble::started_at();
    let info = target.info.clone();
    let clock = MonotonicClock::new();
    let is_model = target.model().is_some();
    let setup_start = clock.now_ns();
    // Everything the first I/O needs is made before the clock starts: it is due at 0.
    let mut sensors = Sensors::take(target);
    let first = src.next_io()?;
    // Marked as a run marks a file it writes: a replay killed now leaves a test file
    // that the next run (a --resume) still knows as drivelab's.
    target.refresh_marker(true);
    let mut issuer = crate::backend::issuer(
        target,
        &clock,
        w.log_interval_ns,
        opts.max_outstanding.max(1),
    )?;
    // Sleeps and timed waits end when asked, not up to 50 µs later (restored after).
    let slack = crate::sys::timer_slack_ns().ok();
    if slack.is_some() {
        let _ = crate::sys::set_timer_slack_ns(1);
    }
    let now = clock.now_ns();
    let setup_ns = now - setup_start;
    // A simulated drive's clock is its own: the setup took none of its time.
    let origin = if is_model { issuer.now() } else { now };
    let agg = Aggregator::new(origin, w.log_interval_ns, 0, 1);
    sensors.start(clock, origin, w.log_interval_ns);
    let hist4 = || OpAcc {
        h: Histogram::new(),
        bytes: 0,
    };
    let open_loop = matches!(opts.timing, Timing::Recorded { .. });
    let mut m = Meter {
        origin,
        rec: Recorder::new(&agg, 0, u64::MAX),
        ops: [hist4(), hist4(), hist4(), hist4()],
        lag: open_loop.then(Histogram::new),
        late: 0,
        late_causes: LateCauses::default(),
        first_lag: None,
        ratio: Histogram::new(),
        faster: 0,
        slower: 0,
        same: 0,
        fua: 0,
        issued: 0,
        errors: Vec::new(),
        error_count: 0,
        log: opts.issue_log,
        log_failed: None,
    };
    let cpu0 = crate::sys::process_cpu_s();
    let finished = AtomicBool::new(false);
    let drive = std::thread::scope(|s| {
        sensors.spawn(s, &agg, &finished);
        let r = drive(
            issuer.as_mut(),
            first,
            src,
            &mut m,
            &agg,
            &opts.timing,
            opts.max_outstanding.max(1),
            opts.stop,
            opts.progress,
        );
        finished.store(true, Ordering::Relaxed);
        r
    });
    if let Some(s) = slack {
        let _ = crate::sys::set_timer_slack_ns(s);
    }
    let end = issuer.now().max(origin + 1);
    let cpu1 = crate::sys::process_cpu_s();
    m.rec.finish();
    drop(issuer);
    target.refresh_marker(false);
    let sensor_notes = sensors.finish(target, &agg);
    let (max_out, source_err) = drive?;
    let (records, totals_h, bytes) = agg.finish(end, end);
    let elapsed = end - origin;
    let mut all_h = totals_h[0].clone();
    all_h.merge(&totals_h[1]);
    let completed: u64 = m.ops.iter().map(|a| a.h.count()).sum();
    let counts = src.counts();
    let kept_up = !open_loop
        || m.late < LATE_COUNT_MIN
        || (m.late as f64) <= LATE_SHARE_LIMIT * m.issued.max(1) as f64;
    let mut notes = replay_notes(
        max_out,
        &opts.timing,
        &counts,
        opts.discards,
        kept_up,
        &m,
        &info,
    );
    notes.extend(sensor_notes);
    if let Some(e) = &m.log_failed {
        notes.push(format!(
            "--issue-log: writing the log failed ({e}); it is incomplete."
        ));
    }
    let compared = m.faster + m.slower + m.same;
    let replay = ReplayMeasured {
        timing: opts.timing,
        discards_replayed: opts.discards,
        ios_issued: m.issued,
        ios_completed: completed,
        read: m.op_json(Op::Read),
        write: m.op_json(Op::Write),
        flush: m.op_json(Op::Flush),
        discard: m.op_json(Op::Discard),
        fua_writes: m.fua,
        lag: m.lag.as_ref().map(|h| h.to_json()),
        late_ios: m.late,
        late_causes: m.late_causes,
        setup_ns,
        first_issue_lag_ns: m.first_lag,
        kept_up,
        max_outstanding: max_out,
        replay_ns: elapsed,
        comparison: (compared > 0).then(|| Comparison {
            compared_ios: compared,
            faster_ios: m.faster,
            slower_ios: m.slower,
            same_ios: m.same,
            ratio_permille: m.ratio.to_json(),
        }),
        schedule: counts,
    };
    let facts = Facts {
        started_at,
        origin_ns: origin,
        grid_end_ns: end,
        end_ns: end,
        measured_ns: elapsed,
        verify_pass_ns: 0,
        records,
        head_records: None,
        hists: totals_h,
        bytes,
        completed_ios: completed,
        errors: m.errors,
        error_count: m.error_count,
        failure: source_err,
        aborted: m.error_count > 0,
        interrupted: opts.stop.load(Ordering::Relaxed),
        cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        avg_inflight: all_h.sum() as f64 / elapsed as f64,
        workers_busy: None,
        data: DataGeneration {
            pattern: w.data.name(),
            bytes_prepared: bytes[1],
            bytes_per_s_per_core: None,
            busiest_job_fraction: 0.0,
            held_fraction: 0.0,
            limited_by_generator: false,
        },
        unwritten_bytes: None,
        notes,
    };
    Ok(crate::assemble::assemble(w, target, facts, Some(replay)))
}

/// The issue loop: returns the most I/Os that were in flight at once, and the trace's
/// error if reading it failed part-way (then what was issued is drained first).
#[allow(clippy::too_many_arguments)]
fn drive(
    iss: &mut dyn Issuer,
    first: Option<ReplayIo>,
    src: &mut dyn IoSource,
    m: &mut Meter<'_, '_>,
    agg: &Aggregator,
    timing: &Timing,
    max_out: u32,
    stop: &AtomicBool,
    progress: Option<&(dyn Fn(&Progress<'_>) + Sync)>,
) -> Result<(u32, Option<String>), String> {
    let afap = matches!(timing, Timing::Afap);
    let origin = m.origin;
    let mut slots: Vec<(ReplayIo, u64)> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut inflight = 0u32;
    let mut most = 0u32;
    let mut done: Vec<(usize, u64, i64)> = Vec::new();
    let mut source_err = None;
    let mut pending = first;
    let started = std::time::Instant::now();
    let mut next_progress = 1u64;
    // When the queue last stopped being at its limit; until when the last submission
    // that blocked held the thread, and what it was.
    let mut limit_until = 0u64;
    let mut blocked: Option<(u64, Held)> = None;
    loop {
        let stopping = stop.load(Ordering::Relaxed) || m.error_count > 0;
        if stopping {
            pending = None;
        }
        while let Some(io) = pending {
            if inflight >= max_out || (afap && inflight >= io.depth) {
                break;
            }
            let now = iss.now();
            let due = origin.saturating_add(io.due_ns);
            if !afap && now < due {
                break;
            }
            let slot = free.pop().unwrap_or_else(|| {
                slots.push((io, 0));
                slots.len() - 1
            });
            slots[slot] = (io, now);
            let why = match blocked {
                _ if due < limit_until => Held::QueueLimit,
                Some((until, what)) if due < until => what,
                _ => Held::Nothing,
            };
            m.issued(&io, now, why);
            iss.submit(&io.any_op(), slot, now)?;
            let after = iss.now();
            if after - now > LATE_NS {
                let what = if io.op == Op::Discard {
                    Held::Discard
                } else {
                    Held::BlockingSubmit
                };
                blocked = Some((after, what));
            }
            inflight += 1;
            most = most.max(inflight);
            pending = match src.next_io() {
                Ok(p) => p,
                Err(e) => {
                    source_err = Some(e);
                    None
                }
            };
        }
        if pending.is_none() && inflight == 0 {
            break;
        }
        let until = match pending {
            Some(io) if !afap && inflight < max_out => Some(origin.saturating_add(io.due_ns)),
            _ => None,
        };
        iss.wait(until, inflight > 0, &mut done)?;
        iss.sensors().into_iter().for_each(|r| agg.sensor(r));
        if inflight >= max_out && !done.is_empty() {
            limit_until = iss.now();
        }
        for (slot, t, res) in done.drain(..) {
            inflight -= 1;
            free.push(slot);
            let (io, at) = slots[slot];
            m.complete(&io, at, t, res);
        }
        if let Some(cb) = progress {
            if started.elapsed().as_secs() >= next_progress {
                next_progress = started.elapsed().as_secs() + 1;
                let latest = agg.latest();
                cb(&Progress {
                    wall: started.elapsed(),
                    latest: latest.as_ref(),
                });
            }
        }
    }
    // The rest of the window is idle time of the trace's too.
    if let Some(end) = src.end_due_ns().filter(|_| !afap && source_err.is_none()) {
        while !stop.load(Ordering::Relaxed) && m.error_count == 0 && iss.now() < origin + end {
            iss.wait(Some(origin + end), false, &mut done)?;
            iss.sensors().into_iter().for_each(|r| agg.sensor(r));
        }
    }
    Ok((most, source_err))
}

/// The replay's caveats in plain words.
fn replay_notes(
    max_out: u32,
    timing: &Timing,
    c: &ScheduleCounts,
    discards: bool,
    kept_up: bool,
    m: &Meter<'_, '_>,
    info: &crate::target::TargetInfo,
) -> Vec<String> {
    let mut n = Vec::new();
    if let Timing::Recorded {
        max_idle_ns: Some(d),
        ..
    } = timing
    {
        if c.gaps_compressed > 0 {
            n.push(format!(
                "--max-idle: {} gap(s) longer than {:.3} s were cut to it, removing {:.3} s of the trace's idle time (drives recover in idle time: this replay gave them less).",
                c.gaps_compressed,
                *d as f64 / 1e9,
                c.idle_removed_ns as f64 / 1e9
            ));
        }
    }
    if !kept_up {
        let lag = m.lag.as_ref().and_then(|h| h.percentile(99.0)).unwrap_or(0);
        let cause = m
            .late_causes
            .main_cause(max_out)
            .map_or(String::new(), |c| format!(" Mostly because {c}."));
        n.push(format!(
            "The replay could not keep up with the trace: {} of {} I/Os were issued more than 1 ms late (99th percentile lag {:.3} ms); its timing is not the trace's.{cause}",
            m.late,
            m.issued,
            lag as f64 / 1e6
        ));
    }
    if !discards && c.discards_skipped > 0 {
        n.push(format!(
            "--skip-discards: {} discard(s) of the trace were not replayed.",
            c.discards_skipped
        ));
    }
    if c.remapped_ios > 0 {
        n.push(format!(
            "{} I/O(s) lay beyond the target's span and were placed at their offset modulo the span (docs/replay.md).",
            c.remapped_ios
        ));
    }
    if c.realigned_ios > 0 {
        n.push(format!(
            "{} I/O(s) were not aligned to the target's {}-byte unit and were widened to it.",
            c.realigned_ios, info.logical_sector_bytes
        ));
    }
    if matches!(timing, Timing::Afap) && c.with_service_time < c.records_read {
        n.push(format!(
            "--afap: {} of {} records had no service time; each counted as outstanding only with the records issued at the same nanosecond (docs/replay.md).",
            c.records_read - c.with_service_time,
            c.records_read
        ));
    }
    if info.kind == crate::target::TargetKind::Simulated && m.ops[2].h.count() > 0 {
        n.push(
            "The simulated device has no write cache to flush: flushes completed at once.".into(),
        );
    }
    n
}

#[cfg(test)]
mod tests;
