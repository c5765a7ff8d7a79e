//! Reports rendered from bundles of the real suites (`--short`, simulated drives),
//! opened in headless Chromium: no console errors, no request but the file itself,
//! every chart present with drawn data, the drive toggles hide and show a drive
//! everywhere. Screenshots: target/test-artifacts/bundle-report*.png.

mod common;

use drivelab_report::bundles::{bundle_report, open_bundle, DriveRun};
use serde_json::{json, Value};

fn check(runs: &[DriveRun], name: &str) -> Value {
    let report = bundle_report(runs);
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("report.html");
    report.write(&html).unwrap();
    std::fs::copy(
        &html,
        common::chromium::artefact_dir().join(format!("{name}.html")),
    )
    .unwrap();
    let run = common::chromium::run_page(&html, common::chromium::CHECK_JS, name);
    assert_eq!(run.requests, vec![run.url.clone()], "network requests");
    assert!(run.errors.is_empty(), "console errors: {:#?}", run.errors);
    let r = run.check;
    let want: Vec<&str> = report.charts().iter().map(|c| c.id.as_str()).collect();
    let got: Vec<&str> = r["chartIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(got, want);
    assert_eq!(r["empty"], json!([]), "charts without drawn data: {r}");
    r
}

#[test]
fn several_drives_in_one_report_work_offline_with_toggles() {
    let runs: Vec<DriveRun> = common::bundles::all_bundles()
        .iter()
        .map(|(dir, _, _)| DriveRun::new(None, open_bundle(dir).unwrap()))
        .collect();
    let r = check(&runs, "bundle-report");
    assert_eq!(r["barShown"], json!(true));
    assert_eq!(r["buttons"], json!(3));
    let g1 = r["g1Total"].as_u64().unwrap();
    assert!(g1 > 10, "{r}");
    assert_eq!(r["g1Before"].as_u64(), Some(g1));
    assert_eq!(r["g1Hidden"], json!(0), "toggle did not hide drive 1: {r}");
    assert_eq!(r["g1MarksHidden"], json!(0), "{r}");
    assert_eq!(r["g1BlocksHidden"], json!(0), "{r}");
    assert_eq!(r["g0WhileHidden"], r["g0Before"], "{r}");
    assert_eq!(r["g1After"].as_u64(), Some(g1), "{r}");
    assert_eq!(r["g1AfterShowAll"].as_u64(), Some(g1), "{r}");
}

#[test]
fn one_drive_with_every_suite_works_offline() {
    let runs: Vec<DriveRun> = common::bundles::all_bundles()
        .iter()
        .filter(|(_, _, drive)| drive.contains("nvme"))
        .map(|(dir, _, _)| DriveRun::new(None, open_bundle(dir).unwrap()))
        .collect();
    // The six review suites and a trace replay.
    assert_eq!(runs.len(), 7);
    let r = check(&runs, "bundle-report-single");
    // One drive: no toggle bar.
    assert_eq!(r["buttons"], json!(0));
}
