//! Shared fixtures: sample runs, and a real PostgreSQL server for the PostgreSQL tests.
#![allow(dead_code)]

use drivelab_store::{Metric, RunRecord, Store};
use serde_json::json;

/// A run with every field set; tweak what a test needs.
pub fn run(
    run_id: &str,
    suite: &str,
    started_at: &str,
    model: Option<&str>,
    serial: Option<&str>,
) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        suite: suite.into(),
        started_at: started_at.into(),
        finished_at: Some(started_at.replace("T12:", "T13:")),
        tool_version: "0.1.0".into(),
        schema_version: 1,
        host_name: "bench1".into(),
        host: json!({"kernel": "6.1.0", "cpus": 2, "memory_bytes": 25769803776u64}),
        device_path: "/dev/nvme0n1".into(),
        device_model: model.map(Into::into),
        device_serial: serial.map(Into::into),
        device_firmware: Some("4B2QGXA7".into()),
        device_capacity_bytes: Some(1_000_204_886_016),
        device_kind: "block".into(),
        device_connection: None,
        uploaded_by: None,
        config_hash: "sha256:9f2c".into(),
        config: json!({"size_bytes": 1073741824u64, "runs": 3, "mix_read_fraction": 0.7}),
        status: "complete".into(),
        metrics: vec![
            Metric::new(format!("{suite}.SEQ1M_Q8T1.read_mbps"), 3512.25, "MB/s"),
            Metric::new(format!("{suite}.SEQ1M_Q8T1.write_mbps"), 2987.5, "MB/s"),
            Metric::new(format!("{suite}.RND4K_Q1T1.read_iops"), 14230.0, "IOPS"),
        ],
        bundle_path: Some(format!("/var/lib/drivelab/runs/{run_id}")),
        bundle_json: None,
    }
}

/// Five runs over three drives and two suites; two share a start time.
pub fn sample_runs() -> Vec<RunRecord> {
    let mut runs = vec![
        run(
            "0b6f2c1e-aaaa-4d2a-9a77-000000000001",
            "quick",
            "2025-01-10T12:00:00Z",
            Some("Samsung SSD 980 PRO 1TB"),
            Some("S5GXNF0R123456"),
        ),
        run(
            "0b6f2c1e-bbbb-4d2a-9a77-000000000002",
            "quick",
            "2025-01-11T12:00:00Z",
            Some("WD_BLACK SN850X 2000GB"),
            Some("23140G801234"),
        ),
        run(
            "1c7a3d2f-cccc-4e3b-8b88-000000000003",
            "consistency",
            "2025-01-12T12:00:00Z",
            Some("Samsung SSD 870 EVO 1TB"),
            Some("S6PTNZ0R654321"),
        ),
        run(
            "1c7a3d2f-dddd-4e3b-8b88-000000000004",
            "quick",
            "2025-01-12T12:00:00Z",
            None,
            None,
        ),
        run(
            "2d8b4e3a-eeee-4f4c-9c99-000000000005",
            "consistency",
            "2025-01-13T12:00:00.500Z",
            Some("Samsung SSD 980 PRO 1TB"),
            Some("S5GXNF0R123456"),
        ),
    ];
    // Variety in the optional and JSON fields.
    runs[1].bundle_json = Some(
        json!({"schema_version": 1, "suite": "quick", "steps": [{"name": "SEQ1M_Q8T1", "read_mbps": 7012.5}], "note": "ünïcödé ✓"}),
    );
    runs[2].status = "interrupted".into();
    runs[2].finished_at = None;
    runs[2].metrics.clear();
    runs[3].device_kind = "file".into();
    runs[3].device_path = "/tmp/Äb/drivelab.dat".into();
    runs[3].device_firmware = None;
    runs[3].device_capacity_bytes = None;
    runs[3].bundle_path = None;
    runs[3].host = serde_json::Value::Null;
    runs[4].status = "failed".into();
    runs[4].metrics.push(Metric::new(
        "consistency.steady_state.iops_per_stddev",
        0.125,
        "ratio",
    ));
    runs
}

/// A store holding `sample_runs()`, inserted in the given order.
pub fn fill(store: &mut Store) -> Vec<RunRecord> {
    let runs = sample_runs();
    for r in &runs {
        store.insert_run(r).unwrap();
    }
    runs
}

mod pg;
pub use pg::pg_url;

/// `url` with a libpq option that puts every table into `schema`.
pub fn url_with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// A fresh, empty schema named after the test; returns the URL that uses it.
pub fn fresh_pg_schema(test: &str) -> String {
    let schema = format!("dlt_{test}");
    let mut client = postgres::Client::connect(pg_url(), postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to the test server {}: {e}", pg_url()));
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
        ))
        .unwrap();
    url_with_schema(pg_url(), &schema)
}

/// A store in a fresh PostgreSQL schema of its own.
pub fn pg_store(test: &str) -> Store {
    Store::open(&fresh_pg_schema(test)).unwrap()
}

/// A store in a fresh SQLite file; keep the TempDir alive as long as the store.
pub fn sqlite_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("results.sqlite").to_str().unwrap()).unwrap();
    (dir, store)
}

pub mod behaviour;
