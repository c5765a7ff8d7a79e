//! Times the results database on a realistic history: `store_bench LOCATION [RUNS]`.
//!
//! LOCATION is an empty SQLite path or a PostgreSQL URL (use a throwaway schema, e.g.
//! `...?options=-csearch_path%3Dbench`). Prints one line per operation.
use std::time::Instant;

use drivelab_store::{Metric, RunFilter, RunRecord, Store};
use serde_json::json;

fn record(i: usize) -> RunRecord {
    let drive = i % 7;
    RunRecord {
        run_id: format!(
            "{:08x}-bench-4000-8000-{:012x}",
            i * 2_654_435_761 % (1 << 32),
            i
        ),
        suite: if i.is_multiple_of(3) {
            "consistency"
        } else {
            "quick"
        }
        .into(),
        started_at: format!(
            "2025-{:02}-{:02}T{:02}:{:02}:00Z",
            1 + i % 12,
            1 + i % 28,
            i % 24,
            i % 60
        ),
        finished_at: None,
        tool_version: "0.1.0".into(),
        schema_version: 1,
        host_name: "bench1".into(),
        host: json!({"kernel": "6.1.0", "cpus": 2}),
        device_path: format!("/dev/nvme{drive}n1"),
        device_model: Some(format!("Model {drive} 1TB")),
        device_serial: Some(format!("SERIAL{drive:04}")),
        device_firmware: Some("1.0".into()),
        device_capacity_bytes: Some(1_000_204_886_016),
        device_kind: "block".into(),
        device_connection: None,
        uploaded_by: None,
        config_hash: "sha256:9f2c".into(),
        config: json!({"size_bytes": 1_073_741_824u64, "runs": 3}),
        status: "complete".into(),
        metrics: (0..12)
            .map(|m| {
                Metric::new(
                    format!("quick.step{m}.read_mbps"),
                    1000.0 + (i * m) as f64,
                    "MB/s",
                )
            })
            .collect(),
        bundle_path: None,
        bundle_json: Some(
            json!({"steps": (0..20).map(|s| json!({"step": s, "series": vec![1.5; 60]})).collect::<Vec<_>>()}),
        ),
    }
}

fn timed<T>(label: &str, count: usize, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let s = start.elapsed().as_secs_f64();
    println!(
        "{label:<32} {:>9.1} ms total {:>9.3} ms each",
        s * 1e3,
        s * 1e3 / count.max(1) as f64
    );
    out
}

fn main() -> Result<(), drivelab_store::StoreError> {
    let mut args = std::env::args().skip(1);
    let location = args.next().expect("usage: store_bench LOCATION [RUNS]");
    let n: usize = args
        .next()
        .map_or(1000, |s| s.parse().expect("RUNS is a number"));
    let mut store = timed("open (migrate)", 1, || Store::open(&location))?;
    let runs: Vec<RunRecord> = (0..n).map(record).collect();
    timed("insert_run", n, || {
        runs.iter().try_for_each(|r| store.insert_run(r))
    })?;
    let all = timed("list_runs (all)", 1, || {
        store.list_runs(&RunFilter::default())
    })?;
    assert_eq!(all.len(), n);
    let filter = RunFilter {
        suite: Some("quick".into()),
        device: Some("model 3".into()),
        limit: Some(20),
        ..Default::default()
    };
    timed("list_runs (suite+device+limit)", 1, || {
        store.list_runs(&filter)
    })?;
    timed("get_run by 10-char prefix", 100, || {
        (0..100).try_for_each(|i| {
            store
                .get_run(&runs[i * n / 100].run_id[..10])
                .map(|r| assert!(r.is_some()))
        })
    })?;
    let doc = timed("export_runs (all)", 1, || {
        store.export_runs(&RunFilter::default())
    })?;
    println!(
        "export size: {} bytes",
        serde_json::to_string(&doc).unwrap().len()
    );
    let report = timed("import_runs (all skipped)", 1, || store.import_runs(&doc))?;
    assert_eq!(report.skipped, n);
    Ok(())
}
