//! The drive's volatile write cache, FLUSH, and a power cut: which acknowledged writes a
//! cut at a given virtual time loses, classified the way a power-loss checker reports
//! them.
//!
//! Every host page written is an entry (logical page, program end, acknowledgement
//! time) until it is durable. Without a volatile cache (`write_cache=none`) a write is
//! acknowledged when its programs end, so a cut loses only writes still in flight
//! (never acknowledged). With `write_cache=volatile` a write is acknowledged when it is
//! in the cache and has room there (a full cache holds it until its oldest entry is
//! written back); an entry is durable when its program has ended (`flush=honest` or
//! `delayed`) or, with `flush=ignored`, only when it is evicted for room or the drive
//! goes idle. An honest FLUSH completes when every entry before it is durable; a delayed
//! or ignored one at once. A cut at `T` loses every entry not durable at `T`:
//! `unacknowledged` (its write had not completed), `after_flush` (a FLUSH submitted after
//! its acknowledgement had returned to the host by `T`: the defect a power-loss test
//! looks for; a FLUSH completed in the drive whose completion the cut kept from the host
//! promised nothing) or `unflushed` (acknowledged, never flushed: allowed for a volatile
//! cache). A page is
//! classed by what the medium holds after the cut, its newest durable write: lost after a
//! flush when that is older than the latest write a completed flush covered.
//!
//! Every page write has a sequence number; the cut returns the numbers it lost, so that
//! a drive keeping content (`SimDevice::keep_content`) reads back what the medium holds.

use std::collections::{BTreeMap, HashSet, VecDeque};

use serde_json::{json, Value};

use crate::config::{FlushMode, WriteCache, PAGE_BYTES};

#[derive(Debug, Clone, Copy)]
struct Entry {
    lpn: u32,
    /// The page write's number, in write order (from 0 for the drive).
    seq: u64,
    end_ns: u64,
    ack_ns: u64,
}

/// What a power cut lost, as sorted logical pages by class.
#[derive(Debug, Clone, Default)]
struct Lost {
    at_ns: u64,
    after_flush: Vec<u32>,
    unflushed: Vec<u32>,
    unacknowledged: Vec<u32>,
}

/// Entries not yet durable, flushes, and a pending or past power cut.
#[derive(Debug)]
pub struct CacheTracker {
    volatile: bool,
    cap_pages: usize,
    flush: FlushMode,
    fifo: VecDeque<Entry>,
    /// Entries out of the FIFO whose durability comes after a pending cut.
    limbo: Vec<Entry>,
    /// The latest submission of a FLUSH that returned to the host by the pending cut:
    /// writes acknowledged by then were covered by it.
    flushed_before_cut: Option<u64>,
    cut_at: Option<u64>,
    lost: Option<Lost>,
    next_seq: u64,
}

impl CacheTracker {
    /// A tracker when the drive has a volatile cache or a power cut; None otherwise.
    pub fn new(
        cache: WriteCache,
        cache_bytes: u64,
        flush: FlushMode,
        cut_at: Option<u64>,
    ) -> Option<CacheTracker> {
        let volatile = cache == WriteCache::Volatile;
        (volatile || cut_at.is_some()).then(|| CacheTracker {
            volatile,
            cap_pages: (cache_bytes / PAGE_BYTES).max(1) as usize,
            flush,
            fifo: VecDeque::new(),
            limbo: Vec::new(),
            flushed_before_cut: None,
            cut_at,
            lost: None,
            next_seq: 0,
        })
    }

    /// Whether a write is acknowledged before its programs end.
    pub fn volatile(&self) -> bool {
        self.volatile
    }

    /// Take an entry out of the FIFO as durable at `durable_ns`.
    fn retire(&mut self, e: Entry, durable_ns: u64) {
        if self.cut_at.is_some_and(|c| durable_ns > c) {
            self.limbo.push(e);
        }
    }

    /// Entries durable by `t` by their own programs leave the front of the FIFO.
    fn retire_ended(&mut self, t: u64) {
        if self.volatile && self.flush == FlushMode::Ignored {
            return;
        }
        while let Some(&e) = self.fifo.front().filter(|e| e.end_ns <= t) {
            self.fifo.pop_front();
            self.retire(e, e.end_ns);
        }
    }

    /// A host write of `pages` whose data is in the drive at `in_ns` and programmed by
    /// `programmed_ns`: returns when it is acknowledged (before the command latency).
    pub fn write(
        &mut self,
        pages: std::ops::RangeInclusive<u32>,
        in_ns: u64,
        programmed_ns: u64,
    ) -> u64 {
        self.retire_ended(in_ns);
        let n = pages.clone().count();
        let ack = if self.volatile {
            // Room for the command: the oldest entries are written back first.
            let mut wait = in_ns;
            while self.fifo.len() + n > self.cap_pages {
                let Some(e) = self.fifo.pop_front() else {
                    break;
                };
                wait = wait.max(e.end_ns);
                self.retire(e, wait);
            }
            wait
        } else {
            in_ns.max(programmed_ns)
        };
        for lpn in pages {
            self.next_seq += 1;
            self.fifo.push_back(Entry {
                lpn,
                seq: self.next_seq - 1,
                end_ns: programmed_ns,
                ack_ns: ack,
            });
        }
        ack
    }

    /// The sequence number the next page write gets (the pages of one write take
    /// consecutive numbers).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// A FLUSH submitted at `t`: returns when it completes (before the command latency,
    /// `latency_ns`: it covers writes for the host only once it returned to the host).
    pub fn flush(&mut self, t: u64, latency_ns: u64) -> u64 {
        self.retire_ended(t);
        let done = match self.flush {
            FlushMode::Honest if self.volatile => {
                let end = self.fifo.iter().map(|e| e.end_ns).max().unwrap_or(t).max(t);
                // Everything before it is on NAND when it completes.
                while let Some(e) = self.fifo.pop_front() {
                    self.retire(e, e.end_ns);
                }
                end
            }
            _ => t,
        };
        if self
            .cut_at
            .is_some_and(|c| done.saturating_add(latency_ns) < c)
        {
            self.flushed_before_cut = Some(t);
        }
        done
    }

    /// The drive is idle from `from`: the cache is written back.
    pub fn drain(&mut self, from: u64) {
        while let Some(e) = self.fifo.pop_front() {
            self.retire(e, e.end_ns.max(from));
        }
    }

    /// Cut the power if it is due by `t` (once): what is not durable at the cut is lost.
    /// Returns the sequence numbers of the page writes lost, when the cut happens now.
    pub fn power_cut_due(&mut self, t: u64) -> Option<HashSet<u64>> {
        let cut = self.cut_at.filter(|&c| c <= t)?;
        self.cut_at = None;
        let ignored = self.volatile && self.flush == FlushMode::Ignored;
        let covered = self.flushed_before_cut;
        // Per page, in write order, the writes not durable before the cut (entries in
        // limbo are older than the FIFO's and were all durable after the cut); writes
        // durable before the cut are older still.
        let mut pages: BTreeMap<u32, Vec<(Entry, bool)>> = BTreeMap::new();
        let limbo = self.limbo.iter().map(|&e| (e, true));
        let fifo = self.fifo.iter().map(|&e| (e, ignored || e.end_ns > cut));
        for (e, lost) in limbo.chain(fifo) {
            pages.entry(e.lpn).or_default().push((e, lost));
        }
        let mut lost = Lost {
            at_ns: cut,
            ..Lost::default()
        };
        let mut seqs = HashSet::new();
        for (lpn, writes) in pages {
            seqs.extend(writes.iter().filter(|w| w.1).map(|w| w.0.seq));
            if let Some(class) = page_class(&writes, cut, covered) {
                match class {
                    PageLoss::AfterFlush => lost.after_flush.push(lpn),
                    PageLoss::Unflushed => lost.unflushed.push(lpn),
                    PageLoss::Unacknowledged => lost.unacknowledged.push(lpn),
                }
            }
        }
        self.fifo.clear();
        self.limbo.clear();
        self.lost = Some(lost);
        Some(seqs)
    }

    /// The truth's power-cut fields: the cut's time (null before it), and the lost
    /// pages of each class as sorted, merged `[offset_bytes, length_bytes]` ranges with
    /// their block counts.
    pub fn truth(&self, truth: &mut Value) {
        let Some(l) = &self.lost else {
            truth["power_cut_at_ns"] = Value::Null;
            return;
        };
        truth["power_cut_at_ns"] = json!(l.at_ns);
        for (name, pages) in [
            ("after_flush", &l.after_flush),
            ("unflushed", &l.unflushed),
            ("unacknowledged", &l.unacknowledged),
        ] {
            truth[format!("power_cut_lost_{name}_ranges_bytes")] = json!(ranges(pages));
            truth[format!("power_cut_lost_{name}_blocks")] = json!(pages.len());
        }
        truth["power_cut_block_bytes"] = json!(PAGE_BYTES);
    }
}

/// How a page lost its data in a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageLoss {
    AfterFlush,
    Unflushed,
    Unacknowledged,
}

/// The class of a page whose writes not durable before the cut at `cut` are `writes`
/// (in write order, each with whether it was lost), given the submission time of the
/// latest FLUSH that completed by the cut: the medium holds the newest durable write,
/// and the page lost data when a write after that one was lost — after a flush when a
/// completed flush covered one of them, else unflushed when one was acknowledged, else
/// unacknowledged. None when the newest write is durable.
fn page_class(writes: &[(Entry, bool)], cut: u64, covered: Option<u64>) -> Option<PageLoss> {
    let after_durable = match writes.iter().rposition(|w| !w.1) {
        Some(i) => &writes[i + 1..],
        None => writes,
    };
    let acked = |e: &Entry| e.ack_ns <= cut;
    if after_durable
        .iter()
        .any(|(e, _)| acked(e) && covered.is_some_and(|s| s >= e.ack_ns))
    {
        Some(PageLoss::AfterFlush)
    } else if after_durable.iter().any(|(e, _)| acked(e)) {
        Some(PageLoss::Unflushed)
    } else if !after_durable.is_empty() {
        Some(PageLoss::Unacknowledged)
    } else {
        None
    }
}

/// Sorted pages as merged `[offset, length]` byte ranges.
fn ranges(pages: &[u32]) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &p in pages {
        let off = p as u64 * PAGE_BYTES;
        match out.last_mut() {
            Some(r) if r[0] + r[1] == off => r[1] += PAGE_BYTES,
            _ => out.push([off, PAGE_BYTES]),
        }
    }
    out
}
