//! drivelab-suites: the review methodologies behind `drivelab run`.
//!
//! A suite ([`suite::Suite`]) turns its knobs into a plan of engine steps resolved
//! against a target ([`plan`]); the shared runner ([`runner::execute`]) carries the plan
//! out, saving each step into a result bundle ([`bundle`]) the moment it finishes, and
//! asks the suite for its analysis (built on `drivelab-analysis`) at the end. A bundle
//! that was interrupted or killed is continued from its next unfinished step.
//!
//! Layers: a bundle records its suite as a [`kind::SuiteKind`] and knows no suite; the
//! suites write bundles; [`saved`] maps a saved kind back to its suite (rebuilt from the
//! knobs) and to its analysis's type, above both.
//!
//! Suites: [`quick`] (CrystalDiskMark presets), [`peak`] (QD sweep with the 95 % knee),
//! [`consistency`] (hour of 4K random writes after preconditioning), [`seqfill`]
//! (sequential fill, cache and drops), [`iometer`] (IOMeter profiles and access specs),
//! [`mixed`] (read-share sweep), [`replay`] (a block I/O trace replayed and scored). Every file is written whole or not at all ([`atomic`]).

pub mod atomic;
pub mod bundle;
pub mod consistency;
pub mod fio;
pub mod hash;
pub mod iometer;
pub mod kind;
pub mod mixed;
pub mod peak;
pub mod plan;
pub mod powerloss;
pub mod quick;
pub mod records;
pub mod replay;
pub mod runner;
pub mod saved;
pub mod seqfill;
pub mod suite;

pub use bundle::{Bundle, BundleStatus, Metric, RunDoc, StepRecord, StepStatus, Summary};
pub use kind::{SuiteKind, SUITES};
pub use runner::{execute, Observer, Outcome, Runner};
pub use saved::from_saved;
pub use suite::{AfterInterrupt, Knobs, Report, Suite};
