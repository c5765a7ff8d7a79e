//! Behaviour every backend must show; each function takes fresh, empty stores.

use drivelab_store::{RunFilter, Store, StoreError, EXPORT_FORMAT};

use super::{fill, sample_runs};

fn ids(runs: &[drivelab_store::RunSummary]) -> Vec<&str> {
    runs.iter()
        .map(|r| &r.run_id[r.run_id.len() - 1..])
        .collect()
}

pub fn insert_and_get_round_trip(store: &mut Store) {
    let runs = fill(store);
    for r in &runs {
        let got = store.get_run(&r.run_id).unwrap().expect("stored run");
        assert_eq!(&got, r);
    }
}

pub fn list_filters_and_order(store: &mut Store) {
    let runs = fill(store);
    let list = |store: &mut Store, f: RunFilter| store.list_runs(&f).unwrap();

    // Newest first; equal start times fall back to run_id, descending.
    let all = list(store, RunFilter::default());
    assert_eq!(ids(&all), ["5", "4", "3", "2", "1"]);
    for summary in &all {
        let record = runs.iter().find(|r| r.run_id == summary.run_id).unwrap();
        assert_eq!(summary, &record.summary());
    }
    assert_eq!(all[0].metrics.len(), 4);
    assert_eq!(
        all[0].metrics[3].name,
        "consistency.steady_state.iops_per_stddev"
    );
    assert!(all[2].metrics.is_empty());

    let suite = |s: &str| RunFilter {
        suite: Some(s.into()),
        ..Default::default()
    };
    let device = |d: &str| RunFilter {
        device: Some(d.into()),
        ..Default::default()
    };
    assert_eq!(ids(&list(store, suite("quick"))), ["4", "2", "1"]);
    assert_eq!(ids(&list(store, suite("consistency"))), ["5", "3"]);
    assert!(list(store, suite("Quick")).is_empty());
    // Model, serial or path, ASCII case-insensitive substring.
    assert_eq!(ids(&list(store, device("samsung"))), ["5", "3", "1"]);
    assert_eq!(ids(&list(store, device("980 PRO"))), ["5", "1"]);
    assert_eq!(ids(&list(store, device("s6ptnz"))), ["3"]);
    // Or the device's path: a file target has neither model nor serial.
    assert_eq!(ids(&list(store, device("drivelab.dat"))), ["4"]);
    // Case folds in ASCII only, on both engines alike.
    assert_eq!(ids(&list(store, device("/ÄB/"))), ["4"]);
    assert!(list(store, device("/äb/")).is_empty());
    assert_eq!(ids(&list(store, device("NVME0N1"))), ["5", "3", "2", "1"]);
    // LIKE wildcards in the text are literal characters.
    assert_eq!(ids(&list(store, device("_"))), ["2"]);
    assert!(list(store, device("%")).is_empty());
    let status = RunFilter {
        status: Some("failed".into()),
        ..Default::default()
    };
    assert_eq!(ids(&list(store, status)), ["5"]);
    let limited = RunFilter {
        limit: Some(2),
        ..Default::default()
    };
    assert_eq!(ids(&list(store, limited)), ["5", "4"]);
    let combined = RunFilter {
        suite: Some("consistency".into()),
        device: Some("SAMSUNG".into()),
        status: None,
        limit: Some(1),
    };
    assert_eq!(ids(&list(store, combined)), ["5"]);
}

pub fn get_by_unique_prefix(store: &mut Store) {
    let runs = fill(store);
    assert_eq!(store.get_run("0b6f2c1e-a").unwrap().unwrap(), runs[0]);
    assert_eq!(store.get_run("2").unwrap().unwrap(), runs[4]);
    assert_eq!(
        store.resolve_run_id("1c7a3d2f-d").unwrap().as_deref(),
        Some(runs[3].run_id.as_str())
    );
    match store.get_run("0b6f2c1e") {
        Err(StoreError::AmbiguousId { prefix, candidates }) => {
            assert_eq!(prefix, "0b6f2c1e");
            assert_eq!(candidates, [runs[0].run_id.clone(), runs[1].run_id.clone()]);
        }
        other => panic!("expected an ambiguous prefix, got {other:?}"),
    }
    let message = store.get_run("1c7a").unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "run id prefix \"1c7a\" is ambiguous: it matches {}, {}",
            runs[2].run_id, runs[3].run_id
        )
    );
    // Prefixes are case-sensitive, like the ids.
    assert!(store.get_run("0B6F2C1E-A").unwrap().is_none());
    assert!(store.get_run("ffff").unwrap().is_none());
    assert!(store.get_run("no such id!").unwrap().is_none());
    assert_eq!(
        store.get_run("").unwrap_err().to_string(),
        "invalid run record: run id is empty"
    );
}

pub fn duplicate_insert_is_an_error(store: &mut Store) {
    let runs = fill(store);
    let mut again = runs[0].clone();
    again.suite = "other".into();
    let err = store.insert_run(&again).unwrap_err();
    assert!(matches!(err, StoreError::DuplicateRun(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "run 0b6f2c1e-aaaa-4d2a-9a77-000000000001 is already in the results database"
    );
    // The stored run is untouched and nothing was added.
    assert_eq!(store.get_run(&runs[0].run_id).unwrap().unwrap(), runs[0]);
    assert_eq!(
        store.list_runs(&RunFilter::default()).unwrap().len(),
        runs.len()
    );
}

pub fn invalid_records_write_nothing(store: &mut Store) {
    let mut bad = sample_runs().remove(0);
    bad.metrics
        .push(drivelab_store::Metric::new("x", f64::INFINITY, "MB/s"));
    let message = store.insert_run(&bad).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "invalid run record {}: metric x is inf (must be finite)",
            bad.run_id
        )
    );
    assert!(store.list_runs(&RunFilter::default()).unwrap().is_empty());
}

pub fn delete_by_prefix(store: &mut Store) {
    let runs = fill(store);
    assert_eq!(
        store.delete_run("2d8b").unwrap().as_deref(),
        Some(runs[4].run_id.as_str())
    );
    assert!(store.get_run(&runs[4].run_id).unwrap().is_none());
    assert_eq!(store.delete_run("2d8b").unwrap(), None);
    assert!(
        store.delete_run("0b6f").is_err(),
        "ambiguous prefixes delete nothing"
    );
    let left = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(ids(&left), ["4", "3", "2", "1"]);
    // The id can be used again once deleted.
    store.insert_run(&runs[4]).unwrap();
    assert_eq!(store.get_run(&runs[4].run_id).unwrap().unwrap(), runs[4]);
}

pub fn export_import_round_trip(store: &mut Store, fresh: &mut Store) {
    let runs = fill(store);
    let doc = store.export_runs(&RunFilter::default()).unwrap();
    assert_eq!(doc["format"], EXPORT_FORMAT);
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["run_count"], 5);
    assert_eq!(
        doc["runs"][0]["run_id"],
        runs[4].run_id.as_str(),
        "newest first"
    );

    let report = fresh.import_runs(&doc).unwrap();
    assert_eq!(report.imported, 5);
    assert_eq!(report.skipped, 0);
    for r in &runs {
        assert_eq!(&fresh.get_run(&r.run_id).unwrap().unwrap(), r);
    }
    assert_eq!(fresh.export_runs(&RunFilter::default()).unwrap(), doc);
    assert_eq!(
        fresh.list_runs(&RunFilter::default()).unwrap(),
        store.list_runs(&RunFilter::default()).unwrap()
    );

    // Idempotent: a second import skips everything and changes nothing.
    let again = fresh.import_runs(&doc).unwrap();
    assert_eq!((again.imported, again.skipped), (0, 5));
    assert_eq!(again.skipped_run_ids[0], runs[4].run_id);
    assert_eq!(fresh.export_runs(&RunFilter::default()).unwrap(), doc);

    // A filtered export; importing it into the source skips all of it.
    let quick = RunFilter {
        suite: Some("quick".into()),
        ..Default::default()
    };
    let part = store.export_runs(&quick).unwrap();
    assert_eq!(part["run_count"], 3);
    let report = store.import_runs(&part).unwrap();
    assert_eq!((report.imported, report.skipped), (0, 3));
}

pub fn import_is_all_or_nothing(store: &mut Store) {
    let mut runs = sample_runs();
    runs[3].status = "exploded".into();
    let doc = serde_json::json!({"format": EXPORT_FORMAT, "format_version": 1, "runs": runs});
    let message = store.import_runs(&doc).unwrap_err().to_string();
    assert!(
        message.starts_with("invalid results export: run 4 (1c7a3d2f-dddd-4e3b-8b88-000000000004): invalid run record"),
        "{message}"
    );
    assert!(store.list_runs(&RunFilter::default()).unwrap().is_empty());
}

pub fn pages_are_filtered_sorted_and_counted(store: &mut Store) {
    use drivelab_store::{RunQuery, SortKey, TextMatch};
    fill(store);
    let page = |store: &mut Store, q: RunQuery| {
        let p = store.page_runs(&q).unwrap();
        let ids: Vec<String> = ids(&p.runs).into_iter().map(String::from).collect();
        (p.total, ids)
    };
    let q = RunQuery::default;
    let all = store.page_runs(&q()).unwrap();
    assert_eq!(
        (all.total, ids(&all.runs)),
        (5, vec!["5", "4", "3", "2", "1"])
    );
    assert_eq!(all.runs[0].metrics.len(), 4, "metrics come with the page");
    let (total, ids2) = page(
        store,
        RunQuery {
            offset: 2,
            limit: 2,
            ..q()
        },
    );
    assert_eq!((total, ids2), (5, vec!["3".to_string(), "2".into()]));
    let (total, got) = page(
        store,
        RunQuery {
            model: Some(TextMatch::Contains("SAMSUNG".into())),
            ..q()
        },
    );
    assert_eq!(
        (total, got),
        (3, vec!["5".to_string(), "3".into(), "1".into()])
    );
    let drive = RunQuery {
        model: Some(TextMatch::Exact("Samsung SSD 980 PRO 1TB".into())),
        serial: Some(TextMatch::Exact("S5GXNF0R123456".into())),
        descending: false,
        ..q()
    };
    assert_eq!(page(store, drive).1, ["1", "5"]);
    assert!(page(
        store,
        RunQuery {
            model: Some(TextMatch::Exact("samsung ssd 980 pro 1tb".into())),
            ..q()
        }
    )
    .1
    .is_empty());
    // Missing values sort last either way; ties fall back to the start time.
    let by = |key: SortKey, descending: bool| RunQuery {
        sort: key,
        descending,
        ..q()
    };
    assert_eq!(
        page(store, by(SortKey::Model, false)).1,
        ["3", "1", "5", "2", "4"]
    );
    assert_eq!(
        page(store, by(SortKey::Capacity, true)).1,
        ["5", "3", "2", "1", "4"]
    );
    assert_eq!(
        page(store, by(SortKey::Firmware, true)).1,
        ["5", "3", "2", "1", "4"]
    );
    assert_eq!(
        page(
            store,
            RunQuery {
                status: Some("failed".into()),
                ..q()
            }
        )
        .1,
        ["5"]
    );
    assert_eq!(
        page(
            store,
            RunQuery {
                since: Some("2025-01-12".into()),
                ..q()
            }
        )
        .1,
        ["5", "4", "3"]
    );
    assert_eq!(
        page(
            store,
            RunQuery {
                until: Some("2025-01-11T12:00:00Z".into()),
                ..q()
            }
        )
        .1,
        ["1"]
    );
    let (total, _) = page(
        store,
        RunQuery {
            capacity_bytes: Some(1_000_204_886_016),
            ..q()
        },
    );
    assert_eq!(total, 4);
    let (total, got) = page(
        store,
        RunQuery {
            host: Some(TextMatch::Contains("%".into())),
            ..q()
        },
    );
    assert_eq!(
        (total, got.len()),
        (0, 0),
        "LIKE wildcards in a filter are literal"
    );
}

/// A bundle recorded before it was complete (a powerloss run before its check) and
/// recorded again after: the second record replaces the first, whole; recording the same
/// content again changes nothing.
pub fn rerecord_replaces_a_changed_bundle(store: &mut Store) {
    use drivelab_store::{Metric, Recorded};
    let runs = fill(store);
    let mut first = sample_runs().remove(2);
    first.run_id = "0b6f2c1e-aaaa-4d2a-9a77-0000000000ff".into();
    first.bundle_json = Some(serde_json::json!({"status": "running", "summary": null}));
    assert_eq!(store.record_run(&first).unwrap(), Recorded::Added);
    assert_eq!(store.record_run(&first).unwrap(), Recorded::Unchanged);

    let mut checked = first.clone();
    checked.status = "complete".into();
    checked.finished_at = Some("2025-01-31T14:00:00Z".into());
    checked.metrics = vec![Metric::new("checked", 4096.0, "blocks")];
    checked.bundle_json =
        Some(serde_json::json!({"status": "complete", "summary": {"verdict": "honoured"}}));
    assert_eq!(store.record_run(&checked).unwrap(), Recorded::Replaced);
    assert_eq!(store.get_run(&first.run_id).unwrap().unwrap(), checked);
    let info = store.bundle_info(&first.run_id).unwrap().unwrap();
    let text = serde_json::to_string(checked.bundle_json.as_ref().unwrap()).unwrap();
    assert_eq!(info.bytes, Some(text.len() as u64));
    let summary = store
        .list_runs(&RunFilter::default())
        .unwrap()
        .into_iter()
        .find(|r| r.run_id == first.run_id)
        .unwrap();
    assert_eq!(summary.status, "complete");
    assert_eq!(summary.metrics, checked.metrics);
    assert_eq!(
        store.list_runs(&RunFilter::default()).unwrap().len(),
        runs.len() + 1
    );
    // The export holds the new document only.
    let export = store
        .export_runs(&RunFilter::default())
        .unwrap()
        .to_string();
    assert!(!export.contains("\"running\""), "{export}");

    // A record that fails its checks replaces nothing.
    let mut bad = checked.clone();
    bad.status = "done".into();
    bad.bundle_json = Some(serde_json::json!({"status": "other"}));
    assert!(store.record_run(&bad).is_err());
    assert_eq!(store.get_run(&first.run_id).unwrap().unwrap(), checked);
    // A record without a run.json never replaces a stored one.
    let mut bare = checked.clone();
    bare.bundle_json = None;
    bare.status = "failed".into();
    assert_eq!(store.record_run(&bare).unwrap(), Recorded::Unchanged);
    assert_eq!(store.get_run(&first.run_id).unwrap().unwrap(), checked);
}
