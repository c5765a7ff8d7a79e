//! The HTML pages: runs, one run, one drive, a comparison. Every text that came from a
//! bundle goes through maud's escaping (or the report crate's, for report pages).

pub mod compare;
pub mod compare_drives;
pub mod drive;
pub mod layout;
pub mod run;
pub mod runs;

use axum::response::Response;

use crate::failure::Failure;

/// Any path the server does not serve (nothing is looked up on disk).
pub async fn not_found() -> Response {
    use axum::response::IntoResponse;
    Failure::not_found("no such page").into_response()
}

/// A method the path does not take (axum adds the `Allow` header naming those it does):
/// the same page, or JSON under `/api/`, as every other refusal.
pub async fn method_not_allowed(uri: axum::http::Uri) -> Response {
    use axum::response::IntoResponse;
    let f = Failure::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        format!("{} does not take this method (see Allow)", uri.path()),
    );
    if uri.path().starts_with("/api/") {
        f.json()
    } else {
        f.into_response()
    }
}

/// A time filter (`since`, `until`): a UTC date (`2026-03-01`) or RFC 3339 UTC time
/// (`2026-03-01T12:00:00Z`), kept as given (runs are compared with it as text).
pub fn utc_time(name: &str, value: &Option<String>) -> Result<Option<String>, Failure> {
    let Some(v) = field(name, value)? else {
        return Ok(None);
    };
    let full = if v.len() == 10 {
        format!("{v}T00:00:00Z")
    } else {
        v.clone()
    };
    if !full.ends_with('Z') || humantime::parse_rfc3339_weak(full.trim_end_matches('Z')).is_err() {
        return Err(Failure::bad_request(format!(
            "{name}: give a UTC date or time, e.g. 2026-03-01 or 2026-03-01T12:00:00Z"
        )));
    }
    Ok(Some(v))
}

/// A query text field: at most this many characters.
pub const MAX_FIELD_CHARS: usize = 200;

/// A query field, checked: trimmed, empty as absent, not too long, no control characters.
pub fn field(name: &str, value: &Option<String>) -> Result<Option<String>, Failure> {
    let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if v.chars().count() > MAX_FIELD_CHARS || v.chars().any(char::is_control) {
        return Err(Failure::bad_request(format!(
            "{name}: give at most {MAX_FIELD_CHARS} printable characters"
        )));
    }
    Ok(Some(v.to_string()))
}

/// A URL query string of these pairs (values encoded).
pub fn query_string(pairs: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// A capacity as people read it: "1.00 TB", "512 GB", "16.8 MB" (decimal units, as
/// drives are sold; the report's own form).
pub fn capacity(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "–".into(), drivelab_report::fmt_bytes)
}
