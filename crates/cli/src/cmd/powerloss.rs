//! `drivelab run powerloss TARGET --journal FILE` (the write phase: the user cuts the
//! power during it) and `drivelab run powerloss --check JOURNAL TARGET` (after the cut:
//! did the drive keep every flushed block?). A simulated drive is cut by its model and
//! checked in the same run; `--cycles N` repeats write, cut and check on one device.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use drivelab_engine::target::{OpenOptions, TargetSpec};
use drivelab_suites::bundle::{check_new_dir, default_dir, Bundle, BundleStatus};
use drivelab_suites::powerloss::{
    self, Analysis, CycleCheck, DriveId, Journal, PowerLoss, PowerState, Record, WriteEnd,
};
use drivelab_suites::runner::new_doc;

use crate::fail::{Fail, FAILED, INTERRUPTED};
use crate::out_path::RESULTS_DIR;
use crate::output::{note, note_prompt};
use crate::run_args::PowerlossArgs;
use crate::session::Session;
use crate::target_arg;

/// How long a device may take to come back after its power returns.
const BACK_TRIES: u32 = 300;

/// Why --db and --upload are refused on a powerloss run.
pub const NOT_RECORDED: &str = "powerloss: not recorded in a database or uploaded yet; drop --db and --upload (push the bundle later with drivelab db push URL BUNDLE)";

pub fn run(a: &PowerlossArgs) -> Result<i32, Fail> {
    if a.db.is_some() || a.upload.is_some() {
        return Err(Fail::usage(NOT_RECORDED));
    }
    let f = &a.common.fio;
    if f.emit_fio.is_some() || f.engine.is_some() || f.hosts.is_some() || !f.host.is_empty() {
        return Err(Fail::usage(
            "powerloss: runs on drivelab's own engine on this host only; drop --emit-fio, --engine, --hosts and --host",
        ));
    }
    match &a.check {
        Some(journal) => check_cmd(a, journal),
        None => write_cmd(a),
    }
}

/// The options that open the target for the write phase.
fn write_options(a: &PowerlossArgs, k: &PowerLoss) -> OpenOptions {
    let t = &a.common.target;
    OpenOptions {
        write: true,
        direct: true,
        overwrite: t.overwrite,
        destructive: t.destructive.clone(),
        create_size: k.ring_bytes(),
    }
}

/// Refuse a journal where no output may go (in a result bundle, see
/// [`crate::out_path::check_place`]), nor in the bundle this run is about to make.
fn journal_place(journal: &Path, out: Option<&Path>) -> Result<(), Fail> {
    crate::out_path::check_place(journal, "--journal")?;
    let parent = |p: &Path| {
        std::path::absolute(p)
            .ok()
            .and_then(|a| a.parent().map(Path::to_path_buf))
    };
    let out = out.and_then(|o| std::path::absolute(o).ok());
    if out.is_some() && parent(journal) == out {
        return Err(Fail::usage(format!(
            "--journal {}: is inside the result bundle --out makes, drivelab's record of the run; give a file name outside it (on another drive)",
            journal.display()
        )));
    }
    Ok(())
}

fn write_cmd(a: &PowerlossArgs) -> Result<i32, Fail> {
    let journal = a.journal.as_deref().ok_or_else(|| {
        Fail::usage("--journal FILE: required: a new file on another drive, where each completed flush is recorded (after the cut: --check FILE)")
    })?;
    let k = a.knobs().map_err(Fail::usage)?;
    let t = &a.common.target;
    if let Some(out) = &a.common.out {
        check_new_dir(out).map_err(Fail::usage)?;
    }
    let arg = target_arg::recorded(t.target.as_deref())?;
    let sim = target_arg::is_sim(Some(&arg));
    let device = !sim && is_block_device(Path::new(&arg));
    if a.cycles.is_some() && !device {
        return Err(Fail::usage(
            "--cycles: cuts a drive's power between checks: give its block device (a simulated drive is cut by its model: sim:…,power_cut=T)",
        ));
    }
    if sim {
        refuse_sim_without_cut(&arg)?;
    }
    let spec = target_arg::parse(Some(&arg))?;
    if matches!(spec, TargetSpec::Null { .. }) {
        return Err(Fail::usage(
            "TARGET: the null target keeps no data; give a block device, a file or sim:…",
        ));
    }
    let on_disk = (!sim).then(|| PathBuf::from(&arg));
    journal_place(journal, a.common.out.as_deref())?;
    powerloss::check_journal_path(journal, on_disk.as_deref()).map_err(Fail::usage)?;
    // A real target's blocks must outlive this run: the check reads them.
    let mut session = Session::open(spec, &write_options(a, &k), t.keep || !sim)?;
    powerloss::prepare(&k, session.target_mut()).map_err(|e| session.usage(e))?;
    let dir = a
        .common
        .out
        .clone()
        .unwrap_or_else(|| default_dir(Path::new(RESULTS_DIR), "powerloss"));
    let doc = new_doc(&k, &[], session.target(), Some(arg.clone()));
    check_new_dir(&dir).map_err(|e| session.usage(e))?;
    let mut bundle = Bundle::create(&dir, doc).map_err(|e| session.failed(e))?;
    let _lock = Bundle::lock(&dir).map_err(|e| session.usage(e))?;
    let mut j = Journal::create(journal, on_disk.as_deref()).map_err(|e| session.usage(e))?;
    let bundle_dir = std::path::absolute(&dir).unwrap_or(dir.clone());
    j.append(&Record::Start {
        knobs: k.clone(),
        target: arg.clone(),
        bundle: Some(bundle_dir.display().to_string()),
    })
    .map_err(|e| session.failed(e))?;
    // Warned only once every check passed: never before an unrelated refusal.
    if !sim && powerloss::journal_on_tmpfs(journal) {
        note(&format!(
            "drivelab: warning: --journal {} is on a tmpfs (memory): cutting the host's power loses it; cut only the drive's",
            journal.display()
        ));
    }
    note(&format!("drivelab: bundle {}", dir.display()));
    let cycles = a.cycles.map_or(1, u64::from);
    let mut checked: Vec<CycleCheck> = Vec::new();
    let mut next_round = 0;
    for cycle in 1..=cycles {
        if !sim {
            // Before the power command starts: what shows its cut at the check.
            let t = session.target();
            let power = PowerState::now(t);
            if cycle == 1 && power.power_cycles.is_none() {
                note("drivelab: note: this target's power-cycle count cannot be read (a file, a loop device, or no SMART: root and smartctl are needed): the check can show the cut only if the host's boot id changes (docs/powerloss.md)");
            }
            let drive = DriveId::of(&t.info);
            // What its start holds before the rounds: a format made later shows at the check.
            let probe = powerloss::Probe::of(Path::new(&arg));
            if let (1, powerloss::Probe::Unknown(why)) = (cycle, &probe) {
                note(&format!("drivelab: note: the target's start cannot be probed ({why}): the check will find a filesystem made on it since only if it is ext2/3/4 (docs/powerloss.md)"));
            }
            let signature = Some(probe);
            j.append(&Record::Cycle {
                cycle,
                drive,
                power,
                signature,
            })
            .map_err(|e| session.failed(e))?;
        }
        let power = a
            .cycles
            .map(|_| PowerCut::start(a, cycle, cycles))
            .transpose();
        let power = power.map_err(|e| fail_bundle(&mut bundle, session.failed(e)))?;
        let stop = session.stop.clone();
        let phase = powerloss::write_rounds(&k, session.target_mut(), &mut j, next_round, &stop)
            .map_err(|e| session.failed(e))?;
        next_round += phase.rounds_started;
        say_phase(&phase.end, phase.flushes_completed);
        if phase.end == WriteEnd::Interrupted {
            let _ = bundle.set_status(BundleStatus::Interrupted);
            session.close()?;
            return Ok(INTERRUPTED);
        }
        if !sim && power.is_none() {
            note(&format!(
                "drivelab: once the power was cut and is back: drivelab run powerloss --check {} {arg}",
                journal.display()
            ));
            session.close()?;
            return Ok(0);
        }
        if let Some(p) = power {
            // The drive went away with its power: open it anew once it is back.
            session.close()?;
            p.wait().map_err(|f| fail_bundle(&mut bundle, f))?;
            session = reopen(&arg, &write_options(a, &k), &session_stop())
                .map_err(|f| fail_bundle(&mut bundle, f))?;
        }
        let records = powerloss::read_journal(journal).map_err(|e| session.failed(e))?;
        powerloss::refuse_other_drive(&records, session.target())
            .map_err(|e| fail_bundle(&mut bundle, session.failed(e)))?;
        let mut c = powerloss::check(&records, session.target_mut(), cycle)
            .map_err(|e| session.failed(e))?;
        let (evidence, now) = powerloss::cut_evidence(&records, session.target());
        c.set_evidence(evidence, powerloss::power_before(&records), now);
        if let Some(m) = session.target().model() {
            c.set_truth(
                powerloss::PowerCutTruth::of(&m.ground_truth()),
                u64::from(k.block_bytes),
            );
        }
        j.append(&Record::Checked { cycle })
            .map_err(|e| session.failed(e))?;
        checked.push(c);
        conclude(&mut bundle, &checked).map_err(|e| session.failed(e))?;
        if sim {
            break;
        }
    }
    session.close()?;
    finish(&bundle, &checked)
}

/// A simulated drive whose power is never cut tests nothing: refuse it.
fn refuse_sim_without_cut(arg: &str) -> Result<(), Fail> {
    let cfg = drivelab_sim::SimConfig::parse(arg)
        .map_err(|e| Fail::usage(format!("TARGET {arg}: {e}")))?;
    match cfg.power_cut_ns {
        Some(_) => Ok(()),
        None => Err(Fail::usage(
            "TARGET: a simulated drive is cut by its model: add power_cut=T (virtual time, e.g. sim:…,write_cache=volatile,power_cut=20ms)",
        )),
    }
}

/// Mark `bundle` failed with the reason `f` gives (kept in its notes), and pass `f` on.
fn fail_bundle(bundle: &mut Bundle, f: Fail) -> Fail {
    bundle
        .doc
        .notes
        .push(format!("The run failed: {}", f.message));
    let status = if f.code == INTERRUPTED {
        BundleStatus::Interrupted
    } else {
        BundleStatus::Failed
    };
    let _ = bundle.set_status(status);
    f
}

/// The stop flag (the signal handlers are installed once).
fn session_stop() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    crate::signals::stop_flag()
}

/// Open the device again once it is back after its power cut.
fn reopen(
    arg: &str,
    opts: &OpenOptions,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Session, Fail> {
    let mut last = String::new();
    for _ in 0..BACK_TRIES {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Fail {
                code: INTERRUPTED,
                message: "interrupted while waiting for the drive to come back".into(),
            });
        }
        match Session::open(TargetSpec::Path(Some(PathBuf::from(arg))), opts, true) {
            Ok(s) => return Ok(s),
            Err(e) => last = e.message,
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    Err(Fail::failed(format!(
        "TARGET {arg}: not back {BACK_TRIES} s after its power cut: {last}"
    )))
}

fn is_block_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

fn say_phase(end: &WriteEnd, flushes: u64) {
    match end {
        WriteEnd::Done => note(&format!(
            "drivelab: every round written and flushed ({flushes} flushes)"
        )),
        WriteEnd::PowerCut => note(&format!(
            "drivelab: the simulated drive's power was cut after {flushes} completed flushes"
        )),
        WriteEnd::TargetFailed(e) => note(&format!(
            "drivelab: the target failed after {flushes} completed flushes (its power cut?): {e}"
        )),
        WriteEnd::Interrupted => note(&format!(
            "drivelab: interrupted after {flushes} completed flushes"
        )),
    }
}

/// How the power of one cycle is cut: a command, or the user at a prompt.
enum PowerCut {
    Command(std::process::Child),
    ByHand,
}

impl PowerCut {
    fn start(a: &PowerlossArgs, cycle: u64, cycles: u64) -> Result<PowerCut, String> {
        match &a.power_cmd {
            // The user's own command line, as given: drivelab puts nothing into it.
            Some(cmd) => std::process::Command::new("sh")
                .args(["-c", cmd])
                .stdin(std::process::Stdio::null())
                .spawn()
                .map(PowerCut::Command)
                .map_err(|e| format!("--power-cmd: cannot start sh: {e}")),
            None if std::io::stdin().is_terminal() => {
                note(&format!(
                    "drivelab: cycle {cycle} of {cycles}: writing; cut the drive's power at any moment (pull it, switch it off)"
                ));
                Ok(PowerCut::ByHand)
            }
            None => Err(
                "--cycles: without --power-cmd the power is cut by hand at a prompt, which needs a terminal on stdin".into(),
            ),
        }
    }

    /// Wait until the power is back: the command has exited, or the user says so.
    fn wait(self) -> Result<(), Fail> {
        match self {
            PowerCut::Command(mut child) => {
                let st = child
                    .wait()
                    .map_err(|e| Fail::failed(format!("--power-cmd: {e}")))?;
                if !st.success() {
                    return Err(Fail::failed(format!("--power-cmd: exited with {st}")));
                }
                Ok(())
            }
            PowerCut::ByHand => {
                note_prompt("drivelab: restore the drive's power, then press Enter: ");
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| Fail::failed(format!("reading the prompt's answer: {e}")))?;
                Ok(())
            }
        }
    }
}

/// Save the analysis of the cycles checked so far in the bundle: complete, unless a
/// signal stopped a cycle's write phase (it stays interrupted).
fn conclude(bundle: &mut Bundle, cycles: &[CycleCheck]) -> Result<(), String> {
    let a = Analysis::of(cycles.to_vec());
    bundle.doc.summary = Some(a.summary());
    let interrupted = cycles
        .iter()
        .any(|c| c.write_end == Some(WriteEnd::Interrupted));
    bundle.set_status(if interrupted {
        BundleStatus::Interrupted
    } else {
        BundleStatus::Complete
    })?;
    bundle.write_table(&powerloss::table(&a))
}

/// Print the verdict; exit 1 when a flush was not honoured.
fn finish(bundle: &Bundle, cycles: &[CycleCheck]) -> Result<i32, Fail> {
    let a = Analysis::of(cycles.to_vec());
    crate::output::stdout::say(&powerloss::table(&a))?;
    note(&format!("drivelab: bundle {}", bundle.dir.display()));
    Ok(if a.flushes_honoured { 0 } else { FAILED })
}

/// Refuse a journal whose start record names a bundle of another run (a powerloss run
/// on the same target with the same seed): the check never rewrites it. A bundle that is
/// gone or unreadable is left to the caller (the check goes on without it).
fn refuse_foreign_bundle(
    dir: &Path,
    target: &str,
    knobs: &PowerLoss,
    journal: &Path,
) -> Result<(), Fail> {
    let Ok(b) = Bundle::open(dir) else {
        return Ok(());
    };
    let d = &b.doc;
    let same = d.suite == drivelab_suites::suite::SuiteKind::Powerloss
        && d.target_arg.as_deref() == Some(target)
        && d.knobs.get("seed") == Some(&serde_json::json!(knobs.seed));
    if same {
        return Ok(());
    }
    Err(Fail::usage(format!(
        "--check {}: the bundle it names, {}, is not this run's (another suite, target or seed): left untouched",
        journal.display(),
        dir.display()
    )))
}

fn check_cmd(a: &PowerlossArgs, journal: &Path) -> Result<i32, Fail> {
    let records = powerloss::read_journal(journal).map_err(Fail::usage)?;
    let Some(Record::Start {
        target,
        bundle,
        knobs,
    }) = records.first()
    else {
        return Err(Fail::usage(format!(
            "--check {}: not a powerloss journal",
            journal.display()
        )));
    };
    let t = &a.common.target;
    let arg = match t.target.as_deref() {
        Some(given) => target_arg::recorded(Some(given))?,
        None => target.clone(),
    };
    if target_arg::is_sim(Some(&arg)) {
        return Err(Fail::usage(
            "--check: a simulated drive's medium lives only in its run, which checks it at once; run powerloss on sim:… without --check",
        ));
    }
    if &arg != target {
        return Err(Fail::usage(format!(
            "TARGET {arg}: the journal {} was written to {target}",
            journal.display()
        )));
    }
    // A filesystem on it has written to it since the write phase: what it holds is no
    // longer what the drive kept.
    if let Some(why) = drivelab_engine::target::in_use_now(Path::new(&arg)) {
        return Err(Fail::usage(format!(
            "TARGET {arg}: {why}, so it was written since the write phase; unmount it and check again (its blocks may no longer say what the drive kept)"
        )));
    }
    let dir = bundle.as_deref().map(PathBuf::from);
    if let Some(d) = &dir {
        refuse_foreign_bundle(d, target, knobs, journal)?;
    }
    let opts = OpenOptions {
        write: false,
        direct: true,
        ..OpenOptions::default()
    };
    let mut session = Session::open(TargetSpec::Path(Some(PathBuf::from(&arg))), &opts, true)?;
    powerloss::refuse_other_drive(&records, session.target()).map_err(|e| session.usage(e))?;
    let (cycle, checked_before) = powerloss::last_cycle(&records);
    let mut c =
        powerloss::check(&records, session.target_mut(), cycle).map_err(|e| session.failed(e))?;
    let (evidence, now) = powerloss::cut_evidence(&records, session.target());
    c.set_evidence(evidence, powerloss::power_before(&records), now);
    // When the journal was made (else last written: later, so never a false alarm).
    let made = std::fs::metadata(journal).and_then(|m| m.created().or_else(|_| m.modified()));
    if let Ok(made) = made {
        c.note_rewritten(session.target_mut(), made)
            .map_err(|e| session.failed(e))?;
    }
    // Any filesystem, swap or partition table made on it since the run's rounds.
    let signature = powerloss::Probe::of(Path::new(&arg));
    c.note_signature(powerloss::signature_before(&records).as_ref(), &signature);
    session.close()?;
    if !checked_before {
        Journal::append_to(journal)
            .and_then(|mut j| j.append(&Record::Checked { cycle }))
            .map_err(Fail::failed)?;
    }
    let mut cycles = vec![c];
    match dir
        .as_deref()
        .map(|d| (d, Bundle::lock(d), Bundle::open(d)))
    {
        Some((_, Ok(_lock), Ok(mut b))) => {
            let before = b
                .doc
                .summary
                .as_ref()
                .and_then(|s| s.analysis_as::<Analysis>())
                .map(|a| a.cycles)
                .unwrap_or_default();
            // A check run again replaces its cycle's earlier result.
            cycles.splice(0..0, before.into_iter().filter(|b| b.cycle != cycle));
            cycles.sort_by_key(|c| c.cycle);
            conclude(&mut b, &cycles).map_err(Fail::failed)?;
            finish(&b, &cycles)
        }
        other => {
            let why = match other {
                Some((d, Err(e), _)) | Some((d, _, Err(e))) => format!("{}: {e}", d.display()),
                _ => "the journal names none".into(),
            };
            note(&format!(
                "drivelab: the run's bundle was not updated ({why})"
            ));
            let a = Analysis::of(cycles);
            crate::output::stdout::say(&powerloss::table(&a))?;
            Ok(if a.flushes_honoured { 0 } else { FAILED })
        }
    }
}
