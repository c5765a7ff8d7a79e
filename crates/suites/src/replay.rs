//! `replay`: a block I/O trace replayed on the target (`drivelab run replay TRACE
//! [TARGET]`), scored as the storage-trace reviews score theirs: average data rate,
//! average and percentile service time per operation, the share of I/Os over 10, 50 and
//! 100 ms, total replay time; and, where the trace has the original service times, this
//! drive against the original I/O by I/O. One step per `--segment` of trace time (so an
//! interrupted replay resumes at a segment); the engine's `replay` module does the
//! issuing (timing, concurrency and placement rules: docs/replay.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_analysis::replay::{score, Dist, OpInput, ReplayInput, ReplayScores};
use drivelab_engine::hist::HistogramJson;
use drivelab_engine::replay::{Timing, Window, DEFAULT_MAX_OUTSTANDING};
use drivelab_engine::result::ReplayMeasured;
use drivelab_engine::size::{human_bytes, SizeOrPercent};
use drivelab_engine::spec::DataPattern;
use drivelab_engine::spec::{IoEngine, RwMode};
use drivelab_engine::target::{TargetInfo, TargetKind};

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, Bound, PlannedStep, ReplayAction, Shape, StepKind, Unfilled};
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
    /// Trace time per step, after `--max-idle` cuts: 10 min (more when the trace would
    /// need [`MAX_SEGMENTS`] steps or more).
    pub segment_ns: u64,
    /// Write each step's `<step>.issue-log.csv` (one line per I/O) into the bundle.
    pub issue_log: bool,
    /// The replay writes: the trace writes or discards (with `--skip-discards`: writes),
    /// or the span is to be filled before a trace that reads (a block device given with
    /// `--destructive`): a block device needs `--destructive`. A trace that only reads (and flushes) runs without, and on
    /// a mounted device. Set from the trace before the target is opened, checked again
    /// when planning.
    #[serde(default = "yes")]
    pub writes: bool,
    /// Write the span once before a trace that reads, where writing is allowed: always on
    /// a simulated drive, on a block device opened for writing (`--no-fill`: not).
    #[serde(default = "yes")]
    pub fill: bool,
    /// `--short`: a demonstration on a 64 MiB span (reports mark it so).
    #[serde(default)]
    pub short: bool,
    /// The engine that issues the trace's I/Os on a file or block device: io_uring (up
    /// to `max_outstanding` in flight) or sync (one at a time).
    #[serde(default = "uring")]
    pub ioengine: IoEngine,
}

fn yes() -> bool {
    true
}

fn uring() -> IoEngine {
    IoEngine::IoUring
}

/// The most steps a replay is cut into.
pub const MAX_SEGMENTS: u64 = 1000;

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
            segment_ns: 600_000_000_000,
            issue_log: false,
            writes: true,
            fill: true,
            short: false,
            ioengine: IoEngine::IoUring,
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
        if self.segment_ns < 1_000_000_000 {
            return Err("--segment: at least 1s of trace time per step, like 10m".into());
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
    let f = drivelab_trace::input::open_regular(path).map_err(|e| format!("TRACE {e}"))?;
    let r = drivelab_trace::native::Reader::new(std::io::BufReader::new(f))
        .map_err(|e| not_a_trace(path, &e.to_string()))?;
    Ok(r.header().clone())
}

/// Why a file that is not drivelab's trace cannot be replayed, with the import command
/// for the format its first lines read as.
fn not_a_trace(path: &Path, why: &str) -> String {
    use std::io::Read;
    let mut head = Vec::new();
    let _ = std::fs::File::open(path).and_then(|f| f.take(16 << 10).read_to_end(&mut head));
    let text = String::from_utf8_lossy(&head);
    let p = path.display();
    let stem = path.with_extension("dltrace");
    match drivelab_trace::import::Format::detect(&text) {
        Some(f) => format!(
            "TRACE {p}: not a drivelab trace, but it reads as a {name} trace: import it first with drivelab trace import {name} {p} -o {}",
            stem.display(),
            name = f.name()
        ),
        None => format!(
            "TRACE {p}: not a drivelab trace ({why}); import it first with drivelab trace import FORMAT {p} -o {} (formats: {})",
            stem.display(),
            drivelab_trace::import::Format::names()
        ),
    }
}

/// What a whole read of the trace finds: its records, and where its steps start.
pub struct TraceScan {
    pub records: u64,
    /// The longest read or write (bytes).
    pub max_rw_bytes: u64,
    /// Reads, writes and discards among them.
    pub reads: u64,
    pub writes: u64,
    pub discards: u64,
    pub last_issue_ns: u64,
    /// Issue times (trace time) at which the second, third, … step starts.
    pub boundaries: Vec<u64>,
    /// The same after `--max-idle` cuts, and the last record's.
    pub boundaries_eff: Vec<u64>,
    pub last_eff_ns: u64,
}

/// Read the whole trace (streaming): a malformed or truncated one is found before
/// anything is written to the target. Steps start every `segment_ns` of trace time
/// after `max_idle_ns` cuts (so a cut idle hour makes no empty steps), each at a record;
/// the segment doubles while there would be more than [`MAX_SEGMENTS`] steps.
pub fn scan(path: &Path, max_idle_ns: Option<u64>, segment_ns: u64) -> Result<TraceScan, String> {
    let f = drivelab_trace::input::open_regular(path).map_err(|e| format!("TRACE {e}"))?;
    let r = drivelab_trace::native::Reader::new(std::io::BufReader::with_capacity(1 << 20, f))
        .map_err(|e| format!("TRACE {}: {e}", path.display()))?;
    let mut s = TraceScan {
        records: 0,
        max_rw_bytes: 0,
        reads: 0,
        writes: 0,
        discards: 0,
        last_issue_ns: 0,
        boundaries: Vec::new(),
        boundaries_eff: Vec::new(),
        last_eff_ns: 0,
    };
    let (mut seg, mut eff, mut idx) = (segment_ns.max(1), 0u64, 0u64);
    // (segment index, issue time, cut time) of each step's first record after the
    // first step.
    let mut starts: Vec<(u64, u64, u64)> = Vec::new();
    for rec in r {
        let rec = rec.map_err(|e| format!("TRACE {}: {e}", path.display()))?;
        let issue = rec.issue_ns.max(s.last_issue_ns);
        if s.records > 0 {
            let gap = issue - s.last_issue_ns;
            eff += max_idle_ns.map_or(gap, |m| gap.min(m));
        }
        s.records += 1;
        if matches!(rec.op, drivelab_trace::Op::Read | drivelab_trace::Op::Write) {
            s.max_rw_bytes = s.max_rw_bytes.max(rec.len_bytes);
        }
        s.reads += (rec.op == drivelab_trace::Op::Read) as u64;
        s.writes += (rec.op == drivelab_trace::Op::Write) as u64;
        s.discards += (rec.op == drivelab_trace::Op::Discard) as u64;
        s.last_issue_ns = issue;
        if eff / seg > idx {
            idx = eff / seg;
            starts.push((idx, issue, eff));
            if starts.len() as u64 >= MAX_SEGMENTS {
                seg *= 2;
                idx /= 2;
                let mut kept: Vec<(u64, u64, u64)> = Vec::new();
                for (i, t, e) in starts.drain(..) {
                    if i / 2 > kept.last().map_or(0, |k| k.0) {
                        kept.push((i / 2, t, e));
                    }
                }
                starts = kept;
            }
        }
    }
    if s.records == 0 {
        return Err(format!("TRACE {}: the trace has no I/O", path.display()));
    }
    s.last_eff_ns = eff;
    s.boundaries = starts.iter().map(|b| b.1).collect();
    s.boundaries_eff = starts.iter().map(|b| b.2).collect();
    Ok(s)
}

impl TraceScan {
    /// Whether replaying it changes the target's data (writes, or discards when they are
    /// replayed).
    pub fn modifies(&self, discards: bool) -> bool {
        self.writes > 0 || (discards && self.discards > 0)
    }
}

impl Replay {
    /// The trace's windows, one per step.
    fn windows(&self, scan: &TraceScan) -> Vec<Window> {
        let mut from = 0;
        let mut out = Vec::new();
        for &b in &scan.boundaries {
            out.push(Window {
                from_ns: from,
                to_ns: Some(b),
            });
            from = b;
        }
        out.push(Window {
            from_ns: from,
            to_ns: None,
        });
        out
    }
}

/// Whether a step of a replay bundle is (part of) the replay: its measured steps are
/// the trace's parts, the fill before them a preparation (by the step's kind, not its
/// id's wording).
pub fn is_replay_step(s: &StepRecord) -> bool {
    match s.kind {
        StepKind::Measure => true,
        StepKind::Prepare => false,
    }
}

/// The name of a replay bundle's trace file (its knobs'), None when the knobs are not
/// a replay's. Only the `trace` knob is read: bundles made before later knobs
/// (`segment_ns`) keep their trace's name.
pub fn trace_name(knobs: &serde_json::Value) -> Option<String> {
    #[derive(Deserialize)]
    struct TraceKnob {
        trace: PathBuf,
    }
    let k = TraceKnob::deserialize(knobs).ok()?;
    Some(k.trace.file_name()?.to_string_lossy().into_owned())
}

impl Suite for Replay {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Replay
    }
    fn writes_to_device(&self) -> bool {
        self.writes
    }
    fn test_file_bytes(&self) -> Option<u64> {
        crate::suite::span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let header = read_header(&self.trace)?;
        let max_idle = self.max_idle_ns.filter(|_| !self.afap);
        let found = scan(&self.trace, max_idle, self.segment_ns)?;
        let span = plan::span_bytes(self.size, target);
        // What the replay would fail on half-way is found out now.
        let sector = target.logical_sector_bytes.max(512) as u64;
        let longest = found.max_rw_bytes.div_ceil(sector) * sector;
        if found.max_rw_bytes > drivelab_engine::replay::schedule::MAX_IO_BYTES {
            return Err(format!(
                "TRACE {}: it has a read or write of {} bytes, more than the 64 MiB drivelab replays",
                self.trace.display(),
                found.max_rw_bytes
            ));
        }
        if longest > span {
            let span_text = if span == 0 {
                format!("no whole {sector}-byte sector of the target")
            } else {
                format!("a span of {span} bytes (whole {sector}-byte sectors)")
            };
            return Err(format!(
                "--size: gives {span_text}, less than the trace's longest read or write ({} bytes); give --size {longest} or more",
                found.max_rw_bytes
            ));
        }
        if !self.writes && found.modifies(!self.skip_discards) {
            return Err(format!(
                "TRACE {}: the trace changed since it was read: it now writes",
                self.trace.display()
            ));
        }
        let sector = target.logical_sector_bytes.max(512);
        // The sync engine keeps one I/O in flight.
        let depth = match self.ioengine {
            IoEngine::Sync => 1,
            _ => self.max_outstanding,
        };
        let shape = Shape::new(RwMode::RandRw, sector, depth, 1).engine(self.ioengine);
        // Each step is bounded by its trace time (at `--speed`): what the plan line and
        // the ETA count. (Under --afap the drive sets the pace; the trace time is
        // what it stands for.)
        let speed = if self.afap { 1.0 } else { self.speed };
        let mut ends = found.boundaries_eff.clone();
        ends.push(found.last_eff_ns);
        let mut workloads = Vec::with_capacity(ends.len());
        let mut from = 0;
        for &to in &ends {
            let bound = Bound::Time {
                runtime_ns: (((to - from) as f64 / speed) as u64).max(1_000_000),
                interval_ns: self.interval_ns,
            };
            workloads.push(plan::workload(&shape, (0, span), bound, target)?);
            from = to;
        }
        let how = match self.timing() {
            Timing::Afap => "as fast as possible at the trace's concurrency".to_string(),
            Timing::Recorded { speed: 1.0, .. } => "as recorded".to_string(),
            Timing::Recorded { speed, .. } => format!("at {speed}× the recorded pace"),
        };
        let name = self.trace.file_name().map_or_else(
            || self.trace.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let windows = self.windows(&found);
        let n = windows.len();
        // A drive's unwritten blocks read without touching flash: the span is written
        // once first (as the reviews fill a drive before a trace), where writing is
        // allowed (always on a simulated drive; on a block device opened for writing)
        // and the trace reads. Files drivelab creates are filled when made.
        let mut out = Vec::new();
        let drive = matches!(target.kind, TargetKind::BlockDevice | TargetKind::Simulated);
        let may_write = target.kind == TargetKind::Simulated || self.writes;
        let unfilled = match () {
            _ if !drive || found.reads == 0 => None,
            _ if !self.fill => Some(Unfilled::NoFill),
            _ if !may_write => Some(Unfilled::ReadOnlyDevice),
            _ => {
                out.extend(plan::fill_before_reads(
                    (0, span),
                    DataPattern::Random,
                    target,
                )?);
                None
            }
        };
        let steps = windows
            .into_iter()
            .zip(workloads)
            .enumerate()
            .map(|(k, (window, w))| PlannedStep {
                id: format!("replay-{}", k + 1),
                name: if n == 1 {
                    format!("replay of {name} {how}")
                } else {
                    format!("replay of {name} {how}, part {} of {n}", k + 1)
                },
                kind: StepKind::Measure,
                params: json!({
                    "trace": self.trace.display().to_string(),
                    "source_format": header.source_format,
                    "traced_device_size_bytes": header.device_size_bytes,
                    "trace_records": found.records,
                    "span_bytes": span,
                    "window_from_ns": window.from_ns,
                    "window_to_ns": window.to_ns,
                }),
                action: Action::Replay(ReplayAction {
                    trace: self.trace.clone(),
                    timing: self.timing(),
                    window,
                    discards: !self.skip_discards,
                    max_outstanding: self.max_outstanding,
                    issue_log: self.issue_log,
                    unfilled,
                }),
                idle_before_ns: 0,
                workload: w,
            })
            .collect::<Vec<_>>();
        out.extend(steps);
        Ok(out)
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let a = analyze(steps);
        let mut metrics = Vec::new();
        let mut table = format!("drivelab replay: {}\n", self.trace.display());
        if let Some(a) = &a {
            metrics = headline(&a.scores);
            table += &table_text(a);
        } else {
            table += "  the replay did not run to its end: no scores\n";
        }
        // The replay's own caveats (idle cut, could not keep up, remapped I/Os, …),
        // each once however many parts said it.
        let mut said: Vec<&String> = Vec::new();
        for st in steps.iter().filter(|s| is_replay_step(s)) {
            for n in st.run.iter().flat_map(|r| r.notes.iter()) {
                if !said.contains(&n) {
                    said.push(n);
                    table += &format!("  note: {}: {n}\n", st.id);
                }
            }
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
    /// Steps (windows of the trace) the scores cover.
    pub parts: usize,
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
    let op = |o: &drivelab_engine::result::OpMeasured| OpInput {
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

/// Analyse the replay's finished parts together (None when none ran).
pub fn analyze(steps: &[StepRecord]) -> Option<ReplayAnalysis> {
    let parts: Vec<&ReplayMeasured> = steps
        .iter()
        .filter(|s| is_replay_step(s))
        .filter_map(|s| s.run.as_ref()?.replay.as_ref())
        .collect();
    let (first, rest) = parts.split_first()?;
    let mut inp = input(first);
    let mut a = ReplayAnalysis {
        scores: score(&inp),
        timing: first.timing,
        ios_issued: 0,
        records_read: 0,
        discards_skipped: 0,
        remapped_ios: 0,
        trace_max_outstanding: 0,
        max_outstanding: 0,
        idle_removed_ns: 0,
        parts: parts.len(),
    };
    for r in rest {
        inp = inp.merged(&input(r));
    }
    for r in &parts {
        let c = &r.schedule;
        a.ios_issued += r.ios_issued;
        a.records_read += c.records_read;
        a.discards_skipped += c.discards_skipped;
        a.remapped_ios += c.remapped_ios;
        a.trace_max_outstanding = a.trace_max_outstanding.max(c.trace_max_outstanding);
        a.max_outstanding = a.max_outstanding.max(r.max_outstanding);
        a.idle_removed_ns += c.idle_removed_ns;
    }
    a.scores = score(&inp);
    Some(a)
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
        "  {} I/Os{} in {} s: average data rate {} MB/s ({} MiB/s)\n",
        a.ios_issued,
        if a.parts > 1 {
            format!(" (in {} parts)", a.parts)
        } else {
            String::new()
        },
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
            "  issue lag: p50 {} ms, p99 {} ms, max {} ms; {} I/O{} over 1 ms late: {}\n",
            ms1(l.p50_lag_ns),
            ms1(l.p99_lag_ns),
            ms1(l.max_lag_ns),
            l.late_ios,
            if l.late_ios == 1 { "" } else { "s" },
            if l.kept_up && l.late_ios > 0 {
                "few enough (under 1 % or under 10): kept up with the trace"
            } else if l.kept_up {
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

/// Name of a step's per-I/O log in the bundle (`--issue-log`): `replay-1.issue-log.csv`.
pub fn issue_log_name(step_id: &str) -> String {
    format!("{step_id}.issue-log.csv")
}

/// Carry out a replay step: the trace streamed from its file through the schedule into
/// the engine's replay.
pub fn run_step(
    id: &str,
    r: &ReplayAction,
    w: &drivelab_engine::spec::Workload,
    target: &mut drivelab_engine::target::Target,
    stop: &std::sync::atomic::AtomicBool,
    progress: Option<&(dyn Fn(&drivelab_engine::result::Progress<'_>) + Sync)>,
    dir: Option<&Path>,
) -> Result<drivelab_engine::result::RunResult, String> {
    use drivelab_engine::replay::{self, Placement, ReplayOptions, Schedule};
    use std::io::Write;
    let f = drivelab_trace::input::open_regular(&r.trace).map_err(|e| format!("TRACE {e}"))?;
    let reader = drivelab_trace::native::Reader::new(std::io::BufReader::with_capacity(1 << 20, f))
        .map_err(|e| format!("TRACE {}: {e}", r.trace.display()))?;
    let placement = Placement {
        start_bytes: w.offset_bytes,
        size_bytes: w.size_bytes,
        align_bytes: target.info.logical_sector_bytes.max(1) as u64,
    };
    let mut sched = Schedule::window(reader, r.timing, placement, r.discards, r.window);
    let log_path = dir
        .filter(|_| r.issue_log)
        .map(|d| d.join(issue_log_name(id)));
    // Claimed in the bundle's directory now and put in place whole at the end (a link
    // planted at its name meanwhile is replaced, not followed).
    let mut pending = log_path
        .as_ref()
        .map(|p| crate::atomic::claim(p).map_err(|e| format!("{}: {e}", p.display())))
        .transpose()?;
    let mut log = match (&mut pending, &log_path) {
        (Some(pending), Some(p)) => {
            let f = pending
                .file()
                .try_clone()
                .map_err(|e| format!("{}: {e}", p.display()))?;
            let mut b = std::io::BufWriter::with_capacity(1 << 20, f);
            b.write_all(b"seq,op,offset_bytes,len_bytes,due_ns,issue_ns,done_ns\n")
                .map_err(|e| format!("{}: {e}", p.display()))?;
            Some(b)
        }
        _ => None,
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
            issue_log: log.as_mut().map(|b| b as &mut (dyn Write + Send)),
        },
    )?;
    if let (Some(mut b), Some(pending), Some(to)) = (log, pending, log_path) {
        b.flush()
            .and_then(|()| pending.commit())
            .map_err(|e| format!("{}: {e}", to.display()))?;
    }
    let mut res = res;
    let measured = res.measured.replay.as_ref();
    if measured.is_some_and(|m| m.discard.ios > 0) {
        target.forget_filled();
    }
    if let Some(u) = r
        .unfilled
        .filter(|_| measured.is_some_and(|m| m.read.ios > 0))
    {
        res.measured.notes.push(u.note());
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelab_trace::{native::Writer, Header, Op, Record};

    fn trace(times: &[u64]) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.dltrace");
        let f = std::fs::File::create(&p).unwrap();
        let mut w = Writer::new(f, &Header::default()).unwrap();
        for &t in times {
            w.write(&Record::new(t, Op::Read, 0, 4096)).unwrap();
        }
        w.finish().unwrap();
        (d, p)
    }

    const S: u64 = 1_000_000_000;

    /// The replay's steps and trace are read by type: the parts are its measured steps
    /// (the fill before them is not), and the trace's name is read from the knobs of a
    /// bundle made before `segment_ns` was a knob too.
    #[test]
    fn replay_parts_and_the_trace_are_read_by_type_in_old_bundles_too() {
        let old = serde_json::json!({
            "trace": "/home/u/traces/web.dltrace", "speed": 1.0, "max_idle_ns": null,
            "afap": false, "skip_discards": false, "size": "100%", "max_outstanding": 1024,
            "interval_ns": 1000000000, "issue_log": false
        });
        assert!(Replay::deserialize(&old).is_err(), "an older knob set");
        assert_eq!(trace_name(&old).as_deref(), Some("web.dltrace"));
        assert_eq!(trace_name(&serde_json::json!({"fill": "90%"})), None);
        let step = |kind| -> StepRecord {
            serde_json::from_value(serde_json::json!({
                "index": 0, "id": "fill", "name": "n", "kind": kind, "params": {},
                "status": "complete", "skip_reason": null, "started_at": null,
                "finished_at": null, "sensors_start": [], "sensors_end": [], "run": null,
                "config": {
                    "rw": "write", "rwmixread": 0, "bs": [{"bytes": 131072, "percent": 100}],
                    "iodepth": 32, "numjobs": 1, "ioengine": "io_uring", "direct": true,
                    "offset_bytes": 0, "size_bytes": 1, "runtime_ns": null,
                    "io_size_bytes": null, "ramp_ns": 0, "percentage_random": 0,
                    "random_distribution": {"kind": "uniform"}, "randseed": 1,
                    "data": {"kind": "random"}, "log_interval_ns": 1000000000,
                    "align_bytes": 4096, "continue_on_error": false, "fixedbufs": false,
                    "registerfiles": false
                }
            }))
            .unwrap()
        };
        assert!(!is_replay_step(&step("prepare")));
        assert!(is_replay_step(&step("measure")));
    }

    #[test]
    fn steps_start_every_segment_of_trace_time_after_the_idle_cut() {
        let (_d, p) = trace(&[0, S / 2, S, 3 * S / 2, 3600 * S, 3600 * S + S / 2, 3601 * S]);
        // Uncut: the idle hour makes the step after it start at its end.
        assert_eq!(
            scan(&p, None, S).unwrap().boundaries,
            vec![S, 3600 * S, 3601 * S]
        );
        // The hour cut to 2 s: steps every second of what is replayed.
        let cut = scan(&p, Some(2 * S), S).unwrap();
        assert_eq!(cut.boundaries, vec![S, 3600 * S, 3600 * S + S / 2]);
        assert_eq!((cut.records, cut.last_issue_ns), (7, 3601 * S));
    }

    #[test]
    fn a_long_trace_gets_fewer_longer_steps() {
        let times: Vec<u64> = (0..5000).map(|i| i * S).collect();
        let (_d, p) = trace(&times);
        let b = scan(&p, None, S).unwrap().boundaries;
        assert!((b.len() as u64) < MAX_SEGMENTS, "{}", b.len());
        assert!(b.len() > 100);
        // Evenly spaced, each a whole number of seconds.
        let step = b[0];
        for (i, &t) in b.iter().enumerate() {
            assert_eq!(t, (i as u64 + 1) * step);
        }
        let mut r = Replay::new(p.clone());
        r.segment_ns = S;
        let scanned = scan(&p, None, S).unwrap();
        let w = r.windows(&scanned);
        assert_eq!(w.len(), b.len() + 1);
        assert_eq!(w[0].from_ns, 0);
        assert_eq!(w.last().unwrap().to_ns, None);
    }
}
