//! The replay loop on a fixed-latency model (virtual time: exact) and on `null`.

use super::*;
use crate::model::{ModelInfo, SensorReading};
use crate::op::IoOp;
use crate::target::{OpenOptions, TargetSpec};
use drivelab_trace::Record;

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
    let p = Placement {
        start_bytes: 0,
        size_bytes: target.info.capacity_bytes,
        align_bytes: target.info.logical_sector_bytes as u64,
    };
    let mut s = Schedule::new(records.into_iter().map(Ok), timing, p, true);
    let stop = AtomicBool::new(false);
    let mut log = Vec::new();
    let r = run(
        &workload(),
        target,
        &mut s,
        ReplayOptions {
            timing,
            discards: true,
            max_outstanding: DEFAULT_MAX_OUTSTANDING,
            stop: &stop,
            progress: None,
            issue_log: Some(&mut log),
        },
    )
    .unwrap();
    (r, parse_log(&String::from_utf8(log).unwrap()))
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
