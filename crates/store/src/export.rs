//! The self-describing JSON document that moves runs between databases.
//!
//! ```json
//! {"format": "drivelab-db-export", "format_version": 1,
//!  "exported_by": "drivelab-store 0.1.0", "run_count": 2, "runs": [RunRecord, ...]}
//! ```

use serde_json::{json, Value};

use crate::error::StoreError;
use crate::record::RunRecord;

/// Value of the document's `format` field.
pub const EXPORT_FORMAT: &str = "drivelab-db-export";
/// Version of the document layout this build writes and reads.
pub const EXPORT_FORMAT_VERSION: u64 = 1;

/// Wraps records (newest first) into an export document.
pub(crate) fn build_document(runs: &[RunRecord]) -> Result<Value, StoreError> {
    let runs = runs
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StoreError::InvalidExport(format!("cannot serialise a run: {e}")))?;
    Ok(json!({
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "exported_by": concat!("drivelab-store ", env!("CARGO_PKG_VERSION")),
        "run_count": runs.len(),
        "runs": runs,
    }))
}

/// Reads and validates every record of an export document.
pub fn parse_document(doc: &Value) -> Result<Vec<RunRecord>, StoreError> {
    let bad = |reason: String| StoreError::InvalidExport(reason);
    let object = doc
        .as_object()
        .ok_or_else(|| bad("the document is not a JSON object".into()))?;
    match object.get("format").and_then(Value::as_str) {
        Some(EXPORT_FORMAT) => {}
        Some(other) => {
            return Err(bad(format!(
                "format is {other:?}, expected {EXPORT_FORMAT:?}"
            )))
        }
        None => return Err(bad(format!("no \"format\": {EXPORT_FORMAT:?} field"))),
    }
    match object.get("format_version").and_then(Value::as_u64) {
        Some(EXPORT_FORMAT_VERSION) => {}
        Some(v) if v > EXPORT_FORMAT_VERSION => {
            return Err(bad(format!(
                "format_version {v} is newer than this drivelab reads ({EXPORT_FORMAT_VERSION}); upgrade drivelab"
            )))
        }
        _ => return Err(bad("format_version is missing or not a supported number".into())),
    }
    let runs = object
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("\"runs\" is missing or not an array".into()))?;
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let label = run
                .get("run_id")
                .and_then(Value::as_str)
                .map(|id| format!("run {} ({id})", i + 1))
                .unwrap_or_else(|| format!("run {}", i + 1));
            let record: RunRecord =
                serde_json::from_value(run.clone()).map_err(|e| bad(format!("{label}: {e}")))?;
            record
                .validate()
                .map_err(|e| bad(format!("{label}: {e}")))?;
            Ok(record)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_foreign_documents_with_reasons() {
        let cases = [
            (json!([]), "not a JSON object"),
            (json!({"runs": []}), "no \"format\""),
            (json!({"format": "fio", "runs": []}), "format is \"fio\""),
            (
                json!({"format": EXPORT_FORMAT, "format_version": 2, "runs": []}),
                "newer than this drivelab reads",
            ),
            (
                json!({"format": EXPORT_FORMAT, "format_version": 1}),
                "\"runs\" is missing",
            ),
            (
                json!({"format": EXPORT_FORMAT, "format_version": 1, "runs": [{"run_id": "r1"}]}),
                "run 1 (r1): missing field",
            ),
        ];
        for (doc, expected) in cases {
            let message = parse_document(&doc).unwrap_err().to_string();
            assert!(message.starts_with("invalid results export: "), "{message}");
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn empty_document_round_trips() {
        let doc = build_document(&[]).unwrap();
        assert_eq!(doc["format"], EXPORT_FORMAT);
        assert_eq!(doc["format_version"], 1);
        assert_eq!(doc["run_count"], 0);
        assert!(parse_document(&doc).unwrap().is_empty());
    }
}
