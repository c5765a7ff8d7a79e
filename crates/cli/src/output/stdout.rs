//! Human text on standard output, written so that a closed pipe (`| head`) or a full
//! disk is an ordinary failure with one line on stderr, never a panic.

use std::io::Write;

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

/// Write `text` to standard output (control characters escaped, see [`visible`]) and
/// flush it.
pub fn say(text: &str) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    out.write_all(visible(text).as_bytes())
        .and_then(|()| out.flush())
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
