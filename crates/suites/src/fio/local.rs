//! `drivelab run SUITE --engine fio`: every step carried out by a local fio process
//! running the step's generated job file, its json+ result and per-second logs read back
//! into the step's record. fio's files stay in the bundle (`fio/NN-step/`) so every
//! number can be traced to fio's own output.

use std::path::{Path, PathBuf};

use drivelab_engine::result::{HostInfo, RunResult, RunStatus, Tool};
use drivelab_engine::target::Target;

use super::convert::{self, Context, JobLogs};
use super::jobfile::{self, JobOptions, Logs};
use super::logs::Files;
use super::{json, process};
use crate::plan::{Action, PlannedStep};
use crate::runner::{Runner, StepEngine};

/// Steps through fio; its files under `dir`.
pub struct FioEngine {
    pub dir: PathBuf,
    pub program: String,
    pub version: String,
}

impl FioEngine {
    /// The engine writing under `bundle_dir/fio`; checks that fio runs.
    pub fn new(bundle_dir: &Path) -> Result<FioEngine, String> {
        let program = process::program();
        let version = process::version(&program)?;
        Ok(FioEngine {
            dir: bundle_dir.join("fio"),
            program,
            version,
        })
    }
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl StepEngine for FioEngine {
    fn run_step(
        &self,
        step: &PlannedStep,
        target: &mut Target,
        opts: &Runner<'_>,
        _dir: Option<&std::path::Path>,
    ) -> Result<RunResult, String> {
        if let Action::Replay(_) = step.action {
            return Err(
                "--engine fio cannot replay a trace: replay runs on drivelab's own engine".into(),
            );
        }
        if let Action::Precondition {
            also_discard: Some((off, len)),
        } = step.action
        {
            target
                .discard(off, len)
                .map_err(|e| format!("discarding {len} bytes at {off} failed: {e}"))?;
        }
        let name = jobfile::file_name(0, step);
        let dir = self
            .dir
            .join(name.trim_start_matches("01-").trim_end_matches(".fio"));
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs)
            .map_err(|e| format!("cannot make {}: {e}", logs.display()))?;
        let prefix = logs.join("s").display().to_string();
        let text = jobfile::render(
            step,
            &JobOptions {
                filename: &target.info.path,
                logs: Some(Logs {
                    prefix: prefix.clone(),
                    hist: true,
                }),
                header: vec![format!("{}: run by drivelab --engine fio", super::JOB_MARK)],
            },
        )?;
        crate::atomic::write_file(&dir.join("job.fio"), text.as_bytes())
            .map_err(|e| format!("cannot write the job file: {e}"))?;
        if let Some(o) = opts.observer {
            o.message(&format!("running '{}' through {}", step.name, self.version));
        }
        let started = epoch_ms();
        let args: Vec<String> = ["--output-format=json+", "--output=out.json", "job.fio"]
            .map(String::from)
            .to_vec();
        let child = process::spawn(&self.program, &args, &dir)?;
        let ended = process::wait(child, opts.stop, process::deadline(step))?;
        let measured = read_back(&dir, &prefix, step, started, &self.version, &ended)?;
        Ok(RunResult {
            schema_version: drivelab_engine::result::SCHEMA_VERSION,
            tool: Tool::current(),
            config: step.workload.clone(),
            host: HostInfo::current(),
            target: target.info.clone(),
            measured,
        })
    }
}

/// fio's result of one step, checked by drivelab: a job present, no error, every log.
fn read_back(
    dir: &Path,
    prefix: &str,
    step: &PlannedStep,
    started_ms: u64,
    version: &str,
    ended: &process::Ended,
) -> Result<drivelab_engine::result::Measured, String> {
    let why = |what: String| {
        let tail: Vec<&str> = ended.stderr.lines().rev().take(3).collect();
        format!(
            "{what} (fio: {}; stderr: {})",
            ended.how(),
            tail.join(" | ")
        )
    };
    let text = std::fs::read_to_string(dir.join("out.json"))
        .map_err(|e| why(format!("fio wrote no result: {e}")))?;
    let parsed = json::parse(&text).map_err(|e| why(format!("fio's result: {e}")))?;
    let job = parsed
        .output
        .all_jobs()
        .next()
        .ok_or_else(|| why("fio's result holds no job".into()))?
        .clone();
    let files = Files::expected(prefix, step.workload.numjobs, "");
    let missing = files.missing();
    let logs = if missing.is_empty() {
        Some(JobLogs::read(&files, None)?)
    } else {
        None
    };
    let mut m = convert::measured(
        &job,
        &Context {
            workload: &step.workload,
            logs: logs.as_ref(),
            est_start_ms: Some(super::convert::start_estimate(
                &parsed.output,
                &job,
                started_ms,
            )),
            fio_version: version,
            own_logs: true,
            hist_interval_ms: Some(super::jobfile::log_msec(&step.workload)),
        },
    )?;
    if ended.overran {
        m.status = RunStatus::Failed;
        m.failure = Some(why(
            "fio did not end within twice the step's time and two minutes; stopped".into(),
        ));
    } else if ended.stopped && m.status != RunStatus::Failed {
        // Stopped by the user: not a failure (a resume runs the step again), whatever
        // of its logs fio had written by then.
        m.status = RunStatus::Interrupted;
    } else if !missing.is_empty() && m.status == RunStatus::Complete {
        m.status = RunStatus::Failed;
        m.failure = Some(why(format!(
            "fio left out its per-second logs ({} missing, e.g. {})",
            missing.len(),
            missing[0].display()
        )));
    }
    Ok(m)
}
