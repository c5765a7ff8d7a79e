//! `io_uring`: one ring per job with `iodepth` I/Os outstanding.
//!
//! Each loop prepares every free slot, hands the whole refill to the kernel in the same
//! system call that waits for the next completion, and waits for one completion only.
//! So the queue depth asked is the queue depth held: no prepared I/O waits in user
//! space while the kernel works on others, and no completed I/O waits for other
//! completions before it is counted and replaced. Submission time is read just before
//! the refill is handed over; completion time once per completion as it is taken from
//! the ring. The I/Os come from a source ([`IoSource`]): the generator's job, or a
//! trace's schedule, whose I/Os (flushes as fsync, a file's discards as punched holes, a
//! block device's as BLKDISCARD done at once, FUA writes with RWF_DSYNC) are each handed
//! over as they come due, the ring waiting for a completion or the next due time
//! (asleep to within [`SPIN_NS`] of it, then spinning). Writes with fresh content
//! per I/O (`--data random`, the default, and the other per-write patterns) are
//! prepared ahead, in spare slots, while the queue is full: the refill is handed over,
//! the next writes are prepared, then the job waits. Preparing a 1 MiB write in the
//! gap between a completion and the next submission held 7.2 of 8 on the disk. A
//! trace's next write, which may go out only when its time comes, gets its content in
//! one spare slot while the I/Os before it are in flight ([`IoSource::upcoming`]).
//! The I/O that fills the queue goes in with the wait: at depth 1, one `io_uring_enter`
//! per I/O (two when a trace's next write is made in between). `--iodepth_batch_submit N`
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
//! takes I/O (a replay's at the target's end, where no data is read, so the target
//! receives the trace's I/Os and nothing else: [`UringBackend::prepare_without_reads`]):
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

use std::collections::VecDeque;

use super::{blocking_io, per_job_threads, read_checked, Backend, BackendCtx, Stamps, SLICE_NS};
use crate::buf::SlotArena;
use crate::clock::{Clock, SPIN_NS};
use crate::op::{AnyOp, Dir, IoOp};
use crate::source::{IoSource, Next, Pacing};
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
            mode: Some(probe(file, w, Probe::SpanStart)),
        }
    }

    /// Probe the target without reading any of its data: for a replay, whose target
    /// must receive the trace's I/Os and nothing else. The read without blocking goes
    /// to `end_bytes`, the target's end, where the kernel answers "nothing there"
    /// without reaching the device, and refuses it first on a target that takes no
    /// non-blocking I/O at all (zram, FUSE): those still go straight to the kernel's
    /// workers, sparing each I/O a failed inline try. (Not seen this way: a target
    /// that takes non-blocking reads but blocks on some, which the read at the
    /// span's start finds.)
    pub fn prepare_without_reads(file: &File, w: &Workload, end_bytes: u64) -> UringBackend {
        UringBackend {
            mode: Some(probe(file, w, Probe::End(end_bytes))),
        }
    }

    /// Without a probe: every I/O submitted inline (where [`Self::prepare_without_reads`]
    /// cannot ask: a target of unknown size).
    pub fn inline() -> UringBackend {
        UringBackend {
            mode: Some(Mode::Inline),
        }
    }
}

impl<S: IoSource> Backend<S> for UringBackend {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn run(&mut self, jobs: &mut [S], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let file = ctx
            .file
            .ok_or("the io_uring engine needs an opened target")?;
        let w = ctx.workload;
        let mode = self
            .mode
            .unwrap_or_else(|| probe(file, w, Probe::SpanStart));
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
fn run_jobs<S: IoSource>(
    jobs: &mut [S],
    ctx: &BackendCtx<'_>,
    file: &File,
    mode: Mode,
) -> Result<(), String> {
    per_job_threads(jobs, |job| {
        let mut r = RingJob::new(job, ctx, file, mode)?;
        let res = r.run(job, ctx.clock);
        r.close(res)
    })
}

/// One job's ring, its buffers and its slots.
struct RingJob<'f> {
    /// Declared before the buffers, so that it is dropped first.
    ring: IoUring,
    bufs: SlotArena,
    /// Per slot: the I/O and its submission time.
    slots: Vec<(AnyOp, u64)>,
    free: Vec<usize>,
    /// Writes prepared (content and all) while the queue is full, handed over the moment
    /// a slot frees up.
    ready: VecDeque<usize>,
    /// Open pacing: a spare slot holding the content of the write the source will hand
    /// out next ([`IoSource::upcoming`]).
    early: Option<(usize, AnyOp)>,
    /// Slots pushed to the ring and not yet handed to the kernel.
    batch: Vec<usize>,
    inflight: usize,
    draining: bool,
    /// The source's due time, when it has nothing to issue before it.
    wake: Option<u64>,
    pacing: Pacing,
    qd: usize,
    spare: usize,
    batch_submit: usize,
    file: &'f File,
    fd: i32,
    fixed: bool,
    regfile: bool,
    block: bool,
    sqe_flags: squeue::Flags,
    workers: bool,
    stamps: Stamps,
    /// The source checks what reads find ([`IoSource::check_read`]).
    check: bool,
    /// System calls into the ring (`io_uring_enter`), for the tests' count per I/O.
    enters: u64,
}

impl<'f> RingJob<'f> {
    fn new<S: IoSource>(
        job: &S,
        ctx: &BackendCtx<'_>,
        file: &'f File,
        mode: Mode,
    ) -> Result<RingJob<'f>, String> {
        let w = ctx.workload;
        let qd = w.iodepth as usize;
        let pacing = job.pacing();
        let stride = job
            .slot_bytes(qd, w.max_bs() as usize)
            .next_multiple_of(crate::buf::BUF_ALIGN);
        let spare = match pacing {
            Pacing::Closed => spare_slots(qd, stride, job.per_write_data() && w.writes()),
            // One, for the content of the source's next write (`make_upcoming`).
            Pacing::Open => job.per_write_data() as usize,
        };
        let nslots = qd + spare;
        let mut bufs = SlotArena::new(nslots, stride)?;
        let mut ring = new_ring(qd as u32).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
                " (RLIMIT_MEMLOCK may be too low; --ioengine sync needs none)"
            } else {
                ""
            };
            format!("cannot set up an io_uring of depth {qd}: {e}{hint}")
        })?;
        for b in bufs.base.as_mut_slice().chunks_mut(stride) {
            job.init_buffer(b);
        }
        let fixed = w.fixedbufs && register_buffers(&mut ring, &mut bufs, nslots, ctx);
        let fd = file.as_raw_fd();
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
        // Automatic (0): the whole refill goes in with the wait, one call per look, so
        // no prepared I/O waits in user space while the kernel works on others. An
        // open-loop source's I/Os go in one by one as they are due: each submission is
        // its own, and one that blocks is seen; but the one that fills the queue goes
        // in with the wait, as any batch does (`refill`).
        let batch_submit = match (pacing, w.iodepth_batch_submit as usize) {
            (Pacing::Open, _) => 1,
            (_, 0) => qd,
            (_, n) => n,
        };
        let idle = AnyOp::from(IoOp {
            dir: Dir::Read,
            offset: 0,
            len: 0,
        });
        Ok(RingJob {
            ring,
            bufs,
            slots: vec![(idle, 0); nslots],
            free: (0..nslots).rev().collect(),
            ready: VecDeque::new(),
            early: None,
            batch: Vec::with_capacity(qd),
            inflight: 0,
            draining: false,
            wake: None,
            pacing,
            qd,
            spare,
            batch_submit,
            file,
            fd,
            fixed,
            regfile,
            block: ctx.block,
            sqe_flags,
            workers: matches!(mode, Mode::Workers { .. }),
            stamps: Stamps::default(),
            check: job.wants_read_check(),
            enters: 0,
        })
    }

    /// Carry out the source's I/Os until it is done and nothing is in flight.
    fn run<S: IoSource>(&mut self, job: &mut S, clock: &dyn Clock) -> Result<(), String> {
        let per_write = job.per_write_data();
        let mut now = clock.now_ns();
        let mut last_progress = now;
        loop {
            let mark = self.refill(job, clock, now)?;
            if self.pacing == Pacing::Open {
                self.make_upcoming(job, clock)?;
            }
            if self.inflight == 0 {
                if self.draining {
                    return Ok(());
                }
                let Some(t) = self.wake.take() else {
                    return Err(super::sync::nothing_in_flight());
                };
                crate::clock::sleep_until(clock, t.min(now + SLICE_NS));
                now = clock.now_ns();
                continue;
            }
            // The rest of a partial batch goes in with the wait.
            let t_submit = clock.now_ns();
            if let Some(mark) = mark.filter(|_| per_write && !self.batch.is_empty()) {
                job.data_time(t_submit - mark, t_submit - mark);
            }
            for &s in &self.batch {
                self.slots[s].1 = t_submit;
            }
            if self.pacing == Pacing::Closed
                && self.spare > 0
                && !self.draining
                && self.ready.len() < self.spare
            {
                // Hand the refill over first, then prepare the next writes while the
                // device works on a full queue.
                self.enter(0)?;
                self.prepare_ahead(job, clock)?;
            }
            let timed_out = self.wait(clock)?;
            now = clock.now_ns();
            if timed_out && now.saturating_sub(last_progress) > STUCK_NS {
                return Err(format!(
                    "io_uring: {} I/O(s) handed to the kernel's workers made no progress for {} s",
                    self.inflight,
                    STUCK_NS / 1_000_000_000
                ));
            }
            if self.reap(job, clock) {
                last_progress = now;
            }
        }
    }

    /// Fill free slots up to the depth, from the writes prepared ahead and the source;
    /// hands the I/Os over in batches of `batch_submit`. Returns since when write content
    /// was being made while the target waited, if any was.
    fn refill<S: IoSource>(
        &mut self,
        job: &mut S,
        clock: &dyn Clock,
        now: u64,
    ) -> Result<Option<u64>, String> {
        self.batch.clear();
        let mut mark = now;
        let mut wrote = false;
        while self.inflight < self.qd {
            let (slot, op) = if let Some(slot) = self.ready.pop_front() {
                if !job.may_issue(now) {
                    // Past the deadline or stopped: prepared I/Os are not issued.
                    self.free.extend(self.ready.drain(..));
                    self.free.push(slot);
                    self.draining = true;
                    break;
                }
                (slot, self.slots[slot].0)
            } else if self.draining {
                break;
            } else {
                let t = if self.pacing == Pacing::Open {
                    clock.now_ns()
                } else {
                    now
                };
                let op = match job.next(t) {
                    Next::Io(op) => op,
                    Next::At(due) => {
                        self.wake = Some(due);
                        break;
                    }
                    Next::Completion => break,
                    Next::Done => {
                        self.draining = true;
                        self.free.extend(self.early.take().map(|(s, _)| s));
                        break;
                    }
                };
                if op.op == Op::Discard && self.block {
                    // BLKDISCARD is synchronous: carried out here, complete at once.
                    let t0 = clock.now_ns();
                    let res = blocking_io(self.file, &op, &mut [], true);
                    let t1 = self.stamps.next(clock);
                    self.draining |= !job.complete(&op, t0, t1, res);
                    continue;
                }
                // The upcoming write whose content is made already, or a free slot.
                let made = match self.early.take() {
                    Some((s, e)) if e == AnyOp { tag: 0, ..op } => Some(s),
                    other => {
                        self.free.extend(other.map(|(s, _)| s));
                        None
                    }
                };
                let slot = match made {
                    Some(s) => s,
                    None => self.free.pop().expect("a free slot when inflight < qd"),
                };
                if op.rw().is_some() && made.is_none() {
                    let (b, _) = self.bufs.get(slot, op.len_bytes as usize)?;
                    job.fill(&op, b);
                    wrote |= op.op == Op::Write;
                }
                (slot, op)
            };
            self.push(slot, &op)?;
            if self.batch.len() >= self.batch_submit && self.inflight < self.qd {
                // Hand this batch to the kernel now, without waiting: the device gets
                // its work soonest (one kick per I/O at batch size 1). Not when the
                // queue is full: then nothing comes between this and the wait, and the
                // batch goes in with it (one system call per I/O at depth 1).
                if wrote && job.per_write_data() {
                    let t = clock.now_ns();
                    job.data_time(t - mark, t - mark);
                }
                self.hand_over(clock)?;
                // The system call is the kernel's time, not content preparation.
                mark = clock.now_ns();
            }
        }
        Ok(wrote.then_some(mark))
    }

    /// Hand the queued batch to the kernel now, without waiting for a completion, its
    /// submission time stamped.
    fn hand_over(&mut self, clock: &dyn Clock) -> Result<(), String> {
        let t = clock.now_ns();
        for &s in &self.batch {
            self.slots[s].1 = t;
        }
        self.batch.clear();
        self.enter(0)
    }

    /// Open pacing: make the content of the source's next write in the spare slot now,
    /// while the I/Os handed over are in flight or the write's time has not come (what
    /// is queued is handed over first, so no I/O waits for it): the write then goes out
    /// the moment it may, not after its content is made. At depth 1 that takes the
    /// content off the path from one completion to the next submission.
    fn make_upcoming<S: IoSource>(&mut self, job: &mut S, clock: &dyn Clock) -> Result<(), String> {
        if self.spare == 0 || self.early.is_some() || self.draining {
            return Ok(());
        }
        let Some(op) = job.upcoming().filter(|o| o.op == Op::Write) else {
            return Ok(());
        };
        if !self.batch.is_empty() {
            self.hand_over(clock)?;
        }
        let t0 = clock.now_ns();
        let slot = self.free.pop().expect("the spare slot is free");
        let (b, _) = self.bufs.get(slot, op.len_bytes as usize)?;
        job.fill(&op, b);
        job.data_time(clock.now_ns() - t0, 0);
        self.early = Some((slot, op));
        Ok(())
    }

    /// Put `op` in slot `slot` on the ring (not yet handed to the kernel).
    fn push(&mut self, slot: usize, op: &AnyOp) -> Result<(), String> {
        let sqe = match op.rw() {
            Some(_) => {
                let (b, in_base) = self.bufs.get(slot, op.len_bytes as usize)?;
                let index = (self.fixed && in_base).then_some(slot as u16);
                build_rw(op, b.as_mut_ptr(), index, self.fd, self.regfile)
            }
            None => build_other(op, self.fd, self.regfile),
        };
        let sqe = sqe.user_data(slot as u64).flags(self.sqe_flags);
        // SAFETY: the buffer behind `sqe` stays valid and untouched until its
        // completion is reaped (the slot is not reused before that, and the buffers are
        // never freed while I/Os are in flight: see `close`).
        unsafe { self.ring.submission().push(&sqe) }
            .map_err(|_| "io_uring submission queue unexpectedly full".to_string())?;
        self.slots[slot].0 = *op;
        self.batch.push(slot);
        self.inflight += 1;
        Ok(())
    }

    /// Make the next writes (content and all) in the spare slots.
    fn prepare_ahead<S: IoSource>(&mut self, job: &mut S, clock: &dyn Clock) -> Result<(), String> {
        let t0 = clock.now_ns();
        while self.ready.len() < self.spare {
            let op = match job.next(t0) {
                Next::Io(op) => op,
                // Nothing more until an I/O in flight is back (a verifying job's last
                // checks): asked again after the next completion.
                Next::Completion => break,
                _ => {
                    self.draining = true;
                    break;
                }
            };
            let slot = self.free.pop().expect("a free slot for a prepared write");
            if op.rw().is_some() {
                let (b, _) = self.bufs.get(slot, op.len_bytes as usize)?;
                job.fill(&op, b);
            }
            self.slots[slot].0 = op;
            self.ready.push_back(slot);
        }
        job.data_time(clock.now_ns() - t0, 0);
        Ok(())
    }

    /// Hand over what is queued and wait for a completion (or, for an open-loop
    /// source, its due time). True when a wait for the kernel's workers timed out.
    fn wait(&mut self, clock: &dyn Clock) -> Result<bool, String> {
        match self.wake.take() {
            Some(due) => self.wait_until(clock, due).map(|()| false),
            None if self.workers => {
                self.enters += 1;
                enter_timed(&mut self.ring, 1)
            }
            None => self.enter(1).map(|()| false),
        }
    }

    /// Wait for a completion, but not past `due` (nor longer than [`SLICE_NS`]): asleep
    /// in the kernel until [`SPIN_NS`] before it, the rest spun, taking completions as
    /// they come (each look enters the kernel, which runs the deferred completions).
    fn wait_until(&mut self, clock: &dyn Clock, due: u64) -> Result<(), String> {
        let now = clock.now_ns();
        let t = due.saturating_sub(now).min(SLICE_NS);
        if t <= SPIN_NS {
            loop {
                self.enters += 1;
                wait_for(&mut self.ring, Timespec::new())?;
                if !self.ring.completion().is_empty() || clock.now_ns() >= now + t {
                    return Ok(());
                }
                std::hint::spin_loop();
            }
        }
        let t = t - SPIN_NS;
        let ts = Timespec::new()
            .sec(t / 1_000_000_000)
            .nsec((t % 1_000_000_000) as u32);
        self.enters += 1;
        wait_for(&mut self.ring, ts)
    }

    /// [`enter`], counted.
    fn enter(&mut self, wait: usize) -> Result<(), String> {
        self.enters += 1;
        enter(&mut self.ring, wait)
    }

    /// Hand every completion to the source, each stamped on its own (so the time a
    /// busy reap spends on the others is not in its latency); true when there were any.
    fn reap<S: IoSource>(&mut self, job: &mut S, clock: &dyn Clock) -> bool {
        let before = self.inflight;
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            let (op, submitted) = self.slots[slot];
            let t = self.stamps.next(clock);
            let res = cqe.result() as i64;
            let go = !self.check
                || self
                    .bufs
                    .get(slot, op.len_bytes as usize)
                    .is_ok_and(|(b, _)| read_checked(job, true, &op, res, b));
            if !job.complete(&op, submitted, t, res) || !go {
                self.draining = true;
            }
            self.free.push(slot);
            self.inflight -= 1;
        }
        self.inflight < before
    }

    /// Give the file back, and the buffers unless I/Os may still be in flight into them
    /// (a failed run: then they are never freed).
    fn close(self, res: Result<(), String>) -> Result<(), String> {
        let RingJob {
            ring,
            bufs,
            inflight,
            regfile,
            ..
        } = self;
        // Now, not later: a ring's own teardown runs in the kernel's background, and
        // until then the registered file stays open, so the next exclusive open of a
        // block device (the next suite step) would find it busy.
        if regfile {
            let _ = ring.submitter().unregister_files();
        }
        drop(ring);
        if res.is_err() && inflight > 0 {
            std::mem::forget(bufs);
        }
        res
    }
}

/// Register the slots' buffers with the ring (sparing the kernel a page lookup per
/// I/O); false, with a note, when the ring refuses (RLIMIT_MEMLOCK for large buffers,
/// old kernels): plain buffers are used then.
fn register_buffers(
    ring: &mut IoUring,
    bufs: &mut SlotArena,
    nslots: usize,
    ctx: &BackendCtx<'_>,
) -> bool {
    let stride = bufs.stride;
    let iov: Vec<libc::iovec> = bufs
        .base
        .as_mut_slice()
        .chunks_mut(stride)
        .map(|c| libc::iovec {
            iov_base: c.as_mut_ptr() as *mut libc::c_void,
            iov_len: stride,
        })
        .collect();
    // SAFETY: the registered memory is the arena's base, which outlives the ring: the
    // ring is dropped first (`RingJob::close`, or its field order), or the arena leaked.
    match unsafe { ring.submitter().register_buffers(&iov) } {
        Ok(()) => true,
        Err(e) => {
            ctx.note(format!(
                "io_uring refused to register {nslots} buffers of {stride} bytes ({e}; RLIMIT_MEMLOCK may be too low): plain buffers were used."
            ));
            false
        }
    }
}

/// `$mk` applied to the target: the ring's registered file (`$regfile`) or its
/// descriptor.
macro_rules! with_fd {
    ($regfile:expr, $fd:expr, $mk:expr) => {
        if $regfile {
            $mk(types::Fixed(0))
        } else {
            $mk(types::Fd($fd))
        }
    };
}

/// A read or write; `fixed`: the index of its registered buffer.
fn build_rw(op: &AnyOp, ptr: *mut u8, fixed: Option<u16>, fd: i32, regfile: bool) -> squeue::Entry {
    let (off, len) = (op.offset_bytes, op.len_bytes as u32);
    let flags = if op.fua { libc::RWF_DSYNC } else { 0 };
    match (op.op, fixed) {
        (Op::Read, None) => with_fd!(regfile, fd, |f| opcode::Read::new(f, ptr, len)
            .offset(off)
            .build()),
        (Op::Read, Some(i)) => {
            with_fd!(regfile, fd, |f| opcode::ReadFixed::new(f, ptr, len, i)
                .offset(off)
                .build())
        }
        (_, None) => with_fd!(regfile, fd, |f| opcode::Write::new(
            f,
            ptr as *const u8,
            len
        )
        .offset(off)
        .rw_flags(flags)
        .build()),
        (_, Some(i)) => with_fd!(regfile, fd, |f| opcode::WriteFixed::new(
            f,
            ptr as *const u8,
            len,
            i
        )
        .offset(off)
        .rw_flags(flags)
        .build()),
    }
}

/// A flush (fsync) or a file's discard (a punched hole); a block device's discard is
/// carried out synchronously instead (`RingJob::refill`).
fn build_other(op: &AnyOp, fd: i32, regfile: bool) -> squeue::Entry {
    match op.op {
        Op::Discard => with_fd!(regfile, fd, |f| opcode::Fallocate::new(f, op.len_bytes)
            .offset(op.offset_bytes)
            .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
            .build()),
        _ => with_fd!(regfile, fd, |f| opcode::Fsync::new(f).build()),
    }
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

/// Where [`probe`] reads.
#[derive(Clone, Copy)]
enum Probe {
    /// The span's first block, read the usual way first.
    SpanStart,
    /// Only without blocking, at the target's end (this many bytes): no data is read.
    End(u64),
}

/// Read the span's first block the usual way (so what a non-blocking read may need is
/// cached), then once more without blocking; or ([`Probe::End`]) only the read without
/// blocking, at the target's end. A target that still cannot answer without blocking
/// sends every io_uring I/O to the kernel's workers. A target that cannot be read at
/// all (opened for writing only) is taken as inline.
fn probe(file: &File, w: &Workload, at: Probe) -> Mode {
    let len = w.min_bs() as usize;
    let mut buf = crate::buf::AlignedBuf::new(len);
    let b = buf.as_mut_slice();
    let offset = match at {
        Probe::SpanStart => {
            if file.read_exact_at(b, w.offset_bytes).is_err() {
                return Mode::Inline;
            }
            w.offset_bytes
        }
        // On a block boundary, as direct I/O needs.
        Probe::End(end) => end.next_multiple_of(crate::buf::BUF_ALIGN as u64),
    };
    match crate::sys::read_would_block(file, b, offset) {
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

/// Hand over what is queued and wait for one completion, at most `ts` (zero: only a
/// look); a wait that ends without one is no error.
fn wait_for(ring: &mut IoUring, ts: Timespec) -> Result<(), String> {
    let args = SubmitArgs::new().timespec(&ts);
    match ring.submitter().submit_with_args(1, &args) {
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

fn enter(ring: &mut IoUring, wait: usize) -> Result<(), String> {
    loop {
        match ring.submit_and_wait(wait) {
            Ok(_) => return Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => continue,
            Err(e) => return Err(format!("io_uring submit failed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::MonotonicClock;
    use crate::data::DataPool;
    use crate::gen::{tests::workload, OpGen};
    use crate::job::{Job, StopFlags};
    use crate::replay::{Placement, Schedule, Timing, TraceSource};
    use crate::series::{Aggregator, Recorder};
    use crate::spec::{IoEngine, RwMode};
    use drivelab_trace::Record;
    use std::sync::Mutex;

    /// Run `job` to its end on one ring of `w`'s depth over `file`: the system calls
    /// into the ring it took.
    fn ring_enters<S: IoSource>(job: &mut S, w: &Workload, file: &File) -> u64 {
        let clock = MonotonicClock::new();
        let (notes, busy) = (Mutex::new(Vec::new()), Mutex::new(None));
        let ctx = BackendCtx {
            workload: w,
            clock: &clock,
            file: Some(file),
            block: false,
            notes: &notes,
            workers_busy: &busy,
        };
        let mut r = RingJob::new(job, &ctx, file, Mode::Inline).unwrap();
        let res = r.run(job, &clock);
        job.finish();
        let n = r.enters;
        r.close(res).unwrap();
        n
    }

    /// A trace of `n` I/Os, writes among reads as `write` says, one at a time, as fast
    /// as possible, on a 16 MiB file: the ring enters its replay took.
    fn replay_enters(n: u64, write: impl Fn(u64) -> bool, file: &File, w: &Workload) -> u64 {
        let recs: Vec<Record> = (0..n)
            .map(|i| {
                let op = if write(i) { Op::Write } else { Op::Read };
                Record::new(i * 10, op, (i * 7919 % 4000) * 4096, 4096 << (i % 3))
            })
            .collect();
        let place = Placement {
            start_bytes: 0,
            size_bytes: 16 << 20,
            align_bytes: 4096,
        };
        let mut sched = Schedule::new(recs.into_iter().map(Ok), Timing::Afap, place, true);
        let first = sched.next_io().unwrap();
        let agg = Aggregator::new(0, 1_000_000_000, 0, 1);
        let stop = AtomicBool::new(false);
        let mut src = TraceSource::new(&mut sched, first, &agg, Timing::Afap, &stop, 1, None);
        let enters = ring_enters(&mut src, w, file);
        let m = src.measured(Timing::Afap, true, 0, 1);
        assert_eq!((m.ios_completed, m.max_outstanding), (n, 1));
        enters
    }

    /// A 16 MiB file and a workload of depth 1 on io_uring over it.
    fn ring_file(d: &tempfile::TempDir) -> (File, Workload) {
        let path = d.path().join("ring.test");
        std::fs::write(&path, vec![0u8; 16 << 20]).unwrap();
        let file = File::options().read(true).write(true).open(&path).unwrap();
        let mut w = workload(RwMode::RandRead, 1);
        w.ioengine = IoEngine::IoUring;
        (w.offset_bytes, w.size_bytes) = (0, 16 << 20);
        (file, w)
    }

    /// At depth 1 nothing comes between handing an I/O over and waiting for it, so both
    /// go in one `io_uring_enter`: a trace replayed as fast as possible at one I/O in
    /// flight and the generator at QD1 alike (the count, not a time).
    #[test]
    fn at_depth_one_each_io_is_submitted_and_waited_for_in_one_system_call() {
        const N: u64 = 200;
        let d = tempfile::tempdir().unwrap();
        let (file, w) = ring_file(&d);
        // A trace of reads at distinct times without service times: one at a time.
        assert_eq!(replay_enters(N, |_| false, &file, &w), N);

        // The generator: N reads by a byte budget.
        let user = AtomicBool::new(false);
        let stop = StopFlags {
            user: &user,
            abort: AtomicBool::new(false),
        };
        let agg = Aggregator::new(0, 1_000_000_000, 0, 1);
        let pool = DataPool::new(w.data, 4096, 7, false);
        let rec = Recorder::new(&agg, 0, u64::MAX);
        let mut job = Job::new(
            0,
            OpGen::new(&w, 0),
            pool,
            rec,
            &stop,
            0,
            None,
            Some(N * 4096),
            false,
        );
        assert_eq!(ring_enters(&mut job, &w, &file), N);
    }

    /// A trace's next write gets its content while the I/O before it is in flight: that
    /// I/O is handed over on its own first (one more system call per such write, none
    /// per read), and every write still lands whole with its own content.
    #[test]
    fn a_traces_next_write_is_made_while_the_io_before_it_is_in_flight() {
        const N: u64 = 300;
        let d = tempfile::tempdir().unwrap();
        let (file, w) = ring_file(&d);
        let write = |i: u64| i % 3 == 1;
        let early = (1..N).filter(|&i| write(i)).count() as u64;
        assert_eq!(replay_enters(N, write, &file, &w), N + early);
        // Every sector written holds its own offset (whichever write came last).
        let mut written = std::collections::BTreeSet::new();
        for i in (0..N).filter(|&i| write(i)) {
            let off = (i * 7919 % 4000) * 4096;
            for s in (off..off + (4096 << (i % 3))).step_by(512) {
                written.insert(s);
            }
        }
        let mut sector = [0u8; 512];
        for &s in &written {
            file.read_exact_at(&mut sector, s).unwrap();
            assert_eq!(crate::data::stamped_offset(&sector), s, "sector at {s}");
        }
    }

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
