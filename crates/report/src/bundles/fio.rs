//! `fio`: results imported from fio (`drivelab import fio`): each job's numbers as fio
//! measured them, named by what the job did (every job of a grid often has one name),
//! and the iodepth × numjobs grid of a set of results (its sweeps are drawn by the peak
//! section).

use drivelab_engine::result::DirTotals;
use drivelab_suites::bundle::StepRecord;
use drivelab_suites::fio::import::test_name;

use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark};

/// Whether an imported bundle's results form queue-depth sweeps.
pub(crate) fn has_sweeps(e: &Entry) -> bool {
    e.summary.analysis["sweeps"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
}

/// Throughput against iodepth, one line per job count, for each grid of each bundle.
fn grid_charts(entries: &[Entry]) -> Vec<Chart> {
    let mut out = Vec::new();
    for e in entries {
        for g in e.summary.analysis["grids"].as_array().into_iter().flatten() {
            let unit = g["unit"].as_str().unwrap_or("IOPS");
            let key = if unit == "MB/s" { "mbps" } else { "iops" };
            let pts = g["points"].as_array().cloned().unwrap_or_default();
            let mut jobs: Vec<u64> = pts.iter().filter_map(|p| p["numjobs"].as_u64()).collect();
            jobs.sort_unstable();
            jobs.dedup();
            let mut c = Chart::new(
                format!(
                    "fio-grid-{}-{}",
                    super::slug(e.label),
                    g["workload"].as_str().unwrap_or("")
                ),
                format!(
                    "{}: {} (each line one job count)",
                    e.label,
                    g["label"].as_str().unwrap_or("")
                ),
                Axis::log2("iodepth", "I/Os per job"),
                Axis::linear("Throughput", unit),
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
                let line: Vec<(f64, f64)> = pts
                    .iter()
                    .filter(|p| p["numjobs"].as_u64() == Some(j))
                    .filter_map(|p| Some((p["iodepth"].as_f64()?, p[key].as_f64()?)))
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
