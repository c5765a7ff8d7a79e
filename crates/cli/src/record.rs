//! Recording a result bundle in the results database: the run's identity (a stable id
//! derived from the bundle), the device, host, tool version, config hash, headline
//! metrics, where the bundle is, and its whole `run.json`.

use std::path::Path;

use drivelab_store::{is_postgres_url, RunRecord, Store, StoreError};
use drivelab_suites::bundle::open_bundle;
use drivelab_suites::bundle::RunDoc;

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
    // The check every output passes: never in a result bundle, never a database's
    // journal.
    crate::out_path::check_place(p, "--db")?;
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

/// The database record of a bundle (read from `dir`, whose `run.json` is `doc`).
pub fn run_record(dir: &Path, doc: &RunDoc) -> Result<RunRecord, String> {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    drivelab_server::record::run_record(doc, Some(path.display().to_string()))
}

/// Records the bundle in `bundle_dir` in the database `db` (`--db`; None = the default
/// SQLite file) and returns its run id. A bundle recorded before is not stored twice:
/// its existing id is returned, and its stored record is replaced (whole, in one
/// transaction) when the bundle changed since (a powerloss bundle checked since).
pub fn record_bundle(bundle_dir: &Path, db: Option<&str>) -> Result<String, Fail> {
    let doc = open_bundle(bundle_dir).map_err(Fail::failed)?;
    let rec = run_record(bundle_dir, &doc).map_err(Fail::failed)?;
    let mut store = open_store(db)?;
    store
        .record_run(&rec)
        .map(|_| rec.run_id)
        .map_err(|e| Fail::failed(e.to_string()))
}

/// Why a bundle may not be recorded yet (the server's rule, which its uploads keep too).
pub use drivelab_server::record::not_recordable;
