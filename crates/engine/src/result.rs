//! The result document of one run: strict JSON, units in every field name.
//! Schema: `docs/result-schema.md`.

use serde::{Deserialize, Serialize};

use crate::hist::{Histogram, HistogramJson};
use crate::job::IoErrorRecord;
use crate::replay::schedule::{ScheduleCounts, Timing};
use crate::series::{IntervalRecord, Records};
use crate::spec::Workload;
use crate::target::TargetInfo;

/// Version of the result document's layout; bumped on any change of its shape.
/// 2: readings' source, per-interval `over_link_ceiling`, SAS link rate (1 documents read
/// the same, those fields absent). 3: an `io --verify` run's read-back pass counts in
/// `series` and `totals` (its reads, its time), `verify.pass_ns`; 2 documents read the
/// same (their pass not in the totals, `pass_ns` absent).
pub const SCHEMA_VERSION: u32 = 3;

/// Percentiles reported in totals.
pub const PERCENTILES: [f64; 18] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99, 99.999,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Complete,
    /// Stopped by the user (Ctrl-C, SIGTERM): partial.
    Interrupted,
    /// Stopped by an I/O error or a backend failure: partial.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The commit HEAD was at when it was built; null when built outside a git checkout.
    #[serde(default)]
    pub commit: Option<String>,
}

impl Tool {
    pub fn current() -> Tool {
        let commit = env!("DRIVELAB_COMMIT");
        Tool {
            name: "drivelab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            commit: (!commit.is_empty()).then(|| commit.to_string()),
        }
    }
}

/// The machine the run happened on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub logical_cpus: u32,
    pub memory_bytes: u64,
}

impl HostInfo {
    pub fn current() -> HostInfo {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let memory_bytes = crate::sys::meminfo_bytes("MemTotal").unwrap_or(0);
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpu_model,
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            memory_bytes,
        }
    }
}

/// One percentile of a latency distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    pub percentile: f64,
    pub value_ns: u64,
    /// How many samples lie beyond this percentile: a p99.99 from 10 000 samples rests on
    /// one I/O.
    pub samples_above: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub mean_ns: Option<f64>,
    pub stddev_ns: Option<f64>,
    pub percentiles: Vec<Percentile>,
}

impl LatencyStats {
    pub fn from_hist(h: &Histogram) -> LatencyStats {
        let n = h.count();
        LatencyStats {
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stddev(),
            percentiles: PERCENTILES
                .iter()
                .filter_map(|&p| {
                    let v = h.percentile(p)?;
                    let rank = crate::hist::rank(p, n);
                    Some(Percentile {
                        percentile: p,
                        value_ns: v,
                        samples_above: n.saturating_sub(rank),
                    })
                })
                .collect(),
        }
    }

    /// The value at percentile `p` if it was reported.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|x| (x.percentile - p).abs() < 1e-9)
            .map(|x| x.value_ns)
    }
}

/// Totals of one direction (or both).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirTotals {
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    /// Decimal megabytes (10^6 bytes) per second.
    pub mbps: f64,
    /// Binary mebibytes (2^20 bytes) per second.
    pub mibps: f64,
    pub latency: LatencyStats,
}

impl DirTotals {
    pub fn new(h: &Histogram, bytes: u64, elapsed_ns: u64) -> DirTotals {
        let s = elapsed_ns.max(1) as f64 / 1e9;
        DirTotals {
            ops: h.count(),
            bytes,
            ops_per_s: h.count() as f64 / s,
            bytes_per_s: bytes as f64 / s,
            mbps: bytes as f64 / s / 1e6,
            mibps: bytes as f64 / s / (1u64 << 20) as f64,
            latency: LatencyStats::from_hist(h),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) seconds per million completed I/Os.
    pub cpu_s_per_million_io: Option<f64>,
}

/// How write content was produced and whether that limited the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataGeneration {
    pub pattern: String,
    pub bytes_prepared: u64,
    /// Preparation speed of one core, measured during the run.
    pub bytes_per_s_per_core: Option<f64>,
    /// Largest share of a job's time spent preparing content.
    pub busiest_job_fraction: f64,
    /// Largest share of a job's time the target waited for content: what was made
    /// ahead, while the I/Os before it were in flight, is left out.
    #[serde(default)]
    pub held_fraction: f64,
    /// True when preparing content held the target back (see
    /// [`DataGeneration::limits`]): the figures are partly the generator's.
    pub limited_by_generator: bool,
}

impl DataGeneration {
    /// Whether preparing write content, not the target, limited a run whose busiest job
    /// spent `busiest` of its time preparing content, with `avg_inflight` I/Os in flight
    /// on average of a queue of `depth`.
    ///
    /// At a queue depth of 1 the target idles while each write's content is prepared, so
    /// the share of time spent preparing is lost outright: over 15 % counts. With a deeper
    /// queue the target keeps working on the queued I/Os meanwhile; a job busy preparing
    /// half of its time that still keeps the queue over half full has not held the target
    /// back (measured: on a target doing 3 GB/s of 1 MiB writes at QD8 from one job,
    /// preparing took 40-60 % of the job's time with 5-7 I/Os in flight, and content that
    /// costs nothing to prepare gave no more throughput). Then it counts only when
    /// preparing took over half of the job's time and the queue was under half full.
    pub fn limits(busiest: f64, avg_inflight: f64, depth: u32) -> bool {
        if depth <= 1 {
            busiest > 0.15
        } else {
            busiest > 0.5 && avg_inflight < 0.5 * depth as f64
        }
    }

    /// What to say about a run it [`limits`](DataGeneration::limits), with advice.
    pub fn note(busiest: f64, avg_inflight: f64, depth: u32) -> String {
        let pct = busiest * 100.0;
        let cheaper = "or content that is cheaper to prepare (--data repeat, or zero; a drive that compresses then looks faster)";
        if depth <= 1 {
            format!(
                "The target waited {pct:.0} % of the time for write content to be prepared (at queue depth 1 it idles meanwhile): the figures are up to {pct:.0} % below the target's. To measure the target alone, use a deeper queue {cheaper}."
            )
        } else {
            format!(
                "Preparing write content, with the queue short of I/Os, took {pct:.0} % of the busiest job's time and kept {avg_inflight:.1} of {depth} I/Os in flight on average: the data generator, not the target, was the limit. Spread the queue over more jobs (--numjobs, e.g. Q4T2 instead of Q8T1) so that content is prepared on more cores, {cheaper}."
            )
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Measured time: from the end of the ramp to the last completion.
    pub elapsed_ns: u64,
    pub read: DirTotals,
    pub write: DirTotals,
    pub all: DirTotals,
    /// Average I/Os in flight (Little's law: total latency / elapsed time).
    pub avg_inflight: f64,
    /// On a target that refuses non-blocking I/O, io_uring hands every I/O to its kernel
    /// workers: the average number of them busy (sampled every 5 ms). A target that
    /// serves an I/O only while its issuer waits had about this many at a time, whatever
    /// `avg_inflight` says. Null when I/O was not handed to workers.
    #[serde(default)]
    pub kernel_workers_busy_avg: Option<f64>,
    pub queue_depth: u32,
    pub cpu: CpuUsage,
    pub data: DataGeneration,
    pub error_count: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub interval_ns: u64,
    /// Kept compact; the same JSON array of records as ever.
    pub records: Records,
    /// The run's first seconds again at a finer interval, when the workload asked for
    /// them (`log_head`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<HeadSeries>,
}

/// The finer series over a run's start: intervals of `interval_ns` from the run's start
/// (ramp intervals flagged as in the main series), the same I/Os the main series counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadSeries {
    pub interval_ns: u64,
    pub records: Records,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    pub read: HistogramJson,
    pub write: HistogramJson,
}

/// The complete result of one run: who measured what, and what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: Tool,
    /// The fully resolved workload.
    pub config: Workload,
    pub host: HostInfo,
    pub target: TargetInfo,
    /// What was measured (its fields sit at the top level of the document).
    #[serde(flatten)]
    pub measured: Measured,
}

/// What one run measured, apart from the identity of tool, host and target (a suite's
/// bundle holds those once and this per step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub status: RunStatus,
    /// Why a failed run failed.
    pub failure: Option<String>,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// Whole run on the run's clock, ramp included.
    pub duration_ns: u64,
    /// After a time-bounded run's deadline: how long the I/Os still in flight took to
    /// come back (not in the series' time; their completions count in its last
    /// interval). Long when the deadline fell in a device stall.
    #[serde(default)]
    pub drain_ns: u64,
    /// For simulated targets: the virtual time at which the run began (the model's
    /// ground-truth times are on this clock); None for real targets.
    #[serde(default)]
    pub virtual_start_ns: Option<u64>,
    pub totals: Totals,
    pub series: Series,
    pub histogram: Histograms,
    pub errors: Vec<IoErrorRecord>,
    /// Plain-language caveats (memory measured, generator limit, …).
    pub notes: Vec<String>,
    /// A simulated device's own ground truth, apart from what drivelab measured.
    pub simulator_ground_truth: Option<serde_json::Value>,
    /// A trace replay's own measurements (per-operation histograms, issue lag, the
    /// comparison with the trace's service times); absent for generated workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayMeasured>,
    /// A `--verify` run's record of its writes (per job) and what its verify pass found;
    /// absent for runs that do not verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifyResult>,
}

/// A running view for progress displays, called about once per second of wall time.
pub struct Progress<'a> {
    /// Wall time since the run started.
    pub wall: std::time::Duration,
    /// The latest finished interval, if any.
    pub latest: Option<&'a IntervalRecord>,
}

/// One operation's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpMeasured {
    pub ios: u64,
    pub bytes: u64,
    /// Service time (issue to completion).
    pub latency: HistogramJson,
}

/// This target's service time against the trace's, I/O by I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// I/Os that had an original service time.
    pub compared_ios: u64,
    pub faster_ios: u64,
    pub slower_ios: u64,
    pub same_ios: u64,
    /// Distribution of (this service time / original) × 1000 (so 1000 is "the same";
    /// the histogram's `_ns` fields hold these per-mille values).
    pub ratio_permille: HistogramJson,
}

/// What a replay measured besides what every run has (`Measured.replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayMeasured {
    pub timing: Timing,
    pub discards_replayed: bool,
    pub schedule: ScheduleCounts,
    pub ios_issued: u64,
    pub ios_completed: u64,
    pub read: OpMeasured,
    pub write: OpMeasured,
    pub flush: OpMeasured,
    pub discard: OpMeasured,
    /// Writes issued with RWF_DSYNC (the trace's FUA).
    pub fua_writes: u64,
    /// Open loop: how far after its due time each I/O was issued.
    pub lag: Option<HistogramJson>,
    /// Open loop: I/Os issued more than [`crate::replay::LATE_NS`] late.
    pub late_ios: u64,
    /// False when more than 1 % of the I/Os were over 1 ms late: the replay could not
    /// keep up with the trace.
    pub kept_up: bool,
    /// Open loop: why the late I/Os were late.
    #[serde(default)]
    pub late_causes: LateCauses,
    pub max_outstanding: u32,
    /// Replay start to last completion.
    pub replay_ns: u64,
    /// Setting up before the replay's clock started (the ring, buffers, write content,
    /// the trace's first record, the sensors): in no lag, as the first I/O is due only
    /// once the replay can issue it.
    #[serde(default)]
    pub setup_ns: u64,
    /// Open loop: the first I/O's lag, the start-up that remains after the clock started.
    #[serde(default)]
    pub first_issue_lag_ns: Option<u64>,
    pub comparison: Option<Comparison>,
}

/// Why a replay's late I/Os (over [`crate::replay::LATE_NS`]) were late, one count per
/// I/O by the first cause that applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LateCauses {
    /// Due while the replay had its most I/Os in flight (`max_outstanding`): it waited
    /// for a slot.
    pub queue_limit_ios: u64,
    /// Due while a discard the kernel carries out synchronously (BLKDISCARD) held the
    /// replay's thread.
    pub discard_ios: u64,
    /// Due while handing an I/O to the kernel blocked (the kernel started it inline).
    pub blocking_submit_ios: u64,
    /// None of these: the replay's thread did not get the CPU in time.
    pub cpu_ios: u64,
}

impl LateCauses {
    /// The cause that made the most I/Os late, in words, with its count. The limit on
    /// I/Os in flight is `--max-outstanding`'s, or under `--ioengine sync` the engine's
    /// own one at a time (which raising `--max-outstanding` does not change).
    pub fn main_cause(
        &self,
        max_outstanding: u32,
        engine: crate::spec::IoEngine,
    ) -> Option<String> {
        let limit = match engine {
            crate::spec::IoEngine::Sync => "the sync engine carries one I/O at a time (--ioengine io_uring keeps more in flight)".to_string(),
            _ => format!("the limit of {max_outstanding} I/Os in flight was reached (--max-outstanding)"),
        };
        let all = [
            (self.queue_limit_ios, limit),
            (
                self.discard_ios,
                "discards, which the kernel carries out synchronously on a block device, held up the I/Os behind them".into(),
            ),
            (
                self.blocking_submit_ios,
                "handing I/Os to the kernel blocked (it started them inline)".into(),
            ),
            (
                self.cpu_ios,
                "the replay's thread did not get the CPU in time (a busy machine)".into(),
            ),
        ];
        let (n, why) = all.into_iter().max_by_key(|(n, _)| *n)?;
        (n > 0).then(|| format!("{why}, for {n} of them"))
    }
}

#[cfg(test)]
mod late_cause_tests {
    use super::LateCauses;
    use crate::spec::IoEngine;

    #[test]
    fn the_queue_limit_is_named_as_the_engine_sets_it() {
        let c = LateCauses {
            queue_limit_ios: 5,
            ..LateCauses::default()
        };
        let uring = c.main_cause(64, IoEngine::IoUring).unwrap();
        assert!(
            uring.contains("limit of 64 I/Os in flight") && uring.contains("--max-outstanding")
        );
        let sync = c.main_cause(64, IoEngine::Sync).unwrap();
        assert!(
            sync.contains("the sync engine carries one I/O at a time"),
            "{sync}"
        );
        assert!(!sync.contains("--max-outstanding"), "{sync}");
    }
}

#[cfg(test)]
mod generator_tests {
    use super::DataGeneration;

    #[test]
    fn at_qd1_preparing_content_is_lost_time() {
        assert!(DataGeneration::limits(0.2, 0.8, 1));
        assert!(!DataGeneration::limits(0.1, 0.9, 1));
        assert!(DataGeneration::note(0.2, 0.8, 1).contains("up to 20 % below"));
    }

    #[test]
    fn a_deep_queue_kept_over_half_full_is_not_held_back() {
        // One job writing 1 MiB blocks at QD8: busy preparing, the queue still full enough.
        assert!(!DataGeneration::limits(0.6, 5.6, 8));
        assert!(!DataGeneration::limits(0.4, 7.1, 8));
        // Busy preparing most of its time with the queue mostly empty: held back.
        assert!(DataGeneration::limits(0.8, 2.0, 8));
        let n = DataGeneration::note(0.8, 2.0, 8);
        assert!(
            n.contains("2.0 of 8 I/Os") && n.contains("--numjobs"),
            "{n}"
        );
    }
}
