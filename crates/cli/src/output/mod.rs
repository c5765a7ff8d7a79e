//! What a run prints and writes: one small module per format.

pub mod csv;
pub mod json;
pub mod progress;
pub mod stdout;
pub mod summary;

/// Write `text` and a line end to standard error, ignoring a failure: a message or
/// progress line whose reader went away (`2>&1 | head -1`) must not end the run with a
/// panic and leave its bundle `running`.
pub fn note(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// [`note`] without a line end (a prompt).
pub fn note_prompt(text: &str) {
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}
