//! A result bundle's database record: its identity (a stable id derived from the bundle),
//! the device, host, tool version, config hash, headline metrics and its whole `run.json`.
//! One mapping for `drivelab run`, `db record`, `db push` and the server's uploads, so a
//! bundle recorded locally and uploaded has the same id everywhere.

use drivelab_engine::target::TargetKind;
use drivelab_store::{Metric, RunRecord};
use drivelab_suites::bundle::{BundleStatus, RunDoc};
use drivelab_suites::runner::summary_of;
use sha2::{Digest, Sha256};

/// The run id of a bundle: 16 hex digits of a hash of its identity (creation time,
/// host, target, suite, config hash), so recording one bundle twice finds the same run.
pub fn run_id(doc: &RunDoc) -> String {
    let mut h = Sha256::new();
    for part in [
        doc.created_at.as_str(),
        doc.host.hostname.as_str(),
        doc.target.path.as_str(),
        doc.suite.name(),
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

/// Why a bundle may not be recorded (or uploaded) yet: a powerloss run has its result
/// only after its check (`summary.analysis` is the check's).
/// (An analysis that is not its suite's is no unchecked run: the record's own check
/// refuses it for what it is.)
pub fn not_recordable(doc: &RunDoc) -> Option<&'static str> {
    use drivelab_suites::powerloss::Outcome;
    if doc.suite != drivelab_suites::SuiteKind::Powerloss {
        return None;
    }
    let foreign = doc
        .summary
        .as_ref()
        .is_some_and(|s| drivelab_suites::saved::check_analysis(s, doc.suite).is_err());
    let unchecked = Outcome::of(doc.summary.as_ref()) == Outcome::NotChecked;
    (unchecked && !foreign)
        .then_some("check it first: drivelab run powerloss --check JOURNAL TARGET")
}

/// When a complete run finished: its last step's end (an import's steps end when fio's
/// jobs did, which fio's results give in any order), else, for a run drivelab made, when
/// its bundle was last written; None for an import whose results do not say when fio
/// ran (the import's own time is not fio's end).
fn finished_at(doc: &RunDoc) -> Option<String> {
    let last_step = doc
        .steps
        .iter()
        .filter_map(|s| s.finished_at.as_deref())
        .filter_map(|t| Some((humantime::parse_rfc3339_weak(t).ok()?, t)))
        .max_by_key(|(at, _)| *at)
        .map(|(_, t)| t.to_string());
    let imported = drivelab_suites::fio::import::is_import(doc);
    last_step.or_else(|| (!imported).then(|| doc.updated_at.clone()))
}

/// The database record of the bundle whose `run.json` is `doc`; `bundle_path` is where
/// its directory is on the recording machine (None for an upload).
/// A bundle whose saved analysis is not of its suite's type is refused (its suite was
/// changed by hand: it would be stored and shown as an empty section).
pub fn run_record(doc: &RunDoc, bundle_path: Option<String>) -> Result<RunRecord, String> {
    if let Some(summary) = &doc.summary {
        drivelab_suites::saved::check_analysis(summary, doc.suite)?;
    }
    let t = &doc.target;
    let mut metrics: Vec<Metric> = Vec::new();
    for m in summary_of(doc).map(|s| s.metrics).unwrap_or_default() {
        if m.value.is_finite() && !metrics.iter().any(|x| x.name == m.name) {
            metrics.push(Metric::new(m.name, m.value, m.unit));
        }
    }
    let finished_at = match doc.status {
        BundleStatus::Complete => finished_at(doc),
        _ => None,
    };
    let bundle_json = serde_json::to_value(doc).map_err(|e| e.to_string())?;
    Ok(RunRecord {
        run_id: run_id(doc),
        suite: doc.suite.to_string(),
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
        device_capacity_bytes: t.capacity_bytes,
        device_kind: kind(t.kind).to_string(),
        device_connection: drivelab_suites::bundle::connection(doc),
        uploaded_by: None,
        config_hash: doc.config_hash.clone(),
        config: serde_json::json!({ "suite": doc.suite, "knobs": doc.knobs }),
        status: status(doc.status).to_string(),
        metrics,
        bundle_path,
        bundle_json: Some(bundle_json),
    })
}

#[cfg(test)]
mod tests {
    use drivelab_suites::fio::import::{import_set, Body, Input, Options};

    fn import(text: String) -> drivelab_suites::RunDoc {
        let input = Input {
            body: Body::Text(text),
            source: "r.json".into(),
            dir: None,
        };
        import_set(&[input], &Options::default()).unwrap()
    }

    /// An import's end is fio's (the result's `timestamp_ms`: each job's start is it
    /// less the job's runtime, its end that start plus the runtime), not its start again;
    /// unknown (null) when the result does not say when fio ran, not the import's time.
    #[test]
    fn an_import_finished_when_fio_did_or_is_not_known_to_have() {
        let text = include_str!("../../../fuzz/corpus/fio_result/null-json.json");
        let doc = import(text.to_string());
        let r = super::run_record(&doc, None).unwrap();
        assert_eq!(r.started_at, "2026-11-24T20:28:03.631Z");
        assert_eq!(r.finished_at.as_deref(), Some("2026-11-24T20:28:03.636Z"));
        // The bundle was written at the import, later than fio's run.
        assert!(doc.updated_at > r.finished_at.clone().unwrap());
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        for k in ["timestamp", "timestamp_ms", "time"] {
            v.as_object_mut().unwrap().remove(k);
        }
        let doc = import(v.to_string());
        let r = super::run_record(&doc, None).unwrap();
        assert_eq!(r.finished_at, None);
        assert!(doc.steps.iter().all(|s| s.started_at.is_none()));
        // Started: the one time known, the import's.
        assert_eq!(r.started_at, doc.updated_at);
    }
}
