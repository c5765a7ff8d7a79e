//! `io --verify` and `drivelab verify`: blocks damaged on purpose between the write pass
//! and the verify pass are reported at exactly the damaged offset, with their class.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{run_in, stderr, stdout, Loop};

/// Write `target` sequentially with --verify (every block once), keeping the result.
fn write_verified(dir: &Path, target: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "io",
        target,
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "4M",
        "--io_size",
        "4M",
        "--iodepth",
        "4",
        "--verify",
        "--json",
        "r.json",
    ];
    args.extend(extra);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "complete");
    assert_eq!(r["verify"]["blocks_checked"], 1024);
    assert_eq!(r["verify"]["blocks_bad"], 0);
    // The pass's reads count like any read: in the totals and the series, after the
    // writes' intervals (schema 3).
    assert_eq!(r["schema_version"], 3);
    // Adjacent blocks are read together, a MiB at a time.
    assert_eq!(r["totals"]["read"]["ops"], 4);
    assert_eq!(r["totals"]["read"]["bytes"], 4 << 20);
    assert_eq!(r["totals"]["write"]["ops"], 1024);
    let pass_ns = r["verify"]["pass_ns"].as_u64().unwrap();
    assert!(r["duration_ns"].as_u64().unwrap() > pass_ns);
    let first = r["verify"]["pass_first_index"].as_u64().unwrap();
    let recs = r["series"]["records"].as_array().unwrap();
    let reads: u64 = recs
        .iter()
        .map(|x| x["read"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(reads, 4);
    let first_read = recs.iter().position(|x| x["read"]["ops"] != 0).unwrap();
    assert!(recs[first_read..].iter().all(|x| x["write"]["ops"] == 0));
    assert!(recs[first_read]["index"].as_u64().unwrap() >= first);
    assert!(recs
        .iter()
        .all(|x| x["index"].as_u64().unwrap() >= first || x["read"]["ops"] == 0));
    r
}

/// Flip one byte of `path` at `at` (a file, or a block device under O_DIRECT-free I/O).
fn flip(path: &Path, at: u64) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x10], at).unwrap();
    f.sync_all().unwrap();
}

/// `drivelab verify TARGET --from r.json --json`: its exit code and document.
fn verify_later(dir: &Path, target: &str) -> (Option<i32>, serde_json::Value) {
    let o = run_in(dir, &["verify", target, "--from", "r.json", "--json"]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

fn assert_one_corrupt_at(v: &serde_json::Value, at: u64) {
    assert_eq!(v["blocks_bad"], 1, "{v}");
    // One flipped byte in a block one write stamped throughout: silent corruption.
    assert_eq!(v["classes"]["corrupt"], 1, "{v}");
    assert_eq!(v["classes"]["torn"], 0, "{v}");
    let m = &v["mismatches"][0];
    assert_eq!(m["class"], "corrupt");
    assert_eq!(m["first_bad_byte_offset_bytes"], at);
    assert_eq!(m["offset_bytes"], at / 4096 * 4096);
    // The block's generation is intact in its header: the sequential pass wrote block n
    // as write n.
    assert_eq!(m["expected_generation"], at / 4096);
    assert_eq!(m["found_generation"], at / 4096);
}

#[test]
fn a_byte_corrupted_in_a_file_is_found_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    write_verified(dir.path(), "t.bin", &["--keep"]);
    let file = dir.path().join("t.bin");
    // The verify header leaves the data incompressible, within the bound the quick
    // suite's own check of `random` uses (its constant fields cost under 2 %).
    let z = std::process::Command::new("zstd")
        .args(["-q", "-c", "-3"])
        .arg(&file)
        .output()
        .expect("zstd is installed");
    assert!(z.stdout.len() as f64 / (4 << 20) as f64 > 0.97);
    let at = 1_234_567;
    flip(&file, at);
    // A block another offset's copy, a block of zeros: misdirected and zeros.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .read(true)
        .open(&file)
        .unwrap();
    let mut first = vec![0u8; 4096];
    f.read_exact_at(&mut first, 0).unwrap();
    f.write_all_at(&first, 40 * 4096).unwrap();
    f.write_all_at(&[0u8; 4096], 80 * 4096).unwrap();
    drop(f);
    let (code, v) = verify_later(dir.path(), "t.bin");
    assert_eq!(code, Some(1));
    assert_eq!(v["blocks_bad"], 3, "{v}");
    assert_eq!(v["classes"]["misdirected"], 1);
    assert_eq!(v["classes"]["zeros"], 1);
    let m = &v["mismatches"];
    assert_eq!(m[0]["class"], "misdirected");
    assert_eq!(m[0]["offset_bytes"], 40 * 4096);
    assert_eq!(m[0]["found_offset_bytes"], 0);
    assert_eq!(m[1]["class"], "zeros");
    assert_eq!(m[1]["offset_bytes"], 80 * 4096);
    assert_eq!(m[2]["class"], "corrupt");
    assert_eq!(m[2]["first_bad_byte_offset_bytes"], at);
    // The terminal names the classes as the JSON does.
    let o = run_in(dir.path(), &["verify", "t.bin", "--from", "r.json"]);
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(text.contains("(misdirected)"), "{text}");
    // Where the misdirected block's data was meant to go, as the JSON's found_offset_bytes.
    assert!(
        text.contains(&format!(
            "block at byte {}: misdirected, written for byte 0,",
            40 * 4096
        )),
        "{text}"
    );
    assert!(text.contains(": corrupt, generation"), "{text}");
    assert!(
        !text.contains("Corrupt") && !text.contains("Zeros"),
        "{text}"
    );
}

/// A verify pass that finds every block as written says so on the terminal (never on a
/// JSON stream), and its reads have their own line, apart from the workload's.
#[test]
fn a_passed_verify_says_so_and_its_reads_have_their_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "io",
        "t.bin",
        "--size",
        "4M",
        "--io_size",
        "4M",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--verify",
    ];
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("  verified 1024 blocks (4 MiB): all as written\n"),
        "{text}"
    );
    // A write-only workload has no read line: the reads are the pass's.
    assert!(text.contains("  verify read "), "{text}");
    assert!(!text.contains("  read "), "{text}");

    // A workload that reads too: its reads on the read line, the pass's apart.
    let mixed = [
        "io",
        "m.bin",
        "--size",
        "4M",
        "--io_size",
        "8M",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--verify",
    ];
    let o = run_in(dir.path(), &mixed);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line: {text}"))
            .to_string()
    };
    assert!(line("read ").contains("IOPS"), "{text}");
    assert!(line("verify read ").contains("IOPS"), "{text}");
    assert!(line("verified ").contains("all as written"), "{text}");

    // The JSON on stdout alone; the line on stderr.
    let mut json = args.to_vec();
    json.extend(["--json", "-"]);
    let o = run_in(dir.path(), &json);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verify"]["blocks_bad"], 0);
    assert!(
        stderr(&o).contains("drivelab: verified 1024 blocks (4 MiB): all as written"),
        "{}",
        stderr(&o)
    );
}

/// Another run's data, written with a larger block size, checked against this run's
/// document: every block is foreign (another run's writes), none "corrupt", though the
/// blocks on the other run's boundaries hold its headers.
#[test]
fn another_runs_larger_blocks_are_foreign_not_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    for (target, bs, json) in [("fa.bin", "4k", "fa.json"), ("fb.bin", "128k", "fb.json")] {
        let o = run_in(
            dir.path(),
            &[
                "io", target, "--size", "2M", "--rw", "write", "--bs", bs, "--verify", "--keep",
                "--json", json,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run_in(
        dir.path(),
        &["verify", "fb.bin", "--from", "fa.json", "--json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["blocks_checked"], 512, "{v}");
    assert_eq!(v["blocks_bad"], 512, "{v}");
    assert_eq!(v["classes"]["foreign"], 512, "{v}");
    assert_eq!(v["classes"]["corrupt"], 0, "{v}");
    // The first block holds the other run's header: its generation is still shown.
    assert_eq!(v["mismatches"][0]["class"], "foreign");
    assert!(v["mismatches"][0]["found_generation"].is_u64(), "{v}");
    assert_eq!(
        v["mismatches"][1]["found_generation"],
        serde_json::Value::Null
    );
}

#[test]
fn a_byte_corrupted_on_a_loop_device_is_found_at_its_offset() {
    let lo = Loop::new(8 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let dest = format!("--destructive={}", lo.dev);
    write_verified(dir.path(), &lo.dev, &[&dest]);
    let at = 3 * 4096 + 777;
    flip(Path::new(&lo.dev), at);
    let (code, v) = verify_later(dir.path(), &lo.dev);
    assert_eq!(code, Some(1));
    assert_one_corrupt_at(&v, at);
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            &["io", "t.bin", "--rw", "randread", "--verify"][..],
            "--verify",
        ),
        (
            &[
                "io",
                "t.bin",
                "--rw",
                "write",
                "--bssplit",
                "4k/50:8k/50",
                "--verify",
            ][..],
            "--verify",
        ),
        (
            &["io", "t.bin", "--rw", "write", "--data", "zero", "--verify"][..],
            "--verify",
        ),
        (&["verify", "t.bin", "--from", "missing.json"][..], "--from"),
    ] {
        let o = run_in(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}

/// A result document edited to claim more writes than its run could make (the red
/// team's 10^18, which made verify replay forever) is refused at once.
#[test]
fn verify_refuses_write_counts_no_run_could_make() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = write_verified(dir.path(), "t.bin", &["--keep"]);
    r["verify"]["writes_per_job"] = serde_json::json!([1_000_000_000_000_000_000u64]);
    std::fs::write(dir.path().join("edited.json"), r.to_string()).unwrap();
    let o = run_in(dir.path(), &["verify", "t.bin", "--from", "edited.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--from"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

/// A document edited to values no run makes (the red team's `bs: 1`, an alignment of
/// 0 that divided by zero) and a target shorter than the run's span are refused with
/// one line on stderr naming the field (or the target and both sizes), exit 2, nothing
/// on stdout.
#[test]
fn verify_refuses_impossible_documents_and_short_targets_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let r = write_verified(dir.path(), "t.bin", &["--keep"]);
    let edits: [(&str, serde_json::Value, &str); 4] = [
        (
            "bs",
            serde_json::json!([{"bytes": 1, "percent": 100}]),
            "--bs",
        ),
        ("align_bytes", serde_json::json!(0), "config.align_bytes"),
        ("numjobs", serde_json::json!(0), "--numjobs"),
        ("rw", serde_json::json!("randread"), "--verify"),
    ];
    for (field, value, says) in edits {
        let mut e = r.clone();
        e["config"][field] = value;
        std::fs::write(dir.path().join("e.json"), e.to_string()).unwrap();
        let o = run_in(dir.path(), &["verify", "t.bin", "--from", "e.json"]);
        assert_eq!(o.status.code(), Some(2), "{field}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{field}: {}", stdout(&o));
        assert!(stderr(&o).contains(says), "{field}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    // The target cut to half: named, with its size and the size the run needs.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("t.bin"))
        .unwrap();
    f.set_len(2 << 20).unwrap();
    let o = run_in(dir.path(), &["verify", "t.bin", "--from", "r.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(!e.contains("fill whole buffer"), "{e}");
    assert!(
        e.contains("t.bin") && e.contains("2097152") && e.contains("4194304"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

/// A result document of schema 2 (before the pass counted in the totals, no `pass_ns`)
/// is still read by `drivelab verify`.
#[test]
fn verify_reads_a_schema_2_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = write_verified(dir.path(), "t.bin", &["--keep"]);
    r["schema_version"] = 2.into();
    r["verify"].as_object_mut().unwrap().remove("pass_ns");
    std::fs::write(dir.path().join("r.json"), r.to_string()).unwrap();
    let (code, v) = verify_later(dir.path(), "t.bin");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["blocks_checked"], 1024);
    assert_eq!(v["pass_ns"], serde_json::Value::Null);
}

/// `run seqfill --verify` on a loop device: every block read back after the fill (its
/// reads after the fill's intervals, which the fill's analysis alone reads), and the
/// bundle is what `drivelab verify --from` checks later: a byte flipped is found there.
#[test]
fn a_seqfill_bundle_verifies_later_and_finds_a_flipped_byte() {
    let lo = Loop::new(96 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let dest = format!("--destructive={}", lo.dev);
    let o = run_in(
        dir.path(),
        &[
            "run", "seqfill", &lo.dev, &dest, "--short", "--verify", "--no-db", "--out", "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("b/run.json")).unwrap()).unwrap();
    let step = &doc["steps"][0];
    let v = &step["run"]["verify"];
    let blocks = v["writes_per_job"][0].as_u64().unwrap();
    assert_eq!(v["blocks_checked"], blocks, "{v}");
    assert_eq!(v["blocks_bad"], 0);
    // The fill's analysis covers the intervals before the pass: its bytes are the fill's.
    let cum = doc["summary"]["analysis"]["cum_write_bytes"]
        .as_array()
        .unwrap();
    assert_eq!(cum.last().unwrap().as_u64().unwrap(), blocks * (128 << 10));
    let first = v["pass_first_index"].as_u64().unwrap();
    assert_eq!(
        cum.len() as u64,
        first,
        "one value per interval of the fill"
    );

    // The terminal says the check passed; the HTML report has the step's check, typed
    // from its record.
    let said = stdout(&o);
    let line = said
        .lines()
        .find(|l| l.contains(&format!("verified {blocks} blocks (")))
        .unwrap_or_else(|| panic!("no verified line: {said}"));
    assert!(line.ends_with(" MiB): all as written"), "{line}");
    let r = run_in(dir.path(), &["report", "b", "-o", "r.html"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains("Data verification (--verify)"),
        "no verify table"
    );
    assert!(html.contains("all as written"), "no verify result");
    // One unit family, the report's decimal one: the step as a workload phrase and the
    // data checked in MB, never the step name's MiB beside them.
    let table = html.split("Data verification (--verify)").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    assert!(
        !table.contains("iB"),
        "binary units in the verify table: {table}"
    );
    let checked = drivelab_report::fmt_bytes(blocks * (128 << 10));
    assert!(checked.ends_with(" MB"), "{checked}");
    assert!(table.contains(&checked), "{checked}: {table}");
    assert!(table.contains("128K sequential writes, QD"), "{table}");

    let (code, _) = verify_bundle(dir.path(), &lo.dev);
    assert_eq!(code, Some(0));
    let at = 5_000_000;
    flip(Path::new(&lo.dev), at);
    let (code, v) = verify_bundle(dir.path(), &lo.dev);
    assert_eq!(code, Some(1));
    assert_eq!(v["blocks_bad"], 1, "{v}");
    assert_eq!(v["mismatches"][0]["class"], "corrupt");
    assert_eq!(v["mismatches"][0]["first_bad_byte_offset_bytes"], at);
}

fn verify_bundle(dir: &Path, target: &str) -> (Option<i32>, serde_json::Value) {
    let o = run_in(dir, &["verify", target, "--from", "b", "--json"]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

/// `run consistency --verify`: the continuous random writes are read back after the
/// measured time and the bundle verifies later; with --until-steady (rounds as separate
/// steps) it is refused in one line.
#[test]
fn a_consistency_bundle_verifies_its_random_writes() {
    let lo = Loop::new(96 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let dest = format!("--destructive={}", lo.dev);
    let short = [
        "--short",
        "--duration",
        "3s",
        "--round",
        "1s",
        "--window",
        "2s",
        "--no-db",
    ];
    let mut args = vec![
        "run",
        "consistency",
        &lo.dev,
        &dest,
        "--verify",
        "--out",
        "b",
    ];
    args.extend(short);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("b/run.json")).unwrap()).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    let verified: Vec<_> = steps
        .iter()
        .filter(|s| s["config"]["verify"] == true)
        .collect();
    assert_eq!(verified.len(), 1, "the continuous step alone");
    let v = &verified[0]["run"]["verify"];
    assert!(v["blocks_checked"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["blocks_bad"], 0, "{v}");
    let (code, later) = verify_bundle(dir.path(), &lo.dev);
    assert_eq!(code, Some(0), "{later}");
    assert_eq!(later["blocks_checked"], v["blocks_checked"]);

    let mut args = vec![
        "run",
        "consistency",
        &lo.dev,
        &dest,
        "--verify",
        "--until-steady",
    ];
    args.extend(short);
    let o = run_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--verify"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

/// `io --verify --verify-backlog N` of 4 MiB in blocks of `bs` on `t.bin` with `extra`:
/// the document.
fn write_with_backlog(dir: &Path, n: &str, bs: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "io",
        "t.bin",
        "--rw",
        "write",
        "--bs",
        bs,
        "--size",
        "4M",
        "--io_size",
        "4M",
        "--verify",
        "--verify-backlog",
        n,
        "--json",
        "r.json",
        "--keep",
        "--force",
    ];
    args.extend(extra);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap()
}

#[test]
fn the_backlog_reads_back_every_block_written_on_io_uring_and_sync_at_depth_1_and_8() {
    let dir = tempfile::tempdir().unwrap();
    // Every 24 writes: 1024 blocks leave a tail of 16 (of 128 per job with 8 jobs: 8),
    // checked once the generator is done, as each write of it comes back.
    for (bs, extra, written) in [
        ("4k", &["--ioengine", "sync"][..], 1024),
        // The sync engine's depth is its threads, each job its own region.
        ("4k", &["--ioengine", "sync", "--numjobs", "8"][..], 1024),
        (
            "4k",
            &["--ioengine", "io_uring", "--iodepth", "1"][..],
            1024,
        ),
        (
            "4k",
            &["--ioengine", "io_uring", "--iodepth", "8"][..],
            1024,
        ),
        (
            "4k",
            &["--ioengine", "io_uring", "--iodepth", "8", "--numjobs", "2"][..],
            1024,
        ),
        // Large writes: the sync engine makes the next one's content while one is in
        // flight (its source asked before the last write is back).
        ("128k", &["--ioengine", "sync"][..], 32),
        (
            "128k",
            &["--ioengine", "io_uring", "--iodepth", "8"][..],
            32,
        ),
    ] {
        let n = if bs == "4k" { "24" } else { "5" };
        let r = write_with_backlog(dir.path(), n, bs, extra);
        assert_eq!(r["status"], "complete", "{extra:?}");
        let v = &r["verify"];
        assert_eq!(v["backlog_blocks_checked"], written, "{extra:?}: {v}");
        assert_eq!(v["backlog_blocks_bad"], 0);
        assert_eq!(v["blocks_bad"], 0);
        assert_eq!(r["config"]["verify_backlog"], n.parse::<u64>().unwrap());
        // The check reads count like any read: one per block checked, beside the
        // pass's 4 reads of a MiB.
        assert_eq!(r["totals"]["write"]["ops"], written);
        assert_eq!(r["totals"]["read"]["ops"], written + 4, "{extra:?}");
        // Made during the run and the pass: their rate is over both times, not the
        // pass's alone (a write-only workload read back during the run).
        let secs =
            (r["totals"]["elapsed_ns"].as_f64().unwrap() + v["pass_ns"].as_f64().unwrap()) / 1e9;
        let want = (written + 4) as f64 / secs;
        let rate = r["totals"]["read"]["ops_per_s"].as_f64().unwrap();
        assert!(
            (rate - want).abs() <= want * 1e-3,
            "{extra:?}: read rate {rate}, want {want}"
        );
        let first = v["pass_first_index"].as_u64().unwrap();
        let run_reads: u64 = r["series"]["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["index"].as_u64().unwrap() < first)
            .map(|x| x["read"]["ops"].as_u64().unwrap())
            .sum();
        assert_eq!(run_reads, written, "{extra:?}: in the run's intervals");
        // `drivelab verify` reads the document back (the option is part of its config).
        let (code, later) = verify_later(dir.path(), "t.bin");
        assert_eq!(code, Some(0), "{later}");
        assert_eq!(later["blocks_bad"], 0);
    }
}

#[test]
fn verify_backlog_refuses_bad_values_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["io", "t.bin", "--size", "1M"];
    for (extra, says) in [
        (
            &["--rw", "write", "--verify-backlog", "8"][..],
            "--verify-backlog: needs --verify",
        ),
        (
            &["--rw", "write", "--verify", "--verify-backlog", "0"][..],
            "--verify-backlog",
        ),
        (
            &["--rw", "write", "--verify", "--verify-backlog", "lots"][..],
            "--verify-backlog",
        ),
        (
            &["--rw", "write", "--verify", "--verify-backlog", "-3"][..],
            "--verify-backlog",
        ),
        (
            &["--verify", "--verify-backlog", "8", "--rw", "randread"][..],
            "--verify-backlog: needs a workload that writes",
        ),
        (
            &[
                "--verify",
                "--verify-backlog",
                "8",
                "--rw",
                "randwrite",
                "--numjobs",
                "2",
            ][..],
            "--verify-backlog: random writes need --numjobs 1",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        assert!(!dir.path().join("t.bin").exists(), "nothing made: {args:?}");
    }
    // A simulated drive keeps no data: nothing to read back, during the run or after.
    let o = run_in(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc",
            "--rw",
            "write",
            "--size",
            "1M",
            "--verify",
            "--verify-backlog",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("needs a file or a block device"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn the_pass_reads_with_every_job_on_the_sync_engine_and_finds_a_flipped_byte() {
    // Two sequential jobs (each its own half), the sync engine: the pass reads with two
    // threads, each its share of the runs of adjacent blocks, a MiB at a time.
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "io",
            "t.bin",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--io_size",
            "4M",
            "--ioengine",
            "sync",
            "--numjobs",
            "2",
            "--verify",
            "--keep",
            "--json",
            "r.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["verify"]["writes_per_job"], serde_json::json!([512, 512]));
    assert_eq!(r["verify"]["blocks_checked"], 1024);
    assert_eq!(r["verify"]["blocks_bad"], 0);
    assert_eq!(r["totals"]["read"]["ops"], 4);
    let at = 3 * (1 << 20) + 4096 + 1000;
    flip(&dir.path().join("t.bin"), at);
    let (code, v) = verify_later(dir.path(), "t.bin");
    assert_eq!(code, Some(1));
    assert_eq!(v["blocks_checked"], 1024);
    assert_eq!(v["blocks_bad"], 1);
    let m = &v["mismatches"][0];
    assert_eq!(m["class"], "corrupt");
    assert_eq!(m["first_bad_byte_offset_bytes"], at);
    // Job 1 wrote the second half from its start: its generation 257 is block 769.
    assert_eq!(m["expected_generation"], at / 4096 - 512);
}

#[test]
fn the_pass_at_depth_lists_the_first_20_bad_blocks_by_offset_from_every_job() {
    // Two sequential jobs on io_uring at depth 4: each job's share of the pass comes
    // back in any order, and the list is still the first 20 bad blocks by offset.
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "io",
            "t.bin",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--io_size",
            "4M",
            "--ioengine",
            "io_uring",
            "--iodepth",
            "4",
            "--numjobs",
            "2",
            "--verify",
            "--keep",
            "--json",
            "r.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("t.bin"))
        .unwrap();
    // 30 blocks zeroed, every 33rd block from the end down: both jobs' halves.
    let zeroed: Vec<u64> = (0..30).map(|i| (1023 - 33 * i) * 4096).collect();
    for &at in &zeroed {
        f.write_all_at(&[0u8; 4096], at).unwrap();
    }
    drop(f);
    let (code, v) = verify_later(dir.path(), "t.bin");
    assert_eq!(code, Some(1));
    assert_eq!(v["blocks_checked"], 1024);
    assert_eq!(v["blocks_bad"], 30);
    assert_eq!(v["classes"]["zeros"], 30);
    let mut first: Vec<u64> = zeroed.clone();
    first.sort_unstable();
    first.truncate(20);
    let listed: Vec<u64> = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["offset_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, first);
}
