//! `replay`: a block I/O trace replayed on the target (`drivelab run replay TRACE
//! [TARGET]`), scored as the storage-trace reviews score theirs: average data rate,
//! average and percentile service time per operation, the share of I/Os over 10, 50 and
//! 100 ms, total replay time; and, where the trace has the original service times, this
//! drive against the original I/O by I/O. One step; the engine's `replay` module does
//! the issuing (timing, concurrency and placement rules: docs/replay.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_analysis::replay::{score, Dist, OpInput, ReplayInput, ReplayScores};
use drivelab_engine::hist::HistogramJson;
use drivelab_engine::replay::{ReplayMeasured, Timing, DEFAULT_MAX_OUTSTANDING};
use drivelab_engine::size::{human_bytes, SizeOrPercent};
use drivelab_engine::spec::{IoEngine, RwMode};
use drivelab_engine::target::TargetInfo;

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, Bound, PlannedStep, ReplayAction, Shape, StepKind};
use crate::records::fmt;
use crate::suite::{Report, Suite};

/// The replay suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// The trace (drivelab's format, docs/trace-format.md), as an absolute path.
    pub trace: PathBuf,
    /// Open loop at this multiple of the recorded pace: 1.
    pub speed: f64,
    /// Gaps longer than this (trace time) are cut to it: none.
    pub max_idle_ns: Option<u64>,
    /// As fast as possible at the trace's concurrency instead of open loop.
    pub afap: bool,
    pub skip_discards: bool,
    /// Span the trace's offsets are mapped into: the whole target.
    pub size: SizeOrPercent,
    /// Most I/Os in flight at once: 1024.
    pub max_outstanding: u32,
    pub interval_ns: u64,
    /// Write `issue-log.csv` (one line per I/O) into the bundle.
    pub issue_log: bool,
}

/// The most I/Os in flight a replay may be given.
pub const MAX_OUTSTANDING: u32 = 32768;

impl Replay {
    pub fn new(trace: PathBuf) -> Replay {
        Replay {
            trace,
            speed: 1.0,
            max_idle_ns: None,
            afap: false,
            skip_discards: false,
            size: SizeOrPercent::Percent(100.0),
            max_outstanding: DEFAULT_MAX_OUTSTANDING,
            interval_ns: 1_000_000_000,
            issue_log: false,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.speed.is_finite() && self.speed > 0.0 && self.speed <= 1e6) {
            return Err("--speed: a factor above 0 and at most 1000000, like 2 or 0.5".into());
        }
        if self.afap && (self.speed != 1.0 || self.max_idle_ns.is_some()) {
            return Err("--afap: issues as fast as the trace's concurrency allows, so --speed and --max-idle do not apply; give one or the other".into());
        }
        if self.max_idle_ns == Some(0) {
            return Err("--max-idle: must be more than 0, like 1s".into());
        }
        if self.max_outstanding == 0 || self.max_outstanding > MAX_OUTSTANDING {
            return Err(format!(
                "--max-outstanding: from 1 to {MAX_OUTSTANDING} I/Os in flight"
            ));
        }
        if self.interval_ns < 10_000_000 {
            return Err("--interval: must be at least 10ms".into());
        }
        Ok(())
    }

    pub fn timing(&self) -> Timing {
        if self.afap {
            Timing::Afap
        } else {
            Timing::Recorded {
                speed: self.speed,
                max_idle_ns: self.max_idle_ns,
            }
        }
    }
}

/// The trace's header, or one line saying why it cannot be replayed.
pub fn read_header(path: &Path) -> Result<drivelab_trace::Header, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("TRACE {}: {e}", path.display()))?;
    let r = drivelab_trace::native::Reader::new(std::io::BufReader::new(f)).map_err(|e| {
        format!(
            "TRACE {}: not a drivelab trace ({e}); import it first with drivelab trace import",
            path.display()
        )
    })?;
    Ok(r.header().clone())
}

impl Suite for Replay {
    fn name(&self) -> &'static str {
        "replay"
    }
    fn test_file_bytes(&self) -> Option<u64> {
        crate::suite::span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let header = read_header(&self.trace)?;
        let span = plan::span_bytes(self.size, target);
        let sector = target.logical_sector_bytes.max(512);
        let shape =
            Shape::new(RwMode::RandRw, sector, self.max_outstanding, 1).engine(IoEngine::IoUring);
        let bound = Bound::Time {
            runtime_ns: self.interval_ns,
            interval_ns: self.interval_ns,
        };
        let w = plan::workload(&shape, (0, span), bound, target)?;
        let how = match self.timing() {
            Timing::Afap => "as fast as possible at the trace's concurrency".to_string(),
            Timing::Recorded { speed: 1.0, .. } => "as recorded".to_string(),
            Timing::Recorded { speed, .. } => format!("at {speed}× the recorded pace"),
        };
        Ok(vec![PlannedStep {
            id: "replay".into(),
            name: format!(
                "replay of {} {how}",
                self.trace.file_name().map_or_else(
                    || self.trace.display().to_string(),
                    |n| n.to_string_lossy().into()
                )
            ),
            kind: StepKind::Measure,
            params: json!({
                "trace": self.trace.display().to_string(),
                "source_format": header.source_format,
                "traced_device_size_bytes": header.device_size_bytes,
                "span_bytes": span,
            }),
            action: Action::Replay(ReplayAction {
                trace: self.trace.clone(),
                timing: self.timing(),
                discards: !self.skip_discards,
                max_outstanding: self.max_outstanding,
                issue_log: self.issue_log,
            }),
            idle_before_ns: 0,
            workload: w,
        }])
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let step = steps.iter().find(|s| s.id == "replay");
        let a = step.and_then(analyze);
        let mut metrics = Vec::new();
        let mut table = format!("drivelab replay: {}\n", self.trace.display());
        if let Some(a) = &a {
            metrics = headline(&a.scores);
            table += &table_text(a);
        } else {
            table += "  the replay did not run to its end: no scores\n";
        }
        // The replay's own caveats (idle cut, could not keep up, remapped I/Os, …).
        for n in step
            .and_then(|s| s.run.as_ref())
            .map_or(&[][..], |r| &r.notes[..])
        {
            table += &format!("  note: {n}\n");
        }
        Report {
            summary: Summary {
                analysis: serde_json::to_value(&a).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// The replay analysis saved in the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayAnalysis {
    pub scores: ReplayScores,
    pub timing: Timing,
    pub ios_issued: u64,
    pub records_read: u64,
    pub discards_skipped: u64,
    pub remapped_ios: u64,
    pub trace_max_outstanding: u32,
    pub max_outstanding: u32,
    pub idle_removed_ns: u64,
}

fn dist(h: &HistogramJson) -> Dist {
    Dist {
        count: h.count,
        sum: h.sum_ns,
        max: h.max_ns,
        buckets: h.buckets.iter().map(|b| (b[0], b[1])).collect(),
    }
}

/// The analysis's input from what the engine measured.
pub fn input(r: &ReplayMeasured) -> ReplayInput {
    let op = |o: &drivelab_engine::replay::OpMeasured| OpInput {
        bytes: o.bytes,
        service_ns: dist(&o.latency),
    };
    let c = r.comparison.as_ref();
    ReplayInput {
        replay_ns: r.replay_ns,
        read: op(&r.read),
        write: op(&r.write),
        flush: op(&r.flush),
        discard: op(&r.discard),
        lag_ns: r.lag.as_ref().map(dist),
        late_ios: r.late_ios,
        kept_up: r.kept_up,
        compared_ios: c.map_or(0, |c| c.compared_ios),
        faster_ios: c.map_or(0, |c| c.faster_ios),
        slower_ios: c.map_or(0, |c| c.slower_ios),
        ratio_permille: c.map(|c| dist(&c.ratio_permille)),
    }
}

/// Analyse the replay step (None when it did not run).
pub fn analyze(rec: &StepRecord) -> Option<ReplayAnalysis> {
    let r = rec.run.as_ref()?.replay.as_ref()?;
    Some(ReplayAnalysis {
        scores: score(&input(r)),
        timing: r.timing,
        ios_issued: r.ios_issued,
        records_read: r.schedule.records_read,
        discards_skipped: r.schedule.discards_skipped,
        remapped_ios: r.schedule.remapped_ios,
        trace_max_outstanding: r.schedule.trace_max_outstanding,
        max_outstanding: r.max_outstanding,
        idle_removed_ns: r.schedule.idle_removed_ns,
    })
}

fn ms(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / 1e6)
}

fn headline(s: &ReplayScores) -> Vec<Metric> {
    let pct = |f: Option<f64>| f.map(|v| v * 100.0);
    [
        Metric::new("average data rate", Some(s.avg_data_rate_mb_per_s), "MB/s"),
        Metric::new("average service time", ms(s.all.mean_service_ns), "ms"),
        Metric::new(
            "average read service time",
            ms(s.read.mean_service_ns),
            "ms",
        ),
        Metric::new(
            "average write service time",
            ms(s.write.mean_service_ns),
            "ms",
        ),
        Metric::new(
            "99th percentile service time",
            ms(s.all.p99_service_ns.map(|v| v as f64)),
            "ms",
        ),
        Metric::new("I/Os over 10 ms", pct(s.all.over_10ms_fraction), "%"),
        Metric::new("I/Os over 50 ms", pct(s.all.over_50ms_fraction), "%"),
        Metric::new("I/Os over 100 ms", pct(s.all.over_100ms_fraction), "%"),
        Metric::new("total replay time", Some(s.total_replay_s), "s"),
        Metric::new(
            "I/Os faster than the original",
            s.vs_original.as_ref().map(|v| v.faster_fraction * 100.0),
            "%",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn table_text(a: &ReplayAnalysis) -> String {
    let s = &a.scores;
    let mut t = format!(
        "  {} I/Os in {} s: average data rate {} MB/s ({} MiB/s)\n",
        a.ios_issued,
        fmt(Some(s.total_replay_s), 2),
        fmt(Some(s.avg_data_rate_mb_per_s), 1),
        fmt(Some(s.avg_data_rate_mib_per_s), 1)
    );
    t += "  op        I/Os      bytes  mean ms   p50 ms   p99 ms  >10ms %  >50ms % >100ms %\n";
    let pct = |f: Option<f64>| fmt(f.map(|v| v * 100.0), 2);
    let ms1 = |v: Option<u64>| fmt(v.map(|v| v as f64 / 1e6), 3);
    for (name, o) in [
        ("all", &s.all),
        ("read", &s.read),
        ("write", &s.write),
        ("flush", &s.flush),
        ("discard", &s.discard),
    ] {
        if o.ios == 0 && name != "all" {
            continue;
        }
        t += &format!(
            "  {name:<7} {:>6} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            o.ios,
            human_bytes(o.bytes),
            fmt(ms(o.mean_service_ns), 3),
            ms1(o.p50_service_ns),
            ms1(o.p99_service_ns),
            pct(o.over_10ms_fraction),
            pct(o.over_50ms_fraction),
            pct(o.over_100ms_fraction)
        );
    }
    if let Some(l) = &s.lag {
        t += &format!(
            "  issue lag: p50 {} ms, p99 {} ms, max {} ms; {} I/Os over 1 ms late: {}\n",
            ms1(l.p50_lag_ns),
            ms1(l.p99_lag_ns),
            ms1(l.max_lag_ns),
            l.late_ios,
            if l.kept_up {
                "kept up with the trace"
            } else {
                "COULD NOT KEEP UP with the trace"
            }
        );
    } else {
        t += &format!(
            "  as fast as possible: at most {} I/Os outstanding (the trace had up to {})\n",
            a.max_outstanding, a.trace_max_outstanding
        );
    }
    if let Some(v) = &s.vs_original {
        t += &format!(
            "  against the original ({} I/Os): {} % faster, {} % slower; time ratio p10 {} p50 {} p90 {} p99 {}\n",
            v.compared_ios,
            fmt(Some(v.faster_fraction * 100.0), 1),
            fmt(Some(v.slower_fraction * 100.0), 1),
            fmt(v.p10_ratio, 3),
            fmt(v.p50_ratio, 3),
            fmt(v.p90_ratio, 3),
            fmt(v.p99_ratio, 3)
        );
    }
    t
}

/// Name of the per-I/O log in the bundle (`--issue-log`).
pub const ISSUE_LOG: &str = "issue-log.csv";

/// Carry out a replay step: the trace streamed from its file through the schedule into
/// the engine's replay.
pub fn run_step(
    r: &ReplayAction,
    w: &drivelab_engine::spec::Workload,
    target: &mut drivelab_engine::target::Target,
    stop: &std::sync::atomic::AtomicBool,
    progress: Option<&(dyn Fn(&drivelab_engine::run::Progress<'_>) + Sync)>,
    dir: Option<&Path>,
) -> Result<drivelab_engine::result::RunResult, String> {
    use drivelab_engine::replay::{self, Placement, ReplayOptions, Schedule};
    use std::io::Write;
    let f =
        std::fs::File::open(&r.trace).map_err(|e| format!("TRACE {}: {e}", r.trace.display()))?;
    let reader = drivelab_trace::native::Reader::new(std::io::BufReader::with_capacity(1 << 20, f))
        .map_err(|e| format!("TRACE {}: {e}", r.trace.display()))?;
    let placement = Placement {
        start_bytes: w.offset_bytes,
        size_bytes: w.size_bytes,
        align_bytes: target.info.logical_sector_bytes.max(1) as u64,
    };
    let mut sched = Schedule::new(reader, r.timing, placement, r.discards);
    let log_path = dir.filter(|_| r.issue_log).map(|d| d.join(ISSUE_LOG));
    let partial = log_path.as_ref().map(|p| p.with_extension("csv.partial"));
    let mut log = match &partial {
        Some(p) => {
            let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let mut b = std::io::BufWriter::with_capacity(1 << 20, f);
            b.write_all(b"seq,op,offset_bytes,len_bytes,due_ns,issue_ns,done_ns\n")
                .map_err(|e| format!("{}: {e}", p.display()))?;
            Some(b)
        }
        None => None,
    };
    let res = replay::run(
        w,
        target,
        &mut sched,
        ReplayOptions {
            timing: r.timing,
            discards: r.discards,
            max_outstanding: r.max_outstanding,
            stop,
            progress,
            issue_log: log.as_mut().map(|b| b as &mut dyn Write),
        },
    )?;
    if let (Some(mut b), Some(p), Some(to)) = (log, partial, log_path) {
        b.flush()
            .and_then(|_| std::fs::rename(&p, &to))
            .map_err(|e| format!("{}: {e}", to.display()))?;
    }
    if res
        .measured
        .replay
        .as_ref()
        .is_some_and(|m| m.discard.ios > 0)
    {
        target.forget_filled();
    }
    Ok(res)
}
