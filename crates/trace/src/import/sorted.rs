//! Issue order and rebased times: a bounded reorder window over an importer's records.

use crate::Record;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// How many records an importer holds to put slightly disordered lines in time order.
pub const REORDER_WINDOW: usize = 1 << 16;

struct Held {
    seq: u64,
    r: Record,
}

impl PartialEq for Held {
    fn eq(&self, o: &Held) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Held) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Held) -> Ordering {
        (self.r.issue_ns, self.seq).cmp(&(o.r.issue_ns, o.seq))
    }
}

/// Takes records with times on the source's own clock (ns), gives them back in time
/// order with times since the first one.
#[derive(Default)]
pub(crate) struct Sorter {
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    base: Option<u64>,
    last: u64,
    late: u64,
}

impl Sorter {
    /// Take `r`; give back the earliest record when the window is full.
    pub fn push(&mut self, r: Record) -> Option<Record> {
        self.seq += 1;
        self.heap.push(Reverse(Held { seq: self.seq, r }));
        if self.heap.len() > REORDER_WINDOW {
            self.pop()
        } else {
            None
        }
    }

    /// The earliest record held (at the end of the input: until none is left).
    pub fn pop(&mut self) -> Option<Record> {
        let Reverse(Held { mut r, .. }) = self.heap.pop()?;
        let base = *self.base.get_or_insert(r.issue_ns);
        if r.issue_ns < self.last {
            self.late += 1;
            r.issue_ns = self.last;
        }
        self.last = r.issue_ns;
        r.issue_ns -= base;
        Some(r)
    }

    /// The source-clock time of the first record, once one was given back.
    pub fn base(&self) -> Option<u64> {
        self.base
    }

    pub fn notes(&self, notes: &mut Vec<String>) {
        if self.late > 0 {
            notes.push(format!(
                "{} records were more than {REORDER_WINDOW} records out of time order: each kept its place and took the issue time of the record before it",
                self.late
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    #[test]
    fn sorts_within_the_window_and_rebases() {
        let mut s = Sorter::default();
        let mut out = Vec::new();
        for t in [1_000, 900, 1_100] {
            out.extend(s.push(Record::new(t, Op::Read, t, 512)));
        }
        out.extend(std::iter::from_fn(|| s.pop()));
        let times: Vec<u64> = out.iter().map(|r| r.issue_ns).collect();
        assert_eq!(times, [0, 100, 200]);
        assert_eq!(out[0].offset_bytes, 900);
        assert_eq!(s.base(), Some(900));
    }

    #[test]
    fn a_record_beyond_the_window_takes_the_previous_time_and_is_noted() {
        let mut s = Sorter::default();
        let mut out = Vec::new();
        for i in 0..REORDER_WINDOW as u64 + 10 {
            out.extend(s.push(Record::new(1_000 + i, Op::Read, 0, 512)));
        }
        out.extend(s.push(Record::new(5, Op::Write, 0, 512)));
        out.extend(std::iter::from_fn(|| s.pop()));
        assert!(out.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
        let late = out.iter().find(|r| r.op == Op::Write).unwrap();
        assert_eq!(late.issue_ns, 9, "the time of the record written before it");
        let mut notes = Vec::new();
        s.notes(&mut notes);
        assert!(
            notes[0].starts_with("1 records were more than"),
            "{notes:?}"
        );
    }
}
