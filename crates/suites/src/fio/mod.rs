//! fio as another way in and out of drivelab: a suite's steps as fio job files
//! ([`jobfile`]), fio's JSON / json+ results and per-second logs read back into
//! drivelab's step results ([`json`], [`bins`], [`logs`], [`per_io`], [`convert`]), a fio result
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
pub mod per_io;
pub mod process;
pub mod series;
pub mod sizes;
pub mod sweeps;

use crate::plan::PlannedStep;

/// The first comment of every job file drivelab writes (so that it may replace it).
pub const JOB_MARK: &str = "drivelab-fio-job";

/// Whether a file that starts with `head` is a job file drivelab wrote: its first
/// comment line is the mark, or the warning that it writes and then the mark.
pub fn is_own_job(head: &[u8]) -> bool {
    let mark = format!("; {JOB_MARK}: ");
    let warning = format!("; {WRITES_WARNING}");
    let after_warning = head.strip_prefix(warning.as_bytes()).and_then(|rest| {
        rest.iter()
            .position(|&b| b == b'\n')
            .map(|i| &rest[i + 1..])
    });
    head.starts_with(mark.as_bytes())
        || after_warning.is_some_and(|r| r.starts_with(mark.as_bytes()))
}

/// The first line of a job file that writes (the header's comment form).
const WRITES_WARNING: &str = "WARNING: this job WRITES to ";

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
                    "{WRITES_WARNING}{filename}: whatever it holds is lost"
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
