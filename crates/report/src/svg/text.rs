//! Text helpers for SVG output: escaping, compact numbers, width estimates.

use std::fmt::Write as _;

/// Escapes text for use in SVG/HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// A coordinate rounded to 0.1 px, written without a trailing ".0".
pub fn num(v: f64) -> String {
    let mut s = String::new();
    push_num(&mut s, v);
    s
}

/// Appends a coordinate rounded to 0.1 px.
pub fn push_num(s: &mut String, v: f64) {
    let t = (v * 10.0).round();
    if !t.is_finite() {
        s.push('0');
        return;
    }
    let t = t as i64;
    if t < 0 {
        s.push('-');
    }
    let a = t.unsigned_abs();
    let _ = write!(s, "{}", a / 10);
    if !a.is_multiple_of(10) {
        let _ = write!(s, ".{}", a % 10);
    }
}

/// Estimated width of `text` at `size` px in DejaVu Sans (average glyph ≈ 0.6 em).
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// Greedy word wrap to at most `max_chars` characters per line.
pub fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let len = cur.chars().count();
        if len > 0 && len + 1 + word.chars().count() > max_chars {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.04), "12");
        assert_eq!(num(12.06), "12.1");
        assert_eq!(num(-0.5), "-0.5");
        assert_eq!(num(-0.04), "0");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"a<b & "c" 'd'>"#),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    #[test]
    fn wraps_words() {
        assert_eq!(wrap("aa bb cc dd", 5), vec!["aa bb", "cc dd"]);
    }
}
