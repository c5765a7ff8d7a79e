//! `drivelab run replay`: open-loop timing against the replayer's own per-I/O record
//! (`--issue-log`), the I/Os that reach a loop device (seen by the kernel's block
//! tracepoints, which blktrace reads), the trace's
//! concurrency under `--afap`, `--max-idle`, the safety rules, and bad input.
//!
//! Timing tolerance on this shared, loaded machine: an I/O is never issued before its
//! recorded time (exact: the replayer waits for it), and issue follows trace order; how
//! late it goes out is the machine's, so it is reported (lag) and checked for
//! consistency, never bounded here. The exact timing check (issue time equal to the due
//! time) runs in virtual time, in the engine's tests (crates/engine/src/replay/tests.rs).

mod common;

use std::path::{Path, PathBuf};

use common::*;
use drivelab_trace::{native::Writer, Header, Op, Record};
use serde_json::Value;

fn write_trace(dir: &Path, name: &str, records: &[Record]) -> PathBuf {
    let p = dir.join(name);
    let f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    let mut w = Writer::new(
        f,
        &Header {
            source_format: "test".into(),
            ..Header::default()
        },
    )
    .unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
    p
}

fn rec(t: u64, op: Op, off: u64, len: u64) -> Record {
    Record::new(t, op, off, len)
}

struct Logged {
    seq: u64,
    op: String,
    offset: u64,
    len: u64,
    due: u64,
    issue: u64,
    done: u64,
}

fn issue_log(bundle: &Path) -> Vec<Logged> {
    issue_log_of(bundle, "replay-1")
}

fn issue_log_of(bundle: &Path, step: &str) -> Vec<Logged> {
    let text = std::fs::read_to_string(bundle.join(format!("{step}.issue-log.csv"))).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("seq,op,offset_bytes,len_bytes,due_ns,issue_ns,done_ns")
    );
    let mut out: Vec<Logged> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            Logged {
                seq: n(0),
                op: f[1].to_string(),
                offset: n(2),
                len: n(3),
                due: n(4),
                issue: n(5),
                done: n(6),
            }
        })
        .collect();
    // Logged at completion: in issue order by sequence number.
    out.sort_by_key(|l| l.seq);
    out
}

fn run_doc(bundle: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(bundle.join("run.json")).unwrap()).unwrap()
}

fn replay_ok(dir: &Path, args: &[&str]) -> (Value, String) {
    let mut a = vec!["run", "--no-db", "--progress", "never", "replay"];
    a.extend_from_slice(args);
    let o = run_in(dir, &a);
    assert!(o.status.success(), "drivelab {a:?}: {}", stderr(&o));
    (run_doc(&dir.join("b")), stdout(&o))
}

#[test]
fn open_loop_issues_nothing_early_keeps_the_gaps_and_scales_with_speed() {
    let dir = tempfile::tempdir().unwrap();
    // Five bursts of four I/Os, 150 ms apart.
    let mut recs = Vec::new();
    for b in 0..5u64 {
        for i in 0..4u64 {
            let op = if i % 2 == 0 { Op::Read } else { Op::Write };
            recs.push(rec(
                b * 150_000_000 + i * 1_000,
                op,
                (b * 4 + i) * 65536,
                4096,
            ));
        }
    }
    let trace = write_trace(dir.path(), "gaps.dltrace", &recs);
    let t = trace.to_str().unwrap();
    for speed in ["1", "3"] {
        let b = dir.path().join("b");
        let _ = std::fs::remove_dir_all(&b);
        let (doc, out) = replay_ok(
            dir.path(),
            &[
                t,
                "--size",
                "64M",
                "--issue-log",
                "--speed",
                speed,
                "--out",
                "b",
            ],
        );
        let log = issue_log(&b);
        let s: u64 = speed.parse().unwrap();
        assert_eq!(log.len(), recs.len());
        let mut prev_issue = 0;
        for (l, r) in log.iter().zip(&recs) {
            assert_eq!(
                l.due,
                r.issue_ns / s,
                "due time is the recorded time / speed"
            );
            assert_eq!((l.op.as_str(), l.len), (r.op.name(), r.len_bytes));
            assert!(
                l.issue >= l.due,
                "I/O {} issued {} ns early",
                l.seq,
                l.due - l.issue
            );
            assert!(l.issue >= prev_issue, "issued in trace order");
            assert!(l.done >= l.issue);
            prev_issue = l.issue;
        }
        // The lag the run reports is the log's.
        let rp = &doc["steps"][0]["run"]["replay"];
        let max_lag = log.iter().map(|l| l.issue - l.due).max().unwrap();
        let reported = rp["lag"]["max_ns"].as_u64().unwrap();
        let bucket = reported / 128 + 1;
        assert!(
            reported <= max_lag && max_lag - reported <= bucket,
            "{reported} vs {max_lag}"
        );
        assert_eq!(rp["ios_issued"], 20);
        assert!(out.contains("issue lag"), "{out}");
        let a = &doc["summary"]["analysis"]["scores"];
        assert_eq!(a["all"]["ios"], 20);
        assert!(a["avg_data_rate_bytes_per_s"].as_f64().unwrap() > 0.0);
        assert!(a["total_replay_ns"].as_u64().unwrap() >= 600_000_000 / s);
    }
}

#[test]
fn max_idle_cuts_long_gaps_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let recs = [
        rec(0, Op::Write, 0, 4096),
        // An hour of idle: replayed as 50 ms.
        rec(3_600_000_000_000, Op::Write, 4096, 4096),
        rec(3_600_000_010_000, Op::Read, 0, 4096),
    ];
    let trace = write_trace(dir.path(), "idle.dltrace", &recs);
    let (doc, out) = replay_ok(
        dir.path(),
        &[
            trace.to_str().unwrap(),
            "null",
            "--max-idle",
            "50ms",
            "--issue-log",
            "--out",
            "b",
        ],
    );
    let log = issue_log(&dir.path().join("b"));
    let due: Vec<u64> = log.iter().map(|l| l.due).collect();
    assert_eq!(due, vec![0, 50_000_000, 50_010_000]);
    assert!(out.contains("--max-idle: 1 gap(s)"), "{out}");
    let c = &doc["steps"][0]["run"]["replay"]["schedule"];
    assert_eq!(c["idle_removed_ns"], 3_600_000_000_000u64 - 50_000_000);
}

#[test]
fn afap_never_has_more_outstanding_than_the_trace_had() {
    let dir = tempfile::tempdir().unwrap();
    // Bursts of up to 6 I/Os recorded concurrently (each 2 ms), then quiet.
    let mut recs = Vec::new();
    let mut t = 0;
    for i in 0..300u64 {
        t += if i % 6 == 0 { 5_000_000 } else { 100_000 };
        let op = if i % 3 == 0 { Op::Write } else { Op::Read };
        recs.push(Record {
            service_ns: Some(2_000_000),
            ..rec(t, op, (i % 128) * 65536, 4096 << (i % 4))
        });
    }
    let trace = write_trace(dir.path(), "burst.dltrace", &recs);
    let (doc, _) = replay_ok(
        dir.path(),
        &[
            trace.to_str().unwrap(),
            "--size",
            "64M",
            "--afap",
            "--issue-log",
            "--out",
            "b",
        ],
    );
    let log = issue_log(&dir.path().join("b"));
    assert_eq!(log.len(), recs.len());
    for (i, l) in log.iter().enumerate() {
        let at = recs[i].issue_ns;
        let trace_depth = recs[..=i]
            .iter()
            .filter(|r| r.issue_ns + r.service_ns.unwrap() > at)
            .count();
        // Outstanding by the replayer's own record: issued before, completion not yet
        // handed back when this one went out.
        let ours = log[..i].iter().filter(|o| o.done > l.issue).count() + 1;
        assert!(
            ours <= trace_depth,
            "I/O {i}: {ours} outstanding, the trace had {trace_depth}"
        );
    }
    let rp = &doc["steps"][0]["run"]["replay"];
    assert!(rp["lag"].is_null());
    assert!(
        rp["max_outstanding"].as_u64().unwrap()
            <= rp["schedule"]["trace_max_outstanding"].as_u64().unwrap()
    );
    assert_eq!(rp["schedule"]["trace_max_outstanding"], 6);
    assert_eq!(rp["comparison"]["compared_ios"], 300);
}

/// The kernel's block-layer tracepoints (the ones blktrace reads) in a private tracefs
/// instance, mounted for the test and removed after. (blktrace itself needs debugfs's
/// relay files, which this machine's kernel refuses to open: "Operation not permitted".)
struct BlockTrace {
    mnt: tempfile::TempDir,
    instance: PathBuf,
}

impl BlockTrace {
    fn start() -> BlockTrace {
        let mnt = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev"])
            .arg(mnt.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mounting tracefs");
        let instance = mnt.path().join(format!(
            "instances/drivelab-replay-test-{}",
            std::process::id()
        ));
        std::fs::create_dir(&instance).unwrap();
        std::fs::write(instance.join("events/block/block_bio_queue/enable"), "1").unwrap();
        std::fs::write(instance.join("tracing_on"), "1").unwrap();
        BlockTrace { mnt, instance }
    }

    /// `(rwbs, offset_bytes, len_bytes)` of every bio queued on the device `major,minor`.
    fn bios(&self, dev: &str) -> Vec<(String, u64, u64)> {
        std::fs::write(self.instance.join("tracing_on"), "0").unwrap();
        let text = std::fs::read_to_string(self.instance.join("trace")).unwrap();
        text.lines()
            .filter_map(|l| {
                let rest = l.split("block_bio_queue: ").nth(1)?;
                let f: Vec<&str> = rest.split_whitespace().collect();
                (f.len() >= 5 && f[0] == dev && f[3] == "+").then(|| {
                    let n = |s: &str| s.parse::<u64>().unwrap() * 512;
                    (f[1].to_string(), n(f[2]), n(f[4]))
                })
            })
            .collect()
    }
}

impl Drop for BlockTrace {
    fn drop(&mut self) {
        let _ = std::fs::write(self.instance.join("tracing_on"), "0");
        let _ = std::fs::remove_dir(&self.instance);
        let _ = std::process::Command::new("umount")
            .arg(self.mnt.path())
            .status();
    }
}

/// `major,minor` of a block device as the block tracepoints print it.
fn dev_numbers(dev: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let r = std::fs::metadata(dev).unwrap().rdev();
    format!("{},{}", libc_major(r), libc_minor(r))
}

fn libc_major(d: u64) -> u64 {
    ((d >> 32) & 0xffff_f000) | ((d >> 8) & 0xfff)
}

fn libc_minor(d: u64) -> u64 {
    ((d >> 12) & 0xffff_ff00) | (d & 0xff)
}

#[test]
fn a_loop_device_receives_the_traces_ios_in_order_with_their_offsets_and_sizes() {
    let lo = Loop::new(64 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    // One I/O at a time (no service times, distinct issue times: depth 1 under --afap),
    // so the block layer sees them in issue order.
    let mut recs = Vec::new();
    let mut rng = 7u64;
    for i in 0..60u64 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let off = (rng >> 40) % 1000 * 4096;
        let len = 4096 << (i % 4);
        let r = match i % 10 {
            3 => Record {
                fua: true,
                ..rec(i * 1000, Op::Write, off, len)
            },
            5 => rec(i * 1000, Op::Flush, 0, 0),
            7 => rec(i * 1000, Op::Discard, off, 1 << 20),
            x if x % 2 == 0 => rec(i * 1000, Op::Read, off, len),
            _ => rec(i * 1000, Op::Write, off, len),
        };
        recs.push(r);
    }
    let trace = write_trace(dir.path(), "order.dltrace", &recs);
    let tracer = BlockTrace::start();
    let destructive = format!("--destructive={}", lo.dev);
    let (doc, _) = replay_ok(
        dir.path(),
        &[
            trace.to_str().unwrap(),
            &lo.dev,
            &destructive,
            "--afap",
            "--no-fill",
            "--out",
            "b",
        ],
    );
    assert_eq!(doc["status"], "complete");
    let seen: Vec<(String, u64, u64)> = tracer
        .bios(&dev_numbers(&lo.dev))
        .into_iter()
        .map(|(rwbs, o, l)| {
            let kind = match rwbs.as_str() {
                d if d.starts_with('D') => "discard",
                // An empty bio with a preflush: the cache flush fsync sends.
                d if d.starts_with("FW") && l == 0 => "flush",
                d if d.starts_with('W') && d.contains('F') => "fua-write",
                d if d.starts_with('W') => "write",
                _ => "read",
            };
            let (o, l) = if kind == "flush" { (0, 0) } else { (o, l) };
            (kind.to_string(), o, l)
        })
        .collect();
    let want: Vec<(String, u64, u64)> = recs
        .iter()
        .map(|r| {
            let kind = match r.op {
                Op::Write if r.fua => "fua-write",
                o => o.name(),
            };
            (kind.to_string(), r.offset_bytes, r.len_bytes)
        })
        .collect();
    assert_eq!(seen, want, "what the loop device received, in order");
}

/// A target that takes no non-blocking I/O (zram) is found without a read of the
/// replay's own (io_uring's probe reads without blocking at the device's end, where
/// nothing is read): its I/Os go straight to the kernel's workers, and the device
/// receives the trace's I/Os and nothing else.
#[test]
fn a_target_without_non_blocking_io_is_found_without_reading_it() {
    let z = Zram::new(32 << 20);
    let dir = tempfile::tempdir().unwrap();
    let recs: Vec<Record> = (0..40u64)
        .map(|i| {
            let op = if i % 3 == 0 { Op::Write } else { Op::Read };
            rec(i * 1000, op, (i * 7919 % 2000) * 4096, 4096 << (i % 3))
        })
        .collect();
    let trace = write_trace(dir.path(), "zram.dltrace", &recs);
    let tracer = BlockTrace::start();
    let destructive = format!("--destructive={}", z.dev);
    let (doc, _) = replay_ok(
        dir.path(),
        &[
            trace.to_str().unwrap(),
            &z.dev,
            &destructive,
            "--afap",
            "--no-fill",
            "--out",
            "b",
        ],
    );
    assert_eq!(doc["status"], "complete");
    let seen: Vec<(char, u64, u64)> = tracer
        .bios(&dev_numbers(&z.dev))
        .into_iter()
        .map(|(rwbs, o, l)| (rwbs.chars().next().unwrap(), o, l))
        .collect();
    let want: Vec<(char, u64, u64)> = recs
        .iter()
        .map(|r| {
            let kind = if r.op == Op::Write { 'W' } else { 'R' };
            (kind, r.offset_bytes, r.len_bytes)
        })
        .collect();
    assert_eq!(seen, want, "what the zram device received, in order");
    let notes = doc["steps"][0]["run"]["notes"].to_string();
    assert!(
        notes.contains("handed every I/O to its kernel workers"),
        "{notes}"
    );
}

#[test]
fn a_simulated_drive_is_written_once_before_a_trace_that_reads_unless_no_fill() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "rw.dltrace",
        &[
            rec(0, Op::Write, 0, 4096),
            rec(1000, Op::Read, 1 << 20, 65536),
        ],
    );
    let t = trace.to_str().unwrap();
    let sim = "sim:nvme-tlc,capacity=4G";
    let (doc, _) = replay_ok(dir.path(), &[t, sim, "--size", "64M", "--out", "b"]);
    let ids: Vec<&str> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["fill", "replay-1"]);
    assert_eq!(doc["steps"][0]["run"]["totals"]["write"]["bytes"], 64 << 20);
    assert_eq!(
        doc["summary"]["analysis"]["scores"]["all"]["ios"], 2,
        "the fill is not scored"
    );
    std::fs::remove_dir_all(dir.path().join("b")).unwrap();
    let (doc, _) = replay_ok(dir.path(), &[t, sim, "--no-fill", "--out", "b"]);
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1);
}

#[test]
fn a_read_only_trace_on_a_simulated_drive_reads_a_filled_span_unless_no_fill_which_says_so() {
    // WebSearch-like: reads only. The simulated drive is written anyway (writing it is
    // always allowed), so the reads are those of a filled drive.
    let dir = tempfile::tempdir().unwrap();
    let recs: Vec<_> = (0..200u64)
        .map(|i| rec(i * 100_000, Op::Read, (i * 7919 % 4000) * 16384, 16384))
        .collect();
    let trace = write_trace(dir.path(), "ro.dltrace", &recs);
    let t = trace.to_str().unwrap();
    let sim = "sim:nvme-tlc,capacity=4G";
    let mean = |doc: &Value| {
        let h =
            &doc["steps"].as_array().unwrap().last().unwrap()["run"]["replay"]["read"]["latency"];
        h["sum_ns"].as_f64().unwrap() / h["count"].as_f64().unwrap()
    };
    let notes = |doc: &Value| {
        doc["steps"].as_array().unwrap().last().unwrap()["run"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let (filled, _) = replay_ok(dir.path(), &[t, sim, "--size", "64M", "--out", "b"]);
    let ids: Vec<&str> = filled["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["fill", "replay-1"]);
    assert!(!notes(&filled)
        .iter()
        .any(|n| n.contains("not written before")));
    std::fs::remove_dir_all(dir.path().join("b")).unwrap();
    let (bare, _) = replay_ok(
        dir.path(),
        &[t, sim, "--size", "64M", "--no-fill", "--out", "b"],
    );
    assert_eq!(bare["steps"].as_array().unwrap().len(), 1);
    // Never-written blocks answer without touching flash, and the result says so.
    assert!(
        mean(&bare) < mean(&filled),
        "{} vs {}",
        mean(&bare),
        mean(&filled)
    );
    assert!(
        notes(&bare)
            .iter()
            .any(|n| n.contains("not written before the replay (--no-fill)")),
        "{:?}",
        notes(&bare)
    );
}

#[test]
fn replay_writes_follow_the_safety_rules() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path(), "w.dltrace", &[rec(0, Op::Write, 0, 4096)]);
    let t = trace.to_str().unwrap();
    // A file drivelab did not create.
    let mine = dir.path().join("mine.bin");
    std::fs::write(&mine, vec![7u8; 1 << 20]).unwrap();
    let o = run_in(
        dir.path(),
        &["run", "--no-db", "replay", t, mine.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&mine).unwrap(),
        vec![7u8; 1 << 20],
        "untouched"
    );
    // A block device without --destructive.
    let lo = Loop::new(16 << 20, false);
    let o = run_in(dir.path(), &["run", "--no-db", "replay", t, &lo.dev]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--destructive"), "{}", stderr(&o));
    // A trace that only reads (and flushes) needs no --destructive; its discards, when
    // skipped, do not count.
    let reads = write_trace(
        dir.path(),
        "r.dltrace",
        &[
            rec(0, Op::Read, 0, 4096),
            rec(10, Op::Flush, 0, 0),
            rec(20, Op::Discard, 0, 4096),
            rec(30, Op::Read, 8192, 4096),
        ],
    );
    let r = reads.to_str().unwrap();
    let o = run_in(dir.path(), &["run", "--no-db", "replay", r, &lo.dev]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "the discard writes: {}",
        stderr(&o)
    );
    let (doc, _) = replay_ok(dir.path(), &[r, &lo.dev, "--skip-discards", "--out", "b"]);
    let rp = &doc["steps"][0]["run"]["replay"];
    assert_eq!(
        (rp["read"]["ios"].as_u64(), rp["flush"]["ios"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(rp["schedule"]["discards_skipped"], 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path(), "ok.dltrace", &[rec(0, Op::Read, 0, 4096)]);
    let t = trace.to_str().unwrap();
    std::fs::write(dir.path().join("notrace.txt"), "1,2,3\n").unwrap();
    // MQSim's WebSearch excerpt as it ships: named by its format, with the command.
    std::fs::write(
        dir.path().join("WebSearch1.trace"),
        "0 0 14153456 16 1\n1543 0 2047224 8 1\n",
    )
    .unwrap();
    // Cut short: found by reading the whole trace before anything is written.
    let whole = std::fs::read(write_trace(
        dir.path(),
        "cut.dltrace",
        &[rec(0, Op::Read, 0, 4096); 50],
    ))
    .unwrap();
    std::fs::write(dir.path().join("cut.dltrace"), &whole[..whole.len() - 20]).unwrap();
    write_trace(dir.path(), "empty.dltrace", &[]);
    write_trace(dir.path(), "big.dltrace", &[rec(0, Op::Read, 0, 2 << 20)]);
    write_trace(
        dir.path(),
        "huge.dltrace",
        &[rec(0, Op::Write, 0, 128 << 20)],
    );
    // Two reads a day apart: at --speed 0.001 the replay would take 1 000 days.
    write_trace(
        dir.path(),
        "day.dltrace",
        &[
            rec(0, Op::Read, 0, 4096),
            rec(86_400_000_000_000, Op::Read, 0, 4096),
        ],
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["missing.dltrace", "null"], "TRACE"),
        (vec!["notrace.txt", "null"], "not a drivelab trace"),
        (
            vec!["WebSearch1.trace", "null"],
            "reads as a disksim trace: import it first with drivelab trace import disksim",
        ),
        (vec![t, "null", "--speed", "0"], "--speed"),
        (vec![t, "null", "--speed", "fast"], "--speed"),
        (vec![t, "null", "--afap", "--speed", "2"], "--afap"),
        (vec![t, "null", "--afap", "--max-idle", "1s"], "--afap"),
        (vec![t, "null", "--max-idle", "0s"], "--max-idle"),
        (
            vec![t, "null", "--max-outstanding", "0"],
            "--max-outstanding",
        ),
        (
            vec![t, "null", "--max-outstanding", "100000"],
            "--max-outstanding",
        ),
        (vec![t, "null", "--interval", "1ms"], "--interval"),
        (vec![t, "null", "--segment", "10ms"], "--segment"),
        (vec!["cut.dltrace", "null"], "cut.dltrace"),
        (vec!["empty.dltrace", "null"], "no I/O"),
        (vec!["big.dltrace", "null", "--size", "1M"], "--size"),
        (vec!["huge.dltrace", "null"], "64 MiB"),
        (vec![t, "null", "--speed", "1e-300"], "--speed"),
        (vec!["day.dltrace", "null", "--speed", "0.001"], "366"),
        // The null target does no I/O: a backend asked for would be ignored.
        (
            vec![t, "null", "--ioengine", "sync"],
            "--ioengine sync: the null target does no I/O",
        ),
    ];
    for (args, what) in cases {
        let mut a = vec!["run", "--no-db", "replay"];
        a.extend(&args);
        let o = run_in(dir.path(), &a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(what), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert!(
            !dir.path().join("drivelab-results").exists(),
            "{args:?}: nothing written"
        );
    }
}

#[test]
fn a_replay_in_segments_resumes_at_the_next_one_and_scores_them_together() {
    let dir = tempfile::tempdir().unwrap();
    // 4 s of trace: 10 I/Os a second with their service times, cut into 1 s steps.
    let recs: Vec<Record> = (0..40u64)
        .map(|i| Record {
            service_ns: Some(50_000),
            ..rec(
                i * 100_000_000,
                if i % 4 == 0 { Op::Write } else { Op::Read },
                i * 8192,
                4096,
            )
        })
        .collect();
    let trace = write_trace(dir.path(), "seg.dltrace", &recs);
    let bundle = dir.path().join("b");
    let mut child = drivelab()
        .args(["run", "--no-db", "--progress", "never", "replay"])
        .arg(&trace)
        .args([
            "--size",
            "16M",
            "--segment",
            "1s",
            "--issue-log",
            "--out",
            "b",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let saved = |n: usize| {
        std::fs::read_to_string(bundle.join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|d| {
                d["steps"]
                    .as_array()
                    .is_some_and(|s| s.iter().filter(|s| s["status"] == "complete").count() >= n)
            })
    };
    wait_until("the first part to be saved", || saved(1));
    signal(child.id(), "INT");
    let st = child.wait().unwrap();
    let doc = run_doc(&bundle);
    assert_eq!(doc["planned_steps"], 4);
    if doc["status"] == "complete" {
        // The signal came after the last part (a very slow machine): nothing to resume.
        assert!(st.success());
    } else {
        assert_eq!(doc["status"], "interrupted", "{st}");
        let o = run_in(
            dir.path(),
            &["run", "--no-db", "--progress", "never", "--resume", "b"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("resuming"), "{}", stderr(&o));
    }
    let doc = run_doc(&bundle);
    assert_eq!(doc["status"], "complete");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    // Each part replayed its second of the trace, due times from the part's start.
    for (k, s) in steps.iter().enumerate() {
        assert_eq!(s["id"], format!("replay-{}", k + 1));
        let log = issue_log_of(&bundle, &format!("replay-{}", k + 1));
        let want: Vec<u64> = (0..10).map(|i| i * 100_000_000).collect();
        assert_eq!(
            log.iter().map(|l| l.due).collect::<Vec<_>>(),
            want,
            "part {k}"
        );
        assert!(log.iter().all(|l| l.issue >= l.due));
        assert_eq!(log[0].offset, (k as u64 * 10) * 8192);
    }
    let a = &doc["summary"]["analysis"];
    assert_eq!(a["parts"], 4);
    assert_eq!(a["ios_issued"], 40);
    assert_eq!(a["scores"]["all"]["ios"], 40);
    assert_eq!(a["scores"]["vs_original"]["compared_ios"], 40);
    // The parts last their seconds of trace time: idle kept across them.
    assert!(a["scores"]["total_replay_ns"].as_u64().unwrap() >= 3_900_000_000);
}

#[test]
fn an_imported_msr_trace_replays_against_its_original_service_times() {
    let dir = tempfile::tempdir().unwrap();
    // MSR Cambridge CSV: FILETIME ticks (100 ns), bytes, response times in ticks.
    let base = 128_166_372_000_000_000u64;
    let mut csv = String::new();
    for i in 0..200u64 {
        let kind = if i % 3 == 0 { "Write" } else { "Read" };
        // An I/O every 2 ms, each taking 1 ms originally (10 000 ticks).
        csv += &format!(
            "{},hm,0,{kind},{},4096,10000\n",
            base + i * 20_000,
            (i * 7 % 100) * 4096
        );
    }
    std::fs::write(dir.path().join("hm_0.csv"), csv).unwrap();
    let o = run_in(
        dir.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "hm_0.dltrace"],
    );
    assert!(o.status.success(), "import: {}", stderr(&o));
    let (doc, out) = replay_ok(
        dir.path(),
        &[
            "hm_0.dltrace",
            "sim:nvme-tlc,capacity=4G",
            "--no-fill",
            "--out",
            "b",
        ],
    );
    let a = &doc["summary"]["analysis"];
    assert_eq!(a["ios_issued"], 200);
    assert_eq!(a["scores"]["read"]["ios"], 133);
    assert_eq!(a["scores"]["write"]["ios"], 67);
    let v = &a["scores"]["vs_original"];
    assert_eq!(v["compared_ios"], 200);
    let (f, s) = (
        v["faster_fraction"].as_f64().unwrap(),
        v["slower_fraction"].as_f64().unwrap(),
    );
    // The simulated NVMe drive serves a 4K I/O well within the original 1 ms (the run
    // is deterministic: the same every time).
    assert!(f > 0.9 && f + s <= 1.0 + 1e-9, "{v}");
    // Open loop in virtual time: every I/O exactly on time, the trace's 398 ms replayed.
    assert_eq!(a["scores"]["lag"]["max_lag_ns"], 0);
    assert!(a["scores"]["total_replay_ns"].as_u64().unwrap() >= 398_000_000);
    assert!(out.contains("against the original (200 I/Os)"), "{out}");
}

/// A trace that only reads replays on a file drivelab did not create without
/// `--overwrite` (the file is opened read-only and left as it was), and `--issue-log`,
/// an output choice, does not make two replays unlike tests.
#[test]
fn a_read_only_trace_reads_a_users_file_and_the_issue_log_is_not_a_setting() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let recs: Vec<Record> = (0..8u64)
        .map(|i| rec(i * 1_000_000, Op::Read, i * 4096, 4096))
        .collect();
    write_trace(dir.path(), "reads.dltrace", &recs);
    let user: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.path().join("user.bin"), &user).unwrap();
    let (doc, _) = replay_ok(dir.path(), &["reads.dltrace", "user.bin", "--out", "b"]);
    assert_eq!(doc["steps"][0]["run"]["totals"]["read"]["ops"], 8, "{doc}");
    assert_eq!(std::fs::read(dir.path().join("user.bin")).unwrap(), user);
    let o = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--progress",
            "never",
            "replay",
            "reads.dltrace",
            "user.bin",
            "--issue-log",
            "--out",
            "c",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c = run_doc(&dir.path().join("c"));
    assert_eq!(doc["config_hash"], c["config_hash"]);
    assert!(doc["config_hash"].is_string());
}

#[test]
fn a_replay_killed_mid_run_resumes_on_its_own_test_file_and_removes_it() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    // 8 s of trace, a write every 0.1 s, in 1 s parts: killed during a later part.
    let recs: Vec<Record> = (0..80u64)
        .map(|i| rec(i * 100_000_000, Op::Write, (i % 64) * 65536, 65536))
        .collect();
    let trace = write_trace(dir.path(), "w.dltrace", &recs);
    let bundle = dir.path().join("b");
    let mut child = drivelab()
        .args(["run", "--no-db", "--progress", "never", "replay"])
        .arg(&trace)
        .args(["--size", "16M", "--segment", "1s", "--out", "b"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let test_file = dir.path().join("drivelab.test");
    wait_until("the first part to be saved and the next to write", || {
        run_json_steps(&bundle) >= 1
            && marker_text(&test_file).is_some_and(|m| m.contains("writing=1"))
    });
    child.kill().unwrap(); // SIGKILL: no clean-up
    child.wait().unwrap();
    let o = run_in(
        dir.path(),
        &["run", "--no-db", "--progress", "never", "--resume", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(run_doc(&bundle)["status"], "complete");
    assert!(!test_file.exists(), "the bundle's test file is left");
}

/// How many steps of the bundle's run.json are complete (0 while there is none).
fn run_json_steps(bundle: &std::path::Path) -> usize {
    std::fs::read_to_string(bundle.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|d| {
            d["steps"]
                .as_array()
                .map(|s| s.iter().filter(|s| s["status"] == "complete").count())
        })
        .unwrap_or(0)
}

#[test]
fn a_replay_runs_on_the_sync_engine_when_asked_one_io_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let recs: Vec<Record> = (0..30u64)
        .map(|i| {
            let op = if i % 3 == 0 { Op::Write } else { Op::Read };
            rec(i * 100_000, op, i * 65536, 4096 << (i % 3))
        })
        .collect();
    let trace = write_trace(dir.path(), "sync.dltrace", &recs);
    let t = trace.to_str().unwrap();
    let (doc, _) = replay_ok(
        dir.path(),
        &[
            t,
            "--size",
            "64M",
            "--afap",
            "--ioengine",
            "sync",
            "--out",
            "b",
        ],
    );
    let step = &doc["steps"][0];
    assert_eq!(step["config"]["ioengine"], "sync");
    assert_eq!(step["config"]["iodepth"], 1);
    let run = &step["run"];
    assert_eq!(run["replay"]["max_outstanding"], 1);
    assert_eq!(run["replay"]["ios_completed"], 30);
    // Only sync or io_uring.
    let o = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "replay",
            t,
            "--ioengine",
            "null",
            "--out",
            "c",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--ioengine"), "{}", stderr(&o));
}
