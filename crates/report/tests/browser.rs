//! Opens the sample report (every chart kind, three drives) in headless
//! Chromium and checks it through the DevTools protocol: no console errors or
//! exceptions, no network request other than the file itself, every chart
//! present with data, the drive toggle hides and shows a group everywhere.
//! Saves screenshots under target/test-artifacts/.
//!
//! Why DevTools and not `--dump-dom`: the protocol reports every request the
//! page makes (Network.requestWillBeSent, even ones a CSP blocks), every
//! console message and exception, and lets the test click a toggle and read
//! computed styles — a DOM dump can show none of these.

mod common;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[test]
fn report_works_offline_in_headless_chromium() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let report = common::sample::full_report(3, 3600);
    let n_charts = report.charts().len();
    let html_path = tmp.path().join("report.html");
    report.write(&html_path).unwrap();
    let artefacts = common::chromium::artefact_dir();
    std::fs::copy(&html_path, artefacts.join("browser-report.html")).unwrap();
    let run = common::chromium::run_page(&html_path, common::chromium::CHECK_JS, "browser-report");
    let r = run.check;
    assert_eq!(
        run.requests,
        vec![run.url.clone()],
        "the report made network requests besides loading itself"
    );
    assert!(run.errors.is_empty(), "console errors: {:#?}", run.errors);

    assert_eq!(r["charts"].as_u64(), Some(n_charts as u64), "{r}");
    let ids: Vec<&str> = r["chartIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let want: Vec<&str> = report.charts().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, want);
    assert_eq!(r["empty"], json!([]), "charts without drawn data");
    assert!(r["marks"].as_u64().unwrap() > 3 * 3600 * 3, "{r}");
    assert_eq!(r["barShown"], json!(true), "toggle bar not shown");
    assert_eq!(r["buttons"], json!(3));
    let g1 = r["g1Total"].as_u64().unwrap();
    assert!(g1 >= n_charts as u64, "{r}");
    assert_eq!(r["g1Before"].as_u64(), Some(g1), "{r}");
    assert_eq!(r["g1BlocksBefore"].as_u64(), Some(2), "{r}"); // its tile table and its score row
    assert_eq!(r["g1Hidden"], json!(0), "toggle did not hide group 1: {r}");
    assert_eq!(r["g1MarksHidden"], json!(0), "{r}");
    assert_eq!(r["g1BlocksHidden"], json!(0), "{r}");
    assert_eq!(
        r["g0WhileHidden"], r["g0Before"],
        "other groups must stay: {r}"
    );
    assert_eq!(r["pressedHidden"], json!("false"));
    assert_eq!(
        r["g1After"].as_u64(),
        Some(g1),
        "toggle did not show group 1 again: {r}"
    );
    assert_eq!(r["pressedAfter"], json!("true"));
    assert_eq!(
        r["g1AfterShowAll"].as_u64(),
        Some(g1),
        "show-all failed: {r}"
    );

    assert!(
        started.elapsed() < Duration::from_secs(30),
        "browser test took {:?}",
        started.elapsed()
    );
}
