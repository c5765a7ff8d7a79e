//! What blktrace's binary files and blkparse's text share: the kernel's block-trace
//! events, and turning them into records.
//!
//! A record is a queued request (action `Q`: the bio as the issuing process submitted
//! it, with its pid): issue time = the Q event's time. Its service time is the first
//! completion (`C`) after it that covers its start sector (a request merged from several
//! bios completes all of them) minus the Q time, so it includes the time spent in the
//! block layer's queues, as an application sees it. A flush completes the oldest
//! flush queued on its device. A bio with a preflush and data is a flush (whose
//! completion is not matched) followed by the write. A request whose completion is not
//! in the trace after [`MAX_PENDING`] more requests or [`STALE_NS`] of trace time keeps
//! no service time (counted in the notes).

use super::sorted::Sorter;
use super::volume::VolumeFilter;
use super::{Event, Import};
use crate::{Header, Op, Record, TraceError};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Requests waiting for their completion, at most.
pub(crate) const MAX_PENDING: usize = 1 << 14;
/// How long (trace time) a request waits for its completion, at most.
pub(crate) const STALE_NS: u64 = 30_000_000_000;

/// The operation bits of an event (blkparse's RWBS).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub write: bool,
    pub flush: bool,
    pub fua: bool,
    pub discard: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Queue(Flags),
    Complete(Flags),
    /// The name of the process `pid`.
    Process(String),
}

/// One block-trace event; `dev` is the kernel's `major << 20 | minor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlkEvent {
    pub time_ns: u64,
    pub dev: u32,
    pub kind: Kind,
    pub sector: u64,
    pub bytes: u64,
    pub pid: u32,
    pub error: bool,
}

/// A queued request of `bytes` at `sector` (512 bytes each) is one drivelab can import:
/// its end within 2^64 bytes, its length within one request's ([`super::check_extent`]).
pub(crate) fn check_queued(f: Flags, sector: u64, bytes: u64) -> Result<(), String> {
    let op = match (f.discard, f.write) {
        (true, _) => Op::Discard,
        (_, true) => Op::Write,
        _ => Op::Read,
    };
    let offset = sector
        .checked_mul(512)
        .ok_or_else(|| format!("the sector {sector} is beyond 2^64 bytes"))?;
    super::check_extent(&Record::new(0, op, offset, bytes)).map(|_| ())
}

pub(crate) fn dev_name(dev: u32) -> String {
    format!("{},{}", dev >> 20, dev & 0xfffff)
}

/// A source of block-trace events in time order.
pub(crate) trait BlkSource {
    fn next_blk(&mut self) -> Result<Option<BlkEvent>, TraceError>;
    fn name(&self) -> &'static str;
    fn notes(&self, notes: &mut Vec<String>);
    /// Wall-clock ns of the trace-clock time `t`, when the source knows it.
    fn unix_ns(&self, _t: u64) -> Option<u64> {
        None
    }
}

struct Pending {
    r: Record,
    done: bool,
}

/// Block-trace events in, records (in queue order, with service times) out.
pub(crate) struct BlkImport<S> {
    src: S,
    path: String,
    volumes: VolumeFilter,
    pending: VecDeque<Pending>,
    /// Sequence number of `pending[0]`.
    first_seq: u64,
    by_start: BTreeMap<(u32, u64), VecDeque<u64>>,
    flushes: HashMap<u32, VecDeque<u64>>,
    names: HashMap<u32, String>,
    processes: VecDeque<Event>,
    ready: VecDeque<Record>,
    sorter: Sorter,
    ended: bool,
    no_completion: u64,
    errors: u64,
    no_data: u64,
}

impl<S: BlkSource> BlkImport<S> {
    pub fn new(src: S, volume: Option<String>, path: String) -> Self {
        BlkImport {
            src,
            path,
            volumes: VolumeFilter::new(volume),
            pending: VecDeque::new(),
            first_seq: 0,
            by_start: BTreeMap::new(),
            flushes: HashMap::new(),
            names: HashMap::new(),
            processes: VecDeque::new(),
            ready: VecDeque::new(),
            sorter: Sorter::default(),
            ended: false,
            no_completion: 0,
            errors: 0,
            no_data: 0,
        }
    }

    fn take(&mut self, e: BlkEvent) {
        match e.kind {
            Kind::Process(ref name) => {
                if self.names.get(&e.pid) != Some(name) {
                    // Remembered for at most MAX_NAMED_PROCESSES processes (100 000
                    // names must not fill memory); past them every naming is passed on.
                    let room = self.names.len() < crate::native::MAX_NAMED_PROCESSES;
                    if room || self.names.contains_key(&e.pid) {
                        self.names.insert(e.pid, name.clone());
                    }
                    self.processes.push_back(Event::Process {
                        pid: e.pid,
                        name: name.clone(),
                    });
                }
            }
            Kind::Queue(f) => {
                if self.volumes.admit(&dev_name(e.dev)) {
                    self.queue(&e, f);
                }
            }
            Kind::Complete(f) => self.complete(&e, f),
        }
        self.expire(e.time_ns);
    }

    fn queue(&mut self, e: &BlkEvent, f: Flags) {
        let rec = |op, offset, len| Record {
            fua: f.fua,
            pid: Some(e.pid),
            ..Record::new(e.time_ns, op, offset, len)
        };
        if f.flush {
            let flush = Record {
                fua: false,
                ..rec(Op::Flush, 0, 0)
            };
            let seq = self.push(flush, e.bytes > 0);
            if e.bytes == 0 {
                self.flushes.entry(e.dev).or_default().push_back(seq);
                return;
            }
        }
        let op = match (f.discard, f.write, e.bytes) {
            (true, _, _) => Op::Discard,
            (_, _, 0) => {
                self.no_data += u64::from(!f.flush);
                return;
            }
            (_, true, _) => Op::Write,
            _ => Op::Read,
        };
        // Within 2^64: every source checks a queued extent (`check_queued`).
        let seq = self.push(rec(op, e.sector.saturating_mul(512), e.bytes), false);
        self.by_start
            .entry((e.dev, e.sector))
            .or_default()
            .push_back(seq);
    }

    fn push(&mut self, r: Record, done: bool) -> u64 {
        self.pending.push_back(Pending { r, done });
        self.first_seq + self.pending.len() as u64 - 1
    }

    fn complete(&mut self, e: &BlkEvent, f: Flags) {
        self.errors += u64::from(e.error);
        if e.bytes == 0 {
            if f.flush {
                if let Some(seq) = self.flushes.get_mut(&e.dev).and_then(VecDeque::pop_front) {
                    self.done(seq, e.time_ns);
                }
            }
            return;
        }
        let end = e.sector.saturating_add(e.bytes.div_ceil(512));
        let keys: Vec<(u32, u64)> = self
            .by_start
            .range((e.dev, e.sector)..(e.dev, end))
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            let q = self.by_start.get_mut(&k).expect("a key just listed");
            let seq = q.pop_front();
            if q.is_empty() {
                self.by_start.remove(&k);
            }
            if let Some(seq) = seq {
                self.done(seq, e.time_ns);
            }
        }
    }

    fn done(&mut self, seq: u64, t: u64) {
        if let Some(p) = seq
            .checked_sub(self.first_seq)
            .and_then(|i| self.pending.get_mut(i as usize))
        {
            p.r.service_ns = Some(t.saturating_sub(p.r.issue_ns));
            p.done = true;
        }
    }

    /// Requests too old to wait for their completion any longer go without it.
    fn expire(&mut self, now: u64) {
        while let Some(p) = self.pending.front() {
            let old =
                self.pending.len() > MAX_PENDING || p.r.issue_ns.saturating_add(STALE_NS) < now;
            if !(p.done || old || self.ended) {
                break;
            }
            self.no_completion += u64::from(!p.done);
            let p = self.pending.pop_front().expect("front exists");
            self.first_seq += 1;
            if let Some(r) = self.sorter.push(p.r) {
                self.ready.push_back(r);
            }
        }
    }
}

impl<S: BlkSource> Import for BlkImport<S> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            if let Some(e) = self.processes.pop_front() {
                return Ok(Some(e));
            }
            if let Some(r) = self.ready.pop_front() {
                return Ok(Some(Event::Io(r)));
            }
            if self.ended {
                return Ok(self.sorter.pop().map(Event::Io));
            }
            match self.src.next_blk()? {
                Some(e) => self.take(e),
                None => {
                    self.ended = true;
                    self.expire(u64::MAX);
                }
            }
        }
    }

    fn header(&self) -> Result<Header, TraceError> {
        let mut notes = Vec::new();
        self.src.notes(&mut notes);
        notes.push(
            "records are the queued bios (Q events); service time = completion (C) − queue (Q)"
                .into(),
        );
        self.volumes.finish(&self.path, &mut notes)?;
        if self.no_completion > 0 {
            notes.push(format!(
                "{} requests have no completion in the trace: no service time",
                self.no_completion
            ));
        }
        if self.errors > 0 {
            notes.push(format!("{} completions reported an error", self.errors));
        }
        if self.no_data > 0 {
            notes.push(format!(
                "skipped {} queued requests with neither data nor a flush",
                self.no_data
            ));
        }
        self.sorter.notes(&mut notes);
        Ok(Header {
            source_format: self.src.name().into(),
            source_path: Some(self.path.clone()),
            device_size_bytes: None,
            start_unix_ns: self.sorter.base().and_then(|b| self.src.unix_ns(b)),
            notes,
            volumes: Vec::new(),
        })
    }
}
