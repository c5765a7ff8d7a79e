//! How a replay's I/Os reach the target: one [`Issuer`] per kind of target.
//!
//! - files and block devices: one io_uring, one SQE handed over per I/O the moment it is
//!   due. Reads and writes with the target's direct I/O; the trace's FUA as RWF_DSYNC on
//!   the write; a flush as fsync (on a block device, the kernel sends the drive a cache
//!   flush); a discard as a punched hole (fallocate) on a file, and as BLKDISCARD on a
//!   block device — synchronous there (io_uring's discard command needs Linux 6.12), so
//!   it holds up the issue of later I/Os while it runs, which shows in the lag;
//! - a simulated device: the model in virtual time (a flush completes at once: the
//!   model has no write cache);
//! - `null`: every I/O completes at the clock reading that issues it (write content is
//!   still prepared, as the null engine does).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use io_uring::types::{SubmitArgs, Timespec};
use io_uring::{opcode, types, IoUring};

use super::ReplayIo;
use crate::buf::AlignedBuf;
use crate::clock::{Clock, MonotonicClock};
use crate::data::DataPool;
use crate::model::DeviceModel;
use crate::model::SensorReading;
use crate::op::{Dir, IoOp};
use crate::spec::DataPattern;
use crate::target::{Target, TargetKind};
use drivelab_trace::Op;

/// Longest single wait, so that a stop request is seen within it.
const SLICE_NS: u64 = 100_000_000;
/// The last part of a wait for a due time is spent spinning on the clock: a sleep ends
/// tens of µs late on a busy machine, a trace's I/Os come µs apart.
const SPIN_NS: u64 = 50_000;

/// Carries out a replay's I/Os. Slots are the driver's: a slot is not reused before its
/// completion has been handed back.
pub trait Issuer {
    /// The replay's clock.
    fn now(&self) -> u64;
    /// Start `io` (in slot `slot`) at `at`, a reading of [`Issuer::now`].
    fn submit(&mut self, io: &ReplayIo, slot: usize, at: u64) -> Result<(), String>;
    /// Hand back completions as `(slot, done_ns, result)`; `result` is the byte count of
    /// a read or write, 0 for a flush or discard, or a negative errno. Waits for at
    /// least one when `inflight`, but not past `until` (nor longer than 100 ms on a
    /// real clock); with nothing in flight, waits until `until`.
    fn wait(
        &mut self,
        until: Option<u64>,
        inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String>;
    /// Sensor readings taken since the last call (a simulated device's, at every
    /// interval boundary its virtual time crossed).
    fn sensors(&mut self) -> Vec<SensorReading> {
        Vec::new()
    }
}

/// The issuer for this target, on `clock` (a simulated drive keeps its own, virtual
/// one, and reads its sensors every `interval_ns` from its present time on).
pub fn for_target<'t>(
    target: &'t mut Target,
    clock: &'t MonotonicClock,
    interval_ns: u64,
    max_outstanding: u32,
) -> Result<Box<dyn Issuer + 't>, String> {
    let kind = target.info.kind;
    if target.model().is_some() {
        let model = target.model_mut().expect("a model target");
        let now = model.now_ns();
        return Ok(Box::new(ModelIssuer {
            model,
            now,
            heap: BinaryHeap::new(),
            seq: 0,
            interval_ns: interval_ns.max(1),
            next_sample: now,
            readings: Vec::new(),
        }));
    }
    match target.file() {
        Some(f) => Ok(Box::new(UringIssuer::new(
            f,
            clock,
            kind == TargetKind::BlockDevice,
            max_outstanding,
        )?)),
        None => Ok(Box::new(NullIssuer {
            clock,
            stamps: Stamps::default(),
            content: Content::new(),
            buf: AlignedBuf::new(0),
            ready: Vec::new(),
        })),
    }
}

/// Write content: drivelab's `random` pattern, each sector stamped with its offset.
struct Content {
    pool: Arc<DataPool>,
    rng: fastrand::Rng,
    writes: u64,
}

impl Content {
    fn new() -> Content {
        Content {
            pool: DataPool::new(DataPattern::Random, 1 << 20, 0x7E91A7, true),
            rng: fastrand::Rng::with_seed(0x7E91A7),
            writes: 0,
        }
    }

    fn fill(&mut self, buf: &mut [u8], offset: u64) {
        // The pool serves writes of up to 8 MiB at a time; larger ones take several.
        let chunk = 8 << 20;
        for (i, c) in buf.chunks_mut(chunk).enumerate() {
            let pick = self.rng.u64(..);
            self.pool
                .fill_write(c, offset + (i * chunk) as u64, pick, self.writes);
        }
        self.writes += 1;
    }
}

/// The slots' I/O buffers, grown as the trace's I/Os need, within a memory budget.
struct Buffers {
    slots: Vec<Option<AlignedBuf>>,
    bytes: usize,
    budget: usize,
}

impl Buffers {
    fn new() -> Buffers {
        let avail = crate::sys::meminfo_bytes("MemAvailable").unwrap_or(u64::MAX);
        Buffers {
            slots: Vec::new(),
            bytes: 0,
            budget: (avail / 2).min(usize::MAX as u64) as usize,
        }
    }

    /// Slot `slot`'s buffer, at least `len` bytes (grown when too small).
    fn get(&mut self, slot: usize, len: usize) -> Result<&mut [u8], String> {
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        let b = &mut self.slots[slot];
        if b.as_ref().is_none_or(|b| b.len() < len) {
            let have = b.as_ref().map_or(0, |b| b.len());
            let want = len.next_multiple_of(4096);
            if self.bytes - have + want > self.budget {
                return Err(format!(
                    "the trace's reads and writes in flight need {} of buffers, more than half of the memory available; lower --max-outstanding",
                    crate::size::human_bytes((self.bytes - have + want) as u64)
                ));
            }
            *b = Some(AlignedBuf::try_new(want)?);
            self.bytes = self.bytes - have + want;
        }
        Ok(&mut b.as_mut().expect("just made").as_mut_slice()[..len])
    }
}

fn expected(io: &ReplayIo) -> i64 {
    match io.op {
        Op::Read | Op::Write => io.len_bytes as i64,
        _ => 0,
    }
}

/// Wait until `t` on `clock`: sleep to within [`SPIN_NS`] of it, then spin.
fn sleep_until(clock: &dyn Clock, t: u64) {
    let now = clock.now_ns();
    if t > now + SPIN_NS {
        std::thread::sleep(std::time::Duration::from_nanos(t - now - SPIN_NS));
    }
    while clock.now_ns() < t {
        std::hint::spin_loop();
    }
}

/// Completion times read from the clock one per completion, strictly increasing within a
/// reap (two readings within one clock tick are told apart by a nanosecond).
#[derive(Default)]
struct Stamps {
    last: u64,
}

impl Stamps {
    fn next(&mut self, clock: &dyn Clock) -> u64 {
        self.last = clock.now_ns().max(self.last + 1);
        self.last
    }
}

struct NullIssuer<'c> {
    clock: &'c MonotonicClock,
    stamps: Stamps,
    content: Content,
    buf: AlignedBuf,
    ready: Vec<(usize, u64, i64)>,
}

impl Issuer for NullIssuer<'_> {
    fn now(&self) -> u64 {
        self.clock.now_ns()
    }
    fn submit(&mut self, io: &ReplayIo, slot: usize, _at: u64) -> Result<(), String> {
        if io.op == Op::Write {
            let len = io.len_bytes as usize;
            if self.buf.len() < len {
                self.buf = AlignedBuf::try_new(len.next_multiple_of(4096))?;
            }
            self.content
                .fill(&mut self.buf.as_mut_slice()[..len], io.offset_bytes);
        }
        let done = self.stamps.next(self.clock);
        self.ready.push((slot, done, expected(io)));
        Ok(())
    }
    fn wait(
        &mut self,
        until: Option<u64>,
        _inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String> {
        if self.ready.is_empty() {
            if let Some(u) = until {
                let now = self.clock.now_ns();
                sleep_until(self.clock, u.min(now + SLICE_NS));
            }
        }
        out.append(&mut self.ready);
        Ok(())
    }
}

/// Most virtual time a simulated drive's idle moves on by in one wait.
const MODEL_SLICE_NS: u64 = 60_000_000_000;

struct ModelIssuer<'m> {
    model: &'m mut (dyn DeviceModel + 'static),
    now: u64,
    /// (completion, submission order, slot, result)
    heap: BinaryHeap<Reverse<(u64, u64, usize, i64)>>,
    seq: u64,
    interval_ns: u64,
    /// The next interval boundary at which the model's sensors are read.
    next_sample: u64,
    readings: Vec<SensorReading>,
}

impl ModelIssuer<'_> {
    /// Virtual time moves on to `t`: the sensors at every boundary passed.
    fn advance(&mut self, t: u64) {
        self.now = self.now.max(t);
        while self.now >= self.next_sample {
            let got = self.model.sensors(self.next_sample);
            self.readings.extend(got);
            self.next_sample += self.interval_ns;
        }
    }
}

impl Issuer for ModelIssuer<'_> {
    fn now(&self) -> u64 {
        self.now
    }
    fn sensors(&mut self) -> Vec<SensorReading> {
        std::mem::take(&mut self.readings)
    }
    fn submit(&mut self, io: &ReplayIo, slot: usize, at: u64) -> Result<(), String> {
        let rw = |dir| IoOp {
            dir,
            offset: io.offset_bytes,
            len: io.len_bytes as u32,
        };
        let done = match io.op {
            Op::Read => self.model.submit(rw(Dir::Read), at),
            Op::Write => self.model.submit(rw(Dir::Write), at),
            Op::Discard => self.model.discard(io.offset_bytes, io.len_bytes, at),
            Op::Flush => at,
        };
        self.heap
            .push(Reverse((done.max(at), self.seq, slot, expected(io))));
        self.seq += 1;
        Ok(())
    }
    fn wait(
        &mut self,
        until: Option<u64>,
        _inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String> {
        let next = self.heap.peek().map(|r| r.0 .0);
        match (next, until) {
            (Some(d), u) if u.is_none_or(|u| d <= u) => {
                let Reverse((d, _, slot, res)) = self.heap.pop().expect("peeked");
                self.advance(d);
                out.push((slot, d, res));
            }
            // A long idle is crossed a minute of virtual time per call, so that the
            // replay loop sees a stop request between them.
            (_, Some(u)) => self.advance(u.min(self.now.saturating_add(MODEL_SLICE_NS))),
            _ => {}
        }
        Ok(())
    }
}

impl Drop for ModelIssuer<'_> {
    fn drop(&mut self) {
        // The run ends at its last completion on the model's clock.
        if self.now > self.model.now_ns() {
            self.model.advance_to(self.now);
        }
    }
}

struct UringIssuer<'f> {
    file: &'f File,
    clock: &'f MonotonicClock,
    block: bool,
    /// Per slot; a slot's buffer is untouched while its I/O is in flight.
    bufs: Buffers,
    ring: IoUring,
    content: Content,
    ready: Vec<(usize, u64, i64)>,
    inflight: usize,
}

impl<'f> UringIssuer<'f> {
    fn new(
        file: &'f File,
        clock: &'f MonotonicClock,
        block: bool,
        depth: u32,
    ) -> Result<UringIssuer<'f>, String> {
        let ring = IoUring::new(depth.next_power_of_two())
            .map_err(|e| format!("cannot set up an io_uring of depth {depth}: {e}"))?;
        Ok(UringIssuer {
            file,
            block,
            bufs: Buffers::new(),
            ring,
            clock,
            content: Content::new(),
            ready: Vec::new(),
            inflight: 0,
        })
    }

    /// Each completion is stamped when it is taken from the ring, one clock reading
    /// each, so the time a busy reap spends on the others is not in its latency.
    fn reap(&mut self, out: &mut Vec<(usize, u64, i64)>) {
        let mut stamp = Stamps::default();
        for cqe in self.ring.completion() {
            let t = stamp.next(self.clock);
            out.push((cqe.user_data() as usize, t, cqe.result() as i64));
            self.inflight -= 1;
        }
    }
}

impl Issuer for UringIssuer<'_> {
    fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    fn submit(&mut self, io: &ReplayIo, slot: usize, _at: u64) -> Result<(), String> {
        let fd = types::Fd(self.file.as_raw_fd());
        let (off, len) = (io.offset_bytes, io.len_bytes as usize);
        let sqe = match io.op {
            Op::Read => {
                let b = self.bufs.get(slot, len)?;
                opcode::Read::new(fd, b.as_mut_ptr(), len as u32)
                    .offset(off)
                    .build()
            }
            Op::Write => {
                let b = self.bufs.get(slot, len)?;
                self.content.fill(b, off);
                let flags = if io.fua { libc::RWF_DSYNC } else { 0 };
                opcode::Write::new(fd, b.as_ptr(), len as u32)
                    .offset(off)
                    .rw_flags(flags)
                    .build()
            }
            Op::Flush => opcode::Fsync::new(fd).build(),
            Op::Discard if self.block => {
                let r = crate::sys::block_discard(self.file, off, len as u64);
                let res = r.map_or_else(|e| crate::backend::neg_errno(&e), |_| 0);
                self.ready.push((slot, self.clock.now_ns(), res));
                return Ok(());
            }
            Op::Discard => opcode::Fallocate::new(fd, len as u64)
                .offset(off)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                .build(),
        };
        // SAFETY: the buffer behind a read or write SQE is the slot's, which is neither
        // touched nor freed until its completion is reaped (Drop waits for them all).
        unsafe { self.ring.submission().push(&sqe.user_data(slot as u64)) }
            .map_err(|_| "io_uring submission queue unexpectedly full".to_string())?;
        self.inflight += 1;
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                Err(e) => return Err(format!("io_uring submit failed: {e}")),
            }
        }
    }

    fn wait(
        &mut self,
        until: Option<u64>,
        inflight: bool,
        out: &mut Vec<(usize, u64, i64)>,
    ) -> Result<(), String> {
        if !self.ready.is_empty() {
            out.append(&mut self.ready);
            return Ok(());
        }
        let now = self.clock.now_ns();
        let t = until
            .map_or(SLICE_NS, |u| u.saturating_sub(now))
            .min(SLICE_NS);
        if !inflight || self.inflight == 0 {
            sleep_until(self.clock, now + t);
            return Ok(());
        }
        if until.is_some() && t <= SPIN_NS {
            // Due within µs: spin on the clock, taking completions as they come.
            while self.ring.completion().is_empty() && self.clock.now_ns() < now + t {
                std::hint::spin_loop();
            }
            self.reap(out);
            return Ok(());
        }
        if t > 0 {
            // For a due time, wake SPIN_NS early: the rest is spun (above, next time).
            let t = if until.is_some() { t - SPIN_NS } else { t };
            let ts = Timespec::new()
                .sec(t / 1_000_000_000)
                .nsec((t % 1_000_000_000) as u32);
            let args = SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                    ) => {}
                Err(e) => return Err(format!("io_uring wait failed: {e}")),
            }
        }
        self.reap(out);
        Ok(())
    }
}

impl Drop for UringIssuer<'_> {
    fn drop(&mut self) {
        // I/Os still in flight (a failed replay) must finish before their buffers go.
        let mut sink = Vec::new();
        while self.inflight > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                std::mem::forget(std::mem::take(&mut self.bufs.slots));
                return;
            }
            self.reap(&mut sink);
        }
    }
}
