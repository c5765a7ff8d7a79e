//! `peak`: the enterprise review's queue-depth sweep. 4K random read, 4K random write,
//! 128K sequential read (each thread its own stream) and 128K sequential write at QD 1,
//! 2, 4, … up to `max_qd`, by threads each doing one synchronous I/O (or io_uring). The
//! headline per workload is the lowest QD reaching 95 % of the plateau (the level within
//! noise of the best throughput), with its
//! latencies; a sweep stops early once throughput has fallen for two points past its peak.
//!
//! Each workload family is measured in the state the reference measures it in: random
//! writes after an hour of random writes (steady state), the 128K sequential sweeps on a
//! drive discarded and written sequentially twice (sequential steady state) when random
//! writes came before them — not on the fragmented drive the hour left. Every sweep
//! records the state it saw (`state` in its step's params and in the analysis).
//!
//! A knee must hold against each point's measured noise (issue 14): after a sweep, the
//! points whose throughput is within their noise of the 95 % threshold (and the best
//! point that sets it) are measured again, in a fixed number of planned re-measurement
//! steps per sweep (`recheck_passes`, each one point long, so the plan's duration is a
//! bound), up to [`MAX_PASSES`] passes per point; each pass is pooled with the point's
//! others and the knee recomputed before the next is chosen.

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_analysis::qd::{knee_95, points_needing_pass, sweep_should_stop, Knee, SweepPoint};
use drivelab_analysis::stats::batch_stderr;
use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{DataPattern, IoEngine, RwMode};
use drivelab_engine::target::{TargetInfo, TargetKind};

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt, param_str, param_u64, us};
use crate::suite::{millis, secs, span_file_bytes, Report, Suite};

/// The sweep's workloads: id, label, mode, block size.
pub const WORKLOADS: [(&str, &str, RwMode, u32); 4] = [
    ("4k-randread", "4K random read", RwMode::RandRead, 4096),
    ("4k-randwrite", "4K random write", RwMode::RandWrite, 4096),
    ("128k-read", "128K sequential read", RwMode::Read, 128 << 10),
    (
        "128k-write",
        "128K sequential write",
        RwMode::Write,
        128 << 10,
    ),
];

/// Block size and depth of the precondition's sequential fill.
const PRECONDITION_BS: u32 = 128 << 10;
const PRECONDITION_QD: u32 = 32;

/// The peak suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Highest queue depth of the sweep: 512.
    pub max_qd: u32,
    /// `sync` (one thread per outstanding I/O, the reference's method) or `io_uring`.
    pub ioengine: IoEngine,
    /// Length of one point: 30 s.
    pub point_time_ns: u64,
    /// Span: the whole target.
    pub size: SizeOrPercent,
    /// Stop a sweep once throughput fell for two consecutive points past the peak.
    pub early_stop: bool,
    /// Workload ids to sweep (all four by default).
    pub workloads: Vec<String>,
    pub short: bool,
    /// Discard and write the span once sequentially before the sweep, so reads hit
    /// written data. None: only when the sweep writes anyway (a read-only sweep of a block
    /// device stays read-only).
    #[serde(default)]
    pub precondition: Option<bool>,
    /// 4K random writes at QD32 over the span before the random-write sweep, so that it
    /// measures the drive in its steady state, as the reference measures random writes
    /// "after hours of non-stop writes to an already full drive": 1 h (the consistency
    /// test's length, by whose end the reference finds every drive steady); 0 for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steady_writes_ns: u64,
    /// Discard and write the span sequentially twice before the 128K sequential sweeps
    /// when random writes came before them (the reference's sequential steady state);
    /// false measures them on the drive as the random writes left it.
    #[serde(default = "yes")]
    pub seq_precondition: bool,
    /// Re-measurement steps planned after each sweep (each one point long): a point
    /// within its noise of the knee threshold gets another pass in each, until it is
    /// settled or has had [`MAX_PASSES`]; steps with nothing left to settle are skipped.
    /// 4 (--short 2); 0 for none (and in bundles from before them).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub recheck_passes: u32,
    /// Intervals a point is measured in at least (shorter than 1 s when needed, never
    /// below 10 ms), so that its standard error has two intervals in each of its
    /// batches even in a `--short` point: 10; 1 in bundles from before it.
    #[serde(default = "one_interval")]
    pub min_point_intervals: u64,
}

fn one_interval() -> u64 {
    1
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// Most re-measurement steps a sweep may plan.
pub const MAX_RECHECK_PASSES: u32 = 32;

/// Most passes a point gets: its first and two more.
pub const MAX_PASSES: u32 = 3;

/// Intervals a point is measured in at least by default: two in each of the
/// [`NOISE_BATCHES`] batches of its standard error.
const MIN_POINT_INTERVALS: u64 = 2 * NOISE_BATCHES as u64;

fn yes() -> bool {
    true
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Depth of the random writes that bring the drive to its steady state.
const STEADY_WRITES_QD: u32 = 32;

/// The state a sweep found the drive in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriveState {
    /// Not written by the suite: whatever the drive held.
    AsFound,
    /// Discarded and written once sequentially.
    SequentialFill,
    /// After the steady-state random writes (and any random-write sweep).
    RandomSteady,
    /// Random writes ran (a random-write sweep without the steady-state writes).
    RandomWritten,
    /// Discarded and written sequentially twice after the random writes.
    SequentialSteady,
}

impl DriveState {
    /// How the report says it.
    pub fn describe(self) -> &'static str {
        match self {
            DriveState::AsFound => "as found (not written first)",
            DriveState::SequentialFill => "written once sequentially",
            DriveState::RandomSteady => "random-write steady state",
            DriveState::RandomWritten => "after random writes (not steady)",
            DriveState::SequentialSteady => "sequential steady state (discarded, written twice)",
        }
    }

    fn is_random(self) -> bool {
        matches!(self, DriveState::RandomSteady | DriveState::RandomWritten)
    }
}

/// Passes of the sequential precondition before the 128K sweeps: the second overwrites
/// the first, as a sequential steady state does.
const SEQ_PRECONDITION_PASSES: u32 = 2;

impl Peak {
    pub fn new(short: bool) -> Peak {
        Peak {
            max_qd: if short { 4 } else { 512 },
            ioengine: IoEngine::Sync,
            point_time_ns: if short { millis(250) } else { secs(30) },
            size: if short {
                SizeOrPercent::Bytes(64 << 20)
            } else {
                SizeOrPercent::Percent(100.0)
            },
            early_stop: true,
            workloads: WORKLOADS.iter().map(|w| w.0.to_string()).collect(),
            short,
            precondition: None,
            steady_writes_ns: if short { secs(1) } else { secs(3600) },
            seq_precondition: true,
            recheck_passes: if short { 2 } else { 4 },
            min_point_intervals: MIN_POINT_INTERVALS,
        }
    }

    /// How one point is measured: `point_time_ns` in 1 s intervals, shorter ones when a
    /// point would have fewer than `min_point_intervals` (never below 10 ms).
    fn point_bound(&self) -> plan::Bound {
        let runtime_ns = self.point_time_ns;
        let mut interval_ns = plan::interval_for(runtime_ns);
        let want = self.min_point_intervals.max(1);
        if runtime_ns / interval_ns < want {
            interval_ns = (runtime_ns / want).max(10_000_000);
        }
        plan::Bound::Time {
            runtime_ns,
            interval_ns,
        }
    }

    /// The next point of workload `id` to measure again after the steps `done`: its QD,
    /// the pass it will be, and its first pass's record. None when the sweep's knee is
    /// settled (or every point that is not has had its passes).
    fn next_recheck<'a>(
        &self,
        id: &str,
        done: &'a [StepRecord],
    ) -> Option<(u32, u32, &'a StepRecord)> {
        let pooled = pooled_points(done, id, true);
        let pts: Vec<SweepPoint> = pooled.iter().map(|p| sweep_point(id, p)).collect();
        let passes: Vec<u32> = pooled.iter().map(|p| p.passes).collect();
        let qd = *points_needing_pass(&pts, &passes, MAX_PASSES).first()?;
        let i = pooled.iter().position(|p| p.qd == qd)?;
        let first = done
            .iter()
            .find(|s| is_first_pass_of(s, id, qd) && records::totals(s).is_some())?;
        Some((qd, passes[i] + 1, first))
    }

    /// Whether the sweep starts by writing the span (see `precondition`): by default
    /// when it writes anyway, and on a simulated drive, which has no data to keep (a
    /// read-only sweep of a real device leaves its data alone).
    pub fn preconditions(&self, target: &TargetInfo) -> bool {
        self.precondition
            .unwrap_or_else(|| target.kind == TargetKind::Simulated || self.writes())
    }

    /// Whether any of the chosen workloads writes.
    fn writes(&self) -> bool {
        WORKLOADS
            .iter()
            .any(|(id, _, rw, _)| rw.writes(0) && self.workloads.iter().any(|w| w == id))
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.max_qd == 0 || self.max_qd > 4096 {
            return Err("--max-qd: must be from 1 to 4096".into());
        }
        if !matches!(self.ioengine, IoEngine::Sync | IoEngine::IoUring) {
            return Err("--ioengine: must be sync or io_uring".into());
        }
        if self.recheck_passes > MAX_RECHECK_PASSES {
            return Err(format!(
                "--recheck-passes: must be from 0 to {MAX_RECHECK_PASSES}"
            ));
        }
        if self.point_time_ns < 10_000_000 {
            return Err("--point-time: must be at least 10ms".into());
        }
        for w in &self.workloads {
            if !WORKLOADS.iter().any(|x| x.0 == w) {
                let ids: Vec<&str> = WORKLOADS.iter().map(|x| x.0).collect();
                return Err(format!(
                    "--workloads: '{w}' is not one of {}",
                    ids.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The queue depths of the sweep: powers of two up to `max_qd`, and `max_qd` itself.
    pub fn qds(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..32)
            .map(|i| 1u32 << i)
            .take_while(|&q| q <= self.max_qd)
            .collect();
        if v.last() != Some(&self.max_qd) {
            v.push(self.max_qd);
        }
        v
    }
}

fn is_random(id: &str) -> bool {
    id.starts_with("4k")
}

/// The sweep's throughput for a step: IOPS for random workloads, MB/s for sequential.
fn throughput(rec: &StepRecord) -> Option<f64> {
    let t = records::totals(rec)?;
    let id = param_str(rec, "workload")?;
    Some(if is_random(id) {
        t.all.ops_per_s
    } else {
        t.all.mbps
    })
}

impl Suite for Peak {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Peak
    }
    fn test_file_bytes(&self) -> Option<u64> {
        span_file_bytes(self.size)
    }
    fn writes_to_device(&self) -> bool {
        self.writes() || self.precondition == Some(true)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = (0, plan::span_bytes(self.size, target));
        let mut out = Vec::new();
        let mut state = DriveState::AsFound;
        if self.preconditions(target) {
            out.push(plan::fill_span_step(
                "precondition",
                "precondition: discard, sequential fill",
                span,
                PRECONDITION_BS,
                PRECONDITION_QD,
                DataPattern::Random,
                target,
            )?);
            state = DriveState::SequentialFill;
        }
        for (id, label, rw, bs) in WORKLOADS {
            if !self.workloads.iter().any(|w| w == id) {
                continue;
            }
            if !is_random(id) && state.is_random() && self.seq_precondition {
                out.extend(seq_precondition(span, target)?);
                state = DriveState::SequentialSteady;
            }
            if rw == RwMode::RandWrite && self.steady_writes_ns > 0 {
                let shape = Shape::new(RwMode::RandWrite, 4096, STEADY_WRITES_QD, 1)
                    .engine(IoEngine::IoUring);
                let w = plan::workload(&shape, span, plan::for_time(self.steady_writes_ns), target)
                    .map_err(|e| format!("--steady-writes: {e}"))?;
                out.push(PlannedStep {
                    id: "steady-writes".into(),
                    name: format!(
                        "4K random writes at QD{STEADY_WRITES_QD} for {} s: steady state before the random-write sweep",
                        fmt(Some(self.steady_writes_ns as f64 / 1e9), 1)
                    ),
                    kind: StepKind::Prepare,
                    params: json!({}),
                    action: Action::Run,
                    idle_before_ns: 0,
                    workload: w,
                });
                state = DriveState::RandomSteady;
            }
            if rw == RwMode::RandWrite && state != DriveState::RandomSteady {
                state = DriveState::RandomWritten;
            }
            for qd in self.qds() {
                let (iodepth, jobs) = match self.ioengine {
                    IoEngine::Sync => (1, qd),
                    _ => (qd, 1),
                };
                let shape = Shape::new(rw, bs, iodepth, jobs).engine(self.ioengine);
                let w = plan::workload(&shape, span, self.point_bound(), target)
                    .map_err(|e| format!("{label} QD{qd}: {e}"))?;
                out.push(PlannedStep {
                    id: format!("{id}-qd{qd}"),
                    name: format!("{label}, QD{qd}"),
                    kind: StepKind::Measure,
                    params: json!({ "workload": id, "qd": qd, "state": state }),
                    action: Action::Run,
                    idle_before_ns: 0,
                    workload: w,
                });
            }
            // Placeholders one point long (the sweep's last point's workload, for the
            // plan's duration and hash): which point each measures again is chosen when
            // it comes (`adapt`), or it is skipped.
            let first = out.last().map(|s| s.workload.clone());
            for j in 1..=self.recheck_passes {
                out.push(PlannedStep {
                    id: format!("{id}-recheck{j}"),
                    name: format!(
                        "{label}, re-measurement {j} of {}: a point within noise of the knee threshold",
                        self.recheck_passes
                    ),
                    kind: StepKind::Measure,
                    params: json!({ "workload": id, "recheck": j, "state": state }),
                    action: Action::Run,
                    idle_before_ns: 0,
                    workload: first.clone().ok_or("the sweep has no point")?,
                });
            }
        }
        Ok(out)
    }
    fn skip(&self, step: &PlannedStep, done: &[StepRecord]) -> Option<String> {
        let id = step.params["workload"].as_str()?;
        if step.params.get("recheck").is_some() {
            return self.next_recheck(id, done).is_none().then(|| {
                format!("no point is left within its noise of the knee threshold with fewer than {MAX_PASSES} passes")
            });
        }
        if !self.early_stop {
            return None;
        }
        let curve: Vec<f64> = done
            .iter()
            .filter(|s| param_str(s, "workload") == Some(id) && !is_recheck(s))
            .filter_map(throughput)
            .collect();
        sweep_should_stop(&curve).then(|| {
            "throughput fell for two consecutive points past the peak (early stop)".to_string()
        })
    }
    fn chosen_at_run_time(&self, step: &PlannedStep) -> bool {
        step.params.get("recheck").is_some()
    }
    fn adapt(&self, step: &PlannedStep, done: &[StepRecord]) -> Option<PlannedStep> {
        let slot = step.params.get("recheck")?;
        let id = step.params["workload"].as_str()?;
        let label = WORKLOADS.iter().find(|w| w.0 == id)?.1;
        let (qd, pass, first) = self.next_recheck(id, done)?;
        Some(PlannedStep {
            id: step.id.clone(),
            name: format!(
                "{label}, QD{qd} again (pass {pass}: within noise of the knee threshold)"
            ),
            kind: step.kind,
            params: json!({
                "workload": id,
                "qd": qd,
                "state": step.params["state"],
                "recheck": slot,
                "pass": pass,
            }),
            action: Action::Run,
            idle_before_ns: 0,
            workload: first.config.clone(),
        })
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let mut sweeps = Vec::new();
        let mut rechecked = Vec::new();
        let mut states = Vec::new();
        let mut uncertain = Vec::new();
        let mut at_last = Vec::new();
        let mut metrics = Vec::new();
        let mut table = format!(
            "drivelab peak: QD sweep 1…{} ({}), {} s per point; knee = lowest QD not below 95 % of the plateau (the level within noise of the best) beyond its measured noise\n",
            self.max_qd,
            match self.ioengine {
                IoEngine::Sync => "threads, one synchronous I/O each",
                _ => "io_uring",
            },
            self.point_time_ns as f64 / 1e9
        );
        if let Some(st) = steps.iter().find(|s| s.id == "steady-writes") {
            let ran = st
                .run
                .as_ref()
                .map_or(0.0, |r| r.totals.elapsed_ns as f64 / 1e9);
            table += &if st.status == crate::bundle::StepStatus::Complete {
                format!(
                    "(the 4K random-write sweep followed {} s of 4K random writes at QD{STEADY_WRITES_QD} over the span: the drive's steady state)\n",
                    fmt(Some(ran), 1)
                )
            } else {
                format!(
                    "(the random writes before the 4K random-write sweep stopped after {} s: the sweep may not show the drive's steady state)\n",
                    fmt(Some(ran), 1)
                )
            };
        }
        if !steps.iter().any(|s| s.id == "precondition") {
            table += "(the span was not written first: reads found whatever the drive held, and blocks never written or trimmed may read faster than data)\n";
        }
        table += &format!(
            "{:<24} {:>6} {:>12} {:>10} {:>12} {:>12} {:>12} {:>8} {:>14}\n",
            "Workload", "QD", "IOPS", "MB/s", "mean µs", "p99 µs", "p99.99 µs", "W", "efficiency"
        );
        for (id, label, _, _) in WORKLOADS {
            if !self.workloads.iter().any(|w| w == id) {
                continue;
            }
            let sweep = sweep_of(steps, id);
            let unit = if is_random(id) { "IOPS" } else { "MB/s" };
            if let Some(st) = sweep.state {
                states.push(format!("{label}: {}", st.describe()));
            }
            if let Some(k) = &sweep.knee {
                let p = &sweep.curve[k.index];
                metrics.extend(knee_metrics(label, is_random(id), &sweep));
                let (eff, eff_unit) = if is_random(id) {
                    (p.kiops_per_w, "kIOPS/W")
                } else {
                    (p.mbps_per_w, "MB/s/W")
                };
                table += &format!(
                    "{:<24} {:>6} {:>12.0} {:>10.1} {:>12} {:>12} {:>12} {:>8} {:>14}\n",
                    label,
                    k.qd,
                    p.iops,
                    p.mbps,
                    fmt(p.lat_mean_us, 1),
                    fmt(p.lat_p99_us, 1),
                    fmt(p.lat_p9999_us, 1),
                    fmt(p.power_mean_w, 2),
                    eff.map_or("-".into(), |e| format!("{e:.2} {eff_unit}"))
                );
            } else {
                table += &format!("{label:<24} {:>6}\n", "-");
            }
            if let Some(line) = recheck_summary(&sweep) {
                rechecked.push(format!("{label} {line}"));
            }
            if let Some(k) = sweep.knee.as_ref().filter(|k| k.at_last_qd) {
                at_last.push(format!("{label} QD{}", k.qd));
            }
            if let Some(k) = sweep.knee.as_ref().filter(|k| !k.uncertain_qds.is_empty()) {
                let qds: Vec<String> = k.uncertain_qds.iter().map(|q| format!("QD{q}")).collect();
                uncertain.push(format!("{label} {}", qds.join(", ")));
            }
            sweeps.push(SweepEntry {
                workload: id.to_string(),
                label: label.to_string(),
                unit: unit.to_string(),
                sweep,
            });
        }
        if !rechecked.is_empty() {
            table += &format!(
                "measured again (within noise of the knee threshold, or the best point, which sets it; up to {MAX_PASSES} passes a point, {} extra a sweep): {}\n",
                self.recheck_passes,
                rechecked.join("; ")
            );
        }
        if !uncertain.is_empty() {
            table += &format!(
                "within their measured noise of the knee threshold (a longer --point-time or more --recheck-passes settles them): {}\n",
                uncertain.join("; ")
            );
        }
        if !at_last.is_empty() {
            table += &format!(
                "knee at the sweep's highest queue depth (the curve may still be rising there; a higher --max-qd shows where it levels off): {}\n",
                at_last.join("; ")
            );
        }
        if !states.is_empty() {
            table += &format!("drive state each sweep saw: {}\n", states.join("; "));
        }
        Report {
            summary: Summary {
                analysis: serde_json::to_value(Analysis { sweeps }).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// A sweep's headline metrics, named after its `label`: the knee's QD and throughput,
/// the peak, the latencies, power and efficiency at the knee (none without a knee);
/// throughput in IOPS when `random`, else MB/s.
pub fn knee_metrics(label: &str, random: bool, sweep: &Sweep) -> Vec<Metric> {
    let Some(k) = &sweep.knee else {
        return Vec::new();
    };
    let p = &sweep.curve[k.index];
    let unit = if random { "IOPS" } else { "MB/s" };
    let (eff, eff_unit) = if random {
        (p.kiops_per_w, "kIOPS/W")
    } else {
        (p.mbps_per_w, "MB/s/W")
    };
    [
        ("knee QD", Some(k.qd as f64), "QD"),
        ("at knee", Some(k.throughput), unit),
        ("peak", Some(k.peak_throughput), unit),
        ("mean latency at knee", p.lat_mean_us, "µs"),
        ("p99 latency at knee", p.lat_p99_us, "µs"),
        ("p99.99 latency at knee", p.lat_p9999_us, "µs"),
        ("average power at knee", p.power_mean_w, "W"),
        ("efficiency at knee", eff, eff_unit),
    ]
    .into_iter()
    .filter_map(|(what, v, unit)| Metric::new(format!("{label} {what}"), v, unit))
    .collect()
}

/// The peak suite's analysis (`summary.analysis`): one sweep per workload, in plan
/// order. An imported grid of fio results over queue depth makes the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub sweeps: Vec<SweepEntry>,
}

/// One workload's sweep with its names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepEntry {
    /// The workload's id (`4k-randread`), the start of its steps' ids.
    pub workload: String,
    /// Its name in tables and charts ("4K random read").
    pub label: String,
    /// The unit of its throughput: "IOPS" (random) or "MB/s" (sequential).
    pub unit: String,
    pub sweep: Sweep,
}

impl SweepEntry {
    /// Whether its throughput is in MB/s (else IOPS).
    pub fn in_mbps(&self) -> bool {
        self.unit == "MB/s"
    }

    /// A point's throughput in the sweep's unit.
    pub fn throughput(&self, p: &Point) -> f64 {
        if self.in_mbps() {
            p.mbps
        } else {
            p.iops
        }
    }
}

impl Sweep {
    /// The knee's point of the curve, if the sweep has a knee.
    pub fn knee_point(&self) -> Option<&Point> {
        self.curve.get(self.knee.as_ref()?.index)
    }
}

/// One measured point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub qd: u32,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub iops: f64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub mbps: f64,
    pub lat_mean_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_p9999_us: Option<f64>,
    /// Mean power over the point (null without a power reading), and the efficiency
    /// the enterprise review prints at the headline QD.
    #[serde(default)]
    pub power_mean_w: Option<f64>,
    #[serde(default)]
    pub kiops_per_w: Option<f64>,
    #[serde(default)]
    pub mbps_per_w: Option<f64>,
    /// Standard error of the point's throughput (IOPS for random workloads, MB/s for
    /// sequential) by batch means over its seconds; null when it has too few intervals
    /// (a result imported without its logs has one: no noise is known).
    #[serde(default)]
    pub stderr: Option<f64>,
    /// Measurement passes pooled into this point: 1, or more when it was within its
    /// noise of the knee threshold (or set it) and was measured again.
    #[serde(default = "one")]
    pub passes: u32,
    /// Measured seconds over all its passes (0 in bundles from before it was recorded).
    #[serde(default)]
    pub measured_s: f64,
    /// Still within its noise of the knee threshold after its passes: whether it reaches
    /// 95 % is not settled (it is in the knee's `uncertain_qds`).
    #[serde(default)]
    pub uncertain: bool,
}

fn one() -> u32 {
    1
}

/// Batches of a point's intervals for its standard error.
const NOISE_BATCHES: usize = 5;

/// A workload's curve, its knee, and where it stopped early.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub curve: Vec<Point>,
    /// `index` points into `curve`.
    pub knee: Option<Knee>,
    /// QDs skipped by the early-stop rule.
    pub skipped_qds: Vec<u32>,
    /// The state the drive was in for this sweep (None in bundles from before it was
    /// recorded).
    #[serde(default)]
    pub state: Option<DriveState>,
    /// The knee from each point's first pass alone (before any was measured again).
    #[serde(default)]
    pub first_pass_knee_qd: Option<u32>,
}

/// Discard the span and write it sequentially twice: the sequential steady state the
/// 128K sweeps are measured in after random writes.
fn seq_precondition(span: (u64, u64), target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
    let first = plan::fill_span_step(
        "seq-precondition-pass1",
        "sequential precondition: discard, sequential fill pass 1 (after the random writes)",
        span,
        PRECONDITION_BS,
        PRECONDITION_QD,
        DataPattern::Random,
        target,
    )?;
    let mut out = vec![first.clone()];
    for pass in 2..=SEQ_PRECONDITION_PASSES {
        out.push(PlannedStep {
            id: format!("seq-precondition-pass{pass}"),
            name: format!("sequential precondition: sequential fill pass {pass}"),
            action: Action::Run,
            ..first.clone()
        });
    }
    Ok(out)
}

/// Whether a step is one of the sweep's re-measurements.
fn is_recheck(rec: &StepRecord) -> bool {
    rec.params.get("recheck").is_some()
}

/// Whether a step is the first pass of workload `id` at `qd`.
fn is_first_pass_of(rec: &StepRecord, id: &str, qd: u32) -> bool {
    param_str(rec, "workload") == Some(id)
        && param_u64(rec, "qd") == Some(qd as u64)
        && !is_recheck(rec)
}

/// A point's throughput in the sweep's unit, with its noise.
fn sweep_point(id: &str, p: &Point) -> SweepPoint {
    SweepPoint {
        qd: p.qd,
        throughput: if is_random(id) { p.iops } else { p.mbps },
        stderr: p.stderr.unwrap_or(0.0),
    }
}

/// Every measured point of workload `id` (in plan order of first passes), each pooling
/// its first pass and, with `rechecks`, its re-measurements.
fn pooled_points(steps: &[StepRecord], id: &str, rechecks: bool) -> Vec<Point> {
    let of_id = |s: &&StepRecord| param_str(s, "workload") == Some(id);
    steps
        .iter()
        .filter(of_id)
        .filter(|s| !is_recheck(s) && records::totals(s).is_some())
        .map(|first| {
            let qd = param_u64(first, "qd").unwrap_or(0);
            let passes: Vec<&StepRecord> = std::iter::once(first)
                .chain(steps.iter().filter(of_id).filter(|s| {
                    rechecks
                        && is_recheck(s)
                        && param_u64(s, "qd") == Some(qd)
                        && records::totals(s).is_some()
                }))
                .collect();
            pool(id, qd as u32, &passes)
        })
        .collect()
}

/// One point from its passes (all complete): throughput over their summed time, the
/// standard error over their intervals together ([`NOISE_BATCHES`] batches a pass),
/// latencies from their merged histograms, power over their intervals.
fn pool(id: &str, qd: u32, passes: &[&StepRecord]) -> Point {
    pool_as(is_random(id), qd, passes)
}

/// [`pool`] with the sweep's unit said directly: IOPS when `random`, else MB/s.
pub fn pool_as(random: bool, qd: u32, passes: &[&StepRecord]) -> Point {
    let runs: Vec<&drivelab_engine::result::Measured> =
        passes.iter().filter_map(|s| s.run.as_ref()).collect();
    let (ops, bytes, ns) = runs.iter().fold((0u64, 0u64, 0u64), |(o, b, n), r| {
        (
            o + r.totals.all.ops,
            b + r.totals.all.bytes,
            n + r.totals.elapsed_ns,
        )
    });
    let secs = ns.max(1) as f64 / 1e9;
    let samples: Vec<f64> = passes
        .iter()
        .flat_map(|s| {
            records::per_interval(s, |x| {
                if random {
                    x.all.ops_per_s
                } else {
                    x.all.bytes_per_s / 1e6
                }
            })
        })
        .collect();
    let tele = if let [only] = passes {
        records::step_telemetry(only).unwrap_or_default()
    } else {
        let intervals: Vec<_> = runs
            .iter()
            .flat_map(|r| records::telemetry_intervals(r))
            .collect();
        drivelab_analysis::telemetry::step_telemetry(&intervals)
    };
    let l = merged_latency(&runs).unwrap_or_else(|| runs[0].totals.all.latency.clone());
    let (iops, mbps) = if let [only] = runs.as_slice() {
        (only.totals.all.ops_per_s, only.totals.all.mbps)
    } else {
        (ops as f64 / secs, bytes as f64 / secs / 1e6)
    };
    Point {
        power_mean_w: tele.power_mean_w,
        kiops_per_w: tele.kiops_per_w,
        mbps_per_w: tele.mbps_per_w,
        stderr: batch_stderr(&samples, NOISE_BATCHES * passes.len()),
        qd,
        iops,
        mbps,
        lat_mean_us: us(l.mean_ns),
        lat_p99_us: us(l.at(99.0).map(|v| v as f64)),
        lat_p9999_us: us(l.at(99.99).map(|v| v as f64)),
        passes: passes.len() as u32,
        measured_s: ns as f64 / 1e9,
        uncertain: false,
    }
}

/// The latency of several runs together (None for one run, whose own stats stand, or
/// a histogram that does not read back).
fn merged_latency(
    runs: &[&drivelab_engine::result::Measured],
) -> Option<drivelab_engine::result::LatencyStats> {
    use drivelab_engine::hist::Histogram;
    if runs.len() < 2 {
        return None;
    }
    let mut all = Histogram::new();
    for r in runs {
        all.merge(&Histogram::from_json(&r.histogram.read).ok()?);
        all.merge(&Histogram::from_json(&r.histogram.write).ok()?);
    }
    Some(drivelab_engine::result::LatencyStats::from_hist(&all))
}

fn sweep_of(steps: &[StepRecord], id: &str) -> Sweep {
    let of_id: Vec<&StepRecord> = steps
        .iter()
        .filter(|s| param_str(s, "workload") == Some(id))
        .collect();
    let state = of_id
        .iter()
        .find_map(|s| serde_json::from_value(s.params.get("state")?.clone()).ok());
    let skipped = of_id
        .iter()
        .filter(|s| s.status == crate::bundle::StepStatus::Skipped && !is_recheck(s))
        .filter_map(|s| param_u64(s, "qd").map(|q| q as u32))
        .collect();
    let first_pts: Vec<SweepPoint> = pooled_points(steps, id, false)
        .iter()
        .map(|p| sweep_point(id, p))
        .collect();
    let mut curve = pooled_points(steps, id, true);
    let pts: Vec<SweepPoint> = curve.iter().map(|p| sweep_point(id, p)).collect();
    let knee = knee_95(&pts);
    if let Some(k) = &knee {
        for p in &mut curve {
            p.uncertain = k.uncertain_qds.contains(&p.qd);
        }
    }
    Sweep {
        knee,
        curve,
        skipped_qds: skipped,
        state,
        first_pass_knee_qd: knee_95(&first_pts).map(|k| k.qd),
    }
}

/// A sweep of points measured elsewhere (results imported from fio): each `(qd, runs)`
/// pools its runs as a re-measured point is pooled, and the knee is [`knee_95`]'s, in
/// IOPS when `random`, else MB/s (the unit a `run peak` sweep of that workload has).
pub fn sweep_of_points(random: bool, points: &[(u32, Vec<&StepRecord>)]) -> Sweep {
    let tp = |p: &Point| SweepPoint {
        qd: p.qd,
        throughput: if random { p.iops } else { p.mbps },
        stderr: p.stderr.unwrap_or(0.0),
    };
    let first: Vec<SweepPoint> = points
        .iter()
        .map(|(qd, runs)| tp(&pool_as(random, *qd, &runs[..1])))
        .collect();
    let mut curve: Vec<Point> = points
        .iter()
        .map(|(qd, runs)| pool_as(random, *qd, runs))
        .collect();
    let knee = knee_95(&curve.iter().map(tp).collect::<Vec<_>>());
    if let Some(k) = &knee {
        for p in &mut curve {
            p.uncertain = k.uncertain_qds.contains(&p.qd);
        }
    }
    Sweep {
        knee,
        curve,
        skipped_qds: Vec::new(),
        state: None,
        first_pass_knee_qd: knee_95(&first).map(|k| k.qd),
    }
}

/// The report's account of a sweep's re-measured points: each with its passes, seconds
/// and whether it was settled, and the knee before and after (None when none was).
fn recheck_summary(sweep: &Sweep) -> Option<String> {
    let again: Vec<String> = sweep
        .curve
        .iter()
        .filter(|p| p.passes > 1)
        .map(|p| {
            format!(
                "QD{} {} passes {} s {}",
                p.qd,
                p.passes,
                fmt(Some(p.measured_s), 1),
                if p.uncertain {
                    "still uncertain"
                } else {
                    "settled"
                }
            )
        })
        .collect();
    if again.is_empty() {
        return None;
    }
    let qd = |q: Option<u32>| q.map_or("-".into(), |q| format!("QD{q}"));
    Some(format!(
        "{}, knee {} → {}",
        again.join(", "),
        qd(sweep.first_pass_knee_qd),
        qd(sweep.knee.as_ref().map(|k| k.qd))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_points_get_enough_intervals_for_their_noise() {
        let interval = |p: &Peak| match p.point_bound() {
            plan::Bound::Time { interval_ns, .. } => interval_ns,
            plan::Bound::Bytes(_) => unreachable!(),
        };
        let mut p = Peak::new(true);
        assert_eq!(interval(&p), 25_000_000); // 250 ms in 10
        p.point_time_ns = secs(30);
        assert_eq!(interval(&p), secs(1));
        p.point_time_ns = secs(5);
        assert_eq!(interval(&p), millis(500));
        p.point_time_ns = millis(50);
        assert_eq!(interval(&p), millis(10));
        // Bundles from before the knob measured a point in whole seconds (or as one).
        let mut knobs = serde_json::to_value(Peak::new(true)).unwrap();
        let m = knobs.as_object_mut().unwrap();
        m.remove("recheck_passes").unwrap();
        m.remove("min_point_intervals").unwrap();
        let mut old: Peak = serde_json::from_value(knobs).unwrap();
        assert_eq!((old.recheck_passes, interval(&old)), (0, 250_000_000));
        old.point_time_ns = secs(5);
        assert_eq!(interval(&old), secs(1));
    }

    #[test]
    fn qds_are_powers_of_two_and_the_maximum() {
        let mut p = Peak::new(false);
        assert_eq!(p.qds(), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
        p.max_qd = 12;
        assert_eq!(p.qds(), vec![1, 2, 4, 8, 12]);
        p.max_qd = 1;
        assert_eq!(p.qds(), vec![1]);
    }
}
