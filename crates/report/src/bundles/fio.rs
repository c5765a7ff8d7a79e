//! `fio`: results imported from fio (`drivelab import fio`): each job's headline
//! numbers as fio measured them, and the iodepth × numjobs grid of a set of results
//! (its sweeps are drawn by the peak section).

use super::{curve, Entry};
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
                        group: Some(e.label.to_string()),
                        on_y2: false,
                    });
                }
                let name = format!("{} {jobs}", e.label);
                c.series
                    .push(curve(name, e.label, line).dashed(DASHES[k % DASHES.len()]));
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
            Column::text("Measure"),
            Column::text("Value"),
            Column::text("Unit"),
        ],
        rows: Vec::new(),
    };
    for e in entries {
        for m in &e.summary.metrics {
            table.rows.push(Row {
                group: Some(e.group.to_string()),
                cells: vec![
                    e.label.to_string(),
                    m.name.clone(),
                    crate::ticks::fmt_number(m.value, 1),
                    m.unit.clone(),
                ],
            });
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
