//! fio as another way in and out of drivelab: a suite's steps as fio job files
//! ([`jobfile`]), fio's JSON / json+ results and per-second logs read back into
//! drivelab's step results ([`json`], [`bins`], [`logs`], [`convert`]), a fio result
//! imported as a bundle ([`import`]), a suite run locally through fio ([`local`]) and on
//! many hosts at once through `fio --client` ([`client`]).
//!
//! What fio's client/server mode really returns, and its traps, are in
//! `docs/fio.md`; drivelab never trusts fio's exit status or its "All clients" entry,
//! and checks every host's results itself.

pub mod bins;
pub mod client;
pub mod convert;
pub mod fleet;
pub mod import;
pub mod jobfile;
pub mod json;
pub mod local;
pub mod logs;
pub mod process;
pub mod series;
pub mod sweeps;

use crate::plan::PlannedStep;

/// The first comment of every job file drivelab writes (so that it may replace it).
pub const JOB_MARK: &str = "drivelab-fio-job";

/// A suite's plan as fio job files: `(file name, contents)` per step, in plan order.
/// `filename` should be absolute (a relative one depends on where fio is started); a
/// job that writes opens with a warning comment.
pub fn emit(
    suite: &str,
    plan: &[PlannedStep],
    filename: &str,
) -> Result<Vec<(String, String)>, String> {
    let total = plan.len();
    plan.iter()
        .enumerate()
        .map(|(i, step)| {
            let name = jobfile::file_name(i, step);
            let json = name.trim_end_matches(".fio").to_string() + ".json";
            let mut header = Vec::new();
            if step.workload.writes() {
                header.push(format!(
                    "WARNING: this job WRITES to {filename}: whatever it holds is lost"
                ));
            }
            header.extend([
                format!(
                    "{JOB_MARK}: drivelab {} suite '{suite}', step {} of {total}",
                    env!("CARGO_PKG_VERSION"),
                    i + 1
                ),
                format!("run: fio --output-format=json+ --output={json} {name}"),
                format!("then: drivelab import fio {json}"),
            ]);
            let text = jobfile::render(
                step,
                &jobfile::JobOptions {
                    filename,
                    logs: None,
                    header,
                },
            )?;
            Ok((name, text))
        })
        .collect()
}
