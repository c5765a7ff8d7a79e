//! From a trace's records to the I/Os a replay issues: when (as recorded, scaled by
//! `--speed`, long gaps cut to `--max-idle`), how many may be outstanding (`--afap`:
//! the trace's own concurrency at that point) and where (offsets mapped into the
//! target's span). Pure and streaming: one record in, at most one I/O out, and memory
//! bounded by the trace's concurrency (at most [`MAX_TRACKED`] I/Os), not its length.
//!
//! **Concurrency rule (`--afap`).** The trace's outstanding count when record *i* was
//! issued is the number of records *j ≤ i* issued at or before it and not yet complete
//! (`issue_ns + service_ns` later than record *i*'s issue). A record without a service
//! time counts as complete 1 ns after its issue: records issued at the same nanosecond
//! count as concurrent, the others as one after another (a trace without service times
//! replays at the concurrency of its simultaneous bursts, never deeper). Record *i* is
//! issued once fewer than that many of the replay's I/Os are outstanding.
//!
//! **Placement rule.** An I/O keeps its offset when it fits in the span. One that does
//! not is placed at `offset mod span`, rounded down to the alignment, and moved back so
//! that it ends inside the span when it would cross the end; its size never changes.
//! Offsets and sizes that are not multiples of the alignment (the target's logical
//! sector, which direct I/O needs) are widened to it: start rounded down, end up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use drivelab_trace::{Op, Record, TraceError};
use serde::{Deserialize, Serialize};

/// The most outstanding trace I/Os the concurrency rule tracks; a trace claiming more at
/// one point counts as this many there.
pub const MAX_TRACKED: usize = 1 << 16;
/// The largest read or write replayed: a longer one in a trace is an error (its buffer,
/// times the I/Os in flight, must fit in memory).
pub const MAX_IO_BYTES: u64 = 64 << 20;

/// How the replay is timed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Timing {
    /// Open loop: each I/O issued at its recorded time divided by `speed`, gaps longer
    /// than `max_idle_ns` (of trace time) cut to it.
    Recorded {
        speed: f64,
        max_idle_ns: Option<u64>,
    },
    /// As fast as possible, never more outstanding than the trace had at that point.
    Afap,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayIo {
    /// Place in the trace (0-based, counting replayed records only).
    pub seq: u64,
    /// When to issue it, ns after the replay's start (0 with `--afap`).
    pub due_ns: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub fua: bool,
    /// With `--afap`: issue only while fewer than this many are outstanding.
    pub depth: u32,
    /// The original service time, when the trace has it.
    pub orig_service_ns: Option<u64>,
}

impl ReplayIo {
    /// What a backend's issuer needs of it.
    pub fn any_op(&self) -> crate::op::AnyOp {
        crate::op::AnyOp {
            op: self.op,
            offset_bytes: self.offset_bytes,
            len_bytes: self.len_bytes,
            fua: self.fua,
            tag: 0,
        }
    }
}

/// Where I/Os go: the span `[start, start + size)` of the target, in units of `align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub start_bytes: u64,
    pub size_bytes: u64,
    pub align_bytes: u64,
}

impl Placement {
    /// The span's length in whole alignment units.
    pub fn span(&self) -> u64 {
        let a = self.align_bytes.max(1);
        self.size_bytes / a * a
    }

    /// Where an I/O of `len` at `offset` lands (relative offset, length), and whether it
    /// was moved (`remapped`) or widened (`realigned`); Err when it cannot fit at all.
    pub fn place(&self, offset: u64, len: u64) -> Result<(u64, u64, bool, bool), String> {
        let a = self.align_bytes.max(1);
        let start = offset / a * a;
        let end = offset.saturating_add(len).div_ceil(a).saturating_mul(a);
        let (off, len2) = (start, end - start);
        let realigned = off != offset || len2 != len;
        let span = self.size_bytes / a * a;
        if len2 > span {
            return Err(format!(
                "an I/O of {len2} bytes is larger than the target's span of {span} bytes"
            ));
        }
        if off + len2 <= span {
            return Ok((self.start_bytes + off, len2, false, realigned));
        }
        let mut at = off % span / a * a;
        if at + len2 > span {
            at = (span - len2) / a * a;
        }
        Ok((self.start_bytes + at, len2, true, realigned))
    }
}

/// What the schedule did besides passing records on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleCounts {
    pub records_read: u64,
    pub discards_skipped: u64,
    /// I/Os placed elsewhere in the span than their recorded offset (did not fit).
    pub remapped_ios: u64,
    /// I/Os widened to the alignment.
    pub realigned_ios: u64,
    /// Gaps longer than `--max-idle`, and the trace time cut from them.
    pub gaps_compressed: u64,
    pub idle_removed_ns: u64,
    /// Deepest concurrency the trace had (by the rule above).
    pub trace_max_outstanding: u32,
    /// Records that carried the original service time.
    pub with_service_time: u64,
    /// Issue time of the last record (ns from the trace's start).
    pub trace_last_issue_ns: u64,
}

/// The part of a trace one replay step issues: records with `from_ns <= issue_ns <
/// to_ns` (trace time; no end: to the trace's end). The records before it still count
/// for the concurrency rule and the idle cut, so a trace replayed in windows issues what
/// it would have issued in one go; due times count from the window's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Window {
    pub from_ns: u64,
    pub to_ns: Option<u64>,
}

/// The trace's records as I/Os to issue.
pub struct Schedule<I> {
    src: I,
    timing: Timing,
    placement: Placement,
    discards: bool,
    window: Window,
    prev_issue_ns: Option<u64>,
    /// Trace time of the previous record less all idle cut before it.
    prev_eff_ns: u64,
    /// The window's start on that scale, once known.
    origin_eff_ns: Option<u64>,
    /// Due time of the window's end, once the trace reached it.
    end_due_ns: Option<u64>,
    finished: bool,
    /// Completion times of the trace's I/Os still outstanding (by the rule above).
    outstanding: BinaryHeap<Reverse<u64>>,
    /// Records read from the trace (for messages: 1-based record numbers).
    record_no: u64,
    seq: u64,
    /// Counts of the window's records.
    pub counts: ScheduleCounts,
}

impl<I: Iterator<Item = Result<Record, TraceError>>> Schedule<I> {
    pub fn new(src: I, timing: Timing, placement: Placement, discards: bool) -> Schedule<I> {
        Schedule::window(src, timing, placement, discards, Window::default())
    }

    /// Only the records of `window`.
    pub fn window(
        src: I,
        timing: Timing,
        placement: Placement,
        discards: bool,
        window: Window,
    ) -> Schedule<I> {
        Schedule {
            src,
            timing,
            placement,
            discards,
            window,
            prev_issue_ns: None,
            prev_eff_ns: 0,
            origin_eff_ns: None,
            end_due_ns: None,
            finished: false,
            outstanding: BinaryHeap::new(),
            record_no: 0,
            seq: 0,
            counts: ScheduleCounts::default(),
        }
    }

    /// Open loop with a window that ends before the trace does: when (from the window's
    /// start) the window ends, known once the trace has been read up to it. The replay
    /// idles until then, so the idle time across windows is the trace's.
    pub fn end_due_ns(&self) -> Option<u64> {
        self.end_due_ns
    }

    /// The next I/O, None at the end of the trace or window; Err names the record.
    pub fn next_io(&mut self) -> Result<Option<ReplayIo>, String> {
        while !self.finished {
            let r = match self.src.next() {
                None => {
                    self.finished = true;
                    return Ok(None);
                }
                Some(Err(e)) => return Err(format!("the trace: {e}")),
                Some(Ok(r)) => r,
            };
            self.record_no += 1;
            if let Some(to) = self.window.to_ns.filter(|&to| r.issue_ns >= to) {
                self.finished = true;
                let origin = self.origin_eff();
                self.end_due_ns = Some(self.scale(self.eff_at(to).saturating_sub(origin)));
                return Ok(None);
            }
            if let Some(io) = self.take(r)? {
                return Ok(Some(io));
            }
        }
        Ok(None)
    }

    /// One record: an I/O to issue, or None when it is before the window or skipped.
    fn take(&mut self, r: Record) -> Result<Option<ReplayIo>, String> {
        let n = self.record_no;
        // Records are in issue order; one out of order counts as issued with the last.
        let issue = r.issue_ns.max(self.prev_issue_ns.unwrap_or(0));
        let inside = issue >= self.window.from_ns;
        if inside && self.origin_eff_ns.is_none() {
            self.origin_eff_ns = Some(self.eff_at(self.window.from_ns));
        }
        let eff = self.eff_at(issue);
        if let (
            Some(prev),
            Timing::Recorded {
                max_idle_ns: Some(m),
                ..
            },
        ) = (self.prev_issue_ns, self.timing)
        {
            if inside && issue - prev > m {
                self.counts.gaps_compressed += 1;
                self.counts.idle_removed_ns += issue - prev - m;
            }
        }
        self.prev_issue_ns = Some(issue);
        self.prev_eff_ns = eff;
        let depth = self.depth_at(&r);
        if !inside {
            return Ok(None);
        }
        let c = &mut self.counts;
        c.records_read += 1;
        c.with_service_time += r.service_ns.is_some() as u64;
        c.trace_max_outstanding = c.trace_max_outstanding.max(depth);
        c.trace_last_issue_ns = issue;
        if r.op == Op::Discard && !self.discards {
            c.discards_skipped += 1;
            return Ok(None);
        }
        if matches!(r.op, Op::Read | Op::Write) && r.len_bytes > MAX_IO_BYTES {
            return Err(format!(
                "the trace's record {n}: a {} of {} bytes is larger than the {} MiB drivelab replays",
                r.op.name(),
                r.len_bytes,
                MAX_IO_BYTES >> 20
            ));
        }
        let (offset_bytes, len_bytes) = if r.op == Op::Flush {
            (0, 0)
        } else {
            let (o, l, moved, widened) = match self.placement.place(r.offset_bytes, r.len_bytes) {
                Ok(p) => p,
                // A discard of more than the span (mkfs discards a whole device)
                // discards the span.
                Err(_) if r.op == Op::Discard => (
                    self.placement.start_bytes,
                    self.placement.span(),
                    true,
                    false,
                ),
                Err(e) => return Err(format!("the trace's record {n}: {e}")),
            };
            self.counts.remapped_ios += moved as u64;
            self.counts.realigned_ios += widened as u64;
            (o, l)
        };
        let origin = self.origin_eff();
        let io = ReplayIo {
            seq: self.seq,
            due_ns: self.scale(eff - origin),
            op: r.op,
            offset_bytes,
            len_bytes,
            fua: r.fua,
            depth,
            orig_service_ns: r.service_ns,
        };
        self.seq += 1;
        Ok(Some(io))
    }

    /// Trace time `t` (at or after the previous record) less all the idle cut before it.
    fn eff_at(&self, t: u64) -> u64 {
        let Some(prev) = self.prev_issue_ns else {
            return t;
        };
        let gap = t.saturating_sub(prev);
        let kept = match self.timing {
            Timing::Recorded {
                max_idle_ns: Some(m),
                ..
            } => gap.min(m),
            _ => gap,
        };
        self.prev_eff_ns + kept
    }

    fn origin_eff(&self) -> u64 {
        self.origin_eff_ns
            .unwrap_or_else(|| self.eff_at(self.window.from_ns))
    }

    /// A span of (idle-cut) trace time as replay time.
    fn scale(&self, ns: u64) -> u64 {
        match self.timing {
            Timing::Afap => 0,
            Timing::Recorded { speed, .. } => (ns as f64 / speed) as u64,
        }
    }

    /// The trace's outstanding I/Os when `r` was issued, itself included.
    fn depth_at(&mut self, r: &Record) -> u32 {
        while self.outstanding.peek().is_some_and(|t| t.0 <= r.issue_ns) {
            self.outstanding.pop();
        }
        let done = r.issue_ns + r.service_ns.unwrap_or(1).max(1);
        if self.outstanding.len() < MAX_TRACKED {
            self.outstanding.push(Reverse(done));
        }
        self.outstanding.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64, op: Op, off: u64, len: u64, svc: Option<u64>) -> Record {
        Record {
            service_ns: svc,
            ..Record::new(t, op, off, len)
        }
    }

    fn all(records: Vec<Record>, timing: Timing, p: Placement) -> (Vec<ReplayIo>, ScheduleCounts) {
        let mut s = Schedule::new(records.into_iter().map(Ok), timing, p, true);
        let mut out = Vec::new();
        while let Some(io) = s.next_io().unwrap() {
            out.push(io);
        }
        (out, s.counts)
    }

    const SPAN: Placement = Placement {
        start_bytes: 0,
        size_bytes: 1 << 20,
        align_bytes: 4096,
    };

    #[test]
    fn speed_scales_and_max_idle_cuts_long_gaps_only() {
        let r = vec![
            rec(0, Op::Read, 0, 4096, None),
            rec(1_000, Op::Read, 0, 4096, None),
            rec(10_001_000, Op::Read, 0, 4096, None),
            rec(10_002_000, Op::Read, 0, 4096, None),
        ];
        let t = Timing::Recorded {
            speed: 2.0,
            max_idle_ns: Some(1_000_000),
        };
        let (ios, c) = all(r, t, SPAN);
        let due: Vec<u64> = ios.iter().map(|i| i.due_ns).collect();
        assert_eq!(due, vec![0, 500, 500_500, 501_000]);
        assert_eq!((c.gaps_compressed, c.idle_removed_ns), (1, 9_000_000));
    }

    #[test]
    fn depth_follows_service_times_and_simultaneous_issues() {
        let r = vec![
            rec(0, Op::Read, 0, 4096, Some(100)),
            rec(10, Op::Read, 0, 4096, Some(100)),
            rec(20, Op::Write, 0, 4096, Some(5)),
            // The first two are done by 100 and 110; the third by 25.
            rec(105, Op::Read, 0, 4096, Some(1)),
            // No service time: concurrent with the one at the same nanosecond only.
            rec(200, Op::Read, 0, 4096, None),
            rec(200, Op::Read, 0, 4096, None),
            rec(300, Op::Read, 0, 4096, None),
        ];
        let (ios, c) = all(r, Timing::Afap, SPAN);
        let depth: Vec<u32> = ios.iter().map(|i| i.depth).collect();
        assert_eq!(depth, vec![1, 2, 3, 2, 1, 2, 1]);
        assert_eq!(c.trace_max_outstanding, 3);
        assert!(ios.iter().all(|i| i.due_ns == 0));
    }

    #[test]
    fn offsets_that_fit_are_kept_others_wrap_into_the_span() {
        let p = Placement {
            start_bytes: 8192,
            ..SPAN
        };
        assert_eq!(
            p.place(4096, 4096).unwrap(),
            (8192 + 4096, 4096, false, false)
        );
        // Past the end: modulo the span.
        assert_eq!(
            p.place((1 << 20) + 12288, 8192).unwrap(),
            (8192 + 12288, 8192, true, false)
        );
        // Would cross the end after the modulo: moved back to end inside.
        assert_eq!(
            p.place((2 << 20) - 4096, 8192).unwrap(),
            (8192 + (1 << 20) - 8192, 8192, true, false)
        );
        // Unaligned: widened to the 4 KiB unit.
        assert_eq!(p.place(100, 200).unwrap(), (8192, 4096, false, true));
        assert!(p.place(0, 2 << 20).is_err());
    }

    #[test]
    fn a_discard_larger_than_the_span_discards_the_span() {
        let r = vec![rec(0, Op::Discard, 0, 8 << 20, None)];
        let (ios, c) = all(r, Timing::Afap, SPAN);
        assert_eq!((ios[0].offset_bytes, ios[0].len_bytes), (0, 1 << 20));
        assert_eq!(c.remapped_ios, 1);
    }

    #[test]
    fn windows_issue_what_one_replay_would_with_the_idle_split_between_them() {
        // Gaps of 3 s, cut to 2 s; windows of 4 s of trace time.
        let r: Vec<Record> = (0..6)
            .map(|i| rec(i * 3_000_000_000, Op::Read, 0, 4096, Some(4_000_000_000)))
            .collect();
        let t = Timing::Recorded {
            speed: 1.0,
            max_idle_ns: Some(2_000_000_000),
        };
        let (whole, _) = all(r.clone(), t, SPAN);
        let mut joined = Vec::new();
        let mut at = 0;
        // Four windows: the last (no end) from 12 s.
        for k in 0..4u64 {
            let to = (k < 3).then_some((k + 1) * 4_000_000_000);
            let w = Window {
                from_ns: k * 4_000_000_000,
                to_ns: to,
            };
            let mut s = Schedule::window(r.clone().into_iter().map(Ok), t, SPAN, true, w);
            while let Some(io) = s.next_io().unwrap() {
                joined.push((at + io.due_ns, io.depth));
            }
            at += s.end_due_ns().unwrap_or(0);
            assert_eq!(s.end_due_ns().is_some(), k < 3);
        }
        let want: Vec<(u64, u32)> = whole.iter().map(|i| (i.due_ns, i.depth)).collect();
        assert_eq!(joined, want);
    }

    #[test]
    fn skipped_discards_still_count_for_timing_and_depth() {
        let r = vec![
            rec(0, Op::Discard, 0, 4096, Some(50)),
            rec(10, Op::Read, 0, 4096, Some(50)),
        ];
        let mut s = Schedule::new(r.into_iter().map(Ok), Timing::Afap, SPAN, false);
        let io = s.next_io().unwrap().unwrap();
        assert_eq!((io.op, io.depth, io.seq), (Op::Read, 2, 0));
        assert!(s.next_io().unwrap().is_none());
        assert_eq!(s.counts.discards_skipped, 1);
    }
}
