//! `iometer`: the QD profiles as lines (4K random IOPS, 512K sequential MB/s against
//! outstanding I/Os) and tables, the access specs as bars, and latency exceedance of
//! the access specs.

use serde_json::Value;

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

fn rows<'v>(e: &'v Entry, key: &str) -> impl Iterator<Item = &'v Value> {
    e.summary.analysis[key].as_array().into_iter().flatten()
}

fn profile(e: &Entry, id: &str, value: &str) -> Vec<(f64, f64)> {
    rows(e, "profiles")
        .filter(|r| r["name"].as_str() == Some(id))
        .filter_map(|r| Some((r["qd"].as_f64()?, r[value].as_f64()?)))
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
    let mut spec_names: Vec<String> = Vec::new();
    for e in entries {
        for r in rows(e, "specs") {
            if let Some(n) = r["name"].as_str() {
                if !spec_names.iter().any(|x| x == n) {
                    spec_names.push(n.to_string());
                }
            }
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
    for e in entries {
        let name = e.label;
        for (id, label, rnd) in PROFILES {
            let pts = profile(e, id, if rnd { "iops" } else { "mbps" });
            if pts.is_empty() {
                continue;
            }
            let series = curve(format!("{name} {label}"), name, pts);
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
                rows(e, "specs")
                    .find(|r| r["name"].as_str() == Some(n))
                    .and_then(|r| r["iops"].as_f64())
                    .map(|v| (i as f64, v))
            })
            .collect();
        if !spec_pts.is_empty() {
            specs.series.push(Series::bars(name, name, spec_pts));
        }
        for n in &spec_names {
            let h = e.histograms(|st| st.params["spec"].as_str() == Some(n));
            let label = if spec_names.len() > 1 {
                format!("{name} {n}")
            } else {
                name.to_string()
            };
            if let Some(series) = exceedance::series(label, name, &h, Dir::Both) {
                exc.series.push(series);
            }
        }
        for (key, kind) in [("profiles", "profile"), ("specs", "spec")] {
            for r in rows(e, key) {
                let raw = r["name"].as_str().unwrap_or("?");
                let test = PROFILES
                    .iter()
                    .find(|p| p.0 == raw)
                    .map_or_else(|| format!("{raw} ({kind})"), |p| p.1.to_string());
                table.rows.push(Row {
                    group: Some(name.to_string()),
                    cells: vec![
                        name.to_string(),
                        test,
                        cell(r["qd"].as_f64(), 0),
                        cell(r["iops"].as_f64(), 0),
                        cell(r["mbps"].as_f64(), 1),
                        cell(r["lat_mean_us"].as_f64(), 1),
                    ],
                });
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
