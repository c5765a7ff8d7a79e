//! `drivelab run`: every suite end to end with --short on a test file, a simulated drive
//! and a loop device; bad suite flags are one line with exit code 2.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Every methodology `drivelab run` has.
const SUITES: [&str; 6] = [
    "quick",
    "peak",
    "consistency",
    "seqfill",
    "iometer",
    "mixed",
];

/// Extra flags that keep each suite to a few seconds on a real file.
fn quick_flags(suite: &str) -> Vec<&'static str> {
    match suite {
        "consistency" => vec!["--duration", "3s", "--round", "1s", "--window", "2s"],
        "quick" => vec!["--runs", "1"],
        _ => vec![],
    }
}

/// Check a finished bundle and return its run.json.
fn check_bundle(dir: &Path, suite: &str) -> Value {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(doc["suite"], suite);
    assert_eq!(doc["status"], "complete", "{suite}");
    assert_eq!(
        doc["knobs"]["short"], true,
        "the chosen values are recorded"
    );
    let hash = doc["config_hash"].as_str().unwrap();
    assert!(hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()));
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len() as u64, doc["planned_steps"].as_u64().unwrap());
    for s in steps {
        if s["status"] == "complete" {
            let run = &s["run"];
            assert!(!run["series"]["records"].as_array().unwrap().is_empty());
            assert!(run["totals"]["all"]["ops"].as_u64().unwrap() > 0);
            assert!(run["histogram"]["read"]["count"].is_u64());
            assert!(s["config"]["bs"].is_array());
        } else {
            assert_eq!(s["status"], "skipped", "{suite}: {}", s["id"]);
        }
    }
    let metrics = doc["summary"]["metrics"].as_array().unwrap();
    assert!(!metrics.is_empty(), "{suite} has headline metrics");
    for m in metrics {
        assert!(m["name"].is_string() && m["value"].is_f64() && m["unit"].is_string());
    }
    // summary.txt holds what the terminal showed: the target first, the caveats last.
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(summary.starts_with("target: "), "{summary}");
    for n in doc["notes"].as_array().unwrap() {
        assert!(summary.contains(n.as_str().unwrap()), "{summary}");
    }
    doc
}

#[test]
fn every_suite_runs_short_on_the_default_test_file() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    for suite in SUITES {
        let out = format!("b-{suite}");
        let mut args = vec!["run", suite, "--short", "--out", &out];
        args.extend(quick_flags(suite));
        let o = run_in(d.path(), &args);
        assert!(o.status.success(), "{suite}: {}", stderr(&o));
        assert!(stdout(&o).contains(&format!("Result bundle: {out}")));
        // Progress only on a terminal: nothing on stderr here.
        assert_eq!(stderr(&o), "", "{suite}");
        let doc = check_bundle(&d.path().join(&out), suite);
        assert_eq!(doc["target"]["kind"], "file");
        assert_eq!(doc["test_file_created"], true);
        assert!(
            !d.path().join("drivelab.test").exists(),
            "{suite}: the test file is removed at the end"
        );
    }
}

#[test]
fn quick_prints_the_four_row_table() {
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &["run", "quick", "sim:nvme-tlc,capacity=4G", "--short"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // What was measured comes first.
    assert_eq!(
        lines[0], "target: sim:nvme-tlc,capacity=4G (simulated, 4 GiB)",
        "{out}"
    );
    let lines = &lines[1..];
    assert!(lines[0].contains("best of 2 runs shown"), "{out}");
    assert!(lines[1].contains("Read MB/s") && lines[1].contains("Write MB/s"));
    for (i, t) in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
        .iter()
        .enumerate()
    {
        assert!(lines[2 + i].starts_with(t), "{out}");
        let nums: Vec<f64> = lines[2 + i]
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(nums.len(), 6, "MB/s, IOPS, µs for read and write: {out}");
    }
    // The default bundle directory: drivelab-results/quick-<UTC time>/.
    let results: Vec<_> = std::fs::read_dir(d.path().join("drivelab-results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].starts_with("quick-") && results[0].ends_with('Z'));
    let doc = check_bundle(
        &d.path().join("drivelab-results").join(&results[0]),
        "quick",
    );
    let m = &doc["summary"]["metrics"][0];
    assert_eq!(m["name"], "SEQ1M Q8T1 read");
    assert_eq!(m["unit"], "MB/s");

    let o = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--show",
            "mean",
            "--preset",
            "realworld",
            "--out",
            "m",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("mean of 2 runs shown"));
    assert_eq!(
        stdout(&o)
            .lines()
            .filter(|l| l.starts_with("SEQ") || l.starts_with("RND"))
            .count(),
        2
    );
}

#[test]
fn every_suite_runs_short_on_a_simulated_drive() {
    let d = tempfile::tempdir().unwrap();
    for suite in SUITES {
        let out = format!("b-{suite}");
        let o = run_in(
            d.path(),
            &[
                "run",
                suite,
                "sim:dramless,capacity=4G",
                "--short",
                "--out",
                &out,
            ],
        );
        assert!(o.status.success(), "{suite}: {}", stderr(&o));
        let doc = check_bundle(&d.path().join(&out), suite);
        assert_eq!(doc["target"]["kind"], "simulated");
    }
}

#[test]
fn suites_write_a_loop_device_only_with_destructive() {
    let lo = Loop::new(96 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let o = run_in(d.path(), &["run", "seqfill", &lo.dev, "--short"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--destructive"), "{}", stderr(&o));
    assert!(
        !d.path().join("drivelab-results").exists(),
        "nothing written"
    );
    let dest = format!("--destructive={}", lo.dev);
    for suite in SUITES {
        let out = format!("b-{suite}");
        let mut args = vec![
            "run",
            suite,
            lo.dev.as_str(),
            "--short",
            dest.as_str(),
            "--out",
            &out,
        ];
        args.extend(quick_flags(suite));
        let o = run_in(d.path(), &args);
        assert!(o.status.success(), "{suite}: {}", stderr(&o));
        let doc = check_bundle(&d.path().join(&out), suite);
        assert_eq!(doc["target"]["kind"], "block_device");
        assert_eq!(doc["target"]["path"], lo.dev.as_str());
    }
}

#[test]
fn an_existing_user_file_needs_overwrite() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = d.path().join("user.bin");
    std::fs::write(&f, vec![0xEEu8; 8 << 20]).unwrap();
    let p = f.to_str().unwrap();
    let o = run_in(d.path(), &["run", "mixed", p, "--short"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), vec![0xEEu8; 8 << 20]);
    let o = run_in(
        d.path(),
        &["run", "mixed", p, "--short", "--overwrite", "--out", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    check_bundle(&d.path().join("b"), "mixed");
    assert!(f.exists(), "a user's file is never removed");
}

/// A suite whose every step reads runs on a user's file, reading only (as `io --rw
/// randread` does); one that writes is refused in one true line naming --overwrite (the
/// review's refusal said the file "is only read" while reading nothing).
#[test]
fn a_user_file_is_read_by_read_only_suites_and_refused_to_writing_ones() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = d.path().join("f1");
    let data: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&f, &data).unwrap();
    let p = f.to_str().unwrap();
    let o = run_in(d.path(), &["run", "quick", p, "--short", "--runs", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("not created by drivelab and this run writes to it"),
        "{err}"
    );
    assert!(
        err.contains("--overwrite") && !err.contains("only read"),
        "{err}"
    );
    let args = [
        "run",
        "peak",
        p,
        "--workloads",
        "4k-randread",
        "--short",
        "--max-qd",
        "2",
    ];
    let o = run_in(d.path(), &[&args[..], &["--out", "r"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = check_bundle(&d.path().join("r"), "peak");
    assert_eq!(doc["target"]["created_by_drivelab"], false);
    assert!(
        std::fs::read(&f).unwrap() == data,
        "the user's file was changed"
    );
}

#[test]
fn bad_suite_flags_give_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        &["run", "peak", "--max-qd", "0"][..],
        &["run", "peak", "--ioengine", "null"],
        &["run", "peak", "--workloads", "8k-nope"],
        &["run", "quick", "--preset", "bogus"],
        &["run", "quick", "--tests", "SEQ1M"],
        &["run", "quick", "--frobnicate"],
        &["run", "consistency", "--op", "150%"],
        &["run", "consistency", "--round", "1500ms"],
        &["run", "consistency", "--duration", "1s", "--round", "2s"],
        &["run", "consistency", "--passes", "50000000"],
        &["run", "consistency", "--passes", "11"],
        &["run", "consistency", "--qd", "40000"],
        &["run", "peak", "--max-qd", "99999999"],
        &["run", "iometer", "--qds", "1,2,70000"],
        &["run", "iometer", "--seq-workers", "5000"],
        &["run", "iometer", "--spec-qd", "4000000000"],
        &["run", "seqfill", "--drop-fraction", "2"],
        &["run", "seqfill", "--interval", "3ms"],
        &["run", "seqfill", "--interval", "300ms"],
        &["run", "peak", "--seq-precondition", "2"],
        &["run", "peak", "--recheck-passes", "33"],
        &["run", "peak", "--recheck-passes", "-1"],
        &["run", "iometer", "--specs", "nope"],
        &["run", "iometer", "--data", "zero"],
        &["run", "mixed", "--step", "0"],
        &["run", "nosuchsuite"],
        &["run"],
        &["run", "--resume", "missing-bundle"],
    ] {
        let o = run_in(d.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("drivelab: "), "{args:?}: {err}");
    }
    assert!(
        std::fs::read_dir(d.path()).unwrap().next().is_none(),
        "nothing created"
    );
}

#[test]
fn the_same_quick_run_on_a_test_file_and_a_loop_device_compares() {
    // The loop device gets a fill step before its reads that the test file does not
    // (drivelab fills a test file anyway): preparation is not the test.
    let lo = Loop::new(96 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let dest = format!("--destructive={}", lo.dev);
    let base = ["run", "quick", "--short", "--runs", "1", "--no-db"];
    let runs: [(&str, Vec<&str>); 3] = [
        ("file", vec![]),
        ("loop", vec![lo.dev.as_str(), dest.as_str()]),
        ("file2", vec!["--runtime", "200ms"]),
    ];
    for (out, extra) in &runs {
        let mut args = base.to_vec();
        args.extend(extra.iter().copied());
        args.extend(["--out", out]);
        let o = run_in(d.path(), &args);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
    }
    let o = run_in(d.path(), &["compare", "file", "loop"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("CONFIG DIFFERS"), "{}", stdout(&o));
    // Runs that do differ are refused, naming the knob and both values.
    let o = run_in(d.path(), &["compare", "file", "file2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("settings differ: runtime_ns 200000000 vs 300000000"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn compare_says_which_runs_are_unfinished() {
    let d = tempfile::tempdir().unwrap();
    for out in ["a", "b"] {
        let o = run_in(
            d.path(),
            &[
                "run",
                "quick",
                "sim:nvme-tlc,capacity=4G",
                "--short",
                "--runs",
                "1",
                "--tests",
                "SEQ1M Q8T1",
                "--no-db",
                "--out",
                out,
            ],
        );
        assert!(o.status.success(), "{out}: {}", stderr(&o));
    }
    // b as a run that was interrupted (its numbers partial).
    let doc = d.path().join("b/run.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    v["status"] = "interrupted".into();
    std::fs::write(&doc, serde_json::to_string(&v).unwrap()).unwrap();
    let o = run_in(d.path(), &["compare", "a", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |k: &str| out.lines().find(|l| l.starts_with(k)).unwrap().to_string();
    assert!(!line("A = ").contains("STATUS"), "{out}");
    assert!(line("B = ").contains("(STATUS INTERRUPTED)"), "{out}");
}
