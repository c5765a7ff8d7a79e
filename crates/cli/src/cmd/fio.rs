//! The fio bridge's front end: `drivelab run SUITE --emit-fio DIR` (the suite's steps as
//! fio job files), `--engine fio` (a suite run locally through fio), `--hosts FILE` /
//! `--host H` (every step on many hosts through `fio --client`), and
//! `drivelab import fio RESULT.json` (a fio result as a bundle). The work itself is in
//! `drivelab_suites::fio`.

use std::path::{Path, PathBuf};

use clap::Args;
use drivelab_engine::target::{self, OpenOptions, Target, TargetInfo, TargetKind, TargetSpec};
use drivelab_suites::Suite;

use crate::fail::Fail;
use crate::out_path::OutDir;
use crate::run_args::FioArgs;

/// The target's description for planning, with the consent a real run would need (a
/// file drivelab did not make needs --overwrite, a block device --destructive naming it,
/// and is refused when mounted or in use): the target itself when it exists, else the
/// test file the suite would create. Its path is absolute.
fn plan_target(suite: &dyn Suite, t: &crate::target_arg::TargetArgs) -> Result<TargetInfo, Fail> {
    let spec = crate::target_arg::parse(t.target.as_deref())?;
    let path = match &spec {
        TargetSpec::Path(p) => p.clone().unwrap_or_else(|| target::TEST_FILE_NAME.into()),
        _ => {
            return Err(Fail::usage(
                "TARGET: fio needs a file or a block device, not null or a simulated device",
            ))
        }
    };
    let abs = std::path::absolute(&path)
        .map_err(|e| Fail::usage(format!("TARGET {}: {e}", path.display())))?;
    if path.exists() {
        let t = Target::open(
            spec,
            &OpenOptions {
                write: suite.writes_to_device(),
                direct: false,
                overwrite: t.overwrite,
                destructive: t.destructive.clone(),
                ..OpenOptions::default()
            },
        )
        .map_err(|e| Fail::usage(e.0))?;
        let mut info = t.info.clone();
        t.close(true).map_err(|e| Fail::failed(e.to_string()))?;
        info.path = abs.display().to_string();
        return Ok(info);
    }
    let bytes = suite.test_file_bytes().unwrap_or(target::TEST_FILE_SIZE);
    serde_json::from_value(serde_json::json!({
        "kind": TargetKind::File, "path": abs.display().to_string(), "capacity_bytes": bytes,
        "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
        "scheduler": null, "model": null, "serial": null, "firmware": null,
        "filesystem": null, "in_memory": null, "created_by_drivelab": true,
        "simulated": null
    }))
    .map_err(|e| Fail::failed(e.to_string()))
}

/// Whether `p` is a job file `--emit-fio` wrote (it may be replaced).
fn own_job_file(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "fio")
        && drivelab_suites::fio::is_own_job(&crate::out_path::head(p, 4096))
}

/// Whether `p` is fio's result of a job file `--emit-fio` wrote, as the job's own run
/// line names it (`05-x.json` beside `05-x.fio`, run in DIR): left where it is.
fn result_of_own_job(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json") && own_job_file(&p.with_extension("fio"))
}

/// `drivelab run SUITE [TARGET] --emit-fio DIR`: DIR new, empty, or holding only job
/// files of an earlier `--emit-fio` and fio's results of them (run in DIR, as each job
/// file says; they are left as they are: a fio result carries its own job options, so
/// its import never depends on the job file beside it).
pub fn emit(suite: &dyn Suite, t: &crate::target_arg::TargetArgs, dir: &Path) -> Result<i32, Fail> {
    let info = plan_target(suite, t)?;
    let plan = suite
        .plan(&info)
        .map_err(|e| Fail::usage(format!("{}: {e}", suite.name())))?;
    let files = drivelab_suites::fio::emit(suite.name(), &plan, &info.path)
        .map_err(|e| Fail::usage(format!("--emit-fio: {e}")))?;
    let results: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()) && result_of_own_job(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let own = |p: &Path| own_job_file(p) || result_of_own_job(p);
    let out = OutDir::claim_own(
        dir,
        "--emit-fio",
        crate::out_path::Kind::FioJob,
        "fio job files or fio's results of them",
        own,
    )?;
    out.check_files(files.iter().map(|(n, _)| n.clone()))?;
    for (name, text) in &files {
        drivelab_suites::atomic::write_file(&out.path().join(name), text.as_bytes())
            .map_err(|e| Fail::failed(format!("--emit-fio {}: {e}", dir.display())))?;
    }
    eprintln!(
        "drivelab: {} fio job {} for the {} suite on {} in {}",
        files.len(),
        plural(files.len(), "file", "files"),
        suite.name(),
        info.path,
        dir.display()
    );
    if let Some(first) = results.first() {
        eprintln!(
            "drivelab: {} fio {} of earlier job files ({first}{}) left as {} in {}: each is the result of the job file it was run from, not necessarily of the new one",
            results.len(),
            plural(results.len(), "result", "results"),
            if results.len() > 1 { ", …" } else { "" },
            plural(results.len(), "it is", "they are"),
            dir.display()
        );
    }
    out.keep();
    Ok(0)
}

/// `one` or `many` by `n`.
pub fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The option that sends the suite through fio, if one does.
fn fio_flag(cmd: &crate::run_args::SuiteCmd) -> Option<&'static str> {
    let f = &cmd.common().fio;
    if f.emit_fio.is_some() {
        Some("--emit-fio")
    } else if f.engine.as_deref() == Some("fio") {
        Some("--engine fio")
    } else if f.hosts.is_some() {
        Some("--hosts")
    } else if !f.host.is_empty() {
        Some("--host")
    } else {
        None
    }
}

/// A replay suite cannot go through fio (fio has no drivelab trace replay): refused
/// before anything is made.
pub fn not_replay(cmd: &crate::run_args::SuiteCmd) -> Result<(), Fail> {
    let Some(flag) = fio_flag(cmd) else {
        return Ok(());
    };
    if matches!(cmd, crate::run_args::SuiteCmd::Replay(_)) {
        return Err(Fail::usage(format!(
            "{flag}: the replay suite runs on drivelab's own engine only (fio cannot replay a drivelab trace); drop {flag}"
        )));
    }
    Ok(())
}

/// `--verify` (seqfill, consistency) cannot go through fio: fio checks blocks with its
/// own header, leaves no result `drivelab verify` can read, and never reads back a
/// time-based job's writes (consistency's continuous writes) unless it has a backlog.
/// Refused before anything is made, never dropped from the job files.
pub fn no_verify(cmd: &crate::run_args::SuiteCmd) -> Result<(), Fail> {
    use crate::run_args::SuiteCmd;
    let verify = match cmd {
        SuiteCmd::Seqfill(a) => a.verify,
        SuiteCmd::Consistency(a) => a.verify,
        _ => false,
    };
    match fio_flag(cmd) {
        Some(flag) if verify => Err(Fail::usage(format!(
            "--verify: drivelab's check of every block written runs on its own engine only (fio checks with its own header, and not a time-based job's writes); drop --verify or {flag}"
        ))),
        _ => Ok(()),
    }
}

/// The strings a suite run through fio writes into its job files, checked before
/// anything is made: the target (as given, and absolute as a local fio opens it) and,
/// for the per-second logs of `--engine fio` and `--host`/`--hosts`, the bundle
/// directory. A newline, `;`, `#`, `$`, … would be read by fio as something else (an
/// option of its own: a command to run), so such a value is refused, naming its option.
pub fn job_strings(cmd: &crate::run_args::SuiteCmd) -> Result<(), Fail> {
    let c = cmd.common();
    let f = &c.fio;
    let runs = f.engine.as_deref() == Some("fio") || f.hosts.is_some() || !f.host.is_empty();
    if !runs && f.emit_fio.is_none() {
        return Ok(());
    }
    let check = |what: &str, p: &Path| -> Result<(), Fail> {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        for s in [p, abs.as_path()] {
            let text = s.to_str().ok_or_else(|| {
                Fail::usage(format!(
                    "{what}: {} is not UTF-8, which a fio job file cannot name",
                    drivelab_engine::text::quoted(&s.to_string_lossy())
                ))
            })?;
            drivelab_suites::fio::jobfile::check_value(what, text).map_err(Fail::usage)?;
        }
        Ok(())
    };
    let target = c.target.target.as_deref().unwrap_or(target::TEST_FILE_NAME);
    if !matches!(target, "null") && !target.starts_with("sim:") {
        check("TARGET", Path::new(target))?;
    }
    if runs {
        let out = c.out.clone().unwrap_or_else(|| PathBuf::from("."));
        check("--out", &out)?;
    }
    Ok(())
}

/// The sensor options given (`--sensors` other than its default `auto`, or `none`).
fn sensor_flags(sensors: Option<&str>, cmd: bool, hwmon: bool) -> Vec<&'static str> {
    let mut given = Vec::new();
    if sensors.is_some_and(|s| s != "auto" && s != "none") {
        given.push("--sensors");
    }
    if cmd {
        given.push("--sensor-cmd");
    }
    if hwmon {
        given.push("--sensor-hwmon");
    }
    given
}

/// Refuse sensor options where their readings would go nowhere, before anything is
/// made: drivelab samples sensors beside its own engine's runs only, so not with fio
/// doing the I/O (`--engine fio`), and this machine's sensors say nothing of other hosts
/// (`--host`, `--hosts`).
pub fn no_sensors(cmd: &crate::run_args::SuiteCmd) -> Result<(), Fail> {
    let c = cmd.common();
    let (f, t) = (&c.fio, &c.target);
    let given = sensor_flags(
        Some(&t.sensors),
        t.sensor_cmd.is_some(),
        !t.sensor_hwmon.is_empty(),
    );
    if given.is_empty() || f.emit_fio.is_some() {
        return Ok(());
    }
    let list = given.join(", ");
    if f.hosts.is_some() || !f.host.is_empty() {
        let flag = if f.hosts.is_some() {
            "--hosts"
        } else {
            "--host"
        };
        return Err(Fail::usage(format!(
            "{list}: the sensors are this machine's, and {flag} runs the steps on other hosts; drop {list} (run drivelab on a host to sample its sensors)"
        )));
    }
    if f.engine.as_deref() == Some("fio") {
        return Err(Fail::usage(format!(
            "{list}: not sampled with --engine fio (drivelab samples sensors beside its own engine only); drop {list} or --engine fio"
        )));
    }
    Ok(())
}

/// [`no_sensors`] for `--resume` of a bundle whose steps fio ran.
pub fn no_sensors_on_resume(
    doc: &drivelab_suites::RunDoc,
    a: &crate::run_args::RunArgs,
) -> Result<(), Fail> {
    let given = sensor_flags(
        a.sensors.as_deref(),
        a.sensor_cmd.is_some(),
        !a.sensor_hwmon.is_empty(),
    );
    if given.is_empty() || !doc.notes.iter().any(|n| n.contains(ENGINE_NOTE)) {
        return Ok(());
    }
    let list = given.join(", ");
    Err(Fail::usage(format!(
        "{list}: the bundle's steps are run by fio (--engine fio), beside which drivelab samples no sensors; drop {list}"
    )))
}

/// `drivelab import …`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub what: ImportCmd,
}

#[derive(clap::Subcommand, Debug)]
pub enum ImportCmd {
    /// fio results (`--output-format=json` or `json+`; json+ brings the latency
    /// histograms) of one drive as one result bundle that report, compare and db take:
    /// results differing only in iodepth and/or numjobs become queue-depth sweeps
    /// (knee, QoS at the knee, the peak charts), results with fio's logs series.
    Fio(ImportFioArgs),
}

#[derive(Args, Debug)]
pub struct ImportFioArgs {
    /// fio's output files, or directories of them (every *.json in them).
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    pub results: Vec<PathBuf>,
    /// The drive's name: the bundle's label in reports [default: fio's filename].
    #[arg(long, value_name = "NAME")]
    pub drive: Option<String>,
    /// How the drive was connected (e.g. "SAS HBA", "USB UAS"), for the record.
    #[arg(long, value_name = "TEXT")]
    pub connection: Option<String>,
    /// Where fio's per-job logs are (write_iops_log, write_bw_log, write_lat_log,
    /// write_hist_log; any log_avg_msec, histograms at their own log_hist_msec): each
    /// result's logs are found by the prefixes its own options name, so all runs' logs
    /// may share DIR [default: beside each result].
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// Bundle directory [default: a new drivelab-results/fio-<UTC time>/ here].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Most files one import takes (a typo naming `/` does not read the disk).
const MAX_FILES: usize = 100_000;

/// The files given: each file (a regular file: a FIFO would block the import forever),
/// and every regular `*.json` in each directory (not below it), in name order; a
/// `*.json` there that is not a regular file is skipped, said on stderr.
fn result_files(given: &[PathBuf]) -> Result<Vec<PathBuf>, Fail> {
    let mut out = Vec::new();
    for p in given {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Fail::usage(format!("RESULT {}: {e}", p.display())))?
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .filter(|f| match drivelab_trace::input::open_regular(f) {
                    Ok(_) => true,
                    Err(e) => {
                        eprintln!("drivelab: RESULT {e}: skipped");
                        false
                    }
                })
                .take(MAX_FILES + 1)
                .collect();
            if v.is_empty() {
                return Err(Fail::usage(format!(
                    "RESULT {}: a directory without fio results (*.json) in it",
                    p.display()
                )));
            }
            v.sort();
            out.extend(v);
        } else {
            drivelab_trace::input::open_regular(p)
                .map_err(|e| Fail::usage(format!("RESULT {e}")))?;
            out.push(p.clone());
        }
        if out.len() > MAX_FILES {
            return Err(Fail::usage(format!(
                "RESULT: more than {MAX_FILES} files; import fewer at once"
            )));
        }
    }
    Ok(out)
}

pub fn import(a: ImportArgs) -> Result<i32, Fail> {
    let ImportCmd::Fio(a) = a.what;
    if let Some(out) = &a.out {
        if out.join(drivelab_suites::bundle::RUN_JSON).exists() {
            return Err(Fail::usage(format!(
                "--out {}: already holds a result bundle; give a new or empty directory",
                out.display()
            )));
        }
        drivelab_suites::bundle::check_new_dir(out).map_err(Fail::usage)?;
    }
    if let Some(l) = &a.logs {
        if !l.is_dir() {
            return Err(Fail::usage(format!(
                "--logs {}: not a directory (give the directory of fio's per-second logs)",
                l.display()
            )));
        }
    }
    for (flag, v) in [("--drive", &a.drive), ("--connection", &a.connection)] {
        if v.as_ref()
            .is_some_and(|s| s.trim().is_empty() || s.len() > 200)
        {
            return Err(Fail::usage(format!(
                "{flag}: give a name of 1 to 200 characters"
            )));
        }
    }
    use drivelab_suites::fio::import::{distinct, import_set, Body, Input, Options};
    // Each file is read as a stream when it is imported (bounded, never whole).
    let inputs: Vec<Input> = result_files(&a.results)?
        .into_iter()
        .map(|p| Input {
            source: p.display().to_string(),
            dir: p.parent().map(Path::to_path_buf),
            body: Body::File(p),
        })
        .collect();
    // A result given twice is imported once, and said once.
    let (inputs, repeats) = distinct(&inputs).map_err(|e| Fail::usage(format!("RESULT {e}")))?;
    for r in &repeats {
        eprintln!("drivelab: {r}");
    }
    let inputs: Vec<Input> = inputs.into_iter().cloned().collect();
    let opts = Options {
        drive: a.drive.as_deref(),
        connection: a.connection.as_deref(),
        logs: a.logs.as_deref(),
        ..Options::default()
    };
    let doc = import_set(&inputs, &opts).map_err(|e| Fail::usage(format!("RESULT {e}")))?;
    let dir = a.out.clone().unwrap_or_else(|| {
        drivelab_suites::bundle::default_dir(Path::new("drivelab-results"), "fio")
    });
    drivelab_suites::bundle::check_new_dir(&dir).map_err(Fail::usage)?;
    let b = drivelab_suites::Bundle::create(&dir, doc).map_err(Fail::failed)?;
    let text = summary_table(&b.doc);
    b.write_table(&text).map_err(Fail::failed)?;
    crate::output::stdout::say(&text)?;
    crate::output::stdout::say_line(&format!("Result bundle: {}", dir.display()))?;
    // A job fio stopped with an error is a failed run, said on the terminal too.
    let failures: Vec<String> = b
        .doc
        .steps
        .iter()
        .filter_map(|st| {
            let m = st.run.as_ref()?;
            m.failure.as_ref().map(|f| format!("{}: {f}", st.name))
        })
        .collect();
    for f in &failures {
        eprintln!("drivelab: fio job {f}");
    }
    Ok(if failures.is_empty() {
        0
    } else {
        crate::fail::FAILED
    })
}

/// The imported metrics as a table.
fn summary_table(doc: &drivelab_suites::RunDoc) -> String {
    let n = doc.steps.len();
    let mut t = format!(
        "fio results imported ({n} {})\n",
        plural(n, "step", "steps")
    );
    for m in doc.summary.iter().flat_map(|s| &s.metrics) {
        t.push_str(&format!("  {:<48} {:>12.1} {}\n", m.name, m.value, m.unit));
    }
    t
}

/// The note `--engine fio` leaves in a bundle.
const ENGINE_NOTE: &str = "(--engine fio)";

/// `--resume` of a bundle whose steps fio ran: the fio to go on with (the same version,
/// or refused).
pub fn resume_engine(doc: &drivelab_suites::RunDoc) -> Result<Option<String>, Fail> {
    let Some(note) = doc.notes.iter().find(|n| n.contains(ENGINE_NOTE)) else {
        return Ok(None);
    };
    let prog = drivelab_suites::fio::process::program();
    let v = drivelab_suites::fio::process::version(&prog)
        .map_err(|e| Fail::usage(format!("--resume: the bundle's steps were run by fio: {e}")))?;
    if !note.contains(&format!("by {v} ")) {
        return Err(Fail::usage(format!(
            "--resume: the bundle's steps were run by another fio than {v} ({note})"
        )));
    }
    Ok(Some(v))
}

/// `--engine fio`: the fio version to run the steps with (checked now), noted in the
/// bundle; None for drivelab's own engine.
pub fn engine_check(
    a: &FioArgs,
    target: &Target,
    doc: &mut drivelab_suites::RunDoc,
) -> Result<Option<String>, Fail> {
    if a.engine.as_deref() != Some("fio") {
        return Ok(None);
    }
    if matches!(target.info.kind, TargetKind::Null | TargetKind::Simulated) {
        return Err(Fail::usage(
            "--engine fio: fio needs a file or a block device, not null or a simulated device",
        ));
    }
    let prog = drivelab_suites::fio::process::program();
    let v = drivelab_suites::fio::process::version(&prog)
        .map_err(|e| Fail::usage(format!("--engine fio: {e}")))?;
    doc.notes.push(format!(
        "Every step was run by {v} {ENGINE_NOTE}; its job files, results and logs are in fio/."
    ));
    Ok(Some(v))
}

/// The hosts of `--hosts FILE` / `--host H …`, if any.
pub fn hosts(a: &FioArgs) -> Result<Option<Vec<drivelab_suites::fio::client::Host>>, Fail> {
    use drivelab_suites::fio::client::parse_hosts;
    if let Some(f) = &a.hosts {
        let m = std::fs::metadata(f)
            .map_err(|e| Fail::usage(format!("--hosts {}: {e}", f.display())))?;
        if !m.is_file() || m.len() > 1 << 20 {
            return Err(Fail::usage(format!(
                "--hosts {}: not a file of at most 1 MiB with one HOST[,PORT] a line",
                f.display()
            )));
        }
        let text = std::fs::read_to_string(f)
            .map_err(|e| Fail::usage(format!("--hosts {}: {e}", f.display())))?;
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        return parse_hosts(&lines)
            .map(Some)
            .map_err(|e| Fail::usage(format!("--hosts {}: {e}", f.display())));
    }
    if a.host.is_empty() {
        return Ok(None);
    }
    parse_hosts(&a.host)
        .map(Some)
        .map_err(|e| Fail::usage(format!("--host: {e}")))
}

/// The target on the hosts, described for planning: its size is the suite's span (the
/// hosts' targets are not visible from here).
fn fleet_target(
    suite: &dyn Suite,
    given: Option<&str>,
    t: &crate::target_arg::TargetArgs,
) -> Result<TargetInfo, Fail> {
    let path = given.unwrap_or(target::TEST_FILE_NAME).to_string();
    if path == "null" || path.starts_with("sim") {
        return Err(Fail::usage(
            "TARGET: fio needs a file or a block device, not null or a simulated device",
        ));
    }
    let device = path.starts_with("/dev/");
    if device && suite.writes_to_device() && t.destructive.as_deref() != Some(Path::new(&path)) {
        return Err(Fail::usage(format!(
            "--destructive={path}: needed to write the block device {path} on every host (its data there is lost)"
        )));
    }
    // drivelab cannot see the hosts' files: whether TARGET there is a user's file is
    // for the user to confirm. A suite that only reads needs it too: fio lays out
    // (rewrites) a file shorter than the span, and the file is removed at the end.
    if !device && !t.overwrite {
        return Err(Fail::usage(format!(
            "--overwrite: needed to use {path} on every host (drivelab cannot see from here whether it is a file of yours there; fio makes or rewrites it, and drivelab removes it at the end unless --keep)"
        )));
    }
    let bytes = suite.test_file_bytes().ok_or_else(|| {
        Fail::usage("--size: give the span on the hosts as an amount (e.g. --size 8G, or a count of bytes), not a share of the target: the hosts' targets are not measured from here")
    })?;
    serde_json::from_value(serde_json::json!({
        "kind": if device { TargetKind::BlockDevice } else { TargetKind::File },
        "path": path, "capacity_bytes": bytes,
        "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
        "scheduler": null, "model": null, "serial": null, "firmware": null,
        "filesystem": null, "in_memory": null, "created_by_drivelab": false,
        "simulated": null
    }))
    .map_err(|e| Fail::failed(e.to_string()))
}

/// `drivelab run SUITE [TARGET] --hosts FILE | --host H …`.
pub fn fleet(
    suite: &dyn Suite,
    common: &crate::run_args::CommonArgs,
    hosts: Vec<drivelab_suites::fio::client::Host>,
    db: Option<&Option<String>>,
    progress: crate::output::progress::ProgressMode,
) -> Result<i32, Fail> {
    use drivelab_suites::fio::{client, fleet, process};
    let t = &common.target;
    let info = fleet_target(suite, t.target.as_deref(), t)?;
    let plan = suite
        .plan(&info)
        .map_err(|e| Fail::usage(format!("{}: {e}", suite.name())))?;
    if let Some(o) = &common.out {
        drivelab_suites::bundle::check_new_dir(o).map_err(Fail::usage)?;
    }
    let prog = process::program();
    let version =
        process::version(&prog).map_err(|e| Fail::usage(format!("--host/--hosts: {e}")))?;
    // The probes' job file in a directory of their own: a refused run leaves nothing.
    let scratch = tempfile::tempdir().map_err(|e| Fail::failed(format!("--host/--hosts: {e}")))?;
    let probes = client::probe_all(&prog, &hosts, scratch.path()).map_err(Fail::failed)?;
    client::check_versions(&version, &hosts, &probes)
        .map_err(|e| Fail::usage(format!("--host/--hosts: {e}")))?;
    // Named (and, by default, made) only once the hosts answered.
    let out = match &common.out {
        Some(o) => o.clone(),
        None => drivelab_suites::bundle::default_dir(
            Path::new("drivelab-results"),
            &format!("{}-fleet", suite.name()),
        ),
    };
    let out = std::path::absolute(&out).map_err(|e| Fail::usage(format!("--out: {e}")))?;
    std::fs::create_dir_all(&out)
        .map_err(|e| Fail::usage(format!("--out {}: {e}", out.display())))?;
    let stop = crate::signals::stop_flag();
    let run = fleet::FleetRun {
        program: prog,
        version,
        hosts,
        target: info,
        out,
        stop: &stop,
        keep: t.keep,
    };
    // The step lines ("[k/n] STEP on N hosts") are progress: none with --progress never;
    // what went wrong is said whatever it is.
    let quiet = progress == crate::output::progress::ProgressMode::Never;
    let say = |s: &str| {
        if !(quiet && s.starts_with('[')) {
            eprintln!("drivelab: {s}");
        }
    };
    let o = fleet::run(suite, &plan, &run, &say).map_err(Fail::failed)?;
    // Finished bundles go into the results database like any run's (unless --no-db).
    let mut recorded = Vec::new();
    if let Some(db) = db {
        for d in o.host_dirs.iter().chain([&o.fleet_dir]) {
            let complete = drivelab_suites::Bundle::open(d)
                .is_ok_and(|b| b.doc.status == drivelab_suites::BundleStatus::Complete);
            if complete {
                match crate::record::record_bundle(d, db.as_deref()) {
                    Ok(id) => recorded.push(id),
                    Err(e) => eprintln!(
                        "drivelab: {} was not recorded in the results database: {}",
                        d.display(),
                        e.message
                    ),
                }
            }
        }
    }
    crate::output::stdout::say(&o.table)?;
    for d in &o.host_dirs {
        crate::output::stdout::say_line(&format!("Host bundle: {}", d.display()))?;
    }
    crate::output::stdout::say_line(&format!("Fleet view: {}", o.fleet_dir.display()))?;
    if !recorded.is_empty() {
        crate::output::stdout::say_line(&format!(
            "Recorded in the results database as runs {}",
            recorded.join(", ")
        ))?;
    }
    if o.interrupted {
        eprintln!(
            "drivelab: interrupted; finished steps are saved in {}; a fleet run cannot be resumed: run it again",
            run.out.display()
        );
    }
    Ok(if o.interrupted {
        crate::fail::INTERRUPTED
    } else if o.doc.failed_hosts.is_empty() {
        0
    } else {
        crate::fail::FAILED
    })
}
