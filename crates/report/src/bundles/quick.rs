//! `quick`: CrystalDiskMark's tile table per drive, read and write throughput bars per
//! test (all drives side by side), and latency exceedance per test.

use drivelab_suites::quick::{Analysis, DirResult, Show, TestResult};

use super::exceedance::{self, Dir};
use super::{slug, Entry};
use crate::html::{Section, Tile, TileRow, TileTable};
use crate::model::{Axis, Chart, Series};

fn tile(d: &DirResult, show: Show) -> Tile {
    let v = d.shown(show);
    let f = |x: Option<f64>| x.unwrap_or(f64::NAN);
    Tile {
        mbps: f(v.mbps),
        iops: f(v.iops),
        latency_us: f(v.lat_mean_us),
    }
}

/// Which of the runs is shown, in words.
fn shown(a: &Analysis) -> String {
    match a.shown {
        Show::Mean => format!("mean of {} runs", a.runs),
        Show::Best => format!("best of {} runs", a.runs),
    }
}

/// Test labels in first-seen order over all bundles.
fn test_labels(analyses: &[Option<Analysis>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in analyses.iter().flatten().flat_map(|a| &a.tests) {
        if !out.contains(&t.test) {
            out.push(t.test.clone());
        }
    }
    out
}

fn test_of<'a>(a: &'a Analysis, label: &str) -> Option<&'a TestResult> {
    a.tests.iter().find(|t| t.test == label)
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Quick (CrystalDiskMark presets)").text(
        "Throughput in decimal MB/s (10⁶ bytes/s), IOPS and mean latency per test, \
         reported the way CrystalDiskMark does.",
    );
    let analyses: Vec<Option<Analysis>> = entries.iter().map(|e| e.analysis()).collect();
    for (e, a) in entries.iter().zip(&analyses) {
        let Some(a) = a else { continue };
        let rows = a
            .tests
            .iter()
            .map(|t| TileRow {
                label: t.test.clone(),
                read: tile(&t.read, a.shown),
                write: tile(&t.write, a.shown),
            })
            .collect();
        s = s.tiles(TileTable {
            title: format!("{} — {}", e.label, shown(a)),
            group: Some(e.group.to_string()),
            rows,
        });
    }
    let labels = test_labels(&analyses);
    for dir in ["read", "write"] {
        let c = throughput_chart(entries, &analyses, &labels, dir);
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
                    exceedance::series(format!("{} {dir}", e.label), e.group, &h, d)
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

/// Each drive's shown throughput of every test in direction `dir`, as bars.
fn throughput_chart(
    entries: &[Entry],
    analyses: &[Option<Analysis>],
    labels: &[String],
    dir: &str,
) -> Chart {
    let mut c = Chart::new(
        format!("quick-{dir}"),
        format!("Quick: {dir} throughput per test"),
        Axis::categories("Test", labels.to_vec()),
        Axis::linear(format!("{} throughput", capital(dir)), "MB/s"),
    );
    for (e, a) in entries.iter().zip(analyses) {
        let Some(a) = a else { continue };
        let pts: Vec<(f64, f64)> = labels
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let v = test_of(a, l)?.dir(dir).shown(a.shown).mbps?;
                Some((i as f64, v))
            })
            .collect();
        if !pts.is_empty() {
            c.series
                .push(Series::bars(e.label, e.group, pts).labelled());
        }
    }
    c
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
