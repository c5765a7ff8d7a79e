//! Axis ranges and tick selection: 1-2-5 steps on linear axes, decades on
//! log10 axes, powers of two on log2 axes.

use crate::model::Scale;

/// One labelled tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Position in data units.
    pub value: f64,
    /// Text printed at the tick (may be empty for an unlabelled major tick).
    pub label: String,
}

/// A resolved axis: its drawn range and ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisTicks {
    /// Lower end of the drawn range.
    pub lo: f64,
    /// Upper end of the drawn range.
    pub hi: f64,
    /// Scale used to map values.
    pub scale: Scale,
    /// Major (labelled, gridded) ticks inside the range.
    pub major: Vec<Tick>,
    /// Minor ticks (log axes: 2…9 × each decade), unlabelled.
    pub minor: Vec<f64>,
}

impl AxisTicks {
    /// Position of `v` in the range as a fraction 0..1 (outside for values out of range).
    pub fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log10 | Scale::Log2 => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        }
    }
}

/// The 1-2-5 × 10^k step nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let f = raw / base;
    let m = if f <= 1.0 + 1e-9 {
        1.0
    } else if f <= 2.0 + 1e-9 {
        2.0
    } else if f <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    m * base
}

/// Resolves a linear axis. `data` is the (min, max) of the values shown;
/// fixed ends win; automatic ends are widened to whole steps when `snap`
/// (value axes) or kept at the data (x axes, so an hour ends at 3600 s).
pub fn linear(
    data: Option<(f64, f64)>,
    fixed_min: Option<f64>,
    fixed_max: Option<f64>,
    include_zero: bool,
    snap: bool,
    target_ticks: usize,
) -> AxisTicks {
    let (mut lo, mut hi) = data.unwrap_or((0.0, 1.0));
    if include_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if let Some(m) = fixed_min {
        lo = m;
    }
    if let Some(m) = fixed_max {
        hi = m;
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        if fixed_min.is_some() && fixed_max.is_none() {
            hi = lo + 2.0 * pad;
        } else if fixed_max.is_some() && fixed_min.is_none() {
            lo = hi - 2.0 * pad;
        } else {
            lo -= pad;
            hi += pad;
        }
    }
    let step = nice_step((hi - lo) / target_ticks.max(2) as f64);
    if snap && fixed_min.is_none() {
        lo = (lo / step + 1e-9).floor() * step;
    }
    if snap && fixed_max.is_none() {
        hi = (hi / step - 1e-9).ceil() * step;
    }
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let max_abs = lo.abs().max(hi.abs());
    let major = (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            Tick {
                value: v,
                label: format_linear(v, step, max_abs),
            }
        })
        .collect();
    AxisTicks {
        lo,
        hi,
        scale: Scale::Linear,
        major,
        minor: Vec::new(),
    }
}

/// Resolves a log10 axis: automatic ends snap to whole decades.
pub fn log10(
    data: Option<(f64, f64)>,
    fixed_min: Option<f64>,
    fixed_max: Option<f64>,
) -> AxisTicks {
    let (dlo, dhi) = data.unwrap_or((1.0, 10.0));
    let mut lo = fixed_min.unwrap_or_else(|| 10f64.powf((dlo.log10() + 1e-9).floor()));
    let mut hi = fixed_max.unwrap_or_else(|| 10f64.powf((dhi.log10() - 1e-9).ceil()));
    if hi <= lo {
        if fixed_max.is_some() && fixed_min.is_none() {
            lo = hi / 10.0;
        } else {
            hi = lo * 10.0;
        }
    }
    let k0 = (lo.log10() - 1e-9).ceil() as i32;
    let k1 = (hi.log10() + 1e-9).floor() as i32;
    let decades = (k1 - k0).max(0) as usize;
    let every = if decades > 8 { 2 } else { 1 };
    let mut major = Vec::new();
    for k in k0..=k1 {
        let label = if ((k - k0) as usize).is_multiple_of(every) {
            format_decade(k)
        } else {
            String::new()
        };
        major.push(Tick {
            value: 10f64.powi(k),
            label,
        });
    }
    let mut minor = Vec::new();
    if decades <= 6 {
        let start = (lo.log10() + 1e-9).floor() as i32;
        for k in start..=k1 {
            for m in 2..=9 {
                let v = m as f64 * 10f64.powi(k);
                if v > lo * (1.0 + 1e-9) && v < hi * (1.0 - 1e-9) {
                    minor.push(v);
                }
            }
        }
    }
    AxisTicks {
        lo,
        hi,
        scale: Scale::Log10,
        major,
        minor,
    }
}

/// Resolves a log2 axis: automatic ends snap to powers of two, ticks at every power.
pub fn log2(data: Option<(f64, f64)>, fixed_min: Option<f64>, fixed_max: Option<f64>) -> AxisTicks {
    let (dlo, dhi) = data.unwrap_or((1.0, 2.0));
    let mut lo = fixed_min.unwrap_or_else(|| 2f64.powf((dlo.log2() + 1e-9).floor()));
    let mut hi = fixed_max.unwrap_or_else(|| 2f64.powf((dhi.log2() - 1e-9).ceil()));
    if hi <= lo {
        if fixed_max.is_some() && fixed_min.is_none() {
            lo = hi / 2.0;
        } else {
            hi = lo * 2.0;
        }
    }
    let k0 = (lo.log2() - 1e-9).ceil() as i32;
    let k1 = (hi.log2() + 1e-9).floor() as i32;
    let every = if k1 - k0 > 12 { 2 } else { 1 };
    let major = (k0..=k1)
        .map(|k| Tick {
            value: 2f64.powi(k),
            label: if (k - k0) % every == 0 {
                format_pow2(k)
            } else {
                String::new()
            },
        })
        .collect();
    AxisTicks {
        lo,
        hi,
        scale: Scale::Log2,
        major,
        minor: Vec::new(),
    }
}

/// Category axis: one tick per name at 0, 1, …, range −0.5 … n−0.5.
pub fn categories(names: &[String]) -> AxisTicks {
    AxisTicks {
        lo: -0.5,
        hi: names.len().max(1) as f64 - 0.5,
        scale: Scale::Linear,
        major: names
            .iter()
            .enumerate()
            .map(|(i, n)| Tick {
                value: i as f64,
                label: n.clone(),
            })
            .collect(),
        minor: Vec::new(),
    }
}

/// Formats a linear tick value with as many decimals as the step needs.
/// When the axis reaches 10 000 (`max_abs`), every label uses one k/M/G suffix.
pub fn format_linear(v: f64, step: f64, max_abs: f64) -> String {
    if v.abs() < step * 1e-6 {
        return "0".to_string();
    }
    let (div, suffix) = if max_abs >= 1e10 {
        (1e9, "G")
    } else if max_abs >= 1e7 {
        (1e6, "M")
    } else if max_abs >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = step / div;
    let decimals = if s >= 1.0 {
        0
    } else {
        ((-s.log10() - 1e-9).ceil() as usize).min(9)
    };
    format!("{:.*}{}", decimals, v / div, suffix)
}

/// Formats 10^k: 1, 10, 100, 1k, 10k, 100k, 1M, …; below 1 as powers, 10⁻¹, 10⁻², …
/// (one notation down the whole axis, and the one the exceedance charts' notes use).
pub fn format_decade(k: i32) -> String {
    match k {
        0..=2 => format!("{}", 10i64.pow(k as u32)),
        3..=5 => format!("{}k", 10i64.pow((k - 3) as u32)),
        6..=8 => format!("{}M", 10i64.pow((k - 6) as u32)),
        9..=11 => format!("{}G", 10i64.pow((k - 9) as u32)),
        _ => format!("10{}", superscript(k)),
    }
}

/// `k` in superscript digits: −4 → ⁻⁴.
fn superscript(k: i32) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// Formats 2^k: whole numbers for k ≥ 0, 1/2, 1/4, … below.
pub fn format_pow2(k: i32) -> String {
    if k >= 0 {
        if k < 20 {
            format!("{}", 1u64 << k)
        } else {
            format!("2^{k}")
        }
    } else if k > -20 {
        format!("1/{}", 1u64 << (-k))
    } else {
        format!("2^{k}")
    }
}

/// A size in decimal units with three significant digits, the unit chosen to fit: "512 B",
/// "16.8 MB", "512 GB", "1.00 TB" (the report's throughput is in MB/s and its axes in
/// GB, as drives are sold). A small target never shows as "0.0 GB".
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1e3;
    let mut u = 0;
    // 999.95 kB would print as "1000 kB": the next unit then.
    while v >= 999.5 && u < UNITS.len() - 1 {
        v /= 1e3;
        u += 1;
    }
    let decimals = if v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {}", UNITS[u])
}

/// Formats a number with `decimals` decimals and thin-space thousands separators; "–" if not finite.
pub fn fmt_number(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let mut out = String::new();
    if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    let n = int.len();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (n - i) % 3 == 0 {
            out.push('\u{202F}'); // narrow no-break space: a number never splits
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_take_a_unit_that_fits() {
        use super::fmt_bytes;
        assert_eq!(fmt_bytes(0), "0 B");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(4096), "4.10 kB");
        assert_eq!(fmt_bytes(16 << 20), "16.8 MB");
        assert_eq!(fmt_bytes(96 << 20), "101 MB");
        assert_eq!(fmt_bytes(999_999), "1.00 MB");
        assert_eq!(fmt_bytes(8_600_000_000), "8.60 GB");
        assert_eq!(fmt_bytes(512_110_190_592), "512 GB");
        assert_eq!(fmt_bytes(1_000_204_886_016), "1.00 TB");
        assert_eq!(fmt_bytes(u64::MAX), "18.4 EB");
    }

    use super::*;

    #[test]
    fn numbers_get_separators() {
        assert_eq!(fmt_number(1234567.0, 0), "1\u{202F}234\u{202F}567");
        assert_eq!(fmt_number(999.456, 2), "999.46");
        assert_eq!(fmt_number(-1234.5, 1), "-1\u{202F}234.5");
        assert_eq!(fmt_number(f64::NAN, 1), "–");
    }

    fn values(t: &AxisTicks) -> Vec<f64> {
        t.major.iter().map(|k| k.value).collect()
    }
    fn labels(t: &AxisTicks) -> Vec<&str> {
        t.major.iter().map(|k| k.label.as_str()).collect()
    }

    #[test]
    fn steps_are_1_2_5() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert!((nice_step(0.023) - 0.05).abs() < 1e-12);
        assert_eq!(nice_step(2.0), 2.0);
    }

    #[test]
    fn linear_value_axis_snaps_to_steps() {
        let t = linear(Some((3.0, 97.0)), None, None, false, true, 5);
        assert_eq!((t.lo, t.hi), (0.0, 100.0));
        assert_eq!(values(&t), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(labels(&t), vec!["0", "20", "40", "60", "80", "100"]);
    }

    #[test]
    fn linear_x_axis_keeps_data_ends() {
        let t = linear(Some((1.0, 3600.0)), None, None, true, false, 8);
        assert_eq!((t.lo, t.hi), (0.0, 3600.0));
        assert_eq!(values(&t).last(), Some(&3500.0));
    }

    #[test]
    fn large_and_small_labels() {
        let t = linear(Some((0.0, 480_000.0)), None, None, true, true, 5);
        assert_eq!(
            labels(&t),
            vec!["0", "100k", "200k", "300k", "400k", "500k"]
        );
        let t = linear(Some((0.1, 0.9)), None, None, true, true, 5);
        assert_eq!(labels(&t), vec!["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(format_linear(12_500.0, 500.0, 20_000.0), "12.5k");
        assert_eq!(format_linear(3_000_000.0, 1_000_000.0, 1e7), "3M");
    }

    #[test]
    fn log10_exceedance_axis() {
        let t = log10(Some((1.3e-6, 1.0)), None, None);
        assert_eq!((t.lo, t.hi), (1e-6, 1.0));
        assert_eq!(
            labels(&t),
            vec!["10⁻⁶", "10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹", "1"]
        );
        // Minor ticks 2..9 in each of the 6 decades.
        assert_eq!(t.minor.len(), 6 * 8);
    }

    #[test]
    fn log10_decades_with_si_labels() {
        let t = log10(Some((150.0, 320_000.0)), None, None);
        assert_eq!((t.lo, t.hi), (100.0, 1e6));
        assert_eq!(labels(&t), vec!["100", "1k", "10k", "100k", "1M"]);
    }

    #[test]
    fn log2_queue_depths() {
        let t = log2(Some((1.0, 512.0)), None, None);
        assert_eq!((t.lo, t.hi), (1.0, 512.0));
        assert_eq!(
            labels(&t),
            vec!["1", "2", "4", "8", "16", "32", "64", "128", "256", "512"]
        );
        assert!((t.fraction(32.0) - 5.0 / 9.0).abs() < 1e-12);
        let t = log2(Some((3.0, 100.0)), None, None);
        assert_eq!((t.lo, t.hi), (2.0, 128.0));
    }

    #[test]
    fn fixed_ends_win() {
        let t = linear(Some((3.0, 97.0)), Some(10.0), Some(50.0), true, true, 4);
        assert_eq!((t.lo, t.hi), (10.0, 50.0));
        assert_eq!(values(&t), vec![10.0, 20.0, 30.0, 40.0, 50.0]);
    }
}
