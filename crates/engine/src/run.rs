//! Running a workload: resolve it against a target, build the jobs, let the backend
//! carry them out, and assemble the result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::assemble::Facts;
use crate::backend::uring::UringBackend;
use crate::backend::{virtual_time::VirtualBackend, Backend, BackendCtx};
use crate::clock::{Clock, MonotonicClock};
use crate::data::DataPool;
use crate::gen::OpGen;
use crate::job::{IoErrorRecord, Job, StopFlags};
use crate::result::{DataGeneration, Progress, RunResult, RunStatus};
use crate::sensor::sampler::{Sampler, FINISH_WAIT};
use crate::series::{Aggregator, Recorder};
use crate::size::SizeOrPercent;
use crate::spec::{BsShare, Distribution, IoEngine, Workload, WorkloadRequest, MAX_BS};
use crate::target::{Target, TargetInfo, TargetKind};

/// The most jobs (threads) one run may have.
pub const MAX_JOBS: u32 = 4096;
/// The deepest io_uring the kernel sets up (IORING_MAX_ENTRIES).
pub const MAX_URING_DEPTH: u32 = 32768;

/// The rules that do not depend on the target, so that a command can check them before
/// it opens (or creates) anything. [`resolve`] checks them too.
pub fn check(req: &WorkloadRequest) -> Result<(), String> {
    if req.iodepth == 0 {
        return Err("--iodepth: must be at least 1".into());
    }
    if req.numjobs == 0 {
        return Err("--numjobs: must be at least 1".into());
    }
    if req.rwmixread > 100 {
        return Err("--rwmixread: must be a percentage from 0 to 100".into());
    }
    if req.percentage_random > 100 {
        return Err("--percentage_random: must be a percentage from 0 to 100".into());
    }
    if req.bs.iter().any(|b| b.bytes == 0 || b.bytes > MAX_BS) {
        return Err("--bs: a block size from 1 byte to 1G, like 4k".into());
    }
    if req.numjobs > MAX_JOBS {
        return Err(format!(
            "--numjobs: at most {MAX_JOBS} threads (for more outstanding I/O, raise --iodepth with --ioengine io_uring)"
        ));
    }
    // io_uring is also the engine a depth above 1 gets by default.
    if req.ioengine.is_none_or(|e| e == IoEngine::IoUring) && req.iodepth > MAX_URING_DEPTH {
        return Err(format!(
            "--iodepth: io_uring keeps at most {MAX_URING_DEPTH} I/Os in flight per ring (per job; add --numjobs for more)"
        ));
    }
    if req.ioengine == Some(IoEngine::Sync) && req.iodepth > 1 {
        return Err(format!(
            "--iodepth: the sync engine keeps one I/O in flight per thread; for QD{} use --numjobs {} (threads) or --ioengine io_uring",
            req.iodepth, req.iodepth
        ));
    }
    let empty = |s: SizeOrPercent| match s {
        SizeOrPercent::Bytes(b) => b == 0,
        SizeOrPercent::Percent(p) => p <= 0.0,
    };
    if req.size.is_some_and(empty) {
        return Err("--size: must be more than 0, like 1G or 50%".into());
    }
    if req.runtime_ns == Some(0) && req.io_size.is_none() {
        return Err(
            "--runtime: must be more than 0, or give --io_size for a byte-bounded run".into(),
        );
    }
    if req.log_interval_ns < 10_000_000 {
        return Err("--log-interval: must be at least 10ms".into());
    }
    check_backlog(req)
}

/// `--verify-backlog N`'s own rules (the rest of `--verify`'s are checked with it).
fn check_backlog(req: &WorkloadRequest) -> Result<(), String> {
    let Some(n) = req.verify_backlog else {
        return Ok(());
    };
    if !req.verify {
        return Err(
            "--verify-backlog: needs --verify (it checks the blocks --verify marks)".into(),
        );
    }
    if n == 0 {
        return Err("--verify-backlog: a number of writes, at least 1, like 64".into());
    }
    if !req.rw.writes(req.rwmixread) {
        return Err(
            "--verify-backlog: needs a workload that writes (--rw write, randwrite, rw or randrw)"
                .into(),
        );
    }
    if req.numjobs > 1 && req.rw.is_random() {
        return Err("--verify-backlog: random writes need --numjobs 1 (jobs writing the same blocks would race each other's check reads); sequential jobs write their own regions and may be several".into());
    }
    Ok(())
}

/// Resolve a request against a target: defaults filled, sizes resolved, every rule
/// checked. Errors are one line naming the option and the accepted form.
pub fn resolve(req: &WorkloadRequest, target: &TargetInfo) -> Result<Workload, String> {
    check(req)?;
    let cap = target.capacity_bytes.ok_or_else(|| {
        format!(
            "target {}: its capacity is unknown (a record, not a target drivelab opened)",
            target.path
        )
    })?;
    let sector = target.logical_sector_bytes.max(1);
    let ioengine = engine_for(req, target);
    let direct = req.direct.unwrap_or(matches!(
        target.kind,
        TargetKind::File | TargetKind::BlockDevice
    ));
    let real_io = matches!(target.kind, TargetKind::File | TargetKind::BlockDevice);
    let needs_sector = (direct && real_io) || target.kind == TargetKind::Simulated;
    if needs_sector {
        if let Some(b) = req.bs.iter().find(|b| b.bytes % sector != 0) {
            return Err(format!(
                "--bs: {} bytes is not a multiple of the {sector}-byte logical sector, which direct I/O needs (use a multiple like 4k{})",
                b.bytes,
                if target.kind == TargetKind::Simulated { "" } else { ", or --direct=0" }
            ));
        }
    }
    let min_bs = req.bs.iter().map(|b| b.bytes).min().unwrap_or(4096);
    let (offset, size) = span(req, target, cap, min_bs, needs_sector.then_some(sector))?;
    let max_bs = req.bs.iter().map(|b| b.bytes).max().unwrap_or(4096) as u64;
    let align = min_bs.next_multiple_of(if needs_sector { sector } else { 1 });
    check_job_span(req, size, align as u64, max_bs)?;
    if real_io || ioengine == IoEngine::Null {
        check_buffers(req, ioengine, max_bs)?;
    }
    let io_size = resolve_io_size(req, size, max_bs)?;
    check_zones(req, size, align as u64, max_bs)?;
    let ramp_ns = req.ramp_ns.div_ceil(req.log_interval_ns) * req.log_interval_ns;
    let randseed = req.randseed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let w = Workload {
        rw: req.rw,
        rwmixread: req.rwmixread,
        bs: req.bs.clone(),
        iodepth: if ioengine == IoEngine::Sync {
            1
        } else {
            req.iodepth
        },
        numjobs: req.numjobs,
        ioengine,
        direct,
        offset_bytes: offset,
        size_bytes: size,
        runtime_ns: req.runtime_ns.filter(|&r| r > 0),
        io_size_bytes: io_size,
        ramp_ns,
        percentage_random: req.percentage_random,
        random_distribution: req.random_distribution.clone(),
        randseed,
        data: req.data,
        log_interval_ns: req.log_interval_ns,
        log_head: None,
        align_bytes: align,
        continue_on_error: req.continue_on_error,
        fixedbufs: req.fixedbufs && ioengine == IoEngine::IoUring,
        registerfiles: req.registerfiles && ioengine == IoEngine::IoUring,
        iodepth_batch_submit: req.iodepth_batch_submit.min(req.iodepth.max(1)),
        invalidate: req.invalidate,
        end_fsync: req.end_fsync,
        verify: req.verify,
        verify_backlog: req.verify_backlog,
        bs_mix: None,
    };
    if w.verify {
        check_verify(&w, target)?;
    }
    Ok(w)
}

/// The engine a request runs on: a simulated or null target's own, else the one asked
/// for [default: io_uring when iodepth > 1, else sync].
fn engine_for(req: &WorkloadRequest, target: &TargetInfo) -> IoEngine {
    match target.kind {
        TargetKind::Simulated => IoEngine::Sim,
        TargetKind::Null => IoEngine::Null,
        _ => req.ioengine.unwrap_or(if req.iodepth > 1 {
            IoEngine::IoUring
        } else {
            IoEngine::Sync
        }),
    }
}

/// The span (offset, size) in bytes on a target of `cap` bytes; `sector`: the logical
/// sector its offset must be a multiple of, when I/O is direct.
fn span(
    req: &WorkloadRequest,
    target: &TargetInfo,
    cap: u64,
    min_bs: u32,
    sector: Option<u32>,
) -> Result<(u64, u64), String> {
    // A percentage offset lands on a block boundary, as fio aligns it to the minimum
    // block size; an offset in bytes is taken as given (and checked below).
    let offset = match req.offset {
        SizeOrPercent::Percent(_) => {
            let logical = target.logical_sector_bytes.max(1);
            let unit = (min_bs as u64).next_multiple_of(logical as u64);
            req.offset.resolve(cap) / unit * unit
        }
        SizeOrPercent::Bytes(b) => b,
    };
    let size = match req.size {
        Some(s) => s.resolve(cap),
        None => cap.saturating_sub(offset),
    };
    if offset.checked_add(size).is_none_or(|end| end > cap) || offset >= cap {
        return Err(format!(
            "--size/--offset: the span of {size} bytes at offset {offset} reaches past the end of {} ({cap} bytes)",
            target.path
        ));
    }
    if let Some(sector) = sector.filter(|&s| !offset.is_multiple_of(s as u64)) {
        return Err(format!(
            "--offset: {offset} is not a multiple of the {sector}-byte logical sector"
        ));
    }
    Ok((offset, size))
}

/// Each job's share of a span of `size` bytes holds a block of `max_bs` bytes (`align`:
/// the alignment unit).
fn check_job_span(req: &WorkloadRequest, size: u64, align: u64, max_bs: u64) -> Result<(), String> {
    // Sequential I/O (all of it, or the share percentage_random leaves) runs in each
    // job's own region of the span.
    let per_job_span = if req.rw.is_random() && req.percentage_random == 100 {
        size
    } else {
        // As `OpGen` cuts it: whole alignment units.
        size / req.numjobs as u64 / align * align
    };
    if per_job_span < max_bs {
        return Err(format!(
            "--size: the span of {size} bytes is too small for {} job(s) of {max_bs}-byte blocks",
            req.numjobs
        ));
    }
    Ok(())
}

/// The jobs' I/O buffers fit in half of the memory available: each job holds a buffer
/// of the largest block per I/O it keeps in flight.
fn check_buffers(req: &WorkloadRequest, ioengine: IoEngine, max_bs: u64) -> Result<(), String> {
    let per_job = if ioengine == IoEngine::IoUring {
        req.iodepth as u64
    } else {
        1
    };
    let buffers = req.numjobs as u64 * per_job * max_bs.next_multiple_of(4096);
    if let Some(avail) = crate::sys::meminfo_bytes("MemAvailable") {
        if buffers > avail / 2 {
            return Err(format!(
                "--bs/--iodepth/--numjobs: {} job(s) × {per_job} I/O(s) in flight × {} blocks need {} of buffers, more than half of the {} of memory available",
                req.numjobs,
                crate::size::human_bytes(max_bs),
                crate::size::human_bytes(buffers),
                crate::size::human_bytes(avail)
            ));
        }
    }
    Ok(())
}

/// `--io_size` in bytes of a span of `size` bytes: at least a block per job, and the run
/// bounded by it or by `--runtime`.
fn resolve_io_size(req: &WorkloadRequest, size: u64, max_bs: u64) -> Result<Option<u64>, String> {
    let io_size = req.io_size.map(|s| s.resolve(size));
    if req.runtime_ns.is_none() && io_size.is_none() {
        return Err("--runtime or --io_size: one of them must bound the run".into());
    }
    if io_size == Some(0) {
        return Err("--io_size: must be more than 0".into());
    }
    if let Some(b) = io_size {
        let least = req.numjobs as u64 * max_bs;
        if b < least {
            return Err(format!(
                "--io_size: {b} bytes is less than one block per job ({} job(s) of {max_bs}-byte blocks: at least {least})",
                req.numjobs
            ));
        }
    }
    Ok(io_size)
}

/// Every zone of a zoned distribution holds a block.
fn check_zones(req: &WorkloadRequest, size: u64, align: u64, max_bs: u64) -> Result<(), String> {
    if let Distribution::Zoned { zones } = &req.random_distribution {
        if let Some((i, width)) = crate::gen::narrow_zone(zones, size, align, max_bs) {
            return Err(format!(
                "--random_distribution: zone {} ({} % of the span) is {width} bytes wide, less than one {max_bs}-byte block; widen it or use a larger --size",
                i + 1,
                zones[i].span_percent
            ));
        }
    }
    Ok(())
}

/// Whether `w` can verify on `target` (`--verify`): the workload's rules and a target
/// that keeps what is written.
pub fn check_verify(w: &Workload, target: &TargetInfo) -> Result<(), String> {
    crate::verify::check_workload(w)?;
    if target.simulated.is_some() || target.kind == TargetKind::Null {
        return Err("--verify: needs a file or a block device (a simulated or null target keeps no data to read back)".into());
    }
    Ok(())
}

/// Bytes of the span a reading workload would read from that are not on storage (holes,
/// unwritten extents of a sparse or fallocated file): Some only when there are any.
pub fn unwritten_in_span(w: &Workload, target: &Target) -> Option<u64> {
    if w.read_percent() == 0 || w.ioengine == IoEngine::Null {
        return None;
    }
    target
        .unwritten_bytes(w.offset_bytes, w.size_bytes)
        .filter(|&b| b > 0)
}

/// Refuse to read a span with holes or unwritten extents: what comes back is zeros the
/// filesystem makes up, at memory speed, not a drive's. One line naming the fixes.
///
/// A loop device over such a file is not refused (a device is read as it is, and
/// its user may mean to read it so): its run carries the same note instead.
pub fn refuse_unwritten(w: &Workload, target: &Target) -> Result<(), String> {
    if target.info.kind != TargetKind::File {
        return Ok(());
    }
    match unwritten_in_span(w, target) {
        None => Ok(()),
        Some(b) => Err(format!(
            "{}: {} of the {} span read are holes or unwritten (fallocated) extents, which read as zeros without touching storage; write the span first (drivelab io {} --rw write --bs 1M --io_size 100% --overwrite), or pass --read-holes to measure anyway, flagged",
            target.info.path,
            crate::size::human_bytes(b),
            crate::size::human_bytes(w.size_bytes),
            target.info.path
        )),
    }
}

/// Options of one run besides the workload.
pub struct RunOptions<'a> {
    /// Set asynchronously (e.g. by a signal handler) to stop issuing, drain and return a
    /// partial result marked `interrupted`.
    pub stop: &'a AtomicBool,
    pub progress: Option<&'a (dyn Fn(&Progress<'_>) + Sync)>,
}

/// Run `w` against `target`. I/O errors and interruptions give a partial result with
/// its status; `Err` only when the run could not start at all.
pub fn run(w: &Workload, target: &mut Target, opts: &RunOptions<'_>) -> Result<RunResult, String> {
    let started_at = crate::assemble::started_at();
    let prep = prepare(w, target, opts.stop);
    let done = execute(w, target, opts, prep);
    let writes_per_job = w.verify.then(|| done.jobs.writes_per_job.clone());
    let backlog = done.jobs.backlog.clone();
    let mut facts = facts(w, target, opts, started_at, done);
    let pass = writes_per_job.map(|writes| {
        let v = verify_pass(&mut facts, w, target, writes, opts.stop);
        match backlog {
            Some(found) => v.with_backlog(found),
            None => v,
        }
    });
    let mut result = crate::assemble::assemble(w, target, facts, None);
    if let Some(v) = pass {
        let m = &mut result.measured;
        if let Some(why) = v.failure() {
            m.status = RunStatus::Failed;
            m.failure = Some(why);
        }
        m.verify = Some(v);
    }
    Ok(result)
}

/// `--verify`: read back every block the run wrote (unless it was interrupted or
/// failed), its reads counted in the run's facts; a block not as written fails the run.
/// The record of the writes is kept either way, so `drivelab verify` can check later.
fn verify_pass(
    facts: &mut Facts,
    w: &Workload,
    target: &Target,
    writes: Vec<u64>,
    stop: &AtomicBool,
) -> crate::verify::VerifyResult {
    let ran_whole = facts.failure.is_none() && !facts.aborted && !facts.interrupted;
    match target.file() {
        Some(f) if ran_whole && !stop.load(Ordering::Relaxed) => {
            let block = target.info.kind == TargetKind::BlockDevice;
            let mut pass = crate::verify_pass::run(w, f, block, writes);
            pass.count_in(facts, w.log_interval_ns);
            pass.result
        }
        _ => crate::verify::VerifyResult::unchecked(writes),
    }
}

/// What is done and made before the run's clock starts: the page cache prepared for
/// buffered I/O, the holes looked up, the write content's pool made (making it is no
/// I/O), and io_uring's probe of how the target takes I/O.
struct Prepared {
    buffered: bool,
    invalidated: bool,
    unwritten: Option<u64>,
    pool: std::sync::Arc<DataPool>,
    uring: Option<UringBackend>,
    notes: Vec<String>,
}

fn prepare(w: &Workload, target: &Target, stop: &AtomicBool) -> Prepared {
    let is_model = target.model().is_some();
    // Buffered I/O through the page cache: start from the target, as fio does.
    let buffered =
        !w.direct && !is_model && w.ioengine != IoEngine::Null && target.file().is_some();
    let mut notes = Vec::new();
    // (Not when already stopped: an interrupted fill must not wait for a writeback.)
    let prepare_cache = buffered && !stop.load(Ordering::Relaxed);
    let invalidated = prepare_cache && w.invalidate;
    if let Some(f) = target.file().filter(|_| prepare_cache) {
        if invalidated {
            if let Err(e) = crate::sys::drop_cache(f, w.offset_bytes, w.size_bytes) {
                notes.push(format!(
                    "--invalidate: the span's cached pages could not be dropped before the run ({e})."
                ));
            }
        }
        // Readahead as the pattern wants it (fio's default fadvise_hint); advice only,
        // so a refusal changes nothing that needs saying.
        let _ = crate::sys::advise_access(f, w.rw.is_random());
    }
    let uring = match (w.ioengine, target.file()) {
        (IoEngine::IoUring, Some(f)) if !is_model => Some(UringBackend::prepare(f, w)),
        _ => None,
    };
    Prepared {
        buffered,
        invalidated,
        unwritten: unwritten_in_span(w, target),
        pool: DataPool::for_workload(w),
        uring,
        notes,
    }
}

/// What the backend left when the jobs were done.
struct Executed {
    prep: Prepared,
    origin: u64,
    deadline: Option<u64>,
    /// The last completion.
    drained: u64,
    /// The final fsync (--end_fsync): its start and end.
    fsync_end: Option<(u64, u64)>,
    agg: Aggregator,
    jobs: JobSums,
    backend_err: Option<String>,
    aborted: bool,
    cpu0: (f64, f64),
    cpu1: (f64, f64),
    workers_busy: Option<f64>,
    backend_notes: Vec<String>,
    sensor_notes: Vec<String>,
}

/// The jobs' counts, summed (the data generator's busiest job kept apart).
#[derive(Default)]
struct JobSums {
    outside_ns: u128,
    closing_ns: u128,
    errors: Vec<IoErrorRecord>,
    error_count: u64,
    data_ns_max: u64,
    data_held_max: u64,
    data_ns_sum: u64,
    data_bytes: u64,
    last_done_ns: u64,
    /// Writes each job filled (a verifying run's record of what it wrote).
    writes_per_job: Vec<u64>,
    /// What the jobs' check reads found (`--verify-backlog`).
    backlog: Option<crate::verify_backlog::BacklogFound>,
}

impl JobSums {
    fn of(jobs: Vec<Job<'_>>) -> JobSums {
        let mut s = JobSums::default();
        for j in jobs {
            s.outside_ns += j.outside_ns as u128;
            s.closing_ns += j.closing_ns as u128;
            s.writes_per_job.push(j.writes_back());
            if let Some(b) = j.backlog {
                s.backlog.get_or_insert_with(Default::default).add(b.found);
            }
            s.errors.extend(j.errors);
            s.error_count += j.error_count;
            s.data_ns_max = s.data_ns_max.max(j.data_ns);
            s.data_held_max = s.data_held_max.max(j.data_held_ns);
            s.data_ns_sum += j.data_ns;
            s.data_bytes += j.data_bytes;
            s.last_done_ns = s.last_done_ns.max(j.last_done_ns);
        }
        s
    }
}

/// Carry the run out: the clock starts, the jobs run on the backend with progress,
/// the ramp's CPU mark and the sensors beside them, and the writes are synced at the end
/// (--end_fsync).
fn execute(w: &Workload, target: &mut Target, opts: &RunOptions<'_>, prep: Prepared) -> Executed {
    let wall_clock = MonotonicClock::new();
    let is_model = target.model().is_some();
    let mut prep = prep;
    let origin = match target.model() {
        Some(m) => m.now_ns(),
        None => wall_clock.now_ns(),
    };
    let mut agg = Aggregator::new(
        origin,
        w.log_interval_ns,
        w.ramp_ns / w.log_interval_ns,
        w.numjobs as usize,
    );
    if let Some(h) = w.log_head {
        agg = agg.with_head(h.interval_ns, h.len_ns);
    }
    let deadline = w.runtime_ns.map(|r| origin + w.ramp_ns + r);
    let stop = StopFlags {
        user: opts.stop,
        abort: AtomicBool::new(false),
    };
    let mut jobs = make_jobs(w, &prep.pool, &agg, &stop, origin, deadline);
    if w.writes() {
        target.refresh_marker(true);
    }
    let mut sensors = Sensors::take(target);
    sensors.start(wall_clock, origin, w.log_interval_ns);
    // CPU time counts from the end of the ramp, like the I/Os it is divided by.
    let cpu0 = Mutex::new(crate::sys::process_cpu_s());
    let finished = AtomicBool::new(false);
    let backend_notes: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let workers_busy: Mutex<Option<f64>> = Mutex::new(None);
    let backend_result = std::thread::scope(|s| {
        if let Some(cb) = opts.progress {
            spawn_progress(s, cb, &agg, &finished);
        }
        if w.ramp_ns > 0 && !is_model {
            let (cpu0, finished, clock) = (&cpu0, &finished, &wall_clock);
            let ramp_end = origin + w.ramp_ns;
            s.spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    let now = clock.now_ns();
                    if now >= ramp_end {
                        *cpu0.lock().unwrap_or_else(|e| e.into_inner()) =
                            crate::sys::process_cpu_s();
                        break;
                    }
                    std::thread::sleep(Duration::from_nanos((ramp_end - now).min(20_000_000)));
                }
            });
        }
        sensors.spawn(s, &agg, &finished);
        let r = run_backend(
            w,
            target,
            &mut jobs,
            prep.uring.take(),
            &agg,
            &wall_clock,
            &backend_notes,
            &workers_busy,
        );
        finished.store(true, Ordering::Relaxed);
        r
    });
    let aborted = stop.abort.load(Ordering::Relaxed);
    let jobs = JobSums::of(jobs);
    // When the last I/O came back (after the deadline, I/Os still in flight drain): the
    // jobs' own stamp, not the clock after the threads above were joined (the progress
    // thread alone sleeps 200 ms at a time).
    let drained = match target.model() {
        Some(m) => m.now_ns(),
        None if jobs.last_done_ns > 0 => jobs.last_done_ns,
        None => wall_clock.now_ns(),
    };
    let sensor_notes = sensors.finish(target, &agg);
    // --end_fsync: the run lasts until the writes are on the target.
    let mut fsync_end = None;
    if prep.buffered && w.end_fsync && w.writes() {
        if let Some(f) = target.file() {
            let t0 = wall_clock.now_ns();
            match f.sync_all() {
                Ok(()) => fsync_end = Some((t0, wall_clock.now_ns())),
                Err(e) => prep
                    .notes
                    .push(format!("--end_fsync: the final fsync failed ({e}).")),
            }
        }
    }
    target.refresh_marker(false);
    let cpu1 = crate::sys::process_cpu_s();
    Executed {
        prep,
        origin,
        deadline,
        drained,
        fsync_end,
        agg,
        jobs,
        backend_err: backend_result.err(),
        aborted,
        cpu0: cpu0.into_inner().unwrap_or_else(|e| e.into_inner()),
        cpu1,
        workers_busy: workers_busy.into_inner().unwrap_or_else(|e| e.into_inner()),
        backend_notes: backend_notes
            .into_inner()
            .unwrap_or_else(|e| e.into_inner()),
        sensor_notes,
    }
}

/// Carry out `sources`' I/Os on the target's backend: the model's in virtual time, the
/// workload's engine otherwise (`uring`: its probe of the target). Shared by generated
/// runs and replays.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_backend<S: crate::source::IoSource>(
    w: &Workload,
    target: &mut Target,
    sources: &mut [S],
    uring: Option<UringBackend>,
    agg: &Aggregator,
    clock: &MonotonicClock,
    notes: &Mutex<Vec<String>>,
    workers_busy: &Mutex<Option<f64>>,
) -> Result<(), String> {
    let mut ctx = BackendCtx {
        workload: w,
        clock,
        file: None,
        block: target.info.kind == TargetKind::BlockDevice,
        notes,
        workers_busy,
    };
    if let Some(model) = target.model_mut() {
        return VirtualBackend { model, agg }.run(sources, &ctx);
    }
    ctx.file = target.file();
    if ctx.file.is_none() {
        // A null target: nothing to do I/O on, whatever the engine asked.
        return crate::backend::null::NullBackend.run(sources, &ctx);
    }
    crate::backend::for_workload(w, uring).run(sources, &ctx)
}

/// One job per `numjobs`, each with its share of a byte-bounded run.
fn make_jobs<'a>(
    w: &Workload,
    pool: &std::sync::Arc<DataPool>,
    agg: &'a Aggregator,
    stop: &'a StopFlags<'a>,
    origin: u64,
    deadline: Option<u64>,
) -> Vec<Job<'a>> {
    let min_bs = w.min_bs() as u64;
    let last_idx = w.runtime_ns.map_or(u64::MAX, |r| {
        (w.ramp_ns + r).div_ceil(w.log_interval_ns) - 1
    });
    (0..w.numjobs)
        .map(|j| {
            let budget = w
                .io_size_bytes
                .map(|total| job_budget(total, min_bs, w.numjobs, j));
            let mut job = Job::new(
                j,
                OpGen::new(w, j),
                pool.clone(),
                Recorder::new(agg, j as usize, last_idx),
                stop,
                origin,
                deadline,
                budget,
                w.continue_on_error,
            );
            job.set_window_start(origin + w.ramp_ns);
            match w.verify_backlog.filter(|_| w.verify) {
                Some(n) => job.with_backlog(n, w.randseed, w.max_bs()),
                None => job,
            }
        })
        .collect()
}

/// Call `cb` about once per second of wall time until `finished`.
pub(crate) fn spawn_progress<'s, 'e: 's>(
    s: &'s std::thread::Scope<'s, 'e>,
    cb: &'e (dyn Fn(&Progress<'_>) + Sync),
    agg: &'e Aggregator,
    finished: &'e AtomicBool,
) {
    s.spawn(move || {
        let t = std::time::Instant::now();
        while !finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            if t.elapsed().as_millis() % 1000 < 200 {
                let latest = agg.latest();
                cb(&Progress {
                    wall: t.elapsed(),
                    latest: latest.as_ref(),
                });
            }
        }
    });
}

/// A real target's sensors, sampled every interval on a thread of their own beside the
/// I/O (a stuck read never holds the end); a simulated device's are read by its backend.
pub(crate) struct Sensors {
    sources: Vec<Box<dyn crate::sensor::SensorSource>>,
    sampler: Option<Sampler>,
}

impl Sensors {
    /// The target's sources, taken before the clock starts.
    pub(crate) fn take(target: &mut Target) -> Sensors {
        Sensors {
            sources: match target.model() {
                Some(_) => Vec::new(),
                None => target.take_sensors(),
            },
            sampler: None,
        }
    }

    /// Sample at `origin` and every `interval_ns` after it.
    pub(crate) fn start(&mut self, clock: MonotonicClock, origin: u64, interval_ns: u64) {
        let sources = std::mem::take(&mut self.sources);
        if !sources.is_empty() {
            self.sampler = Some(Sampler::start(sources, clock, origin, interval_ns));
        }
    }

    /// Hand the readings to `agg` until `finished`.
    pub(crate) fn spawn<'s, 'e: 's>(
        &'e self,
        s: &'s std::thread::Scope<'s, 'e>,
        agg: &'e Aggregator,
        finished: &'e AtomicBool,
    ) {
        if let Some(sampler) = &self.sampler {
            s.spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                    sampler.drain().into_iter().for_each(|r| agg.sensor(r));
                }
            });
        }
    }

    /// The spans since the last sample (a meter's mean, ending with the run) to `agg`,
    /// the sources back to the target; what they have to say about the run.
    pub(crate) fn finish(self, target: &mut Target, agg: &Aggregator) -> Vec<String> {
        let Some(sampler) = self.sampler else {
            if !self.sources.is_empty() {
                target.return_sensors(self.sources);
            }
            return Vec::new();
        };
        let (sources, notes, last) = sampler.finish(FINISH_WAIT);
        last.into_iter().for_each(|r| agg.sensor(r));
        target.return_sensors(sources);
        notes
    }
}

/// The measured facts of an executed run: the grid closed, the measured span, the depth
/// held, the data generator's share and the run's notes.
fn facts(
    w: &Workload,
    target: &Target,
    opts: &RunOptions<'_>,
    started_at: String,
    e: Executed,
) -> Facts {
    let (origin, drained) = (e.origin, e.drained);
    // The grid ends at the deadline; the measured time at the last completion (or the
    // end of the final fsync): a rate is the I/Os counted over the time they took,
    // those drained after a deadline included (docs/result-schema.md).
    let fsync_done = e.fsync_end.map_or(0, |(_, end)| end);
    let grid_end = e
        .deadline
        .map_or(drained, |d| drained.min(d).max(origin + 1))
        .max(fsync_done)
        .max(origin + 1);
    let end = grid_end.max(drained);
    let (records, hists, bytes) = e.agg.finish(grid_end, end);
    let head_records = e.agg.finish_head(grid_end);
    // Zero when the run ended within the ramp: then nothing was measured.
    let ramped = w.ramp_ns > 0 && e.fsync_end.is_none();
    let measured_ns = span_end(ramped, e.deadline, end).saturating_sub(origin + w.ramp_ns);
    let cpu0 = if measured_ns == 0 { e.cpu1 } else { e.cpu0 };
    let is_model = target.model().is_some();
    let span_ns = (end - origin).max(1);
    let held_end = e.deadline.map_or(drained, |d| d.min(drained));
    let latency_sum = hists[0].sum() + hists[1].sum() + e.jobs.closing_ns;
    let avg_inflight = held_inflight(latency_sum, e.jobs.outside_ns, held_end, origin + w.ramp_ns);
    let fraction = |ns: u64| {
        if is_model {
            0.0
        } else {
            ns as f64 / span_ns as f64
        }
    };
    let busiest = fraction(e.jobs.data_ns_max);
    // Content made ahead, while the queue was full, held nothing back.
    let held = fraction(e.jobs.data_held_max);
    let data = DataGeneration {
        pattern: w.data.name(),
        bytes_prepared: e.jobs.data_bytes,
        bytes_per_s_per_core: (e.jobs.data_ns_sum > 0)
            .then(|| e.jobs.data_bytes as f64 / (e.jobs.data_ns_sum as f64 / 1e9)),
        busiest_job_fraction: busiest,
        held_fraction: held,
        limited_by_generator: DataGeneration::limits(held, avg_inflight, w.queue_depth()),
    };
    let completed_ios = hists[0].count() + hists[1].count();
    let notes = run_notes(
        w,
        target,
        &e,
        &data,
        avg_inflight,
        measured_ns,
        completed_ios,
    );
    Facts {
        started_at,
        origin_ns: origin,
        grid_end_ns: grid_end,
        end_ns: end,
        measured_ns,
        verify_pass_ns: 0,
        records,
        head_records,
        hists,
        bytes,
        completed_ios,
        errors: e.jobs.errors,
        error_count: e.jobs.error_count,
        failure: e.backend_err,
        aborted: e.aborted,
        interrupted: opts.stop.load(Ordering::Relaxed),
        cpu_s: (e.cpu1.0 - cpu0.0, e.cpu1.1 - cpu0.1),
        avg_inflight,
        workers_busy: e.workers_busy,
        data,
        unwritten_bytes: e.prep.unwritten,
        notes,
    }
}

/// What a generated run has to say besides what every run does
/// ([`crate::assemble::assemble`]).
fn run_notes(
    w: &Workload,
    target: &Target,
    e: &Executed,
    data: &DataGeneration,
    avg_inflight: f64,
    measured_ns: u64,
    completed_ios: u64,
) -> Vec<String> {
    let info = &target.info;
    let mut notes = Vec::new();
    if data.limited_by_generator {
        notes.push(DataGeneration::note(
            data.held_fraction,
            avg_inflight,
            w.queue_depth(),
        ));
    }
    if w.ioengine == IoEngine::Null && info.kind != TargetKind::Null {
        notes.push(format!(
            "--ioengine null: no I/O reached {}; the figures are drivelab's own cost per I/O, not the target's.",
            info.path
        ));
    }
    if measured_ns == 0 {
        notes.push("The run ended within the ramp (--ramp_time): nothing was measured.".into());
    }
    if e.prep.buffered && info.in_memory.is_none() {
        notes.push(buffered_note(w, e.prep.invalidated, e.fsync_end));
    }
    notes.extend(e.prep.notes.iter().cloned());
    notes.extend(e.sensor_notes.iter().cloned());
    if let Some(total) = w.io_size_bytes {
        let min_bs = w.min_bs() as u64;
        let left = total % min_bs;
        if left > 0 {
            notes.push(format!(
                "--io_size: the last {left} bytes were not done: less than the smallest block ({min_bs} bytes), and no I/O is cut to a size the workload does not ask for."
            ));
        }
    }
    let error_count = e.jobs.error_count;
    if error_count > 0 && w.continue_on_error {
        let tried = completed_ios + error_count;
        notes.push(format!(
            "{error_count} of {tried} I/Os ({:.2} %) failed (--continue-on-error); IOPS, bandwidth and latency count the successful ones only.",
            error_count as f64 * 100.0 / tried as f64
        ));
    }
    notes.extend(e.backend_notes.iter().cloned());
    notes
}

/// What buffered I/O (--direct=0) means for the figures.
fn buffered_note(w: &Workload, invalidated: bool, fsync_end: Option<(u64, u64)>) -> String {
    let mut n = format!(
        "Buffered I/O (--direct=0): the page cache was in the path{}.",
        if invalidated {
            ", emptied of the span before the run"
        } else if w.invalidate {
            " (not emptied first: the run was stopped before it began)"
        } else {
            " (not emptied first: --invalidate=0)"
        }
    );
    if w.read_percent() > 0 {
        n.push_str(&format!(
            " Readahead was {} as fio's fadvise_hint does, and reads of cached data came from memory (random offsets are drawn with replacement, as with fio's norandommap, so blocks read before may be read again from the cache).",
            if w.rw.is_random() { "off" } else { "on" }
        ));
    }
    match fsync_end {
        Some((t0, t1)) => n.push_str(&format!(
            " The writes were flushed to the target at the end in {:.3} s, counted in the elapsed time (--end_fsync).",
            (t1 - t0) as f64 / 1e9
        )),
        None if w.writes() && !w.end_fsync => n.push_str(
            " Writes counted once copied into the cache, not when they reached the target (--end_fsync=1 waits for that).",
        ),
        None => {}
    }
    n
}

/// Where the measured span ends, for a run whose last completion is at `end_ns`. A run
/// with a ramp (`ramped`; not one whose final fsync, `--end_fsync`, is part of its
/// time) measures the I/Os issued from the ramp's end to the deadline, over that time:
/// those in flight at the ramp's end were issued in the ramp and are its (counted
/// nowhere), those in flight at the deadline count in full (drained). At a constant
/// depth as many are in flight at both ends, so this is the rate at which the device
/// completed I/Os in that time, whatever its rhythm. Up to the last completion instead,
/// the span held the wait for the drain's I/Os on top: on a device that serves in
/// bursts (a cgroup throttle lets a slice's worth through every 100 ms), up to a whole
/// gap between bursts with only the queue's I/Os for it, 3 % of a 3 s run. A run
/// without a ramp starts with nothing in flight: its span runs to the last completion,
/// the time its I/Os took. So does a run that ended before its deadline (byte-bounded,
/// stopped).
fn span_end(ramped: bool, deadline_ns: Option<u64>, end_ns: u64) -> u64 {
    match deadline_ns {
        Some(d) if ramped => d.min(end_ns),
        _ => end_ns,
    }
}

/// Average I/Os in flight while the jobs had work, from the end of the ramp
/// (`window_start_ns`) to the deadline or the last completion (`window_end_ns`), by
/// Little's law: the measured I/Os' summed latency, less the parts of it outside that
/// window (`outside_ns`: before the ramp's end, in the drain after the deadline; the I/Os
/// issued in the ramp and completed after it count in the ramp, but their time in the
/// window is added to `latency_sum_ns`), over
/// the window's length. The queue depth a step held, not diluted by the drain.
fn held_inflight(
    latency_sum_ns: u128,
    outside_ns: u128,
    window_end_ns: u64,
    window_start_ns: u64,
) -> f64 {
    let held = latency_sum_ns.saturating_sub(outside_ns);
    held as f64 / window_end_ns.saturating_sub(window_start_ns).max(1) as f64
}

/// A sequential-write workload that writes the whole span once with the given pattern:
/// used to fill test files before reads (so reads never hit holes) and to precondition.
pub fn fill_workload(base: &Workload, bs: u32, iodepth: u32) -> Workload {
    let mut w = base.clone();
    w.rw = crate::spec::RwMode::Write;
    w.bs = vec![BsShare {
        bytes: bs,
        percent: 100,
    }];
    w.numjobs = 1;
    w.iodepth = if w.ioengine == IoEngine::Sync {
        1
    } else {
        iodepth
    };
    w.runtime_ns = None;
    w.io_size_bytes = Some(w.size_bytes);
    w.ramp_ns = 0;
    w.percentage_random = 100;
    w.align_bytes = bs.min(w.align_bytes.max(512));
    w
}

/// Job `j`'s share of a byte-bounded run of `total` bytes over `numjobs` jobs: whole
/// blocks of the smallest size `min_bs`, the odd ones to the last job (whose sequential
/// region, likewise, runs to the span's end: a fill of the span by several jobs writes
/// every block once). What is left below one such block is not done at all (no I/O is
/// cut to a size the workload does not use).
fn job_budget(total: u64, min_bs: u64, numjobs: u32, j: u32) -> u64 {
    let units = total / min_bs;
    let n = numjobs as u64;
    let extra = if j + 1 == numjobs { units % n } else { 0 };
    (units / n + extra) * min_bs
}

/// Whether `w`, read from a result document, is a run `drivelab io --verify` makes on
/// `target`: the target holds the run's span, every rule of [`resolve`] holds, and the
/// fields `resolve` derives are as it derives them (an edited `align_bytes` of 0 would
/// divide by zero in the generator). Else one line naming the field and what it takes.
pub fn check_document(w: &Workload, target: &TargetInfo) -> Result<(), String> {
    let Some(end) = w.offset_bytes.checked_add(w.size_bytes) else {
        return Err(
            "config.offset_bytes + config.size_bytes: past 2^64 bytes; an edited document?".into(),
        );
    };
    if end > target.span_bytes() {
        return Err(format!(
            "{}: the target has {} bytes, but the run wrote a span ending at byte {end} (config.offset_bytes + config.size_bytes); give the target the run wrote, whole",
            target.path,
            target.span_bytes()
        ));
    }
    let resolved = resolve(&request(w), target)
        .map_err(|e| format!("config: not a run drivelab io makes ({e})"))?;
    let (a, b) = (serde_json::to_value(w), serde_json::to_value(&resolved));
    if let (Ok(serde_json::Value::Object(found)), Ok(serde_json::Value::Object(made))) = (a, b) {
        if let Some((key, v)) = made.iter().find(|(k, v)| found.get(*k) != Some(v)) {
            let shown = found
                .get(key)
                .map_or("absent".to_string(), |f| f.to_string());
            return Err(format!(
                "config.{key}: {shown}, but a run of this config records {v}; an edited document?"
            ));
        }
    }
    Ok(())
}

/// The request that resolves to `w` (every value given, none left to defaults).
fn request(w: &Workload) -> WorkloadRequest {
    WorkloadRequest {
        rw: w.rw,
        rwmixread: w.rwmixread,
        bs: w.bs.clone(),
        iodepth: w.iodepth,
        numjobs: w.numjobs,
        ioengine: Some(w.ioengine),
        direct: Some(w.direct),
        offset: SizeOrPercent::Bytes(w.offset_bytes),
        size: Some(SizeOrPercent::Bytes(w.size_bytes)),
        runtime_ns: w.runtime_ns,
        io_size: w.io_size_bytes.map(SizeOrPercent::Bytes),
        ramp_ns: w.ramp_ns,
        percentage_random: w.percentage_random,
        random_distribution: w.random_distribution.clone(),
        randseed: Some(w.randseed),
        data: w.data,
        log_interval_ns: w.log_interval_ns,
        continue_on_error: w.continue_on_error,
        fixedbufs: w.fixedbufs,
        registerfiles: w.registerfiles,
        iodepth_batch_submit: w.iodepth_batch_submit,
        invalidate: w.invalidate,
        end_fsync: w.end_fsync,
        verify: w.verify,
        verify_backlog: w.verify_backlog,
    }
}

#[cfg(test)]
mod tests {
    use super::{held_inflight, span_end};

    #[test]
    fn a_ramped_run_is_measured_up_to_its_deadline() {
        // Deadline at 330, the drain's I/Os back at 400 (a throttle's next slice).
        assert_eq!(span_end(true, Some(330), 400), 330);
        // Without a ramp, or when the run ended before the deadline, or has none: the
        // last completion.
        assert_eq!(span_end(false, Some(330), 400), 400);
        assert_eq!(span_end(true, Some(330), 200), 200);
        assert_eq!(span_end(true, None, 400), 400);
    }

    #[test]
    fn the_depth_held_is_the_latency_inside_the_window_over_its_length() {
        // 4 I/Os always in flight for 1 000 ns: 4 000 ns of latency, 400 of it in the
        // drain after the deadline.
        assert_eq!(held_inflight(4_400, 400, 1_000, 0), 4.0);
        assert_eq!(held_inflight(4_000, 0, 2_000, 1_000), 4.0);
        // An empty window does not divide by zero.
        assert_eq!(held_inflight(0, 0, 5, 5), 0.0);
    }
}
