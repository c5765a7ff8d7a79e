//! `sync`: each job is a thread doing one pread/pwrite at a time, so the queue depth is
//! the number of jobs (the method of the enterprise review in the references).
//!
//! Large writes with fresh content per I/O (`--data random`, the default) have it made
//! ahead: a helper thread per job prepares the next write in a second buffer while the
//! current one is in flight, so at one I/O in flight the target does not wait for the
//! generator (a 1 MiB write's content takes about as long to make as a fast drive takes
//! to write it). Smaller writes cost less to make than a hand-over between threads.
//!
//! A trace's I/Os (any kind: flushes are fdatasync, discards BLKDISCARD or a punched
//! hole, FUA writes followed by fdatasync) go the same way, one at a time, each when
//! the source says; the thread sleeps until then.

use std::fs::File;
use std::sync::mpsc;

use super::{blocking_io, per_job_threads, read_checked, Backend, BackendCtx, Stamps, SLICE_NS};
use crate::buf::{AlignedBuf, SlotArena};
use crate::clock::Clock;
use crate::op::AnyOp;
use crate::source::{IoSource, Next, Pacing, Plan};
use drivelab_trace::Op;

/// Writes of at least this many bytes get their content made ahead (see above).
pub const AHEAD_MIN_BYTES: u32 = 128 << 10;

pub struct SyncBackend;

impl<S: IoSource> Backend<S> for SyncBackend {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn run(&mut self, jobs: &mut [S], ctx: &BackendCtx<'_>) -> Result<(), String> {
        let file = ctx.file.ok_or("the sync engine needs an opened target")?;
        let w = ctx.workload;
        let max_bs = w.max_bs() as usize;
        let clock = ctx.clock;
        per_job_threads(jobs, |job| {
            let ahead = job.pacing() == Pacing::Closed
                && job.per_write_data()
                && w.writes()
                && w.max_bs() >= AHEAD_MIN_BYTES;
            if ahead {
                return run_ahead(job, file, clock, max_bs, ctx.block);
            }
            let mut bufs = SlotArena::new(1, job.slot_bytes(1, max_bs))?;
            job.init_buffer(bufs.base.as_mut_slice());
            let per_write = job.per_write_data();
            let check = job.wants_read_check();
            let mut stamps = Stamps::default();
            let mut now = clock.now_ns();
            loop {
                let op = match job.next(now) {
                    Next::Io(op) => op,
                    Next::At(t) => {
                        crate::clock::sleep_until(clock, t.min(now + SLICE_NS));
                        now = clock.now_ns();
                        continue;
                    }
                    Next::Done => break,
                    Next::Completion => return Err(nothing_in_flight()),
                };
                let b: &mut [u8] = match op.rw() {
                    Some(_) => bufs.get(0, op.len_bytes as usize)?.0,
                    None => &mut [],
                };
                job.fill(&op, b);
                let t0 = clock.now_ns();
                if per_write && op.op == Op::Write {
                    job.data_time(t0 - now, t0 - now);
                }
                let res = blocking_io(file, &op, b, ctx.block);
                now = stamps.next(clock);
                let go = read_checked(job, check, &op, res, b);
                if !job.complete(&op, t0, now, res) || !go {
                    break;
                }
            }
            Ok(())
        })
    }
}

/// A source that waits for a completion when none of its I/Os is in flight would wait
/// for ever: a fault of the source, said rather than hung.
pub(crate) fn nothing_in_flight() -> String {
    "the I/O source waited for a completion with nothing in flight".into()
}

/// What the helper is asked to make: a buffer, the I/O, and a write's content plan.
type Ask = (AlignedBuf, AnyOp, Option<Plan>);

/// One job with its next write's content made on a helper thread while the current I/O
/// is in flight: two buffers, handed back and forth.
fn run_ahead<S: IoSource>(
    job: &mut S,
    file: &File,
    clock: &dyn Clock,
    max_bs: usize,
    block: bool,
) -> Result<(), String> {
    let content = job.content().clone();
    let check = job.wants_read_check();
    let mut bufs = [AlignedBuf::try_new(max_bs)?, AlignedBuf::try_new(max_bs)?];
    for b in &mut bufs {
        job.init_buffer(b.as_mut_slice());
    }
    let [first, second] = bufs;
    let (ask_tx, ask_rx) = mpsc::sync_channel::<Ask>(1);
    let (ready_tx, ready_rx) = mpsc::sync_channel::<(AlignedBuf, AnyOp, u64)>(1);
    // The source may have nothing until the I/O in flight is back (a verifying job's
    // last checks, `Ok(None)`): then it is asked again once that I/O completed.
    let after_completion = |job: &mut S, now| match job.next(now) {
        Next::Io(op) => Ok(Some(op)),
        Next::Completion => Ok(None),
        _ => Err(()),
    };
    let next_op = |job: &mut S, now| after_completion(job, now).ok().flatten();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(format!("drivelab-data{}", job.id()))
            .spawn_scoped(s, move || {
                for (mut b, op, plan) in ask_rx {
                    let t0 = std::time::Instant::now();
                    if let Some(plan) = plan {
                        let slice = &mut b.as_mut_slice()[..op.len_bytes as usize];
                        content.make(slice, op.offset_bytes, plan);
                    }
                    let made = t0.elapsed().as_nanos() as u64;
                    if ready_tx.send((b, op, made)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start a data thread: {e}"))?;
        let mut now = clock.now_ns();
        let Some(op) = next_op(job, now) else {
            return Ok(());
        };
        let plan = job.plan(&op);
        let _ = ask_tx.send((first, op, plan));
        let mut spare = Some(second);
        let mut stamps = Stamps::default();
        loop {
            // The target waits only if the helper is still making this I/O's content.
            let waited = clock.now_ns();
            let Ok((mut buf, op, made)) = ready_rx.recv() else {
                return Err("the data thread stopped".into());
            };
            let t0 = clock.now_ns();
            job.data_time(made, t0 - waited);
            // The next I/O's content is made while this one is in flight.
            let next = after_completion(job, now);
            if let (Ok(Some(n)), Some(b)) = (next, spare.take()) {
                let plan = job.plan(&n);
                let _ = ask_tx.send((b, n, plan));
            }
            let t0 = if next.is_ok_and(|n| n.is_some()) {
                clock.now_ns()
            } else {
                t0
            };
            let b = &mut buf.as_mut_slice()[..op.len_bytes as usize];
            let res = blocking_io(file, &op, b, block);
            now = stamps.next(clock);
            let go = read_checked(job, check, &op, res, b);
            spare = Some(buf);
            if !job.complete(&op, t0, now, res) || !go || next.is_err() || !job.may_issue(now) {
                break;
            }
            if next == Ok(None) {
                // Asked again now that the I/O it waited for is back.
                let (Some(n), Some(b)) = (next_op(job, now), spare.take()) else {
                    break;
                };
                let plan = job.plan(&n);
                let _ = ask_tx.send((b, n, plan));
            }
        }
        // The helper ends when asked nothing more; an I/O it made and no one issued is
        // dropped with it.
        drop(ask_tx);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use crate::gen::tests::workload;
    use crate::run::{self, RunOptions};
    use crate::spec::{BsShare, RwMode};
    use crate::target::{OpenOptions, Target, TargetSpec};
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn large_writes_made_ahead_on_a_helper_land_whole_and_in_order() {
        // 1 MiB sequential writes at one I/O in flight: each made by the helper thread
        // while the one before it is written.
        let d = tempfile::tempdir().unwrap();
        let opts = OpenOptions {
            write: true,
            create_size: 24 << 20,
            ..OpenOptions::default()
        };
        let path = d.path().join("ahead.test");
        let mut t = Target::open(TargetSpec::Path(Some(path.clone())), &opts).unwrap();
        let mut w = workload(RwMode::Write, 1);
        w.bs = vec![BsShare {
            bytes: 1 << 20,
            percent: 100,
        }];
        w.offset_bytes = 0;
        w.size_bytes = 16 << 20;
        w.runtime_ns = None;
        w.io_size_bytes = Some(16 << 20);
        assert!(w.max_bs() >= super::AHEAD_MIN_BYTES);
        let stop = AtomicBool::new(false);
        let r = run::run(
            &w,
            &mut t,
            &RunOptions {
                stop: &stop,
                progress: None,
            },
        )
        .unwrap();
        let m = &r.measured;
        assert_eq!(m.status, crate::result::RunStatus::Complete, "{m:?}");
        assert_eq!(m.totals.write.ops, 16);
        let data = &m.totals.data;
        assert_eq!(data.bytes_prepared, 16 << 20);
        // (How long the target waited for content is the scheduler's to say on a loaded
        // machine — it can exceed the helper's own time making it — so only its range is
        // checked here.)
        assert!((0.0..=1.0).contains(&data.held_fraction), "{data:?}");
        t.close(true).unwrap();
        // Every sector is stamped with its own offset: each write's content is its own
        // and went where it belongs.
        let f = std::fs::File::open(&path).unwrap();
        let mut buf = vec![0u8; 16 << 20];
        f.read_exact_at(&mut buf, 0).unwrap();
        for (i, sector) in buf.chunks(512).enumerate() {
            assert_eq!(crate::data::stamped_offset(sector), i as u64 * 512);
        }
    }
}
