//! `drivelab run powerloss`: the write phase and `--check` on a regular file and a loop
//! device (blocks the test damages between them are reported in their class), cycles
//! in one bundle, the simulated drive cut by its model, and the refusals.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{run_in, signal, stderr, stdout, wait_until, Loop};
use drivelab_suites::powerloss::{PowerLoss, Record};

/// A directory on another filesystem than the targets (tmpfs), for the journal.
fn journal_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").expect("/dev/shm is a tmpfs here")
}

fn analysis(bundle: &Path) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("run.json")).unwrap()).unwrap();
    assert_eq!(doc["suite"], "powerloss");
    doc["summary"]["analysis"].clone()
}

/// The knobs the journal's start record holds (the run's seed among them).
fn knobs_of(journal: &Path) -> PowerLoss {
    let first = std::fs::read_to_string(journal).unwrap();
    match serde_json::from_str(first.lines().next().unwrap()).unwrap() {
        Record::Start { knobs, .. } => knobs,
        r => panic!("first record {r:?}"),
    }
}

/// Write 16 rounds of 64 blocks (each block twice over the 512-block ring), check that
/// nothing was lost, then zero block 3, put generation 1 back into block 70 (it holds
/// generation 9), copy block 100 over block 101, and check again.
fn write_damage_check(target: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let journal = jdir.path().join("journal");
    let j = journal.to_str().unwrap();
    let mut args = vec!["run", "powerloss", target, "--journal", j, "--out", "b"];
    args.extend(["--rounds", "16", "--round-blocks", "64"]);
    args.extend(extra);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--check"), "{}", stderr(&o));
    assert!(stderr(&o).contains("on a tmpfs"), "{}", stderr(&o));
    // Every round was written and flushed before any cut: the check tested nothing.
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, target]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("Inconclusive"), "{}", stdout(&o));
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["verdict"], "inconclusive");
    assert_eq!(a["flushes_honoured"], false);
    assert_eq!(a["flushes_completed"], 16);
    assert_eq!(a["checked_blocks"], 512);
    assert_eq!(a["durable_blocks"], 512);
    // The same boot and no power cycles to read (a file, a loop device): unknown.
    assert_eq!(a["cut_evidence"], "unknown");

    let k = knobs_of(&journal);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .read(true)
        .open(target)
        .unwrap();
    f.write_all_at(&[0u8; 4096], 3 * 4096).unwrap();
    let mut older = vec![0u8; 4096];
    k.block_content(&k.pool(), 70, 1, &mut older);
    f.write_all_at(&older, 70 * 4096).unwrap();
    let mut moved = vec![0u8; 4096];
    f.read_exact_at(&mut moved, 100 * 4096).unwrap();
    f.write_all_at(&moved, 101 * 4096).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, target]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("did NOT honour"), "{}", stdout(&o));
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["flushes_honoured"], false);
    assert_eq!(a["lost_after_flush_blocks"], 2);
    assert_eq!(a["lost_after_flush_found"]["zeros"], 1);
    assert_eq!(a["lost_after_flush_found"]["older"], 1);
    assert_eq!(a["misdirected_blocks"], 1);
    assert_eq!(a["torn_blocks"], 0);
    assert_eq!(a["unacknowledged_lost_blocks"], 0);
    // The check run again replaced its cycle: still one.
    assert_eq!(a["cycles_checked"], 1);
    let m = &a["cycles"][0]["mismatches"];
    assert_eq!(m[0]["offset_bytes"], 3 * 4096);
    assert_eq!(m[1]["offset_bytes"], 70 * 4096);
    assert_eq!(m[1]["found_generation"], 1);
    assert_eq!(m[2]["found_offset_bytes"], 100 * 4096);
}

#[test]
fn on_a_file_damage_between_write_and_check_is_classed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("target.bin");
    write_damage_check(file.to_str().unwrap(), &[]);
}

#[test]
fn on_a_loop_device_damage_between_write_and_check_is_classed() {
    let lo = Loop::new(8 << 20, false);
    let dest = format!("--destructive={}", lo.dev);
    write_damage_check(&lo.dev, &[&dest]);
}

/// Two cycles on a device, the power "cut" by a command (here one that does nothing),
/// in one bundle; a power command that fails fails the run.
#[test]
fn cycles_accumulate_in_one_bundle() {
    let lo = Loop::new(8 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("journal");
    let dest = format!("--destructive={}", lo.dev);
    let args = |journal: &str, cmd: &'static str| {
        vec![
            "run".to_string(),
            "powerloss".into(),
            lo.dev.clone(),
            dest.clone(),
            "--short".into(),
            "--journal".into(),
            journal.into(),
            "--cycles".into(),
            "2".into(),
            "--power-cmd".into(),
            cmd.into(),
        ]
    };
    let a = args(j.to_str().unwrap(), "true");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut a = a.clone();
    a.extend(["--out", "b"]);
    let o = run_in(dir.path(), &a);
    // A power command that cuts nothing: every round was written before the "cut".
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("Inconclusive"), "{}", stdout(&o));
    let an = analysis(&dir.path().join("b"));
    assert_eq!(an["verdict"], "inconclusive");
    assert_eq!(an["cycles_checked"], 2);
    assert_eq!(an["flushes_completed"], 16);
    assert_eq!(an["checked_blocks"], 1024);
    assert_eq!(an["durable_blocks"], 1024);
    let text = std::fs::read_to_string(&j).unwrap();
    assert_eq!(text.matches("\"checked\"").count(), 2);
    // Each cycle recorded its power state before its rounds, and has its own evidence
    // (a loop device, the same boot: unknown).
    assert_eq!(text.matches("\"record\":\"cycle\"").count(), 2);
    for c in an["cycles"].as_array().unwrap() {
        assert_eq!(c["cut_evidence"], "unknown", "{c}");
        assert!(c["power_at_write"]["boot_id"].is_string(), "{c}");
    }

    let j2 = jdir.path().join("journal2");
    let a = args(j2.to_str().unwrap(), "exit 3");
    let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
    a.extend(["--out", "failed"]);
    let o = run_in(dir.path(), &a);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--power-cmd: exited with"),
        "{}",
        stderr(&o)
    );
    // The bundle says the run failed, and why.
    let doc = run_doc(&dir.path().join("failed"));
    assert_eq!(doc["status"], "failed");
    assert!(
        doc["notes"]
            .to_string()
            .contains("--power-cmd: exited with"),
        "{}",
        doc["notes"]
    );
}

fn run_doc(bundle: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(bundle.join("run.json")).unwrap()).unwrap()
}

/// Replace the bundle the journal's start record names.
fn point_journal_at(journal: &Path, bundle: &Path) {
    let text = std::fs::read_to_string(journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut start: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let key = start.as_object().unwrap().keys().next().unwrap().clone();
    let body = if start["bundle"].is_null() && start[&key].is_object() {
        &mut start[&key]
    } else {
        &mut start
    };
    body["bundle"] = bundle.display().to_string().into();
    lines[0] = start.to_string();
    std::fs::write(journal, lines.join("\n") + "\n").unwrap();
}

/// A journal whose start record names another run's bundle: the check refuses (exit 2)
/// and leaves that bundle byte for byte as it was.
#[test]
fn check_never_rewrites_another_runs_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("j");
    let j = j.to_str().unwrap();
    let file = dir.path().join("t.bin");
    let t = file.to_str().unwrap();
    let small = ["--rounds", "4", "--round-blocks", "64"];
    let mut w = vec!["run", "powerloss", t, "--journal", j, "--out", "pl1"];
    w.extend(small);
    let o = run_in(dir.path(), &w);
    assert!(o.status.success(), "{}", stderr(&o));
    let vj = jdir.path().join("victim.j");
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,power_cut=20ms";
    let vjs = vj.to_str().unwrap();
    let mut v = vec!["run", "powerloss", sim, "--journal", vjs, "--out", "victim"];
    v.extend(["--round-blocks", "64"]);
    let o = run_in(dir.path(), &v);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let victim = dir.path().join("victim");
    let before = std::fs::read(victim.join("run.json")).unwrap();
    point_journal_at(Path::new(j), &victim);
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, t]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not this run's"), "{}", stderr(&o));
    assert_eq!(std::fs::read(victim.join("run.json")).unwrap(), before);
}

/// A second write phase over the same target: the first journal's check does not blame
/// the drive for the second run's blocks (classed, not lost) and says it is inconclusive.
#[test]
fn a_later_run_over_the_same_target_is_not_the_drives_fault() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let file = dir.path().join("t.bin");
    let t = file.to_str().unwrap();
    let (j1, j2) = (jdir.path().join("j1"), jdir.path().join("j2"));
    for (j, out) in [(&j1, "b1"), (&j2, "b2")] {
        let o = run_in(
            dir.path(),
            &[
                "run",
                "powerloss",
                t,
                "--journal",
                j.to_str().unwrap(),
                "--out",
                out,
            ]
            .into_iter()
            .chain(["--rounds", "16", "--round-blocks", "64", "--keep"])
            .collect::<Vec<_>>(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run_in(
        dir.path(),
        &["run", "powerloss", "--check", j1.to_str().unwrap(), t],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("did NOT honour"), "{}", stdout(&o));
    let a = analysis(&dir.path().join("b1"));
    assert_eq!(a["lost_after_flush_blocks"], 0);
    assert_eq!(a["overwritten_by_another_run_blocks"], 512);
    assert_eq!(a["verdict"], "inconclusive");
}

/// A simulated cut after the write phase ended tests nothing: inconclusive, exit 1.
#[test]
fn a_simulated_cut_after_the_writes_is_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,power_cut=3600s";
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            sim,
            "--journal",
            "j",
            "--out",
            "b",
            "--round-blocks",
            "64",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("Inconclusive"), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains("honoured every flush"),
        "{}",
        stdout(&o)
    );
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["verdict"], "inconclusive");
    // The model's cut never came: no cut, and the sentence says so.
    assert_eq!(a["cut_evidence"], "none");
    assert!(
        stdout(&o).contains("Inconclusive: no power cut"),
        "{}",
        stdout(&o)
    );
}

/// Standard error closed under the run (`2>&1 | head -1`): no panic, the bundle ends
/// complete.
#[test]
fn a_closed_stderr_does_not_end_the_run() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,flush=honest,power_cut=20ms";
    let mut child = Command::new(env!("CARGO_BIN_EXE_drivelab"))
        .args(["run", "powerloss", sim, "--journal", "j", "--out", "b"])
        .args(["--round-blocks", "64"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let st = child.wait().unwrap();
    assert_ne!(st.code(), Some(101), "panicked");
    assert_eq!(run_doc(&dir.path().join("b"))["status"], "complete");
}

/// The simulated drive is cut by its model and checked in the same run: a drive that
/// ignores FLUSH fails (exit 1) and the report says so; an honest one passes.
#[test]
fn a_simulated_drive_that_ignores_flushes_fails_and_an_honest_one_passes() {
    let dir = tempfile::tempdir().unwrap();
    for (flush, code) in [("ignored", 1), ("honest", 0)] {
        let target = format!(
            "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,flush={flush},power_cut=20ms"
        );
        let journal = format!("{flush}.journal");
        let o = run_in(
            dir.path(),
            &[
                "run",
                "powerloss",
                &target,
                "--journal",
                &journal,
                "--out",
                flush,
                "--round-blocks",
                "64",
            ],
        );
        assert_eq!(o.status.code(), Some(code), "{flush}: {}", stderr(&o));
        let a = analysis(&dir.path().join(flush));
        assert_eq!(
            a["lost_after_flush_blocks"].as_u64().unwrap() > 0,
            code == 1
        );
        assert_eq!(a["cycles_checked"], 1);
        // The model's truth is in the bundle, and the check's counts equal it.
        let c = &a["cycles"][0];
        let t = &c["simulator_truth"];
        assert_eq!(t["block_bytes"], 4096, "{t}");
        assert_eq!(c["lost_after_flush_blocks"], t["lost_after_flush_blocks"]);
        let unack = t["lost_unflushed_blocks"].as_u64().unwrap()
            + t["lost_unacknowledged_blocks"].as_u64().unwrap();
        assert_eq!(c["unacknowledged_lost_blocks"], unack, "{c}");
        assert!(t["power_cut_at_ns"].as_u64().is_some(), "{t}");
    }
    let o = run_in(dir.path(), &["report", "ignored", "honest", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("Flush honesty"), "no section");
    assert!(html.contains("did NOT honour its flushes"));
    assert!(html.contains("honoured every flush"));
}

/// Bad input: one line naming the option, exit 2, nothing made.
#[test]
fn powerloss_refuses_what_it_cannot_test() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("j");
    let j = j.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["run", "powerloss", "sim:capacity=1G", "--journal", j],
            "power_cut=",
        ),
        (
            &[
                "run",
                "powerloss",
                "t.bin",
                "--journal",
                j,
                "--db",
                "r.sqlite",
            ],
            "--db",
        ),
        (&["run", "powerloss", "t.bin"], "--journal FILE: required"),
        (
            &["run", "powerloss", "t.bin", "--journal", "here.j"],
            "own disk",
        ),
        (&["run", "powerloss", "null", "--journal", j], "null target"),
        (
            &["run", "powerloss", "t.bin", "--journal", j, "--cycles", "2"],
            "--cycles",
        ),
        (&["run", "powerloss", "--check", j, "t.bin"], "--check"),
        (
            &["run", "powerloss", "--check", j, "sim:capacity=1G"],
            "--check",
        ),
    ];
    for (args, says) in cases {
        let o = run_in(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "something was made"
    );
    assert!(!Path::new(j).exists());
}

/// A dm-log-writes log image (4 KiB sectors): block 1 written, a flush, block 2
/// written, a flush, a mark "end".
fn log_writes_image() -> Vec<u8> {
    use drivelab_engine::log_writes::{FLAG_FLUSH, FLAG_MARK, MAGIC, VERSION};
    const SS: usize = 4096;
    let mut img = vec![0u8; SS];
    let mut entry = |sector: u64, flags: u64, data: &[u8], mark: &str| {
        let mut b = vec![0u8; SS];
        let fields = [sector, (data.len() / SS) as u64, flags, mark.len() as u64];
        for (i, v) in fields.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b[32..32 + mark.len()].copy_from_slice(mark.as_bytes());
        img.extend_from_slice(&b);
        img.extend_from_slice(data);
    };
    entry(1, 0, &[0xaa; SS], "");
    entry(0, FLAG_FLUSH, &[], "");
    entry(2, 0, &[0xbb; SS], "");
    entry(0, FLAG_FLUSH, &[], "");
    entry(0, FLAG_MARK, &[], "end");
    img[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    img[8..16].copy_from_slice(&VERSION.to_le_bytes());
    img[16..24].copy_from_slice(&5u64.to_le_bytes());
    img[24..28].copy_from_slice(&(SS as u32).to_le_bytes());
    img
}

#[test]
fn lab_replay_log_replays_to_a_flush_and_refuses_a_missing_one_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    std::fs::write(&log, log_writes_image()).unwrap();
    let lo = Loop::with_sector(1 << 20, false, 4096);
    let destructive = format!("--destructive={}", lo.dev);
    let replay = |until: &[&str]| {
        let mut args = vec![
            "lab-replay-log",
            log.to_str().unwrap(),
            &lo.dev,
            &destructive,
        ];
        args.extend_from_slice(until);
        run_in(dir.path(), &args)
    };
    let block = |n: u64| {
        let mut b = vec![0u8; 4096];
        std::fs::File::open(lo.image())
            .unwrap()
            .read_exact_at(&mut b, n * 4096)
            .unwrap();
        b
    };
    // Asked for what the log does not have: exit 2, one line, nothing written.
    for (until, says) in [
        (["--to-flush", "3"], "no flush number 3"),
        (["--to-mark", "nope"], "no mark \"nope\""),
    ] {
        let o = replay(&until);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    assert!(block(1).iter().all(|&b| b == 0), "nothing written");
    // Up to the first flush: block 1 only.
    let o = replay(&["--to-flush", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let done: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (done["writes"].as_u64(), done["bytes_written"].as_u64()),
        (Some(1), Some(4096))
    );
    assert!(block(1).iter().all(|&b| b == 0xaa));
    assert!(block(2).iter().all(|&b| b == 0));
    // To the mark: both.
    let o = replay(&["--to-mark", "end"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(block(2).iter().all(|&b| b == 0xbb));
}

/// A journal beside a loop device's backing file shares the loop's drive: refused.
#[test]
fn a_journal_beside_a_loop_devices_backing_file_is_refused() {
    let lo = Loop::new(8 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let j = lo.image().with_file_name("journal");
    let dest = format!("--destructive={}", lo.dev);
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            &lo.dev,
            &dest,
            "--journal",
            j.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("own disk"), "{}", stderr(&o));
    assert!(!j.exists());
}

fn bundle_status(bundle: &Path) -> serde_json::Value {
    run_doc(bundle)["status"].clone()
}

/// A write phase stopped by a signal (Ctrl-C, SIGTERM), with no power cut, tested
/// nothing: the journal says so, the run exits 130 with its bundle interrupted, and the
/// check is inconclusive (exit 1) and leaves the bundle interrupted, never "honoured".
#[test]
fn a_write_phase_stopped_by_a_signal_is_inconclusive() {
    for sig in ["INT", "TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let jdir = journal_dir();
        let journal = jdir.path().join("journal");
        let j = journal.to_str().unwrap();
        let mut child = common::drivelab()
            .args(["run", "powerloss", "f.bin", "--journal", j, "--out", "b"])
            .args(["--rounds", "4000000", "--round-blocks", "16"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // A round flushed and journalled: the phase has tested something by then.
        wait_until("a flushed round in the journal", || {
            std::fs::read_to_string(&journal).is_ok_and(|t| t.contains(r#""record":"flushed""#))
        });
        signal(child.id(), sig);
        assert_eq!(child.wait().unwrap().code(), Some(130), "{sig}");
        let last = std::fs::read_to_string(&journal).unwrap();
        let last: Record = serde_json::from_str(last.lines().last().unwrap()).unwrap();
        assert!(
            matches!(
                last,
                Record::Ended {
                    end: drivelab_suites::powerloss::WriteEnd::Interrupted,
                    ..
                }
            ),
            "{sig}: {last:?}"
        );
        let b = dir.path().join("b");
        assert_eq!(bundle_status(&b), "interrupted", "{sig}");
        let o = run_in(dir.path(), &["run", "powerloss", "--check", j, "f.bin"]);
        assert_eq!(o.status.code(), Some(1), "{sig}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("interrupted by a signal, not ended by a power cut"),
            "{sig}: {}",
            stdout(&o)
        );
        let a = analysis(&b);
        assert_eq!(a["verdict"], "inconclusive", "{sig}");
        assert_eq!(a["cycles"][0]["write_end"], "interrupted", "{sig}");
        assert_eq!(bundle_status(&b), "interrupted", "{sig}");
    }
}

/// Write a short powerloss phase on `target`, then let `drivelab io` write its first
/// MiB with `--verify` in blocks of `bs` (each write's header only at its start): the
/// check classes every block of it as overwritten by another run, blames nothing on the
/// drive and is inconclusive.
fn another_drivelab_run_over(target: &str, dest: &[&str]) {
    for bs in ["128k", "4k"] {
        let dir = tempfile::tempdir().unwrap();
        let jdir = journal_dir();
        let j = jdir.path().join("j");
        let j = j.to_str().unwrap();
        let mut args = vec!["run", "powerloss", target, "--short", "--journal", j];
        args.extend(["--out", "b", "--keep"]);
        args.extend(dest);
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut args = vec!["io", target, "--rw", "write", "--bs", bs, "--size", "1M"];
        args.extend(["--verify", "--overwrite", "--keep"]);
        args.extend(dest);
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{bs}: {}", stderr(&o));
        let o = run_in(dir.path(), &["run", "powerloss", "--check", j, target]);
        assert_eq!(o.status.code(), Some(1), "{bs}: {}", stderr(&o));
        assert!(
            !stdout(&o).contains("did NOT honour"),
            "{bs}: {}",
            stdout(&o)
        );
        let a = analysis(&dir.path().join("b"));
        assert_eq!(a["lost_after_flush_blocks"], 0, "{bs}");
        assert_eq!(a["overwritten_by_another_run_blocks"], 256, "{bs}");
        assert_eq!(a["durable_blocks"], 512 - 256, "{bs}");
        assert_eq!(a["verdict"], "inconclusive", "{bs}");
    }
}

#[test]
fn blocks_inside_a_larger_write_of_another_run_are_not_the_drives_fault() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.bin");
    another_drivelab_run_over(file.to_str().unwrap(), &[]);
}

#[test]
fn on_a_loop_device_another_runs_larger_writes_are_not_the_drives_fault() {
    let lo = Loop::new(8 << 20, false);
    let dest = format!("--destructive={}", lo.dev);
    another_drivelab_run_over(&lo.dev, &[&dest]);
}

/// A target formatted and mounted since the write phase holds a filesystem's writes:
/// the check refuses it (one line, exit 2) rather than blame the drive.
#[test]
fn a_mounted_target_is_refused_by_the_check() {
    let lo = Loop::new(8 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("j");
    let j = j.to_str().unwrap();
    let dest = format!("--destructive={}", lo.dev);
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            &lo.dev,
            "--short",
            "--journal",
            j,
            "--out",
            "b",
            &dest,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(dir.path().join("b/run.json")).unwrap();
    let m = common::Mount::new(&lo.dev);
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, &lo.dev]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("is mounted on") && e.contains("unmount"), "{e}");
    assert!(stdout(&o).is_empty());
    assert_eq!(
        std::fs::read(dir.path().join("b/run.json")).unwrap(),
        before
    );
    drop(m);
}

/// A corrupt journal is bad input: one line naming it, exit 2, nothing written.
#[test]
fn a_corrupt_journal_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("j");
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            "t.bin",
            "--short",
            "--journal",
            j.to_str().unwrap(),
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&j).unwrap();
    let before = std::fs::read(dir.path().join("b/run.json")).unwrap();
    let outside = text.replacen(r#""ranges":[[0,64]]"#, r#""ranges":[[100000,64]]"#, 1);
    let too_many = text.replacen(r#""ranges":[[0,64]]"#, r#""ranges":[[0,100000000000]]"#, 1);
    let bad_knobs = text.replacen(r#""round_blocks":64"#, r#""round_blocks":0"#, 1);
    for (what, bad) in [
        ("outside", outside),
        ("more than a round", too_many),
        ("--round-blocks", bad_knobs),
    ] {
        let bad_j = jdir.path().join("bad");
        std::fs::write(&bad_j, bad).unwrap();
        let o = run_in(
            dir.path(),
            &[
                "run",
                "powerloss",
                "--check",
                bad_j.to_str().unwrap(),
                "t.bin",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            e.starts_with("drivelab: --check ") && e.contains(what),
            "{e}"
        );
        std::fs::remove_file(&bad_j).unwrap();
    }
    assert_eq!(
        std::fs::read(dir.path().join("b/run.json")).unwrap(),
        before
    );
}

/// The help says what powerloss takes: no `null` target, a test file kept for the
/// check, and no --db (refused: a run is recorded after its check).
#[test]
fn powerloss_help_says_what_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["run", "powerloss", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = stdout(&o);
    assert!(
        !h.contains("`null`") && !h.contains("created and removed"),
        "{h}"
    );
    assert!(h.contains("kept for the check"), "{h}");
    assert!(
        !h.contains("Record the finished run in this results database"),
        "{h}"
    );
}

/// A target formatted (not mounted) since the write phase: its blocks are the new
/// filesystem's, not what the drive kept: inconclusive, nothing blamed on the drive.
#[test]
fn a_target_formatted_since_the_write_phase_is_inconclusive() {
    let lo = Loop::new(8 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("j");
    let dest = format!("--destructive={}", lo.dev);
    let js = j.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            &lo.dev,
            "--short",
            "--journal",
            js,
            "--out",
            "b",
            &dest,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // At once: the superblock's times are whole seconds, a format in the run's own
    // second must count too.
    let mk = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .output()
        .unwrap();
    assert!(mk.status.success(), "{}", stderr(&mk));
    let o = run_in(dir.path(), &["run", "powerloss", "--check", js, &lo.dev]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("did NOT honour"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("formatted since the write phase"),
        "{}",
        stdout(&o)
    );
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["verdict"], "inconclusive");
    assert_eq!(a["cycles"][0]["target_rewritten"], true);
}

/// Swap space, xfs or vfat made on the target since the write phase (any signature
/// `blkid -p` knows that the run's probe before its rounds did not see): inconclusive,
/// naming what was found; the same target checked untouched before keeps its verdict.
#[test]
fn a_target_made_swap_xfs_or_vfat_since_the_write_phase_is_inconclusive() {
    // mkfs.xfs makes nothing under 300 MB.
    let cases: [(&str, &[&str], u64, &str); 3] = [
        ("mkswap", &[], 8 << 20, "swap space (UUID "),
        (
            "mkfs.vfat",
            &[],
            8 << 20,
            "a filesystem of type vfat (UUID ",
        ),
        (
            "mkfs.xfs",
            &["-q", "-f"],
            320 << 20,
            "a filesystem of type xfs (UUID ",
        ),
    ];
    for (mkfs, args, size, found) in cases {
        // A write phase that died after round 5: untouched, the drive kept it all.
        let (lo, dir, _jdir, journal, _) = write_on_a_loop_device_of(size, "8");
        rewrite_journal(&journal, Some(5), |_| {});
        let check = [
            "run",
            "powerloss",
            "--check",
            journal.to_str().unwrap(),
            &lo.dev,
        ];
        let untouched = run_in(dir.path(), &check);
        assert_eq!(untouched.status.code(), Some(0), "{}", stdout(&untouched));
        let a = analysis(&dir.path().join("b"));
        assert_eq!(a["verdict"], "honoured", "{mkfs}: {a}");
        assert_eq!(a["cycles"][0]["target_rewritten"], false);
        assert_eq!(a["cycles"][0]["new_signature"], serde_json::Value::Null);

        let mk = std::process::Command::new(mkfs)
            .args(args)
            .arg(&lo.dev)
            .output()
            .unwrap();
        assert!(mk.status.success(), "{mkfs}: {}", stderr(&mk));
        let o = run_in(dir.path(), &check);
        // As with any inconclusive check: exit 1, nothing blamed on the drive.
        assert_eq!(o.status.code(), Some(1), "{mkfs}: {}", stderr(&o));
        let said = stdout(&o);
        assert!(!said.contains("did NOT honour"), "{mkfs}: {said}");
        assert!(said.contains(found), "{mkfs}: {said}");
        assert!(said.contains("formatted since the write phase"), "{said}");
        let a = analysis(&dir.path().join("b"));
        assert_eq!(a["verdict"], "inconclusive", "{mkfs}: {a}");
        let c = &a["cycles"][0];
        assert_eq!(c["target_rewritten"], true);
        assert!(c["new_signature"]["uuid"].is_string(), "{c}");
    }
}

/// A simulated drive's cut is the model's own: shown, whatever the host.
#[test]
fn a_simulated_cut_is_its_own_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,flush=honest,power_cut=20ms";
    let args = ["run", "powerloss", sim, "--journal", "j", "--out", "b"];
    let o = run_in(dir.path(), &[&args[..], &["--round-blocks", "64"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = analysis(&dir.path().join("b"));
    assert_eq!(
        (&a["verdict"], &a["cut_evidence"]),
        (&"honoured".into(), &"simulated_cut".into())
    );
    assert!(stdout(&o).contains("Power cut: shown"), "{}", stdout(&o));
    // No cycle record: a simulated drive has no boot or drive of its own.
    assert!(!std::fs::read_to_string(dir.path().join("j"))
        .unwrap()
        .contains("\"record\":\"cycle\""));
}

/// Rewrite the journal: keep its records up to the `flushed` record of round `last`
/// (a write phase that died there), and let `edit` change its `cycle` record.
fn rewrite_journal(journal: &Path, last: Option<u64>, edit: impl Fn(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(journal).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let mut r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["record"] == "cycle" {
            edit(&mut r);
        }
        out.push(r.to_string());
        if last.is_some_and(|n| r["record"] == "flushed" && r["round"] == n) {
            break;
        }
    }
    std::fs::write(journal, out.join("\n") + "\n").unwrap();
}

/// A write phase of `rounds` rounds of 64 blocks on a new loop device, into bundle `b`
/// of a new folder, its journal on a tmpfs.
fn write_on_a_loop_device(rounds: &str) -> LoopWrite {
    write_on_a_loop_device_of(8 << 20, rounds)
}

/// A write phase's loop device, folder, journal's folder, journal and output.
type LoopWrite = (
    Loop,
    tempfile::TempDir,
    tempfile::TempDir,
    std::path::PathBuf,
    std::process::Output,
);

/// [`write_on_a_loop_device`] on a loop device of `size` bytes.
fn write_on_a_loop_device_of(size: u64, rounds: &str) -> LoopWrite {
    let lo = Loop::new(size, false);
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let journal = jdir.path().join("journal");
    let dest = format!("--destructive={}", lo.dev);
    let j = journal.to_str().unwrap();
    let mut args = vec!["run", "powerloss", &lo.dev, &dest, "--journal", j];
    args.extend(["--out", "b", "--rounds", rounds, "--round-blocks", "64"]);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    (lo, dir, jdir, journal, o)
}

/// A write phase stopped after round 5 (it died, or Ctrl-C) and checked with no power
/// cut, on a loop device (no power cycles to read, the same boot): every block is there,
/// the verdict stands but says the cut could not be confirmed; the journal recorded the
/// boot id and the device. The same journal with another boot id: the cut is shown.
#[test]
fn a_check_without_a_cut_on_a_loop_device_says_the_cut_is_unconfirmed() {
    // 8 rounds fill the ring once: the blocks of the rounds after the cut journal's last
    // are not checked.
    let (lo, dir, _jdir, journal, o) = write_on_a_loop_device("8");
    let j = journal.to_str().unwrap();
    assert!(
        stderr(&o).contains("power-cycle count cannot be read"),
        "{}",
        stderr(&o)
    );
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let text = std::fs::read_to_string(&journal).unwrap();
    let cycle: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(cycle["record"], "cycle", "{cycle}");
    assert_eq!(cycle["power"]["boot_id"], boot.trim(), "{cycle}");
    assert_eq!(cycle["power"]["power_cycles"], serde_json::Value::Null);
    assert_eq!(cycle["drive"]["model"], "Linux loop device", "{cycle}");

    rewrite_journal(&journal, Some(5), |_| {});
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, &lo.dev]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("Power cut: could not be confirmed (same boot"),
        "{}",
        stdout(&o)
    );
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["verdict"], "honoured");
    assert_eq!(a["cut_evidence"], "unknown");
    let c = &a["cycles"][0];
    assert_eq!(c["cut_evidence"], "unknown");
    assert!(c["cut_evidence_note"]
        .as_str()
        .unwrap()
        .contains("loop device"));
    assert_eq!(c["power_at_check"]["boot_id"], boot.trim());
    assert_eq!(a["checked_blocks"], 384);

    // The host restarted since the write phase (its boot id in the journal is another).
    rewrite_journal(&journal, None, |r| {
        r["power"]["boot_id"] = "00000000-0000-0000-0000-000000000000".into()
    });
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, &lo.dev]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Power cut: shown"), "{}", stdout(&o));
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["cut_evidence"], "boot_changed");
    assert_eq!(a["verdict"], "honoured");
    assert_eq!(a["cycles_checked"], 1);
    let o = run_in(dir.path(), &["report", "b", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("Power cut evidence"), "no column");
    assert!(
        html.contains("the host&#39;s boot id changed")
            || html.contains("the host's boot id changed")
    );

    // A journal from before the cycle record (an older drivelab's): still checked, the
    // cut unknown.
    let text = std::fs::read_to_string(&journal).unwrap();
    let old: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("\"record\":\"cycle\""))
        .collect();
    std::fs::write(&journal, old.join("\n") + "\n").unwrap();
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, &lo.dev]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["cut_evidence"], "unknown");
    let note = a["cycles"][0]["cut_evidence_note"].as_str().unwrap();
    assert!(note.contains("older drivelab"), "{note}");
}

/// A journal written to another drive (its serial edited here): the check refuses in
/// one line, exit 2, and writes nothing (the journal and the bundle stay as they were).
#[test]
fn a_check_on_another_drive_is_refused() {
    let (lo, dir, _jdir, journal, _) = write_on_a_loop_device("4");
    let j = journal.to_str().unwrap();
    rewrite_journal(&journal, None, |r| {
        r["drive"]["serial"] = "S4EVNX0N123456".into()
    });
    let (journal_before, doc_before) = (
        std::fs::read(&journal).unwrap(),
        std::fs::read(dir.path().join("b/run.json")).unwrap(),
    );
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, &lo.dev]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("not the drive the journal was written to"),
        "{e}"
    );
    assert!(e.contains("serial S4EVNX0N123456"), "{e}");
    assert_eq!(std::fs::read(&journal).unwrap(), journal_before);
    assert_eq!(
        std::fs::read(dir.path().join("b/run.json")).unwrap(),
        doc_before
    );
}

/// `db record` of a powerloss bundle before its check is refused in one line (exit 2,
/// nothing written); after the check the bundle is recorded with its result.
#[test]
fn an_unchecked_bundle_is_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let journal = jdir.path().join("journal");
    let j = journal.to_str().unwrap();
    let target = dir.path().join("target.bin");
    let t = target.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &["run", "powerloss", t, "--journal", j, "--out", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let record = ["db", "--db", "t.sqlite", "record", "b"];
    let o = run_in(dir.path(), &record);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("check it first: drivelab run powerloss --check JOURNAL TARGET"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("t.sqlite").exists());
    // Nor pushed to a server (refused before anything is sent: no server listens there).
    let push = ["db", "push", "http://127.0.0.9:9/", "b", "--token", "t"];
    let o = run_in(dir.path(), &push);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("check it first"), "{}", stderr(&o));
    // The report says where the verdict is still to come.
    let o = run_in(dir.path(), &["report", "b", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("not checked yet"), "no 'not checked yet'");

    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, t]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mut id = String::new();
    for _ in 0..2 {
        let o = run_in(dir.path(), &record);
        assert!(o.status.success(), "{}", stderr(&o));
        id = stdout(&o).split_whitespace().next().unwrap().to_string();
    }
    let o = run_in(dir.path(), &["db", "--db", "t.sqlite", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("complete"), "{}", stdout(&o));
    assert_eq!(stdout(&o).matches("powerloss").count(), 1, "{}", stdout(&o));
    // db show has the check's verdict.
    let o = run_in(dir.path(), &["db", "--db", "t.sqlite", "show", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["verdict", "inconclusive"]),
        "{}",
        stdout(&o)
    );
}

/// Two runs with the same settings are one test: the seed drivelab picks per run is not
/// a setting, so `compare` compares them and `report` does not call them different tests.
#[test]
fn two_runs_with_the_same_settings_compare() {
    let dir = tempfile::tempdir().unwrap();
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,flush=ignored,power_cut=20ms";
    for b in ["b1", "b2"] {
        let journal = format!("{b}.journal");
        let args = ["run", "powerloss", sim, "--journal", &journal, "--out", b];
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
    assert_ne!(
        run_doc(&dir.path().join("b1"))["knobs"]["seed"],
        run_doc(&dir.path().join("b2"))["knobs"]["seed"]
    );
    let o = run_in(dir.path(), &["compare", "b1", "b2"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // The verdict is a row of its own, beside the block counts.
    let row = stdout(&o)
        .lines()
        .find(|l| l.starts_with("verdict"))
        .map(str::to_string);
    assert_eq!(
        row.as_deref().map(|l| l
            .split("  ")
            .filter(|c| !c.trim().is_empty())
            .map(str::trim)
            .collect::<Vec<_>>()),
        Some(vec!["verdict", "not honoured", "not honoured"]),
        "{}",
        stdout(&o)
    );
    let o = run_in(dir.path(), &["report", "b1", "b2", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(!html.contains("Not the same test"));
}

/// A refusal after the journal's checks is not preceded by the tmpfs warning: one line.
#[test]
fn the_tmpfs_warning_does_not_precede_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let jdir = journal_dir();
    let j = jdir.path().join("journal");
    let target = dir.path().join("nodir").join("x");
    let args = [
        "run",
        "powerloss",
        target.to_str().unwrap(),
        "--journal",
        j.to_str().unwrap(),
        "--out",
        "b",
    ];
    let o = run_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!stderr(&o).contains("tmpfs"), "{}", stderr(&o));
}
