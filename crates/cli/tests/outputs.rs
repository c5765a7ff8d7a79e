//! drivelab's own outputs never destroy data: `--json`, `--csv`, `-o`, `--png` and
//! `--out` refuse a results database, a bundle's file, the other output of the same
//! command and a file drivelab did not write (unless `--force`), and replace only
//! their own earlier outputs, whole or not at all.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

fn refused(o: &Output, want: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "not one line: {e}");
    assert!(e.contains(want), "{e:?} lacks {want:?}");
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// A short simulated quick suite's bundle in `dir/name`.
fn bundle(dir: &Path, name: &str) {
    ok(&run_in(
        dir,
        &[
            "run",
            "quick",
            "--short",
            "--no-db",
            "sim:nvme-tlc,capacity=4G",
            "--out",
            name,
        ],
    ));
}

const NULL_RUN: &[&str] = &["io", "null", "--runtime", "50ms"];

fn io_with(dir: &Path, extra: &[&str]) -> Output {
    let mut a = NULL_RUN.to_vec();
    a.extend_from_slice(extra);
    run_in(dir, &a)
}

#[test]
fn result_files_replace_only_drivelab_outputs() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("hostname"), "my-host\n").unwrap();
    refused(
        &io_with(p, &["--json", "hostname"]),
        "not written by drivelab",
    );
    refused(&io_with(p, &["--csv", "hostname"]), "--force");
    assert_eq!(
        std::fs::read_to_string(p.join("hostname")).unwrap(),
        "my-host\n"
    );
    // The same file for both outputs would lose one of them.
    refused(
        &io_with(p, &["--json", "a", "--csv", "a"]),
        "also the file of --json",
    );
    assert!(!p.join("a").exists());
    // drivelab's own earlier outputs are replaced: a second run of the same command.
    for _ in 0..2 {
        ok(&io_with(p, &["--json", "r.json", "--csv", "s.csv"]));
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.join("r.json")).unwrap()).unwrap();
    assert_eq!(doc["tool"]["name"], "drivelab");
    // With --force the user's file is replaced.
    ok(&io_with(p, &["--json", "hostname", "--force"]));
    assert!(std::fs::read_to_string(p.join("hostname"))
        .unwrap()
        .contains("drivelab"));
    // No temporary file is left beside the outputs.
    let mut names: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["hostname", "r.json", "s.csv"]);
}

#[test]
fn a_fifo_or_a_device_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // No reader: opening it for writing would block for ever.
    refused(
        &io_with(d.path(), &["--json", "fifo", "--force"]),
        "is a FIFO",
    );
    refused(
        &io_with(d.path(), &["--csv", "/dev/null"]),
        "character device",
    );
}

#[test]
fn a_report_or_export_never_replaces_a_bundle_or_a_database() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    let run_json = std::fs::read(p.join("b/run.json")).unwrap();
    refused(
        &run_in(p, &["report", "b", "-o", "b/run.json"]),
        "result bundle",
    );
    refused(
        &run_in(p, &["report", "b", "-o", "b/summary.txt"]),
        "result bundle",
    );
    assert_eq!(std::fs::read(p.join("b/run.json")).unwrap(), run_json);
    ok(&run_in(p, &["db", "record", "b", "--db", "res.sqlite"]));
    let db = std::fs::read(p.join("res.sqlite")).unwrap();
    refused(
        &run_in(
            p,
            &["db", "export", "--db", "res.sqlite", "-o", "res.sqlite"],
        ),
        "SQLite database",
    );
    refused(
        &run_in(p, &["report", "b", "-o", "res.sqlite"]),
        "SQLite database",
    );
    assert_eq!(std::fs::read(p.join("res.sqlite")).unwrap(), db);
    // Their own earlier files are replaced, charts included.
    for _ in 0..2 {
        ok(&run_in(
            p,
            &["db", "export", "--db", "res.sqlite", "-o", "runs.json"],
        ));
        ok(&run_in(
            p,
            &[
                "report", "b", "-o", "r.html", "--png", "charts", "--svg", "charts",
            ],
        ));
    }
    // A user's file that has a chart's name is not.
    let png = std::fs::read_dir(p.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| f.extension().is_some_and(|x| x == "png"))
        .unwrap();
    std::fs::write(&png, "mine").unwrap();
    refused(
        &run_in(p, &["report", "b", "-o", "r.html", "--png", "charts"]),
        "not written by drivelab",
    );
    assert_eq!(std::fs::read_to_string(&png).unwrap(), "mine");
}

#[test]
fn a_bundle_takes_only_a_new_or_empty_directory() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir(p.join("mine")).unwrap();
    std::fs::write(p.join("mine/summary.txt"), "my summary").unwrap();
    for out in ["mine", "."] {
        let o = run_in(
            p,
            &["run", "quick", "--short", "--no-db", "null", "--out", out],
        );
        refused(&o, "not empty");
    }
    assert_eq!(
        std::fs::read_to_string(p.join("mine/summary.txt")).unwrap(),
        "my summary"
    );
    std::fs::create_dir(p.join("empty")).unwrap();
    bundle(p, "empty");
    assert!(p.join("empty/run.json").exists());
}
