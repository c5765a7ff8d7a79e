//! `drivelab trace record` on loop devices: the recorded trace is what was issued
//! (counts, offsets, sizes, operations, order, the issuing process), flushes and FUA
//! from a filesystem show, and the kernel's tracing is left as it was on every ending.
//! Root only (loop devices, tracefs). The kernel has one block tracer: the tests take
//! turns.

mod common;

use std::path::Path;
use std::sync::Mutex;

use common::{drivelab, run_in, stderr, Loop, Mount};
use drivelab_trace::native::Reader;
use drivelab_trace::{Header, Op, Record};

static TRACER: Mutex<()> = Mutex::new(());

/// The records of a trace, with each one's process name.
fn read_trace(p: &Path) -> (Header, Vec<(Record, String)>) {
    let f = std::fs::File::open(p).unwrap();
    let mut r = Reader::new(std::io::BufReader::new(f)).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next() {
        let rec = rec.unwrap();
        let name = rec
            .pid
            .and_then(|p| r.process_name(p))
            .unwrap_or("")
            .to_string();
        out.push((rec, name));
    }
    (r.header().clone(), out)
}

fn trace_enabled(dev: &str) -> String {
    let name = Path::new(dev)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::read_to_string(format!("/sys/block/{name}/trace/enable"))
        .unwrap()
        .trim()
        .to_string()
}

/// Nothing of a recording is left: the device's trace removed, no tracefs mount of ours.
fn nothing_left(dev: &str) {
    assert_eq!(
        trace_enabled(dev),
        "0",
        "the device's block trace was removed"
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains("drivelab-tracefs."), "{mounts}");
    if let Ok(t) = std::fs::read_to_string("/sys/kernel/tracing/current_tracer") {
        assert_eq!(t.trim(), "nop");
    }
}

/// Record `drivelab io DEV ARGS` on `dev`; the records drivelab's jobs issued.
fn record_io(dev: &str, dir: &Path, out: &str, io_args: &[&str]) -> Vec<Record> {
    let exe = env!("CARGO_BIN_EXE_drivelab");
    let mut args = vec![
        "trace",
        "record",
        dev,
        "-o",
        out,
        "--",
        exe,
        "io",
        dev,
        "--destructive",
        dev,
        "--sensors",
        "none",
    ];
    args.extend(io_args);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    nothing_left(dev);
    let (h, recs) = read_trace(&dir.join(out));
    assert_eq!(h.source_format, "record");
    assert_eq!(h.source_path.as_deref(), Some(dev));
    assert_eq!(h.device_size_bytes, Some(64 << 20));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let start = h.start_unix_ns.expect("a recording knows when it started");
    let age_s = (now.as_nanos() as u64).saturating_sub(start) / 1_000_000_000;
    assert!(age_s < 600, "started {age_s} s ago");
    recs.into_iter()
        .filter(|(_, name)| name.starts_with("drivelab-job"))
        .map(|(r, _)| r)
        .collect()
}

type Stderr = std::io::BufReader<std::process::ChildStderr>;

/// `trace record DEV -o OUT --duration 10m` in `dir`, once it says it has started
/// (its first line on stderr: the tracer is set up), with the rest of its stderr (kept
/// open while the child runs: it writes there when it ends).
fn start_recording(dev: &str, dir: &Path, out: &str) -> (std::process::Child, Stderr) {
    let mut child = drivelab()
        .args(["trace", "record", dev, "-o", out, "--duration", "10m"])
        .current_dir(dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    assert!(line.starts_with("recording "), "{line}");
    (child, err)
}

#[test]
fn a_sequential_run_is_recorded_io_by_io() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let recs = record_io(
        &lo.dev,
        d.path(),
        "seq.dltrace",
        &[
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "2M",
            "--io_size",
            "2M",
        ],
    );
    let got: Vec<(Op, u64, u64)> = recs
        .iter()
        .map(|r| (r.op, r.offset_bytes, r.len_bytes))
        .collect();
    let want: Vec<(Op, u64, u64)> = (0..32).map(|i| (Op::Write, i * 65536, 65536)).collect();
    assert_eq!(got, want);
    assert!(recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
    assert!(
        recs.iter()
            .all(|r| r.service_ns.is_some() && r.pid.is_some()),
        "{recs:?}"
    );
}

#[test]
fn a_random_write_run_is_recorded_where_its_data_landed() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let io = [
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--io_size",
        "1M",
        "--randseed",
        "7",
    ];
    let recs = record_io(&lo.dev, d.path(), "w.dltrace", &io);
    assert_eq!(recs.len(), 256, "1 MiB of 4 KiB writes");
    assert!(recs
        .iter()
        .all(|r| r.op == Op::Write && r.len_bytes == 4096));
    // drivelab stamps every sector it writes with its own offset: the blocks that hold
    // data on the fresh device are exactly the blocks the trace says were written.
    let data = std::fs::read(&lo.dev).unwrap();
    let landed: std::collections::BTreeSet<u64> = data[..8 << 20]
        .chunks(4096)
        .enumerate()
        .filter(|(_, b)| b.iter().any(|&x| x != 0))
        .map(|(i, b)| {
            assert_eq!(common::stamp(b).0, i as u64 * 4096, "block {i}");
            i as u64 * 4096
        })
        .collect();
    let recorded: std::collections::BTreeSet<u64> = recs.iter().map(|r| r.offset_bytes).collect();
    assert_eq!(recorded, landed);
}

#[test]
fn a_seeded_random_run_records_the_same_ios_each_time() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let io = [
        "--rw",
        "randrw",
        "--rwmixread",
        "50",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--io_size",
        "1M",
        "--randseed",
        "42",
    ];
    let a = record_io(&lo.dev, d.path(), "a.dltrace", &io);
    let b = record_io(&lo.dev, d.path(), "b.dltrace", &io);
    let key = |v: &[Record]| {
        v.iter()
            .map(|r| (r.op, r.offset_bytes, r.len_bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(a.len(), 256, "1 MiB of 4 KiB I/Os");
    assert_eq!(
        key(&a),
        key(&b),
        "the same seed, the same I/Os in the same order"
    );
    assert!(a
        .iter()
        .all(|r| r.len_bytes == 4096 && r.offset_bytes % 4096 == 0 && r.offset_bytes < 8 << 20));
    let reads = a.iter().filter(|r| r.op == Op::Read).count();
    assert!(
        (64..=192).contains(&reads),
        "a mix of reads and writes: {reads} reads"
    );
}

#[test]
fn a_file_copy_through_a_filesystem_shows_its_writes_and_flushes() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let m = Mount::new(&lo.dev);
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src.bin");
    std::fs::write(&src, vec![7u8; 3 << 20]).unwrap();
    let dst = m.dir.path().join("dst.bin");
    let script = format!("cp {} {} && sync", src.display(), dst.display());
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &lo.dev,
            "-o",
            "cp.dltrace",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    nothing_left(&lo.dev);
    let (_, recs) = read_trace(&d.path().join("cp.dltrace"));
    let written: u64 = recs
        .iter()
        .filter(|(r, _)| r.op == Op::Write)
        .map(|(r, _)| r.len_bytes)
        .sum();
    assert!(
        written >= 3 << 20,
        "the file's 3 MiB and the journal were written: {written}"
    );
    assert!(
        recs.iter().any(|(r, _)| r.op == Op::Flush || r.fua),
        "ext4's journal commit flushes or writes through: {recs:?}"
    );
    assert!(recs
        .iter()
        .all(|(r, _)| r.offset_bytes + r.len_bytes <= 64 << 20));
}

#[test]
fn sigterm_ends_a_recording_with_its_trace_and_nothing_left_running() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let (mut child, _err) = start_recording(&lo.dev, d.path(), "t.dltrace");
    assert_eq!(trace_enabled(&lo.dev), "1");
    let o = std::process::Command::new("dd")
        .args([
            &format!("of={}", lo.dev),
            "if=/dev/zero",
            "bs=4k",
            "count=3",
            "oflag=direct",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    common::signal(child.id(), "TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    nothing_left(&lo.dev);
    let (_, recs) = read_trace(&d.path().join("t.dltrace"));
    let dd: Vec<(Op, u64, u64)> = recs
        .iter()
        .filter(|(_, n)| n == "dd")
        .map(|(r, _)| (r.op, r.offset_bytes, r.len_bytes))
        .collect();
    assert_eq!(
        dd,
        [
            (Op::Write, 0, 4096),
            (Op::Write, 4096, 4096),
            (Op::Write, 8192, 4096)
        ]
    );
}

#[test]
fn a_failed_command_is_exit_1_with_its_trace_written() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let script = format!(
        "dd if={} of=/dev/null bs=8k count=2 iflag=direct && exit 3",
        lo.dev
    );
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &lo.dev,
            "-o",
            "f.dltrace",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ended with exit status: 3; its trace was written"),
        "{}",
        stderr(&o)
    );
    nothing_left(&lo.dev);
    let (_, recs) = read_trace(&d.path().join("f.dltrace"));
    let dd: Vec<(Op, u64, u64)> = recs
        .iter()
        .filter(|(_, n)| n == "dd")
        .map(|(r, _)| (r.op, r.offset_bytes, r.len_bytes))
        .collect();
    assert_eq!(
        dd,
        [(Op::Read, 0, 8192), (Op::Read, 8192, 8192)],
        "{recs:?}"
    );
}

#[test]
fn a_second_signal_ends_at_once_and_still_leaves_no_tracing_behind() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let (mut child, mut err) = start_recording(&lo.dev, d.path(), "t.dltrace");
    // Whether the second comes before the first is handled or after, the same end.
    common::signal(child.id(), "TERM");
    common::signal(child.id(), "TERM");
    let code = child.wait().unwrap().code();
    let mut said = String::new();
    std::io::Read::read_to_string(&mut err, &mut said).unwrap();
    assert_eq!(code, Some(130), "{said}");
    nothing_left(&lo.dev);
    assert!(scratch_files(d.path()).is_empty());
    assert!(!Path::new("/run/drivelab-trace-record.json").exists());
}

#[test]
fn a_discard_is_recorded_with_its_range() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let args = [
        "trace",
        "record",
        &lo.dev,
        "-o",
        "d.dltrace",
        "--",
        "blkdiscard",
        "-o",
        "1048576",
        "-l",
        "4194304",
        &lo.dev,
    ];
    let o = run_in(d.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    nothing_left(&lo.dev);
    let (_, recs) = read_trace(&d.path().join("d.dltrace"));
    let discards: Vec<&Record> = recs
        .iter()
        .map(|(r, _)| r)
        .filter(|r| r.op == Op::Discard)
        .collect();
    assert!(!discards.is_empty(), "{recs:?}");
    let lo_end = discards.iter().map(|r| r.offset_bytes).min().unwrap();
    let hi_end = discards
        .iter()
        .map(|r| r.offset_bytes + r.len_bytes)
        .max()
        .unwrap();
    let total: u64 = discards.iter().map(|r| r.len_bytes).sum();
    assert_eq!(
        (lo_end, hi_end, total),
        (1 << 20, 5 << 20, 4 << 20),
        "{discards:?}"
    );
}

/// The whole loop of issue 15: a seeded run recorded on one device, replayed on a second
/// while that one is recorded too; the second recording is the first, I/O for I/O.
#[test]
fn a_recorded_run_replays_on_another_device_as_the_same_ios_in_the_same_order() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let first = Loop::new(64 << 20, false);
    let second = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let issued = record_io(
        &first.dev,
        d.path(),
        "first.dltrace",
        &[
            "--rw",
            "randrw",
            "--bssplit",
            "4k/50:64k/50",
            "--iodepth",
            "4",
            "--ioengine",
            "io_uring",
            "--size",
            "16M",
            "--io_size",
            "2M",
            "--randseed",
            "11",
        ],
    );
    assert!(issued.len() > 40, "{} I/Os recorded", issued.len());
    let (_, all_first) = read_trace(&d.path().join("first.dltrace"));
    // Besides its jobs' I/Os, drivelab's own checks read the first sector before a run.
    let checks = |v: &[(Record, String)]| {
        v.iter()
            .filter(|(_, n)| !n.starts_with("drivelab-job") && n.starts_with("drivelab"))
            .filter(|(r, _)| r.op == Op::Read && r.offset_bytes == 0)
            .count()
    };
    assert_eq!(
        all_first.len(),
        issued.len() + checks(&all_first),
        "{all_first:?}"
    );

    let exe = env!("CARGO_BIN_EXE_drivelab");
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &second.dev,
            "-o",
            "second.dltrace",
            "--",
            exe,
            "run",
            "replay",
            "first.dltrace",
            &second.dev,
            "--destructive",
            &second.dev,
            "--afap",
            "--no-fill",
            "--sensors",
            "none",
            "--no-db",
            "--progress",
            "never",
            "--out",
            "replayed",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    nothing_left(&second.dev);
    let (_, replayed) = read_trace(&d.path().join("second.dltrace"));
    let key = |r: &Record| (r.op, r.offset_bytes, r.len_bytes);
    // The whole first trace (its check reads included) is replayed, after the replay's
    // own check reads of the second device (--no-fill: no fill step before it).
    let want: Vec<_> = all_first.iter().map(|(r, _)| key(r)).collect();
    let got: Vec<_> = replayed
        .iter()
        .filter(|(_, name)| name.starts_with("drivelab"))
        .map(|(r, _)| key(r))
        .collect();
    let own = got.len().saturating_sub(want.len());
    assert_eq!(
        &got[own..],
        &want[..],
        "the replay issued the recorded I/Os, in order"
    );
    assert!(
        own <= 8 && got[..own].iter().all(|k| k.0 == Op::Read),
        "before the replay only drivelab's own check reads: {got:?}"
    );
    let sizes: std::collections::BTreeSet<u64> = issued.iter().map(|r| r.len_bytes).collect();
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [4096, 65536]);
}

/// What a recording changes on the system, to compare before and after.
fn tracing_state(dev: &str) -> Vec<(String, String)> {
    let mut out = vec![("enable".to_string(), trace_enabled(dev))];
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    out.push((
        "our mounts".into(),
        mounts.matches("drivelab-tracefs.").count().to_string(),
    ));
    out.push((
        "state file".into(),
        Path::new("/run/drivelab-trace-record.json")
            .exists()
            .to_string(),
    ));
    // The kernel's settings, through a tracefs mount of the test's own.
    let t = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev"])
        .arg(t.path())
        .status()
        .unwrap();
    assert!(ok.success());
    for f in [
        "current_tracer",
        "buffer_size_kb",
        "trace_clock",
        "tracing_on",
    ] {
        let v = std::fs::read_to_string(t.path().join(f)).unwrap();
        out.push((f.into(), v.trim().to_string()));
    }
    let opts = std::fs::read_to_string(t.path().join("trace_options")).unwrap();
    out.push((
        "blk_classic".into(),
        opts.contains("\nblk_classic").to_string(),
    ));
    let ok = std::process::Command::new("umount")
        .arg(t.path())
        .status()
        .unwrap();
    assert!(ok.success());
    out
}

fn scratch_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".drivelab-record."))
        .collect()
}

#[test]
fn a_killed_recording_is_cleaned_up_by_the_next_one() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let before = tracing_state(&lo.dev);
    let (mut child, _err) = start_recording(&lo.dev, d.path(), "k.dltrace");
    common::signal(child.id(), "KILL");
    child.wait().unwrap();
    // Left behind: the device's trace, the scratch file (and the kernel's settings).
    assert_eq!(trace_enabled(&lo.dev), "1");
    assert_eq!(scratch_files(d.path()).len(), 1);

    let dd_if = format!("if={}", lo.dev);
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &lo.dev,
            "-o",
            "n.dltrace",
            "--",
            "dd",
            &dd_if,
            "of=/dev/null",
            "bs=4k",
            "count=1",
            "iflag=direct",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let undone: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("ended without cleaning up"))
        .collect();
    assert_eq!(undone.len(), 1, "{e}");
    assert!(undone[0].contains(&format!("pid {}", child.id())), "{e}");
    nothing_left(&lo.dev);
    assert_eq!(scratch_files(d.path()), Vec::<String>::new());
    assert_eq!(tracing_state(&lo.dev), before);
}

#[test]
fn a_trace_left_by_something_else_is_refused_with_the_full_reset() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let name = Path::new(&lo.dev)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let enable = format!("/sys/block/{name}/trace/enable");
    std::fs::write(&enable, "1").unwrap();
    let o = run_in(
        d.path(),
        &["trace", "record", &lo.dev, "-o", "x.dltrace", "--", "true"],
    );
    std::fs::write(&enable, "0").unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    for step in [
        "tracing_on".to_string(),
        "echo 0 > /sys/dev/block/".to_string(),
        "echo nop > /sys/kernel/tracing/current_tracer".into(),
    ] {
        assert!(e.contains(&step), "{step}: {e}");
    }
    assert!(scratch_files(d.path()).is_empty());
    nothing_left(&lo.dev);
}

#[test]
fn a_recording_without_io_writes_nothing_and_a_zero_duration_is_refused() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &lo.dev,
            "-o",
            "z.dltrace",
            "--duration",
            "0",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("--duration"), "{}", stderr(&o));
    // A command that does no I/O on the device: an empty trace would replay nothing.
    let o = run_in(
        d.path(),
        &["trace", "record", &lo.dev, "-o", "e.dltrace", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no I/O reached"), "{}", stderr(&o));
    nothing_left(&lo.dev);
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
}

/// Issue #22: a second Ctrl-C while the recorded command ignores SIGTERM (so drivelab
/// is still reading `trace_pipe`) sets the tracer back to nop all the same (the pipe is
/// closed first: the kernel refuses the change while it is open), and the next
/// recording is not refused.
#[test]
fn a_second_signal_while_the_command_ignores_sigterm_still_sets_the_tracer_back() {
    let _turn = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let lo = Loop::new(64 << 20, false);
    let d = tempfile::tempdir().unwrap();
    let before = tracing_state(&lo.dev);
    let mut child = drivelab()
        .args([
            "trace",
            "record",
            &lo.dev,
            "-o",
            "t.dltrace",
            "--",
            "sh",
            "-c",
        ])
        .arg("trap '' TERM INT; echo $$ > pid; while :; do sleep 0.1; done")
        .current_dir(d.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    assert!(line.starts_with("recording "), "{line}");
    common::wait_until("the command started", || {
        std::fs::read_to_string(d.path().join("pid")).is_ok_and(|p| p.ends_with('\n'))
    });
    let pid: u32 = std::fs::read_to_string(d.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The command outlives drivelab whatever happens (it ignores the signals).
    struct Killed(u32);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
    let _command = Killed(pid);
    // Two signals sent at once may reach the process as one: signal until it ends
    // (the first sets the stop flag, any later one is the second Ctrl-C).
    let mut code = None;
    common::wait_until("drivelab ended by a second Ctrl-C", || {
        if let Some(st) = child.try_wait().unwrap() {
            code = st.code();
            return true;
        }
        common::signal(child.id(), "INT");
        false
    });
    assert_eq!(code, Some(130));
    nothing_left(&lo.dev);
    assert_eq!(tracing_state(&lo.dev), before);
    assert!(scratch_files(d.path()).is_empty());
    let o = run_in(
        d.path(),
        &[
            "trace",
            "record",
            &lo.dev,
            "-o",
            "u.dltrace",
            "--duration",
            "200ms",
        ],
    );
    assert!(!stderr(&o).contains("in use"), "{}", stderr(&o));
    nothing_left(&lo.dev);
}
