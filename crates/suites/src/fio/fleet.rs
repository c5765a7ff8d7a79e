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
    /// The fleet view's status: `partial` when hosts dropped out.
    pub status: BundleStatus,
    pub hosts: Vec<String>,
    /// Hosts that failed, with why (their bundles hold what they finished).
    pub failed_hosts: Vec<(String, String)>,
    /// The hosts the fleet summary adds up in every step (those that finished every
    /// step; empty when there is no summary).
    pub summary_hosts: Vec<String>,
    /// Per step of the fleet view: the hosts it adds up and those it lacks.
    pub steps: Vec<StepHosts>,
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
            .map(|m| m.series.records.iter().map(|r| f(&r)).collect())
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
        head: None,
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
        verify: None,
    }
}

fn record(step: &PlannedStep, i: usize, started: String, run: Option<Measured>) -> StepRecord {
    let status = run
        .as_ref()
        .map_or(StepStatus::Failed, |m| StepStatus::from(m.status));
    StepRecord {
        started_at: Some(started),
        finished_at: Some(now_rfc3339()),
        telemetry: run.as_ref().map(crate::records::telemetry_of),
        run,
        ..StepRecord::of_planned(i, step, status)
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

pub use crate::bundle::FLEET_NOTE;

/// Whether `doc` is a bundle of a fleet run: a host's or the fleet view.
pub fn is_fleet_bundle(doc: &crate::bundle::RunDoc) -> bool {
    doc.fleet
}

/// `addr:port` of a host.
fn who(h: &Host) -> String {
    format!("{}:{}", h.addr, h.port)
}

/// Where a host dropped out: its index, the step it failed at, and why.
struct Dropped {
    host: usize,
    step: usize,
    why: String,
}

/// Which hosts each step of the fleet view adds up (`fleet.json`'s `steps`).
#[derive(Debug, Clone, Serialize)]
pub struct StepHosts {
    pub index: usize,
    pub id: String,
    pub hosts: Vec<String>,
    /// Hosts of the fleet missing from this step (failed at it or before).
    pub missing_hosts: Vec<String>,
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
        doc.notes.push(FLEET_NOTE.into());
        doc.fleet = true;
        bundles.push(Bundle::create(&f.out.join(h.id()), doc)?);
    }
    let mut fdoc = new_doc_for(
        suite,
        plan,
        &f.target,
        Some(format!("fleet:{}", f.target.path)),
    );
    fdoc.host.hostname = format!("fleet of {}", hosts(f.hosts.len()));
    fdoc.notes.push(FLEET_NOTE.into());
    fdoc.fleet = true;
    let fleet_dir = f.out.join("fleet");
    let mut fleet = Bundle::create(&fleet_dir, fdoc)?;
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut interrupted = false;
    for (i, step) in plan.iter().enumerate() {
        let live: Vec<usize> = (0..f.hosts.len())
            .filter(|&k| !dropped.iter().any(|d| d.host == k))
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
        let mut done_hosts = Vec::new();
        for (&k, o) in live.iter().zip(outs) {
            match o {
                Ok(m) => {
                    bundles[k].put_step(record(step, i, started.clone(), Some(m.clone())))?;
                    done.push(m);
                    done_hosts.push(k);
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
                    dropped.push(Dropped {
                        host: k,
                        step: i,
                        why: e,
                    });
                }
            }
        }
        if interrupted {
            break;
        }
        if !done.is_empty() {
            let refs: Vec<&Measured> = done.iter().collect();
            let mut m = merge(&refs);
            m.notes.push(hosts_note(f, &done_hosts, &dropped, plan));
            fleet.put_step(record(step, i, started, Some(m)))?;
        }
    }
    remove_target(f, say);
    finish(suite, plan, f, bundles, fleet, dropped, interrupted)
}

/// A fleet step's note: the hosts it adds up, and those it lacks with why.
fn hosts_note(
    f: &FleetRun<'_>,
    done: &[usize],
    dropped: &[Dropped],
    plan: &[PlannedStep],
) -> String {
    let names: Vec<String> = done.iter().map(|&k| who(&f.hosts[k])).collect();
    let mut note = format!("Hosts added up: {}.", names.join(", "));
    for d in dropped {
        note.push_str(&format!(
            " Without {}, which failed at step {} ('{}').",
            who(&f.hosts[d.host]),
            d.step + 1,
            plan[d.step].name
        ));
    }
    note
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

/// Per headline metric, its value on each host: ((name, unit), [(host, value)]).
type PerMetric = Vec<(MetricKey, Vec<(String, f64)>)>;

/// Each host's headline metrics, for hosts whose bundle holds every step (closed here
/// as complete; the others as interrupted unless failed).
fn close_hosts(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    f: &FleetRun<'_>,
    bundles: &mut [Bundle],
    interrupted: bool,
) -> Result<PerMetric, String> {
    let mut per_metric: PerMetric = Vec::new();
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
            per_metric[slot].1.push((who(h), m.value));
        }
    }
    Ok(per_metric)
}

/// The fleet's steps added up again over `hosts` alone (the hosts that finished every
/// step), so that a best-of or a mean over steps compares like with like.
fn steps_over(
    plan: &[PlannedStep],
    fleet: &Bundle,
    bundles: &[Bundle],
    hosts: &[usize],
) -> Vec<StepRecord> {
    plan.iter()
        .enumerate()
        .filter_map(|(i, step)| {
            let ms: Vec<&Measured> = hosts
                .iter()
                .filter_map(|&k| bundles[k].step(i)?.run.as_ref())
                .collect();
            if ms.len() < hosts.len() || ms.is_empty() {
                return None;
            }
            let started = fleet.step(i)?.started_at.clone().unwrap_or_default();
            Some(record(step, i, started, Some(merge(&ms))))
        })
        .collect()
}

/// "Steps 5–8 of 8 lack 127.0.0.3:8765, which failed at step 5 ('…'): why".
fn lacking_lines(f: &FleetRun<'_>, plan: &[PlannedStep], dropped: &[Dropped]) -> Vec<String> {
    dropped
        .iter()
        .map(|d| {
            let n = plan.len();
            let steps = if d.step + 1 == n {
                format!("Step {n} of {n} lacks")
            } else {
                format!("Steps {}–{n} of {n} lack", d.step + 1)
            };
            format!(
                "{steps} {}, which failed at step {} ('{}'): {}",
                who(&f.hosts[d.host]),
                d.step + 1,
                plan[d.step].name,
                d.why
            )
        })
        .collect()
}

/// Close the bundles: the suite's analysis per host and for the fleet, the spread.
fn finish(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    f: &FleetRun<'_>,
    mut bundles: Vec<Bundle>,
    mut fleet: Bundle,
    dropped: Vec<Dropped>,
    interrupted: bool,
) -> Result<FleetOutcome, String> {
    let per_metric = close_hosts(suite, plan, f, &mut bundles, interrupted)?;
    let survivors: Vec<usize> = (0..f.hosts.len())
        .filter(|&k| !dropped.iter().any(|d| d.host == k))
        .collect();
    let mut spread = Vec::new();
    for ((name, unit), v) in &per_metric {
        if v.len() < 2 {
            continue;
        }
        if let Some(s) = af::spread(v, unit) {
            fleet.doc.notes.push(spread_line(name, unit, &s));
            spread.push(spread_json(name, unit, &s));
        }
    }
    let lacking = lacking_lines(f, plan, &dropped);
    for l in &lacking {
        fleet.doc.notes.push(format!("{l}."));
    }
    let all_steps = fleet.doc.steps.len() == plan.len() && !interrupted;
    let n = hosts(f.hosts.len());
    let (status, head, table) = if interrupted {
        let at = fleet.doc.steps.len() + 1;
        (
            BundleStatus::Interrupted,
            format!(
                "fleet of {n}: interrupted at step {at} of {}; nothing added up (a fleet run cannot be resumed: run it again)",
                plan.len()
            ),
            String::new(),
        )
    } else if !all_steps {
        (
            BundleStatus::Failed,
            format!("fleet of {n}: every host failed before the last step"),
            String::new(),
        )
    } else if dropped.is_empty() {
        let rep = suite.report(&fleet.doc.steps);
        fleet.doc.summary = Some(rep.summary.clone());
        (
            BundleStatus::Complete,
            format!("fleet of {n}: every step on every host"),
            rep.table,
        )
    } else {
        // Steps over different host sets are not compared: the summary adds up, for
        // every step, only the hosts that finished them all.
        let like = steps_over(plan, &fleet, &bundles, &survivors);
        let rep = suite.report(&like);
        fleet.doc.summary = Some(rep.summary.clone());
        let names: Vec<String> = survivors.iter().map(|&k| who(&f.hosts[k])).collect();
        let over = format!(
            "The fleet summary adds up, for every step, only the {} that finished every step ({}), so that steps are compared like with like; each step in the bundle adds up the hosts that finished it.",
            hosts(survivors.len()),
            names.join(", ")
        );
        fleet.doc.notes.push(over.clone());
        (
            BundleStatus::Partial,
            format!(
                "fleet of {n}, PARTIAL: {} of them failed\n{}\n{over}",
                dropped.len(),
                lacking.join("\n")
            ),
            rep.table,
        )
    };
    fleet.set_status(status)?;
    let names = |ks: &mut dyn Iterator<Item = usize>| -> Vec<String> {
        ks.map(|k| who(&f.hosts[k])).collect()
    };
    let steps = plan
        .iter()
        .enumerate()
        .filter(|(i, _)| fleet.step(*i).is_some())
        .map(|(i, st)| {
            let gone = |k: usize| dropped.iter().any(|d| d.host == k && d.step <= i);
            StepHosts {
                index: i,
                id: st.id.clone(),
                hosts: names(&mut (0..f.hosts.len()).filter(|&k| !gone(k))),
                missing_hosts: names(&mut (0..f.hosts.len()).filter(|&k| gone(k))),
            }
        })
        .collect();
    let doc = FleetDoc {
        status,
        hosts: f.hosts.iter().map(who).collect(),
        failed_hosts: dropped
            .iter()
            .map(|d| (f.hosts[d.host].id(), d.why.clone()))
            .collect(),
        summary_hosts: if table.is_empty() {
            Vec::new()
        } else {
            names(&mut survivors.iter().copied())
        },
        steps,
        spread,
    };
    let mut text = format!("{head}\n{table}");
    // (Notes the head already says, and the bundle's own marker, are not repeated.)
    for n in &fleet.doc.notes {
        if n != FLEET_NOTE && !head.contains(n.trim_end_matches('.')) {
            text.push_str(&format!("note: {n}\n"));
        }
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
