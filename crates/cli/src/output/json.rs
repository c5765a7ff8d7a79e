//! The result document as strict JSON: to a file, or alone on stdout.

use std::io::Write;

use serde::Serialize;

use crate::fail::Fail;

/// `doc` pretty-printed, with a final newline, as a file holds it.
pub fn to_bytes<T: Serialize>(doc: &T) -> Result<Vec<u8>, Fail> {
    let mut text = serde_json::to_vec_pretty(doc).map_err(|e| Fail::failed(e.to_string()))?;
    text.push(b'\n');
    Ok(text)
}

/// Write `doc` to stdout and nothing else (a reader that closed the pipe early is no
/// error: see `stdout`).
pub fn write_stdout<T: Serialize>(doc: &T) -> Result<(), String> {
    if super::stdout::closed() {
        return Ok(());
    }
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
    text.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .or_else(super::stdout::unless_closed)
        .map_err(|e| format!("cannot write to standard output: {e}"))
}
