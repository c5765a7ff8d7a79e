//! A reader that closes the pipe early (`drivelab … | head -1`) ends the output quietly:
//! no error line, the exit code the command would have had anyway.

mod common;
use std::process::Stdio;

/// Run drivelab with its stdout a pipe whose reading end is closed before it writes.
fn with_closed_stdout(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut child = common::drivelab()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn every_writer_to_stdout_stops_quietly_at_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    // A database with a run in it, so that list and export have rows to print.
    let o = common::run_in(
        dir.path(),
        &[
            "run",
            "mixed",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--db",
            db,
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    for args in [
        vec!["db", "list", "--db", db],
        vec!["db", "export", "--db", db],
        vec!["man"],
        vec!["completions", "zsh"],
        vec!["io", "null", "--runtime", "0.05"],
        vec!["io", "null", "--runtime", "0.05", "--output-format", "json"],
        vec!["compare", "b", "b"],
    ] {
        let o = with_closed_stdout(dir.path(), &args);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}
