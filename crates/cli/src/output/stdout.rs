//! Human text on standard output, written so that a closed pipe (`| head`) or a full
//! disk is an ordinary failure with one line on stderr, never a panic.

use std::io::Write;

use crate::fail::Fail;

/// Write `text` to standard output and flush it.
pub fn say(text: &str) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Fail::failed(format!("cannot write to standard output: {e}")))
}

/// [`say`] with a line end.
pub fn say_line(text: &str) -> Result<(), Fail> {
    say(&format!("{text}\n"))
}
