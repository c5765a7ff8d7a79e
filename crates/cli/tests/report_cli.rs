//! `drivelab report` and `drivelab compare` on bundles made by `drivelab run --short`:
//! files written, one chart file per chart, ratios that match the bundles' numbers,
//! config-hash refusals, and bad input (one line, exit 2, nothing written).

mod report_db_common;

use report_db_common::*;
use serde_json::Value;

fn metric(bundle: &std::path::Path, name: &str) -> f64 {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("run.json")).unwrap()).unwrap();
    doc["summary"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn report_of_several_drives_writes_html_and_one_file_per_chart() {
    let d = tempfile::tempdir().unwrap();
    let q1 = bundle("quick", NVME);
    let q2 = bundle("quick", SATA);
    let c = bundle("consistency", DRAMLESS);
    let p = bundle("peak", NVME);
    let html = d.path().join("r.html");
    let o = run_in(
        d.path(),
        &[
            "report",
            q1.to_str().unwrap(),
            q2.to_str().unwrap(),
            c.to_str().unwrap(),
            p.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
            "--png",
            "png",
            "--svg",
            "svg",
            "--label",
            "Drive A",
            "--label",
            "Drive B",
            "--label",
            "Drive C",
            "--label",
            "Drive A",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("Content-Security-Policy"));
    let charts = text.matches(" class=\"dl-chart\" ").count();
    assert!(charts >= 20, "{charts} charts");
    // Three drives (the peak bundle joins Drive A), one toggle each.
    assert_eq!(text.matches("class=\"dl-tog dl-g").count(), 3);
    for id in [
        "quick-read",
        "consistency-zoom",
        "peak-4k-randread-throughput",
    ] {
        assert!(text.contains(&format!("data-chart=\"{id}\"")), "{id}");
    }
    let count = |dir: &str, ext: &str| {
        std::fs::read_dir(d.path().join(dir))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == ext)
            .count()
    };
    assert_eq!(count("png", "png"), charts);
    assert_eq!(count("svg", "svg"), charts);
    assert!(d.path().join("png/consistency-log.png").exists());
    assert!(
        stdout(&o).contains("3 drive(s), 4 bundle(s)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_report_input_is_one_line_exit_2_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let q = bundle("quick", NVME);
    let q = q.to_str().unwrap();
    let c = bundle("consistency", DRAMLESS);
    let c = c.to_str().unwrap();
    std::fs::create_dir(d.path().join("empty")).unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["report", "missing-dir"], "BUNDLE missing-dir"),
        (vec!["report", "empty"], "not a result bundle directory"),
        (vec!["report", q, "--label", "a", "--label", "b"], "--label"),
        (vec!["report", q, "--label", " "], "--label"),
        (vec!["report", q, "-o", "no/such/dir/r.html"], "-o/--output"),
        (vec!["report", q, "-o", "empty"], "is a directory"),
        (vec!["report", q, "--png", "afile"], "--png"),
        (vec!["report", q, "--svg", "afile"], "--svg"),
        (vec!["report"], "BUNDLE"),
        (vec!["report", q, "--bogus"], "--bogus"),
        (vec!["report", q, "--zoom-from", "1s"], "--zoom-from"),
        (vec!["report", c, "--zoom-from", "1h"], "--zoom-from"),
        (vec!["report", c, "--zoom-from", "soon"], "--zoom-from"),
    ];
    for (args, want) in cases {
        let o = run_in(d.path(), &args);
        assert_usage(&o, want);
        assert!(
            !d.path().join("report.html").exists(),
            "{args:?} wrote a report"
        );
    }
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, vec!["afile", "empty"], "something was written");
}

#[test]
fn compare_gives_values_and_ratios_to_the_first() {
    let d = tempfile::tempdir().unwrap();
    let a = bundle("quick", NVME);
    let b = bundle("quick", SATA);
    let o = run_in(
        d.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("CONFIG DIFFERS"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("SEQ1M Q8T1 read "))
        .unwrap_or_else(|| panic!("{out}"));
    let ratio = metric(&b, "SEQ1M Q8T1 read") / metric(&a, "SEQ1M Q8T1 read");
    assert!(line.ends_with(&format!("{ratio:.2}x")), "{line} vs {ratio}");
    assert!(out.contains("A = drivelab-sim nvme-tlc"), "{out}");
}

#[test]
fn compare_refuses_different_configs_unless_forced_and_then_flags_them() {
    let d = tempfile::tempdir().unwrap();
    let a = bundle("quick", NVME);
    let c = bundle("consistency", DRAMLESS);
    let (a, c) = (a.to_str().unwrap(), c.to_str().unwrap());
    let o = run_in(d.path(), &["compare", a, c]);
    assert_usage(&o, "config hash");
    assert!(stderr(&o).contains("--force"));
    assert!(stdout(&o).is_empty());
    let o = run_in(d.path(), &["compare", a, c, "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Once, with the table: a copy on stderr showed it twice on a terminal.
    assert!(!stderr(&o).contains("WARNING"), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("!!! WARNING"), "{out}");
    assert_eq!(out.matches("WARNING").count(), 1, "{out}");
    assert!(
        out.contains("B = ") && out.contains("<-- CONFIG DIFFERS"),
        "{out}"
    );
}

#[test]
fn bad_compare_input_is_one_line_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let a = bundle("quick", NVME);
    let a = a.to_str().unwrap();
    let db = d.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    assert_usage(&run_in(d.path(), &["compare", a]), "RUN");
    assert_usage(
        &run_in(d.path(), &["compare", a, "nosuchrun", "--db", db]),
        "RUN nosuchrun: neither a result bundle directory nor a run id",
    );
    assert_usage(&run_in(d.path(), &["compare", a, a, "--db", ""]), "--db");
}

/// Issue #22: an imported fio result's 65 000-character job name is cut short in
/// compare's table (it panicked formatting a column that wide).
#[test]
fn compare_cuts_a_huge_job_name_short() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-json.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    doc["jobs"][0]["jobname"] = serde_json::Value::String("j".repeat(65_000));
    std::fs::write(d.path().join("long.json"), doc.to_string()).unwrap();
    for (f, out) in [("long.json", "a"), (src, "b")] {
        let o = run_in(d.path(), &["import", "fio", f, "--out", out]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run_in(d.path(), &["compare", "a", "b", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.lines().all(|l| l.chars().count() < 200), "{table}");
    assert!(table.contains("jjj…"), "{table}");
}

#[test]
fn compare_and_report_take_one_drive_name_per_run() {
    let d = tempfile::tempdir().unwrap();
    let a = bundle("quick", NVME);
    let a = a.to_str().unwrap();
    // Two bundles named alike by the reader are one drive, native runs too.
    let o = run_in(
        d.path(),
        &[
            "report", a, a, "--label", "vda", "--label", "vda", "-o", "r.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 drive(s), 2 bundle(s)"),
        "{}",
        stdout(&o)
    );
    let o = run_in(
        d.path(),
        &["compare", a, a, "--label", "vda", "--label", "vdb"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("A = vda [quick]") && out.contains("B = vdb [quick]"),
        "{out}"
    );
    assert_usage(
        &run_in(d.path(), &["compare", a, a, "--label", "vda"]),
        "--label: given 1 time(s) for 2 run(s)",
    );
    assert_usage(
        &run_in(d.path(), &["compare", a, a, "--label", "x", "--label", " "]),
        "--label ' ': a drive name must not be empty",
    );
}
