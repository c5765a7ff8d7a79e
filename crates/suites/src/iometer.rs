//! `iometer`: the IOMeter-style review. A 10 GB span (the whole target when smaller),
//! 3 minutes per test: 4K random write with repeating data and 4K random read at QD 1…16
//! (a profile table), 512K sequential write and read with 2 workers at QD 1…4 per worker
//! (IOMeter's outstanding I/Os are per worker), and access specs from the built-in
//! library (by default the workstation pattern: 8K, 80 % read, 80 % random, 64
//! outstanding). `--data repeat|random` switches the written content.

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{parse_bssplit, BsShare, DataPattern, RwMode};
use drivelab_engine::target::{TargetInfo, TargetKind};

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, Bound, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt, param_str, param_u64, us};
use crate::suite::{millis, secs, span_file_bytes, Report, Suite};

/// One access specification: block-size mix, read share, random share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccessSpec {
    pub name: &'static str,
    /// fio `bssplit` form.
    pub bssplit: &'static str,
    pub read_percent: u32,
    pub random_percent: u32,
}

/// The built-in access-spec library (the review's external config files).
pub const ACCESS_SPECS: [AccessSpec; 6] = [
    AccessSpec {
        name: "workstation",
        bssplit: "8k/100",
        read_percent: 80,
        random_percent: 80,
    },
    AccessSpec {
        name: "database",
        bssplit: "8k/100",
        read_percent: 67,
        random_percent: 100,
    },
    AccessSpec {
        name: "fileserver",
        bssplit: "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10",
        read_percent: 80,
        random_percent: 100,
    },
    AccessSpec {
        name: "webserver",
        bssplit: "512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1",
        read_percent: 100,
        random_percent: 100,
    },
    AccessSpec {
        name: "streaming-read",
        bssplit: "64k/34:128k/33:256k/33",
        read_percent: 100,
        random_percent: 0,
    },
    AccessSpec {
        name: "streaming-write",
        bssplit: "64k/34:128k/33:256k/33",
        read_percent: 0,
        random_percent: 0,
    },
];

/// Look up an access spec by name.
pub fn access_spec(name: &str) -> Result<AccessSpec, String> {
    ACCESS_SPECS
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = ACCESS_SPECS.iter().map(|s| s.name).collect();
            format!("'{name}' is not one of {}", names.join(", "))
        })
}

/// The iometer suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoMeter {
    /// Span: 10 GB, or the whole target when smaller.
    pub size: SizeOrPercent,
    /// Length of one test: 3 min.
    pub test_time_ns: u64,
    /// Queue depths of the 4K random profiles: 1, 2, 4, 8, 16.
    pub qds: Vec<u32>,
    /// Outstanding I/Os per worker of the 512K sequential profiles: 1, 2, 4.
    pub seq_qds: Vec<u32>,
    /// Workers of the sequential tests: 2.
    pub seq_workers: u32,
    /// Access specs run after the profiles: workstation.
    pub specs: Vec<String>,
    /// Outstanding I/Os of the access-spec tests: 64.
    pub spec_qd: u32,
    /// Written content: IOMeter's repeating bytes.
    pub data: DataPattern,
    pub short: bool,
}

impl IoMeter {
    pub fn new(short: bool) -> IoMeter {
        IoMeter {
            size: SizeOrPercent::Bytes(if short { 64 << 20 } else { 10_000_000_000 }),
            test_time_ns: if short { millis(250) } else { secs(180) },
            qds: vec![1, 2, 4, 8, 16],
            seq_qds: vec![1, 2, 4],
            seq_workers: 2,
            specs: vec!["workstation".into()],
            spec_qd: 64,
            data: DataPattern::Repeat,
            short,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.test_time_ns < 10_000_000 {
            return Err("--test-time: must be at least 10ms".into());
        }
        if self.qds.contains(&0) || self.seq_qds.contains(&0) {
            return Err("--qds/--seq-qds: queue depths must be at least 1".into());
        }
        if self.seq_workers == 0 || self.spec_qd == 0 {
            return Err("--seq-workers/--spec-qd: must be at least 1".into());
        }
        for s in &self.specs {
            access_spec(s).map_err(|e| format!("--specs: {e}"))?;
        }
        Ok(())
    }
}

/// A profile of the suite: id, label, mode, block size, workers.
const PROFILES: [(&str, &str, RwMode, u32); 4] = [
    ("4k-randwrite", "4K random write", RwMode::RandWrite, 4096),
    ("4k-randread", "4K random read", RwMode::RandRead, 4096),
    (
        "512k-write",
        "512K sequential write",
        RwMode::Write,
        512 << 10,
    ),
    ("512k-read", "512K sequential read", RwMode::Read, 512 << 10),
];

fn spec_mode(s: &AccessSpec) -> RwMode {
    match (s.read_percent, s.random_percent > 0) {
        (100, true) => RwMode::RandRead,
        (100, false) => RwMode::Read,
        (0, true) => RwMode::RandWrite,
        (0, false) => RwMode::Write,
        (_, true) => RwMode::RandRw,
        (_, false) => RwMode::Rw,
    }
}

impl Suite for IoMeter {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Iometer
    }
    fn test_file_bytes(&self) -> Option<u64> {
        // The default test file keeps its usual size: the span is the whole file when smaller.
        span_file_bytes(self.size).filter(|&b| b < drivelab_engine::target::TEST_FILE_SIZE)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = (0, plan::span_bytes(self.size, target));
        let time = plan::for_time(self.test_time_ns);
        let mut out = Vec::new();
        if matches!(target.kind, TargetKind::BlockDevice | TargetKind::Simulated) {
            // IOMeter writes its test file before testing; do the same for the span.
            let shape = Shape::new(RwMode::Write, 1 << 20, 8, 1);
            let w = plan::workload(&shape, span, Bound::Bytes(span.1), target)?;
            out.push(PlannedStep {
                id: "prepare-span".into(),
                name: "prepare: write the span once".into(),
                kind: StepKind::Prepare,
                params: json!({}),
                action: Action::Run,
                idle_before_ns: 0,
                workload: w,
            });
        }
        for (id, label, rw, bs) in PROFILES {
            let seq = !rw.is_random();
            let qds = if seq { &self.seq_qds } else { &self.qds };
            let workers = if seq { self.seq_workers } else { 1 };
            for &qd in qds {
                let shape = Shape::new(rw, bs, qd, workers).data(self.data);
                let w = plan::workload(&shape, span, time, target)
                    .map_err(|e| format!("{label} QD{qd}: {e}"))?;
                out.push(PlannedStep {
                    id: format!("{id}-qd{qd}"),
                    name: if seq {
                        format!("{label}, {workers} workers × QD{qd}")
                    } else {
                        format!("{label}, QD{qd}")
                    },
                    kind: StepKind::Measure,
                    params: json!({ "profile": id, "qd": qd, "workers": workers }),
                    action: Action::Run,
                    idle_before_ns: 0,
                    workload: w,
                });
            }
        }
        for name in &self.specs {
            let s = access_spec(name)?;
            let sizes: Vec<BsShare> = parse_bssplit(s.bssplit)?;
            let shape = Shape::new(spec_mode(&s), 4096, self.spec_qd, 1)
                .sizes(sizes)
                .mix(s.read_percent)
                .random_share(if s.random_percent > 0 {
                    s.random_percent
                } else {
                    100
                })
                .data(self.data);
            let w =
                plan::workload(&shape, span, time, target).map_err(|e| format!("{name}: {e}"))?;
            out.push(PlannedStep {
                id: format!("spec-{name}"),
                name: format!("{name} access spec, {} outstanding", self.spec_qd),
                kind: StepKind::Measure,
                params: json!({ "spec": name, "qd": self.spec_qd }),
                action: Action::Run,
                idle_before_ns: 0,
                workload: w,
            });
        }
        Ok(out)
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let mut profiles = Vec::new();
        let mut specs = Vec::new();
        let mut metrics = Vec::new();
        let mut table = format!(
            "drivelab iometer: {} s per test, data {}\n{:<40} {:>12} {:>10} {:>10}\n",
            self.test_time_ns as f64 / 1e9,
            self.data.name(),
            "Test",
            "IOPS",
            "MB/s",
            "mean µs"
        );
        for s in steps {
            let Some(t) = records::totals(s) else {
                continue;
            };
            let (label, list) = if let Some(p) = param_str(s, "profile") {
                (p.to_string(), &mut profiles)
            } else if let Some(n) = param_str(s, "spec") {
                (n.to_string(), &mut specs)
            } else {
                continue;
            };
            metrics.extend(Metric::new(
                format!("{} IOPS", s.name),
                Some(t.all.ops_per_s),
                "IOPS",
            ));
            metrics.extend(Metric::new(
                format!("{} MB/s", s.name),
                Some(t.all.mbps),
                "MB/s",
            ));
            table += &format!(
                "{:<40} {:>12.0} {:>10.1} {:>10}\n",
                s.name,
                t.all.ops_per_s,
                t.all.mbps,
                fmt(us(t.all.latency.mean_ns), 1)
            );
            list.push(Row {
                name: label,
                qd: param_u64(s, "qd"),
                iops: t.all.ops_per_s,
                mbps: t.all.mbps,
                lat_mean_us: us(t.all.latency.mean_ns),
            });
        }
        Report {
            summary: Summary {
                analysis: serde_json::to_value(Analysis { profiles, specs }).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// The iometer suite's analysis (`summary.analysis`): a row per profile step (one
/// per QD and worker count) and per access-spec step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub profiles: Vec<Row>,
    pub specs: Vec<Row>,
}

/// One step's result, named by its profile or access spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub qd: Option<u64>,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub iops: f64,
    #[serde(deserialize_with = "crate::records::f64_or_nan")]
    pub mbps: f64,
    pub lat_mean_us: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_mixes_add_up_and_modes_follow_the_shares() {
        for s in ACCESS_SPECS {
            assert!(parse_bssplit(s.bssplit).is_ok(), "{}", s.name);
        }
        assert_eq!(
            spec_mode(&access_spec("workstation").unwrap()),
            RwMode::RandRw
        );
        assert_eq!(
            spec_mode(&access_spec("webserver").unwrap()),
            RwMode::RandRead
        );
        assert_eq!(
            spec_mode(&access_spec("streaming-write").unwrap()),
            RwMode::Write
        );
        assert!(access_spec("nope").is_err());
    }
}
