//! Reports from bundles made by the real suites (`--short`, simulated drives): every
//! suite gets exactly its charts and tables, each drive is one group in every chart,
//! the numbers shown are the bundle's, and the SVG/PNG files come out one per chart.

mod common;

use std::collections::BTreeSet;

use drivelab_report::bundles::{
    bundle_report, bundle_report_with, open_bundle, DriveRun, ReportOptions,
};
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
        match r.doc.suite.name() {
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
fn a_drive_with_extra_over_provisioning_is_a_variant_not_another_test() {
    // Issue 14: the 25 % OP run was "#2" under "not the same test"; the reviews show it
    // beside the default run of the same drive.
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "consistency" && d.contains("nvme"))
        .unwrap();
    let plain = open_bundle(dir).unwrap();
    let mut op = plain.clone();
    op.config_hash = "0".repeat(64);
    op.knobs["op_percent"] = serde_json::json!(25.0);
    let mut longer = plain.clone();
    longer.config_hash = "1".repeat(64);
    longer.knobs["duration_ns"] = serde_json::json!(7_200_000_000_000u64);
    let runs = vec![
        DriveRun::new(None, plain),
        DriveRun::new(None, op),
        DriveRun::new(None, longer),
    ];
    let r = bundle_report(&runs);
    assert!(r.groups[0].ends_with(" · default"), "{:?}", r.groups);
    assert!(r.groups[1].ends_with(" · 25 % OP"), "{:?}", r.groups);
    // The longer run is another test, under the drive's own name.
    assert_eq!(
        format!("{} · default", r.groups[2]),
        r.groups[0],
        "{:?}",
        r.groups
    );
    let section = r
        .sections
        .iter()
        .find(|s| s.title.contains("consistency") || s.title.contains("Consistency"))
        .unwrap();
    let texts: Vec<String> = section
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Warning(t) => Some(format!("warning: {t}")),
            Block::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let not_same: Vec<&String> = texts
        .iter()
        .filter(|t| t.contains("Not the same test"))
        .collect();
    // Only the longer run is another test.
    assert_eq!(not_same.len(), 1, "{texts:?}");
    assert!(not_same[0].contains("duration_ns") && !not_same[0].contains("op_percent"));
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Variants of one test") && t.contains("25 % OP")),
        "{texts:?}"
    );
}

#[test]
fn failed_ios_of_a_consistency_run_are_charted_each_second() {
    // Issue 24: a device failing for some seconds mid-run; the engine counts the failed
    // I/Os of each interval. Without any, no chart.
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, _)| s == "consistency")
        .unwrap();
    let plain = open_bundle(dir).unwrap();
    let report = bundle_report(&[DriveRun::new(None, plain.clone())]);
    assert!(!ids(&report).contains("consistency-errors"));
    let mut failing = plain;
    let step = failing
        .steps
        .iter_mut()
        .find(|s| s.params.get("continuous").is_some() || s.params.get("round").is_some())
        .unwrap();
    let records = &mut step.run.as_mut().unwrap().series.records;
    for (i, n) in [(2, 5u64), (3, 1)] {
        let mut r = records.get(i).unwrap();
        r.write.errors = Some(n);
        r.all.errors = Some(n);
        records.set(i, r);
    }
    let report = bundle_report(&[DriveRun::new(None, failing)]);
    let charts = report.charts();
    let c = charts
        .iter()
        .find(|c| c.id == "consistency-errors")
        .expect("a chart of the failed I/Os");
    assert_eq!(c.series.len(), 1);
    assert!(
        c.callouts[0].ends_with(": 6 failed I/Os in 2 s"),
        "{:?}",
        c.callouts
    );
}

#[test]
fn short_runs_are_marked_as_demonstrations_on_every_chart_and_table() {
    let (report, _) = report_of(|_, _| true);
    let mut charts = 0;
    for sec in report.sections.iter().filter(|s| s.title != "Runs") {
        for b in &sec.blocks {
            match b {
                Block::Chart(c) => {
                    charts += 1;
                    let sub = c.subtitle.as_deref().unwrap_or("");
                    assert!(sub.contains("--short demonstration"), "{}: {sub}", c.id);
                }
                Block::Table(t) => {
                    assert!(t.caption.contains("--short demonstration"), "{}", t.caption)
                }
                Block::Tiles(t) => {
                    assert!(t.title.contains("--short demonstration"), "{}", t.title)
                }
                _ => {}
            }
        }
    }
    assert!(charts > 10);
}

#[test]
fn the_linear_chart_is_scaled_to_the_steady_state_and_says_the_burst_is_clipped() {
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "consistency" && d.contains("nvme"))
        .unwrap();
    let mut doc = open_bundle(dir).unwrap();
    let a = &mut doc.summary.as_mut().unwrap().analysis;
    let mut x = vec![50_000.0; 20];
    x.extend(vec![5_000.0; 200]);
    x[100] = 6_000.0;
    a["iops_per_s"] = serde_json::json!(x);
    a["burst"] = serde_json::json!({"at_s": 20, "burst_iops": 50_000.0, "steady_iops": 5_000.0});
    let r = bundle_report(&[DriveRun::new(None, doc)]);
    let lin = r
        .charts()
        .into_iter()
        .find(|c| c.id == "consistency-linear")
        .unwrap();
    assert_eq!(lin.y.max, Some(6_300.0));
    assert!(
        lin.notes
            .iter()
            .any(|n| n.contains("000 IOPS, the first 20 s) is clipped")),
        "{:?}",
        lin.notes
    );
}

#[test]
fn the_zoom_starts_where_the_reader_says() {
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "consistency" && d.contains("nvme"))
        .unwrap();
    let runs = vec![DriveRun::new(None, open_bundle(dir).unwrap())];
    let zoom = |opts: &ReportOptions| {
        bundle_report_with(&runs, opts)
            .charts()
            .into_iter()
            .find(|c| c.id == "consistency-zoom")
            .unwrap()
            .x
            .min
    };
    let default = zoom(&ReportOptions::default());
    assert_ne!(default, Some(1.0));
    assert_eq!(
        zoom(&ReportOptions {
            zoom_from_s: Some(1)
        }),
        Some(1.0)
    );
    // Past the end of the test: the default.
    assert_eq!(
        zoom(&ReportOptions {
            zoom_from_s: Some(10_000)
        }),
        default
    );
}

#[test]
fn quick_bars_carry_their_values() {
    let (report, _) = report_of(|s, d| s == "quick" && d.contains("nvme"));
    let read = report
        .charts()
        .into_iter()
        .find(|c| c.id == "quick-read")
        .unwrap();
    assert!(read.series.iter().all(|s| s.value_labels));
    let svg = drivelab_report::render_svg(
        read,
        &drivelab_report::GroupPalette::new(report.groups.clone()),
    )
    .unwrap();
    let values = svg.matches("dl-value").count();
    let bars: usize = read.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(values, bars, "one value per bar");
}

/// The number after `attr="` at the first `tag` in `svg`.
fn attr_after(svg: &str, tag: &str, attr: &str) -> f64 {
    let at = svg.find(tag).unwrap_or_else(|| panic!("no {tag}"));
    let rest = &svg[at..];
    let v = &rest[rest.find(&format!("{attr}=\"")).unwrap() + attr.len() + 2..];
    v[..v.find('"').unwrap()].parse().unwrap()
}

#[test]
fn callouts_cover_no_data_and_the_last_second_is_not_clipped() {
    let (report, _) = report_of(|s, d| s == "consistency" && d.contains("nvme"));
    let palette = drivelab_report::GroupPalette::new(report.groups.clone());
    let charts = report.charts();
    let zoom = charts.iter().find(|c| c.id == "consistency-zoom").unwrap();
    assert!(!zoom.callouts.is_empty());
    let svg = drivelab_report::render_svg(zoom, &palette).unwrap();
    // The plot's clip rectangle starts below the callout box.
    let plot_top = attr_after(&svg, "<clipPath", "y");
    let box_y = attr_after(&svg, "dl-callout", "y");
    let box_h = attr_after(&svg, "dl-callout", "height");
    assert!(
        box_y + box_h <= plot_top,
        "callout {box_y}+{box_h} vs plot top {plot_top}"
    );
    // The time axes reach past the last second.
    for id in ["consistency-log", "consistency-linear"] {
        let c = charts.iter().find(|c| c.id == id).unwrap();
        let last = c.series[0].points.last().unwrap().0;
        assert!(
            c.x.max.unwrap() > last,
            "{id}: axis ends at {:?}, last second {last}",
            c.x.max
        );
    }
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

/// Every suite's saved analysis is its suite's type, field for field: read as the type
/// and written again, it is the same JSON (the bundle's bytes do not change), so the
/// report's field reads see everything the suite saved.
#[test]
fn every_suites_analysis_reads_back_as_its_type_unchanged() {
    use drivelab_suites::SuiteKind;
    fn again<A: serde::de::DeserializeOwned + serde::Serialize>(
        v: &serde_json::Value,
    ) -> serde_json::Value {
        let a: A = serde_json::from_value(v.clone()).unwrap();
        serde_json::to_value(a).unwrap()
    }
    let (_, runs) = report_of(|_, _| true);
    let mut kinds = BTreeSet::new();
    for r in &runs {
        let mut v = r.doc.summary.as_ref().unwrap().analysis.clone();
        // Added beside every suite's own analysis by the runner.
        v.as_object_mut().unwrap().remove("telemetry");
        let back = match r.doc.suite {
            SuiteKind::Quick => again::<drivelab_suites::quick::Analysis>(&v),
            SuiteKind::Peak => again::<drivelab_suites::peak::Analysis>(&v),
            SuiteKind::Consistency => {
                again::<drivelab_suites::consistency::ConsistencyAnalysis>(&v)
            }
            SuiteKind::Seqfill => again::<drivelab_suites::seqfill::SeqFillAnalysis>(&v),
            SuiteKind::Iometer => again::<drivelab_suites::iometer::Analysis>(&v),
            SuiteKind::Mixed => again::<drivelab_suites::mixed::Analysis>(&v),
            SuiteKind::Replay => again::<drivelab_suites::replay::ReplayAnalysis>(&v),
            SuiteKind::Powerloss => again::<drivelab_suites::powerloss::Analysis>(&v),
            SuiteKind::Fio => continue,
        };
        assert_eq!(back, v, "{}", r.doc.suite);
        kinds.insert(r.doc.suite.name());
    }
    assert_eq!(kinds.len(), 7, "{kinds:?}");
}

/// The quick bundle of the first drive, read.
fn quick_doc() -> drivelab_suites::RunDoc {
    let (dir, _, _) = common::bundles::all_bundles()
        .iter()
        .find(|(_, s, d)| s == "quick" && d.contains("nvme"))
        .unwrap();
    open_bundle(dir).unwrap()
}

fn meta<'r>(r: &'r Report, key: &str) -> &'r str {
    &r.meta.iter().find(|(k, _)| k == key).unwrap().1
}

#[test]
fn bundles_given_one_name_are_one_drive_with_their_runs_apart() {
    // `report q1 q2 --label vda --label vda`: one drive, one colour and toggle, and
    // each bundle its own series in it.
    let doc = quick_doc();
    let name = || Some("vda".to_string());
    let runs = vec![
        DriveRun::new(name(), doc.clone()),
        DriveRun::new(name(), doc),
    ];
    let r = bundle_report(&runs);
    assert_eq!(r.groups, vec!["vda".to_string()]);
    assert_eq!(meta(&r, "Drives"), "1");
    assert_eq!(meta(&r, "Bundles"), "2");
    let read = r
        .charts()
        .into_iter()
        .find(|c| c.id == "quick-read")
        .unwrap();
    let names: Vec<&str> = read.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["vda", "vda #2"]);
    assert!(read.series.iter().all(|s| s.group == "vda"));
}

#[test]
fn runs_over_different_connections_say_their_connection_in_every_label() {
    use drivelab_engine::target::identity::DeviceIdentity;
    // The lab's two disks, one over USB UAS and one over bulk-only transport: their
    // legends must show the contrast, not two device paths.
    let over = |path: &str, transport: &str| {
        let mut d = quick_doc();
        d.target_arg = Some(path.into());
        d.target.model = Some("QEMU HARDDISK".into());
        let mut id = DeviceIdentity::default();
        id.transport = transport.into();
        d.target.device = Some(id);
        d
    };
    let runs = vec![
        DriveRun::new(None, over("/dev/sdb", "usb-uas")),
        DriveRun::new(None, over("/dev/sdc", "usb-bot")),
    ];
    let r = bundle_report(&runs);
    assert_eq!(
        r.groups,
        [
            "QEMU HARDDISK (/dev/sdb) · USB, UAS",
            "QEMU HARDDISK (/dev/sdc) · USB, BOT"
        ]
    );
    // Named by the reader: the names stay the drives, the legends still tell them apart.
    let runs = vec![
        DriveRun::new(Some("lab".into()), over("/dev/sdb", "usb-uas")),
        DriveRun::new(Some("lab".into()), over("/dev/sdc", "usb-bot")),
    ];
    let r = bundle_report(&runs);
    assert_eq!(r.groups, ["lab"]);
    let read = r
        .charts()
        .into_iter()
        .find(|c| c.id == "quick-read")
        .unwrap();
    let names: Vec<&str> = read.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["lab · USB, UAS", "lab · USB, BOT"]);
    // The same connection everywhere (or none known): labels stay as they were.
    let runs = vec![DriveRun::new(None, over("/dev/sdb", "usb-uas"))];
    assert_eq!(bundle_report(&runs).groups, ["QEMU HARDDISK (/dev/sdb)"]);
}

#[test]
fn every_suites_charts_and_tables_put_a_named_drives_runs_in_its_one_group() {
    use drivelab_report::Mark;
    // Every suite's bundle of the first drive, twice, all named "vda".
    let runs: Vec<DriveRun> = common::bundles::all_bundles()
        .iter()
        .filter(|(_, _, d)| d.contains("nvme"))
        .flat_map(|(dir, _, _)| {
            let doc = open_bundle(dir).unwrap();
            [
                DriveRun::new(Some("vda".into()), doc.clone()),
                DriveRun::new(Some("vda".into()), doc),
            ]
        })
        .collect();
    let r = bundle_report(&runs);
    assert_eq!(r.groups, ["vda"]);
    let mut charts = 0;
    for c in r.charts() {
        charts += 1;
        for s in &c.series {
            assert_eq!(s.group, "vda", "{}: series {}", c.id, s.name);
        }
        for m in &c.marks {
            let g = match m {
                Mark::Point { group, .. }
                | Mark::VLine { group, .. }
                | Mark::Ticks { group, .. }
                | Mark::XRange { group, .. } => group.as_deref(),
                Mark::HLine { .. } => None,
            };
            assert!(matches!(g, None | Some("vda")), "{}: mark {g:?}", c.id);
        }
    }
    assert!(charts > 20, "{charts}");
    for b in r.sections.iter().flat_map(|s| &s.blocks) {
        let g = match b {
            Block::Table(t) => t.rows.iter().map(|r| r.group.clone()).collect(),
            Block::Tiles(t) => vec![t.group.clone()],
            _ => Vec::new(),
        };
        assert!(
            g.iter().all(|g| matches!(g.as_deref(), None | Some("vda"))),
            "{g:?}"
        );
    }
}

/// The `d` attribute of the first `<path>` with `data-kind="{kind}"` and
/// `data-series="{series}"`, and its `data-n`.
fn path_of(svg: &str, kind: &str, series: &str) -> Option<(String, usize)> {
    let key = format!(r#"data-series="{series}" data-kind="{kind}" data-n=""#);
    let at = svg.find(&key)? + key.len();
    let rest = &svg[at..];
    let n: usize = rest[..rest.find('"')?].parse().ok()?;
    let d_at = rest.find(r#" d=""#)? + 4;
    let d = &rest[d_at..];
    Some((d[..d.find('"')?].to_string(), n))
}

#[test]
fn queue_depth_curves_mark_every_measured_point_with_the_95_percent_line_and_latency() {
    let (report, runs) = report_of(|s, _| s == "peak");
    let palette = report.palette();
    for r in &runs {
        let a: drivelab_suites::peak::Analysis = r
            .doc
            .summary
            .as_ref()
            .unwrap()
            .analysis_as()
            .expect("a peak analysis");
        for w in &a.sweeps {
            let n = w.sweep.curve.len();
            assert!(n > 1, "{}", w.label);
            let id = format!("peak-{}-throughput", w.workload);
            let thr = report.charts().into_iter().find(|c| c.id == id).unwrap();
            let svg = drivelab_report::render_svg(thr, &palette).unwrap();
            let (d, drawn) = path_of(&svg, "markers", &r.label).expect("markers");
            // One mark per measured queue depth: each mark is one closed shape.
            assert_eq!(drawn, n, "{id} {}", r.label);
            assert_eq!(d.matches('z').count(), n, "{id}: {d}");
            let (_, on_line) = path_of(&svg, "line", &r.label).unwrap();
            assert_eq!(on_line, n);
            // The 95 % line the knee was chosen against.
            let t = w.sweep.knee.as_ref().unwrap().threshold;
            assert!(thr
                .marks
                .iter()
                .any(|m| matches!(m, Mark::HLine { y, .. } if *y == t)));
            // Latency against queue depth, marked the same way.
            let id = format!("peak-{}-latency", w.workload);
            let lat = report.charts().into_iter().find(|c| c.id == id).unwrap();
            let svg = drivelab_report::render_svg(lat, &palette).unwrap();
            let p99 = w
                .sweep
                .curve
                .iter()
                .filter(|p| p.lat_p99_us.is_some())
                .count();
            let (_, drawn) = path_of(&svg, "markers", &format!("{} p99", r.label)).unwrap();
            assert_eq!(drawn, p99, "{id}");
        }
    }
}

/// The peak table, its caption, the section's text and the chart's line say what the
/// knee is measured against: the plateau the analysis computes, not the best point (the
/// review found "≥ 95 % of the best" over a knee at 93 % of the best).
#[test]
fn the_peak_knee_is_described_as_the_analysis_computes_it() {
    use drivelab_analysis::qd::{KNEE_RULE, THRESHOLD_LABEL};
    let (report, runs) = report_of(|s, _| s == "peak");
    let html = report.render().unwrap();
    assert!(
        html.contains(&format!("Selected point per workload: {KNEE_RULE}")),
        "caption"
    );
    assert!(html.contains("Share of plateau"));
    assert!(
        !html.contains("of the best throughput"),
        "an old wording is left"
    );
    assert!(!html.contains("Share of best"));
    for r in &runs {
        let a: drivelab_suites::peak::Analysis =
            r.doc.summary.as_ref().unwrap().analysis_as().unwrap();
        for w in &a.sweeps {
            let k = w.sweep.knee.as_ref().unwrap();
            assert!(k.plateau_throughput > 0.0);
            // The line is drawn at the threshold and named after it.
            let id = format!("peak-{}-throughput", w.workload);
            let thr = report.charts().into_iter().find(|c| c.id == id).unwrap();
            assert!(thr.marks.iter().any(|m| matches!(m,
                Mark::HLine { y, label: Some(l) }
                    if (*y - 0.95 * k.plateau_throughput).abs() < 1e-6 * y.abs().max(1.0)
                        && l.starts_with(THRESHOLD_LABEL))));
            // The table's share is of the plateau, as the threshold is.
            let share = format!("{:.1}", 100.0 * k.throughput / k.plateau_throughput);
            assert!(
                html.contains(&format!(">{share}<")),
                "{}: share {share} of the plateau not in the table",
                w.label
            );
        }
    }
}
