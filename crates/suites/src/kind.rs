//! Which suite made a bundle ([`SuiteKind`]): the one list of suites that the bundle
//! records and every place that treats suites differently matches on. Below the bundle
//! and the suites, so both can name a kind without naming each other.

use serde::{Deserialize, Serialize};

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

    /// Knobs drivelab chooses afresh for every run (not a setting of the test): left out
    /// of the config hash and of "settings differ", so two runs with the same settings
    /// compare. Powerloss picks its seed per run (it tells its blocks from another run's).
    pub const fn per_run_knobs(self) -> &'static [&'static str] {
        match self {
            SuiteKind::Powerloss => &["seed"],
            SuiteKind::Quick
            | SuiteKind::Peak
            | SuiteKind::Consistency
            | SuiteKind::Seqfill
            | SuiteKind::Iometer
            | SuiteKind::Mixed
            | SuiteKind::Replay
            | SuiteKind::Fio => &[],
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
}
