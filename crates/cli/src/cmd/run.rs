//! `drivelab run SUITE [TARGET]` and `drivelab run --resume BUNDLE`: a review methodology
//! into a result bundle, with its summary table on stdout.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use drivelab_engine::result::Progress;
use drivelab_engine::target::{self, OpenOptions, TargetKind, TargetSpec};
use drivelab_suites::bundle::{default_dir, Bundle, BundleStatus};
use drivelab_suites::plan::PlannedStep;
use drivelab_suites::runner::{check_resume, execute_with, new_doc};
use drivelab_suites::{from_saved, Observer, Outcome, Runner, StepRecord, Suite};

use crate::cmd::push::Upload;
use crate::fail::{Fail, FAILED, INTERRUPTED};
use crate::out_path::RESULTS_DIR;
use crate::output::progress::{Bound, Meter, ProgressMode, Style, SuiteClock};
use crate::run_args::{RunArgs, SuiteCmd};
use crate::session::Session;

/// Step and engine progress on stderr (see `--progress`), with the suite's ETA.
struct View<'a> {
    meter: Meter,
    clock: SuiteClock,
    plan: &'a [PlannedStep],
    /// The running step (index, bound, whether a fill before it runs).
    step: Mutex<(usize, Bound, bool)>,
}

impl View<'_> {
    fn step(&self) -> std::sync::MutexGuard<'_, (usize, Bound, bool)> {
        self.step.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Observer for View<'_> {
    fn step_started(&self, index: usize, total: usize, name: &str) {
        let bound = self
            .plan
            .get(index)
            .map_or(Bound::Unknown, |s| Bound::of(&s.workload));
        *self.step() = (index, bound, false);
        let prefix = format!("[{}/{}] {name} ", index + 1, total);
        self.meter.start(&prefix, bound);
        if self.meter.style() == Style::Redraw {
            eprint!("\r\x1b[2K{prefix}");
        }
    }
    fn progress(&self, p: &Progress<'_>) {
        let (index, bound, before) = *self.step();
        self.clock.learn(bound, p);
        self.meter.show(p, &self.clock.eta(index, before, bound, p));
    }
    fn step_finished(&self, rec: &StepRecord) {
        self.meter.clear();
        // In a log (one line per interval) a step shorter than an interval left no line:
        // each step ends with one, with what it measured.
        if self.meter.style() == Style::Lines {
            let what = match &rec.run {
                Some(r) => {
                    use drivelab_engine::result::RunStatus;
                    let a = &r.totals.all;
                    let status = match r.status {
                        RunStatus::Complete => "complete",
                        RunStatus::Interrupted => "interrupted",
                        RunStatus::Failed => "failed",
                    };
                    format!(
                        "{status}: {:.0} IOPS, {:.1} MB/s ({:.1} MiB/s)",
                        a.ops_per_s, a.mbps, a.mibps
                    )
                }
                None => "skipped".into(),
            };
            self.meter.say(&format!(
                "[{}/{}] {} done: {what}",
                rec.index + 1,
                self.plan.len(),
                rec.name
            ));
        }
    }
    fn message(&self, text: &str) {
        self.meter.say(&format!("drivelab: {text}"));
        // (A replayed step runs with no step_started: its bound is not known.)
        self.step().1 = Bound::Unknown;
        self.meter.start("", Bound::Unknown);
    }
    fn filling(&self, bytes: u64) {
        let mut s = self.step();
        (s.1, s.2) = (Bound::WriteBytes(bytes), true);
        drop(s);
        self.meter.start("fill ", Bound::WriteBytes(bytes));
    }
}

fn open_options(
    suite: &dyn Suite,
    spec: &TargetSpec,
    overwrite: bool,
    destructive: Option<PathBuf>,
) -> OpenOptions {
    // A suite that only reads a block device (a read-only peak sweep) needs no
    // --destructive and may run on a mounted one; one that only reads an existing file
    // (a replay of reads) opens it read-only; other files and simulated drives are
    // opened for writing (a test file may need filling).
    use std::os::unix::fs::FileTypeExt;
    let meta = match spec {
        TargetSpec::Path(Some(p)) => std::fs::metadata(p).ok(),
        _ => None,
    };
    let device = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    let existing_file = meta.as_ref().is_some_and(|m| m.is_file());
    OpenOptions {
        write: if device {
            suite.writes_to_device()
        } else {
            !(existing_file && suite.only_reads_existing())
        },
        direct: true,
        overwrite,
        destructive,
        create_size: suite.test_file_bytes().unwrap_or(target::TEST_FILE_SIZE),
    }
}

pub fn run(a: RunArgs) -> Result<i32, Fail> {
    // Where a finished run is recorded: None = not at all, Some(None) = the default.
    let db = (!a.no_db).then(|| a.db.clone());
    if let Some(d) = &db {
        // A --db that cannot be a database is bad input, found before the suite runs.
        crate::record::check_location(d.as_deref())?;
    }
    // Where and as whom to upload, checked before the suite runs too.
    let upload = a
        .upload
        .as_deref()
        .map(|u| Upload::new("--upload", u, None))
        .transpose()?;
    let upload = upload.as_ref();
    match (&a.suite, &a.resume) {
        // A write phase and a check of its own, not engine steps: not recorded in the
        // database or uploaded (yet).
        (Some(SuiteCmd::Powerloss(_)), None) if a.db.is_some() || upload.is_some() => {
            Err(Fail::usage(crate::cmd::powerloss::NOT_RECORDED))
        }
        (Some(SuiteCmd::Powerloss(p)), None) => crate::cmd::powerloss::run(p),
        (Some(cmd), None) => start(cmd, &db, a.progress, upload),
        (None, Some(dir)) => resume(dir, &a, &db, upload),
        (Some(_), Some(_)) => Err(Fail::usage(
            "--resume: give the bundle alone, without a suite (the bundle knows its suite and settings)",
        )),
        _ => Err(Fail::usage(
            "run: name a suite (quick, peak, consistency, seqfill, iometer, mixed, replay, powerloss) or give --resume BUNDLE",
        )),
    }
}

/// The most steps a suite's plan may have: every bound knob together stays far below
/// it, and a plan beyond it is a mistake, not a test.
const MAX_PLAN_STEPS: usize = 20_000;

/// Where a finished run is recorded (see `run`).
type DbChoice = Option<Option<String>>;

fn start(
    cmd: &SuiteCmd,
    db: &DbChoice,
    progress: ProgressMode,
    upload: Option<&Upload>,
) -> Result<i32, Fail> {
    crate::cmd::fio::not_replay(cmd)?;
    crate::cmd::fio::no_verify(cmd)?;
    crate::cmd::fio::job_strings(cmd)?;
    crate::cmd::fio::no_sensors(cmd)?;
    let suite = cmd.build().map_err(Fail::usage)?;
    let common = cmd.common();
    let t = &common.target;
    if let Some(dir) = &common.fio.emit_fio {
        return crate::cmd::fio::emit(suite.as_ref(), t, dir);
    }
    if let Some(hosts) = crate::cmd::fio::hosts(&common.fio)? {
        if upload.is_some() {
            return Err(Fail::usage(
                "--upload: not with --hosts; upload the fleet's bundle with drivelab db push URL BUNDLE",
            ));
        }
        return crate::cmd::fio::fleet(suite.as_ref(), common, hosts, db.as_ref(), progress);
    }
    // Found out before a test file is made for the run.
    if let Some(out) = &common.out {
        drivelab_suites::bundle::check_new_dir(out).map_err(Fail::usage)?;
    }
    let arg = crate::target_arg::recorded(t.target.as_deref())?;
    not_an_input(cmd, &arg)?;
    Session::check_sensor_target(Some(&arg), t)?;
    let spec = crate::target_arg::parse(Some(&arg))?;
    crate::target_arg::refuse_engine_on_null(&spec, cmd.backend_engine())?;
    let open = open_options(suite.as_ref(), &spec, t.overwrite, t.destructive.clone());
    let mut session = Session::open(spec, &open, t.keep).map_err(|f| read_only_hint(cmd, t, f))?;
    session.choose_sensors(t)?;
    let plan = suite
        .plan(&session.target().info)
        .map_err(|e| session.usage(format!("{}: {e}", suite.name())))?;
    if plan.len() > MAX_PLAN_STEPS {
        return Err(session.usage(format!(
            "{}: the settings make a plan of {} steps, more than the {MAX_PLAN_STEPS} a suite takes; lower the counts (--runs, --qds, --specs …)",
            suite.name(),
            plan.len()
        )));
    }
    let dir = common
        .out
        .clone()
        .unwrap_or_else(|| default_dir(Path::new(RESULTS_DIR), suite.name()));
    let mut doc = new_doc(suite.as_ref(), &plan, session.target(), Some(arg));
    let fio = crate::cmd::fio::engine_check(&common.fio, session.target(), &mut doc)
        .map_err(|e| session.usage(e.message))?;
    drivelab_suites::bundle::check_new_dir(&dir).map_err(|e| session.usage(e))?;
    // Past the checks, a bundle that cannot be written (a full disk) is a failure.
    let mut bundle = Bundle::create(&dir, doc).map_err(|e| session.failed(e))?;
    let _lock = Bundle::lock(&dir).map_err(|e| session.usage(e))?;
    finish(
        suite.as_ref(),
        &plan,
        session,
        &mut bundle,
        (db, upload),
        progress,
        fio,
    )
}

/// Refuse a target that is the suite's own input (a trace replayed onto itself), before
/// anything is opened or written.
fn not_an_input(cmd: &SuiteCmd, target: &str) -> Result<(), Fail> {
    match cmd {
        SuiteCmd::Replay(r) => not_the_trace(target, &r.trace),
        _ => Ok(()),
    }
}

/// Refuse a replay's target that is its trace.
fn not_the_trace(target: &str, trace: &Path) -> Result<(), Fail> {
    let what = "the trace being replayed";
    crate::out_path::target_not_input(Path::new(target), trace, "TRACE", what)
}

/// A peak sweep refused on a block device for want of --destructive: it can measure
/// without writing (the read workloads alone), which the refusal says too.
fn read_only_hint(cmd: &SuiteCmd, t: &crate::target_arg::TargetArgs, f: Fail) -> Fail {
    let device = t
        .target
        .as_deref()
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if f.code == crate::fail::USAGE
        && device
        && t.destructive.is_none()
        && matches!(cmd, SuiteCmd::Peak(_))
    {
        return Fail::usage(format!(
            "{}; or sweep without writing: --workloads 4k-randread,128k-read",
            f.message
        ));
    }
    f
}

fn resume(dir: &Path, a: &RunArgs, db: &DbChoice, upload: Option<&Upload>) -> Result<i32, Fail> {
    let first = Bundle::open(dir).map_err(Fail::usage)?;
    if drivelab_suites::fio::fleet::is_fleet_bundle(&first.doc) {
        return Err(Fail::usage(format!(
            "--resume {}: a fleet run (--host, --hosts) cannot be resumed; run it again",
            dir.display()
        )));
    }
    drop(first);
    // Read again once this process holds it: another may have just finished with it.
    let _lock = Bundle::lock(dir).map_err(|e| Fail::usage(format!("--resume {e}")))?;
    let mut bundle = Bundle::open(dir).map_err(Fail::usage)?;
    let suite = from_saved(bundle.doc.suite, &bundle.doc.knobs)
        .map_err(|e| Fail::usage(format!("--resume {}: {e}", dir.display())))?;
    crate::cmd::fio::no_sensors_on_resume(&bundle.doc, a)?;
    if bundle.doc.status == BundleStatus::Complete {
        let report = drivelab_suites::runner::analyse(suite.as_ref(), &bundle.doc.steps);
        crate::output::stdout::say(&summary_text(&bundle, &report.table))?;
        eprintln!("drivelab: {} is already complete", dir.display());
        return Ok(0);
    }
    let arg = bundle.doc.target_arg.clone().ok_or_else(|| {
        Fail::usage(format!(
            "--resume {}: the bundle does not name its target",
            dir.display()
        ))
    })?;
    let targs = crate::target_arg::TargetArgs {
        target: None,
        keep: a.keep,
        overwrite: a.overwrite,
        destructive: a.destructive.clone(),
        sensors: a.sensors.clone().unwrap_or_else(|| "auto".into()),
        sensor_cmd: a.sensor_cmd.clone(),
        sensor_hwmon: a.sensor_hwmon.clone(),
    };
    if bundle.doc.target.kind != TargetKind::File {
        Session::check_sensor_target(Some(&arg), &targs)?;
    }
    if bundle.doc.suite == drivelab_suites::SuiteKind::Replay {
        let k = serde_json::from_value::<drivelab_suites::replay::Replay>(bundle.doc.knobs.clone());
        if let Ok(k) = k {
            not_the_trace(&arg, &k.trace)?;
        }
    }
    let spec = if bundle.doc.target.kind == TargetKind::File {
        TargetSpec::Path(Some(PathBuf::from(&arg)))
    } else {
        crate::target_arg::parse(Some(&arg))?
    };
    let open = open_options(suite.as_ref(), &spec, a.overwrite, a.destructive.clone());
    let mut session = Session::open(spec, &open, a.keep)?;
    session.choose_sensors(&targs)?;
    let plan = suite
        .plan(&session.target().info)
        .map_err(|e| session.usage(format!("{}: {e}", suite.name())))?;
    check_resume(&bundle.doc, suite.as_ref(), &plan, session.target())
        .map_err(|e| session.usage(e))?;
    // Only a resume that goes ahead takes the earlier run's test file over (and removes
    // it at the end): a refused one leaves it where it is.
    if bundle.doc.test_file_created {
        session.adopt_test_file();
    }
    let done = bundle.finished_steps();
    eprintln!(
        "drivelab: resuming {} at step {} of {}",
        dir.display(),
        done + 1,
        plan.len()
    );
    // A bundle whose steps fio ran goes on with fio.
    let fio = crate::cmd::fio::resume_engine(&bundle.doc).map_err(|e| session.usage(e.message))?;
    finish(
        suite.as_ref(),
        &plan,
        session,
        &mut bundle,
        (db, upload),
        a.progress,
        fio,
    )
}

fn finish(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    mut session: Session,
    bundle: &mut Bundle,
    (db, upload): (&DbChoice, Option<&Upload>),
    progress: ProgressMode,
    fio: Option<String>,
) -> Result<i32, Fail> {
    let engine: Box<dyn drivelab_suites::runner::StepEngine> = match fio {
        Some(version) => Box::new(drivelab_suites::fio::local::FioEngine {
            // Absolute: fio runs in the step's directory and writes its logs by path.
            dir: std::path::absolute(bundle.dir.join("fio")).unwrap_or(bundle.dir.join("fio")),
            program: drivelab_suites::fio::process::program(),
            version,
        }),
        None => Box::new(drivelab_suites::runner::Native),
    };
    let view = View {
        meter: Meter::new(progress.style(false)),
        clock: SuiteClock::new(plan),
        plan,
        step: Mutex::new((0, Bound::Unknown, false)),
    };
    let simulated = session.target().info.kind == TargetKind::Simulated;
    let done = bundle.finished_steps();
    view.meter
        .say(&view.clock.plan_line(suite.name(), simulated, done));
    let stop = session.stop.clone();
    let outcome = execute_with(
        suite,
        plan,
        session.target_mut(),
        bundle,
        &Runner {
            stop: &stop,
            observer: Some(&view),
        },
        engine.as_ref(),
    );
    view.meter.clear();
    let dir = bundle.dir.display().to_string();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // The bundle says so too (it would otherwise stay 'running').
            let _ = bundle.set_status(BundleStatus::Failed);
            return Err(session.failed(format!(
                "the suite failed: {e}; finished steps are saved in {dir}"
            )));
        }
    };
    let code = match outcome {
        Outcome::Complete(report) => {
            // summary.txt holds what the terminal shows: target, table and caveats.
            let text = summary_text(bundle, &report.table);
            if let Err(e) = bundle.write_table(&text) {
                eprintln!("drivelab: {e}");
            }
            // Recorded before anything is printed: a closed stdout must not cost the record.
            let recorded = db
                .as_ref()
                .map(|db| crate::record::record_bundle(&bundle.dir, db.as_deref()));
            crate::output::stdout::say(&text)?;
            crate::output::stdout::say_line(&format!("Result bundle: {dir}"))?;
            match recorded {
                Some(Ok(id)) => crate::output::stdout::say_line(&format!(
                    "Recorded in the results database as run {id}"
                ))?,
                // The run itself succeeded: a database that cannot be reached is reported,
                // not turned into a failure of the run.
                Some(Err(e)) => {
                    eprintln!(
                        "drivelab: the run was not recorded in the results database: {}",
                        e.message
                    )
                }
                None => {}
            }
            if let Some(u) = upload {
                upload_bundle(u, &bundle.dir);
            }
            0
        }
        Outcome::Interrupted => {
            eprintln!(
                "drivelab: interrupted; finished steps are saved in {dir}; continue with: {}",
                resume_command(bundle, suite, db, session.keeps())
            );
            INTERRUPTED
        }
        Outcome::Failed(e) => {
            eprintln!("drivelab: the suite failed: {e}; finished steps are saved in {dir}");
            FAILED
        }
    };
    session.close()?;
    Ok(code)
}

/// Uploads a finished bundle; the run itself succeeded, so a failed upload is reported
/// with the command that retries it, not turned into a failure of the run.
fn upload_bundle(u: &Upload, dir: &Path) {
    let sent = std::fs::read(dir.join(drivelab_suites::bundle::RUN_JSON))
        .map_err(|e| Fail::failed(e.to_string()))
        .and_then(|body| u.send(&body));
    if let Err(e) = sent {
        eprintln!(
            "drivelab: the run was not uploaded ({}); retry with drivelab db push {} {}",
            e.message,
            u.url,
            shell_word(&dir.display().to_string())
        );
    }
}

/// The command that continues `bundle` with the choices this run was given that the
/// bundle does not keep: where to record it, the permission to write its target, and
/// whether to keep the test file.
fn resume_command(bundle: &Bundle, suite: &dyn Suite, db: &DbChoice, keep: bool) -> String {
    let d = &bundle.doc;
    let mut cmd = format!(
        "drivelab run --resume {}",
        shell_word(&bundle.dir.display().to_string())
    );
    match db {
        None => cmd.push_str(" --no-db"),
        // The URL may hold a password: not printed.
        Some(Some(url)) if drivelab_store::is_postgres_url(url) => {
            cmd.push_str(" --db <the same URL>")
        }
        Some(Some(path)) => cmd.push_str(&format!(" --db {}", shell_word(path))),
        Some(None) => {}
    }
    use drivelab_engine::target::TargetKind;
    if suite.writes_to_device() {
        match d.target.kind {
            TargetKind::BlockDevice => cmd.push_str(&format!(" --destructive={}", d.target.path)),
            TargetKind::File if !d.test_file_created => cmd.push_str(" --overwrite"),
            _ => {}
        }
    }
    if keep {
        cmd.push_str(" --keep");
    }
    cmd
}

/// `w` as one word for a POSIX shell: as it is when plain, else in single quotes.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=,@%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// What `run` prints and saves as `summary.txt`: the target, the suite's table and the
/// caveats (memory measured, simulated device, span cut to the target, …).
fn summary_text(bundle: &Bundle, table: &str) -> String {
    let d = &bundle.doc;
    let t = &d.target;
    let what = d.target_arg.clone().unwrap_or_else(|| t.path.clone());
    let mut text = format!(
        "target: {what} ({})\n",
        crate::output::summary::target_description(t)
    );
    text.push_str(table);
    for step in &d.steps {
        let verified = step.run.as_ref().and_then(|r| r.verify.as_ref());
        if let Some(line) =
            verified.and_then(|v| crate::output::summary::verified_line(v, &step.config))
        {
            text.push_str(&format!("{}: {line}\n", step.name));
        }
    }
    for n in caveats(bundle) {
        text.push_str(&format!("note: {n}\n"));
    }
    text
}

/// The bundle's caveats, with the one on write content generation also for a bundle
/// finished before it was kept among them.
fn caveats(bundle: &Bundle) -> Vec<String> {
    let mut out = bundle.doc.notes.clone();
    if let Some(n) = drivelab_suites::records::generator_note(&bundle.doc.steps) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn resume_hints_quote_what_a_shell_would_split() {
        assert_eq!(
            shell_word("drivelab-results/quick-1"),
            "drivelab-results/quick-1"
        );
        assert_eq!(shell_word("/my runs/db.sqlite"), "'/my runs/db.sqlite'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
