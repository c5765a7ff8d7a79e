//! What the engine measures adds up: mixes hold, intervals sum to totals, concurrency is
//! real, interruption keeps a valid partial result.

mod common;

use common::*;

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

#[test]
fn rwmixread_and_bssplit_hold_within_two_percent() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "null",
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
            "--bssplit",
            "4k/60:64k/40",
            "--io_size",
            "4G",
            "--randseed",
            "1",
        ],
    );
    let reads = u(&r["totals"]["read"]["ops"]) as f64;
    let writes = u(&r["totals"]["write"]["ops"]) as f64;
    let ops = reads + writes;
    assert!(ops >= 100_000.0, "{ops} I/Os");
    assert!(
        (reads / ops - 0.70).abs() < 0.02,
        "read share {}",
        reads / ops
    );
    let bytes = (u(&r["totals"]["read"]["bytes"]) + u(&r["totals"]["write"]["bytes"])) as f64;
    let share64k = (bytes / ops - 4096.0) / (65536.0 - 4096.0);
    assert!((share64k - 0.40).abs() < 0.02, "64k share {share64k}");
    assert_eq!(
        bytes as u64,
        4 << 30,
        "a byte-bounded run moves exactly --io_size"
    );
}

#[test]
fn interval_sums_equal_totals_and_ramp_is_tagged() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "null",
            "--rw",
            "randrw",
            "--runtime",
            "2",
            "--ramp_time",
            "500ms",
            "--log-interval",
            "100ms",
            "--numjobs",
            "2",
        ],
    );
    let recs = r["series"]["records"].as_array().unwrap();
    assert_eq!(recs.len(), 25, "2.5 s on a 100 ms grid");
    let ramp: Vec<_> = recs.iter().filter(|x| x["ramp"] == true).collect();
    assert_eq!(ramp.len(), 5);
    for dir in ["read", "write", "all"] {
        let ops: u64 = recs
            .iter()
            .filter(|x| x["ramp"] == false)
            .map(|x| u(&x[dir]["ops"]))
            .sum();
        let bytes: u64 = recs
            .iter()
            .filter(|x| x["ramp"] == false)
            .map(|x| u(&x[dir]["bytes"]))
            .sum();
        assert_eq!(ops, u(&r["totals"][dir]["ops"]), "{dir} ops");
        assert_eq!(bytes, u(&r["totals"][dir]["bytes"]), "{dir} bytes");
        assert!(u(&r["histogram"][if dir == "all" { "read" } else { dir }]["count"]) > 0);
    }
    let hist_total = u(&r["histogram"]["read"]["count"]) + u(&r["histogram"]["write"]["count"]);
    assert_eq!(hist_total, u(&r["totals"]["all"]["ops"]));
    for (i, x) in recs.iter().enumerate() {
        assert_eq!(u(&x["index"]), i as u64);
        assert_eq!(u(&x["start_ns"]), i as u64 * 100_000_000, "fixed grid");
    }
    let last = recs.last().unwrap();
    assert_eq!(
        u(&last["cum_write_bytes"]),
        recs.iter().map(|x| u(&x["write"]["bytes"])).sum::<u64>()
    );
}

#[test]
fn io_uring_keeps_32_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--spec",
            "RND4K Q32T1",
            "--size",
            "64M",
            "--runtime",
            "2",
            "--ioengine",
            "io_uring",
        ],
    );
    assert_eq!(r["config"]["ioengine"], "io_uring");
    let inflight = r["totals"]["avg_inflight"].as_f64().unwrap();
    assert!(
        inflight > 28.0 && inflight <= 32.5,
        "average in flight {inflight}"
    );
}

#[test]
fn sync_with_four_jobs_runs_four_threads() {
    let dir = tempfile::tempdir().unwrap();
    let child = drivelab()
        .args([
            "io",
            "--rw",
            "randread",
            "--numjobs",
            "4",
            "--size",
            "64M",
            "--runtime",
            "4",
            "--output-format",
            "json",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the fill to finish and the measured run to start.
    let mut seen = 0;
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let n = std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|rd| {
                rd.flatten()
                    .filter(|t| {
                        std::fs::read_to_string(t.path().join("comm"))
                            .map(|c| c.starts_with("drivelab-job"))
                            .unwrap_or(false)
                    })
                    .count()
            })
            .unwrap_or(0);
        seen = seen.max(n);
        if seen >= 4 {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(seen, 4, "four job threads at once");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let inflight = r["totals"]["avg_inflight"].as_f64().unwrap();
    assert!(
        inflight > 3.0 && inflight <= 4.05,
        "average in flight {inflight}"
    );
}

#[test]
fn interrupt_keeps_a_valid_partial_result_and_removes_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut child = drivelab()
        .args([
            "io",
            "--rw",
            "randwrite",
            "--size",
            "32M",
            "--runtime",
            "60",
            "--json",
        ])
        .arg(&json)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Writes under way: the file is locked and its marker says a run is writing.
    let file = dir.path().join("drivelab.test");
    wait_until("the run to start writing", || {
        locked_by_a_run(&file) && marker_text(&file).is_some_and(|m| m.contains("writing=1"))
    });
    signal(child.id(), "INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert!(u(&r["totals"]["write"]["ops"]) > 0);
    assert!(u(&r["duration_ns"]) < 30_000_000_000);
    assert!(
        !dir.path().join("drivelab.test").exists(),
        "the test file it created is removed"
    );
}

#[test]
fn interrupt_during_the_fill_still_gives_a_document() {
    // Reads of a new 2 GiB test file: it is written first, which takes seconds here.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let json = dir.path().join("out.json");
    let child = drivelab()
        .args(["io", "--size", "2G", "--runtime", "60", "--json"])
        .arg(&json)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The test file is made (and locked) just before it is filled.
    let file = dir.path().join("drivelab.test");
    wait_until("the test file to be made", || locked_by_a_run(&file));
    signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("while filling the test file"), "{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert_eq!(u(&r["totals"]["all"]["ops"]), 0);
    assert!(!dir.path().join("drivelab.test").exists());
}

#[test]
fn memory_targets_are_called_memory() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let r = run_json(dir.path(), &["io", "--size", "16M", "--runtime", "1"]);
    assert_eq!(r["target"]["filesystem"], "tmpfs");
    assert!(r["target"]["in_memory"].is_string());
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("Memory, not a drive")));
    let o = run_in(dir.path(), &["io", "--size", "16M", "--runtime", "1"]);
    assert!(stdout(&o).contains("Memory, not a drive"));
}

#[test]
fn json_stdout_carries_only_json_and_csv_has_every_interval() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let o = run_in(
        dir.path(),
        &[
            "io",
            "null",
            "--runtime",
            "1",
            "--log-interval",
            "250ms",
            "--output-format",
            "json",
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    assert!(o.status.success());
    let r: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    for k in [
        "schema_version",
        "tool",
        "config",
        "host",
        "target",
        "totals",
        "series",
        "histogram",
    ] {
        assert!(r.get(k).is_some(), "missing {k}");
    }
    // Built in a git checkout: the commit is recorded beside the version.
    let commit = r["tool"]["commit"].as_str().unwrap_or_default();
    assert!(
        commit.len() >= 12 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{}",
        r["tool"]
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 1 + 4);
    assert!(text.lines().next().unwrap().contains("read_lat_p9999_ns"));
}

#[test]
fn compress_pattern_compresses_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    for (pattern, bs, lo, hi) in [
        ("random", "4k", 0.97, 1.01),
        ("compress=50", "4k", 0.45, 0.56),
        // Any block size: the zeros are in every sector, not at the end of every 4 KiB.
        ("compress=50", "512", 0.45, 0.58),
        ("compress=50", "6k", 0.45, 0.56),
        ("compress=75", "128k", 0.2, 0.31),
        ("zero", "4k", 0.0, 0.01),
        // A new byte value per write: a little more than zeros, far from random.
        ("repeat", "4k", 0.0, 0.02),
    ] {
        let f = dir.path().join("drivelab.test");
        let _ = std::fs::remove_file(&f);
        run_json(
            dir.path(),
            &[
                "io",
                "--rw",
                "write",
                "--size",
                "8M",
                "--io_size",
                "8M",
                "--data",
                pattern,
                "--bs",
                bs,
                "--keep",
            ],
        );
        let z = std::process::Command::new("zstd")
            .args(["-q", "-c", "-3"])
            .arg(&f)
            .output()
            .expect("zstd is installed");
        let ratio = z.stdout.len() as f64 / (8 << 20) as f64;
        assert!(
            ratio >= lo && ratio <= hi,
            "{pattern} --bs {bs}: compressed to {ratio:.3}"
        );
        if pattern == "repeat" {
            // IOMeter's repeating bytes: one value per write, not one for all writes.
            let data = std::fs::read(&f).unwrap();
            let values: std::collections::HashSet<u8> = data.chunks(4096).map(|b| b[0]).collect();
            assert!(values.len() > 100, "{} byte values", values.len());
            assert!(data.chunks(4096).all(|b| b.iter().all(|&x| x == b[0])));
        }
        std::fs::remove_file(&f).unwrap();
    }
}

#[test]
fn a_ramped_run_counts_what_it_issued_between_the_ramp_and_the_deadline() {
    // docs/result-schema.md, "Rates": with a ramp, the measured time is the ramp's end to
    // the deadline, drained I/Os counted, those issued in the ramp not; the queue depth
    // held is the asked one. (Virtual time: nothing here depends on the machine.)
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc",
            "--rw",
            "randread",
            "--iodepth",
            "32",
            "--runtime",
            "1",
            "--ramp_time",
            "500ms",
        ],
    );
    let t = &r["totals"];
    assert_eq!(u(&t["elapsed_ns"]), 1_000_000_000, "{t}");
    assert!(u(&r["drain_ns"]) > 0, "I/Os were in flight at the deadline");
    let ops = u(&t["read"]["ops"]) as f64;
    assert!((t["read"]["ops_per_s"].as_f64().unwrap() - ops).abs() < 1e-6 * ops);
    let held = t["avg_inflight"].as_f64().unwrap();
    assert!((held - 32.0).abs() < 0.32, "depth held {held}");
}

#[test]
fn cpu_time_counts_from_the_end_of_the_ramp() {
    // The null engine keeps its one job thread busy all the time: 1.5 s of CPU in all,
    // of which the measured 0.5 s after the ramp is what the totals may count.
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &["io", "null", "--runtime", "0.5", "--ramp_time", "1"],
    );
    let cpu = &r["totals"]["cpu"];
    let used = cpu["user_s"].as_f64().unwrap() + cpu["sys_s"].as_f64().unwrap();
    assert!(used < 0.9, "{cpu}");
    let per_m = cpu["cpu_s_per_million_io"].as_f64().unwrap();
    let ops = u(&r["totals"]["all"]["ops"]);
    assert!((per_m - used / ops as f64 * 1e6).abs() < 1e-9 * per_m.max(1.0));
    // A run that ends within its ramp measured nothing, and says so.
    let r = run_json(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc",
            "--rw",
            "randwrite",
            "--io_size",
            "40k",
            "--ramp_time",
            "1s",
        ],
    );
    assert_eq!(r["totals"]["elapsed_ns"], 0);
    assert_eq!(r["totals"]["all"]["ops"], 0);
    assert!(r["totals"]["cpu"]["cpu_s_per_million_io"].is_null());
    let notes = r["notes"].to_string();
    assert!(notes.contains("ended within the ramp"), "{notes}");
}

/// --spec sets the depth and threads; an explicit --iodepth, --numjobs or --bs beside it
/// would silently override one of them, so the pair is refused (exit 2, one line).
#[test]
fn a_spec_with_an_explicit_depth_or_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [["--iodepth", "8"], ["--numjobs", "2"], ["--bs", "8k"]] {
        let mut args = vec!["io", "null", "--spec", "RND4K Q1T1"];
        args.extend(extra);
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--spec"), "{}", stderr(&o));
        assert_eq!(stderr(&o).trim_end().lines().count(), 1);
    }
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--size",
            "16M",
            "--spec",
            "RND4K Q1T2",
            "--runtime",
            "0.3",
        ],
    );
    assert_eq!(r["config"]["ioengine"], "sync");
    assert_eq!(r["config"]["numjobs"], 2);
}

#[test]
fn a_byte_budget_never_cuts_an_io_to_a_size_not_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &["io", "null", "--bs", "4k", "--io_size", "10000"],
    );
    assert_eq!(u(&r["totals"]["all"]["bytes"]), 8192);
    assert_eq!(u(&r["totals"]["all"]["ops"]), 2);
    let notes = r["notes"].to_string();
    assert!(notes.contains("--io_size: the last 1808 bytes"), "{notes}");
    // A budget of whole blocks is met exactly, over several jobs and sizes.
    let r = run_json(
        dir.path(),
        &[
            "io",
            "null",
            "--bssplit",
            "4k/50:64k/50",
            "--numjobs",
            "3",
            "--io_size",
            "1M",
        ],
    );
    assert_eq!(u(&r["totals"]["all"]["bytes"]), 1 << 20);
}

#[test]
fn a_byte_bounded_sequential_mix_of_sizes_leaves_no_gap() {
    // 1 MiB of mostly 64k writes: the last ones are cut to a size that fits, and the stream
    // goes on right after it, so every sector of the span is written once.
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--rw",
            "write",
            "--bssplit",
            "4k/10:64k/90",
            "--size",
            "1M",
            "--io_size",
            "1M",
            "--randseed",
            "7",
            "--keep",
        ],
    );
    assert_eq!(u(&r["totals"]["write"]["bytes"]), 1 << 20);
    let data = std::fs::read(dir.path().join("drivelab.test")).unwrap();
    for (i, sector) in data[..1 << 20].chunks(512).enumerate() {
        assert_eq!(stamp(sector).0, i as u64 * 512, "sector {i}");
    }
    // Three jobs over a span that does not split into three whole regions: the last
    // job's region and budget take the odd blocks, so again every sector is written once.
    std::fs::remove_file(dir.path().join("drivelab.test")).unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--rw",
            "write",
            "--numjobs",
            "3",
            "--size",
            "1M",
            "--io_size",
            "1M",
            "--keep",
        ],
    );
    assert_eq!(u(&r["totals"]["write"]["bytes"]), 1 << 20);
    let data = std::fs::read(dir.path().join("drivelab.test")).unwrap();
    let mut tags = std::collections::HashMap::new();
    for (i, sector) in data[..1 << 20].chunks(512).enumerate() {
        let (off, tag) = stamp(sector);
        assert_eq!(off, i as u64 * 512, "sector {i}");
        *tags.entry((i / 8, tag)).or_insert(0) += 1;
    }
    assert_eq!(tags.len(), 256, "each 4 KiB block written by one write");
}

#[test]
fn buffered_io_starts_from_the_target_and_says_what_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--size",
            "16M",
            "--rw",
            "write",
            "--bs",
            "1M",
            "--direct=0",
            "--io_size",
            "16M",
            "--end_fsync",
        ],
    );
    let notes = r["notes"].to_string();
    assert!(notes.contains("Buffered I/O"), "{notes}");
    assert!(
        notes.contains("flushed to the target at the end"),
        "{notes}"
    );
    assert_eq!(r["config"]["end_fsync"], true);
    let r = run_json(
        dir.path(),
        &["io", "--size", "16M", "--direct=0", "--runtime", "0.2"],
    );
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("emptied of the span before the run"),
        "{notes}"
    );
    assert!(notes.contains("Readahead was off"), "{notes}");
}

#[test]
fn a_spec_sets_seq_or_rnd_and_rw_only_the_direction() {
    let dir = tempfile::tempdir().unwrap();
    for (spec, rw, expect) in [
        ("RND4K Q1T1", "rw", "randrw"),
        ("RND4K Q1T1", "read", "randread"),
        ("RND4K Q1T1", "write", "randwrite"),
        ("SEQ1M Q1T1", "randrw", "rw"),
        ("SEQ1M Q1T1", "randwrite", "write"),
        ("SEQ1M Q1T1", "randread", "read"),
    ] {
        let r = run_json(
            dir.path(),
            &[
                "io",
                "null",
                "--spec",
                spec,
                "--rw",
                rw,
                "--runtime",
                "0.05",
            ],
        );
        assert_eq!(r["config"]["rw"], expect, "--spec {spec} --rw {rw}");
    }
}

#[test]
fn average_in_flight_never_exceeds_the_depth() {
    // A short run on the simulator: the I/Os still in flight at the deadline drain
    // after it, and their latencies must not inflate the average past the depth.
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc",
            "--rw",
            "randwrite",
            "--iodepth",
            "8",
            "--runtime",
            "1",
        ],
    );
    let avg = r["totals"]["avg_inflight"].as_f64().unwrap();
    assert!(avg > 7.5 && avg <= 8.0 + 1e-9, "{avg}");
}

#[test]
fn a_percentage_offset_lands_on_a_block_boundary() {
    let dir = tempfile::tempdir().unwrap();
    for (offset, bs) in [("10%", "4k"), ("33%", "64k"), ("0%", "4k")] {
        let r = run_json(
            dir.path(),
            &[
                "io",
                "null",
                "--offset",
                offset,
                "--size",
                "1M",
                "--bs",
                bs,
                "--runtime",
                "0.05",
            ],
        );
        let off = u(&r["config"]["offset_bytes"]);
        let unit = if bs == "4k" { 4096 } else { 65536 };
        assert_eq!(off % unit, 0, "--offset {offset} --bs {bs}: {off}");
        let pct: f64 = offset.trim_end_matches('%').parse().unwrap();
        let exact = (1u64 << 40) as f64 * pct / 100.0;
        assert!(exact - off as f64 >= 0.0 && exact - (off as f64) < unit as f64);
    }
}

#[test]
fn invalidate_drops_the_span_from_the_page_cache() {
    // A buffered write leaves the file's pages in the page cache; the next buffered run
    // drops them first (fio's invalidate), unless --invalidate=0. fincore counts them.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = dir.path().join("t.bin");
    let file = f.to_str().unwrap();
    let cached = || {
        let o = std::process::Command::new("fincore")
            .args(["--bytes", "--noheadings", "--output", "RES", file])
            .output()
            .expect("fincore (util-linux) is installed");
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    let write = |extra: &[&str]| {
        let mut args = vec![
            "io",
            file,
            "--rw",
            "write",
            "--direct=0",
            "--size",
            "16M",
            "--keep",
        ];
        args.extend_from_slice(extra);
        run_json(dir.path(), &args)
    };
    write(&["--io_size", "16M"]);
    assert_eq!(cached(), 16 << 20, "a buffered write stays in the cache");
    write(&["--io_size", "4k", "--invalidate=0"]);
    assert_eq!(cached(), 16 << 20, "--invalidate=0 leaves it");
    write(&["--io_size", "4k"]);
    assert!(
        cached() <= 64 << 10,
        "dropped before the run: {} bytes left",
        cached()
    );
}

/// A job whose thread gets no CPU before its deadline (a busy machine, here a deadline
/// of one nanosecond) still does one I/O: a finished run is never a row of zeros.
#[test]
fn a_starved_run_still_measures_an_io() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &["io", "null", "--runtime", "1ns", "--numjobs", "3"],
    );
    assert_eq!(r["status"], "complete");
    assert!(u(&r["totals"]["all"]["ops"]) >= 3, "{}", r["totals"]);
}
