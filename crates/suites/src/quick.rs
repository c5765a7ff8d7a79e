//! `quick`: CrystalDiskMark's presets. Each test (e.g. `SEQ1M Q8T1`) is read, then
//! written, `runs` times for `runtime` each over a 1 GiB span, with `interval` of idle
//! between tests. Reported as CrystalDiskMark does: decimal MB/s, IOPS and mean latency,
//! best of the runs (highest throughput, lowest latency) or their mean.

use serde::{Deserialize, Serialize};
use serde_json::json;

use drivelab_engine::size::{human_bytes, SizeOrPercent};
use drivelab_engine::spec::{CdmSpec, DataPattern, IoEngine, RwMode};
use drivelab_engine::target::TargetInfo;

use crate::bundle::{Metric, StepRecord, Summary};
use crate::plan::{self, Action, PlannedStep, Shape, StepKind};
use crate::records::{self, fmt, mean, param_str, us};
use crate::suite::{millis, secs, span_file_bytes, Report, Suite};

/// CrystalDiskMark's test sets.
pub const PRESETS: [(&str, &[&str]); 4] = [
    (
        "standard",
        &["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
    ),
    (
        "nvme",
        &["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"],
    ),
    ("peak", &["SEQ1M Q8T1", "RND4K Q32T1"]),
    ("realworld", &["SEQ1M Q1T1", "RND4K Q1T1"]),
];

/// Which of the runs the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Show {
    /// Highest throughput and lowest latency of the runs (CrystalDiskMark's choice).
    Best,
    /// Mean of the runs.
    Mean,
}

/// The quick suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quick {
    pub preset: String,
    /// CrystalDiskMark labels of the tests, in order.
    pub tests: Vec<String>,
    /// Span (test-file size): 1 GiB.
    pub size: SizeOrPercent,
    /// Length of one run: 5 s.
    pub runtime_ns: u64,
    /// Idle between tests: 5 s.
    pub interval_ns: u64,
    /// Runs per test and direction: 3.
    pub runs: u32,
    pub show: Show,
    pub data: DataPattern,
    pub short: bool,
}

impl Quick {
    /// CrystalDiskMark's defaults; `short` shrinks them so the suite takes seconds.
    pub fn new(short: bool) -> Quick {
        Quick {
            preset: "standard".into(),
            tests: preset_tests("standard").unwrap_or_default(),
            size: SizeOrPercent::Bytes(if short { 64 << 20 } else { 1 << 30 }),
            runtime_ns: if short { millis(300) } else { secs(5) },
            interval_ns: if short { 0 } else { secs(5) },
            runs: if short { 2 } else { 3 },
            show: Show::Best,
            data: DataPattern::Random,
            short,
        }
    }

    /// Check the knobs (one line naming the flag on error).
    pub fn validate(&self) -> Result<(), String> {
        if self.runs == 0 {
            return Err("--runs: must be at least 1".into());
        }
        if self.runtime_ns < 10_000_000 {
            return Err("--runtime: must be at least 10ms".into());
        }
        if self.tests.is_empty() {
            return Err("--tests: give at least one test like \"SEQ1M Q8T1\"".into());
        }
        for t in &self.tests {
            CdmSpec::parse(t).map_err(|e| format!("--tests: {e}"))?;
        }
        Ok(())
    }
}

/// The tests of a preset by name.
pub fn preset_tests(name: &str) -> Option<Vec<String>> {
    PRESETS
        .iter()
        .find(|p| p.0 == name)
        .map(|p| p.1.iter().map(|s| s.to_string()).collect())
}

/// Parse `--preset`.
pub fn parse_preset(s: &str) -> Result<String, String> {
    preset_tests(s).map(|_| s.to_string()).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        format!("'{s}' is not one of {}", names.join(", "))
    })
}

const DIRS: [&str; 2] = ["read", "write"];

impl Suite for Quick {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Quick
    }
    fn test_file_bytes(&self) -> Option<u64> {
        span_file_bytes(self.size)
    }
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String> {
        self.validate()?;
        let span = (0, plan::span_bytes(self.size, target));
        let mut out = Vec::new();
        // CrystalDiskMark reads a test file it has written.
        out.extend(plan::fill_before_reads(span, self.data, target)?);
        for label in &self.tests {
            let s = CdmSpec::parse(label)?;
            let label = s.label();
            for dir in DIRS {
                let rw = match (s.random, dir) {
                    (true, "read") => RwMode::RandRead,
                    (true, _) => RwMode::RandWrite,
                    (false, "read") => RwMode::Read,
                    (false, _) => RwMode::Write,
                };
                let engine = if s.q > 1 {
                    IoEngine::IoUring
                } else {
                    IoEngine::Sync
                };
                let shape = Shape::new(rw, s.bs, s.q, s.t)
                    .engine(engine)
                    .data(self.data);
                for run in 1..=self.runs {
                    let w = plan::workload(&shape, span, plan::for_time(self.runtime_ns), target)
                        .map_err(|e| format!("{label} {dir}: {e}"))?;
                    out.push(PlannedStep {
                        id: format!("{}-{dir}-run{run}", plan::slug(&label)),
                        name: format!("{label} {dir}, run {run}"),
                        kind: StepKind::Measure,
                        params: json!({ "test": label, "dir": dir, "run": run }),
                        action: Action::Run,
                        idle_before_ns: if run == 1 { self.interval_ns } else { 0 },
                        workload: w,
                    });
                }
            }
        }
        Ok(out)
    }
    fn report(&self, steps: &[StepRecord]) -> Report {
        let mut tests = Vec::new();
        let mut metrics = Vec::new();
        for label in &self.tests {
            let label = CdmSpec::parse(label).map_or(label.clone(), |s| s.label());
            let [read, write] = DIRS.map(|dir| {
                let d = dir_result(steps, &label, dir);
                let shown = d.shown(self.show);
                metrics.extend(Metric::new(format!("{label} {dir}"), shown.mbps, "MB/s"));
                metrics.extend(Metric::new(
                    format!("{label} {dir} IOPS"),
                    shown.iops,
                    "IOPS",
                ));
                metrics.extend(Metric::new(
                    format!("{label} {dir} mean latency"),
                    shown.lat_mean_us,
                    "µs",
                ));
                d
            });
            tests.push(TestResult {
                test: label,
                read,
                write,
            });
        }
        let analysis = Analysis {
            shown: self.show,
            runs: self.runs,
            tests,
        };
        let table = self.table(&analysis);
        Report {
            summary: Summary {
                analysis: serde_json::to_value(&analysis).unwrap_or_default(),
                metrics,
            },
            table,
        }
    }
}

/// The quick suite's analysis (`summary.analysis`): which number is shown of the
/// runs, how many runs, and each test's read and write results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub shown: Show,
    pub runs: u32,
    pub tests: Vec<TestResult>,
}

/// One test (`SEQ1M Q8T1`) in both directions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub test: String,
    pub read: DirResult,
    pub write: DirResult,
}

impl TestResult {
    /// The results of direction `dir` ("read" or "write").
    pub fn dir(&self, dir: &str) -> &DirResult {
        if dir == "write" {
            &self.write
        } else {
            &self.read
        }
    }
}

/// The numbers shown of a test's runs (their best or their mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shown {
    pub mbps: Option<f64>,
    pub iops: Option<f64>,
    pub lat_mean_us: Option<f64>,
}

impl DirResult {
    /// The best or the mean of the runs, as `show` says.
    pub fn shown(&self, show: Show) -> Shown {
        match show {
            Show::Best => Shown {
                mbps: self.best_mbps,
                iops: self.best_iops,
                lat_mean_us: self.best_lat_mean_us,
            },
            Show::Mean => Shown {
                mbps: self.mean_mbps,
                iops: self.mean_iops,
                lat_mean_us: self.mean_lat_mean_us,
            },
        }
    }
}

/// Results of one test in one direction over its runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirResult {
    pub runs: usize,
    #[serde(deserialize_with = "crate::records::vec_f64_or_nan")]
    pub mbps: Vec<f64>,
    #[serde(deserialize_with = "crate::records::vec_f64_or_nan")]
    pub iops: Vec<f64>,
    #[serde(deserialize_with = "crate::records::vec_f64_or_nan")]
    pub lat_mean_us: Vec<f64>,
    /// Highest throughput of the runs (decimal MB/s) and that run's IOPS.
    pub best_mbps: Option<f64>,
    pub best_iops: Option<f64>,
    /// Lowest mean latency of the runs.
    pub best_lat_mean_us: Option<f64>,
    pub mean_mbps: Option<f64>,
    pub mean_iops: Option<f64>,
    pub mean_lat_mean_us: Option<f64>,
}

fn dir_result(steps: &[StepRecord], label: &str, dir: &str) -> DirResult {
    let mut d = DirResult::default();
    for s in steps {
        if param_str(s, "test") != Some(label) || param_str(s, "dir") != Some(dir) {
            continue;
        }
        let Some(t) = records::totals(s) else {
            continue;
        };
        let x = if dir == "read" { &t.read } else { &t.write };
        d.mbps.push(x.mbps);
        d.iops.push(x.ops_per_s);
        if let Some(l) = us(x.latency.mean_ns) {
            d.lat_mean_us.push(l);
        }
    }
    d.runs = d.mbps.len();
    if let Some(i) = (0..d.mbps.len()).max_by(|&a, &b| d.mbps[a].total_cmp(&d.mbps[b])) {
        d.best_mbps = Some(d.mbps[i]);
        d.best_iops = Some(d.iops[i]);
    }
    d.best_lat_mean_us = d.lat_mean_us.iter().copied().min_by(f64::total_cmp);
    d.mean_mbps = mean(&d.mbps);
    d.mean_iops = mean(&d.iops);
    d.mean_lat_mean_us = mean(&d.lat_mean_us);
    d
}

impl Quick {
    fn table(&self, analysis: &Analysis) -> String {
        let which = match self.show {
            Show::Best if self.runs == 1 => "one run".to_string(),
            Show::Mean if self.runs == 1 => "one run".to_string(),
            Show::Best => format!("best of {} runs", self.runs),
            Show::Mean => format!("mean of {} runs", self.runs),
        };
        let size = match self.size {
            SizeOrPercent::Bytes(b) => human_bytes(b),
            SizeOrPercent::Percent(p) => format!("{p}% of the target"),
        };
        let mut out = format!(
            "drivelab quick ({}): {size}, {} × {} s per test, {which} shown; MB/s = 10^6 bytes/s\n",
            self.preset,
            self.runs,
            self.runtime_ns as f64 / 1e9
        );
        out += &format!(
            "{:<14} {:>10} {:>10} {:>10}   {:>10} {:>10} {:>10}\n",
            "", "Read MB/s", "IOPS", "lat µs", "Write MB/s", "IOPS", "lat µs"
        );
        for t in &analysis.tests {
            let (r, w) = (t.read.shown(self.show), t.write.shown(self.show));
            out += &format!(
                "{:<14} {:>10} {:>10} {:>10}   {:>10} {:>10} {:>10}\n",
                t.test,
                fmt(r.mbps, 2),
                fmt(r.iops, 0),
                fmt(r.lat_mean_us, 1),
                fmt(w.mbps, 2),
                fmt(w.iops, 0),
                fmt(w.lat_mean_us, 1),
            );
        }
        out
    }
}
