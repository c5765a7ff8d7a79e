//! Benchmark of the bundle → report path: 10 drives, each a consistency bundle holding
//! a one-hour, one-second series (3600 intervals with IOPS and latency percentiles),
//! mapped to charts and rendered into one HTML report.
//!
//! The bundles start from a real `--short` consistency run on a simulated drive; its
//! random-write rounds are replaced by one hour of synthetic per-second records (a burst,
//! a steady level, noise and a few stalls, different per drive) and the suite's own
//! analysis is run on them, so the report sees exactly what a real hour would give.
//!
//! `cargo run --release -p drivelab-report --example bundle_report_bench [-- OUT.html]`

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use drivelab_engine::target::{OpenOptions, Target, TargetSpec};
use drivelab_report::bundles::{bundle_report, DriveRun};
use drivelab_suites::bundle::{Bundle, RunDoc, Summary};
use drivelab_suites::consistency::{analyze, Consistency};
use drivelab_suites::plan::StepKind;
use drivelab_suites::runner::{execute, new_doc, Runner};
use drivelab_suites::Suite;

const SECONDS: u64 = 3600;
const DRIVES: usize = 10;

/// xorshift64*, uniform in [0, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn short_bundle(dir: &std::path::Path) -> RunDoc {
    let d = drivelab_sim::parse("sim:nvme-tlc,capacity=4G").unwrap();
    let mut t = Target::open(TargetSpec::Model(Box::new(d)), &OpenOptions::default()).unwrap();
    let s = Consistency::new(true);
    let plan = s.plan(&t.info).unwrap();
    let doc = new_doc(&s, &plan, &t, Some("sim:nvme-tlc,capacity=4G".into()));
    let mut b = Bundle::create(dir, doc).unwrap();
    let stop = AtomicBool::new(false);
    execute(
        &s,
        &plan,
        &mut t,
        &mut b,
        &Runner {
            stop: &stop,
            observer: None,
        },
    )
    .unwrap();
    b.doc
}

/// The short bundle with its rounds replaced by one hour of drive `k`'s seconds.
fn hour_of(base: &RunDoc, k: usize) -> RunDoc {
    let mut doc = base.clone();
    let first = doc
        .steps
        .iter()
        .position(|s| s.kind == StepKind::Measure)
        .expect("a measured round");
    doc.steps.truncate(first + 1);
    let step = &mut doc.steps[first];
    let run = step.run.as_mut().expect("the round ran");
    let proto = run.series.records.first().expect("a record");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (k as u64 + 1));
    let burst_s = 300.0 + 90.0 * k as f64;
    let steady = 20_000.0 + 9_000.0 * (k % 5) as f64;
    run.series.records = (0..SECONDS)
        .map(|i| {
            let mut r = proto.clone();
            r.index = i;
            r.start_ns = i * 1_000_000_000;
            r.duration_ns = 1_000_000_000;
            r.ramp = false;
            let base = if (i as f64) < burst_s {
                180_000.0
            } else {
                steady
            };
            let mut iops = base * (0.8 + 0.4 * rng.next());
            if rng.next() < 0.003 {
                iops = 0.0;
            }
            r.all.ops_per_s = iops;
            r.write.ops_per_s = iops;
            let lat = 32.0 / iops.max(1.0) * 1e9;
            r.all.lat_p50_ns = Some(lat as u64);
            r.all.lat_p99_ns = Some((lat * (2.0 + 3.0 * rng.next())) as u64);
            r
        })
        .collect();
    let analysis = analyze(&doc.steps, 400, 60);
    doc.summary = Some(Summary {
        analysis: serde_json::to_value(&analysis).unwrap(),
        metrics: Vec::new(),
    });
    doc
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let base = short_bundle(&tmp.path().join("short"));
    let runs: Vec<DriveRun> = (0..DRIVES)
        .map(|k| DriveRun::new(Some(format!("Drive {}", k + 1)), hour_of(&base, k)))
        .collect();
    let mut times: Vec<Duration> = Vec::new();
    let mut size = 0;
    let mut charts = 0;
    for _ in 0..7 {
        let t0 = Instant::now();
        let report = bundle_report(&runs);
        let html = report.render().unwrap();
        times.push(t0.elapsed());
        size = html.len();
        charts = report.charts().len();
        if let Some(out) = std::env::args().nth(1) {
            std::fs::write(&out, &html).unwrap();
        }
    }
    times.sort();
    println!(
        "{DRIVES} drives × {SECONDS} s consistency series: {charts} charts, {:.2} MB of HTML",
        size as f64 / 1e6
    );
    println!(
        "bundle → report → HTML: median {:.0?}, best {:.0?}, worst {:.0?} (7 runs)",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
