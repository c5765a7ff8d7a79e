//! `quick`: CrystalDiskMark's tile table per drive, read and write throughput bars per
//! test (all drives side by side), and latency exceedance per test.

use serde_json::Value;

use super::exceedance::{self, Dir};
use super::{slug, Entry};
use crate::html::{Section, Tile, TileRow, TileTable};
use crate::model::{Axis, Chart, Series};

fn tile(d: &Value, key: &str) -> Tile {
    let f = |what: &str| d[format!("{key}_{what}")].as_f64().unwrap_or(f64::NAN);
    Tile {
        mbps: f("mbps"),
        iops: f("iops"),
        latency_us: f("lat_mean_us"),
    }
}

fn shown(e: &Entry) -> (&'static str, String) {
    let runs = e.summary.analysis["runs"].as_u64().unwrap_or(0);
    match e.summary.analysis["shown"].as_str() {
        Some("mean") => ("mean", format!("mean of {runs} runs")),
        _ => ("best", format!("best of {runs} runs")),
    }
}

/// Test labels in first-seen order over all bundles.
fn test_labels(entries: &[Entry]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        for t in e.summary.analysis["tests"].as_array().into_iter().flatten() {
            if let Some(l) = t["test"].as_str() {
                if !out.iter().any(|x| x == l) {
                    out.push(l.to_string());
                }
            }
        }
    }
    out
}

fn test_of<'v>(e: &'v Entry, label: &str) -> Option<&'v Value> {
    e.summary.analysis["tests"]
        .as_array()?
        .iter()
        .find(|t| t["test"].as_str() == Some(label))
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Quick (CrystalDiskMark presets)").text(
        "Throughput in decimal MB/s (10⁶ bytes/s), IOPS and mean latency per test, \
         reported the way CrystalDiskMark does.",
    );
    for e in entries {
        let (key, which) = shown(e);
        let rows = e.summary.analysis["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| TileRow {
                label: t["test"].as_str().unwrap_or("?").to_string(),
                read: tile(&t["read"], key),
                write: tile(&t["write"], key),
            })
            .collect();
        s = s.tiles(TileTable {
            title: format!("{} — {which}", e.label),
            group: Some(e.label.to_string()),
            rows,
        });
    }
    let labels = test_labels(entries);
    for dir in ["read", "write"] {
        let mut c = Chart::new(
            format!("quick-{dir}"),
            format!("Quick: {dir} throughput per test"),
            Axis::categories("Test", labels.clone()),
            Axis::linear(format!("{} throughput", capital(dir)), "MB/s"),
        );
        for e in entries {
            let (key, _) = shown(e);
            let pts: Vec<(f64, f64)> = labels
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let v = test_of(e, l)?[dir][format!("{key}_mbps")].as_f64()?;
                    Some((i as f64, v))
                })
                .collect();
            if !pts.is_empty() {
                c.series
                    .push(Series::bars(e.label, e.label, pts).labelled());
            }
        }
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    for l in &labels {
        let mut c = exceedance::chart(
            format!("quick-{}-latency", slug(l)),
            format!("Quick {l}: latency exceedance"),
        )
        .subtitle("every run of the test merged");
        for e in entries {
            for (dir, d) in [("read", Dir::Read), ("write", Dir::Write)] {
                let h = e.histograms(|st| {
                    st.params["test"].as_str() == Some(l) && st.params["dir"].as_str() == Some(dir)
                });
                if let Some(series) =
                    exceedance::series(format!("{} {dir}", e.label), e.label, &h, d)
                {
                    c.series.push(series);
                }
            }
        }
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
