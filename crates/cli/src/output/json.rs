//! The result document as strict JSON: to a file, or alone on stdout.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

/// Write `doc` to `path` (pretty-printed, with a final newline).
pub fn write_file<T: Serialize>(path: &Path, doc: &T) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Write `doc` to stdout and nothing else.
pub fn write_stdout<T: Serialize>(doc: &T) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc).map_err(|e| e.to_string())?;
    writeln!(out).map_err(|e| e.to_string())
}
