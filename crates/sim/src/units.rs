//! Parsing and printing of the quantities a spec string holds: sizes, percentages,
//! durations and switches.

/// The accepted form of a size, for error messages.
pub const SIZE_FORM: &str = "a size like 512M, 64G, 64GB or 1T (k/Ki/KiB = 1024, KB = 1000)";
/// The accepted form of a percentage, for error messages.
pub const PERCENT_FORM: &str =
    "a percentage like 7% or a fraction from 0 to 1 like 0.07 (a bare 3 is not taken for 300%)";
/// The accepted form of a duration, for error messages.
pub const DURATION_FORM: &str = "a duration like 60us, 2.4ms or 500ns";

/// Parse a size with the engine's rules (`k`/`Ki`/`KiB` = 1024, `KB` = 1000, `M`/`MiB`
/// = 2^20, `MB` = 10^6, …; a bare number is bytes; `1.5G` when whole bytes), so a
/// simulated drive's sizes read exactly like every other size drivelab takes.
pub fn parse_size(text: &str) -> Option<u64> {
    drivelab_engine::size::parse_size(text).ok()
}

/// Parse `7%`, `7.5%` or the fraction `0.07`; returns percent (7.0). Negative is
/// refused, and so is a bare number above 1: `op=3` is far likelier a forgotten `%`
/// than 300 %.
pub fn parse_percent(text: &str) -> Option<f64> {
    let s = text.trim();
    let v = if let Some(p) = s.strip_suffix('%') {
        p.trim().parse::<f64>().ok()?
    } else {
        let f = s.parse::<f64>().ok()?;
        if f > 1.0 {
            return None;
        }
        f * 100.0
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Parse a duration (`ns`, `us`, `ms`, `s`) into nanoseconds.
pub fn parse_duration_ns(text: &str) -> Option<u64> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let v = num.parse::<f64>().ok()? * mult;
    (v.is_finite() && (1.0..1e15).contains(&v)).then_some(v.round() as u64)
}

/// Parse `on`/`off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn parse_switch(text: &str) -> Option<bool> {
    match text.trim() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Print a size in the shortest exact form `parse_size` reads back (`64G`, `500GB`, `4096`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 8] = [
        (1 << 40, "T"),
        (1_000_000_000_000, "TB"),
        (1 << 30, "G"),
        (1_000_000_000, "GB"),
        (1 << 20, "M"),
        (1_000_000, "MB"),
        (1 << 10, "K"),
        (1_000, "KB"),
    ];
    if bytes == 0 {
        return "0".to_string();
    }
    for (m, u) in UNITS {
        if bytes.is_multiple_of(m) {
            return format!("{}{u}", bytes / m);
        }
    }
    bytes.to_string()
}

/// Print a duration in the shortest exact form `parse_duration_ns` reads back.
pub fn format_duration(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// Print a percentage without a trailing `.0`.
pub fn format_percent(p: f64) -> String {
    if p.fract() == 0.0 && p < 1e15 {
        format!("{}%", p as u64)
    } else if p != 0.0 && !(1e-4..1e15).contains(&p.abs()) {
        // `1e-300%`, not 300 digits (parse_percent reads it back the same).
        format!("{p:e}%")
    } else {
        format!("{p}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_and_huge_percentages_are_short_and_read_back() {
        for p in [1e-300, 3.5e-7, 7.0, 12.5, 400.0] {
            let t = format_percent(p);
            assert!(t.len() < 16, "{t}");
            assert_eq!(parse_percent(&t), Some(p), "{t}");
        }
    }

    #[test]
    fn sizes_follow_binary_short_and_decimal_explicit_forms() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("4Ki"), Some(4096));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("4KB"), Some(4000));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("1MiB"), Some(1 << 20));
        assert_eq!(parse_size("1MB"), Some(1_000_000));
        assert_eq!(parse_size("64G"), Some(64 << 30));
        assert_eq!(parse_size("64GB"), Some(64_000_000_000));
        assert_eq!(parse_size("2T"), Some(2 << 40));
        assert_eq!(parse_size("1TB"), Some(1_000_000_000_000));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4X"), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("1.3"), None);
    }

    #[test]
    fn sizes_print_back_exactly() {
        for b in [64u64 << 30, 500_000_000_000, 4096, 12345, 3 << 29, 1 << 40] {
            assert_eq!(parse_size(&format_size(b)), Some(b), "{}", format_size(b));
        }
        assert_eq!(format_size(64 << 30), "64G");
        assert_eq!(format_size(64_000_000_000), "64GB");
    }

    #[test]
    fn percents_and_durations() {
        assert_eq!(parse_percent("7%"), Some(7.0));
        assert_eq!(parse_percent("0.25"), Some(25.0));
        assert_eq!(parse_percent("-1%"), None);
        assert_eq!(parse_percent("3"), None, "a bare 3 is not 300 %");
        assert_eq!(parse_percent("300%"), Some(300.0));
        assert_eq!(parse_percent("1"), Some(100.0));
        assert_eq!(parse_duration_ns("60us"), Some(60_000));
        assert_eq!(parse_duration_ns("2.4ms"), Some(2_400_000));
        assert_eq!(parse_duration_ns("500ns"), Some(500));
        assert_eq!(parse_duration_ns("5"), None);
        assert_eq!(format_duration(2_400_000), "2400us");
        assert_eq!(format_duration(3_000_000), "3ms");
        assert_eq!(parse_switch("on"), Some(true));
        assert_eq!(parse_switch("maybe"), None);
    }
}
