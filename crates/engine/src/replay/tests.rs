//! The replay loop on a fixed-latency model (virtual time: exact) and on `null`.

use super::*;
use crate::model::{ModelInfo, SensorReading};
use crate::op::IoOp;
use crate::target::{OpenOptions, TargetSpec};
use drivelab_trace::{Op, Record};
use std::sync::atomic::AtomicBool;

const FLUSH_NS: u64 = 7_000_000;

/// Completes every I/O `lat_ns` after its submission, whatever else is in flight.
struct Fixed {
    lat_ns: u64,
    now: u64,
}

impl DeviceModel for Fixed {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            capacity_bytes: 1 << 30,
            logical_sector_bytes: 512,
            physical_sector_bytes: 4096,
            model: "fixed".into(),
            spec: "sim:fixed".into(),
        }
    }
    fn now_ns(&self) -> u64 {
        self.now
    }
    fn advance_to(&mut self, t: u64) {
        self.now = self.now.max(t);
    }
    fn submit(&mut self, _op: IoOp, at: u64) -> u64 {
        assert!(at >= self.now, "time went backwards: {at} < {}", self.now);
        self.now = at;
        at + self.lat_ns
    }
    /// A volatile cache that takes 7 ms to flush, whatever is in it.
    fn flush_cache(&mut self, at: u64) -> u64 {
        self.now = at;
        at + FLUSH_NS
    }
    fn discard(&mut self, _o: u64, _l: u64, at: u64) -> u64 {
        self.now = at;
        at + self.lat_ns
    }
    fn sensors(&mut self, _at: u64) -> Vec<SensorReading> {
        Vec::new()
    }
    fn ground_truth(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
use crate::model::DeviceModel;

fn workload() -> Workload {
    let mut w = crate::gen::tests::workload(crate::spec::RwMode::RandRw, 1);
    w.log_interval_ns = 1_000_000_000;
    w.ioengine = crate::spec::IoEngine::IoUring;
    w
}

struct Logged {
    seq: u64,
    due: u64,
    issue: u64,
    done: u64,
    offset: u64,
    len: u64,
}

fn parse_log(text: &str) -> Vec<Logged> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            Logged {
                seq: n(0),
                offset: n(2),
                len: n(3),
                due: n(4),
                issue: n(5),
                done: n(6),
            }
        })
        .collect()
}

fn replay(target: &mut Target, records: Vec<Record>, timing: Timing) -> (RunResult, Vec<Logged>) {
    replay_at_most(target, records, timing, DEFAULT_MAX_OUTSTANDING)
}

fn replay_at_most(
    target: &mut Target,
    records: Vec<Record>,
    timing: Timing,
    max_outstanding: u32,
) -> (RunResult, Vec<Logged>) {
    replay_with(target, &workload(), records, timing, max_outstanding)
}

fn model(lat_ns: u64) -> Target {
    Target::open(
        TargetSpec::Model(Box::new(Fixed { lat_ns, now: 0 })),
        &OpenOptions::default(),
    )
    .unwrap()
}

fn rec(t: u64, op: Op, off: u64, svc: Option<u64>) -> Record {
    Record {
        service_ns: svc,
        ..Record::new(t, op, off, 4096)
    }
}

#[test]
fn open_loop_in_virtual_time_issues_each_io_exactly_when_due() {
    let times = [0, 1_000, 2_000, 500_000_000, 500_001_000, 3_000_000_000];
    let recs: Vec<Record> = times
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            rec(
                t,
                if i % 2 == 0 { Op::Read } else { Op::Write },
                i as u64 * 8192,
                None,
            )
        })
        .collect();
    let timing = Timing::Recorded {
        speed: 2.0,
        max_idle_ns: None,
    };
    let (r, log) = replay(&mut model(5_000_000), recs, timing);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(r.measured.status, RunStatus::Complete);
    assert_eq!(log.len(), times.len());
    for (l, &t) in log.iter().zip(&times) {
        assert_eq!(l.due, t / 2);
        assert_eq!(l.issue, t / 2, "issued exactly at its scaled time");
        assert_eq!(l.done, t / 2 + 5_000_000);
    }
    assert_eq!(rp.lag.as_ref().unwrap().max_ns, Some(0));
    assert!(rp.kept_up);
    assert_eq!((rp.read.ios, rp.write.ios), (3, 3));
    assert_eq!(rp.replay_ns, 1_500_000_000 + 5_000_000);
}

#[test]
fn max_idle_cuts_long_gaps_and_says_so() {
    let recs = vec![
        rec(0, Op::Read, 0, None),
        rec(60_000_000_000, Op::Read, 0, None),
        rec(60_000_100_000, Op::Read, 0, None),
    ];
    let timing = Timing::Recorded {
        speed: 1.0,
        max_idle_ns: Some(1_000_000_000),
    };
    let (r, log) = replay(&mut model(1_000), recs, timing);
    let issue: Vec<u64> = log.iter().map(|l| l.issue).collect();
    assert_eq!(issue, vec![0, 1_000_000_000, 1_000_100_000]);
    assert!(r.measured.notes.iter().any(|n| n.contains("--max-idle")));
}

#[test]
fn afap_never_exceeds_the_traces_concurrency() {
    // The trace: an I/O every ms, each taking 10 ms: up to 10 outstanding. The target
    // takes 30 ms, so the trace's concurrency is what holds the replay back.
    let recs: Vec<Record> = (0..200)
        .map(|i| rec(i * 1_000_000, Op::Read, i * 4096, Some(10_000_000)))
        .collect();
    let (r, log) = replay(&mut model(30_000_000), recs.clone(), Timing::Afap);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(rp.schedule.trace_max_outstanding, 10);
    assert_eq!(rp.max_outstanding, 10);
    // The trace's depth at each record, by the documented rule, recomputed here.
    for (i, l) in log.iter().enumerate() {
        let t = recs[i].issue_ns;
        let trace_depth = recs[..=i]
            .iter()
            .filter(|r| r.issue_ns + r.service_ns.unwrap() > t)
            .count();
        let ours = log[..i]
            .iter()
            .filter(|o| o.issue <= l.issue && o.done > l.issue)
            .count()
            + 1;
        assert!(
            ours <= trace_depth,
            "I/O {i}: {ours} outstanding > {trace_depth}"
        );
    }
    // Slower than the original, I/O by I/O.
    let c = rp.comparison.as_ref().unwrap();
    assert_eq!((c.compared_ios, c.slower_ios), (200, 200));
}

#[test]
fn the_replay_issues_the_traces_ios_in_order_with_their_offsets_and_sizes() {
    let recs: Vec<Record> = (0..100u64)
        .map(|i| {
            Record::new(
                i * 10,
                Op::Write,
                (i * 7919 % 500) * 4096,
                4096 * (1 + i % 4),
            )
        })
        .collect();
    let (r, log) = replay(&mut model(1_000), recs.clone(), Timing::Afap);
    assert_eq!(r.measured.status, RunStatus::Complete);
    let mut by_issue: Vec<&Logged> = log.iter().collect();
    by_issue.sort_by_key(|l| (l.issue, l.seq));
    for (i, (l, rec)) in by_issue.iter().zip(&recs).enumerate() {
        assert_eq!(l.seq, i as u64);
        assert_eq!((l.offset, l.len), (rec.offset_bytes, rec.len_bytes));
    }
}

#[test]
fn null_target_completes_every_operation() {
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    let recs = vec![
        rec(0, Op::Read, 0, Some(100)),
        rec(10, Op::Write, 4096, Some(100)),
        rec(20, Op::Flush, 0, None),
        rec(30, Op::Discard, 8192, None),
    ];
    let (r, log) = replay(&mut t, recs, Timing::Afap);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(log.len(), 4);
    assert_eq!(
        (rp.read.ios, rp.write.ios, rp.flush.ios, rp.discard.ios),
        (1, 1, 1, 1)
    );
    assert!(rp.lag.is_none());
}

/// `n` reads of 4 KiB, all at trace time 0 (so all concurrent by the --afap rule).
fn burst(n: u64, span_blocks: u64) -> Vec<Record> {
    (0..n)
        .map(|i| rec(0, Op::Read, i % span_blocks * 4096, Some(1)))
        .collect()
}

fn assert_distinct_completions(log: &[Logged]) {
    let mut done: Vec<u64> = log.iter().map(|l| l.done).collect();
    done.sort_unstable();
    done.dedup();
    assert_eq!(done.len(), log.len(), "completion times shared by I/Os");
    assert!(log.iter().all(|l| l.done >= l.issue));
}

#[test]
fn a_busy_replay_stamps_each_completion_on_its_own() {
    // Page-cache reads of a file complete as they are submitted, so each look at the
    // ring finds a batch of completions: each gets its own time, not the batch's.
    let d = tempfile::tempdir().unwrap();
    let opts = OpenOptions {
        write: true,
        create_size: 1 << 20,
        ..OpenOptions::default()
    };
    let path = d.path().join("replay.test");
    let mut t = Target::open(TargetSpec::Path(Some(path)), &opts).unwrap();
    let (r, log) = replay(&mut t, burst(3_000, 256), Timing::Afap);
    assert_eq!(r.measured.status, RunStatus::Complete, "{:?}", r.measured);
    assert_eq!(log.len(), 3_000);
    assert!(r.measured.replay.as_ref().unwrap().max_outstanding > 1);
    assert_distinct_completions(&log);
    t.close(false).unwrap();
}

#[test]
fn null_stamps_each_completion_on_its_own() {
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    let (_, log) = replay(&mut t, burst(2_000, 1 << 16), Timing::Afap);
    assert_eq!(log.len(), 2_000);
    assert_distinct_completions(&log);
}

#[test]
fn setting_up_is_before_the_clock_starts_and_reported_apart() {
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    let timing = Timing::Recorded {
        speed: 1.0,
        max_idle_ns: None,
    };
    let recs: Vec<Record> = (0..50)
        .map(|i| rec(i * 1_000, Op::Write, 0, None))
        .collect();
    let (r, log) = replay(&mut t, recs, timing);
    let rp = r.measured.replay.as_ref().unwrap();
    // The setup (write content, trace's first record) took time, and is in no lag.
    assert!(rp.setup_ns > 0);
    assert_eq!(rp.first_issue_lag_ns, Some(log[0].issue));
    assert_eq!(rp.lag.as_ref().unwrap().count, 50);
    // On a simulated drive the setup takes no virtual time: the first I/O due at 0 goes
    // out at 0.
    let (r, log) = replay(&mut model(1_000), vec![rec(0, Op::Read, 0, None)], timing);
    assert_eq!(log[0].issue, 0);
    assert_eq!(r.measured.replay.unwrap().first_issue_lag_ns, Some(0));
}

#[test]
fn a_replay_held_back_by_its_queue_limit_says_so_with_the_limit() {
    // An I/O every ms on a drive that takes 5 ms, at most one in flight: all but the
    // first wait for the slot (virtual time: exact).
    let recs: Vec<Record> = (0..40)
        .map(|i| rec(i * 1_000_000, Op::Read, 0, None))
        .collect();
    let timing = Timing::Recorded {
        speed: 1.0,
        max_idle_ns: None,
    };
    let (r, _) = replay_at_most(&mut model(5_000_000), recs, timing, 1);
    let rp = r.measured.replay.as_ref().unwrap();
    assert!(!rp.kept_up);
    assert!(rp.late_ios > 30);
    assert_eq!(rp.late_causes.queue_limit_ios, rp.late_ios);
    let note = r
        .measured
        .notes
        .iter()
        .find(|n| n.contains("could not keep up"))
        .unwrap();
    assert!(
        note.contains("the limit of 1 I/Os in flight was reached"),
        "{note}"
    );
}

#[test]
fn a_flush_in_the_trace_reaches_the_simulated_drives_cache() {
    // Virtual time: the flush takes the model's 7 ms (its flush_cache), the write before
    // it the model's 1 ms.
    let recs = vec![
        rec(0, Op::Write, 0, None),
        rec(2_000_000, Op::Flush, 0, None),
        rec(20_000_000, Op::Read, 0, None),
    ];
    let timing = Timing::Recorded {
        speed: 1.0,
        max_idle_ns: None,
    };
    let (r, log) = replay(&mut model(1_000_000), recs, timing);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(rp.flush.ios, 1);
    assert_eq!(rp.flush.latency.max_ns, Some(FLUSH_NS));
    assert_eq!(
        (log[1].issue, log[1].done),
        (2_000_000, 2_000_000 + FLUSH_NS)
    );
    assert!(rp.kept_up);
}

/// A file of `mib` MiB for a replay to write.
fn file_target(d: &tempfile::TempDir, mib: u64) -> (Target, std::path::PathBuf) {
    let opts = OpenOptions {
        write: true,
        create_size: mib << 20,
        ..OpenOptions::default()
    };
    let path = d.path().join("replay.test");
    let t = Target::open(TargetSpec::Path(Some(path.clone())), &opts).unwrap();
    (t, path)
}

fn replay_with(
    target: &mut Target,
    w: &Workload,
    records: Vec<Record>,
    timing: Timing,
    max_outstanding: u32,
) -> (RunResult, Vec<Logged>) {
    let p = Placement {
        start_bytes: 0,
        size_bytes: target.info.span_bytes(),
        align_bytes: target.info.logical_sector_bytes as u64,
    };
    let mut s = Schedule::new(records.into_iter().map(Ok), timing, p, true);
    let stop = AtomicBool::new(false);
    let mut log = Vec::new();
    let r = run(
        w,
        target,
        &mut s,
        ReplayOptions {
            timing,
            discards: true,
            max_outstanding,
            stop: &stop,
            progress: None,
            issue_log: Some(&mut log),
        },
    )
    .unwrap();
    (r, parse_log(&String::from_utf8(log).unwrap()))
}

/// Writes of 4 KiB to 256 KiB (larger than the slots' buffers at depth 8 need not be),
/// a flush, a discard, and reads back.
fn mixed(n: u64) -> Vec<Record> {
    let mut v: Vec<Record> = (0..n)
        .map(|i| Record::new(i * 1_000, Op::Write, i * (256 << 10), 4096 << (i % 7)))
        .collect();
    v.push(Record::new(n * 1_000, Op::Flush, 0, 0));
    v.push(Record::new(
        n * 1_000 + 1,
        Op::Discard,
        (n + 1) * (256 << 10),
        1 << 20,
    ));
    v.extend((0..n).map(|i| Record::new(n * 2_000 + i, Op::Read, i * (256 << 10), 4096)));
    v
}

/// Every byte the replay wrote carries its own offset (drivelab's content), so each
/// write went whole where the trace put it.
fn assert_written(path: &std::path::Path, recs: &[Record]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    for r in recs.iter().filter(|r| r.op == Op::Write) {
        let mut buf = vec![0u8; r.len_bytes as usize];
        f.read_exact_at(&mut buf, r.offset_bytes).unwrap();
        for (i, sector) in buf.chunks(512).enumerate() {
            assert_eq!(
                crate::data::stamped_offset(sector),
                r.offset_bytes + i as u64 * 512
            );
        }
    }
}

#[test]
fn a_replay_runs_on_the_sync_engine_too_one_io_at_a_time() {
    let d = tempfile::tempdir().unwrap();
    let (mut t, path) = file_target(&d, 64);
    let mut w = workload();
    w.ioengine = crate::spec::IoEngine::Sync;
    let recs = mixed(40);
    let (r, log) = replay_with(&mut t, &w, recs.clone(), Timing::Afap, 8);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(r.measured.status, RunStatus::Complete, "{:?}", r.measured);
    assert_eq!(r.config.ioengine, crate::spec::IoEngine::Sync);
    assert_eq!(rp.max_outstanding, 1);
    assert_eq!(
        (rp.write.ios, rp.flush.ios, rp.discard.ios, rp.read.ios),
        (40, 1, 1, 40)
    );
    assert_eq!(log.len(), recs.len());
    t.close(true).unwrap();
    assert_written(&path, &recs);
}

#[test]
fn a_replay_on_io_uring_uses_the_engines_registered_buffers() {
    let d = tempfile::tempdir().unwrap();
    let (mut t, path) = file_target(&d, 64);
    let mut w = workload();
    w.fixedbufs = true;
    w.registerfiles = true;
    let recs = mixed(60);
    let (r, log) = replay_with(&mut t, &w, recs.clone(), Timing::Afap, 8);
    let rp = r.measured.replay.as_ref().unwrap();
    assert_eq!(r.measured.status, RunStatus::Complete, "{:?}", r.measured);
    assert_eq!(r.config.iodepth, 8);
    assert!(
        !r.measured
            .notes
            .iter()
            .any(|n| n.contains("refused to register")),
        "{:?}",
        r.measured.notes
    );
    assert_eq!(
        (rp.write.ios, rp.flush.ios, rp.discard.ios, rp.read.ios),
        (60, 1, 1, 60)
    );
    assert_eq!(log.len(), recs.len());
    t.close(true).unwrap();
    assert_written(&path, &recs);
}
