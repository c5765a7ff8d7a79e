//! A suite's plan: the engine steps it will run, each with its fully resolved workload,
//! known before anything runs (so the bundle's config hash covers them all, and a resumed
//! run can check it is continuing the same plan).

use serde::{Deserialize, Serialize};

use drivelab_engine::run;
use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{BsShare, DataPattern, IoEngine, RwMode, Workload, WorkloadRequest};
use drivelab_engine::target::{TargetInfo, TargetKind};

/// Whether a step prepares the target or measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Brings the target into the state a measurement needs (discard, fill passes).
    Prepare,
    /// A measurement the suite analyses.
    Measure,
}

/// What the runner does for a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run the workload.
    Run,
    /// Discard `also_discard` (the over-provisioned rest, if any), then
    /// `prepare::precondition` the workload's span with one sequential pass: the workload
    /// is that pass.
    Precondition { also_discard: Option<(u64, u64)> },
    /// Replay a trace over the workload's span (the workload describes the run: span,
    /// engine, interval; the trace says what is issued).
    Replay(ReplayAction),
}

/// A trace replay step (the `replay` suite).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayAction {
    pub trace: std::path::PathBuf,
    pub timing: drivelab_engine::replay::Timing,
    /// The part of the trace this step replays.
    pub window: drivelab_engine::replay::Window,
    pub discards: bool,
    pub max_outstanding: u32,
    /// Write the step's `<step>.issue-log.csv` (one line per I/O) into the bundle.
    pub issue_log: bool,
    /// Why the span this step reads was not written first, when it was not.
    pub unfilled: Option<Unfilled>,
}

/// Why a replay reads a drive's span that was not written before it: its reads of blocks
/// the trace did not write may hit never-written blocks, which a drive answers without
/// touching flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfilled {
    /// `--no-fill`.
    NoFill,
    /// A trace that only reads, on a block device opened without `--destructive`.
    ReadOnlyDevice,
}

impl Unfilled {
    /// The note a replay step that read carries.
    pub fn note(self) -> String {
        let why = match self {
            Unfilled::NoFill => "--no-fill",
            Unfilled::ReadOnlyDevice => "the trace only reads, and the device was not opened for writing (--destructive=DEVICE lets drivelab write the span first)",
        };
        format!(
            "The span was not written before the replay ({why}): reads of blocks neither filled nor written by the trace first may have hit never-written blocks, which a drive answers without touching flash, faster than written ones."
        )
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// Stable identifier, unique in the plan (e.g. `seq1m-q8t1-read-run2`).
    pub id: String,
    /// Human name (e.g. `SEQ1M Q8T1 read, run 2`).
    pub name: String,
    pub kind: StepKind,
    /// Suite-specific parameters the analysis groups by (test, QD, read share, …).
    pub params: serde_json::Value,
    pub action: Action,
    /// Idle time before the step (CrystalDiskMark's interval between tests).
    pub idle_before_ns: u64,
    /// The resolved workload (for a precondition, the fill pass).
    pub workload: Workload,
}

/// Block-size list of one fixed size.
pub fn bs(bytes: u32) -> Vec<BsShare> {
    vec![BsShare {
        bytes,
        percent: 100,
    }]
}

/// The part of a workload request suites vary; everything else keeps the engine's
/// defaults.
#[derive(Debug, Clone)]
pub struct Shape {
    pub rw: RwMode,
    pub rwmixread: u32,
    pub bs: Vec<BsShare>,
    pub iodepth: u32,
    pub numjobs: u32,
    pub ioengine: Option<IoEngine>,
    pub percentage_random: u32,
    pub data: DataPattern,
}

impl Shape {
    /// `rw` with one block size, `iodepth` per job and `numjobs` jobs, random data.
    pub fn new(rw: RwMode, block: u32, iodepth: u32, numjobs: u32) -> Shape {
        Shape {
            rw,
            rwmixread: 50,
            bs: bs(block),
            iodepth,
            numjobs,
            ioengine: None,
            percentage_random: 100,
            data: DataPattern::Random,
        }
    }
    pub fn engine(mut self, e: IoEngine) -> Shape {
        self.ioengine = Some(e);
        self
    }
    pub fn data(mut self, d: DataPattern) -> Shape {
        self.data = d;
        self
    }
    pub fn mix(mut self, read_percent: u32) -> Shape {
        self.rwmixread = read_percent;
        self
    }
    pub fn random_share(mut self, percent: u32) -> Shape {
        self.percentage_random = percent;
        self
    }
    pub fn sizes(mut self, bs: Vec<BsShare>) -> Shape {
        self.bs = bs;
        self
    }
}

/// How long a step runs.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// Time-bounded: run for this long, with intervals of `interval_ns`.
    Time { runtime_ns: u64, interval_ns: u64 },
    /// Byte-bounded: write this many bytes over all jobs, 1 s intervals.
    Bytes(u64),
}

/// The interval width for a time-bounded step: one second, or the whole run when it is
/// shorter (`--short` runs), never below the engine's 10 ms minimum.
pub fn interval_for(runtime_ns: u64) -> u64 {
    runtime_ns.clamp(10_000_000, 1_000_000_000)
}

/// A time bound with the usual interval.
pub fn for_time(runtime_ns: u64) -> Bound {
    Bound::Time {
        runtime_ns,
        interval_ns: interval_for(runtime_ns),
    }
}

/// The span (offset 0, `size`) on a target: `size` resolved against the capacity, never
/// more than the capacity, rounded down to whole MiB (whole sectors when under a MiB).
pub fn span_bytes(size: SizeOrPercent, target: &TargetInfo) -> u64 {
    let cap = target.span_bytes();
    let want = size.resolve(cap).min(cap);
    let unit = if want >= 1 << 20 {
        1 << 20
    } else {
        target.logical_sector_bytes.max(512) as u64
    };
    want / unit * unit
}

/// Resolve one step's workload over the span `(offset, len)`.
pub fn workload(
    shape: &Shape,
    span: (u64, u64),
    bound: Bound,
    target: &TargetInfo,
) -> Result<Workload, String> {
    let mut r = WorkloadRequest {
        rw: shape.rw,
        rwmixread: shape.rwmixread,
        bs: shape.bs.clone(),
        iodepth: shape.iodepth,
        numjobs: shape.numjobs,
        ioengine: shape.ioengine,
        offset: SizeOrPercent::Bytes(span.0),
        size: Some(SizeOrPercent::Bytes(span.1)),
        percentage_random: shape.percentage_random,
        data: shape.data,
        ..WorkloadRequest::default()
    };
    match bound {
        Bound::Time {
            runtime_ns,
            interval_ns,
        } => {
            r.runtime_ns = Some(runtime_ns);
            r.log_interval_ns = interval_ns;
        }
        Bound::Bytes(b) => {
            r.runtime_ns = None;
            r.io_size = Some(SizeOrPercent::Bytes(b));
        }
    }
    run::resolve(&r, target)
}

/// The fill pass a precondition of `base`'s span runs (as `prepare::precondition` builds
/// it: sequential writes of `block` bytes at queue depth `qd`, io_uring unless simulated).
pub fn precondition_pass(base: &Workload, block: u32, qd: u32) -> Workload {
    let mut w = base.clone();
    if w.ioengine == IoEngine::Sync {
        w.ioengine = IoEngine::IoUring;
    }
    run::fill_workload(&w, block, qd)
}

/// Block size and depth of the fill that writes a device's or simulated drive's span
/// once before a suite reads it.
const FILL_BS: u32 = 1 << 20;
const FILL_QD: u32 = 8;

/// The step that writes a block device's or simulated drive's span once before a suite
/// reads it (an SSD answers reads of unwritten blocks without touching flash); None for
/// a file, which drivelab fills before reads anyway.
pub fn fill_before_reads(
    span: (u64, u64),
    data: DataPattern,
    target: &TargetInfo,
) -> Result<Option<PlannedStep>, String> {
    if target.kind == TargetKind::File {
        return Ok(None);
    }
    fill_span_step(
        "fill",
        "write the span once before reading it",
        span,
        FILL_BS,
        FILL_QD,
        data,
        target,
    )
    .map(Some)
}

/// A preparation step that discards `span` and writes it once sequentially with `block`
/// blocks at depth `qd` and `data` content, so that later reads hit written data.
pub fn fill_span_step(
    id: &str,
    name: &str,
    span: (u64, u64),
    block: u32,
    qd: u32,
    data: DataPattern,
    target: &TargetInfo,
) -> Result<PlannedStep, String> {
    let shape = Shape::new(RwMode::Write, block, qd, 1).data(data);
    let base = workload(&shape, span, for_time(1_000_000_000), target)?;
    Ok(PlannedStep {
        id: id.into(),
        name: name.into(),
        kind: StepKind::Prepare,
        params: serde_json::json!({}),
        action: Action::Precondition { also_discard: None },
        idle_before_ns: 0,
        workload: precondition_pass(&base, block, qd),
    })
}

/// A stable id fragment from a label: lowercase, runs of other characters become `-`.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_stable() {
        assert_eq!(slug("SEQ1M Q8T1 read"), "seq1m-q8t1-read");
        assert_eq!(slug("4K random write, QD 16"), "4k-random-write-qd-16");
    }

    #[test]
    fn intervals_shrink_for_short_runs_only() {
        assert_eq!(interval_for(5_000_000_000), 1_000_000_000);
        assert_eq!(interval_for(300_000_000), 300_000_000);
        assert_eq!(interval_for(1_000_000), 10_000_000);
    }
}
