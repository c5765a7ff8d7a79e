//! The result document as strict JSON: to a file, or alone on stdout.
//!
//! A document is written as it is serialised, through a buffer: a run's series (360 000
//! records for an hour at 10 ms) is never held a second time as text.

use std::io::Write;

use serde::Serialize;

use crate::fail::Fail;
use crate::out_path::OutFile;

/// `doc` pretty-printed with a final newline into `out`, through a buffer.
fn write_to<T: Serialize>(out: impl Write, doc: &T) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut out, doc)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Write `doc` to the claimed output `out` as it is serialised: a file appears whole or
/// not at all; on standard output it is alone.
pub fn write_file<T: Serialize>(out: &OutFile, doc: &T) -> Result<(), Fail> {
    if out.is_stdout() {
        return write_stdout(doc).map_err(Fail::failed);
    }
    let mut pending = out.begin()?;
    let cannot = |e: std::io::Error| Fail::failed(format!("cannot write {}: {e}", out.shown()));
    write_to(pending.file(), doc).map_err(cannot)?;
    pending.commit().map_err(cannot)
}

/// Write `doc` to stdout and nothing else, as it is serialised (a reader that closed the
/// pipe early is no error: see `stdout`).
pub fn write_stdout<T: Serialize>(doc: &T) -> Result<(), String> {
    if super::stdout::closed() {
        return Ok(());
    }
    write_to(std::io::stdout().lock(), doc)
        .or_else(super::stdout::unless_closed)
        .map_err(|e| format!("cannot write to standard output: {e}"))
}
