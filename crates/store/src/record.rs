//! What is stored about a run, what a listing returns, and how listings are filtered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::StoreError;

/// One headline number of a run, e.g. `quick.SEQ1M_Q8T1.read_mbps` = 1834.2 MB/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Dotted name, unique within a run.
    pub name: String,
    /// The value; must be finite.
    pub value: f64,
    /// Unit, e.g. "MB/s", "IOPS", "us".
    pub unit: String,
}

impl Metric {
    /// A metric from its parts.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
        }
    }
}

/// Everything the database keeps about one finished run (one result bundle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Unique id chosen by the caller (UUID-like: letters, digits, `-`, `_`, `.`).
    pub run_id: String,
    /// The suite that was run, e.g. "quick".
    pub suite: String,
    /// Start time, RFC 3339 UTC (`2025-01-31T12:00:00Z`).
    pub started_at: String,
    /// End time, RFC 3339 UTC; absent when the run did not finish.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// drivelab version that produced the run.
    pub tool_version: String,
    /// Version of the run.json schema of the bundle.
    pub schema_version: u32,
    /// Host name of the machine that ran it.
    pub host_name: String,
    /// Host description (CPU, kernel, ...), as recorded in the bundle.
    #[serde(default)]
    pub host: Value,
    /// Path of the device or file tested.
    pub device_path: String,
    /// Device model, when known.
    #[serde(default)]
    pub device_model: Option<String>,
    /// Device serial number, when known.
    #[serde(default)]
    pub device_serial: Option<String>,
    /// Device firmware revision, when known.
    #[serde(default)]
    pub device_firmware: Option<String>,
    /// Device capacity in bytes, when known.
    #[serde(default)]
    pub device_capacity_bytes: Option<u64>,
    /// What was tested: "file", "block", "null" or "sim".
    pub device_kind: String,
    /// How the drive was connected ("USB 3.2 Gen 2, UAS", "PCIe 8 GT/s x4"), when known.
    #[serde(default)]
    pub device_connection: Option<String>,
    /// The uploader (a name of the server's tokens file) that sent it; None when it was
    /// recorded on the machine that holds the database.
    #[serde(default)]
    pub uploaded_by: Option<String>,
    /// Hash of the effective configuration, to group comparable runs.
    pub config_hash: String,
    /// The effective configuration.
    #[serde(default)]
    pub config: Value,
    /// "complete", "interrupted" or "failed".
    pub status: String,
    /// Headline numbers, in the order given.
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// Where the bundle directory was when the run was recorded.
    #[serde(default)]
    pub bundle_path: Option<String>,
    /// The whole run.json, when asked to keep it.
    #[serde(default)]
    pub bundle_json: Option<Value>,
}

/// The identity of a run plus its headline numbers: one row of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Unique run id.
    pub run_id: String,
    /// Suite name.
    pub suite: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC.
    pub finished_at: Option<String>,
    /// "complete", "interrupted" or "failed".
    pub status: String,
    /// drivelab version.
    pub tool_version: String,
    /// Host name.
    pub host_name: String,
    /// Device path.
    pub device_path: String,
    /// Device model.
    pub device_model: Option<String>,
    /// Device serial number.
    pub device_serial: Option<String>,
    /// Device firmware revision.
    pub device_firmware: Option<String>,
    /// Device capacity in bytes.
    pub device_capacity_bytes: Option<u64>,
    /// "file", "block", "null" or "sim".
    pub device_kind: String,
    /// How the drive was connected, when known.
    pub device_connection: Option<String>,
    /// Who uploaded it (None: recorded locally).
    pub uploaded_by: Option<String>,
    /// Configuration hash.
    pub config_hash: String,
    /// Headline numbers.
    pub metrics: Vec<Metric>,
}

/// What the database knows of a run's stored run.json without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleInfo {
    /// The run's full id.
    pub run_id: String,
    /// Whether the run.json is stored.
    pub has_bundle: bool,
    /// Its size in bytes as stored (None: not recorded).
    pub bytes: Option<u64>,
    /// The SHA-256 of the stored text, lowercase hex (None for runs stored before schema
    /// version 4; such a run is replaced only by a record with another run.json, which
    /// stores its hash).
    pub sha256: Option<String>,
}

/// Which runs a listing or export returns. The default returns every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only runs of this suite (exact match).
    pub suite: Option<String>,
    /// Only runs whose device model, serial or path contains this text (ASCII case-insensitive).
    pub device: Option<String>,
    /// Only runs with this status (exact match).
    pub status: Option<String>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Number of runs added.
    pub imported: usize,
    /// Number of runs skipped because their run_id was already stored.
    pub skipped: usize,
    /// Ids of the runs added, in document order.
    pub imported_run_ids: Vec<String>,
    /// Ids of the runs skipped, in document order.
    pub skipped_run_ids: Vec<String>,
}

/// Allowed values of [`RunRecord::status`].
pub const STATUSES: [&str; 3] = ["complete", "interrupted", "failed"];
/// Allowed values of [`RunRecord::device_kind`].
pub const DEVICE_KINDS: [&str; 4] = ["file", "block", "null", "sim"];
/// Longest accepted run id.
pub const MAX_RUN_ID_LEN: usize = 128;

/// Checks that a run id is non-empty and made of letters, digits, `-`, `_` and `.`.
pub(crate) fn check_run_id(run_id: &str) -> Result<(), StoreError> {
    if run_id.is_empty() {
        return Err(StoreError::invalid("", "run_id is empty"));
    }
    if run_id.len() > MAX_RUN_ID_LEN {
        return Err(StoreError::invalid(
            "",
            format!("run_id is longer than {MAX_RUN_ID_LEN} characters"),
        ));
    }
    if let Some(bad) = run_id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(StoreError::invalid(
            "",
            format!("run_id {run_id:?} contains {bad:?}; use letters, digits, '-', '_' and '.'"),
        ));
    }
    Ok(())
}

fn check_timestamp(run_id: &str, field: &str, value: &str) -> Result<(), StoreError> {
    humantime::parse_rfc3339(value).map(|_| ()).map_err(|_| {
        StoreError::invalid(
            run_id,
            format!("{field} {value:?} is not an RFC 3339 UTC time like 2025-01-31T12:00:00Z"),
        )
    })
}

impl RunRecord {
    /// Checks the record before it is written: id, times, enumerations, metrics.
    pub fn validate(&self) -> Result<(), StoreError> {
        check_run_id(&self.run_id)?;
        let id = self.run_id.as_str();
        for (field, value) in [
            ("suite", &self.suite),
            ("tool_version", &self.tool_version),
            ("device_path", &self.device_path),
        ] {
            if value.is_empty() {
                return Err(StoreError::invalid(id, format!("{field} is empty")));
            }
        }
        // Text that reaches a terminal in listings must not carry control characters
        // (an escape sequence or a newline would forge the listing).
        for (field, value) in [
            ("suite", Some(&self.suite)),
            ("tool_version", Some(&self.tool_version)),
            ("host_name", Some(&self.host_name)),
            ("device_path", Some(&self.device_path)),
            ("device_model", self.device_model.as_ref()),
            ("device_serial", self.device_serial.as_ref()),
            ("device_firmware", self.device_firmware.as_ref()),
            ("device_connection", self.device_connection.as_ref()),
            ("uploaded_by", self.uploaded_by.as_ref()),
            ("config_hash", Some(&self.config_hash)),
            ("bundle_path", self.bundle_path.as_ref()),
        ] {
            if let Some(c) = value.and_then(|v| v.chars().find(|c| c.is_control())) {
                return Err(StoreError::invalid(
                    id,
                    format!("{field} contains the control character {c:?}"),
                ));
            }
        }
        check_timestamp(id, "started_at", &self.started_at)?;
        if let Some(finished) = &self.finished_at {
            check_timestamp(id, "finished_at", finished)?;
        }
        if !STATUSES.contains(&self.status.as_str()) {
            return Err(StoreError::invalid(
                id,
                format!(
                    "status {:?} is not one of {}",
                    self.status,
                    STATUSES.join(", ")
                ),
            ));
        }
        if !DEVICE_KINDS.contains(&self.device_kind.as_str()) {
            return Err(StoreError::invalid(
                id,
                format!(
                    "device_kind {:?} is not one of {}",
                    self.device_kind,
                    DEVICE_KINDS.join(", ")
                ),
            ));
        }
        if let Some(capacity) = self.device_capacity_bytes {
            if i64::try_from(capacity).is_err() {
                return Err(StoreError::invalid(
                    id,
                    format!("device_capacity_bytes {capacity} is too large to store"),
                ));
            }
        }
        let mut names = std::collections::HashSet::new();
        for metric in &self.metrics {
            if metric.name.is_empty() {
                return Err(StoreError::invalid(id, "a metric has an empty name"));
            }
            if !metric.value.is_finite() {
                return Err(StoreError::invalid(
                    id,
                    format!(
                        "metric {} is {} (must be finite)",
                        metric.name, metric.value
                    ),
                ));
            }
            if !names.insert(metric.name.as_str()) {
                return Err(StoreError::invalid(
                    id,
                    format!("metric {} appears twice", metric.name),
                ));
            }
        }
        Ok(())
    }

    /// The listing row for this record.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            run_id: self.run_id.clone(),
            suite: self.suite.clone(),
            started_at: self.started_at.clone(),
            finished_at: self.finished_at.clone(),
            status: self.status.clone(),
            tool_version: self.tool_version.clone(),
            host_name: self.host_name.clone(),
            device_path: self.device_path.clone(),
            device_model: self.device_model.clone(),
            device_serial: self.device_serial.clone(),
            device_firmware: self.device_firmware.clone(),
            device_capacity_bytes: self.device_capacity_bytes,
            device_kind: self.device_kind.clone(),
            device_connection: self.device_connection.clone(),
            uploaded_by: self.uploaded_by.clone(),
            config_hash: self.config_hash.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> RunRecord {
        RunRecord {
            run_id: "0b6f2c1e-1111-4d2a-9a77-000000000001".into(),
            suite: "quick".into(),
            started_at: "2025-01-31T12:00:00Z".into(),
            finished_at: Some("2025-01-31T12:05:30.250Z".into()),
            tool_version: "0.1.0".into(),
            schema_version: 1,
            host_name: "bench1".into(),
            host: json!({}),
            device_path: "/dev/nvme0n1".into(),
            device_model: None,
            device_serial: None,
            device_firmware: None,
            device_capacity_bytes: Some(1_000_204_886_016),
            device_kind: "block".into(),
            device_connection: None,
            uploaded_by: None,
            config_hash: "abc".into(),
            config: json!({}),
            status: "complete".into(),
            metrics: vec![Metric::new("quick.SEQ1M_Q8T1.read_mbps", 1834.2, "MB/s")],
            bundle_path: None,
            bundle_json: None,
        }
    }

    #[test]
    fn a_good_record_passes() {
        record().validate().unwrap();
    }

    #[test]
    fn bad_fields_are_named() {
        type Change = Box<dyn Fn(&mut RunRecord)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|r| r.run_id = "a b".into()), "contains ' '"),
            (Box::new(|r| r.run_id.clear()), "run_id is empty"),
            (
                Box::new(|r| r.started_at = "yesterday".into()),
                "started_at \"yesterday\" is not an RFC 3339",
            ),
            (
                Box::new(|r| r.finished_at = Some("2025-01-31 12:00".into())),
                "finished_at",
            ),
            (Box::new(|r| r.status = "done".into()), "status \"done\""),
            (Box::new(|r| r.device_kind = "nvme".into()), "device_kind"),
            (
                Box::new(|r| r.device_capacity_bytes = Some(u64::MAX)),
                "too large",
            ),
            (
                Box::new(|r| r.metrics.push(Metric::new("x", f64::NAN, "MB/s"))),
                "metric x is NaN",
            ),
            (
                Box::new(|r| r.metrics.push(r.metrics[0].clone())),
                "appears twice",
            ),
        ];
        for (change, expected) in cases {
            let mut r = record();
            change(&mut r);
            let message = r.validate().unwrap_err().to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn summary_copies_identity_and_metrics() {
        let r = record();
        let s = r.summary();
        assert_eq!(s.run_id, r.run_id);
        assert_eq!(s.device_capacity_bytes, Some(1_000_204_886_016));
        assert_eq!(s.metrics, r.metrics);
    }
}
