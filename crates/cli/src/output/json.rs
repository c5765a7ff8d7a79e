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
