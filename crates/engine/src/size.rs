//! Parsing of sizes, percentages and durations as users type them.
//!
//! Sizes follow fio's habit for the short forms and SI for the explicit decimal ones:
//! `4k`, `4K`, `4Ki`, `4KiB` = 4096; `4KB` = 4000; `M`/`MiB` = 2^20, `MB` = 10^6; `G`,
//! `T`, `P` likewise. A bare number is bytes.

/// A byte quantity or a share of the target.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeOrPercent {
    Bytes(u64),
    Percent(f64),
}

impl SizeOrPercent {
    /// Resolve against the target's size in bytes.
    pub fn resolve(self, of: u64) -> u64 {
        match self {
            SizeOrPercent::Bytes(b) => b,
            SizeOrPercent::Percent(p) => ((of as f64) * p / 100.0).floor() as u64,
        }
    }
}

pub const SIZE_FORM: &str = "a size like 4k, 128KiB, 1M, 10G or 1GB (k/Ki/KiB = 1024, KB = 1000)";

/// Parse a size such as `4k`, `128KiB`, `1M`, `1GB`, `4096`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.matches('.').count() > 1 {
        return Err(format!("'{text}' is not {SIZE_FORM}"));
    }
    let mult: u64 = match unit {
        "" | "b" | "B" => 1,
        "k" | "K" | "Ki" | "KiB" | "kiB" | "kib" | "KIB" => 1 << 10,
        "KB" | "kB" | "kb" => 1_000,
        "m" | "M" | "Mi" | "MiB" | "mib" | "MIB" => 1 << 20,
        "MB" | "mB" | "mb" => 1_000_000,
        "g" | "G" | "Gi" | "GiB" | "gib" | "GIB" => 1 << 30,
        "GB" | "gB" | "gb" => 1_000_000_000,
        "t" | "T" | "Ti" | "TiB" | "tib" | "TIB" => 1 << 40,
        "TB" | "tB" | "tb" => 1_000_000_000_000,
        "p" | "P" | "Pi" | "PiB" => 1 << 50,
        "PB" | "pB" | "pb" => 1_000_000_000_000_000,
        _ => return Err(format!("'{text}' is not {SIZE_FORM}")),
    };
    let too_large = || format!("'{text}' is more than the largest size, 16 EiB");
    if !num.contains('.') {
        // Whole numbers exactly, in integers: no rounding, no wrapping.
        let value: u64 = num.parse().map_err(|_| too_large())?;
        return value.checked_mul(mult).ok_or_else(too_large);
    }
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not {SIZE_FORM}"))?;
    let bytes = value * mult as f64;
    // Beyond 2^53 a fraction would no longer be exact.
    if !bytes.is_finite() || bytes >= (1u64 << 53) as f64 {
        return Err(too_large());
    }
    if bytes.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parse a size or a percentage of the target (`10G`, `25%`).
pub fn parse_size_or_percent(text: &str) -> Result<SizeOrPercent, String> {
    let s = text.trim();
    if let Some(p) = s.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("'{text}' is not {SIZE_FORM} or a percentage like 90%"))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(format!("'{text}': a percentage must be from 0 to 100"));
        }
        return Ok(SizeOrPercent::Percent(v));
    }
    parse_size(s)
        .map(SizeOrPercent::Bytes)
        .map_err(|_| format!("'{text}' is not {SIZE_FORM} or a percentage like 90%"))
}

/// The longest duration accepted: a year, far beyond any test, and far from the
/// 584 years at which nanoseconds overflow a u64.
pub const MAX_DURATION_NS: u64 = 366 * 24 * 3_600_000_000_000;

pub const DURATION_FORM: &str = "a duration like 30 (seconds), 500ms, 10s, 5m or 1h";

/// Parse a duration into nanoseconds: `30` (seconds), `500ms`, `10s`, `5m`, `1h`, `20us`.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult: f64 = match unit {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(format!("'{text}' is not {DURATION_FORM}")),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not {DURATION_FORM}"))?;
    let ns = v * mult;
    if !ns.is_finite() || ns > MAX_DURATION_NS as f64 {
        return Err(format!(
            "'{text}' is longer than the longest duration drivelab takes, {}h",
            MAX_DURATION_NS / 3_600_000_000_000
        ));
    }
    Ok(ns.round() as u64)
}

/// Human form of a byte count in binary units (for messages): `1 GiB`, `4 KiB`, `512 B`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{v} {}", UNITS[i])
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("4KB").unwrap(), 4000);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("512").unwrap(), 512);
        for bad in ["4kk", "-1", "", "k", "1.2.3", "4 q", "0.3"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        // Exact in integers, and too large is said to be too large.
        assert_eq!(
            parse_size("9007199254740993").unwrap(),
            9_007_199_254_740_993
        );
        for big in [
            "16384P",
            "18446744073709551616",
            "99999999999999999999k",
            "1e30",
        ] {
            let e = parse_size(big).unwrap_err();
            assert!(
                e.contains("largest size") || e.contains("is not"),
                "{big}: {e}"
            );
        }
        assert!(parse_size("16384P").unwrap_err().contains("16 EiB"));
    }

    #[test]
    fn percents_and_durations() {
        assert_eq!(
            parse_size_or_percent("90%").unwrap(),
            SizeOrPercent::Percent(90.0)
        );
        // 0 % is a valid offset (a size of 0 is refused where sizes are checked).
        assert_eq!(
            parse_size_or_percent("0%").unwrap(),
            SizeOrPercent::Percent(0.0)
        );
        assert!(parse_size_or_percent("101%").is_err());
        assert!(parse_size_or_percent("-1%").is_err());
        assert_eq!(SizeOrPercent::Percent(50.0).resolve(1000), 500);
        assert_eq!(parse_duration_ns("5").unwrap(), 5_000_000_000);
        assert_eq!(parse_duration_ns("10ms").unwrap(), 10_000_000);
        assert_eq!(parse_duration_ns("1h").unwrap(), 3_600_000_000_000);
        assert!(parse_duration_ns("-1").is_err());
        assert!(parse_duration_ns("5x").is_err());
        // Too long is a limit, not a malformed duration.
        let e = parse_duration_ns("99999999h").unwrap_err();
        assert!(e.contains("longest duration") && e.contains("8784h"), "{e}");
        assert!(parse_duration_ns("8784h").is_ok());
    }
}
