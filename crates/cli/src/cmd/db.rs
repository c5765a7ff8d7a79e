//! `drivelab db list | show ID | export [-o FILE] | import FILE | record BUNDLE | push URL`:
//! the results database (SQLite by default, `--db PATH` or `--db postgres://…`), and
//! uploads of its runs to a `drivelab serve`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use drivelab_store::{RunFilter, RunRecord, RunSummary, StoreError};

use crate::fail::Fail;
use crate::out_path::OutFile;
use crate::record::{location_shown, open_existing_store, open_store, record_bundle};

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub cmd: DbCommand,
    /// The results database: a SQLite file or a postgres:// URL
    /// [default: results.sqlite in $XDG_DATA_HOME/drivelab, else ~/.local/share/drivelab].
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// List recorded runs, newest first.
    List(ListArgs),
    /// Show one run: identity and headline metrics.
    Show(ShowArgs),
    /// Write recorded runs as one JSON document (to stdout without -o).
    Export(ExportArgs),
    /// Add the runs of an export document (runs already present are skipped).
    Import(ImportArgs),
    /// Record a result bundle (drivelab run does this when a suite finishes).
    Record(RecordArgs),
    /// Upload bundles (or, without BUNDLE, every run of --db that keeps its run.json)
    /// to a drivelab serve at URL; runs the server has already are not doubled.
    Push(crate::cmd::push::PushArgs),
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only runs of this suite.
    #[arg(long)]
    pub suite: Option<String>,
    /// Only runs whose device model, serial or path contains this text.
    #[arg(long)]
    pub device: Option<String>,
    /// At most this many runs.
    #[arg(long, value_parser = crate::values::positive)]
    pub limit: Option<u32>,
    /// Print the listing as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id, or a prefix matching one run.
    #[arg(value_name = "ID", required = true)]
    pub id: Option<String>,
    /// Print the whole record (with the stored run.json) as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Write to this file instead of stdout (`-`: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Only runs of this suite.
    #[arg(long)]
    pub suite: Option<String>,
    /// Only runs whose device model, serial or path contains this text.
    #[arg(long)]
    pub device: Option<String>,
    /// Replace an output file drivelab did not write, or one of another kind (a trace,
    /// a result document…; an export drivelab wrote is replaced anyway; a database or a
    /// bundle's file never is).
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// A document written by `drivelab db export`.
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Result bundle directories.
    #[arg(value_name = "BUNDLE", required = true)]
    pub bundles: Vec<PathBuf>,
}

fn store_fail(e: StoreError) -> Fail {
    match e {
        StoreError::AmbiguousId { .. } | StoreError::InvalidExport(_) => Fail::usage(e.to_string()),
        _ => Fail::failed(e.to_string()),
    }
}

pub fn run(a: DbArgs) -> Result<i32, Fail> {
    let db = a.db.as_deref();
    if db.is_some_and(|d| d.trim().is_empty()) {
        return Err(Fail::usage(
            "--db: give a SQLite file path or a postgres:// URL",
        ));
    }
    // The database is checked first, the same way in every subcommand.
    crate::record::check_location(db)?;
    match a.cmd {
        DbCommand::List(l) => list(db, l),
        DbCommand::Show(s) => show(db, s),
        DbCommand::Export(e) => export(db, e),
        DbCommand::Import(i) => import(db, i),
        DbCommand::Record(r) => record(db, r),
        DbCommand::Push(p) => crate::cmd::push::push(db, p),
    }
}

/// Device shown in listings: a loop device with the file under it (two loop devices
/// read alike otherwise), else the model, else the path.
fn device(r: &RunSummary) -> String {
    if let Some(file) = r.device_serial.as_deref().and_then(loop_backing) {
        let dev = r.device_path.trim_start_matches("/dev/");
        return clip_left(&format!("{dev} on {file}"), 30);
    }
    clip(r.device_model.as_deref().unwrap_or(&r.device_path), 30)
}

/// The backing file a loop device's recorded identity names ("backing file PATH
/// (device M:N, inode I)", as the engine records it in place of a serial number).
fn loop_backing(serial: &str) -> Option<&str> {
    let rest = serial.strip_prefix("backing file ")?;
    Some(rest.rsplit_once(" (device ").map_or(rest, |(path, _)| path))
}

/// `s` in at most `n` characters, cut at the start (a path's end tells it apart).
fn clip_left(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let tail: String = s.chars().skip(count - (n - 1)).collect();
    format!("…{tail}")
}

/// One line per run: id, start, suite, status, device, host, config hash.
pub fn list_table(runs: &[RunSummary]) -> String {
    let mut out = format!(
        "{:<16}  {:<24}  {:<11}  {:<11}  {:<30}  {:<12}  {}\n",
        "RUN ID", "STARTED (UTC)", "SUITE", "STATUS", "DEVICE", "HOST", "CONFIG"
    );
    for r in runs {
        out += &format!(
            "{:<16}  {:<24}  {:<11}  {:<11}  {:<30}  {:<12}  {}\n",
            r.run_id,
            r.started_at,
            r.suite,
            r.status,
            device(r),
            clip(&r.host_name, 12),
            r.config_hash.chars().take(12).collect::<String>()
        );
    }
    out
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(n - 1).collect();
        c.push('…');
        c
    }
}

fn list(db: Option<&str>, a: ListArgs) -> Result<i32, Fail> {
    let Some(mut store) = open_existing_store(db)? else {
        if a.json {
            crate::output::stdout::say_line("[]")?;
        } else {
            crate::output::stdout::say_line(&format!(
                "no runs recorded (no database at {} yet)",
                location_shown(db)
            ))?;
        }
        return Ok(0);
    };
    let runs = store
        .list_runs(&RunFilter {
            suite: a.suite,
            device: a.device,
            status: None,
            limit: a.limit.map(|l| l as usize),
        })
        .map_err(store_fail)?;
    if a.json {
        crate::output::stdout::say_line(
            &serde_json::to_string_pretty(&runs).map_err(|e| Fail::failed(e.to_string()))?,
        )?;
    } else if runs.is_empty() {
        crate::output::stdout::say_line(&format!("no runs recorded in {}", store.location()))?;
    } else {
        crate::output::stdout::say(&list_table(&runs))?;
    }
    Ok(0)
}

/// The human form of one record.
/// A powerloss run's verdict, from its stored run.json's analysis (None: another suite,
/// or no run.json stored).
fn powerloss_outcome(r: &RunRecord) -> Option<drivelab_suites::powerloss::Outcome> {
    use drivelab_suites::bundle::Summary;
    if r.suite.parse::<drivelab_suites::SuiteKind>() != Ok(drivelab_suites::SuiteKind::Powerloss) {
        return None;
    }
    let doc = r.bundle_json.as_ref()?;
    let summary = doc
        .get("summary")
        .and_then(|s| serde_json::from_value::<Summary>(s.clone()).ok());
    Some(drivelab_suites::powerloss::Outcome::of(summary.as_ref()))
}

pub fn show_text(r: &RunRecord) -> String {
    let mut out = String::new();
    let mut kv = |k: &str, v: &str| out += &format!("{k:<16} {v}\n");
    kv("run id", &r.run_id);
    kv("suite", &r.suite);
    kv("status", &r.status);
    if let Some(outcome) = powerloss_outcome(r) {
        kv("verdict", outcome.words());
    }
    kv("started", &r.started_at);
    kv("finished", r.finished_at.as_deref().unwrap_or("-"));
    kv("device", &r.device_path);
    kv("kind", &r.device_kind);
    kv("model", r.device_model.as_deref().unwrap_or("-"));
    kv("serial", r.device_serial.as_deref().unwrap_or("-"));
    kv("firmware", r.device_firmware.as_deref().unwrap_or("-"));
    kv(
        "capacity",
        &r.device_capacity_bytes
            .map_or_else(|| "-".into(), |b| format!("{b} bytes")),
    );
    kv("host", &r.host_name);
    kv("drivelab", &r.tool_version);
    kv("config hash", &r.config_hash);
    kv("bundle", r.bundle_path.as_deref().unwrap_or("-"));
    kv(
        "run.json",
        if r.bundle_json.is_some() {
            "stored"
        } else {
            "not stored"
        },
    );
    if !r.metrics.is_empty() {
        out += "\nheadline metrics:\n";
        let w = r
            .metrics
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(0);
        for m in &r.metrics {
            out += &format!(
                "  {:<w$}  {:>14}  {}\n",
                m.name,
                crate::cmd::compare::fmt_value(m.value),
                m.unit
            );
        }
    }
    out
}

fn show(db: Option<&str>, a: ShowArgs) -> Result<i32, Fail> {
    let Some(id) = a.id.filter(|i| !i.is_empty()) else {
        return Err(Fail::usage(
            "ID: give the run id, or a prefix of it, as listed by drivelab db list",
        ));
    };
    let mut store = open_existing_store(db)?.ok_or_else(|| no_database(db))?;
    let Some(r) = store.get_run(&id).map_err(|e| {
        let f = store_fail(e);
        Fail {
            code: f.code,
            message: format!("ID {id}: {}", f.message),
        }
    })?
    else {
        return Err(Fail::usage(format!(
            "ID '{}': no run with this id or id prefix in {}",
            id,
            store.location()
        )));
    };
    if a.json {
        crate::output::stdout::say_line(
            &serde_json::to_string_pretty(&r).map_err(|e| Fail::failed(e.to_string()))?,
        )?;
    } else {
        crate::output::stdout::say(&show_text(&r))?;
    }
    Ok(0)
}

fn export(db: Option<&str>, a: ExportArgs) -> Result<i32, Fail> {
    let out = a
        .output
        .as_deref()
        .filter(|p| !crate::out_path::is_stdout(p))
        .map(|p| {
            OutFile::claim_doc(
                p,
                "-o/--output",
                crate::out_path::Kind::Export,
                a.force,
                "an export is written to a regular file only (without -o, or with -o -, it goes to standard output)",
            )
        })
        .transpose()?;
    let mut store = open_existing_store(db)?.ok_or_else(|| no_database(db))?;
    let doc = store
        .export_runs(&RunFilter {
            suite: a.suite,
            device: a.device,
            status: None,
            limit: None,
        })
        .map_err(store_fail)?;
    let n = doc["runs"].as_array().map_or(0, Vec::len);
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Fail::failed(e.to_string()))?;
    match out {
        Some(r) => {
            r.write((text + "\n").as_bytes())?;
            eprintln!("exported {n} run(s) to {}", r.path().display());
        }
        None => {
            crate::output::stdout::say_line(&text)?;
        }
    }
    Ok(0)
}

fn import(db: Option<&str>, a: ImportArgs) -> Result<i32, Fail> {
    let Some(file) = a.file else {
        return Err(Fail::usage(
            "FILE: give a JSON document written by drivelab db export",
        ));
    };
    let text = drivelab_trace::input::read_text(&file, 4 << 30)
        .map_err(|e| Fail::usage(format!("FILE {}: cannot read it: {e}", file.display())))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Fail::usage(format!(
            "FILE {}: not a JSON document written by drivelab db export ({e})",
            file.display()
        ))
    })?;
    // Checked before the database is opened, so a wrong file makes no database.
    drivelab_store::parse_export(&doc)
        .map_err(|e| Fail::usage(format!("FILE {}: {e}", file.display())))?;
    let mut store = open_store(db)?;
    let r = store.import_runs(&doc).map_err(|e| match e {
        StoreError::InvalidExport(_) | StoreError::InvalidRecord { .. } => {
            Fail::usage(format!("FILE {}: {e}", file.display()))
        }
        e => store_fail(e),
    })?;
    crate::output::stdout::say_line(&format!(
        "imported {} run(s), skipped {} already present, into {}",
        r.imported,
        r.skipped,
        store.location()
    ))?;
    Ok(0)
}

fn record(db: Option<&str>, a: RecordArgs) -> Result<i32, Fail> {
    if a.bundles.is_empty() {
        return Err(Fail::usage(
            "BUNDLE: give one or more result bundle directories (made by drivelab run)",
        ));
    }
    // Every bundle must open before anything is written.
    for b in &a.bundles {
        let doc = drivelab_suites::bundle::open_bundle(b)
            .map_err(|e| Fail::usage(format!("BUNDLE {e}")))?;
        if let Some(why) = crate::record::not_recordable(&doc) {
            return Err(Fail::usage(format!("BUNDLE {}: {why}", b.display())));
        }
    }
    for b in &a.bundles {
        let id = record_bundle(b, db)?;
        crate::output::stdout::say_line(&format!("{id}  {}", b.display()))?;
    }
    Ok(0)
}

/// For commands that read a database that is not there.
pub fn no_database(db: Option<&str>) -> Fail {
    Fail::usage(format!(
        "--db {}: no database there yet (drivelab run and drivelab db record make one)",
        location_shown(db)
    ))
}

#[cfg(test)]
mod device_tests {
    use super::*;

    fn summary(path: &str, model: Option<&str>, serial: Option<&str>) -> RunSummary {
        serde_json::from_value(serde_json::json!({
            "run_id": "r", "suite": "quick", "started_at": "t", "finished_at": null,
            "status": "complete", "tool_version": "0", "host_name": "h",
            "device_path": path, "device_model": model, "device_serial": serial,
            "device_firmware": null, "device_capacity_bytes": null, "device_kind": "block",
            "config_hash": "c", "metrics": []
        }))
        .unwrap()
    }

    #[test]
    fn loop_devices_are_told_apart_by_their_backing_file() {
        let a = summary(
            "/dev/loop0",
            Some("Linux loop device"),
            Some("backing file /var/tmp/a/disk.img (device 8:1, inode 12)"),
        );
        assert_eq!(device(&a), "loop0 on /var/tmp/a/disk.img");
        let long = summary(
            "/dev/loop1",
            Some("Linux loop device"),
            Some(
                "backing file /var/tmp/a-very-long-directory-name/b/disk.img (device 8:1, inode 9)",
            ),
        );
        let shown = device(&long);
        assert!(
            shown.starts_with('…') && shown.ends_with("/b/disk.img"),
            "{shown}"
        );
        assert_eq!(shown.chars().count(), 30);
        let disk = summary("/dev/sda", Some("Samsung SSD"), Some("S3Z"));
        assert_eq!(device(&disk), "Samsung SSD");
        assert_eq!(device(&summary("/x/f", None, None)), "/x/f");
    }
}
