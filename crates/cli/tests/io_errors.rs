//! Every bad input: one line naming the option, exit 2, nothing written.

mod common;

use common::*;

fn bad(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line, got {err:?}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: {err:?} should mention {needle}"
    );
    assert!(stdout(&o).is_empty(), "{args:?}: nothing on stdout");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "{args:?}: nothing written"
    );
}

#[test]
fn bad_inputs_are_one_line_exit_2_nothing_written() {
    bad(&["io", "--bs", "1000"], "--bs");
    bad(&["io", "--rw", "sideways"], "--rw");
    bad(&["io", "--iodepth", "0"], "--iodepth");
    bad(&["io", "--numjobs", "0"], "--numjobs");
    bad(&["io", "null", "--size", "2T"], "--size");
    bad(&["io", "--offset", "2T", "null"], "--size/--offset");
    bad(&["io", "/nonexistent-dir/file"], "no such file");
    bad(&["io", "/tmp"], "is a directory");
    bad(&["io", "--bssplit", "4k/50:64k/40"], "--bssplit");
    bad(&["io", "--rwmixread", "101"], "--rwmixread");
    bad(&["io", "--bs", "4kk"], "--bs");
    bad(&["io", "--size", "-1"], "--size");
    bad(&["io", "--runtime", "0"], "--runtime");
    bad(&["io", "--spec", "RND4K"], "--spec");
    bad(&["io", "--data", "compress=120"], "--data");
    bad(
        &["io", "--random_distribution", "zoned:50/5"],
        "--random_distribution",
    );
    bad(&["io", "--ioengine", "sync", "--iodepth", "8"], "--iodepth");
    bad(&["io", "null", "--ioengine", "io_uring"], "--ioengine");
    bad(
        &["io", "--spec", "RND4K Q32T1", "--ioengine", "sync"],
        "--spec",
    );
    bad(&["io", "sim:nvme-tlc", "--ioengine", "sync"], "--ioengine");
    bad(&["io", "--log-interval", "1ms", "null"], "--log-interval");
    bad(&["io", "--bogus"], "--bogus");
    // Limits: buffers beyond the memory there is, threads, the deepest ring, 1G blocks.
    bad(
        &["io", "--size", "64M", "--bs", "64M", "--iodepth", "1024"],
        "--bs/--iodepth/--numjobs",
    );
    bad(&["io", "null", "--numjobs", "5000"], "--numjobs");
    bad(&["io", "--iodepth", "40000"], "--iodepth");
    bad(&["io", "null", "--spec", "SEQ3G Q1T1"], "--spec");
    bad(&["io", "null", "--bssplit", "3G/100"], "--bssplit");
    // Output files that cannot be written are found before the run.
    bad(
        &["io", "null", "--json", "/nonexistent-dir/r.json"],
        "--json",
    );
    bad(&["io", "null", "--json", "/proc/r.json"], "--json");
    bad(&["io", "null", "--csv", "/tmp"], "--csv");
    bad(&["io", "--size", "1k", "--json", "r.json"], "--size");
    // --destructive confirms writing one block device; anything else is pointed out.
    bad(
        &["io", "--rw", "write", "--destructive", "/dev/null"],
        "--destructive=/dev/null",
    );
    bad(
        &[
            "io",
            "/dev/no-such-dev",
            "--rw",
            "write",
            "--destructive",
            "/dev/no-such-dev",
        ],
        "is not a block device",
    );
    bad(
        &["io", "/dev/no-such-dev", "--size", "8M"],
        "no such device",
    );
    bad(&["io", "--size", "0"], "--size");
    bad(&["io", "--size", "2M", "--offset", "50%"], "--offset");
    bad(&["io", "null", "--size", "0%"], "--size");
    bad(&["io", "null", "--offset", "101%"], "--offset");
    bad(&["io", "--rw", "write", "--io_size", "1k"], "--io_size");
    bad(
        &["io", "null", "--random_distribution", "zoned:NaN/NaN"],
        "--random_distribution",
    );
    bad(
        &[
            "io",
            "--size",
            "16M",
            "--bs",
            "1M",
            "--random_distribution",
            "zoned:90/1:10/99",
        ],
        "--random_distribution: zone 1",
    );
    // A value that starts with '-' still names its option.
    bad(&["io", "null", "--randseed", "-1"], "--randseed");
    bad(
        &["io", "null", "--percentage_random", "-5"],
        "--percentage_random",
    );
    bad(&["io", "null", "--log-interval", "-1s"], "--log-interval");
    bad(&["io", "null", "--spec", "-RND"], "--spec");
}

#[test]
fn no_permission_is_a_clear_error() {
    // As root every file is readable, so drop to nobody for this check.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("secret.bin");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_drivelab"))
        .args(["io", f.to_str().unwrap(), "--runtime", "1"])
        .output()
        .expect("setpriv (util-linux) is available");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("permission denied"), "{}", stderr(&o));
}

/// Start a random-read run on a user's file and cut the file short under it: every read
/// past the new end comes back short, which is an I/O error with its offset.
fn shrinking_file_run(extra: &[&str]) -> (std::process::ExitStatus, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("shrinks.bin");
    std::fs::write(&f, vec![7u8; 64 << 20]).unwrap();
    let json = dir.path().join("r.json");
    let mut child = drivelab()
        .args([
            "io",
            f.to_str().unwrap(),
            "--rw",
            "randread",
            "--runtime",
            "4",
            "--direct=0",
            "--json",
        ])
        .arg(&json)
        .args(extra)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Reads under way (the page cache was emptied of the file first, so they reach
    // the disk): only then is the file cut short.
    let pid = child.id();
    wait_until("the run to read", || storage_read_bytes(pid) >= 64 << 10);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let status = child.wait().unwrap();
    let r = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (status, r)
}

#[test]
fn an_io_error_stops_the_run_with_a_partial_result_naming_offset_and_errno() {
    let (status, r) = shrinking_file_run(&[]);
    assert_eq!(status.code(), Some(1));
    assert_eq!(r["status"], "failed");
    let e = &r["errors"][0];
    assert!(e["offset_bytes"].as_u64().unwrap() >= 1 << 20, "{e}");
    assert_eq!(e["len_bytes"], 4096);
    assert!(
        e["message"].as_str().unwrap().contains("short transfer"),
        "{e}"
    );
    assert!(r["failure"].as_str().unwrap().contains("offset"));
    assert!(
        r["totals"]["read"]["ops"].as_u64().unwrap() > 0,
        "reads before the error count"
    );
}

#[test]
fn continue_on_error_counts_and_goes_on() {
    let (status, r) = shrinking_file_run(&["--continue-on-error"]);
    assert_eq!(status.code(), Some(0));
    assert_eq!(r["status"], "complete");
    let errors = r["totals"]["error_count"].as_u64().unwrap();
    assert!(errors > 100, "{errors} errors counted");
    assert_eq!(
        r["errors"].as_array().unwrap().len(),
        100,
        "the first 100 are kept in full"
    );
    // Reads inside the first MiB keep succeeding until the end.
    let recs = r["series"]["records"].as_array().unwrap();
    assert!(recs.last().unwrap()["read"]["ops"].as_u64().unwrap() > 0);
    // Issue 24: each interval counts its failed I/Os by direction, and they add up to
    // the total; none before the interval of the first error.
    let per = |dir: &str| -> Vec<u64> {
        recs.iter()
            .map(|x| x[dir]["errors"].as_u64().unwrap())
            .collect()
    };
    let (reads, writes, all) = (per("read"), per("write"), per("all"));
    assert_eq!(reads.iter().sum::<u64>(), errors, "{reads:?}");
    assert!(writes.iter().all(|&w| w == 0));
    assert_eq!(all, reads);
    let interval = r["series"]["interval_ns"].as_u64().unwrap();
    let first = r["errors"][0]["at_ns"].as_u64().unwrap() / interval;
    let first_counted = reads.iter().position(|&e| e > 0).unwrap() as u64;
    assert_eq!(first_counted, first, "{reads:?}");
    // The result says how many failed, beside the rates of the ones that did not.
    let notes = r["notes"].to_string();
    assert!(
        notes.contains(&format!("{errors} of ")) && notes.contains("successful ones only"),
        "{notes}"
    );
}

#[test]
fn results_are_never_written_over_the_target_or_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("user.bin");
    std::fs::write(&f, vec![9u8; 1 << 20]).unwrap();
    let f = f.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "io",
            f,
            "--rw",
            "read",
            "--runtime",
            "0.2",
            "--csv",
            f,
            "--force",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the target under test"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(f).unwrap(), vec![9u8; 1 << 20]);
    let lo = Loop::new(1 << 20, false);
    let o = run_in(
        dir.path(),
        &["io", "null", "--runtime", "0.1", "--json", &lo.dev],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a block device"), "{}", stderr(&o));
    assert!(std::fs::read(&lo.dev).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn a_full_or_closed_stdout_is_a_failure_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.sqlite");
    for args in [
        vec!["io", "null", "--runtime", "0.05"],
        vec!["db", "list", "--db", db.to_str().unwrap()],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_drivelab"))
            .args(&args)
            .current_dir(dir.path())
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_dangling_symbolic_link_as_the_target_is_said_as_such() {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(d.path().join("gone.img"), d.path().join("disk.img")).unwrap();
    for rw in ["read", "write"] {
        let o = run_in(
            d.path(),
            &[
                "io",
                "disk.img",
                "--rw",
                rw,
                "--size",
                "1M",
                "--runtime",
                "50ms",
            ],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(
            e.contains("is a symbolic link to") && !e.contains("File exists"),
            "{e}"
        );
    }
    assert!(!d.path().join("gone.img").exists());
}

/// Issue #22: counts, memory and inputs are bounded before anything is allocated or read.
#[test]
fn counts_memory_and_inputs_are_bounded_up_front() {
    bad(
        &[
            "run",
            "consistency",
            "null",
            "--short",
            "--passes",
            "4294967295",
        ],
        "--passes",
    );
    bad(
        &[
            "run",
            "consistency",
            "null",
            "--short",
            "--no-db",
            "--op",
            "99.99",
        ],
        "--op",
    );
    bad(
        &["run", "consistency", "null", "--no-db", "--duration", "30s"],
        "--duration 60s or more",
    );
    let many = vec!["1"; 300].join(",");
    bad(&["run", "iometer", "null", "--qds", &many], "--qds");
    let zones = format!("zoned:{}", vec!["1/1"; 15_000].join(":"));
    bad(
        &["io", "null", "--random_distribution", &zones],
        "--random_distribution",
    );
    let o = run_in(
        std::path::Path::new("/"),
        &["io", "null", "--random_distribution", &zones],
    );
    assert!(stderr(&o).len() < 1000, "{}", stderr(&o).len());
}

/// A simulated drive whose tables do not fit under the address-space limit (`ulimit
/// -v`) is refused with the estimate, not a panic in the allocator.
#[test]
fn a_simulated_drive_beyond_the_memory_limit_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 3000000 && exec \"$0\" io sim:capacity=2T --runtime 1s")
        .arg(env!("CARGO_BIN_EXE_drivelab"))
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("capacity"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

/// A FIFO (which would block) or a symlink to /dev/zero (which never ends) given as an
/// input file is refused at once with one line.
#[test]
fn an_input_that_is_no_regular_file_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for f in ["f", "cpu.blktrace.0", "logs/x_bw.1.log"] {
        if f.starts_with("logs/") {
            std::fs::create_dir(p.join("logs")).unwrap();
        }
        assert!(std::process::Command::new("mkfifo")
            .arg(p.join(f))
            .status()
            .unwrap()
            .success());
    }
    std::os::unix::fs::symlink("/dev/zero", p.join("logs/x_iops.1.log")).unwrap();
    let fio_result = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-json.json"
    );
    for (args, want) in [
        (
            &["trace", "import", "msr", "f", "-o", "t.dltrace"][..],
            "FILE f",
        ),
        (
            &["trace", "import", "blktrace", "cpu", "-o", "t.dltrace"][..],
            "is a FIFO",
        ),
        (&["trace", "info", "f"][..], "is a FIFO"),
        (&["run", "replay", "f", "null", "--no-db"][..], "is a FIFO"),
        (&["import", "fio", "f"][..], "RESULT f"),
        (
            &["import", "fio", fio_result, "--logs", "logs"][..],
            "not a regular file",
        ),
    ] {
        let o = run_in(p, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}

/// Issue #22: wrong exits and unclear messages, each one line with exit 2 up front.
#[test]
fn red_team_messages_are_one_clear_line() {
    bad(
        &["db", "--db", "postgres://", "list"],
        "names no server host",
    );
    bad(
        &["run", "quick", "null", "--short", "--db", "postgres://"],
        "names no server host",
    );
    bad(&["io", "null", "--randseed", "-1"], "is not a seed");
    bad(
        &["io", "null", "--randseed", "99999999999999999999"],
        "too large",
    );
    bad(&["io", "null", "--iodepth", "99999999999"], "too large");
    bad(&["io", "null", "--direct", "yes"], "is not 0 or 1");
    bad(&["io", "null", "--direct", "-1"], "is not 0 or 1");
    bad(
        &["run", "peak", "null", "--short", "--precondition", "true"],
        "is not 0 or 1",
    );
    bad(
        &["io", "sim:op=1e-300"],
        "bad op '1.0000000000000001e-298%'",
    );
    // A newline or escape byte in a value never splits the line or reaches the terminal.
    bad(
        &[
            "run",
            "quick",
            "t.bin",
            "--short",
            "--host",
            "a\nb\u{1b}[2J",
        ],
        "--host",
    );
    bad(
        &["io", "null", "--sensor-hwmon", "/nonexistent"],
        "does not exist",
    );
    bad(
        &[
            "io",
            "t.bin",
            "--size",
            "1M",
            "--sensor-cmd",
            "while :; do echo 99999999 W; sleep 0.2; done",
        ],
        "printed only implausible values",
    );
    // Another program's SQLite file with a table named like drivelab's: plain words.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f.sqlite");
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table runs(x)'); c.commit()")
        .arg(&f)
        .status()
        .unwrap();
    assert!(ok.success());
    let o = run_in(d.path(), &["db", "--db", "f.sqlite", "list"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a drivelab results database") && !stderr(&o).contains("--"),
        "{}",
        stderr(&o)
    );
}
