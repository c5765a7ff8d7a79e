//! The results database on SQLite files in temporary directories.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{behaviour, fill, sqlite_store};
use drivelab_store::{Backend, RunFilter, Store, StoreError, SCHEMA_VERSION};

#[test]
fn insert_and_get_round_trip() {
    let (_dir, mut store) = sqlite_store();
    assert_eq!(store.backend(), Backend::Sqlite);
    behaviour::insert_and_get_round_trip(&mut store);
}

#[test]
fn list_filters_and_order() {
    let (_dir, mut store) = sqlite_store();
    behaviour::list_filters_and_order(&mut store);
}

#[test]
fn get_by_unique_prefix() {
    let (_dir, mut store) = sqlite_store();
    behaviour::get_by_unique_prefix(&mut store);
}

#[test]
fn duplicate_insert_is_an_error() {
    let (_dir, mut store) = sqlite_store();
    behaviour::duplicate_insert_is_an_error(&mut store);
}

#[test]
fn invalid_records_write_nothing() {
    let (_dir, mut store) = sqlite_store();
    behaviour::invalid_records_write_nothing(&mut store);
}

#[test]
fn delete_by_prefix() {
    let (_dir, mut store) = sqlite_store();
    behaviour::delete_by_prefix(&mut store);
}

#[test]
fn export_import_round_trip() {
    let (_a, mut store) = sqlite_store();
    let (_b, mut fresh) = sqlite_store();
    behaviour::export_import_round_trip(&mut store, &mut fresh);
}

#[test]
fn import_is_all_or_nothing() {
    let (_dir, mut store) = sqlite_store();
    behaviour::import_is_all_or_nothing(&mut store);
}

fn migration_rows(path: &std::path::Path) -> Vec<(i64, String, String)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn migrations_run_once_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // The directory must exist: a --db path never makes directories (only the default
    // location's are made, by open_default).
    let path = dir.path().join("a/b/results.sqlite");
    let e = Store::open(path.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
    assert!(!dir.path().join("a").exists());
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    let mut store = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.location(), path.display().to_string());
    let runs = fill(&mut store);
    drop(store);

    let first = migration_rows(&path);
    assert_eq!(first.len(), SCHEMA_VERSION as usize);
    assert_eq!((first[0].0, first[0].1.as_str()), (1, "initial"));
    assert!(
        humantime::parse_rfc3339(&first[0].2).is_ok(),
        "{}",
        first[0].2
    );

    // Reopening applies nothing and keeps the data.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let mut store = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(migration_rows(&path), first);
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(
        store.list_runs(&RunFilter::default()).unwrap().len(),
        runs.len()
    );
}

#[test]
fn concurrent_first_opens_migrate_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || Store::open(path.to_str().unwrap()).map(|_| ()))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    assert_eq!(migration_rows(&path).len(), SCHEMA_VERSION as usize);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    drop(Store::open(path.to_str().unwrap()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', '2030-01-01T00:00:00Z')",
        [],
    )
    .unwrap();
    drop(conn);
    let err = Store::open(path.to_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "results database {} has schema version 99, newer than this drivelab understands ({SCHEMA_VERSION}); upgrade drivelab",
            path.display()
        )
    );
}

#[test]
fn bad_paths_give_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain.txt");
    fs::write(&file, "hello, I am not a database, not even close to one").unwrap();

    // A parent that is a file.
    let under_file = file.join("results.sqlite");
    let err = Store::open(under_file.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open results database {}: {} is not a directory",
            under_file.display(),
            file.display()
        )
    );
    let deeper = file.join("a/b/results.sqlite");
    let err = Store::open(deeper.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(&format!(": {} is not a directory", file.display())),
        "{err}"
    );

    // A directory.
    let err = Store::open(dir.path().to_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open results database {}: is a directory",
            dir.path().display()
        )
    );

    // A file that is not SQLite; it is left as it was.
    let err = Store::open(file.to_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open results database {}: not a SQLite database",
            file.display()
        )
    );
    assert!(fs::read_to_string(&file).unwrap().starts_with("hello"));

    // An empty path.
    assert_eq!(
        Store::open("").unwrap_err().to_string(),
        "cannot open results database : the path is empty"
    );
}

#[test]
fn unwritable_directory_is_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    let path = locked.join("sub/results.sqlite");
    if fs::create_dir(locked.join("probe")).is_ok() {
        // Root ignores directory permissions; the message still has to come from the OS.
        eprintln!(
            "running with permission overrides (root); checking a read-only file system instead"
        );
        let ro = std::path::Path::new("/proc/drivelab/results.sqlite");
        let err = Store::open(ro.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot open results database /proc/drivelab/results.sqlite: "),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
        return;
    }
    let err = Store::open(path.to_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open results database {}: permission denied",
            path.display()
        )
    );
}

#[test]
fn pages_are_filtered_sorted_and_counted() {
    let (_dir, mut store) = sqlite_store();
    behaviour::pages_are_filtered_sorted_and_counted(&mut store);
}

/// A database made by a build of schema version 1 (its tables as that migration made
/// them, one run in them) is upgraded in place: the run is kept with every value, the
/// columns added later read as not recorded, and new runs carry them.
#[test]
fn a_version_1_database_is_upgraded_keeping_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(drivelab_store::MIGRATIONS[0].sqlite)
            .unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
             INSERT INTO schema_migrations VALUES (1, 'initial', '2025-01-01T00:00:00Z');
             INSERT INTO runs (run_id, suite, started_at, tool_version, schema_version, host_name,
                 host_json, device_path, device_model, device_kind, config_hash, config_json, status)
             VALUES ('old-run-1', 'quick', '2025-01-02T12:00:00Z', '0.1.0', 1, 'rig7', '{}',
                 '/dev/sdb', 'Old Drive 1TB', 'block', 'sha256:1', '{}', 'complete');
             INSERT INTO metrics VALUES ('old-run-1', 0, 'quick.SEQ1M_Q8T1.read_mbps', 512.5, 'MB/s');",
        )
        .unwrap();
    }
    let mut store = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store
        .get_run("old-run-1")
        .unwrap()
        .expect("the old run is kept");
    assert_eq!(old.device_model.as_deref(), Some("Old Drive 1TB"));
    assert_eq!(old.metrics[0].value, 512.5);
    assert_eq!((old.device_connection, old.uploaded_by), (None, None));
    let mut new = common::run("new-run-2", "quick", "2025-02-01T12:00:00Z", None, None);
    new.device_connection = Some("USB 3.2 Gen 2, UAS".into());
    new.uploaded_by = Some("rig1".into());
    store.insert_run(&new).unwrap();
    let back = store.get_run("new-run-2").unwrap().unwrap();
    assert_eq!(back, new);
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].uploaded_by.as_deref(), Some("rig1"));
}

#[test]
fn rerecord_replaces_a_changed_bundle() {
    let (_dir, mut store) = sqlite_store();
    behaviour::rerecord_replaces_a_changed_bundle(&mut store);
}
