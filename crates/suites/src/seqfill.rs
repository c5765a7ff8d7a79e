//! `seqfill`: sequential fill consistency. 128K sequential writes at QD32 to 90 % of the
//! span, write rate and cumulative bytes every 100 ms (a PCIe 4.0 drive fills a 7 GB
//! cache in 1.3 s, and a one-second drop straddles two seconds); the summary finds the
//! write cache (initial speed, bytes absorbed, post-cache average) and the drop
//! episodes, says so when a cache was too short to see, and records the device
//! temperature at both ends when a sensor is readable (null otherwise).

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_analysis::fill::{analyze_fill, FillSummary};
use drivelab_engine::model::SensorReading;
use drivelab_engine::size::{human_bytes, SizeOrPercent};
use drivelab_engine::spec::{DataPattern, IoEngine, RwMode};
use drivelab_engine::target::TargetInfo;

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, Bound, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt};
use crate::suite::{span_file_bytes, AfterInterrupt, Report, Suite};

/// The seqfill suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeqFill {
    /// Span: the whole target.
    pub size: SizeOrPercent,
    /// How much of the span to write: 90 %.
    pub fill: SizeOrPercent,
    /// Block size: 128K.
    pub bs_bytes: u32,
    /// Queue depth: 32.
    pub qd: u32,
    /// A second is part of a drop episode when its rate is below this fraction of the
    /// post-cache median: 0.5.
    pub drop_fraction: f64,
    pub data: DataPattern,
    pub short: bool,
    /// Width of one logged interval: 100 ms (whole divisors of a second, 10 ms to 1 s).
    #[serde(default = "default_interval_ns")]
    pub interval_ns: u64,
    /// Every block written carries the verify header and is read back after the fill
    /// (`--verify`); a block not as written fails the run.
    #[serde(default)]
    pub verify: bool,
}

/// The logging interval of a fill: 100 ms.
pub const INTERVAL_NS: u64 = 100_000_000;

fn default_interval_ns() -> u64 {
    INTERVAL_NS
}

impl SeqFill {
    pub fn new(short: bool) -> SeqFill {
        SeqFill {
            size: if short {
                SizeOrPercent::Bytes(64 << 20)
            } else {
                SizeOrPercent::Percent(100.0)
            },
            fill: SizeOrPercent::Percent(90.0),
            bs_bytes: 128 << 10,
            qd: 32,
            drop_fraction: 0.5,
            data: DataPattern::Random,
            short,
            interval_ns: INTERVAL_NS,
            verify: false,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.qd == 0 {
            return Err("--qd: must be at least 1".into());
        }
        if !(self.drop_fraction > 0.0 && self.drop_fraction < 1.0) {
            return Err("--drop-fraction: must be between 0 and 1, like 0.5".into());
        }
        if !(10_000_000..=1_000_000_000).contains(&self.interval_ns)
            || !1_000_000_000u64.is_multiple_of(self.interval_ns)
        {
            return Err(
                "--interval: must divide a second evenly, from 10ms to 1s, like 100ms".into(),
            );
        }
        Ok(())
    }
}

/// The temperature among sensor readings, if any.
pub fn temperature(readings: &[SensorReading]) -> Option<f64> {
    readings
        .iter()
        .find(|r| r.name == "temperature" && r.value.is_some())
        .and_then(|r| r.value)
}

impl Suite for SeqFill {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Seqfill
    }
    fn test_file_bytes(&self) -> Option<u64> {
        span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = plan::span_bytes(self.size, target);
        let bytes = self.fill.resolve(span).min(span) / self.bs_bytes as u64 * self.bs_bytes as u64;
        if bytes == 0 {
            return Err(format!(
                "--fill: {} of a {} span is less than one {}-byte block",
                match self.fill {
                    SizeOrPercent::Bytes(b) => human_bytes(b),
                    SizeOrPercent::Percent(p) => format!("{p}%"),
                },
                human_bytes(span),
                self.bs_bytes
            ));
        }
        let shape = Shape::new(RwMode::Write, self.bs_bytes, self.qd, 1)
            .engine(IoEngine::IoUring)
            .data(self.data);
        let mut w = plan::workload(&shape, (0, span), Bound::Bytes(bytes), target)?;
        w.log_interval_ns = self.interval_ns;
        if self.verify {
            w.verify = true;
            drivelab_engine::run::check_verify(&w, target)?;
        }
        Ok(vec![PlannedStep {
            id: "seqfill".into(),
            name: format!(
                "{} sequential write QD{} of {}",
                human_bytes(self.bs_bytes as u64),
                self.qd,
                human_bytes(bytes)
            ),
            kind: StepKind::Measure,
            params: json!({ "fill_bytes": bytes }),
            action: Action::Run,
            idle_before_ns: 0,
            workload: w,
        }])
    }
    /// A fill measures the drive's cache from the state it starts in, and the
    /// interrupted part filled some of it: nothing in the plan restores that state
    /// (only a discard and the drive's idle time do), so a resume refuses.
    fn after_interrupt(&self, _step: &PlannedStep) -> AfterInterrupt {
        AfterInterrupt::Refuse(
            "--resume: the sequential fill was interrupted on a drive that kept what it \
             wrote, so its cache would be measured part-filled; start a new run (after a \
             discard and some idle time the drive's cache is free again)"
                .into(),
        )
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let a = steps
            .iter()
            .find(|s| is_fill_step(s))
            .map(|s| analyze(s, self.drop_fraction));
        let metrics = a.as_ref().map(headline_metrics).unwrap_or_default();
        let mut table = String::from("drivelab seqfill: sequential fill consistency\n");
        if let Some(a) = &a {
            let f = &a.fill;
            let cache = match f.cache_bytes {
                Some(b) => format!(
                    "cache {} GB at {} MB/s{}, post-cache average {} MB/s",
                    fmt(Some(b as f64 / 1e9), 2),
                    fmt(f.cache_mbps.or(f.initial_mbps), 1),
                    if f.cache_ended_by_stalls {
                        " (ended in periodic stalls, not at a lower level)"
                    } else {
                        ""
                    },
                    fmt(f.post_cache_avg_mbps, 1)
                ),
                None if f.cache_too_short_to_see => format!(
                    "a cache may have run out within the first {} s (it ran at {} MB/s, the \
                     fill's median is {} MB/s), too short to see at this logging interval",
                    f.interval_s,
                    fmt(a.mbps_per_s.first().copied(), 1),
                    fmt(f.drop_reference_mbps, 1)
                ),
                None => no_cache_seen(f.initial_mbps),
            };
            table += &format!(
                "  wrote {} in {} s: {cache}, overall {} MB/s\n",
                human_bytes(f.total_bytes),
                fmt(Some(a.elapsed_s), if a.elapsed_s < 10.0 { 2 } else { 0 }),
                fmt(f.overall_avg_mbps, 1)
            );
            table += &format!(
                "  drops below {} MB/s: {} (longest {} s, {} s in all; logged every {} s)\n",
                fmt(f.drop_threshold_mbps, 1),
                f.drop_count,
                fmt(Some(f.drop_longest_s), 1),
                fmt(Some(f.drop_total_s), 1),
                f.interval_s
            );
            if a.temperature_start_celsius.is_some() || a.temperature_end_celsius.is_some() {
                table += &format!(
                    "  temperature: {} °C at start, {} °C at end\n",
                    fmt(a.temperature_start_celsius, 1),
                    fmt(a.temperature_end_celsius, 1)
                );
            } else {
                table += "  temperature: no sensor was readable\n";
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

/// The fill's headline metrics, as the suite's summary carries them (a fio import of a
/// sequential write carries the same, by the same names).
pub fn headline_metrics(a: &SeqFillAnalysis) -> Vec<Metric> {
    let mut metrics = Vec::new();
    let f = &a.fill;
    metrics.extend(Metric::new(
        "initial (cache) write speed",
        f.initial_mbps,
        "MB/s",
    ));
    metrics.extend(Metric::new(
        "estimated cache size",
        f.cache_bytes.map(|b| b as f64 / 1e9),
        "GB",
    ));
    metrics.extend(Metric::new(
        "post-cache average",
        f.post_cache_avg_mbps,
        "MB/s",
    ));
    metrics.extend(Metric::new("overall average", f.overall_avg_mbps, "MB/s"));
    metrics.extend(Metric::new(
        "drop episodes",
        Some(f.drop_count as f64),
        "episodes",
    ));
    metrics.extend(Metric::new(
        "temperature at start",
        a.temperature_start_celsius,
        "°C",
    ));
    metrics.extend(Metric::new(
        "temperature at end",
        a.temperature_end_celsius,
        "°C",
    ));
    metrics
}

/// Whether a step of a seqfill bundle is the fill: its one measured step (a discard or
/// fill before it is a preparation), by the step's kind, not its id's wording.
pub fn is_fill_step(s: &StepRecord) -> bool {
    match s.kind {
        StepKind::Measure => true,
        StepKind::Prepare => false,
    }
}

/// The seqfill analysis saved in the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeqFillAnalysis {
    /// Write rate in each logged interval (decimal MB/s).
    pub mbps_per_s: Vec<f64>,
    /// Bytes written by the end of each interval.
    pub cum_write_bytes: Vec<u64>,
    pub fill: FillSummary,
    /// How long the fill took (the step's measured time; `fill.duration_s` counts the
    /// intervals analysed, the last of them maybe partial).
    pub elapsed_s: f64,
    /// None when no temperature sensor was readable (not 0).
    pub temperature_start_celsius: Option<f64>,
    pub temperature_end_celsius: Option<f64>,
    pub temperature_available: bool,
}

/// Analyse the fill step.
pub fn analyze(rec: &StepRecord, drop_fraction: f64) -> SeqFillAnalysis {
    let mbps = records::per_interval(rec, |x| x.write.bytes_per_s / 1e6);
    let cum: Vec<u64> = rec.run.as_ref().map_or_else(Vec::new, |r| {
        records::workload_records(r)
            .filter(|x| !x.ramp)
            .map(|x| x.cum_write_bytes)
            .collect()
    });
    let interval_s = rec.config.log_interval_ns as f64 / 1e9;
    // Read just before and after the fill; else (a sensor read less often than that)
    // the first and last readings in its series.
    let tele = records::step_telemetry(rec).unwrap_or_default();
    let start = temperature(&rec.sensors_start).or(tele.temperature_start_celsius);
    let end = temperature(&rec.sensors_end).or(tele.temperature_end_celsius);
    SeqFillAnalysis {
        fill: analyze_fill(&mbps, &cum, interval_s, drop_fraction),
        elapsed_s: rec
            .run
            .as_ref()
            .map_or(0.0, |r| r.totals.elapsed_ns as f64 / 1e9),
        mbps_per_s: mbps,
        cum_write_bytes: cum,
        temperature_available: start.is_some() || end.is_some(),
        temperature_start_celsius: start,
        temperature_end_celsius: end,
    }
}

/// "no cache seen (initial 512.0 MB/s held)", or without a rate when the fill was too
/// short to measure one (never "initial - MB/s").
fn no_cache_seen(initial_mbps: Option<f64>) -> String {
    match initial_mbps {
        Some(v) => format!("no cache seen (initial {} MB/s held)", fmt(Some(v), 1)),
        None => "no cache seen".into(),
    }
}

#[cfg(test)]
mod phrase_tests {
    #[test]
    fn no_cache_seen_names_no_missing_number() {
        assert_eq!(super::no_cache_seen(None), "no cache seen");
        assert!(super::no_cache_seen(Some(512.0)).starts_with("no cache seen (initial 512"));
    }
}
