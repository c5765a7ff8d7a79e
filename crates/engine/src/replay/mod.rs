//! Replaying a trace: I/Os issued as a trace says (when, what, where) instead of as a
//! generator draws them. A workload source beside `gen`/`job` ([`TraceSource`], a
//! [`crate::source::IoSource`]): its I/Os go out through the very backend a generated
//! run of the same workload would use (io_uring with its registered buffers and ring
//! setup, the sync engine, the device model in virtual time, nothing on `null`), and the
//! result is made by the same assembler ([`crate::assemble`]) as a run's.
//!
//! [`schedule`] turns records into timed, placed I/Os; [`TraceSource`] hands them to the
//! backend when due and measures: the read/write interval series and totals as any run
//! has them, and beside them per-operation histograms (flush and discard too), the issue
//! lag of an open-loop replay, and this target's latency against the trace's, I/O by I/O.
//!
//! One source issues everything, in trace order, on the backend's clock (the model's
//! virtual clock on a simulated device, so a replay there is exact). Open loop: an I/O
//! is issued once its due time has come and fewer than the depth (`--max-outstanding`;
//! one with the sync engine) are in flight; how late it went out is its lag, and a
//! replay that sent more than 1 % of its I/Os over 1 ms late is flagged as not keeping
//! up. `--afap`: issued as soon as fewer I/Os are outstanding than the trace had at that
//! point ([`schedule`]). The replay's clock starts when the backend first asks for an
//! I/O, once its ring, buffers and the trace's first record are ready.

pub mod schedule;
mod source;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::assemble::Facts;
use crate::clock::{Clock, MonotonicClock};
use crate::result::*;
use crate::run::Sensors;
use crate::series::Aggregator;
use crate::spec::{IoEngine, Workload};
use crate::target::Target;
pub use schedule::{Placement, ReplayIo, Schedule, ScheduleCounts, Timing, Window};
pub use source::TraceSource;

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
pub trait TraceSchedule: Send {
    fn next_io(&mut self) -> Result<Option<ReplayIo>, String>;
    fn counts(&self) -> ScheduleCounts;
    /// Open loop: idle until this long after the start once the I/Os are done (the
    /// rest of a window, [`Schedule::end_due_ns`]).
    fn end_due_ns(&self) -> Option<u64> {
        None
    }
}

impl<I> TraceSchedule for Schedule<I>
where
    I: Iterator<Item = Result<drivelab_trace::Record, drivelab_trace::TraceError>> + Send,
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
    pub issue_log: Option<&'a mut (dyn Write + Send)>,
}

/// Replay `src` on `target`, through the backend `w` names (its engine, depth and
/// buffer options; the depth is `max_outstanding`, one with the sync engine). `w` also
/// describes the run for the result (span, interval); I/O errors and interruptions
/// give a partial result with its status.
pub fn run(
    w: &Workload,
    target: &mut Target,
    src: &mut dyn TraceSchedule,
    mut opts: ReplayOptions<'_>,
) -> Result<RunResult, String> {
    let started_at = crate::assemble::started_at();
    let setup_start = std::time::Instant::now();
    let mut w = w.clone();
    if w.ioengine != IoEngine::Sync {
        w.iodepth = opts.max_outstanding.max(1);
    }
    let w = &w;
    let clock = MonotonicClock::new();
    let mut sensors = Sensors::take(target);
    let log = opts
        .issue_log
        .take()
        .map(|l| Box::new(l) as Box<dyn Write + Send>);
    // Made before the replay's clock starts: the trace's first I/O (due at 0), and
    // io_uring's probe of how the target takes I/O. The target gets the trace's I/Os
    // and nothing else: the probe reads none of its data (a target of unknown size is
    // not probed: its I/Os are submitted inline).
    let first = src.next_io()?;
    let uring = match (w.ioengine, target.file(), target.info.capacity_bytes) {
        (IoEngine::IoUring, Some(f), Some(end)) if target.model().is_none() => Some(
            crate::backend::uring::UringBackend::prepare_without_reads(f, w, end),
        ),
        _ => Some(crate::backend::uring::UringBackend::inline()),
    };
    // Marked as a run marks a file it writes: a replay killed now leaves a test file
    // that the next run (a --resume) still knows as drivelab's.
    target.refresh_marker(true);
    // Sleeps and timed waits end when asked, not up to 50 µs later (restored after).
    let slack = crate::sys::timer_slack_ns().ok();
    if slack.is_some() {
        let _ = crate::sys::set_timer_slack_ns(1);
    }
    let grid_origin = match target.model() {
        Some(m) => m.now_ns(),
        None => clock.now_ns(),
    };
    let agg = Aggregator::new(grid_origin, w.log_interval_ns, 0, 1);
    sensors.start(clock, grid_origin, w.log_interval_ns);
    let cpu0 = crate::sys::process_cpu_s();
    let finished = AtomicBool::new(false);
    let notes = Mutex::new(Vec::new());
    let workers_busy = Mutex::new(None);
    let mut sources = [TraceSource::new(
        src,
        first,
        &agg,
        opts.timing,
        opts.stop,
        w.iodepth,
        log,
    )];
    let ran = std::thread::scope(|s| {
        sensors.spawn(s, &agg, &finished);
        if let Some(cb) = opts.progress {
            crate::run::spawn_progress(s, cb, &agg, &finished);
        }
        let r = crate::run::run_backend(
            w,
            target,
            &mut sources,
            uring,
            &agg,
            &clock,
            &notes,
            &workers_busy,
        );
        finished.store(true, Ordering::Relaxed);
        r
    });
    if let Some(s) = slack {
        let _ = crate::sys::set_timer_slack_ns(s);
    }
    let cpu1 = crate::sys::process_cpu_s();
    target.refresh_marker(false);
    let sensor_notes = sensors.finish(target, &agg);
    ran?;
    let [m] = sources;
    let origin = m.origin().unwrap_or(grid_origin);
    let end = m.last_ns().max(origin + 1);
    let setup_ns = m.setup_ns(setup_start);
    let (records, totals_h, bytes) = agg.finish(end, end);
    let elapsed = end - origin;
    let mut all_h = totals_h[0].clone();
    all_h.merge(&totals_h[1]);
    let mut measured = m.measured(opts.timing, opts.discards, setup_ns, elapsed);
    let mut notes_out = replay_notes(&opts.timing, opts.discards, &m, &measured, &target.info);
    notes_out.extend(sensor_notes);
    notes_out.extend(notes.into_inner().unwrap_or_else(|e| e.into_inner()));
    if let Some(e) = m.log_failed() {
        notes_out.push(format!(
            "--issue-log: writing the log failed ({e}); it is incomplete."
        ));
    }
    measured.schedule = m.counts();
    let (errors, error_count, source_err) = m.into_errors();
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
        completed_ios: measured.ios_completed,
        errors,
        error_count,
        failure: source_err,
        aborted: error_count > 0,
        interrupted: opts.stop.load(Ordering::Relaxed),
        cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        avg_inflight: all_h.sum() as f64 / elapsed as f64,
        workers_busy: workers_busy.into_inner().unwrap_or_else(|e| e.into_inner()),
        data: DataGeneration {
            pattern: w.data.name(),
            bytes_prepared: bytes[1],
            bytes_per_s_per_core: None,
            busiest_job_fraction: 0.0,
            held_fraction: 0.0,
            limited_by_generator: false,
        },
        unwritten_bytes: None,
        notes: notes_out,
    };
    Ok(crate::assemble::assemble(w, target, facts, Some(measured)))
}

/// The replay's caveats in plain words.
fn replay_notes(
    timing: &Timing,
    discards: bool,
    m: &TraceSource<'_, '_>,
    r: &ReplayMeasured,
    info: &crate::target::TargetInfo,
) -> Vec<String> {
    let c = &m.counts();
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
    if !r.kept_up {
        let lag = m.lag_p99_ns();
        let cause = r
            .late_causes
            .main_cause(m.max_out())
            .map_or(String::new(), |c| format!(" Mostly because {c}."));
        n.push(format!(
            "The replay could not keep up with the trace: {} of {} I/Os were issued more than 1 ms late (99th percentile lag {:.3} ms); its timing is not the trace's.{cause}",
            r.late_ios,
            r.ios_issued,
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
    n
}

#[cfg(test)]
mod tests;
