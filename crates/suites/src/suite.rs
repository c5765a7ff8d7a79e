//! What every suite provides: its knobs, its plan against a target, its early-stop rule
//! and its analysis of the finished steps.

use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::target::TargetInfo;

use crate::bundle::{StepRecord, Summary};
pub use crate::kind::{SuiteKind, SUITES};
use crate::plan::PlannedStep;

/// A suite's analysis of its steps: the summary saved in the bundle and the table printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub summary: Summary,
    pub table: String,
}

/// A suite's knobs as recorded in the bundle (and read back by `--resume`): every
/// suite's knob struct is serializable, so this comes with it.
pub trait Knobs {
    fn knobs(&self) -> serde_json::Value;
}

impl<T: serde::Serialize> Knobs for T {
    fn knobs(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// One review methodology.
pub trait Suite: Knobs {
    /// Which suite this is.
    fn kind(&self) -> SuiteKind;
    /// The suite's name as typed after `drivelab run`.
    fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// Size of the default test file this suite wants (for file targets it creates).
    fn test_file_bytes(&self) -> Option<u64> {
        None
    }
    /// Whether the suite writes to a block device (so that it needs `--destructive`);
    /// true unless a suite knows it only reads there.
    fn writes_to_device(&self) -> bool {
        true
    }
    /// Whether the suite only reads a target file that already exists (so it is opened
    /// read-only and a file drivelab did not create needs no `--overwrite`): whenever
    /// every step only reads, as [`Suite::writes_to_device`] says of a device (a file
    /// drivelab did not create is never filled first).
    fn only_reads_existing(&self) -> bool {
        !self.writes_to_device()
    }
    /// Every step, resolved against the target.
    fn plan(&self, target: &TargetInfo) -> Result<Vec<PlannedStep>, String>;
    /// Whether the next planned step should be skipped given the records of the steps
    /// before it (in plan order); returns the reason.
    fn skip(&self, _step: &PlannedStep, _done: &[StepRecord]) -> Option<String> {
        None
    }
    /// A planned step whose workload the steps before it choose (the peak suite's
    /// re-measurement of a point within noise of its knee threshold): the step to run
    /// in its place, keeping its id, kind and length; None to run it as planned. Asked
    /// after `skip`, with the records of the steps before it (in plan order), and asked
    /// again on `--resume` with the same records (so a resumed bundle checks and replays
    /// what was run, not the placeholder).
    fn adapt(&self, _step: &PlannedStep, _done: &[StepRecord]) -> Option<PlannedStep> {
        None
    }
    /// Whether `adapt` chooses this planned step from the results before it (a
    /// placeholder): a fleet, whose hosts each take every step together, skips it.
    fn chosen_at_run_time(&self, _step: &PlannedStep) -> bool {
        false
    }
    /// What `--resume` does with this step when a run of it was interrupted on a drive
    /// that kept what the interrupted part wrote (a device, or a test file drivelab did
    /// not make anew; a simulated drive keeps nothing between processes).
    fn after_interrupt(&self, _step: &PlannedStep) -> AfterInterrupt {
        AfterInterrupt::Again
    }
    /// Analyse the finished steps.
    fn report(&self, steps: &[StepRecord]) -> Report;
}

/// See [`Suite::after_interrupt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterInterrupt {
    /// Measure the step again as planned.
    Again,
    /// Run the plan's preparation before the step again first (from its last
    /// discard-and-fill on): the step measures the state that preparation leaves (a
    /// continuous random-write test of a preconditioned drive), which the interrupted
    /// part's writes changed.
    Reprecondition,
    /// Refuse to resume, for this reason (one line, naming `--resume`).
    Refuse(String),
}

/// The test-file size implied by a span knob: its bytes, or None for a share of the target.
pub fn span_file_bytes(size: SizeOrPercent) -> Option<u64> {
    match size {
        SizeOrPercent::Bytes(b) => Some(b),
        SizeOrPercent::Percent(_) => None,
    }
}

/// Seconds as nanoseconds.
pub const fn secs(s: u64) -> u64 {
    s * 1_000_000_000
}

/// Milliseconds as nanoseconds.
pub const fn millis(ms: u64) -> u64 {
    ms * 1_000_000
}
