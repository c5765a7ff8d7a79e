//! Recording a result bundle in the results database: the run's identity (a stable id
//! derived from the bundle), the device, host, tool version, config hash, headline
//! metrics, where the bundle is, and its whole `run.json`.

use std::path::Path;

use drivelab_engine::target::TargetKind;
use drivelab_report::bundles::{open_bundle, summary_of};
use drivelab_store::{is_postgres_url, Metric, RunRecord, Store, StoreError};
use drivelab_suites::bundle::{BundleStatus, RunDoc};
use sha2::{Digest, Sha256};

use crate::fail::Fail;

/// Opens the database named by `--db` (a SQLite path or a `postgres://` URL), or the
/// default SQLite file under the user's data directory.
pub fn open_store(db: Option<&str>) -> Result<Store, Fail> {
    check_location(db)?;
    let file = match db {
        None => Some(Store::default_location()),
        Some(loc) if !is_postgres_url(loc) => Some(std::path::PathBuf::from(loc)),
        Some(_) => None,
    };
    let new = file.filter(|f| !f.exists());
    match db {
        Some(loc) => Store::open(loc),
        None => Store::open_default(),
    }
    .inspect_err(|_| {
        // A database this open began (a full disk) is not left behind empty.
        if let Some(f) = new.filter(|f| std::fs::metadata(f).is_ok_and(|m| m.len() == 0)) {
            let _ = std::fs::remove_file(&f);
        }
    })
    .map_err(|e| match e {
        // The database named is the wrong thing: bad input, as in every command.
        StoreError::NotDrivelab { .. } => Fail::usage(e.to_string()),
        _ => Fail::failed(e.to_string()),
    })
}

/// The same for commands that only read: a SQLite file that is not there is not made
/// (None: there is no database yet).
pub fn open_existing_store(db: Option<&str>) -> Result<Option<Store>, Fail> {
    check_location(db)?;
    let sqlite = match db {
        None => Some(Store::default_location()),
        Some(loc) if !is_postgres_url(loc) => Some(std::path::PathBuf::from(loc)),
        Some(_) => None,
    };
    if sqlite.is_some_and(|p| !p.exists()) {
        return Ok(None);
    }
    open_store(db).map(Some)
}

/// Where no database could be, found before anything runs (exit 2 in every command):
/// empty, a URL of another kind than postgres://, a malformed postgres:// URL, a file
/// in a directory that does not exist, a directory, or a file that is not SQLite.
pub fn check_location(db: Option<&str>) -> Result<(), Fail> {
    let Some(loc) = db else {
        // Without XDG_DATA_HOME and HOME the default is nowhere: not a folder under
        // wherever the command happens to run.
        if !Store::default_location().is_absolute() {
            return Err(Fail::usage(
                "--db: neither XDG_DATA_HOME nor HOME is set, so there is no default results database; give --db FILE (or --no-db)",
            ));
        }
        return Ok(());
    };
    let shown = drivelab_store::redact_url(loc);
    let bad = |why: &str| Err(Fail::usage(format!("--db '{shown}': {why}")));
    if loc == ":memory:" || loc.starts_with("file:") {
        // SQLite's names for a database that is not a file: nothing would be kept.
        return bad(
            "a results database is kept in a file; give a SQLite file path or a postgres:// URL",
        );
    }
    if loc.trim().is_empty() || (loc.contains("://") && !is_postgres_url(loc)) {
        return bad("give a SQLite file path or a postgres:// URL");
    }
    if crate::out_path::is_stdout(Path::new(loc)) {
        return bad("a results database is not standard output; give a SQLite file path or a postgres:// URL");
    }
    if is_postgres_url(loc) {
        return match drivelab_store::check_postgres_url(loc) {
            Ok(()) => Ok(()),
            Err(why) => bad(&format!("{why}; give postgres://USER@HOST/DB")),
        };
    }
    let p = Path::new(loc);
    if let Some(d) = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return bad(&format!("directory {} does not exist", d.display()));
    }
    if p.is_dir() {
        return bad("is a directory; give a SQLite file path");
    }
    // Empty (a new database) or starting as SQLite does.
    let head = crate::out_path::head(p, crate::out_path::SQLITE_HEADER.len());
    if !crate::out_path::SQLITE_HEADER.starts_with(&head) {
        return bad("is not a SQLite database");
    }
    Ok(())
}

/// Where a missing database would be, for messages.
pub fn location_shown(db: Option<&str>) -> String {
    db.map_or_else(
        || Store::default_location().display().to_string(),
        str::to_string,
    )
}

/// The run id of a bundle: 16 hex digits of a hash of its identity (creation time,
/// host, target, suite, config hash), so recording one bundle twice finds the same run.
pub fn run_id(doc: &RunDoc) -> String {
    let mut h = Sha256::new();
    for part in [
        doc.created_at.as_str(),
        doc.host.hostname.as_str(),
        doc.target.path.as_str(),
        doc.suite.as_str(),
        doc.config_hash.as_str(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kind(k: TargetKind) -> &'static str {
    match k {
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block",
        TargetKind::Null => "null",
        TargetKind::Simulated => "sim",
    }
}

fn status(s: BundleStatus) -> &'static str {
    match s {
        BundleStatus::Complete => "complete",
        // A fleet some hosts dropped out of: hosts failed.
        BundleStatus::Failed | BundleStatus::Partial => "failed",
        // Still "running" in the file means the process died: as good as interrupted.
        BundleStatus::Interrupted | BundleStatus::Running => "interrupted",
    }
}

/// The database record of a bundle (read from `dir`, whose `run.json` is `doc`).
pub fn run_record(dir: &Path, doc: &RunDoc) -> Result<RunRecord, String> {
    let t = &doc.target;
    let mut metrics: Vec<Metric> = Vec::new();
    for m in summary_of(doc).map(|s| s.metrics).unwrap_or_default() {
        if m.value.is_finite() && !metrics.iter().any(|x| x.name == m.name) {
            metrics.push(Metric::new(m.name, m.value, m.unit));
        }
    }
    let finished_at = match doc.status {
        BundleStatus::Complete => doc
            .steps
            .iter()
            .filter_map(|s| s.finished_at.clone())
            .next_back()
            .or_else(|| Some(doc.updated_at.clone())),
        _ => None,
    };
    let bundle_json = serde_json::to_value(doc).map_err(|e| e.to_string())?;
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    Ok(RunRecord {
        run_id: run_id(doc),
        suite: doc.suite.clone(),
        started_at: doc.created_at.clone(),
        finished_at,
        tool_version: doc.tool.version.clone(),
        schema_version: doc.schema_version,
        host_name: doc.host.hostname.clone(),
        host: serde_json::to_value(&doc.host).unwrap_or_default(),
        device_path: if t.path.is_empty() {
            kind(t.kind).to_string()
        } else {
            t.path.clone()
        },
        device_model: t
            .model
            .clone()
            .or_else(|| t.simulated.as_ref().map(|m| m.model.clone())),
        device_serial: t.serial.clone(),
        device_firmware: t.firmware.clone(),
        device_capacity_bytes: (t.capacity_bytes > 0).then_some(t.capacity_bytes),
        device_kind: kind(t.kind).to_string(),
        config_hash: doc.config_hash.clone(),
        config: serde_json::json!({ "suite": doc.suite, "knobs": doc.knobs }),
        status: status(doc.status).to_string(),
        metrics,
        bundle_path: Some(path.display().to_string()),
        bundle_json: Some(bundle_json),
    })
}

/// Records the bundle in `bundle_dir` in the database `db` (`--db`; None = the default
/// SQLite file) and returns its run id. A bundle recorded before is not stored twice:
/// its existing id is returned.
pub fn record_bundle(bundle_dir: &Path, db: Option<&str>) -> Result<String, Fail> {
    let doc = open_bundle(bundle_dir).map_err(Fail::failed)?;
    let rec = run_record(bundle_dir, &doc).map_err(Fail::failed)?;
    let mut store = open_store(db)?;
    match store.insert_run(&rec) {
        Ok(()) | Err(StoreError::DuplicateRun(_)) => Ok(rec.run_id),
        Err(e) => Err(Fail::failed(e.to_string())),
    }
}
