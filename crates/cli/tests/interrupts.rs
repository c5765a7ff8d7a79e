//! A run's test file under interruptions and contention: every ending signal (Ctrl-C,
//! SIGTERM, SIGHUP from a closed terminal, SIGQUIT) drains, writes the partial result
//! and removes the test file; a second run on the same file is refused while the first
//! holds it; and a marker left by a killed run never makes a user's content drivelab's.
//! Each test waits for an event (the file locked, the marker written), never for a time.

mod common;

use common::*;
use std::process::{Child, Stdio};

/// `drivelab io` writing at random to a new test file of 8 MiB in `dir` for up to a
/// minute, its result document to `out.json`.
fn long_write(dir: &std::path::Path, extra: &[&str]) -> Child {
    drivelab()
        .args(["io", "--rw", "randwrite", "--size", "8M", "--runtime", "60"])
        .args(["--json", "out.json"])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The run has started writing: the file is locked and its marker says so.
fn wait_for_writes(file: &std::path::Path) {
    wait_until("the run to lock its test file", || locked_by_a_run(file));
    wait_until("the run to start writing", || {
        marker_text(file).is_some_and(|m| m.contains("writing=1"))
    });
}

#[test]
fn every_ending_signal_drains_writes_the_result_and_removes_the_test_file() {
    for sig in ["INT", "TERM", "HUP", "QUIT"] {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let file = d.path().join("drivelab.test");
        let child = long_write(d.path(), &[]);
        wait_for_writes(&file);
        signal(child.id(), sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "SIG{sig}: {}", stderr(&out));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap())
                .unwrap_or_else(|e| panic!("SIG{sig}: out.json is not a document: {e}"));
        assert_eq!(doc["status"], "interrupted", "SIG{sig}");
        assert!(!file.exists(), "SIG{sig} left the test file");
    }
}

#[test]
fn a_second_run_on_the_same_test_file_is_refused_while_the_first_runs() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("drivelab.test");
    let first = long_write(d.path(), &[]);
    wait_for_writes(&file);
    for args in [
        vec!["io", "--rw", "randwrite", "--size", "8M", "--runtime", "1"],
        vec!["io", "--rw", "randread", "--runtime", "1"],
    ] {
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("in use by another drivelab run"),
            "{}",
            stderr(&o)
        );
    }
    signal(first.id(), "INT");
    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!file.exists());
}

#[test]
fn a_killed_runs_marker_does_not_adopt_a_users_copy() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("drivelab.test");
    let mut child = long_write(d.path(), &[]);
    wait_for_writes(&file);
    child.kill().unwrap(); // SIGKILL: no clean-up, the marker still says "writing"
    child.wait().unwrap();
    assert!(marker_text(&file).unwrap().contains("writing=1"));
    // A user's data of the same size copied over it (in place: same inode, same xattr).
    let user: Vec<u8> = (0..8u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(d.path().join("user.bin"), &user).unwrap();
    let cp = std::process::Command::new("cp")
        .arg(d.path().join("user.bin"))
        .arg(&file)
        .status()
        .unwrap();
    assert!(cp.success());
    let o = run_in(
        d.path(),
        &["io", "--rw", "randwrite", "--size", "8M", "--runtime", "1"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        user,
        "the user's data is intact"
    );
}

/// The run is writing, and some of its data is in the file (a sector stamped with its
/// own offset past the first).
fn wait_for_written_data(file: &std::path::Path) {
    wait_for_writes(file);
    wait_until("the run's first writes", || {
        std::fs::read(file).is_ok_and(|data| {
            data.chunks(512)
                .enumerate()
                .any(|(i, s)| i > 0 && stamp(s).0 == i as u64 * 512)
        })
    });
}

/// The red team's copies: a disk image of mostly zeros (data only in sectors between
/// any sampling), one byte value throughout, and zeros alone.
fn users_copies() -> Vec<(&'static str, Vec<u8>)> {
    let mut image = vec![0u8; 8 << 20];
    for at in [1024usize, 4096 + 512 * 3, (5 << 20) + 512 * 7] {
        image[at..at + 16].copy_from_slice(b"user's own bytes");
    }
    vec![
        ("mostly zeros", image),
        ("uniform", vec![0xA5; 8 << 20]),
        ("zeros", vec![0; 8 << 20]),
    ]
}

#[test]
fn a_killed_runs_marker_adopts_no_mostly_zero_or_uniform_copy() {
    for (what, user) in users_copies() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let file = d.path().join("drivelab.test");
        let mut child = long_write(d.path(), &[]);
        wait_for_written_data(&file);
        child.kill().unwrap(); // SIGKILL: the marker still says "writing"
        child.wait().unwrap();
        // Copied in place (cp keeps the inode and the xattr).
        std::fs::write(d.path().join("user.img"), &user).unwrap();
        let cp = std::process::Command::new("cp")
            .args(["--sparse=never"])
            .arg(d.path().join("user.img"))
            .arg(&file)
            .status()
            .unwrap();
        assert!(cp.success());
        assert!(marker_text(&file).unwrap().contains("writing=1"));
        let o = run_in(
            d.path(),
            &[
                "io",
                "--rw",
                "randwrite",
                "--size",
                "8M",
                "--runtime",
                "0.3s",
            ],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains("--overwrite"), "{e}");
        // A run that only reads leaves it, as it leaves any user's file.
        let read = [
            "io",
            "--rw",
            "randread",
            "--runtime",
            "0.3s",
            "--read-holes",
        ];
        let o = run_in(d.path(), &read);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert_eq!(std::fs::read(&file).unwrap(), user, "{what}: not intact");
    }
}

#[test]
fn a_killed_runs_own_test_file_is_read_but_not_removed_by_a_reading_run() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("drivelab.test");
    let mut child = long_write(d.path(), &[]);
    wait_for_written_data(&file);
    child.kill().unwrap();
    child.wait().unwrap();
    let before = std::fs::read(&file).unwrap();
    let read = [
        "io",
        "--rw",
        "randread",
        "--runtime",
        "0.3s",
        "--read-holes",
    ];
    let o = run_in(d.path(), &read);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&file).unwrap(), before, "written or removed");
}

#[test]
fn a_killed_runs_own_test_file_is_still_taken_back() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("drivelab.test");
    let mut child = long_write(d.path(), &[]);
    wait_for_written_data(&file);
    child.kill().unwrap();
    child.wait().unwrap();
    // Its content is drivelab's own: the next run writes it without --overwrite, and,
    // as nobody asked to keep it, removes it at the end; with --keep it stays.
    let o = run_in(
        d.path(),
        &[
            "io",
            "--rw",
            "randwrite",
            "--size",
            "8M",
            "--runtime",
            "1",
            "--keep",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(file.exists(), "--keep keeps the file taken back");
    let _ = std::fs::remove_file(d.path().join("out.json"));
    let mut child = long_write(d.path(), &[]);
    wait_for_written_data(&file);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = run_in(
        d.path(),
        &["io", "--rw", "randwrite", "--size", "8M", "--runtime", "1"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !file.exists(),
        "the test file a killed run left is removed at the end"
    );
}
