//! A target held for the length of a command: opened under the safety rules, filled
//! before reads when it is a fresh test file, and cleaned up whatever happens (a test
//! file this run created is removed unless `--keep`, also on errors and Ctrl-C).

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use drivelab_engine::result::RunStatus;
use drivelab_engine::run::{self, RunOptions};
use drivelab_engine::spec::{IoEngine, Workload};
use drivelab_engine::target::{OpenOptions, Target, TargetKind, TargetSpec};

use crate::fail::{Fail, INTERRUPTED};

/// Block size of the sequential fill of a new test file.
pub const FILL_BS: u32 = 1 << 20;
const FILL_QD: u32 = 8;

pub struct Session {
    target: Option<Target>,
    keep: bool,
    pub stop: Arc<AtomicBool>,
}

impl Session {
    pub fn open(spec: TargetSpec, opts: &OpenOptions, keep: bool) -> Result<Session, Fail> {
        let stop = crate::signals::stop_flag();
        let target = Target::open(spec, opts).map_err(|e| Fail::usage(e.0))?;
        Ok(Session {
            target: Some(target),
            keep,
            stop,
        })
    }

    pub fn target(&self) -> &Target {
        self.target.as_ref().expect("open session")
    }

    pub fn target_mut(&mut self) -> &mut Target {
        self.target.as_mut().expect("open session")
    }

    /// Bad input found after opening: clean up, exit 2.
    pub fn usage(&mut self, msg: impl Into<String>) -> Fail {
        self.cleanup();
        Fail::usage(msg)
    }

    /// A failure after opening: clean up, exit 1.
    pub fn failed(&mut self, msg: impl Into<String>) -> Fail {
        self.cleanup();
        Fail::failed(msg)
    }

    fn cleanup(&mut self) {
        if let Some(t) = self.target.take() {
            let _ = t.close(self.keep);
        }
    }

    /// Write a test file's whole content once before reads, with the run's data pattern,
    /// so reads never hit holes (a sparse file reads from nowhere, far too fast).
    pub fn ensure_filled(&mut self, w: &Workload, quiet: bool) -> Result<(), Fail> {
        let t = self.target();
        if t.info.kind != TargetKind::File || w.ioengine == IoEngine::Null || t.is_filled() {
            return Ok(());
        }
        if !t.info.created_by_drivelab {
            return Ok(());
        }
        let mut fw = w.clone();
        fw.offset_bytes = 0;
        fw.size_bytes = t.info.capacity_bytes / FILL_BS as u64 * FILL_BS as u64;
        if fw.size_bytes == 0 {
            fw.size_bytes = t.info.capacity_bytes;
        }
        fw.ioengine = IoEngine::IoUring;
        fw.direct = true;
        let bs = if fw.size_bytes % FILL_BS as u64 == 0 {
            FILL_BS
        } else {
            4096
        };
        let fw = run::fill_workload(&fw, bs, FILL_QD);
        if !quiet && std::io::stderr().is_terminal() {
            eprintln!(
                "drivelab: writing {} once so that reads hit data…",
                t.info.path
            );
        }
        let stop = self.stop.clone();
        let res = run::run(
            &fw,
            self.target_mut(),
            &RunOptions {
                stop: &stop,
                progress: None,
            },
        )
        .map_err(|e| self.failed(format!("filling the test file failed: {e}")))?;
        match res.status {
            RunStatus::Complete => {
                self.target().mark_filled();
                Ok(())
            }
            RunStatus::Interrupted => {
                self.cleanup();
                Err(Fail {
                    code: INTERRUPTED,
                    message: "interrupted while filling the test file; it was removed".into(),
                })
            }
            RunStatus::Failed => Err(self.failed(format!(
                "filling the test file failed: {}",
                res.failure.unwrap_or_default()
            ))),
        }
    }

    /// Close the target (removing a test file created by this run unless kept).
    pub fn close(mut self) -> Result<(), Fail> {
        if let Some(t) = self.target.take() {
            t.close(self.keep)
                .map_err(|e| Fail::failed(format!("cannot remove the test file: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.cleanup();
    }
}
