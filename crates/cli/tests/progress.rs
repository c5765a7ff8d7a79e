//! `--progress`: plain lines on a non-terminal when asked (runs under nohup or ssh),
//! nothing by default, and a suite's planned duration before it starts.

mod common;
use common::*;

#[test]
fn always_gives_one_plain_line_per_interval_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    // The null target runs in wall time: a 3-second run has finished intervals to show
    // however loaded the machine is.
    let o = run_in(
        dir.path(),
        &["io", "null", "--runtime", "3s", "--progress", "always"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("% of 3 s")).collect();
    assert!(!lines.is_empty(), "no progress line: {err}");
    // One line per interval: no second shown twice.
    let mut secs: Vec<&str> = lines.iter().map(|l| &l[..8]).collect();
    secs.dedup();
    assert_eq!(secs.len(), lines.len(), "{err}");
    assert!(lines.iter().all(|l| l.contains("ETA")), "{err}");
}

#[test]
fn auto_and_never_show_nothing_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["auto", "never"] {
        let o = run_in(
            dir.path(),
            &["io", "null", "--runtime", "1500ms", "--progress", mode],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stderr(&o), "", "--progress {mode}");
    }
}

#[test]
fn a_suite_says_how_long_its_plan_is_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "mixed",
            "sim:nvme-tlc,capacity=8G",
            "--short",
            "--no-db",
            "--progress",
            "always",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with("drivelab: mixed: ") && first.contains(" of timed I/O"),
        "{first}"
    );
    assert!(first.contains("virtual time"), "{first}");
    // Every step, however short, ends with its line in a log.
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::fs::read_dir(dir.path().join("drivelab-results"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
                .join("run.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let steps = doc["steps"].as_array().unwrap().len();
    let done = stderr(&o).lines().filter(|l| l.contains(" done: ")).count();
    assert_eq!(done, steps, "{}", stderr(&o));
    assert!(stderr(&o).contains("IOPS,") && stderr(&o).contains("MiB/s)"));
}

#[test]
fn a_bad_progress_mode_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["io", "null", "--progress", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--progress") && err.contains("always"),
        "{err}"
    );
}
