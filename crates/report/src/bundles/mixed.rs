//! `mixed`: IOPS and mean latency against the share of reads (the mixed-ratio curve),
//! tabulated, and the latency exceedance at all-writes, the middle and all-reads.

use drivelab_suites::mixed::{Analysis, StepResult};

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash};

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Mixed read/write ratio")
        .text("Random I/O at one queue depth with the share of reads swept from 0 to 100 %.");
    let share = || Axis::linear("Read share", "%").range(Some(0.0), Some(100.0));
    let mut iops = Chart::new(
        "mixed-iops",
        "Mixed: IOPS vs read share",
        share(),
        Axis::linear("Throughput", "IOPS"),
    )
    .subtitle("total solid, reads dashed, writes dotted");
    let mut lat = Chart::new(
        "mixed-latency",
        "Mixed: mean latency vs read share",
        share(),
        Axis::linear("Mean latency", "µs"),
    )
    .subtitle("reads dashed, writes dotted");
    let mut exc = exceedance::chart(
        "mixed-exceedance".into(),
        "Mixed: latency exceedance at 0 %, the middle and 100 % reads".into(),
    );
    let mut table = Table {
        caption: "Mixed read/write sweep".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Reads", "%"),
            Column::number("Total", "IOPS"),
            Column::number("Reads", "IOPS"),
            Column::number("Writes", "IOPS"),
            Column::number("Read latency", "µs"),
            Column::number("Write latency", "µs"),
            Column::number("p99", "µs"),
        ],
        rows: Vec::new(),
    };
    for e in entries {
        let (name, group) = (e.label, e.group);
        let rows = e
            .analysis::<Analysis>()
            .map(|a| a.steps)
            .unwrap_or_default();
        type Field = fn(&StepResult) -> Option<f64>;
        let line = |field: Field, skip_edge: Option<f64>| -> Vec<(f64, f64)> {
            rows.iter()
                .filter_map(|r| Some((r.read_percent as f64, field(r)?)))
                .filter(|p| p.1.is_finite() && Some(p.0) != skip_edge)
                .collect()
        };
        let total = line(|r| Some(r.iops), None);
        if total.is_empty() {
            continue;
        }
        iops.series
            .push(curve(name, group, total).dashed(Dash::Solid));
        iops.series.push(
            curve(
                format!("{name} reads"),
                name,
                line(|r| Some(r.read_iops), Some(0.0)),
            )
            .dashed(Dash::Dashed),
        );
        iops.series.push(
            curve(
                format!("{name} writes"),
                name,
                line(|r| Some(r.write_iops), Some(100.0)),
            )
            .dashed(Dash::Dotted),
        );
        lat.series.push(
            curve(
                format!("{name} reads"),
                name,
                line(|r| r.read_lat_mean_us, Some(0.0)),
            )
            .dashed(Dash::Dashed),
        );
        lat.series.push(
            curve(
                format!("{name} writes"),
                name,
                line(|r| r.write_lat_mean_us, Some(100.0)),
            )
            .dashed(Dash::Dotted),
        );
        let shares: Vec<u64> = rows.iter().map(|r| r.read_percent).collect();
        let mut picks: Vec<u64> = Vec::new();
        if let (Some(&lo), Some(&hi)) = (shares.iter().min(), shares.iter().max()) {
            let mid = shares
                .iter()
                .copied()
                .min_by_key(|&v| v.abs_diff((lo + hi) / 2))
                .unwrap_or(lo);
            for p in [lo, mid, hi] {
                if !picks.contains(&p) {
                    picks.push(p);
                }
            }
        }
        for p in picks {
            let h = e.histograms(|st| st.params["read_percent"].as_u64() == Some(p));
            if let Some(series) =
                exceedance::series(format!("{name} {p} % reads"), group, &h, Dir::Both)
            {
                exc.series.push(series);
            }
        }
        for r in &rows {
            table.rows.push(Row {
                group: Some(group.to_string()),
                cells: vec![
                    name.to_string(),
                    cell(Some(r.read_percent as f64), 0),
                    cell(Some(r.iops), 0),
                    cell(Some(r.read_iops), 0),
                    cell(Some(r.write_iops), 0),
                    cell(r.read_lat_mean_us, 1),
                    cell(r.write_lat_mean_us, 1),
                    cell(r.lat_p99_us, 1),
                ],
            });
        }
    }
    iops.series.retain(|s| !s.points.is_empty());
    lat.series.retain(|s| !s.points.is_empty());
    s = s.table(table);
    for c in [iops, lat, exc] {
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}
