//! What `drivelab trace info` says about a trace: totals, the read/write mix, the size
//! distribution, the processes, and the most requests outstanding at once (when every
//! record carries its service time). One pass, memory bounded by the number of distinct
//! processes and the outstanding requests.

use crate::{Op, Record};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Counts and bytes of one operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OpCount {
    pub count: u64,
    pub bytes: u64,
}

/// Requests of a size class: sizes up to `max_bytes` (and above the class before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SizeClass {
    pub max_bytes: u64,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessCount {
    pub pid: u32,
    pub name: Option<String>,
    pub ios: u64,
}

/// The summary of a trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    pub records: u64,
    /// Issue time of the last record (the first is at 0).
    pub duration_ns: u64,
    pub read: OpCount,
    pub write: OpCount,
    pub flush: OpCount,
    pub discard: OpCount,
    pub fua_writes: u64,
    /// Reads among reads and writes, by count and by bytes (percent; none without any).
    pub read_share_of_ios_percent: Option<f64>,
    pub read_share_of_bytes_percent: Option<f64>,
    /// Reads, writes and discards by size, in power-of-two classes (empty ones left out).
    pub size_distribution: Vec<SizeClass>,
    /// The lowest offset and the highest end of a request with data.
    pub lowest_offset_bytes: Option<u64>,
    pub highest_end_bytes: Option<u64>,
    pub with_service_time: u64,
    /// The most requests outstanding at once, when every record has its service time.
    pub max_outstanding: Option<u64>,
    /// The processes that issued the most requests (at most 10), when the trace names
    /// them.
    pub top_processes: Vec<ProcessCount>,
}

/// Builds [`Stats`] one record at a time.
pub struct StatsBuilder {
    s: Stats,
    classes: [u64; 65],
    /// Completion times of the requests outstanding.
    completions: BinaryHeap<Reverse<u64>>,
    max_outstanding: u64,
    pids: HashMap<u32, u64>,
}

impl Default for StatsBuilder {
    fn default() -> StatsBuilder {
        StatsBuilder {
            s: Stats::default(),
            classes: [0; 65],
            completions: BinaryHeap::new(),
            max_outstanding: 0,
            pids: HashMap::new(),
        }
    }
}

impl StatsBuilder {
    pub fn add(&mut self, r: &Record) {
        let s = &mut self.s;
        s.records += 1;
        s.duration_ns = s.duration_ns.max(r.issue_ns);
        let c = match r.op {
            Op::Read => &mut s.read,
            Op::Write => &mut s.write,
            Op::Flush => &mut s.flush,
            Op::Discard => &mut s.discard,
        };
        c.count += 1;
        c.bytes = c.bytes.saturating_add(r.len_bytes);
        s.fua_writes += u64::from(r.fua && r.op == Op::Write);
        if r.op != Op::Flush {
            self.classes[64 - r.len_bytes.saturating_sub(1).leading_zeros() as usize] += 1;
            s.lowest_offset_bytes = Some(
                s.lowest_offset_bytes
                    .map_or(r.offset_bytes, |l| l.min(r.offset_bytes)),
            );
            let end = r.offset_bytes.saturating_add(r.len_bytes);
            s.highest_end_bytes = Some(s.highest_end_bytes.map_or(end, |h| h.max(end)));
        }
        if let Some(pid) = r.pid {
            *self.pids.entry(pid).or_default() += 1;
        }
        if let Some(svc) = r.service_ns {
            s.with_service_time += 1;
            while self.completions.peek().is_some_and(|c| c.0 <= r.issue_ns) {
                self.completions.pop();
            }
            self.completions
                .push(Reverse(r.issue_ns.saturating_add(svc)));
            self.max_outstanding = self.max_outstanding.max(self.completions.len() as u64);
        }
    }

    /// The summary; `name` gives a process's name.
    pub fn finish(mut self, name: impl Fn(u32) -> Option<String>) -> Stats {
        let s = &mut self.s;
        let share = |a: u64, b: u64| (a + b > 0).then(|| 100.0 * a as f64 / (a + b) as f64);
        s.read_share_of_ios_percent = share(s.read.count, s.write.count);
        s.read_share_of_bytes_percent = share(s.read.bytes, s.write.bytes);
        s.size_distribution = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &count)| SizeClass {
                max_bytes: if i == 64 { u64::MAX } else { 1u64 << i },
                count,
            })
            .collect();
        s.max_outstanding =
            (s.records > 0 && s.with_service_time == s.records).then_some(self.max_outstanding);
        let mut pids: Vec<(u32, u64)> = self.pids.into_iter().collect();
        pids.sort_by_key(|&(pid, n)| (Reverse(n), pid));
        s.top_processes = pids
            .into_iter()
            .take(10)
            .map(|(pid, ios)| ProcessCount {
                pid,
                name: name(pid),
                ios,
            })
            .collect();
        self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_sizes_and_outstanding() {
        let mut b = StatsBuilder::default();
        let rec = |t, op, len, svc| Record {
            service_ns: Some(svc),
            pid: Some(7),
            ..Record::new(t, op, 4096, len)
        };
        for r in [
            rec(0, Op::Read, 4096, 100),
            rec(10, Op::Read, 4096, 100),
            rec(20, Op::Write, 65536, 5),
            rec(200, Op::Write, 3000, 10),
            rec(300, Op::Flush, 0, 1),
        ] {
            b.add(&r);
        }
        let s = b.finish(|p| (p == 7).then(|| "fio".into()));
        assert_eq!((s.records, s.duration_ns), (5, 300));
        assert_eq!(
            s.read,
            OpCount {
                count: 2,
                bytes: 8192
            }
        );
        assert_eq!(s.read_share_of_ios_percent, Some(50.0));
        assert_eq!(
            s.size_distribution,
            [
                SizeClass {
                    max_bytes: 4096,
                    count: 3
                },
                SizeClass {
                    max_bytes: 65536,
                    count: 1
                }
            ]
        );
        assert_eq!(s.max_outstanding, Some(3));
        assert_eq!(s.highest_end_bytes, Some(4096 + 65536));
        assert_eq!(
            s.top_processes,
            [ProcessCount {
                pid: 7,
                name: Some("fio".into()),
                ios: 5
            }]
        );
    }

    #[test]
    fn no_outstanding_figure_without_every_service_time() {
        let mut b = StatsBuilder::default();
        b.add(&Record::new(0, Op::Read, 0, 512));
        assert_eq!(b.finish(|_| None).max_outstanding, None);
    }
}
