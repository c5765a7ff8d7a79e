//! A set of imported fio results as the measurements drivelab makes itself: results
//! that differ only in `iodepth` and/or `numjobs` (same workload, block size and host)
//! are queue-depth sweeps, analysed as a `run peak` sweep is ([`peak::sweep_of_points`]:
//! the knee is the lowest QD reaching 95 % of the best throughput, with the latencies
//! at it), by both of the reviews' methods — the depth method (one job, iodepth rising)
//! and the threads method (iodepth 1, jobs rising) — and the whole iodepth × numjobs
//! grid kept beside them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use drivelab_engine::spec::{block_size_label, BsMix, RwMode, Workload};

use crate::bundle::{Metric, StepRecord};
use crate::peak::{self, Point};
use crate::records;

/// How a sweep raises the queue depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// One job set (the fewest of the set), iodepth rising.
    Depth,
    /// iodepth set (the lowest of the set), jobs rising.
    Threads,
}

/// One sweep: a `run peak` bundle's `summary.analysis.sweeps` entry (the same JSON
/// fields, so the report reads it as a peak sweep), with how it raised the depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepEntry {
    #[serde(flatten)]
    pub entry: peak::SweepEntry,
    pub method: Method,
    /// The iodepth (threads method) or job count (depth method) it was held at.
    pub held_at: u32,
    /// The workload's label as a peak run names it ("4K random read"; "… on HOST"
    /// among several hosts): the name of the sweep's metrics where it is its workload's
    /// only sweep (empty in bundles imported before it was kept).
    #[serde(default)]
    pub workload_label: String,
}

/// One point of the iodepth × numjobs grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridPoint {
    pub iodepth: u32,
    pub numjobs: u32,
    #[serde(flatten)]
    pub point: Point,
}

/// The whole grid of one workload (where both iodepth and numjobs vary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub workload: String,
    pub label: String,
    pub unit: String,
    pub points: Vec<GridPoint>,
}

/// Everything found in a set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sets {
    pub sweeps: Vec<SweepEntry>,
    pub grids: Vec<Grid>,
    /// For each step (by index): the sweeps it is a point of.
    pub member_of: BTreeMap<usize, Vec<String>>,
}

impl Sets {
    /// The sweeps' headline metrics (as a peak run's). A workload's only sweep has the
    /// names a peak run of it has (`4K random read knee QD`), so `compare` puts the two
    /// side by side; where both methods swept it, each sweep's label says which.
    pub fn metrics(&self) -> Vec<Metric> {
        let sweeps_of = |l: &str| self.sweeps.iter().filter(|s| s.workload_label == l).count();
        self.sweeps
            .iter()
            .flat_map(|s| {
                let e = &s.entry;
                let only = !s.workload_label.is_empty() && sweeps_of(&s.workload_label) == 1;
                let label = if only { &s.workload_label } else { &e.label };
                peak::knee_metrics(label, !e.in_mbps(), &e.sweep)
            })
            .collect()
    }
}

/// What a result measured, beside its depth and job count.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    host: Option<String>,
    rw: &'static str,
    bs: Vec<(u32, u32)>,
    /// Sizes `bs` cannot state (per direction, a range): never pooled with fixed ones.
    bs_mix: Option<BsMix>,
    rwmixread: u32,
}

fn kind_of(w: &Workload, host: Option<String>) -> Kind {
    Kind {
        host,
        rw: w.rw.name(),
        bs: w.bs.iter().map(|b| (b.bytes, b.percent)).collect(),
        bs_mix: w.bs_mix.clone(),
        rwmixread: if matches!(w.rw, RwMode::Rw | RwMode::RandRw) {
            w.rwmixread
        } else {
            0
        },
    }
}

/// How the reviews name a workload: "4K random read", "128K sequential write",
/// "4K random 70 % read / 30 % write", "bssplit random write".
pub fn workload_label(w: &Workload) -> String {
    let bs = match (w.bs.as_slice(), &w.bs_mix) {
        (_, Some(mix)) => mix.label(),
        ([one], None) => block_size_label(one.bytes),
        _ => "bssplit".into(),
    };
    let how = if w.rw.is_random() {
        "random"
    } else {
        "sequential"
    };
    let what = match w.rw {
        RwMode::Read | RwMode::RandRead => "read".to_string(),
        RwMode::Write | RwMode::RandWrite => "write".to_string(),
        RwMode::Rw | RwMode::RandRw => {
            format!("{} % read / {} % write", w.rwmixread, 100 - w.rwmixread)
        }
    };
    format!("{bs} {how} {what}")
}

/// The sweeps and grids of `steps` (`hosts[i]`: the host step i ran on, when fio says;
/// `throttled[i]`: whether fio held it to a pace — the knee of a throttled curve means
/// nothing, so such steps are in none).
pub fn find(steps: &[StepRecord], hosts: &[Option<String>], throttled: &[bool]) -> Sets {
    let mut groups: BTreeMap<Kind, Vec<usize>> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        if records::totals(s).is_some() && !throttled.get(i).copied().unwrap_or(false) {
            groups
                .entry(kind_of(&s.config, hosts[i].clone()))
                .or_default()
                .push(i);
        }
    }
    // The host names a sweep only among several hosts' (one client/server result): it
    // is the run's identity, and two hosts' imports of one job file compare.
    let many_hosts = hosts.iter().any(|h| h != &hosts[0]);
    let mut sets = Sets::default();
    for (kind, ix) in groups {
        let w = &steps[ix[0]].config;
        let mut label = workload_label(w);
        if let Some(h) = kind.host.as_ref().filter(|_| many_hosts) {
            label = format!("{label} on {h}");
        }
        let random = w.rw.is_random();
        add_group(&mut sets, steps, &ix, &label, random);
    }
    sets
}

/// The sweeps (and grid) of one group of results of the same workload.
fn add_group(sets: &mut Sets, steps: &[StepRecord], ix: &[usize], label: &str, random: bool) {
    let depth = |i: &usize| steps[*i].config.iodepth;
    let jobs = |i: &usize| steps[*i].config.numjobs;
    let (Some(j0), Some(d0)) = (ix.iter().map(jobs).min(), ix.iter().map(depth).min()) else {
        return;
    };
    let unit = if random { "IOPS" } else { "MB/s" };
    let id = crate::plan::slug(label);
    let methods = [
        (
            Method::Depth,
            j0,
            format!("{label}, iodepth rising at {j0} {}", jobs_word(j0)),
        ),
        (
            Method::Threads,
            d0,
            format!("{label}, jobs rising at iodepth {d0}"),
        ),
    ];
    for (method, held, sweep_label) in methods {
        let on: Vec<usize> = ix
            .iter()
            .copied()
            .filter(|i| match method {
                Method::Depth => jobs(i) == j0,
                Method::Threads => depth(i) == d0,
            })
            .collect();
        let by_qd = by_qd(steps, &on);
        if by_qd.len() < 2 {
            continue;
        }
        let workload = format!(
            "{id}-{}",
            match method {
                Method::Depth => "iodepth",
                Method::Threads => "jobs",
            }
        );
        for i in &on {
            sets.member_of.entry(*i).or_default().push(workload.clone());
        }
        let points: Vec<(u32, Vec<&StepRecord>)> = by_qd
            .into_iter()
            .map(|(qd, v)| (qd, v.into_iter().map(|i| &steps[i]).collect()))
            .collect();
        sets.sweeps.push(SweepEntry {
            entry: peak::SweepEntry {
                workload,
                label: sweep_label,
                unit: unit.into(),
                sweep: peak::sweep_of_points(random, &points),
            },
            method,
            held_at: held,
            workload_label: label.into(),
        });
    }
    let mut cells: BTreeMap<(u32, u32), Vec<&StepRecord>> = BTreeMap::new();
    for i in ix {
        cells
            .entry((depth(i), jobs(i)))
            .or_default()
            .push(&steps[*i]);
    }
    let distinct = |f: fn(&(u32, u32)) -> u32| {
        let mut v: Vec<u32> = cells.keys().map(f).collect();
        v.dedup();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    if distinct(|k| k.0) >= 2 && distinct(|k| k.1) >= 2 {
        sets.grids.push(Grid {
            workload: format!("{id}-grid"),
            label: format!("{label}, iodepth × numjobs"),
            unit: unit.into(),
            points: cells
                .into_iter()
                .map(|((d, j), runs)| GridPoint {
                    iodepth: d,
                    numjobs: j,
                    point: peak::pool_as(random, d * j, &runs),
                })
                .collect(),
        });
    }
}

/// Steps `on` by their queue depth (iodepth × jobs), in rising order; several results
/// of one depth are pooled as one point's passes.
fn by_qd(steps: &[StepRecord], on: &[usize]) -> BTreeMap<u32, Vec<usize>> {
    let mut m: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in on {
        m.entry(steps[i].config.queue_depth()).or_default().push(i);
    }
    m
}

fn jobs_word(n: u32) -> &'static str {
    if n == 1 {
        "job"
    } else {
        "jobs"
    }
}
