//! Human text on standard output, written so that a full disk is an ordinary failure
//! with one line on stderr, never a panic, and a closed pipe (`| head`) ends the output
//! quietly, as with other Unix tools: the reader has what it wanted, so the command goes
//! on to its normal end (a suite's bundle and record are kept) and exits as it would
//! have, with nothing more written to stdout and no error message.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::fail::Fail;

/// `text` with every control character but line ends and tabs written out as an
/// escape (`\u{1b}`): text from a bundle or an imported file (a device model, a suite
/// name) must not move the cursor, recolour or clear the terminal.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(shown) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if shown(c) {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// Set once standard output's reader has gone away.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether standard output's reader has gone away (nothing more is written to it).
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Ok for a write that failed because the reader closed the pipe (remembered, so that
/// later writes are skipped), else the error.
pub fn unless_closed(e: std::io::Error) -> Result<(), std::io::Error> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, Ordering::Relaxed);
        Ok(())
    } else {
        Err(e)
    }
}

/// Write `text` to standard output (control characters escaped, see [`visible`]) and
/// flush it.
pub fn say(text: &str) -> Result<(), Fail> {
    if closed() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(visible(text).as_bytes())
        .and_then(|()| out.flush())
        .or_else(unless_closed)
        .map_err(|e| Fail::failed(format!("cannot write to standard output: {e}")))
}

/// Write `bytes` to standard output as they are (a document: JSON, CSV, HTML) and
/// flush it.
pub fn write_all(bytes: &[u8]) -> Result<(), Fail> {
    if closed() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .or_else(unless_closed)
        .map_err(|e| Fail::failed(format!("cannot write to standard output: {e}")))
}

/// [`say`] with a line end.
pub fn say_line(text: &str) -> Result<(), Fail> {
    say(&format!("{text}\n"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(super::visible("a\tb\nc"), "a\tb\nc");
        assert_eq!(super::visible("x\x1b[2Jy\r"), "x\\u{1b}[2Jy\\u{d}");
    }
}
