//! Reports from bundles made by the real suites (`--short`, simulated drives): every
//! suite gets exactly its charts and tables, each drive is one group in every chart,
//! the numbers shown are the bundle's, and the SVG/PNG files come out one per chart.

mod common;

use std::collections::BTreeSet;

use drivelab_report::bundles::{bundle_report, open_bundle, DriveRun};
use drivelab_report::{Block, Mark, Report};

fn report_of(filter: impl Fn(&str, &str) -> bool) -> (Report, Vec<DriveRun>) {
    let runs: Vec<DriveRun> = common::bundles::all_bundles()
        .iter()
        .filter(|(_, suite, drive)| filter(suite, drive))
        .map(|(dir, _, _)| DriveRun::new(None, open_bundle(dir).unwrap()))
        .collect();
    (bundle_report(&runs), runs)
}

fn ids(r: &Report) -> BTreeSet<String> {
    r.charts().iter().map(|c| c.id.clone()).collect()
}

#[test]
fn every_suite_gets_its_charts_and_every_drive_its_group() {
    let t0 = std::time::Instant::now();
    let (report, runs) = report_of(|_, _| true);
    eprintln!("bundles made and mapped in {:?}", t0.elapsed());
    let got = ids(&report);
    let mut want = vec![
        "quick-read",
        "quick-write",
        "consistency-log",
        "consistency-linear",
        "consistency-zoom",
        "consistency-latency",
        "consistency-histogram",
        "consistency-exceedance",
        "seqfill",
        "seqfill-exceedance",
        "iometer-random",
        "iometer-sequential",
        "iometer-specs",
        "iometer-exceedance",
        "mixed-iops",
        "mixed-latency",
        "mixed-exceedance",
        "replay-rate",
        "replay-vs-original",
        "replay-exceedance",
        // The simulated drives report temperature and power: every suite's telemetry
        // over time, and peak's efficiency at the headline QD.
        "quick-telemetry",
        "peak-telemetry",
        "consistency-telemetry",
        "seqfill-telemetry",
        "iometer-telemetry",
        "mixed-telemetry",
        "replay-telemetry",
        "peak-efficiency-random",
        "peak-efficiency-sequential",
    ];
    let mut owned: Vec<String> = Vec::new();
    for w in ["4k-randread", "4k-randwrite", "128k-read", "128k-write"] {
        for k in ["throughput", "latency", "exceedance"] {
            owned.push(format!("peak-{w}-{k}"));
        }
    }
    for t in ["seq1m-q8t1", "seq1m-q1t1", "rnd4k-q32t1", "rnd4k-q1t1"] {
        owned.push(format!("quick-{t}-latency"));
    }
    want.extend(owned.iter().map(String::as_str));
    let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want);

    // Three drives, three groups; the multi-drive charts hold a series of each.
    let labels: Vec<&str> = report.groups.iter().map(String::as_str).collect();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(labels[0].starts_with("drivelab-sim nvme-tlc"), "{labels:?}");
    for c in report.charts() {
        assert!(!c.series.is_empty(), "{} is empty", c.id);
        for s in &c.series {
            assert!(!s.points.is_empty(), "{}: {} has no points", c.id, s.name);
        }
        let groups: BTreeSet<&str> = c.series.iter().map(|s| s.group.as_str()).collect();
        let multi = ["quick", "peak", "consistency", "seqfill"]
            .iter()
            .any(|p| c.id.starts_with(p));
        assert_eq!(groups.len(), if multi { 3 } else { 1 }, "{}", c.id);
        c.validate().unwrap();
    }
    // One tile table per quick bundle, grouped by drive.
    let tiles: Vec<_> = report
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Tiles(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(tiles.len(), 3);
    assert!(tiles.iter().all(|t| t.rows.len() == 4));
    // Known answers: the marks and callouts repeat the bundles' own analyses.
    for r in &runs {
        let a = &r.doc.summary.as_ref().unwrap().analysis;
        match r.doc.suite.as_str() {
            "peak" => {
                let sw = &a["sweeps"][0]["sweep"];
                let k = &sw["curve"][sw["knee"]["index"].as_u64().unwrap() as usize];
                let c = report
                    .charts()
                    .into_iter()
                    .find(|c| c.id == "peak-4k-randread-throughput")
                    .unwrap();
                assert!(c.marks.iter().any(|m| matches!(m,
                    Mark::Point { x, y, group: Some(g), .. }
                    if *g == r.label && *x == k["qd"].as_f64().unwrap() && *y == k["iops"].as_f64().unwrap())),
                    "{}: no 95 % mark", r.label);
            }
            "consistency" => {
                let avg = a["scores"]["avg_iops"].as_f64().unwrap();
                let c = report
                    .charts()
                    .into_iter()
                    .find(|c| c.id == "consistency-zoom")
                    .unwrap();
                let want = format!(
                    "{}: {} IOPS average",
                    r.label,
                    drivelab_report::fmt_number(avg, 0)
                );
                assert!(
                    c.callouts.iter().any(|l| l.starts_with(&want)),
                    "{:?} lacks {want}",
                    c.callouts
                );
                assert!(c.marks.iter().any(|m| matches!(m, Mark::XRange { .. })));
                let lin = report
                    .charts()
                    .into_iter()
                    .find(|c| c.id == "consistency-linear")
                    .unwrap();
                let s = lin.series.iter().find(|s| s.group == r.label).unwrap();
                let series = a["iops_per_s"].as_array().unwrap();
                assert_eq!(s.points.len(), series.len());
                assert_eq!(s.points[3].1, series[3].as_f64().unwrap());
            }
            "seqfill" => {
                let f = &a["fill"];
                let c = report
                    .charts()
                    .into_iter()
                    .find(|c| c.id == "seqfill")
                    .unwrap();
                if let Some(b) = f["cache_bytes"].as_f64() {
                    assert!(c.marks.iter().any(|m| matches!(m,
                        Mark::Point { x, group: Some(g), .. } if *g == r.label && (*x - b / 1e9).abs() < 1e-12)));
                }
            }
            _ => {}
        }
    }

    let html = report.render().unwrap();
    assert!(html.contains("Content-Security-Policy"));
    let outside = html
        .replace("http://www.w3.org/2000/svg", "")
        .replace("http://www.w3.org/1999/xlink", "");
    assert!(
        !outside.contains("http://") && !outside.contains("https://"),
        "external reference in the report"
    );
    let dir = tempfile::tempdir().unwrap();
    let svgs = report.write_svgs(dir.path()).unwrap();
    let pngs = report.write_pngs(dir.path()).unwrap();
    assert_eq!(svgs.len(), report.charts().len());
    assert_eq!(pngs.len(), report.charts().len());
    for p in &pngs {
        let bytes = std::fs::read(p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }
}

#[test]
fn one_drive_gets_no_prefixes_and_two_runs_of_one_suite_stay_apart() {
    let (report, _) = report_of(|suite, drive| suite == "consistency" && drive.contains("nvme"));
    let zoom = report
        .charts()
        .into_iter()
        .find(|c| c.id == "consistency-zoom")
        .unwrap();
    assert_eq!(zoom.callouts.len(), 1);
    assert!(
        zoom.callouts[0].ends_with("average ÷ std dev"),
        "{:?}",
        zoom.callouts
    );
    // The same bundle twice: the second is labelled apart, so both keep their series.
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "quick" && d.contains("nvme"))
        .unwrap();
    let doc = open_bundle(dir).unwrap();
    let runs = vec![DriveRun::new(None, doc.clone()), DriveRun::new(None, doc)];
    let r = bundle_report(&runs);
    assert_eq!(r.groups.len(), 2);
    assert!(r.groups[1].ends_with(" #2"), "{:?}", r.groups);
    let read = r
        .charts()
        .into_iter()
        .find(|c| c.id == "quick-read")
        .unwrap();
    assert_eq!(read.series.len(), 2);
}

#[test]
fn unfinished_runs_and_unlike_settings_head_their_section() {
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "quick" && d.contains("nvme"))
        .unwrap();
    let done = open_bundle(dir).unwrap();
    let mut cut = done.clone();
    cut.status = drivelab_suites::bundle::BundleStatus::Interrupted;
    cut.summary = None;
    let kept = 2;
    cut.steps.truncate(kept);
    let mut other = done.clone();
    other.config_hash = "0".repeat(64);
    other.knobs["runs"] = serde_json::json!(9);
    let runs = vec![
        DriveRun::new(Some("A".into()), done),
        DriveRun::new(Some("B".into()), cut),
        DriveRun::new(Some("C".into()), other),
    ];
    let r = bundle_report(&runs);
    let quick = r
        .sections
        .iter()
        .find(|s| s.title.contains("Quick"))
        .unwrap();
    let warnings: Vec<&String> = quick
        .blocks
        .iter()
        .take_while(|b| matches!(b, Block::Warning(_)))
        .map(|b| match b {
            Block::Warning(t) => t,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("B: this run did not finish (it was interrupted)")
            && warnings[0].contains(&format!("{kept} of its")),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("C (runs ") && warnings[1].contains("→ 9"),
        "{}",
        warnings[1]
    );
}

#[test]
fn a_directory_without_a_bundle_is_named() {
    let d = tempfile::tempdir().unwrap();
    let e = open_bundle(d.path()).unwrap_err();
    assert!(e.contains("not a result bundle directory"), "{e}");
    std::fs::write(d.path().join("run.json"), "{}").unwrap();
    let e = open_bundle(d.path()).unwrap_err();
    assert!(e.contains("is not a drivelab result bundle"), "{e}");
}
