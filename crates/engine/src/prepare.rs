//! Preparing a target before measuring: fill a fresh test file so reads hit data, and
//! precondition a span (discard, then write it sequentially) as the consistency and
//! fill methodologies require.

use std::sync::atomic::AtomicBool;

use crate::result::Progress;
use crate::result::{RunResult, RunStatus};
use crate::run::{self, RunOptions};
use crate::spec::{IoEngine, Workload};
use crate::target::{Target, TargetKind};

/// Block size and depth of the sequential fill of a new test file.
pub const FILL_BS: u32 = 1 << 20;
pub const FILL_QD: u32 = 8;

/// Write a drivelab test file's whole content once, with `w`'s data pattern, unless it is
/// already known to be filled (its marker says so). A sparse file reads from nowhere, far
/// too fast. Files drivelab did not create, block devices, `null` and simulated targets
/// are left alone. Returns the fill's status (Complete when nothing was needed).
/// `progress` hears the fill as it goes (its writes: bytes done of the file's size).
pub fn ensure_filled(
    w: &Workload,
    target: &mut Target,
    stop: &AtomicBool,
    progress: Option<&(dyn Fn(&Progress<'_>) + Sync)>,
) -> Result<RunStatus, String> {
    let t = &target.info;
    if t.kind != TargetKind::File
        || !t.created_by_drivelab
        || w.ioengine == IoEngine::Null
        || target.is_filled()
    {
        return Ok(RunStatus::Complete);
    }
    let mut fw = w.clone();
    fw.offset_bytes = 0;
    fw.size_bytes = t.span_bytes();
    fw.ioengine = IoEngine::IoUring;
    fw.direct = true;
    let bs = if fw.size_bytes.is_multiple_of(FILL_BS as u64) {
        FILL_BS
    } else {
        t.logical_sector_bytes.max(4096)
    };
    let fw = run::fill_workload(&fw, bs, FILL_QD);
    // The fill's result is not kept: the sensors sit it out, so that a meter's lines
    // meanwhile (they count towards the measured run's first interval, like those before
    // any run) and its notes (garbage, its exit) reach the run that is kept.
    let sensors = target.take_sensors();
    let res = run::run(&fw, target, &RunOptions { stop, progress });
    target.return_sensors(sensors);
    let res = res?;
    if res.measured.status == RunStatus::Complete {
        target.mark_filled();
    } else if let Some(f) = res.measured.failure {
        return Err(f);
    }
    Ok(res.measured.status)
}

/// Discard the span of `w` (BLKDISCARD, punched holes, or the model's TRIM), then write it
/// sequentially `passes` times with `bs` blocks at queue depth `qd` and `w`'s data pattern.
/// Returns the result of every pass (their series show the fill itself). `progress`
/// hears each pass as it goes.
pub fn precondition(
    w: &Workload,
    target: &mut Target,
    bs: u32,
    qd: u32,
    passes: u32,
    stop: &AtomicBool,
    progress: Option<&(dyn Fn(&Progress<'_>) + Sync)>,
) -> Result<Vec<RunResult>, String> {
    // A device (or filesystem) that takes no discards (TRIM) is only written: an HDD has
    // nothing to trim, and the fill alone still puts data under every block.
    let untrimmed = match target.discard(w.offset_bytes, w.size_bytes) {
        Ok(()) => None,
        Err(e) if discard_unsupported(&e) => Some(format!(
            "The target does not take discards (TRIM: {e}): the precondition only wrote the span."
        )),
        Err(e) => {
            return Err(format!(
                "discarding {} bytes at {} failed: {e}",
                w.size_bytes, w.offset_bytes
            ))
        }
    };
    let mut fw = w.clone();
    if fw.ioengine == IoEngine::Sync {
        fw.ioengine = IoEngine::IoUring;
    }
    let fw = run::fill_workload(&fw, bs, qd);
    let mut out = Vec::new();
    for _ in 0..passes {
        let mut r = run::run(&fw, target, &RunOptions { stop, progress })?;
        let done = r.measured.status == RunStatus::Complete;
        if let Some(n) = &untrimmed {
            r.measured.notes.push(n.clone());
        }
        out.push(r);
        if !done {
            break;
        }
    }
    // A test file written from end to end is filled: reads after it hit data, and it
    // need not be written again before them.
    let whole = w.offset_bytes == 0 && w.size_bytes >= target.info.span_bytes();
    if whole
        && out.len() == passes as usize
        && out.iter().all(|r| r.measured.status == RunStatus::Complete)
    {
        target.mark_filled();
    }
    Ok(out)
}

/// Whether a discard failed because the target cannot discard at all (rather than a
/// real error): EOPNOTSUPP, or ENOTTY/EINVAL from devices without the ioctl.
pub fn discard_unsupported(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::EINVAL)
    )
}
