//! `io_uring`: one ring per job with `iodepth` I/Os outstanding.
//!
//! Each loop prepares every free slot, hands the whole refill to the kernel in the same
//! system call that waits for the next completion, and waits for one completion only.
//! So the queue depth asked is the queue depth held: no prepared I/O waits in user
//! space while the kernel works on others, and no completed I/O waits for other
//! completions before it is counted and replaced. Submission time is read just before
//! the refill is handed over; completion time once per reap. Writes with fresh content
//! per I/O (`--data random`, the default, and the other per-write patterns) are
//! prepared ahead, in spare slots, while the queue is full: the refill is handed over,
//! the next writes are prepared, then the job waits. Preparing a 1 MiB write in the
//! gap between a completion and the next submission held 7.2 of 8 on the disk. `--iodepth_batch_submit N`
//! (fio's option) instead hands I/Os over in chunks of N as they are prepared, trading
//! queue depth for an earlier start of the first ones. Optional registered buffers
//! (`fixedbufs`) and files (`registerfiles`).
//!
//! History (issue 17, docs/performance.md): the automatic batch used to hand a
//! device's refill over in chunks of a tenth of the queue depth, and to wait for a
//! quarter of the queue per look on targets served by the kernel's workers. That saved
//! CPU, but a file on the virtio disk at QD32 then held 29 I/Os on average, not 32, and
//! a 5 ms device got 0.88× fio's IOPS at 1.84× its p99 latency. Where a device is the
//! limit, depth wins.
//!
//! Before the jobs start, one read without blocking (RWF_NOWAIT) asks how the target
//! takes I/O:
//!
//! - **Inline** (NVMe, SATA, virtio, loop, files on them, the page cache): the submitting
//!   thread starts each I/O itself.
//! - **Workers** (zram and other drivers without non-blocking submission, FUSE and other
//!   filesystems that cannot try without blocking): io_uring would try each I/O, fail,
//!   and queue it for its kernel worker threads. drivelab hands such I/Os straight to
//!   the workers (IOSQE_ASYNC) and lets one worker per CPU run them side by side (the
//!   job's share of the CPUs when there are several jobs). A target that completes
//!   direct I/O asynchronously (most) still gets the whole queue; one that serves an
//!   I/O only while its issuer waits (FUSE without asynchronous direct I/O) gets at
//!   most one I/O per worker at a time. The result says so in a note.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

use io_uring::types::{SubmitArgs, Timespec};
use io_uring::{opcode, squeue, types, IoUring};

use super::{per_job_threads, Backend, BackendCtx, Issuer, Stamps, SLICE_NS};
use crate::buf::{AlignedBuf, SlotBuffers};
use crate::clock::{Clock, MonotonicClock, SPIN_NS};
use crate::data::ContentStream;
use crate::job::Job;
use crate::op::{AnyOp, Dir, IoOp};
use crate::spec::Workload;
use drivelab_trace::Op;

/// `mode` is how the target takes I/O, asked by [`UringBackend::prepare`] before the
/// run's clock starts (the probe is a real I/O: on a slow device it takes as long as
/// one, which is no part of the measured time); asked at the start of `run` otherwise.
#[derive(Default)]
pub struct UringBackend {
    mode: Option<Mode>,
}

impl UringBackend {
    /// Probe the target now (see the module documentation).
    pub fn prepare(file: &File, w: &Workload) -> UringBackend {
        UringBackend {
            mode: Some(probe(file, w)),
        }
    }
}

impl Backend for UringBackend {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn run(&mut self, jobs: &mut [Job<'_>], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let file = ctx
            .file
            .ok_or("the io_uring engine needs an opened target")?;
        let w = ctx.workload;
        let mode = self.mode.unwrap_or_else(|| probe(file, w));
        let Mode::Workers { per_ring } = mode else {
            return run_jobs(jobs, ctx, file, mode);
        };
        // Sample how many of the workers are busy while the jobs run: on a target
        // that serves an I/O only while its issuer waits, that is the concurrency it got.
        let done = AtomicBool::new(false);
        let (r, busy) = std::thread::scope(|s| {
            let sampler = s.spawn(|| sample_busy_workers(&done));
            let r = run_jobs(jobs, ctx, file, mode);
            done.store(true, Ordering::Relaxed);
            (r, sampler.join().ok().flatten())
        });
        let cap = per_ring * w.numjobs;
        let mut note = format!(
            "The target does not take non-blocking I/O (a read without blocking was refused): io_uring handed every I/O to its kernel workers, up to {per_ring} per job."
        );
        if let Some(b) = busy {
            ctx.workers_busy(b);
            note.push_str(&format!(
                " On average {b:.1} of them were busy (sampled every 5 ms). A target that completes I/O asynchronously still had the whole queue; one that serves an I/O only while its issuer waits (FUSE without asynchronous direct I/O, say) had about {b:.1} I/Os at a time{}.",
                if b >= 0.75 * cap as f64 {
                    format!(", not the {} asked (the workers were nearly always all busy: the figures are not a drive's at that depth)", w.queue_depth())
                } else {
                    String::new()
                }
            ));
        }
        ctx.note(note);
        r
    }
}

/// Average number of this process's io_uring workers (threads named `iou-wrk-…`) not
/// idle in `io_wq_worker`, sampled every 5 ms until `done`; None without samples (or
/// without /proc).
fn sample_busy_workers(done: &AtomicBool) -> Option<f64> {
    let (mut sum, mut n) = (0usize, 0usize);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(5));
        if let Some(b) = busy_workers() {
            sum += b;
            n += 1;
        }
    }
    (n > 0).then(|| sum as f64 / n as f64)
}

/// io_uring workers of this process that are not waiting for work right now.
fn busy_workers() -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let busy = tasks
        .flatten()
        .filter(|t| {
            let p = t.path();
            let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
            let wchan = std::fs::read_to_string(p.join("wchan")).unwrap_or_default();
            comm.starts_with("iou-wrk") && wchan.trim() != "io_wq_worker"
        })
        .count();
    Some(busy)
}

/// Every job on its own thread and ring (see the module documentation).
fn run_jobs(
    jobs: &mut [Job<'_>],
    ctx: &BackendCtx<'_>,
    file: &File,
    mode: Mode,
) -> Result<(), String> {
    let fd = file.as_raw_fd();
    let w = ctx.workload;
    let clock = ctx.clock;
    per_job_threads(jobs, |job| {
        let qd = w.iodepth as usize;
        let stride = (w.max_bs() as usize).next_multiple_of(crate::buf::BUF_ALIGN);
        let spare = spare_slots(qd, stride, job.per_write_data() && w.writes());
        let nslots = qd + spare;
        // Declared before the ring so that it is dropped after it.
        let mut bufs = AlignedBuf::try_new(stride * nslots)?;
        let mut ring = new_ring(qd as u32).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
                " (RLIMIT_MEMLOCK may be too low; --ioengine sync needs none)"
            } else {
                ""
            };
            format!("cannot set up an io_uring of depth {qd}: {e}{hint}")
        })?;
        for b in bufs.as_mut_slice().chunks_mut(stride) {
            job.init_buffer(b);
        }
        // Registered buffers and file spare the kernel a page lookup and a file
        // reference per I/O. A ring that cannot have them (RLIMIT_MEMLOCK for large
        // buffers, old kernels) runs with plain ones, and the result says so.
        let mut fixed = false;
        if w.fixedbufs {
            let iov: Vec<libc::iovec> = bufs
                .as_mut_slice()
                .chunks_mut(stride)
                .map(|c| libc::iovec {
                    iov_base: c.as_mut_ptr() as *mut libc::c_void,
                    iov_len: stride,
                })
                .collect();
            // SAFETY: the registered memory is `bufs`, which outlives the ring: it is
            // declared first and dropped last (or leaked on a failed submit).
            match unsafe { ring.submitter().register_buffers(&iov) } {
                    Ok(()) => fixed = true,
                    Err(e) => ctx.note(format!(
                        "io_uring refused to register {nslots} buffers of {stride} bytes ({e}; RLIMIT_MEMLOCK may be too low): plain buffers were used."
                    )),
                }
        }
        let mut regfile = false;
        if w.registerfiles {
            match ring.submitter().register_files(&[fd]) {
                    Ok(()) => regfile = true,
                    Err(e) => ctx.note(format!(
                        "io_uring refused to register the target's file ({e}): it was passed by descriptor."
                    )),
                }
        }
        // Every look waits for one completion, whatever the mode: an I/O that is
        // back is counted and replaced at once, so neither its latency nor the
        // queue depth waits for other I/Os.
        let sqe_flags = match mode {
            Mode::Inline => squeue::Flags::empty(),
            Mode::Workers { per_ring } => {
                // Best effort (Linux ≥ 5.15): without the cap, io_uring may start one
                // worker per queued I/O, all fighting over the same CPUs.
                let _ = ring
                    .submitter()
                    .register_iowq_max_workers(&mut [per_ring, per_ring]);
                squeue::Flags::ASYNC
            }
        };
        let workers = matches!(mode, Mode::Workers { .. });
        let per_write = job.per_write_data();
        let mut slots: Vec<(IoOp, u64)> = vec![
            (
                IoOp {
                    dir: Dir::Read,
                    offset: 0,
                    len: 0
                },
                0
            );
            nslots
        ];
        let mut free: Vec<usize> = (0..nslots).rev().collect();
        // Writes prepared (content and all) while the queue is full, handed over the
        // moment a slot frees up.
        let mut ready: std::collections::VecDeque<usize> = Default::default();
        let mut batch: Vec<usize> = Vec::with_capacity(qd);
        let mut inflight = 0usize;
        let mut draining = false;
        // Automatic (0): the whole refill goes in with the wait, one call per look, so
        // no prepared I/O waits in user space while the kernel works on others.
        let batch_submit = match w.iodepth_batch_submit as usize {
            0 => qd,
            n => n,
        };
        let mut now = clock.now_ns();
        let mut last_progress = now;
        loop {
            batch.clear();
            // Time between hand-overs while writing: preparing content (and the I/Os).
            let mut mark = now;
            let mut wrote = false;
            while inflight < qd {
                let (slot, op) = if let Some(slot) = ready.pop_front() {
                    if !job.may_issue(now) {
                        // Past the deadline or stopped: prepared I/Os are not issued.
                        free.extend(ready.drain(..));
                        free.push(slot);
                        draining = true;
                        break;
                    }
                    (slot, slots[slot].0)
                } else if draining {
                    break;
                } else {
                    let Some(op) = job.next_op(now) else {
                        draining = true;
                        break;
                    };
                    let slot = free.pop().expect("a free slot when inflight < qd");
                    let off = slot * stride;
                    job.fill(&op, &mut bufs.as_mut_slice()[off..off + op.len as usize]);
                    wrote |= op.dir == Dir::Write;
                    (slot, op)
                };
                let off = slot * stride;
                let ptr = bufs.as_mut_slice()[off..].as_mut_ptr();
                let sqe = build(&op, ptr, slot, fd, fixed, regfile).flags(sqe_flags);
                // SAFETY: the buffer behind `sqe` stays valid and untouched until its
                // completion is reaped below (the slot is not reused before that).
                unsafe { ring.submission().push(&sqe) }
                    .map_err(|_| "io_uring submission queue unexpectedly full".to_string())?;
                slots[slot].0 = op;
                batch.push(slot);
                inflight += 1;
                if batch.len() >= batch_submit {
                    // Hand this batch to the kernel now, without waiting: the device
                    // gets its work soonest (one kick per I/O at batch size 1).
                    let t = clock.now_ns();
                    if per_write && wrote {
                        job.data_held(t - mark);
                    }
                    for &s in &batch {
                        slots[s].1 = t;
                    }
                    batch.clear();
                    if let Err(e) = enter(&mut ring, 0) {
                        std::mem::forget(bufs);
                        return Err(e);
                    }
                    // The system call is the kernel's time, not content preparation.
                    mark = clock.now_ns();
                }
            }
            if inflight == 0 {
                break;
            }
            // The rest of a partial batch goes in with the wait.
            let t_submit = clock.now_ns();
            if per_write && wrote && !batch.is_empty() {
                job.data_held(t_submit - mark);
            }
            for &s in &batch {
                slots[s].1 = t_submit;
            }
            if spare > 0 && !draining && ready.len() < spare {
                // Hand the refill over first, then prepare the next writes while the
                // device works on a full queue.
                if let Err(e) = enter(&mut ring, 0) {
                    std::mem::forget(bufs);
                    return Err(e);
                }
                let t0 = clock.now_ns();
                while ready.len() < spare {
                    let Some(op) = job.next_op(t0) else {
                        draining = true;
                        break;
                    };
                    let slot = free.pop().expect("a free slot for a prepared write");
                    let off = slot * stride;
                    job.fill(&op, &mut bufs.as_mut_slice()[off..off + op.len as usize]);
                    slots[slot].0 = op;
                    ready.push_back(slot);
                }
                job.data_ns += clock.now_ns() - t0;
            }
            let waited = if workers {
                enter_timed(&mut ring, 1)
            } else {
                enter(&mut ring, 1).map(|()| false)
            };
            let timed_out = match waited {
                Ok(t) => t,
                Err(e) => {
                    // I/Os may still be in flight into `bufs`: never free it.
                    std::mem::forget(bufs);
                    return Err(e);
                }
            };
            now = clock.now_ns();
            if timed_out && now.saturating_sub(last_progress) > STUCK_NS {
                std::mem::forget(bufs);
                return Err(format!(
                        "io_uring: {inflight} I/O(s) handed to the kernel's workers made no progress for {} s",
                        STUCK_NS / 1_000_000_000
                    ));
            }
            let before = inflight;
            for cqe in ring.completion() {
                let slot = cqe.user_data() as usize;
                let (op, submitted) = slots[slot];
                if !job.complete(&op, submitted, now, cqe.result() as i64) {
                    draining = true;
                }
                free.push(slot);
                inflight -= 1;
            }
            if inflight < before {
                last_progress = now;
            }
        }
        // Give the file back now: a ring's own teardown runs later, in the kernel's
        // background, and until then the registered file stays open, so the next
        // exclusive open of a block device (the next suite step) would find it busy.
        if regfile {
            let _ = ring.submitter().unregister_files();
        }
        drop(ring);
        drop(bufs);
        Ok(())
    })
}

fn build(
    op: &IoOp,
    ptr: *mut u8,
    slot: usize,
    fd: i32,
    fixedbufs: bool,
    regfile: bool,
) -> squeue::Entry {
    macro_rules! with_fd {
        ($mk:expr) => {
            if regfile {
                $mk(types::Fixed(0))
            } else {
                $mk(types::Fd(fd))
            }
        };
    }
    let e = match (op.dir, fixedbufs) {
        (Dir::Read, false) => {
            with_fd!(|f| opcode::Read::new(f, ptr, op.len).offset(op.offset).build())
        }
        (Dir::Write, false) => {
            with_fd!(|f| opcode::Write::new(f, ptr as *const u8, op.len)
                .offset(op.offset)
                .build())
        }
        (Dir::Read, true) => with_fd!(|f| opcode::ReadFixed::new(f, ptr, op.len, slot as u16)
            .offset(op.offset)
            .build()),
        (Dir::Write, true) => {
            with_fd!(
                |f| opcode::WriteFixed::new(f, ptr as *const u8, op.len, slot as u16)
                    .offset(op.offset)
                    .build()
            )
        }
    };
    e.user_data(slot as u64)
}

/// Slots beyond the queue depth for writes prepared ahead (`prepare_ahead`: writes with
/// fresh content per I/O, whose preparation would otherwise leave a slot empty between a
/// completion and the next submission): as many as the depth, within 64 MiB of buffers
/// and the 65 535 buffers a ring can register.
fn spare_slots(qd: usize, stride: usize, prepare_ahead: bool) -> usize {
    if !prepare_ahead {
        return 0;
    }
    qd.min((64 << 20) / stride.max(1)).min(65_535 - qd).max(1)
}

/// How the kernel carries out this target's I/O once io_uring has it (see the module
/// documentation).
#[derive(Clone, Copy)]
enum Mode {
    Inline,
    /// Up to `per_ring` workers per ring.
    Workers {
        per_ring: u32,
    },
}

/// Read the span's first block the usual way (so what a non-blocking read may need is
/// cached), then once more without blocking. A target that still cannot answer without
/// blocking sends every io_uring I/O to the kernel's workers. A target that cannot be
/// read at all (opened for writing only) is taken as inline.
fn probe(file: &File, w: &Workload) -> Mode {
    let len = w.min_bs() as usize;
    let mut buf = crate::buf::AlignedBuf::new(len);
    let b = buf.as_mut_slice();
    if file.read_exact_at(b, w.offset_bytes).is_err() {
        return Mode::Inline;
    }
    match crate::sys::read_would_block(file, b, w.offset_bytes) {
        Ok(true) => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            Mode::Workers {
                per_ring: (cpus / w.numjobs.max(1)).max(1),
            }
        }
        _ => Mode::Inline,
    }
}

/// A ring for one thread: single issuer with deferred task work (completions are run
/// only when this thread waits for them, saving interrupts and wake-ups; Linux ≥ 6.1),
/// falling back to a plain ring on older kernels.
fn new_ring(qd: u32) -> std::io::Result<IoUring> {
    let entries = qd.next_power_of_two();
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
}

/// Submit what is queued and wait for at least `wait` completions, retrying on EINTR and
/// EBUSY.
/// How long a wait for the kernel's workers lasts before the job looks again.
const WORKER_WAIT: Timespec = Timespec::new().sec(1);
/// No completion for this long with I/Os in the workers' hands: the run fails.
const STUCK_NS: u64 = 60_000_000_000;

/// [`enter`] for I/Os in the kernel's workers, with a time limit: true when it passed.
/// (A completion whose wake-up went missing was seen to stall a job for good on this
/// kernel once in many runs; looking again after a second picks it up, and an I/O that
/// really stays out fails the run instead of hanging it.)
fn enter_timed(ring: &mut IoUring, wait: usize) -> Result<bool, String> {
    let args = SubmitArgs::new().timespec(&WORKER_WAIT);
    loop {
        match ring.submitter().submit_with_args(wait, &args) {
            Ok(_) => return Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => return Ok(true),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => continue,
            Err(e) => return Err(format!("io_uring submit failed: {e}")),
        }
    }
}

fn enter(ring: &mut IoUring, wait: usize) -> Result<(), String> {
    loop {
        match ring.submit_and_wait(wait) {
            Ok(_) => return Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => continue,
            Err(e) => return Err(format!("io_uring submit failed: {e}")),
        }
    }
}

pub(crate) struct UringIssuer<'f> {
    file: &'f File,
    clock: &'f MonotonicClock,
    block: bool,
    /// Per slot; a slot's buffer is untouched while its I/O is in flight.
    bufs: SlotBuffers,
    ring: IoUring,
    content: ContentStream,
    ready: Vec<(usize, u64, i64)>,
    inflight: usize,
    stamps: Stamps,
}

impl<'f> UringIssuer<'f> {
    pub(crate) fn new(
        file: &'f File,
        clock: &'f MonotonicClock,
        block: bool,
        depth: u32,
    ) -> Result<UringIssuer<'f>, String> {
        // The ring the jobs use: single issuer, completions run when this thread asks
        // for them (so a look at the ring must enter the kernel: see `poll`).
        let ring = new_ring(depth)
            .map_err(|e| format!("cannot set up an io_uring of depth {depth}: {e}"))?;
        Ok(UringIssuer {
            stamps: Stamps::default(),
            file,
            block,
            bufs: SlotBuffers::new(),
            ring,
            clock,
            content: ContentStream::new(),
            ready: Vec::new(),
            inflight: 0,
        })
    }

    /// Each completion is stamped when it is taken from the ring, one clock reading
    /// each, so the time a busy reap spends on the others is not in its latency.
    fn reap(&mut self, out: &mut Vec<(usize, u64, i64)>) {
        for cqe in self.ring.completion() {
            let t = self.stamps.next(self.clock);
            out.push((cqe.user_data() as usize, t, cqe.result() as i64));
            self.inflight -= 1;
        }
    }
}

impl UringIssuer<'_> {
    /// Have the kernel post the completions it holds, without waiting.
    fn poll(&mut self) -> Result<(), String> {
        let zero = Timespec::new();
        let args = SubmitArgs::new().timespec(&zero);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(format!("io_uring wait failed: {e}")),
        }
    }
}

impl Issuer for UringIssuer<'_> {
    fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    fn submit(&mut self, io: &AnyOp, slot: usize, _at: u64) -> Result<(), String> {
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
            crate::clock::sleep_until(self.clock, now + t);
            return Ok(());
        }
        if until.is_some() && t <= SPIN_NS {
            // Due within µs: spin on the clock, taking completions as they come (each
            // look enters the kernel, which runs the deferred completions).
            loop {
                self.poll()?;
                if !self.ring.completion().is_empty() || self.clock.now_ns() >= now + t {
                    break;
                }
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

#[cfg(test)]
mod tests {
    use super::spare_slots;

    #[test]
    fn writes_prepared_ahead_get_a_slot_each_within_64_mib_and_the_ring_limit() {
        assert_eq!(spare_slots(32, 4096, false), 0);
        assert_eq!(spare_slots(32, 4096, true), 32);
        // 1 MiB blocks: 64 at most, however deep the queue.
        assert_eq!(spare_slots(8, 1 << 20, true), 8);
        assert_eq!(spare_slots(256, 1 << 20, true), 64);
        // Blocks above 64 MiB still get one.
        assert_eq!(spare_slots(4, 128 << 20, true), 1);
        // Never more buffers than a ring can register.
        assert_eq!(spare_slots(32768, 512, true), 32767);
    }
}
