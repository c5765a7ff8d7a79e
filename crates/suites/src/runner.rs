//! The shared step runner: carries out a plan against a target step by step, saving each
//! step in the bundle the moment it finishes, skipping steps a resumed bundle already
//! holds, and asking the suite for its analysis at the end.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use drivelab_engine::model::SensorReading;
use drivelab_engine::prepare;
use drivelab_engine::result::Progress;
use drivelab_engine::result::{RunResult, RunStatus};
use drivelab_engine::run::{self, RunOptions};
use drivelab_engine::size::{human_bytes, SizeOrPercent};
use drivelab_engine::target::{Target, TargetKind};

use drivelab_engine::result::{HostInfo, Tool};

use crate::bundle::{
    now_rfc3339, Bundle, BundleStatus, RunDoc, StepRecord, StepStatus, Summary,
    BUNDLE_SCHEMA_VERSION,
};
use crate::hash::config_hash;
use crate::plan::{Action, PlannedStep};
use crate::suite::{AfterInterrupt, Report, Suite};

/// What a front end wants to hear while a suite runs (all optional).
pub trait Observer: Sync {
    /// A step is about to run (`index` of `total`, 0-based).
    fn step_started(&self, _index: usize, _total: usize, _name: &str) {}
    /// The engine's once-a-second view of the running step.
    fn progress(&self, _p: &Progress<'_>) {}
    /// A step finished and was saved.
    fn step_finished(&self, _rec: &StepRecord) {}
    /// Something worth telling the user (filling the test file, replaying a step, …).
    fn message(&self, _text: &str) {}
    /// Writing `bytes` outside the plan's steps is about to start (the fill of a fresh
    /// test file before reads); its progress follows through `progress`.
    fn filling(&self, _bytes: u64) {}
}

/// How a suite run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every step finished; the analysis is in the bundle.
    Complete(Report),
    /// Stopped by the user; finished steps are saved.
    Interrupted,
    /// A step failed (the message says why); finished steps are saved.
    Failed(String),
}

/// Options of a suite run.
pub struct Runner<'a> {
    /// Set asynchronously (Ctrl-C) to stop after draining the running step.
    pub stop: &'a AtomicBool,
    pub observer: Option<&'a dyn Observer>,
}

/// Idle for `ns`, in slices so a stop request is seen within 100 ms; the target's sensors
/// are read at the end of every second of it (stamped with the time since the idle
/// began). Returns how long it idled and those readings.
fn idle(target: &mut Target, ns: u64, stop: &AtomicBool) -> (u64, Vec<SensorReading>) {
    const SLICE: u64 = 100_000_000;
    const SAMPLE: u64 = 1_000_000_000;
    let mut done = 0;
    let mut readings = Vec::new();
    while done < ns && !stop.load(Ordering::Relaxed) {
        let d = (ns - done).min(SLICE).min(SAMPLE - done % SAMPLE);
        target.idle(d);
        done += d;
        if done % SAMPLE == 0 || done == ns {
            readings.extend(target.sensors().into_iter().map(|mut r| {
                r.at_ns = done;
                r
            }));
        }
    }
    (done, readings)
}

/// Who carries out a step's I/O: drivelab's engine ([`Native`]), or another tool
/// behind the same interface (fio: `crate::fio::local::FioEngine`).
pub trait StepEngine: Sync {
    /// Run the step's action on the target and return what was measured (`dir`: the
    /// bundle, for files a step writes there).
    fn run_step(
        &self,
        step: &PlannedStep,
        target: &mut Target,
        opts: &Runner<'_>,
        dir: Option<&std::path::Path>,
    ) -> Result<RunResult, String>;
}

/// drivelab's own engine.
pub struct Native;

impl StepEngine for Native {
    fn run_step(
        &self,
        step: &PlannedStep,
        target: &mut Target,
        opts: &Runner<'_>,
        dir: Option<&std::path::Path>,
    ) -> Result<RunResult, String> {
        act(step, target, opts, dir)
    }
}

/// Run one planned step's action (`dir`: the bundle, for files a step writes there).
fn act(
    step: &PlannedStep,
    target: &mut Target,
    opts: &Runner<'_>,
    dir: Option<&std::path::Path>,
) -> Result<RunResult, String> {
    let cb = |p: &Progress<'_>| {
        if let Some(o) = opts.observer {
            o.progress(p)
        }
    };
    let progress: Option<&(dyn Fn(&Progress<'_>) + Sync)> = match opts.observer {
        Some(_) => Some(&cb),
        None => None,
    };
    match &step.action {
        Action::Run => run::run(
            &step.workload,
            target,
            &RunOptions {
                stop: opts.stop,
                progress,
            },
        ),
        Action::Precondition { also_discard } => {
            if let Some((off, len)) = *also_discard {
                target.discard(off, len).map_err(|e| {
                    if prepare::discard_unsupported(&e) {
                        format!("--op: the target does not take discards (TRIM: {e}), so over-provisioning cannot be simulated on it; run without --op")
                    } else {
                        format!("discarding {len} bytes at {off} failed: {e}")
                    }
                })?;
            }
            let w = &step.workload;
            let block = w.max_bs();
            prepare::precondition(w, target, block, w.iodepth, 1, opts.stop, progress)?
                .into_iter()
                .next()
                .ok_or_else(|| "the precondition pass did not run".to_string())
        }
        Action::Replay(r) => crate::replay::run_step(
            &step.id,
            r,
            &step.workload,
            target,
            opts.stop,
            progress,
            dir,
        ),
    }
}

/// Carry out `plan` (made by `suite` for this target) into `bundle`. Steps the bundle
/// already holds as finished are not saved again; on a simulated target (whose state
/// does not outlive the process) all of them are replayed first (unsaved), on a test
/// file created anew its finished preparation steps. On a simulated device every step's
/// random seed follows from the device's full parameter string (its `seed=` included)
/// and the step's place in the plan, so the same suite on the same simulated drive gives
/// the same result, bit for bit.
pub fn execute(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    target: &mut Target,
    bundle: &mut Bundle,
    opts: &Runner<'_>,
) -> Result<Outcome, String> {
    execute_with(suite, plan, target, bundle, opts, &Native)
}

/// [`execute`] with the steps' I/O done by `engine`.
pub fn execute_with(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    target: &mut Target,
    bundle: &mut Bundle,
    opts: &Runner<'_>,
    engine: &dyn StepEngine,
) -> Result<Outcome, String> {
    let seeded;
    let plan = if target.info.kind == TargetKind::Simulated {
        seeded = simulation_seeds(plan, &target.info.path);
        &seeded[..]
    } else {
        plan
    };
    let total = plan.len();
    let resumed = bundle.doc.steps.iter().any(|s| s.status.finished());
    // A simulated device's state dies with the process: every finished step is redone
    // (unsaved, with the same seeds, so the drive is where the bundle left it; a
    // consistency test resumed after round 5 continues on a drive that has taken five
    // rounds, not on a fresh one). A test file created now is fresh: its finished fills
    // are redone (not a spell of random writes: a file has no flash state to rebuild).
    let simulated = target.info.kind == TargetKind::Simulated;
    let replay_prepares = resumed && (simulated || target.created_now());
    if bundle.doc.status != BundleStatus::Running {
        bundle.set_status(BundleStatus::Running)?;
    }
    let mut ran_before = false;
    for (i, step) in plan.iter().enumerate() {
        if let Some(rec) = bundle.step(i) {
            if rec.id != step.id {
                return Err(format!(
                    "the bundle's step {i} is '{}' but the plan's is '{}': not the same suite plan",
                    rec.id, step.id
                ));
            }
            if rec.status.finished() {
                let fill = matches!(step.action, Action::Precondition { .. });
                if replay_prepares && (fill || simulated) && rec.status == StepStatus::Complete {
                    let done = records_before(&bundle.doc.steps, i);
                    redo_finished(suite, step, done, target, opts, engine, simulated)?;
                }
                continue;
            }
        }
        if opts.stop.load(Ordering::Relaxed) {
            bundle.set_status(BundleStatus::Interrupted)?;
            return Ok(Outcome::Interrupted);
        }
        match resume_interrupted(suite, plan, i, target, bundle, opts, engine)? {
            ControlFlow::Break(outcome) => return Ok(outcome),
            ControlFlow::Continue(prepared) => ran_before |= prepared,
        }
        let done = records_before(&bundle.doc.steps, i);
        if let Some(reason) = suite.skip(step, done) {
            bundle.put_step(skipped(i, step, reason))?;
            continue;
        }
        let step = &adapted(suite, step, done);
        if let Some(o) = opts.observer {
            o.step_started(i, total, &step.name);
        }
        let started_at = now_rfc3339();
        let idle = if ran_before && step.idle_before_ns > 0 {
            idle(target, step.idle_before_ns, opts.stop)
        } else {
            (0, Vec::new())
        };
        if let ControlFlow::Break(outcome) = fill_before_reads(plan, i, step, target, bundle, opts)?
        {
            return Ok(outcome);
        }
        let sensors_start = target.sensors();
        let dir = bundle.dir.clone();
        let res = match engine.run_step(step, target, opts, Some(&dir)) {
            Ok(r) => r,
            // Stopped before the engine had a result (fio ended by the stop before it
            // wrote one): nothing of the step is kept, and a resume runs it again.
            Err(_) if opts.stop.load(Ordering::Relaxed) => {
                bundle.set_status(BundleStatus::Interrupted)?;
                return Ok(Outcome::Interrupted);
            }
            Err(e) => {
                bundle.set_status(BundleStatus::Failed)?;
                return Ok(Outcome::Failed(format!("step '{}': {e}", step.name)));
            }
        };
        ran_before = true;
        let failure = res.measured.failure.clone();
        let rec = step_record(i, step, res, started_at, sensors_start, idle, target);
        let status = rec.status;
        bundle.put_step(rec)?;
        if let Some(o) = opts.observer {
            if let Some(r) = bundle.step(i) {
                o.step_finished(r);
            }
        }
        if let ControlFlow::Break(outcome) = after_step(bundle, status, &step.name, failure)? {
            return Ok(outcome);
        }
    }
    finish(suite, bundle)
}

/// Runs a finished step again, unsaved, on a drive that did not keep its state (a
/// simulated drive, or a test file made anew: see [`execute_with`]).
fn redo_finished(
    suite: &dyn Suite,
    step: &PlannedStep,
    done: &[StepRecord],
    target: &mut Target,
    opts: &Runner<'_>,
    engine: &dyn StepEngine,
    simulated: bool,
) -> Result<(), String> {
    let step = &adapted(suite, step, done);
    if simulated && step.idle_before_ns > 0 {
        idle(target, step.idle_before_ns, opts.stop);
    }
    if let Some(o) = opts.observer {
        o.message(&format!(
            "replaying '{}' ({})",
            step.name,
            if simulated {
                "a simulated device does not keep its state between runs"
            } else {
                "the test file was made anew"
            }
        ));
    }
    engine.run_step(step, target, opts, None)?;
    Ok(())
}

/// What `--resume` does before step `i` when its earlier run was interrupted on a drive
/// that kept what it wrote ([`Suite::after_interrupt`]): nothing, its preparation again
/// (Continue(true): the drive was written just now), or a stop.
fn resume_interrupted(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    i: usize,
    target: &mut Target,
    bundle: &mut Bundle,
    opts: &Runner<'_>,
    engine: &dyn StepEngine,
) -> Result<ControlFlow<Outcome, bool>, String> {
    let interrupted = bundle
        .step(i)
        .is_some_and(|r| r.status == StepStatus::Interrupted);
    if !(interrupted && keeps_writes(target)) {
        return Ok(ControlFlow::Continue(false));
    }
    match suite.after_interrupt(&plan[i]) {
        AfterInterrupt::Again => Ok(ControlFlow::Continue(false)),
        // (check_resume refuses it before anything runs; this is the same rule.)
        AfterInterrupt::Refuse(reason) => {
            bundle.set_status(BundleStatus::Interrupted)?;
            Err(reason)
        }
        AfterInterrupt::Reprecondition => {
            let status = reprecondition(suite, plan, i, target, bundle, opts, engine)?;
            let failure = "preconditioning again before the interrupted step failed";
            Ok(match stopped(bundle, status, failure)? {
                ControlFlow::Break(outcome) => ControlFlow::Break(outcome),
                ControlFlow::Continue(()) => ControlFlow::Continue(true),
            })
        }
    }
}

/// Continue when `status` is complete; else the bundle marked interrupted or failed
/// (`failure`: why), and the run's outcome.
fn stopped(
    bundle: &mut Bundle,
    status: RunStatus,
    failure: &str,
) -> Result<ControlFlow<Outcome>, String> {
    match status {
        RunStatus::Complete => Ok(ControlFlow::Continue(())),
        RunStatus::Interrupted => {
            bundle.set_status(BundleStatus::Interrupted)?;
            Ok(ControlFlow::Break(Outcome::Interrupted))
        }
        RunStatus::Failed => {
            bundle.set_status(BundleStatus::Failed)?;
            Ok(ControlFlow::Break(Outcome::Failed(failure.into())))
        }
    }
}

/// The record of step `i`, skipped by the suite's rule for `reason`.
fn skipped(i: usize, step: &PlannedStep, reason: String) -> StepRecord {
    let now = now_rfc3339();
    StepRecord {
        skip_reason: Some(reason),
        started_at: Some(now.clone()),
        finished_at: Some(now),
        ..StepRecord::of_planned(i, step, StepStatus::Skipped)
    }
}

/// Writes a fresh test file once before step `i` (`step`, as adapted) when a step from
/// it on reads, not only before the first read: a write step before it (mixed's 0 %
/// reads) would otherwise measure allocating writes into unwritten extents.
fn fill_before_reads(
    plan: &[PlannedStep],
    i: usize,
    step: &PlannedStep,
    target: &mut Target,
    bundle: &mut Bundle,
    opts: &Runner<'_>,
) -> Result<ControlFlow<Outcome>, String> {
    let reads_later = plan[i..].iter().any(|s| s.workload.read_percent() > 0);
    // (A precondition writes its span itself, and marks a whole test file filled.)
    let fills = matches!(step.action, Action::Precondition { .. });
    if !reads_later || fills || target.is_filled() {
        return Ok(ControlFlow::Continue(()));
    }
    if let (Some(o), true) = (opts.observer, target.info.created_by_drivelab) {
        o.message(&format!(
            "writing {} once so that reads hit data…",
            target.info.path
        ));
        o.filling(target.info.span_bytes());
    }
    let progress = |p: &Progress<'_>| {
        if let Some(o) = opts.observer {
            o.progress(p)
        }
    };
    let status = prepare::ensure_filled(&step.workload, target, opts.stop, Some(&progress))?;
    let flow = stopped(bundle, status, "filling the test file failed")?;
    // The step itself starts now (its progress is no longer the fill's).
    if let (ControlFlow::Continue(()), Some(o)) = (&flow, opts.observer) {
        o.step_started(i, plan.len(), &step.name);
    }
    Ok(flow)
}

/// The record of step `i` run: what the engine measured, with the sensors read around
/// it (`sensors_start` before, the target's now after), the idle before it, and the
/// target's notes on its sensors.
fn step_record(
    i: usize,
    step: &PlannedStep,
    res: RunResult,
    started_at: String,
    sensors_start: Vec<SensorReading>,
    (idle_before_ns, idle_sensors): (u64, Vec<SensorReading>),
    target: &mut Target,
) -> StepRecord {
    let status = StepStatus::from(res.measured.status);
    let telemetry = Some(crate::records::telemetry_of(&res.measured));
    let sensors_end = target.sensors();
    let mut measured = res.measured;
    measured.notes.extend(target.take_sensor_notes());
    StepRecord {
        started_at: Some(started_at),
        finished_at: Some(now_rfc3339()),
        config: res.config.clone(),
        sensors_start,
        sensors_end,
        idle_before_ns,
        idle_sensors,
        run: Some(measured),
        telemetry,
        ..StepRecord::of_planned(i, step, status)
    }
}

/// Continue after a step that finished; else the bundle marked interrupted or failed,
/// and the run's outcome (`failure`: the engine's reason).
fn after_step(
    bundle: &mut Bundle,
    status: StepStatus,
    name: &str,
    failure: Option<String>,
) -> Result<ControlFlow<Outcome>, String> {
    match status {
        StepStatus::Complete | StepStatus::Skipped => Ok(ControlFlow::Continue(())),
        StepStatus::Interrupted => {
            bundle.set_status(BundleStatus::Interrupted)?;
            Ok(ControlFlow::Break(Outcome::Interrupted))
        }
        StepStatus::Failed => {
            bundle.set_status(BundleStatus::Failed)?;
            Ok(ControlFlow::Break(Outcome::Failed(format!(
                "step '{name}' failed: {}",
                failure.unwrap_or_else(|| "I/O error".into())
            ))))
        }
    }
}

/// Every step done: the suite's analysis and table saved, the bundle complete.
fn finish(suite: &dyn Suite, bundle: &mut Bundle) -> Result<Outcome, String> {
    let report = analyse(suite, &bundle.doc.steps);
    bundle.doc.summary = Some(report.summary.clone());
    // Caveats of the steps that concern the whole run go with the bundle's own notes.
    if let Some(n) = crate::records::generator_note(&bundle.doc.steps) {
        if !bundle.doc.notes.contains(&n) {
            bundle.doc.notes.push(n);
        }
    }
    bundle.set_status(BundleStatus::Complete)?;
    bundle.write_table(&report.table)?;
    Ok(Outcome::Complete(report))
}

/// Whether the target keeps what an interrupted step wrote into a resumed run: a
/// simulated drive starts afresh in every process (its finished steps are replayed), and
/// a test file made anew is fresh.
fn keeps_writes(target: &Target) -> bool {
    target.info.kind != TargetKind::Simulated && !target.created_now()
}

/// Runs the plan's preparation before step `i` again (see
/// [`AfterInterrupt::Reprecondition`]): its preparation steps from the last
/// discard-and-fill before it on, unsaved (their records stay the first run's), and says
/// so in the bundle's notes.
fn reprecondition(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    i: usize,
    target: &mut Target,
    bundle: &mut Bundle,
    opts: &Runner<'_>,
    engine: &dyn StepEngine,
) -> Result<RunStatus, String> {
    let from = plan[..i]
        .iter()
        .rposition(|s| matches!(s.action, Action::Precondition { .. }))
        .unwrap_or(i);
    let prepare: Vec<usize> = (from..i)
        .filter(|&j| plan[j].kind == crate::plan::StepKind::Prepare)
        .collect();
    let names: Vec<&str> = prepare.iter().map(|&j| plan[j].name.as_str()).collect();
    let note = format!(
        "Resumed: '{}' had been interrupted after writing to the drive, so it was measured \
         again only after its preparation ran again ({}).",
        plan[i].name,
        if names.is_empty() {
            "none planned".to_string()
        } else {
            names.join("; ")
        }
    );
    if let Some(o) = opts.observer {
        o.message(&format!(
            "preconditioning again before '{}': its interrupted run wrote to the drive",
            plan[i].name
        ));
    }
    for j in prepare {
        let step = &adapted(suite, &plan[j], records_before(&bundle.doc.steps, j));
        let res = engine.run_step(step, target, opts, None)?;
        if res.measured.status != RunStatus::Complete {
            return Ok(res.measured.status);
        }
    }
    if !bundle.doc.notes.contains(&note) {
        bundle.doc.notes.push(note);
    }
    Ok(RunStatus::Complete)
}

/// The records of the steps before step `index` (a bundle keeps them in plan order).
fn records_before(steps: &[StepRecord], index: usize) -> &[StepRecord] {
    &steps[..steps.partition_point(|s| s.index < index)]
}

/// `step` as the suite runs it after the steps `done` (see [`Suite::adapt`]): its own
/// random seed kept (on a simulated drive, the one its place in the plan gives).
fn adapted(suite: &dyn Suite, step: &PlannedStep, done: &[StepRecord]) -> PlannedStep {
    match suite.adapt(step, done) {
        Some(mut s) => {
            s.workload.randseed = step.workload.randseed;
            s
        }
        None => step.clone(),
    }
}

/// The suite's analysis of its steps, with every step's telemetry beside it.
pub fn analyse(suite: &dyn Suite, steps: &[StepRecord]) -> Report {
    let mut report = suite.report(steps);
    crate::records::add_telemetry(&mut report, steps);
    report
}

/// The suite's analysis of a bundle: the saved summary, or the suite's own analysis of
/// the saved steps when the bundle did not finish (None for an unfinished import or
/// knobs its suite cannot read).
pub fn summary_of(doc: &RunDoc) -> Option<Summary> {
    if let Some(s) = &doc.summary {
        return Some(s.clone());
    }
    let suite = crate::saved::from_saved(doc.suite, &doc.knobs).ok()?;
    Some(analyse(suite.as_ref(), &doc.steps).summary)
}

/// A new bundle document for `suite`'s `plan` on `target`.
pub fn new_doc(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    target: &Target,
    target_arg: Option<String>,
) -> RunDoc {
    let mut doc = new_doc_for(suite, plan, &target.info, target_arg);
    doc.test_file_created = target.created_now();
    doc
}

/// A new bundle document for `suite`'s `plan` on the target `info` describes (one not
/// opened here: a fleet's hosts').
pub fn new_doc_for(
    suite: &dyn Suite,
    plan: &[PlannedStep],
    info: &drivelab_engine::target::TargetInfo,
    target_arg: Option<String>,
) -> RunDoc {
    let knobs = suite.knobs();
    let now = now_rfc3339();
    let mut notes = Vec::new();
    if let Some(why) = &info.in_memory {
        notes.push(format!("Memory, not a drive, was measured: {why}."));
    }
    if info.kind == TargetKind::Simulated {
        notes.push("A simulated device was measured; all times are virtual.".into());
    }
    // A span asked for in bytes that the target cannot hold is cut to the target: say so,
    // since the knobs (and the suite's headings) still show what was asked for.
    let asked = knobs
        .get("size")
        .and_then(|v| serde_json::from_value::<SizeOrPercent>(v.clone()).ok());
    if let Some(SizeOrPercent::Bytes(b)) = asked {
        if b > info.span_bytes() {
            notes.push(format!(
                "--size {} is more than the target holds ({}): the whole target was used.",
                human_bytes(b),
                human_bytes(info.span_bytes())
            ));
        }
    }
    RunDoc {
        schema_version: BUNDLE_SCHEMA_VERSION,
        tool: Tool::current(),
        suite: suite.kind(),
        config_hash: config_hash(suite.name(), &knobs, plan),
        knobs,
        host: HostInfo::current(),
        target_arg,
        target: info.clone(),
        test_file_created: false,
        status: BundleStatus::Running,
        created_at: now.clone(),
        updated_at: now,
        planned_steps: plan.len(),
        steps: Vec::new(),
        summary: None,
        notes,
        fleet: false,
    }
}

/// Check that a bundle being resumed belongs to this target and this plan: same target
/// identity and the same config hash (same knobs, same resolved workloads), and that
/// each finished step ran what `suite` makes of its plan step after the steps before it.
pub fn check_resume(
    doc: &RunDoc,
    suite: &dyn Suite,
    plan: &[PlannedStep],
    target: &Target,
) -> Result<(), String> {
    let (a, b) = (&doc.target, &target.info);
    if a.kind != b.kind || a.path != b.path || a.capacity_bytes != b.capacity_bytes {
        return Err(format!(
            "--resume: the bundle was made on {} ({} bytes), not on {} ({} bytes)",
            a.path,
            a.span_bytes(),
            b.path,
            b.span_bytes()
        ));
    }
    // Identity as far as either side recorded it: a device swapped in at the same path
    // (or a loop device over another file) is another drive.
    for (what, then, now) in [
        ("model", &a.model, &b.model),
        ("serial", &a.serial, &b.serial),
        ("firmware", &a.firmware, &b.firmware),
    ] {
        if (then.is_some() || now.is_some()) && then != now {
            return Err(format!(
                "--resume: {} is now a different device ({what} {}, the bundle's is {})",
                b.path,
                now.as_deref().unwrap_or("unknown"),
                then.as_deref().unwrap_or("unknown")
            ));
        }
    }
    let hash = config_hash(doc.suite.name(), &doc.knobs, plan);
    let earlier = crate::hash::config_hash_with_preparation(doc.suite.name(), &doc.knobs, plan);
    if hash != doc.config_hash && earlier != doc.config_hash {
        return Err(
            "--resume: the suite's plan on this target differs from the bundle's (config hash changed)"
                .into(),
        );
    }
    // The hash leaves preparation steps out: the plan must still have the bundle's
    // steps, preparation included, in the same places.
    let moved = doc
        .steps
        .iter()
        .find(|s| plan.get(s.index).is_none_or(|p| p.id != s.id));
    if doc.planned_steps != plan.len() || moved.is_some() {
        return Err(format!(
            "--resume: the suite's plan on this target has other steps than the bundle's ({} planned now, {} then{})",
            plan.len(),
            doc.planned_steps,
            moved.map_or(String::new(), |s| format!("; step {} was '{}'", s.index + 1, s.id))
        ));
    }
    // A step interrupted on a drive that kept its writes, which the suite cannot
    // measure again from there.
    for s in doc
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Interrupted)
    {
        if let (Some(p), true) = (plan.get(s.index), keeps_writes(target)) {
            if let AfterInterrupt::Refuse(reason) = suite.after_interrupt(p) {
                return Err(reason);
            }
        }
    }
    // The hash leaves the spans out (they follow from the target's capacity); a resumed
    // step must cover the same bytes as the steps already done.
    let without_seed = |w: &drivelab_engine::spec::Workload| {
        let mut v = serde_json::to_value(w).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(m) = &mut v {
            m.remove("randseed");
        }
        v
    };
    for (s, p) in doc.steps.iter().zip(plan) {
        let ran = if s.status == StepStatus::Skipped {
            p.clone()
        } else {
            adapted(suite, p, records_before(&doc.steps, s.index))
        };
        let p = &ran;
        if s.status.finished() && without_seed(&s.config) != without_seed(&p.workload) {
            let (now, then) = (&p.workload, &s.config);
            return Err(format!(
                "--resume: step {} would cover other bytes on this target than it did ({} bytes at {}{} now, {} at {}{} then)",
                s.name,
                now.size_bytes,
                now.offset_bytes,
                now.io_size_bytes.map_or(String::new(), |b| format!(", {b} written")),
                then.size_bytes,
                then.offset_bytes,
                then.io_size_bytes.map_or(String::new(), |b| format!(", {b} written")),
            ));
        }
    }
    Ok(())
}

/// The plan with each step's seed derived from the simulated device's parameters and the
/// step's index (FNV-1a), instead of the clock.
fn simulation_seeds(plan: &[PlannedStep], spec: &str) -> Vec<PlannedStep> {
    let mut base: u64 = 0xcbf2_9ce4_8422_2325;
    for b in spec.bytes() {
        base = (base ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    plan.iter()
        .enumerate()
        .map(|(i, step)| {
            let mut s = step.clone();
            s.workload.randseed = (base ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            s
        })
        .collect()
}
