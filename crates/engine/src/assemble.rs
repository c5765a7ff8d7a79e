//! From what a run measured to its result document: one assembler for generated
//! workloads ([`crate::run`]) and trace replays ([`crate::replay`]), so every check a run
//! has (memory-backed target, holes read, the link's ceiling, a simulated device's
//! ground truth) applies to both.

use crate::hist::Histogram;
use crate::job::IoErrorRecord;
use crate::result::*;
use crate::series::Records;
use crate::spec::Workload;
use crate::target::Target;

/// What a run measured, as the backend and the measurement core left it: everything the
/// result document is made of besides the workload and the target.
pub struct Facts {
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// The run's start on its clock.
    pub origin_ns: u64,
    /// Where the interval grid ends (the deadline, or the last completion).
    pub grid_end_ns: u64,
    /// The last completion (or the end of a final fsync).
    pub end_ns: u64,
    /// The time the totals' rates are over (ramp and drain left out as the run says).
    pub measured_ns: u64,
    /// A verify pass after the writes (`io --verify`; 0 without one): its reads are in
    /// `hists[0]` and `records`, and the read totals are over its time.
    pub verify_pass_ns: u64,
    pub records: Records,
    /// The finer series over the run's start (`Workload::log_head`), when asked for.
    pub head_records: Option<Records>,
    /// Read and write latency over the measured time.
    pub hists: [Histogram; 2],
    pub bytes: [u64; 2],
    /// Every I/O completed without error (a replay's flushes and discards too).
    pub completed_ios: u64,
    pub errors: Vec<IoErrorRecord>,
    pub error_count: u64,
    /// A failure of the backend or the I/O source itself (not an I/O error).
    pub failure: Option<String>,
    /// Stopped by an I/O error.
    pub aborted: bool,
    /// Stopped by the user.
    pub interrupted: bool,
    /// Process CPU (user, system seconds) over the measured time.
    pub cpu_s: (f64, f64),
    pub avg_inflight: f64,
    pub workers_busy: Option<f64>,
    pub data: DataGeneration,
    /// Bytes of the span read that were holes or unwritten extents, when any.
    pub unwritten_bytes: Option<u64>,
    /// What the source, the backend, the cache handling and the sensors had to say.
    pub notes: Vec<String>,
}

/// The result document of a run or replay (`replay`: a replay's own measurements).
pub fn assemble(
    w: &Workload,
    target: &Target,
    f: Facts,
    replay: Option<ReplayMeasured>,
) -> RunResult {
    let info = target.info.clone();
    let is_model = target.model().is_some();
    let mut all_h = f.hists[0].clone();
    all_h.merge(&f.hists[1]);
    // Nothing measured is no result: every I/O failed (--continue-on-error), or none
    // came back. (Within the ramp nothing is measured by design: that run says so. A
    // replay issues what its trace holds, which may be nothing in a window of idle time.)
    let nothing = replay.is_none() && f.completed_ios == 0 && f.measured_ns > 0;
    let status = if f.failure.is_some() || f.aborted {
        RunStatus::Failed
    } else if f.interrupted {
        RunStatus::Interrupted
    } else if nothing {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    let failure = f.failure.or_else(|| {
        (status == RunStatus::Failed).then(|| failure_text(&f.errors, f.error_count, nothing))
    });
    let cpu_used = f.cpu_s.0 + f.cpu_s.1;
    let m = f.measured_ns;
    // Reads are over the time they were made in: the run's (when it read: its workload
    // reads, or `--verify-backlog` read back during it), then its verify pass's; writes
    // over the run's; both over the whole. The elapsed time stays the workload's (the
    // pass's is `verify.pass_ns`).
    let v = f.verify_pass_ns;
    let run_read = w.read_percent() > 0 || w.verify_backlog.is_some();
    let m_read = if v > 0 && !run_read { v } else { m + v };
    let totals = Totals {
        elapsed_ns: m,
        read: DirTotals::new(&f.hists[0], f.bytes[0], m_read),
        write: DirTotals::new(&f.hists[1], f.bytes[1], m),
        all: DirTotals::new(&all_h, f.bytes[0] + f.bytes[1], m + v),
        avg_inflight: f.avg_inflight,
        kernel_workers_busy_avg: f.workers_busy,
        queue_depth: w.queue_depth(),
        cpu: CpuUsage {
            user_s: f.cpu_s.0,
            sys_s: f.cpu_s.1,
            cpu_s_per_million_io: (f.completed_ios > 0)
                .then(|| cpu_used / f.completed_ios as f64 * 1e6),
        },
        data: f.data,
        error_count: f.error_count,
    };
    let mut notes = Vec::new();
    if let Some(why) = &info.in_memory {
        notes.push(format!("Memory, not a drive, was measured: {why}."));
    }
    if let Some(b) = f.unwritten_bytes {
        notes.push(unwritten_note(b, w.size_bytes, info.kind));
    }
    if is_model {
        notes.push("A simulated device was measured; all times are virtual.".into());
    }
    notes.extend(f.notes);
    // (With --ioengine null on a device no I/O reached it: its link has nothing to say.)
    let skipped_device =
        w.ioengine == crate::spec::IoEngine::Null && info.kind != crate::target::TargetKind::Null;
    let device = info.device.as_ref().filter(|_| !skipped_device);
    notes.extend(device.and_then(|d| {
        crate::target::identity::link_ceiling_note(
            d,
            totals.read.bytes_per_s,
            totals.write.bytes_per_s,
        )
    }));
    let mut records = f.records;
    if let Some(d) = device {
        notes.extend(flag_link_ceiling(d, &mut records));
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: Tool::current(),
        config: w.clone(),
        host: HostInfo::current(),
        target: info,
        measured: Measured {
            status,
            failure,
            started_at: f.started_at,
            duration_ns: f.end_ns - f.origin_ns,
            drain_ns: f.end_ns - f.grid_end_ns,
            virtual_start_ns: is_model.then_some(f.origin_ns),
            totals,
            series: Series {
                interval_ns: w.log_interval_ns,
                records,
                head: w
                    .log_head
                    .zip(f.head_records)
                    .map(|(h, records)| HeadSeries {
                        interval_ns: h.interval_ns,
                        records,
                    }),
            },
            histogram: Histograms {
                read: f.hists[0].to_json(),
                write: f.hists[1].to_json(),
            },
            errors: f.errors,
            notes,
            simulator_ground_truth: target.model().map(|m| m.ground_truth()),
            replay,
            verify: None,
        },
    }
}

/// Now, for `started_at`.
pub fn started_at() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The note a run that read holes carries.
fn unwritten_note(bytes: u64, span: u64, kind: crate::target::TargetKind) -> String {
    let file = match kind {
        crate::target::TargetKind::BlockDevice => "the loop device's backing file",
        _ => "a sparse file",
    };
    format!(
        "Not a drive: {} of the {} span ({:.1} %) are holes or unwritten (fallocated) extents of {file}; reads of them are answered with zeros by the filesystem without touching storage, so read figures overstate the target.",
        crate::size::human_bytes(bytes),
        crate::size::human_bytes(span),
        bytes as f64 * 100.0 / span.max(1) as f64
    )
}

/// Why a run without a backend error failed, in one line.
fn failure_text(errors: &[IoErrorRecord], error_count: u64, nothing: bool) -> String {
    match errors.first() {
        _ if nothing && error_count > 0 => {
            format!("every I/O failed ({error_count} errors): nothing was measured")
        }
        Some(e) => format!(
            "{} of {} bytes at offset {} failed: {}",
            e.dir.name(),
            e.len_bytes,
            e.offset_bytes,
            e.message
        ),
        None if nothing => "no I/O completed in the measured time".to_string(),
        None => "I/O error".to_string(),
    }
}

/// Mark the intervals that ran faster than the device's link carries; a note saying how
/// many, if any.
fn flag_link_ceiling(
    id: &crate::target::identity::DeviceIdentity,
    records: &mut Records,
) -> Option<String> {
    let mut first = None;
    let mut n = 0;
    for i in 0..records.len() {
        let Some(r) = records.get(i) else { break };
        let over =
            crate::target::identity::over_link_ceiling(id, r.read.bytes_per_s, r.write.bytes_per_s);
        records.set_over_link_ceiling(i, over);
        if over {
            n += 1;
            first.get_or_insert(r.start_ns);
        }
    }
    first.map(|at| {
        format!(
            "{n} of {} intervals ran faster than the link carries (the first at {:.1} s; marked over_link_ceiling in the series): a cache, compression or memory answered there, not the drive.",
            records.len(),
            at as f64 / 1e9
        )
    })
}
