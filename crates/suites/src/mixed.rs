//! `mixed`: 4K random I/O at one queue depth with the read share swept 0, 10, …, 100 %:
//! IOPS and latency per step.

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{DataPattern, RwMode};
use drivelab_engine::target::TargetInfo;

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt, param_u64, us};
use crate::suite::{millis, secs, span_file_bytes, Report, Suite};

/// The mixed suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mixed {
    /// Span: the whole target.
    pub size: SizeOrPercent,
    /// Block size: 4K.
    pub bs_bytes: u32,
    /// Outstanding I/Os: 32 (io_uring; QD1 uses the sync engine).
    pub qd: u32,
    /// Step of the read share in percent: 10.
    pub step_percent: u32,
    /// Length of one step: 60 s.
    pub step_time_ns: u64,
    pub data: DataPattern,
    pub short: bool,
}

impl Mixed {
    pub fn new(short: bool) -> Mixed {
        Mixed {
            size: if short {
                SizeOrPercent::Bytes(64 << 20)
            } else {
                SizeOrPercent::Percent(100.0)
            },
            bs_bytes: 4096,
            qd: 32,
            step_percent: 10,
            step_time_ns: if short { millis(250) } else { secs(60) },
            data: DataPattern::Random,
            short,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.qd == 0 {
            return Err("--qd: must be at least 1".into());
        }
        if self.step_percent == 0 || self.step_percent > 100 {
            return Err("--step: must be a percentage from 1 to 100".into());
        }
        if self.step_time_ns < 10_000_000 {
            return Err("--step-time: must be at least 10ms".into());
        }
        Ok(())
    }

    /// The read shares of the sweep: 0, step, 2·step, …, and 100.
    pub fn shares(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..=100)
            .step_by(self.step_percent.max(1) as usize)
            .collect();
        if v.last() != Some(&100) {
            v.push(100);
        }
        v
    }
}

impl Suite for Mixed {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Mixed
    }
    fn test_file_bytes(&self) -> Option<u64> {
        span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = (0, plan::span_bytes(self.size, target));
        let mut out = Vec::new();
        // Else the read-heavy steps would measure how much of the span earlier steps
        // happened to write.
        out.extend(plan::fill_before_reads(span, self.data, target)?);
        for share in self.shares() {
            let shape = Shape::new(RwMode::RandRw, self.bs_bytes, self.qd, 1)
                .mix(share)
                .data(self.data);
            let w = plan::workload(&shape, span, plan::for_time(self.step_time_ns), target)?;
            out.push(PlannedStep {
                id: format!("read{share}"),
                name: format!("random QD{}, {share} % reads", self.qd),
                kind: StepKind::Measure,
                params: json!({ "read_percent": share }),
                action: Action::Run,
                idle_before_ns: 0,
                workload: w,
            });
        }
        Ok(out)
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let mut rows = Vec::new();
        let mut metrics = Vec::new();
        let mut table = format!(
            "drivelab mixed: {} random, QD{}, {} s per step\n{:>7} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
            drivelab_engine::spec::block_size_label(self.bs_bytes),
            self.qd,
            self.step_time_ns as f64 / 1e9,
            "read %",
            "IOPS",
            "read IOPS",
            "write IOPS",
            "read µs",
            "write µs"
        );
        for s in steps {
            let (Some(t), Some(share)) = (records::totals(s), param_u64(s, "read_percent")) else {
                continue;
            };
            let (rl, wl) = (us(t.read.latency.mean_ns), us(t.write.latency.mean_ns));
            metrics.extend(Metric::new(
                format!("random QD{} {share}% read IOPS", self.qd),
                Some(t.all.ops_per_s),
                "IOPS",
            ));
            table += &format!(
                "{share:>7} {:>12.0} {:>12.0} {:>12.0} {:>12} {:>12}\n",
                t.all.ops_per_s,
                t.read.ops_per_s,
                t.write.ops_per_s,
                fmt(rl, 1),
                fmt(wl, 1)
            );
            rows.push(StepResult {
                read_percent: share,
                iops: t.all.ops_per_s,
                read_iops: t.read.ops_per_s,
                write_iops: t.write.ops_per_s,
                mbps: t.all.mbps,
                read_lat_mean_us: rl,
                write_lat_mean_us: wl,
                lat_p99_us: us(t.all.latency.at(99.0).map(|v| v as f64)),
            });
        }
        Report {
            summary: Summary {
                analysis: serde_json::to_value(Analysis { steps: rows }).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// The mixed suite's analysis (`summary.analysis`): one row per read share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub steps: Vec<StepResult>,
}

/// One read share's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    pub read_percent: u64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub iops: f64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub read_iops: f64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub write_iops: f64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub mbps: f64,
    pub read_lat_mean_us: Option<f64>,
    pub write_lat_mean_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_zero_to_hundred() {
        let mut m = Mixed::new(false);
        assert_eq!(m.shares(), vec![0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        m.step_percent = 30;
        assert_eq!(m.shares(), vec![0, 30, 60, 90, 100]);
    }
}
