//! The results database on a real PostgreSQL server, and its agreement with SQLite.
//!
//! The server comes from `DRIVELAB_TEST_PG_URL`, else from `scripts/pg-test-server.sh`;
//! these tests fail when neither gives one. Each test works in a schema of its own.

mod common;

use std::net::TcpListener;

use common::{behaviour, fill, fresh_pg_schema, pg_store, pg_url, sqlite_store};
use drivelab_store::{Backend, RunFilter, Store, StoreError, SCHEMA_VERSION};

#[test]
fn insert_and_get_round_trip() {
    let mut store = pg_store("insert_get");
    assert_eq!(store.backend(), Backend::Postgres);
    assert!(
        !store.location().contains("drivelab_test_pw"),
        "{}",
        store.location()
    );
    behaviour::insert_and_get_round_trip(&mut store);
}

#[test]
fn list_filters_and_order() {
    behaviour::list_filters_and_order(&mut pg_store("list_filters"));
}

#[test]
fn get_by_unique_prefix() {
    behaviour::get_by_unique_prefix(&mut pg_store("prefix"));
}

#[test]
fn duplicate_insert_is_an_error() {
    behaviour::duplicate_insert_is_an_error(&mut pg_store("duplicate"));
}

#[test]
fn invalid_records_write_nothing() {
    behaviour::invalid_records_write_nothing(&mut pg_store("invalid"));
}

#[test]
fn delete_by_prefix() {
    behaviour::delete_by_prefix(&mut pg_store("delete"));
}

#[test]
fn export_import_round_trip() {
    let mut store = pg_store("export_src");
    let mut fresh = pg_store("export_dst");
    behaviour::export_import_round_trip(&mut store, &mut fresh);
}

#[test]
fn import_is_all_or_nothing() {
    behaviour::import_is_all_or_nothing(&mut pg_store("import_atomic"));
}

#[test]
fn sqlite_and_postgres_return_the_same_rows() {
    let (_dir, mut lite) = sqlite_store();
    let mut pg = pg_store("same_rows");
    let runs = fill(&mut lite);
    fill(&mut pg);

    let filters = [
        RunFilter::default(),
        RunFilter {
            suite: Some("quick".into()),
            ..Default::default()
        },
        RunFilter {
            device: Some("samsung".into()),
            limit: Some(2),
            ..Default::default()
        },
        RunFilter {
            device: Some("_".into()),
            ..Default::default()
        },
        RunFilter {
            status: Some("interrupted".into()),
            ..Default::default()
        },
        RunFilter {
            limit: Some(0),
            ..Default::default()
        },
    ];
    for filter in &filters {
        let a = lite.list_runs(filter).unwrap();
        let b = pg.list_runs(filter).unwrap();
        assert_eq!(a, b, "list_runs({filter:?})");
        // Byte-identical once serialised, so floats match exactly too.
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        assert_eq!(
            lite.export_runs(filter).unwrap(),
            pg.export_runs(filter).unwrap(),
            "export_runs({filter:?})"
        );
    }
    for r in &runs {
        for key in [r.run_id.as_str(), &r.run_id[..10]] {
            assert_eq!(
                lite.get_run(key).unwrap(),
                pg.get_run(key).unwrap(),
                "get_run({key})"
            );
        }
    }
    assert_eq!(
        lite.get_run("0b6f").unwrap_err().to_string(),
        pg.get_run("0b6f").unwrap_err().to_string()
    );

    // An export from one engine imports into the other unchanged.
    let mut pg2 = pg_store("same_rows_import");
    let doc = lite.export_runs(&RunFilter::default()).unwrap();
    assert_eq!(pg2.import_runs(&doc).unwrap().imported, runs.len());
    assert_eq!(pg2.export_runs(&RunFilter::default()).unwrap(), doc);
}

fn pg_migration_rows(url: &str) -> Vec<(i64, String, String)> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query(
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

#[test]
fn migrations_run_once_and_are_recorded() {
    let url = fresh_pg_schema("migrations");
    let mut store = Store::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    fill(&mut store);
    drop(store);
    let first = pg_migration_rows(&url);
    assert_eq!(first.len(), SCHEMA_VERSION as usize);
    assert_eq!((first[0].0, first[0].1.as_str()), (1, "initial"));

    let mut store = Store::open(&url).unwrap();
    assert_eq!(pg_migration_rows(&url), first);
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 5);

    // The tables live in the test's own schema, not in public.
    let mut client = postgres::Client::connect(pg_url(), postgres::NoTls).unwrap();
    let row = client
        .query_one("SELECT table_schema FROM information_schema.tables WHERE table_name = 'runs' AND table_schema = 'dlt_migrations'", &[])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "dlt_migrations");
}

#[test]
fn concurrent_first_opens_migrate_once() {
    let url = fresh_pg_schema("concurrent");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Store::open(&url).map(|_| ()))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    assert_eq!(pg_migration_rows(&url).len(), SCHEMA_VERSION as usize);
}

#[test]
fn a_newer_schema_is_refused() {
    let url = fresh_pg_schema("newer");
    drop(Store::open(&url).unwrap());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (42, 'future', '2030-01-01T00:00:00Z')", &[])
        .unwrap();
    let message = Store::open(&url).unwrap_err().to_string();
    assert!(
        message.contains("has schema version 42, newer than this drivelab understands"),
        "{message}"
    );
    assert!(!message.contains("drivelab_test_pw"), "{message}");
}

/// A loopback port that nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn unreachable_server_is_connection_refused_without_password() {
    let port = closed_port();
    let err = Store::open(&format!("postgres://u:s3cret@127.0.0.1:{port}/db")).unwrap_err();
    assert!(matches!(err, StoreError::Connect { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot connect to PostgreSQL at postgres://u@127.0.0.1:{port}/db: connection refused"
        )
    );
    let err = Store::open(&format!(
        "postgresql://127.0.0.1:{port}/db?user=u&password=s3cret"
    ))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot connect to PostgreSQL at postgresql://127.0.0.1:{port}/db?user=u: connection refused")
    );
}

/// `url` with its password (added if absent) replaced by `password`.
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, host) = rest.split_once('@').expect("the test URL names a user");
    let user = userinfo.split(':').next().unwrap();
    format!("{scheme}://{user}:{password}@{host}")
}

#[test]
fn login_failures_name_the_cause_without_password() {
    let url = pg_url();
    let wrong = with_password(url, "not-the-password");
    let shown = drivelab_store::redact_url(&wrong);
    match Store::open(&wrong) {
        Err(err) => {
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("cannot connect to PostgreSQL at {shown}: password authentication failed for user")),
                "{message}"
            );
            assert!(!message.contains("not-the-password"), "{message}");
        }
        // Only a server that trusts every loopback login (not the script's) gets here.
        Ok(_) => eprintln!("{shown} accepts any password; skipping the wrong-password check"),
    }

    let (base, _) = url.split('?').next().unwrap().rsplit_once('/').unwrap();
    let missing_db = format!("{base}/drivelab_no_such_db");
    let message = Store::open(&missing_db).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "cannot connect to PostgreSQL at {}: database \"drivelab_no_such_db\" does not exist",
            drivelab_store::redact_url(&missing_db)
        )
    );
}

#[test]
fn pages_are_filtered_sorted_and_counted() {
    behaviour::pages_are_filtered_sorted_and_counted(&mut pg_store("pages"));
}

/// A schema made by a build of version 1 (one run in it) is upgraded in place: the run is
/// kept, the page indexes are made, and pages sort as before.
#[test]
fn a_version_1_schema_is_upgraded_keeping_its_runs() {
    let url = fresh_pg_schema("upgrade_v1");
    let schema = "dlt_upgrade_v1";
    let mut client = postgres::Client::connect(pg_url(), postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "SET search_path = {schema};
             {}
             CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
             INSERT INTO schema_migrations VALUES (1, 'initial', '2025-01-01T00:00:00Z');
             INSERT INTO runs (run_id, suite, started_at, tool_version, schema_version, host_name,
                 host_json, device_path, device_model, device_kind, config_hash, config_json, status)
             VALUES ('old-run-1', 'quick', '2025-01-02T12:00:00Z', '0.1.0', 1, 'rig7', '{{}}',
                 '/dev/sdb', 'Old Drive 1TB', 'block', 'sha256:1', '{{}}', 'complete');",
            drivelab_store::MIGRATIONS[0].postgres
        ))
        .unwrap();
    let mut store = Store::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store
        .get_run("old-run-1")
        .unwrap()
        .expect("the old run is kept");
    assert_eq!(old.device_model.as_deref(), Some("Old Drive 1TB"));
    assert_eq!(old.device_connection, None);
    let indexes: Vec<String> = client
        .query(
            "SELECT indexname::text FROM pg_indexes WHERE schemaname = $1 ORDER BY 1",
            &[&schema],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for want in ["runs_page_started", "runs_page_model_desc", "runs_drive"] {
        assert!(
            indexes.iter().any(|i| i == want),
            "{want} not in {indexes:?}"
        );
    }
    store
        .insert_run(&common::run(
            "new-run-2",
            "quick",
            "2025-02-01T12:00:00Z",
            None,
            None,
        ))
        .unwrap();
    let page = store
        .page_runs(&drivelab_store::RunQuery {
            sort: drivelab_store::SortKey::Model,
            descending: true,
            ..Default::default()
        })
        .unwrap();
    let ids: Vec<&str> = page.runs.iter().map(|r| r.run_id.as_str()).collect();
    // A run with no model sorts last either way.
    assert_eq!(ids, ["old-run-1", "new-run-2"]);
}

#[test]
fn rerecord_replaces_a_changed_bundle() {
    behaviour::rerecord_replaces_a_changed_bundle(&mut pg_store("rerecord"));
}
