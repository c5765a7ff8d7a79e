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

/// A capacity as people read it: "1.00 TB", "512 GB" (decimal units, as drives are sold).
pub fn capacity(bytes: Option<u64>) -> String {
    let Some(b) = bytes else { return "–".into() };
    let b = b as f64;
    if b >= 1e12 {
        format!("{:.2} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.0} GB", b / 1e9)
    } else {
        format!("{:.0} MB", b / 1e6)
    }
}
