//! A suite on many hosts at once ([`run`]): the version check, every step on every host
//! through [`super::client`], one bundle per host, and the fleet view, itself a bundle
//! of the same suite whose steps are the hosts' steps added up (histograms merged
//! exactly, series summed on one clock) with the spread over the hosts (slowest and
//! fastest host, coefficient of variation) in its notes and in `fleet.json`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use drivelab_analysis::fleet::{self as af, Spread};
use drivelab_engine::hist::{Histogram, HistogramJson};
use drivelab_engine::result::{DirTotals, HostInfo, LatencyStats, Measured, RunStatus, Series};
use drivelab_engine::series::{IntervalDir, IntervalRecord};
use drivelab_engine::target::TargetInfo;
use serde::Serialize;

use super::client::{self, Host, HostOutcome};
use crate::bundle::{now_rfc3339, Bundle, BundleStatus, StepRecord, StepStatus};
use crate::plan::PlannedStep;
use crate::runner::new_doc_for;
use crate::suite::Suite;

/// Everything a fleet run needs.
pub struct FleetRun<'a> {
    pub program: String,
    pub version: String,
    pub hosts: Vec<Host>,
    /// The target's path on every host.
    pub target: TargetInfo,
    pub out: PathBuf,
    pub stop: &'a AtomicBool,
    /// Leave the target file on the hosts (`--keep`); a block device is never removed.
    pub keep: bool,
}

/// The fleet view's machine-readable part (`fleet/fleet.json`).
#[derive(Debug, Clone, Serialize)]
pub struct FleetDoc {
    pub hosts: Vec<String>,
    /// Hosts that failed, with why (their bundles hold what they finished).
    pub failed_hosts: Vec<(String, String)>,
    /// Per headline metric of the suite: its spread over the hosts that finished, each
    /// value field named with its unit ([`spread_json`]).
    pub spread: Vec<serde_json::Value>,
}

/// How a fleet run ended.
pub struct FleetOutcome {
    pub fleet_dir: PathBuf,
    pub host_dirs: Vec<PathBuf>,
    pub doc: FleetDoc,
    pub table: String,
    /// Stopped by the user.
    pub interrupted: bool,
}

fn hist_merge(hs: &[&HistogramJson]) -> HistogramJson {
    let lists: Vec<&[[u64; 2]]> = hs.iter().map(|h| h.buckets.as_slice()).collect();
    let mut out = Histogram::new().to_json();
    out.buckets = af::merge_buckets(&lists);
    out.count = hs.iter().map(|h| h.count).sum();
    out.overflow_count = hs.iter().map(|h| h.overflow_count).sum();
    out.min_ns = hs.iter().filter_map(|h| h.min_ns).min();
    out.max_ns = hs.iter().filter_map(|h| h.max_ns).max();
    out.sum_ns = hs.iter().map(|h| h.sum_ns).sum();
    out.sum_sq_ns2 = hs.iter().map(|h| h.sum_sq_ns2).sum();
    out
}

/// Totals of simultaneous hosts: counts and rates add up; latency from the merged
/// histogram.
fn totals_merge(ts: &[&DirTotals], h: &HistogramJson) -> DirTotals {
    let lat = Histogram::from_json(h)
        .map(|h| LatencyStats::from_hist(&h))
        .unwrap_or(LatencyStats {
            min_ns: None,
            max_ns: None,
            mean_ns: None,
            stddev_ns: None,
            percentiles: Vec::new(),
        });
    DirTotals {
        ops: ts.iter().map(|t| t.ops).sum(),
        bytes: ts.iter().map(|t| t.bytes).sum(),
        ops_per_s: ts.iter().map(|t| t.ops_per_s).sum(),
        bytes_per_s: ts.iter().map(|t| t.bytes_per_s).sum(),
        mbps: ts.iter().map(|t| t.mbps).sum(),
        mibps: ts.iter().map(|t| t.mibps).sum(),
        latency: lat,
    }
}

fn start_ms(m: &Measured) -> u64 {
    humantime::parse_rfc3339(&m.started_at)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// The hosts' series summed on one clock (aligned by their start times).
fn series_merge(ms: &[&Measured]) -> Series {
    let iv_ns = ms
        .iter()
        .map(|m| m.series.interval_ns)
        .max()
        .unwrap_or(1_000_000_000);
    let offsets = af::offsets(
        &ms.iter().map(|m| start_ms(m)).collect::<Vec<_>>(),
        iv_ns / 1_000_000,
    );
    let col = |f: &dyn Fn(&IntervalRecord) -> u64| -> Vec<u64> {
        let per: Vec<Vec<u64>> = ms
            .iter()
            .map(|m| m.series.records.iter().map(f).collect())
            .collect();
        let refs: Vec<&[u64]> = per.iter().map(|v| v.as_slice()).collect();
        af::sum_on_clock(&refs, &offsets)
    };
    let lat_w = |d: fn(&IntervalRecord) -> &IntervalDir| -> Vec<u64> {
        col(&|r| (d(r).lat_mean_ns.unwrap_or(0.0) * d(r).ops as f64) as u64)
    };
    let (ro, rb, wo, wb) = (
        col(&|r| r.read.ops),
        col(&|r| r.read.bytes),
        col(&|r| r.write.ops),
        col(&|r| r.write.bytes),
    );
    let (rl, wl) = (lat_w(|r| &r.read), lat_w(|r| &r.write));
    let dir = |ops: u64, bytes: u64, lat: u64| {
        let s = iv_ns as f64 / 1e9;
        IntervalDir {
            ops,
            bytes,
            ops_per_s: ops as f64 / s,
            bytes_per_s: bytes as f64 / s,
            lat_mean_ns: (ops > 0).then(|| lat as f64 / ops as f64),
            ..IntervalDir::default()
        }
    };
    let mut cum = 0;
    let records = (0..ro.len())
        .map(|k| {
            cum += wb[k];
            IntervalRecord {
                index: k as u64,
                start_ns: k as u64 * iv_ns,
                duration_ns: iv_ns,
                ramp: false,
                read: dir(ro[k], rb[k], rl[k]),
                write: dir(wo[k], wb[k], wl[k]),
                all: dir(ro[k] + wo[k], rb[k] + wb[k], rl[k] + wl[k]),
                cum_write_bytes: cum,
                sensors: Vec::new(),
                over_link_ceiling: false,
            }
        })
        .collect();
    Series {
        interval_ns: iv_ns,
        records,
    }
}

/// The hosts' results of one step as one.
pub fn merge(ms: &[&Measured]) -> Measured {
    let rh = hist_merge(&ms.iter().map(|m| &m.histogram.read).collect::<Vec<_>>());
    let wh = hist_merge(&ms.iter().map(|m| &m.histogram.write).collect::<Vec<_>>());
    let ah = hist_merge(&[&rh, &wh]);
    let t = |f: fn(&Measured) -> &DirTotals| ms.iter().map(|m| f(m)).collect::<Vec<_>>();
    let mut totals = ms[0].totals.clone();
    totals.elapsed_ns = ms.iter().map(|m| m.totals.elapsed_ns).max().unwrap_or(0);
    totals.read = totals_merge(&t(|m| &m.totals.read), &rh);
    totals.write = totals_merge(&t(|m| &m.totals.write), &wh);
    totals.all = totals_merge(&t(|m| &m.totals.all), &ah);
    totals.avg_inflight = ms.iter().map(|m| m.totals.avg_inflight).sum();
    totals.queue_depth = ms.iter().map(|m| m.totals.queue_depth).sum();
    totals.error_count = ms.iter().map(|m| m.totals.error_count).sum();
    totals.cpu.user_s = ms.iter().map(|m| m.totals.cpu.user_s).sum();
    totals.cpu.sys_s = ms.iter().map(|m| m.totals.cpu.sys_s).sum();
    let ops = totals.all.ops;
    totals.cpu.cpu_s_per_million_io =
        (ops > 0).then(|| (totals.cpu.user_s + totals.cpu.sys_s) / ops as f64 * 1e6);
    let first = ms.iter().min_by_key(|m| start_ms(m)).expect("one host");
    Measured {
        status: RunStatus::Complete,
        failure: None,
        started_at: first.started_at.clone(),
        duration_ns: ms.iter().map(|m| m.duration_ns).max().unwrap_or(0),
        drain_ns: 0,
        virtual_start_ns: None,
        totals,
        series: series_merge(ms),
        histogram: drivelab_engine::result::Histograms {
            read: rh,
            write: wh,
        },
        errors: Vec::new(),
        notes: vec![format!(
            "{} added up: counts, rates and histograms summed, series on one clock.",
            hosts(ms.len())
        )],
        simulator_ground_truth: None,
        replay: None,
    }
}

fn record(step: &PlannedStep, i: usize, started: String, run: Option<Measured>) -> StepRecord {
    let status = run
        .as_ref()
        .map_or(StepStatus::Failed, |m| StepStatus::from(m.status));
    StepRecord {
        index: i,
        id: step.id.clone(),
        name: step.name.clone(),
        kind: step.kind,
        params: step.params.clone(),
        status,
        skip_reason: None,
        started_at: Some(started),
        finished_at: Some(now_rfc3339()),
        config: step.workload.clone(),
        sensors_start: Vec::new(),
        sensors_end: Vec::new(),
        idle_before_ns: 0,
        idle_sensors: Vec::new(),
        telemetry: run.as_ref().map(crate::records::telemetry_of),
        run,
    }
}

fn host_info(h: &Host) -> HostInfo {
    HostInfo {
        hostname: format!("{}:{}", h.addr, h.port),
        kernel: String::new(),
        cpu_model: String::new(),
        logical_cpus: 0,
        memory_bytes: 0,
    }
}

/// Run `plan` on every host. A host that fails a step is left out of the later steps;
/// the run goes on while one host is left.
pub fn run(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    f: &FleetRun<'_>,
    say: &dyn Fn(&str),
) -> Result<FleetOutcome, String> {
    let mut bundles = Vec::new();
    for h in &f.hosts {
        let mut doc = new_doc_for(
            suite,
            plan,
            &f.target,
            Some(format!("{}:{}", h.id(), f.target.path)),
        );
        doc.host = host_info(h);
        doc.notes.push(format!(
            "Run on {}:{} by {} through fio --client; this controller checked its results.",
            h.addr, h.port, f.version
        ));
        bundles.push(Bundle::create(&f.out.join(h.id()), doc)?);
    }
    let mut fdoc = new_doc_for(
        suite,
        plan,
        &f.target,
        Some(format!("fleet:{}", f.target.path)),
    );
    fdoc.host.hostname = format!("fleet of {}", hosts(f.hosts.len()));
    let fleet_dir = f.out.join("fleet");
    let mut fleet = Bundle::create(&fleet_dir, fdoc)?;
    let mut failed: Vec<(String, String)> = Vec::new();
    let mut interrupted = false;
    for (i, step) in plan.iter().enumerate() {
        let live: Vec<usize> = (0..f.hosts.len())
            .filter(|&k| !failed.iter().any(|(h, _)| *h == f.hosts[k].id()))
            .collect();
        if live.is_empty() || f.stop.load(Ordering::Relaxed) {
            interrupted |= f.stop.load(Ordering::Relaxed);
            break;
        }
        if suite.chosen_at_run_time(step) {
            // Chosen from each host's own results (the peak sweep's re-measurements):
            // not a step the hosts can take together.
            let mut rec = record(step, i, now_rfc3339(), None);
            rec.status = StepStatus::Skipped;
            rec.skip_reason =
                Some("chosen from each drive's own results: not run in a fleet".into());
            for &k in &live {
                bundles[k].put_step(rec.clone())?;
            }
            fleet.put_step(rec)?;
            continue;
        }
        say(&format!(
            "[{}/{}] {} on {}",
            i + 1,
            plan.len(),
            step.name,
            hosts(live.len())
        ));
        let hosts: Vec<Host> = live.iter().map(|&k| f.hosts[k].clone()).collect();
        let started = now_rfc3339();
        let outs: Vec<HostOutcome> = client::run_step(
            &f.program,
            &f.version,
            step,
            &f.target.path,
            &hosts,
            &f.out,
            f.stop,
        );
        let mut done = Vec::new();
        for (&k, o) in live.iter().zip(outs) {
            match o {
                Ok(m) => {
                    bundles[k].put_step(record(step, i, started.clone(), Some(m.clone())))?;
                    done.push(m);
                }
                Err(_) if f.stop.load(Ordering::Relaxed) => interrupted = true,
                Err(e) => {
                    say(&format!("host failed: {e}"));
                    let b = &mut bundles[k];
                    b.put_step(record(step, i, started.clone(), None))?;
                    b.doc
                        .notes
                        .push(format!("Failed at step '{}': {e}", step.name));
                    b.set_status(BundleStatus::Failed)?;
                    failed.push((f.hosts[k].id(), e));
                }
            }
        }
        if interrupted {
            break;
        }
        if !done.is_empty() {
            let refs: Vec<&Measured> = done.iter().collect();
            fleet.put_step(record(step, i, started, Some(merge(&refs))))?;
        }
    }
    remove_target(f, say);
    finish(suite, plan, f, bundles, fleet, failed, interrupted)
}

/// The run's file off every host, as a local run removes its test file (unless
/// `--keep`; never a block device).
fn remove_target(f: &FleetRun<'_>, say: &dyn Fn(&str)) {
    use drivelab_engine::target::TargetKind;
    if f.keep || f.target.kind != TargetKind::File {
        return;
    }
    let why = client::remove_all(&f.program, &f.hosts, &f.target.path, &f.out);
    for (h, w) in f.hosts.iter().zip(why) {
        if let Some(w) = w {
            say(&format!(
                "{} was not removed on {}:{}: {w}",
                f.target.path, h.addr, h.port
            ));
        }
    }
}

/// A summary metric's name and unit.
type MetricKey = (String, String);

/// Close the bundles: the suite's analysis per host and for the fleet, the spread.
fn finish(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    f: &FleetRun<'_>,
    mut bundles: Vec<Bundle>,
    mut fleet: Bundle,
    failed: Vec<(String, String)>,
    interrupted: bool,
) -> Result<FleetOutcome, String> {
    // ((metric name, unit), [(host, value)]).
    let mut per_metric: Vec<(MetricKey, Vec<(String, f64)>)> = Vec::new();
    for (b, h) in bundles.iter_mut().zip(&f.hosts) {
        if b.doc.status == BundleStatus::Failed {
            continue;
        }
        if interrupted || b.doc.steps.len() < plan.len() {
            b.set_status(BundleStatus::Interrupted)?;
            continue;
        }
        let rep = suite.report(&b.doc.steps);
        b.doc.summary = Some(rep.summary.clone());
        b.set_status(BundleStatus::Complete)?;
        b.write_table(&rep.table)?;
        for m in rep.summary.metrics {
            let key = (m.name, m.unit);
            let slot = match per_metric.iter().position(|(n, _)| *n == key) {
                Some(p) => p,
                None => {
                    per_metric.push((key, Vec::new()));
                    per_metric.len() - 1
                }
            };
            per_metric[slot]
                .1
                .push((format!("{}:{}", h.addr, h.port), m.value));
        }
    }
    let mut spread = Vec::new();
    for ((name, unit), v) in &per_metric {
        if let Some(s) = af::spread(v, unit) {
            fleet.doc.notes.push(spread_line(name, unit, &s));
            spread.push(spread_json(name, unit, &s));
        }
    }
    for (h, e) in &failed {
        fleet.doc.notes.push(format!(
            "Host {h} failed and is left out from there on: {e}"
        ));
    }
    let complete = fleet.doc.steps.len() == plan.len() && !interrupted;
    let table = if complete {
        let rep = suite.report(&fleet.doc.steps);
        fleet.doc.summary = Some(rep.summary.clone());
        rep.table
    } else {
        String::new()
    };
    fleet.set_status(if complete {
        BundleStatus::Complete
    } else if interrupted {
        BundleStatus::Interrupted
    } else {
        BundleStatus::Failed
    })?;
    let doc = FleetDoc {
        hosts: f
            .hosts
            .iter()
            .map(|h| format!("{}:{}", h.addr, h.port))
            .collect(),
        failed_hosts: failed,
        spread,
    };
    let mut text = format!(
        "fleet of {} ({} failed)\n{table}",
        hosts(doc.hosts.len()),
        doc.failed_hosts.len()
    );
    for n in &fleet.doc.notes {
        text.push_str(&format!("note: {n}\n"));
    }
    fleet.write_table(&text)?;
    let json = serde_json::to_vec_pretty(&doc).map_err(|e| e.to_string())?;
    crate::atomic::write_file(&fleet.dir.join("fleet.json"), &json)
        .map_err(|e| format!("cannot write fleet.json: {e}"))?;
    Ok(FleetOutcome {
        fleet_dir: fleet.dir.clone(),
        host_dirs: bundles.iter().map(|b| b.dir.clone()).collect(),
        doc,
        table: text,
        interrupted,
    })
}

/// "Across 3 hosts, RND4K read IOPS (IOPS): slowest 10.0.0.2 (4,900.0), fastest …";
/// for a latency the slowest host is the one with the highest value; a metric with no
/// direction (a temperature) has a lowest and a highest host.
pub fn spread_line(name: &str, unit: &str, s: &Spread) -> String {
    let (lo, hi) = match (s.slowest(), s.fastest()) {
        (Some(a), Some(b)) => (("slowest", a), ("fastest", b)),
        _ => (
            ("lowest", (s.lowest_host.as_str(), s.lowest)),
            ("highest", (s.highest_host.as_str(), s.highest)),
        ),
    };
    format!(
        "Across {}, {name} ({unit}): {} {} ({:.1}), {} {} ({:.1}), mean {:.1}, coefficient of variation {}.",
        hosts(s.hosts),
        lo.0,
        lo.1 .0,
        lo.1 .1,
        hi.0,
        hi.1 .0,
        hi.1 .1,
        s.mean,
        s.cv_percent.map_or("n/a".into(), |c| format!("{c:.1} %"))
    )
}

/// "1 host", "3 hosts".
fn hosts(n: usize) -> String {
    if n == 1 {
        "1 host".into()
    } else {
        format!("{n} hosts")
    }
}

/// One metric's spread in fleet.json: every value field named with its unit
/// (`slowest_mb_per_s`, `fastest_us`, `mean_ios_per_s`; `lowest_celsius` … for a metric
/// with no direction).
pub fn spread_json(name: &str, unit: &str, s: &Spread) -> serde_json::Value {
    let u = af::unit_suffix(unit);
    let mut m = serde_json::Map::new();
    m.insert("metric".into(), name.into());
    m.insert("unit".into(), unit.into());
    m.insert("hosts".into(), s.hosts.into());
    let mut put = |role: &str, (host, v): (&str, f64)| {
        m.insert(format!("{role}_host"), host.into());
        m.insert(format!("{role}_{u}"), v.into());
    };
    match (s.slowest(), s.fastest()) {
        (Some(a), Some(b)) => {
            put("slowest", a);
            put("fastest", b);
        }
        _ => {
            put("lowest", (&s.lowest_host, s.lowest));
            put("highest", (&s.highest_host, s.highest));
        }
    }
    m.insert(format!("mean_{u}"), s.mean.into());
    m.insert("cv_percent".into(), s.cv_percent.into());
    serde_json::Value::Object(m)
}
