//! `iometer`: the QD profiles as lines (4K random IOPS, 512K sequential MB/s against
//! outstanding I/Os) and tables, the access specs as bars, and latency exceedance of
//! the access specs.

use drivelab_suites::iometer::{Analysis, Row as Result};

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Series};

/// (profile id, label, random).
const PROFILES: [(&str, &str, bool); 4] = [
    ("4k-randread", "4K random read", true),
    ("4k-randwrite", "4K random write", true),
    ("512k-read", "512K sequential read", false),
    ("512k-write", "512K sequential write", false),
];

fn profile(a: &Analysis, id: &str, random: bool) -> Vec<(f64, f64)> {
    a.profiles
        .iter()
        .filter(|r| r.name == id)
        .filter_map(|r| Some((r.qd? as f64, if random { r.iops } else { r.mbps })))
        .filter(|p| p.1.is_finite())
        .collect()
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("IOMeter-style profiles").text(
        "4K random reads and writes at each queue depth, 512K sequential transfers with \
         two workers (outstanding I/Os per worker, as IOMeter counts them), then the \
         access specifications.",
    );
    let qd = || Axis::log2("Outstanding I/Os", "per worker");
    let mut random = Chart::new(
        "iometer-random",
        "IOMeter: 4K random I/O vs queue depth",
        qd(),
        Axis::linear("Throughput", "IOPS"),
    );
    let mut seq = Chart::new(
        "iometer-sequential",
        "IOMeter: 512K sequential I/O vs outstanding I/Os per worker",
        qd(),
        Axis::linear("Throughput", "MB/s"),
    );
    let mut table = Table {
        caption: "IOMeter profiles and access specs".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Test"),
            Column::number("Outstanding", "I/Os"),
            Column::number("Throughput", "IOPS"),
            Column::number("Throughput", "MB/s"),
            Column::number("Mean latency", "µs"),
        ],
        rows: Vec::new(),
    };
    let analyses: Vec<Analysis> = entries
        .iter()
        .map(|e| {
            e.analysis().unwrap_or(Analysis {
                profiles: Vec::new(),
                specs: Vec::new(),
            })
        })
        .collect();
    let mut spec_names: Vec<String> = Vec::new();
    for r in analyses.iter().flat_map(|a| &a.specs) {
        if !spec_names.contains(&r.name) {
            spec_names.push(r.name.clone());
        }
    }
    let mut specs = Chart::new(
        "iometer-specs",
        "IOMeter: access specifications",
        Axis::categories("Access spec", spec_names.clone()),
        Axis::linear("Throughput", "IOPS"),
    );
    let mut exc = exceedance::chart(
        "iometer-exceedance".into(),
        "IOMeter: latency exceedance of the access specs".into(),
    );
    for (e, a) in entries.iter().zip(&analyses) {
        let (name, group) = (e.label, e.group);
        for (id, label, rnd) in PROFILES {
            let pts = profile(a, id, rnd);
            if pts.is_empty() {
                continue;
            }
            let series = curve(format!("{name} {label}"), group, pts);
            if rnd {
                random.series.push(series);
            } else {
                seq.series.push(series);
            }
        }
        let spec_pts: Vec<(f64, f64)> = spec_names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                a.specs
                    .iter()
                    .find(|r| &r.name == n)
                    .map(|r| (i as f64, r.iops))
                    .filter(|p| p.1.is_finite())
            })
            .collect();
        if !spec_pts.is_empty() {
            specs.series.push(Series::bars(name, group, spec_pts));
        }
        for n in &spec_names {
            let h = e.histograms(|st| st.params["spec"].as_str() == Some(n));
            let label = if spec_names.len() > 1 {
                format!("{name} {n}")
            } else {
                name.to_string()
            };
            if let Some(series) = exceedance::series(label, group, &h, Dir::Both) {
                exc.series.push(series);
            }
        }
        for (rows, kind) in [(&a.profiles, "profile"), (&a.specs, "spec")] {
            for r in rows {
                table.rows.push(table_row(name, r, kind));
            }
        }
    }
    s = s.table(table);
    for c in [random, seq, specs, exc] {
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}

/// A step's row of the table, named by its profile's label or its spec's name.
fn table_row(drive: &str, r: &Result, kind: &str) -> Row {
    let test = PROFILES
        .iter()
        .find(|p| p.0 == r.name)
        .map_or_else(|| format!("{} ({kind})", r.name), |p| p.1.to_string());
    Row {
        group: Some(drive.to_string()),
        cells: vec![
            drive.to_string(),
            test,
            cell(r.qd.map(|q| q as f64), 0),
            cell(Some(r.iops), 0),
            cell(Some(r.mbps), 1),
            cell(r.lat_mean_us, 1),
        ],
    }
}
