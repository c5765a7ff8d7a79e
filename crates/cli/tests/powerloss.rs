//! `drivelab run powerloss`: the write phase and `--check` on a regular file and a loop
//! device (blocks the test damages between them are reported in their class), cycles
//! in one bundle, the simulated drive cut by its model, and the refusals.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{run_in, stderr, stdout, Loop};
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
    let o = run_in(dir.path(), &["run", "powerloss", "--check", j, target]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("honoured every flush"),
        "{}",
        stdout(&o)
    );
    let a = analysis(&dir.path().join("b"));
    assert_eq!(a["flushes_completed"], 16);
    assert_eq!(a["checked_blocks"], 512);
    assert_eq!(a["durable_blocks"], 512);

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
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let an = analysis(&dir.path().join("b"));
    assert_eq!(an["cycles_checked"], 2);
    assert_eq!(an["flushes_completed"], 16);
    assert_eq!(an["checked_blocks"], 1024);
    assert_eq!(an["durable_blocks"], 1024);
    let text = std::fs::read_to_string(&j).unwrap();
    assert_eq!(text.matches("\"checked\"").count(), 2);

    let j2 = jdir.path().join("journal2");
    let a = args(j2.to_str().unwrap(), "exit 3");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = run_in(dir.path(), &a);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--power-cmd: exited with"),
        "{}",
        stderr(&o)
    );
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
    let cases: [(&[&str], &str); 7] = [
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
