//! What every suite provides: its knobs, its plan against a target, its early-stop rule
//! and its analysis of the finished steps.

use serde::{Deserialize, Serialize};

use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::target::TargetInfo;

use crate::bundle::{StepRecord, Summary};
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

/// Which suite made a bundle: the `suite` of `run.json` (its lower-case name), and the
/// one list every place that treats suites differently matches on, exhaustively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuiteKind {
    Quick,
    Peak,
    Consistency,
    Seqfill,
    Iometer,
    Mixed,
    Replay,
    /// fio results imported by `drivelab import fio` (not a suite `drivelab run` runs).
    Fio,
    /// The flush-honesty (power-cut) test: a write phase and a check, no engine steps.
    Powerloss,
}

impl SuiteKind {
    /// Every kind, in `drivelab run`'s order, imports last.
    pub const ALL: [SuiteKind; 9] = [
        SuiteKind::Quick,
        SuiteKind::Peak,
        SuiteKind::Consistency,
        SuiteKind::Seqfill,
        SuiteKind::Iometer,
        SuiteKind::Mixed,
        SuiteKind::Replay,
        SuiteKind::Fio,
        SuiteKind::Powerloss,
    ];

    /// The name in `run.json` and after `drivelab run`.
    pub const fn name(self) -> &'static str {
        match self {
            SuiteKind::Quick => "quick",
            SuiteKind::Peak => "peak",
            SuiteKind::Consistency => "consistency",
            SuiteKind::Seqfill => "seqfill",
            SuiteKind::Iometer => "iometer",
            SuiteKind::Mixed => "mixed",
            SuiteKind::Replay => "replay",
            SuiteKind::Fio => "fio",
            SuiteKind::Powerloss => "powerloss",
        }
    }

    /// Whether `drivelab run` runs it (an import is not run).
    pub const fn runnable(self) -> bool {
        !matches!(self, SuiteKind::Fio)
    }
}

impl std::fmt::Display for SuiteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SuiteKind {
    type Err = String;
    fn from_str(s: &str) -> Result<SuiteKind, String> {
        SuiteKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown suite '{s}': expected one of {}",
                    SuiteKind::ALL.map(SuiteKind::name).join(", ")
                )
            })
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
    /// read-only and a file drivelab did not create needs no `--overwrite`).
    fn only_reads_existing(&self) -> bool {
        false
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

/// The suites of engine steps `drivelab run` accepts, in its order (`powerloss`, run
/// too, is a write phase and a check of its own).
pub const SUITES: [SuiteKind; 7] = [
    SuiteKind::Quick,
    SuiteKind::Peak,
    SuiteKind::Consistency,
    SuiteKind::Seqfill,
    SuiteKind::Iometer,
    SuiteKind::Mixed,
    SuiteKind::Replay,
];

/// Rebuild a suite from a bundle's kind and knobs (for `--resume`, and to analyse an
/// unfinished bundle again); an import is no suite to rebuild.
pub fn from_saved(kind: SuiteKind, knobs: &serde_json::Value) -> Result<Box<dyn Suite>, String> {
    fn de<T: serde::de::DeserializeOwned>(k: &serde_json::Value) -> Result<T, String> {
        serde_json::from_value(k.clone()).map_err(|e| format!("the bundle's knobs: {e}"))
    }
    Ok(match kind {
        SuiteKind::Quick => Box::new(de::<crate::quick::Quick>(knobs)?),
        SuiteKind::Peak => Box::new(de::<crate::peak::Peak>(knobs)?),
        SuiteKind::Consistency => Box::new(de::<crate::consistency::Consistency>(knobs)?),
        SuiteKind::Seqfill => Box::new(de::<crate::seqfill::SeqFill>(knobs)?),
        SuiteKind::Iometer => Box::new(de::<crate::iometer::IoMeter>(knobs)?),
        SuiteKind::Mixed => Box::new(de::<crate::mixed::Mixed>(knobs)?),
        SuiteKind::Replay => Box::new(de::<crate::replay::Replay>(knobs)?),
        SuiteKind::Fio => {
            return Err("an imported fio result is not a suite that can be run again".into())
        }
        SuiteKind::Powerloss => {
            return Err("a powerloss run is not resumed or analysed again: check it with drivelab run powerloss --check JOURNAL TARGET".into())
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_kinds_are_their_lower_case_names_both_ways() {
        for k in SuiteKind::ALL {
            assert_eq!(k.name().parse::<SuiteKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
            assert_eq!(k.to_string(), k.name());
        }
        let e = "Quick".parse::<SuiteKind>().unwrap_err();
        assert!(e.contains("expected one of quick, peak"), "{e}");
        assert!(SUITES.iter().all(|k| k.runnable()));
        assert!(!SuiteKind::Fio.runnable());
    }

    #[test]
    fn every_runnable_suite_is_rebuilt_from_its_own_knobs_and_names_its_kind() {
        for k in SUITES {
            let knobs = match k {
                SuiteKind::Replay => continue,
                _ => default_knobs(k),
            };
            let s = from_saved(k, &knobs).unwrap();
            assert_eq!(s.kind(), k);
            assert_eq!(s.name(), k.name());
        }
        assert!(from_saved(SuiteKind::Fio, &serde_json::json!({})).is_err());
        assert!(from_saved(SuiteKind::Powerloss, &serde_json::json!({})).is_err());
    }

    fn default_knobs(k: SuiteKind) -> serde_json::Value {
        match k {
            SuiteKind::Quick => crate::quick::Quick::new(true).knobs(),
            SuiteKind::Peak => crate::peak::Peak::new(true).knobs(),
            SuiteKind::Consistency => crate::consistency::Consistency::new(true).knobs(),
            SuiteKind::Seqfill => crate::seqfill::SeqFill::new(true).knobs(),
            SuiteKind::Iometer => crate::iometer::IoMeter::new(true).knobs(),
            SuiteKind::Mixed => crate::mixed::Mixed::new(true).knobs(),
            SuiteKind::Replay | SuiteKind::Fio | SuiteKind::Powerloss => serde_json::Value::Null,
        }
    }
}
