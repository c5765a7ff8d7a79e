//! `consistency`: the performance-consistency test. Precondition the span (discard, then
//! 128K sequential writes at QD32, `passes` times), then 4K random writes at QD32 with
//! incompressible data over the whole span for `duration`, per-second series (the first
//! 30 s also at 100 ms, where a burst of 2 s is seen). The test is
//! one continuous run, as the reviews run it; its seconds are cut into rounds only for the
//! SNIA PTS steady-state judgement. With `--until-steady` the test runs in rounds instead
//! (one engine run each, back to back, the rule checked between them): there, the I/Os in
//! flight at a round's end drain before the next round starts.
//!
//! Scored on the last 400 s: average IOPS and average ÷ standard deviation, min, p1/p99,
//! zero-IOPS seconds, the performance levels, the end of the initial burst, the phases
//! of the run (burst, intermediate, second burst or GC level, steady) and the PTS verdict over the
//! rounds. `--op 25%` tests 75 % of the span after discarding the rest.

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_analysis::consistency::{
    burst_transition, burst_transition_fine, describe_phases, levels_after_burst, phases, score,
    stalls, Cache, REVIEW_WINDOW_S,
};
use drivelab_analysis::steady::{pts_verdict, rounds_from_series};
use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{DataPattern, LogHead, RwMode};
use drivelab_engine::target::TargetInfo;

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt};
use crate::suite::{secs, span_file_bytes, AfterInterrupt, Report, Suite};

/// The consistency suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Consistency {
    /// Span: the whole target.
    pub size: SizeOrPercent,
    /// Length of the random-write test: 3600 s.
    pub duration_ns: u64,
    /// Length of one PTS round: 60 s (whole seconds).
    pub round_ns: u64,
    /// Scoring window: the last 400 s.
    pub window_s: usize,
    /// Queue depth of the random writes: 32.
    pub qd: u32,
    /// Sequential fill passes of the precondition: 1 (2 for the SNIA variant).
    pub passes: u32,
    /// Over-provisioning simulated: this share of the span is discarded and never written.
    pub op_percent: f64,
    /// Stop once the PTS steady state is reached.
    pub until_steady: bool,
    /// Content of the writes: incompressible.
    pub data: DataPattern,
    pub short: bool,
    /// The continuous random writes carry the verify header and are read back after
    /// the measured time (`--verify`); a block not as written fails the run.
    #[serde(default)]
    pub verify: bool,
}

/// Most sequential fill passes of the precondition: the SNIA variant takes 2; more is a
/// typo, each pass writes the whole span.
pub const MAX_PASSES: u32 = 10;

/// The test's first seconds are also logged at 100 ms, as the sequential fill is: a
/// burst of two seconds (a drive at 120 k IOPS for 2 s, then 6 k) is one or two
/// samples per second, and the burst rule needs it as a plateau.
pub const HEAD_INTERVAL_NS: u64 = 100_000_000;
/// How long the finer series lasts: the first 30 s (longer bursts are seen to within a
/// second in 30, 3 %, on the per-second series).
pub const HEAD_NS: u64 = 30_000_000_000;

/// Block size and depth of the precondition's sequential passes.
pub const PRECONDITION_BS: u32 = 128 << 10;
pub const PRECONDITION_QD: u32 = 32;

impl Consistency {
    pub fn new(short: bool) -> Consistency {
        Consistency {
            size: if short {
                SizeOrPercent::Bytes(64 << 20)
            } else {
                SizeOrPercent::Percent(100.0)
            },
            duration_ns: if short { secs(10) } else { secs(3600) },
            round_ns: if short { secs(2) } else { secs(60) },
            window_s: if short { 6 } else { REVIEW_WINDOW_S },
            qd: 32,
            passes: 1,
            op_percent: 0.0,
            until_steady: false,
            data: DataPattern::Random,
            short,
            verify: false,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.verify && self.until_steady {
            return Err("--verify: checks the continuous random writes, which --until-steady cuts into rounds (separate steps); give one of the two".into());
        }
        if self.round_ns < secs(1) || !self.round_ns.is_multiple_of(secs(1)) {
            return Err("--round: must be a whole number of seconds, at least 1s".into());
        }
        if self.duration_ns < self.round_ns {
            let r = self.round_s();
            return Err(format!(
                "--duration: {}s is shorter than one steady-state round of {r}s (--round: 60s by default, 2s with --short); give --duration {}s or more, or a shorter --round",
                self.duration_ns / secs(1),
                r
            ));
        }
        if self.window_s == 0 {
            return Err("--window: must be at least 1s".into());
        }
        if self.qd == 0 {
            return Err("--qd: must be at least 1".into());
        }
        if self.passes == 0 || self.passes > MAX_PASSES {
            return Err(format!(
                "--passes: must be a whole number from 1 to {MAX_PASSES}"
            ));
        }
        if !(0.0..100.0).contains(&self.op_percent) {
            return Err("--op: must be a percentage from 0 to below 100, like 25%".into());
        }
        Ok(())
    }

    fn round_s(&self) -> usize {
        (self.round_ns / secs(1)) as usize
    }
}

impl Suite for Consistency {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Consistency
    }
    fn test_file_bytes(&self) -> Option<u64> {
        span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = plan::span_bytes(self.size, target);
        let tested = plan::span_bytes(
            SizeOrPercent::Bytes(((span as f64) * (1.0 - self.op_percent / 100.0)) as u64),
            target,
        );
        if tested < PRECONDITION_BS as u64 {
            return Err(format!(
                "--op: {}% leaves {tested} bytes of the {span}-byte span to test, less than one {} KiB precondition write; give a lower --op or a larger --size",
                self.op_percent,
                PRECONDITION_BS >> 10
            ));
        }
        let also_discard = (tested < span).then_some((tested, span - tested));
        let shape = Shape::new(RwMode::RandWrite, 4096, self.qd, 1).data(self.data);
        let mut out = Vec::new();
        let base = plan::workload(&shape, (0, tested), plan::for_time(self.round_ns), target)?;
        let fill = plan::precondition_pass(&base, PRECONDITION_BS, PRECONDITION_QD);
        for pass in 1..=self.passes {
            out.push(PlannedStep {
                id: format!("precondition-pass{pass}"),
                name: if pass == 1 {
                    "precondition: discard, sequential fill pass 1".into()
                } else {
                    format!("precondition: sequential fill pass {pass}")
                },
                kind: StepKind::Prepare,
                params: json!({ "pass": pass }),
                action: if pass == 1 {
                    Action::Precondition { also_discard }
                } else {
                    Action::Run
                },
                idle_before_ns: 0,
                workload: fill.clone(),
            });
        }
        let rounds = self.duration_ns.div_ceil(self.round_ns);
        if !self.until_steady {
            let mut w = plan::workload(
                &shape,
                (0, tested),
                plan::for_time(self.duration_ns),
                target,
            )?;
            w.log_head = head(self.duration_ns);
            if self.verify {
                // After the measured time, not between the precondition and it: the pass's
                // reads would change the state the random writes start from.
                w.verify = true;
                drivelab_engine::run::check_verify(&w, target)?;
            }
            out.push(PlannedStep {
                id: "randwrite".into(),
                name: format!(
                    "4K random write QD{}, {} s continuous",
                    self.qd,
                    fmt(Some(self.duration_ns as f64 / 1e9), 0)
                ),
                kind: StepKind::Measure,
                params: json!({ "continuous": true }),
                action: Action::Run,
                idle_before_ns: 0,
                workload: w,
            });
            return Ok(out);
        }
        for r in 1..=rounds {
            let len = self
                .round_ns
                .min(self.duration_ns - (r - 1) * self.round_ns);
            let mut w = plan::workload(&shape, (0, tested), plan::for_time(len), target)?;
            if r == 1 {
                w.log_head = head(len);
            }
            out.push(PlannedStep {
                id: format!("randwrite-round{r}"),
                name: format!("4K random write QD{}, round {r} of {rounds}", self.qd),
                kind: StepKind::Measure,
                params: json!({ "round": r }),
                action: Action::Run,
                idle_before_ns: 0,
                workload: w,
            });
        }
        Ok(out)
    }
    fn skip(&self, step: &PlannedStep, done: &[StepRecord]) -> Option<String> {
        if !self.until_steady || step.kind != StepKind::Measure {
            return None;
        }
        pts_verdict(&round_means(done, self.round_s()))
            .reached
            .then(|| "the PTS steady state was reached (--until-steady)".into())
    }
    /// The continuous test measures the drive from its precondition on: its interrupted
    /// part's random writes changed that state, so the precondition runs again before
    /// it. A round of `--until-steady` continues from the rounds before it.
    fn after_interrupt(&self, step: &PlannedStep) -> AfterInterrupt {
        if step.params.get("continuous").and_then(|v| v.as_bool()) == Some(true) {
            AfterInterrupt::Reprecondition
        } else {
            AfterInterrupt::Again
        }
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let a = analyze(steps, self.window_s, self.round_s());
        let metrics = headline_metrics(&a);
        let s = &a.scores;
        let mut table = format!(
            "drivelab consistency: 4K random writes QD{} over {}{} after {} fill pass(es), {}\n",
            self.qd,
            if self.op_percent > 0.0 {
                format!("{:.0} % of ", 100.0 - self.op_percent)
            } else {
                String::new()
            },
            "the span",
            self.passes,
            measured_text(steps, s.series_len_s)
        );
        table += &format!(
            "  last {} s: average {} IOPS, average/stddev {}, min {}, p1 {}, p99 {}\n",
            s.window_len_s,
            fmt(s.avg_iops, 0),
            fmt(s.avg_over_stddev, 2),
            fmt(s.min_iops, 0),
            fmt(s.p1_iops, 0),
            fmt(s.p99_iops, 0)
        );
        table += &format!(
            "  zero-IOPS seconds: {} (longest run {} s); in the window: {}\n",
            s.series_zero_seconds, s.series_longest_zero_run_s, s.zero_seconds
        );
        table += &match &a.burst {
            Some(b) => format!(
                "  initial burst: {:.0} IOPS until {} s, then {:.0} IOPS\n",
                b.burst_iops,
                fmt(Some(b.length_s.unwrap_or(b.at_s as f64)), 1),
                b.steady_iops
            ),
            None => "  initial burst: none found\n".into(),
        };
        if let Some(p) = describe_phases(&a.phases) {
            table += &format!("  phases: {p}\n");
        }
        table += &format!("  performance levels: {}\n", levels_text(&a));
        table += &format!(
            "  PTS steady state ({} rounds of {} s): {}\n",
            a.rounds.len(),
            self.round_s(),
            match (
                a.steady.reached,
                a.steady.window_first_round,
                a.steady.window_last_round
            ) {
                (true, Some(f), Some(l)) => format!("reached in rounds {}–{}", f + 1, l + 1),
                _ if a.steady.gave_up => "not reached (gave up after 25 rounds)".into(),
                _ => "not reached".into(),
            }
        );
        Report {
            summary: Summary {
                analysis: serde_json::to_value(&a).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// The finer series over the first [`HEAD_NS`] of a test of `len_ns`.
/// The analysis' headline metrics, as the suite's summary carries them (a fio import
/// of such a run carries the same, by the same names).
pub fn headline_metrics(a: &ConsistencyAnalysis) -> Vec<Metric> {
    let mut metrics = Vec::new();
    let w = format!("last {} s", a.scores.window_len_s);
    metrics.extend(Metric::new(
        format!("average IOPS ({w})"),
        a.scores.avg_iops,
        "IOPS",
    ));
    metrics.extend(Metric::new(
        format!("average / standard deviation ({w})"),
        a.scores.avg_over_stddev,
        "ratio",
    ));
    metrics.extend(Metric::new(
        format!("minimum IOPS ({w})"),
        a.scores.min_iops,
        "IOPS",
    ));
    metrics.extend(Metric::new(
        "seconds with no completed I/O",
        Some(a.scores.series_zero_seconds as f64),
        "s",
    ));
    metrics.extend(Metric::new(
        "end of the initial burst",
        a.burst
            .as_ref()
            .map(|b| b.length_s.unwrap_or(b.at_s as f64)),
        "s",
    ));
    metrics.extend(Metric::new(
        "performance levels",
        Some(a.levels.len() as f64),
        "levels",
    ));
    metrics.extend(Metric::new(
        "PTS steady state reached",
        Some(if a.steady.reached { 1.0 } else { 0.0 }),
        "bool",
    ));
    metrics
}

fn head(len_ns: u64) -> Option<LogHead> {
    let len_ns = HEAD_NS.min(len_ns) / HEAD_INTERVAL_NS * HEAD_INTERVAL_NS;
    (len_ns > 0).then_some(LogHead {
        interval_ns: HEAD_INTERVAL_NS,
        len_ns,
    })
}

/// The random-write test's first seconds at the finer interval (IOPS per interval,
/// ramp left out) and that interval in seconds, when they were logged.
fn test_head(steps: &[StepRecord]) -> Option<(Vec<f64>, f64)> {
    let head = round_steps(steps)
        .next()?
        .run
        .as_ref()?
        .series
        .head
        .as_ref()?;
    let iops = head
        .records
        .iter()
        .filter(|r| !r.ramp)
        .map(|r| r.all.ops_per_s)
        .collect();
    Some((iops, head.interval_ns as f64 / 1e9))
}

/// The finished runs of the random-write test, in order: the continuous run, or the
/// rounds of `--until-steady`.
fn round_steps(steps: &[StepRecord]) -> impl Iterator<Item = &StepRecord> {
    steps
        .iter()
        .filter(|s| s.kind == StepKind::Measure && records::totals(s).is_some())
        .filter(|s| s.params.get("round").is_some() || is_continuous(s))
}

fn is_continuous(s: &StepRecord) -> bool {
    s.params.get("continuous").and_then(|v| v.as_bool()) == Some(true)
}

/// The random-write test's per-second IOPS, rounds concatenated in order. Between two
/// rounds, a drain of the I/Os in flight that took whole seconds (the deadline fell in
/// a stall) is that many seconds without completions: the device was not answering.
fn test_series(steps: &[StepRecord]) -> Vec<f64> {
    let rounds: Vec<&StepRecord> = round_steps(steps).collect();
    let mut x = Vec::new();
    for (i, s) in rounds.iter().enumerate() {
        x.extend(records::iops_series(s));
        if i + 1 < rounds.len() {
            let drain_ns = s.run.as_ref().map_or(0, |r| r.drain_ns);
            let drain_s = drain_ns as f64 / 1e9;
            // The last interval's rate runs over the drain too; here the drain has its
            // own seconds, so that interval counts over its own time on the grid.
            if drain_s.round() > 0.0 {
                let last = s.run.as_ref().and_then(|r| r.series.records.last());
                if let (Some(rec), Some(v)) = (last, x.last_mut()) {
                    let on_grid = rec.duration_ns.saturating_sub(drain_ns).max(1);
                    *v = rec.all.ops as f64 / (on_grid as f64 / 1e9);
                }
            }
            x.extend(std::iter::repeat_n(0.0, drain_s.round() as usize));
        }
    }
    x
}

/// What the series holds, in the terms the run was asked for: the seconds of the rounds
/// (`--duration` when the test ran to its end) and, apart, the seconds the series adds
/// between rounds for drains that took whole seconds (see `test_series`).
fn measured_text(steps: &[StepRecord], series_len_s: usize) -> String {
    let rounds: Vec<&StepRecord> = round_steps(steps).collect();
    let in_rounds: usize = rounds.iter().map(|s| records::iops_series(s).len()).sum();
    if rounds.iter().any(|s| is_continuous(s)) {
        return format!("{in_rounds} s measured continuously");
    }
    let drains = series_len_s.saturating_sub(in_rounds);
    let mut t = format!("{in_rounds} s measured in {} round(s)", rounds.len());
    if drains > 0 {
        t += &format!(
            " (+ {drains} s between rounds: the I/Os in flight at a round's end drained \
             through a stall, counted as seconds without completions)"
        );
    }
    t
}

/// Each finished whole round's mean IOPS over its own `round_s` seconds (what the
/// steady-state rule judges; a shorter last round is left out, and the drains between
/// rounds are not part of any round). A continuous run's seconds are cut into rounds.
fn round_means(steps: &[StepRecord], round_s: usize) -> Vec<f64> {
    if let Some(s) = round_steps(steps).find(|s| is_continuous(s)) {
        return rounds_from_series(&records::iops_series(s), round_s);
    }
    round_steps(steps)
        .filter_map(|s| {
            rounds_from_series(&records::iops_series(s), round_s)
                .first()
                .copied()
        })
        .collect()
}

/// The consistency analysis saved in the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyAnalysis {
    pub iops_per_s: Vec<f64>,
    pub scores: drivelab_analysis::consistency::ConsistencyScores,
    pub stalls: Vec<drivelab_analysis::consistency::Stall>,
    /// Levels of the part after the initial burst (the whole series without one),
    /// seconds of a stall or its end left out: `levels_scope` says which seconds.
    pub levels: Vec<drivelab_analysis::consistency::Level>,
    /// The seconds the levels were counted over (each level's share is of these);
    /// absent in bundles written before it was kept.
    #[serde(default)]
    pub levels_scope: Option<drivelab_analysis::consistency::LevelScope>,
    pub burst: Option<drivelab_analysis::consistency::Transition>,
    /// The run's phases in order (burst, intermediate, second burst, steady); absent
    /// in bundles written before they were analysed.
    #[serde(default)]
    pub phases: Vec<drivelab_analysis::consistency::Phase>,
    /// Mean IOPS of each round.
    pub rounds: Vec<f64>,
    pub steady: drivelab_analysis::steady::SteadyVerdict,
}

/// The performance levels with their shares and what the shares are of: "27765 (60 %),
/// 79922 (40 %) IOPS (% of the 1180 s after the initial burst, from 20 s on, with more
/// than 32 I/Os)"; "-" without a level. The text summary's line.
pub fn levels_text(a: &ConsistencyAnalysis) -> String {
    levels_text_with(a, |iops| format!("{iops:.0}")).unwrap_or_else(|| "-".into())
}

/// [`levels_text`] with the IOPS written by `number` (the HTML report groups digits);
/// None without a level.
pub fn levels_text_with(a: &ConsistencyAnalysis, number: impl Fn(f64) -> String) -> Option<String> {
    if a.levels.is_empty() {
        return None;
    }
    let levels: Vec<String> = a
        .levels
        .iter()
        .map(|l| format!("{} ({:.0} %)", number(l.centre_iops), 100.0 * l.share))
        .collect();
    let of = match &a.levels_scope {
        Some(scope) => format!(" (% of {})", scope.describe()),
        None => String::new(),
    };
    Some(format!("{} IOPS{of}", levels.join(", ")))
}

/// At most this many I/Os in a second is the queue that waited through a stall
/// coming back: the deepest queue of the run's steps.
fn stall_iops(steps: &[StepRecord]) -> f64 {
    steps
        .iter()
        .map(|s| s.config.queue_depth() as f64)
        .fold(0.0, f64::max)
}

/// Whether the precondition's first sequential fill (after the discard: an empty drive)
/// ran into a write cache: then a later phase back at the burst's level is the cache
/// again, else the drive between GC phases (see `phases`).
fn cache_seen(steps: &[StepRecord]) -> Cache {
    let Some(fill) = steps.iter().find(|s| s.id == "precondition-pass1") else {
        return Cache::NotSeen;
    };
    let a = crate::seqfill::analyze(fill, crate::seqfill::SeqFill::new(false).drop_fraction).fill;
    if a.cache_bytes.is_some() || a.cache_too_short_to_see {
        Cache::Seen
    } else {
        Cache::NotSeen
    }
}

/// Analyse the finished steps of a consistency run.
pub fn analyze(steps: &[StepRecord], window_s: usize, round_s: usize) -> ConsistencyAnalysis {
    let x = test_series(steps);
    // One verdict, on the finer head where the first seconds were logged at 100 ms.
    let burst = match test_head(steps) {
        Some((head, interval_s)) => burst_transition_fine(&head, interval_s, &x),
        None => burst_transition(&x),
    };
    let rounds = round_means(steps, round_s);
    // A second with no more I/Os than one queue's worth is a stall ending.
    let (levels, levels_scope) = levels_after_burst(&x, burst.as_ref(), stall_iops(steps));
    ConsistencyAnalysis {
        scores: score(&x, window_s),
        stalls: stalls(&x),
        levels,
        levels_scope: Some(levels_scope),
        // One verdict: the phases start with the burst the burst line reports.
        phases: phases(&x, window_s, burst.as_ref(), cache_seen(steps)),
        burst,
        steady: pts_verdict(&rounds),
        rounds,
        iops_per_s: x,
    }
}
