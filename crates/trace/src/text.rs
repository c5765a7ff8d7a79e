//! User, file, device and meter text quoted in a message: one line on a terminal, never
//! a raw control byte, never longer than a terminal can show sensibly. Every crate
//! quotes such text through here (the engine re-exports it as `drivelab_engine::text`).

use std::borrow::Cow;

/// The most characters of a quoted text shown; the rest is counted.
pub const MAX_SHOWN_CHARS: usize = 120;

/// `s` with every control byte (newline, carriage return, escape, …) written as its
/// Rust escape (`\n`, `\u{1b}`): printable text is left as it is.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` made [`printable`] and cut to [`MAX_SHOWN_CHARS`] characters (`…` and how many
/// more there are said after it).
pub fn shortened(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_SHOWN_CHARS {
        return printable(s).into_owned();
    }
    let head: String = s.chars().take(MAX_SHOWN_CHARS).collect();
    format!(
        "{}… ({} more characters)",
        printable(&head),
        n - MAX_SHOWN_CHARS
    )
}

/// `s` in single quotes for a message, [`shortened`].
pub fn quoted(s: &str) -> String {
    format!("'{}'", shortened(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_are_escaped_and_long_text_cut() {
        assert_eq!(printable("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(printable("plain é"), "plain é");
        let long = "x".repeat(15_000);
        let q = quoted(&long);
        assert!(q.len() < 200, "{q}");
        assert!(q.contains("14880 more characters"), "{q}");
    }
}
