//! `fio`: results imported from fio (`drivelab import fio`): each job's numbers as fio
//! measured them, named by what the job did (every job of a grid often has one name),
//! and the iodepth × numjobs grid of a set of results (its sweeps are drawn by the peak
//! section).

use std::borrow::Cow;

use drivelab_engine::result::DirTotals;
use drivelab_engine::series::IntervalRecord;
use drivelab_suites::bundle::StepRecord;
use drivelab_suites::fio::import::{test_name, FioAnalysis};
use drivelab_suites::fio::series::{consistency_run, SeriesEntry};

use super::consistency::{self, Drive};
use super::seqfill::{self, Fill};
use super::{cell, curve, workload_phrase, Entry, ReportOptions};
use crate::html::{Block, Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark, Series};

/// Whether an imported bundle's results form queue-depth sweeps.
pub(crate) fn has_sweeps(e: &Entry) -> bool {
    e.analysis::<FioAnalysis>()
        .is_some_and(|a| !a.sweeps.is_empty())
}

/// Throughput against iodepth, one line per job count, for each grid of each bundle.
fn grid_charts(entries: &[Entry]) -> Vec<Chart> {
    let mut out = Vec::new();
    for e in entries {
        let Some(a) = e.analysis::<FioAnalysis>() else {
            continue;
        };
        for g in &a.grids {
            let mbps = g.unit == "MB/s";
            let mut jobs: Vec<u32> = g.points.iter().map(|p| p.numjobs).collect();
            jobs.sort_unstable();
            jobs.dedup();
            let mut c = Chart::new(
                format!("fio-grid-{}-{}", super::slug(e.label), g.workload),
                format!("{}: {} (each line one job count)", e.label, g.label),
                Axis::log2("iodepth", "I/Os per job"),
                Axis::linear("Throughput", g.unit.clone()),
            );
            // One drive, one colour: the lines differ in dash and are named at their end.
            const DASHES: [Dash; 5] = [
                Dash::Solid,
                Dash::Dashed,
                Dash::Dotted,
                Dash::DashDot,
                Dash::LongDash,
            ];
            for (k, j) in jobs.into_iter().enumerate() {
                let line: Vec<(f64, f64)> = g
                    .points
                    .iter()
                    .filter(|p| p.numjobs == j)
                    .map(|p| {
                        let v = if mbps { p.point.mbps } else { p.point.iops };
                        (p.iodepth as f64, v)
                    })
                    .collect();
                let jobs = format!("{j} {}", if j == 1 { "job" } else { "jobs" });
                if let Some(&(x, y)) = line.last() {
                    c.marks.push(Mark::Point {
                        x,
                        y,
                        label: jobs.clone(),
                        group: Some(e.group.to_string()),
                        on_y2: false,
                    });
                }
                let name = format!("{} {jobs}", e.label);
                c.series.push(
                    curve(name, e.group, line)
                        .dashed(DASHES[k % DASHES.len()])
                        .with_markers(),
                );
            }
            out.push(c);
        }
    }
    out
}

/// An imported result with per-window logs, named for the report.
struct Logged<'a> {
    /// The bundle's label, with the test's name when the bundle has several series.
    label: String,
    group: &'a str,
    entry: SeriesEntry,
    step: &'a StepRecord,
}

/// Every imported series of `entries`, in bundle and step order.
fn logged<'a>(entries: &'a [Entry<'a>]) -> Vec<Logged<'a>> {
    let mut out = Vec::new();
    for e in entries {
        let Some(a) = e.analysis::<FioAnalysis>() else {
            continue;
        };
        let several = a.series.len() > 1;
        for s in a.series {
            let Some(step) = e.doc.steps.iter().find(|st| st.id == s.step) else {
                continue;
            };
            out.push(Logged {
                label: if several {
                    format!("{} · {}", e.label, test_name(&step.config))
                } else {
                    e.label.to_string()
                },
                group: e.group,
                entry: s,
                step,
            });
        }
    }
    out
}

/// The sections of the imported series, drawn as native runs are: each series over
/// time (fio's own windows) with its stalls, and the consistency and fill sections for
/// the results they apply to (their charts' ids prefixed `fio-`, apart from a native
/// run's in the same report).
pub(crate) fn series_sections(entries: &[Entry], opts: &ReportOptions) -> Vec<Section> {
    let all = logged(entries);
    if all.is_empty() {
        return Vec::new();
    }
    let mut out = vec![over_time(&all)];
    let drives: Vec<Drive> = all
        .iter()
        .filter(|l| l.entry.consistency.is_some())
        .filter_map(|l| {
            Some(Drive {
                label: l.label.clone(),
                group: l.group.to_string(),
                a: l.entry.consistency.clone()?,
                steps: vec![Cow::Owned(consistency_run(l.step)?)],
                workload: Some(workload_phrase(&l.step.config)),
            })
        })
        .collect();
    if !drives.is_empty() {
        out.push(imported(consistency::section_of(&drives, opts)));
    }
    let fills: Vec<Fill> = all
        .iter()
        .filter_map(|l| {
            Some(Fill {
                label: l.label.clone(),
                group: l.group.to_string(),
                a: l.entry.fill.clone()?,
                steps: vec![Cow::Borrowed(l.step)],
                workload: Some(workload_phrase(&l.step.config)),
            })
        })
        .collect();
    if !fills.is_empty() {
        out.push(imported(seqfill::section_of(&fills)));
    }
    out
}

/// A native section made of imported results: said so, its charts' ids apart.
fn imported(mut s: Section) -> Section {
    s.title = format!("{} — imported fio results", s.title);
    for b in &mut s.blocks {
        if let Block::Chart(c) = b {
            c.id = format!("fio-{}", c.id);
        }
    }
    s.text_first(
        "These are imported fio results with per-window logs, analysed as drivelab analyses \
         its own runs; the drive's state before them is what the fio jobs left (drivelab \
         did not prepare it).",
    )
}

/// Each series over time at fio's grain (its charts and its stalls tabulated).
fn over_time(all: &[Logged]) -> Section {
    let mut s = Section::new("Imported fio results over time")
        .text(
            "Each result with fio's per-window logs, at fio's own window (log_avg_msec): \
             throughput and each window's mean latency. Ticks along the bottom mark \
             windows in which no I/O completed.",
        )
        .table(stalls_table(all));
    for c in over_time_charts(all) {
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}

/// IOPS (random workloads) or MB/s (sequential) and the mean latency of each window,
/// the windows without a completed I/O ticked.
fn over_time_charts(all: &[Logged]) -> [Chart; 3] {
    let time = || Axis::linear("Time", "s");
    let mut iops = Chart::new(
        "fio-series-iops",
        "Imported results over time: IOPS",
        time(),
        Axis::linear("Throughput", "IOPS"),
    );
    let mut mbps = Chart::new(
        "fio-series-mbps",
        "Imported results over time: MB/s",
        time(),
        Axis::linear("Throughput", "MB/s"),
    );
    let mut lat = Chart::new(
        "fio-series-latency",
        "Imported results over time: mean latency",
        time(),
        Axis::log10("Latency", "µs"),
    );
    for l in all {
        let recs: Vec<IntervalRecord> = l
            .step
            .run
            .iter()
            .flat_map(|r| r.series.records.iter())
            .filter(|r| !r.ramp)
            .collect();
        let at = |r: &IntervalRecord| r.start_ns as f64 / 1e9;
        let random = l.step.config.rw.is_random();
        let value = |r: &IntervalRecord| {
            if random {
                r.all.ops_per_s
            } else {
                r.all.bytes_per_s / 1e6
            }
        };
        let c = if random { &mut iops } else { &mut mbps };
        let pts = recs.iter().map(|r| (at(r), value(r))).collect();
        c.series.push(curve(&l.label, l.group, pts));
        let stalls: Vec<f64> = recs.iter().filter(|r| r.all.ops == 0).map(&at).collect();
        if !stalls.is_empty() {
            c.marks.push(Mark::Ticks {
                xs: stalls,
                label: format!("{}: no I/O completed", l.label),
                group: Some(l.group.to_string()),
            });
        }
        let means: Vec<(f64, f64)> = recs
            .iter()
            .filter_map(|r| Some((at(r), r.all.lat_mean_ns? / 1e3)))
            .collect();
        if !means.is_empty() {
            lat.series.push(Series::line(&l.label, l.group, means));
        }
    }
    [iops, mbps, lat]
}

/// Each series' windows and stalls.
fn stalls_table(all: &[Logged]) -> Table {
    let rows = all
        .iter()
        .map(|l| {
            let e = &l.entry;
            Row {
                group: Some(l.group.to_string()),
                cells: vec![
                    l.label.clone(),
                    cell(Some(e.interval_s), 3),
                    e.windows.to_string(),
                    e.stalls.to_string(),
                    e.stall_windows.to_string(),
                    cell(Some(e.longest_stall_s), 2),
                ],
            }
        })
        .collect();
    Table {
        caption: "Windows without a completed I/O (stalls), each imported series".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Window", "s"),
            Column::number("Windows", "count"),
            Column::number("Stalls", "count"),
            Column::number("Windows in stalls", "count"),
            Column::number("Longest stall", "s"),
        ],
        rows,
    }
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut table = Table {
        caption: "fio results imported: each job's numbers as fio measured them".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Test"),
            Column::text("fio job"),
            Column::text("Direction"),
            Column::number("Throughput", "IOPS"),
            Column::number("Throughput", "MB/s"),
            Column::number("Mean latency", "µs"),
            Column::number("p99", "µs"),
        ],
        rows: Vec::new(),
    };
    for e in entries {
        for st in e.steps(|_| true) {
            table.rows.extend(rows_of(e, st));
        }
    }
    let mut s = Section::new("fio results")
        .text("Results of fio runs brought in with `drivelab import fio`; see each bundle's notes for what fio measured (latency from submission or completion).")
        .table(table);
    for c in grid_charts(entries) {
        s = s.chart(c);
    }
    s
}

/// A step's rows: one per direction that did I/O.
fn rows_of(e: &Entry, st: &StepRecord) -> Vec<Row> {
    let Some(run) = &st.run else {
        return Vec::new();
    };
    let t = &run.totals;
    [("read", &t.read), ("write", &t.write)]
        .into_iter()
        .filter(|(_, d)| d.ops > 0)
        .map(|(dir, d)| Row {
            group: Some(e.group.to_string()),
            cells: vec![
                e.label.to_string(),
                test_name(&st.config),
                st.params["fio_job"]
                    .as_str()
                    .map_or_else(|| st.name.clone(), str::to_string),
                dir.to_string(),
                cell(Some(d.ops_per_s), 0),
                cell(Some(d.mbps), 1),
                cell(us(d, None), 1),
                cell(us(d, Some(99.0)), 1),
            ],
        })
        .collect()
}

/// The mean (or percentile `p`) latency of a direction in µs.
fn us(d: &DirTotals, p: Option<f64>) -> Option<f64> {
    match p {
        None => d.latency.mean_ns.map(|v| v / 1e3),
        Some(p) => d.latency.at(p).map(|v| v as f64 / 1e3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_is_named_by_its_rw_block_size_depth_and_jobs() {
        let mut w: drivelab_engine::spec::Workload = serde_json::from_value(serde_json::json!({
            "rw": "randread", "rwmixread": 50, "bs": [{"bytes": 4096, "percent": 100}],
            "iodepth": 16, "numjobs": 4, "ioengine": "io_uring", "direct": true,
            "offset_bytes": 0, "size_bytes": 1, "runtime_ns": null, "io_size_bytes": null,
            "ramp_ns": 0, "percentage_random": 100, "random_distribution": {"kind": "uniform"},
            "randseed": 1, "data": {"kind": "random"}, "log_interval_ns": 1000000000,
            "align_bytes": 4096, "continue_on_error": false, "fixedbufs": false,
            "registerfiles": false
        }))
        .unwrap();
        assert_eq!(test_name(&w), "randread 4K QD16 ×4 jobs");
        w.numjobs = 1;
        w.rw = drivelab_engine::spec::RwMode::RandRw;
        w.rwmixread = 70;
        assert_eq!(test_name(&w), "randrw (70 % reads) 4K QD16");
    }
}
