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

/// Write `doc` to stdout and nothing else.
pub fn write_stdout<T: Serialize>(doc: &T) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc).map_err(|e| e.to_string())?;
    writeln!(out).map_err(|e| e.to_string())
}
