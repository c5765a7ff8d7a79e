//! A fleet of hosts that ran the same step at the same time: their numbers side by side
//! (slowest and fastest host, coefficient of variation), their histograms merged exactly
//! and their per-second series summed on one clock.

use serde::{Deserialize, Serialize};

/// Which way a metric is better (faster): decided by its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Rates: MB/s, IOPS, per watt.
    Higher,
    /// Latencies and times of an I/O: ns, µs, ms.
    Lower,
    /// Anything else (temperatures, percentages, sizes): lowest and highest only.
    Neither,
}

impl Better {
    pub fn of_unit(unit: &str) -> Better {
        match unit {
            "ns" | "µs" | "us" | "ms" => Better::Lower,
            u if u.starts_with("MB/s") || u.contains("IOPS") || u.contains("MiB/s") => {
                Better::Higher
            }
            _ => Better::Neither,
        }
    }
}

/// How one number spreads over the hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub hosts: usize,
    pub better: Better,
    pub lowest_host: String,
    pub lowest: f64,
    pub highest_host: String,
    pub highest: f64,
    pub mean: f64,
    /// Population standard deviation / mean, in percent; None when the mean is 0.
    pub cv_percent: Option<f64>,
}

impl Spread {
    /// The slowest host and its value (None when the metric has no direction).
    pub fn slowest(&self) -> Option<(&str, f64)> {
        match self.better {
            Better::Higher => Some((&self.lowest_host, self.lowest)),
            Better::Lower => Some((&self.highest_host, self.highest)),
            Better::Neither => None,
        }
    }
    /// The fastest host and its value (None when the metric has no direction).
    pub fn fastest(&self) -> Option<(&str, f64)> {
        match self.better {
            Better::Higher => Some((&self.highest_host, self.highest)),
            Better::Lower => Some((&self.lowest_host, self.lowest)),
            Better::Neither => None,
        }
    }
}

/// The spread of `values` (host, value) of a metric in `unit`; None without hosts.
/// Values that are not finite count as 0.
pub fn spread(values: &[(String, f64)], unit: &str) -> Option<Spread> {
    let clean: Vec<(&str, f64)> = values
        .iter()
        .map(|(h, v)| (h.as_str(), if v.is_finite() { *v } else { 0.0 }))
        .collect();
    let n = clean.len();
    if n == 0 {
        return None;
    }
    let low = clean
        .iter()
        .copied()
        .fold(clean[0], |a, b| if b.1 < a.1 { b } else { a });
    let high = clean
        .iter()
        .copied()
        .fold(clean[0], |a, b| if b.1 > a.1 { b } else { a });
    let mean = clean.iter().map(|x| x.1).sum::<f64>() / n as f64;
    let var = clean.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / n as f64;
    Some(Spread {
        hosts: n,
        better: Better::of_unit(unit),
        lowest_host: low.0.into(),
        lowest: low.1,
        highest_host: high.0.into(),
        highest: high.1,
        mean,
        cv_percent: (mean > 0.0).then(|| var.sqrt() / mean * 100.0),
    })
}

/// A unit as a JSON field-name suffix: `MB/s` → `mb_per_s`, `µs` → `us`, `IOPS` →
/// `ios_per_s`, `%` → `percent`.
pub fn unit_suffix(unit: &str) -> String {
    let s = unit
        .replace("kIOPS", "kios_per_s")
        .replace("IOPS", "ios_per_s")
        .replace('µ', "u")
        .replace("°C", "celsius")
        .replace('%', "percent")
        .replace('/', "_per_");
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    match s.trim_matches('_') {
        "" => "value".into(),
        "w" => "watts".into(),
        t => t.into(),
    }
}

/// Sparse histograms (`[bucket lower bound, count]`, one layout) merged by adding the
/// counts of equal buckets: exact.
pub fn merge_buckets(lists: &[&[[u64; 2]]]) -> Vec<[u64; 2]> {
    let mut m = std::collections::BTreeMap::<u64, u64>::new();
    for l in lists {
        for &[lo, c] in l.iter() {
            *m.entry(lo).or_default() += c;
        }
    }
    m.into_iter().map(|(lo, c)| [lo, c]).collect()
}

/// Where each host's series starts on the common clock, in whole intervals after the
/// earliest start: `starts_ms` are the hosts' series starts (epoch ms).
pub fn offsets(starts_ms: &[u64], interval_ms: u64) -> Vec<usize> {
    let first = starts_ms.iter().copied().min().unwrap_or(0);
    let iv = interval_ms.max(1);
    starts_ms
        .iter()
        .map(|&s| ((s - first + iv / 2) / iv) as usize)
        .collect()
}

/// Series summed on one clock: host `i`'s values start at `offsets[i]`.
pub fn sum_on_clock(series: &[&[u64]], offsets: &[usize]) -> Vec<u64> {
    let len = series
        .iter()
        .zip(offsets)
        .map(|(s, o)| s.len() + o)
        .max()
        .unwrap_or(0);
    let mut out = vec![0u64; len];
    for (s, &o) in series.iter().zip(offsets) {
        for (k, v) in s.iter().enumerate() {
            out[o + k] += v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_names_the_slowest_and_fastest() {
        let v = [("a".into(), 100.0), ("b".into(), 80.0), ("c".into(), 120.0)];
        let s = spread(&v, "MB/s").unwrap();
        assert_eq!((s.slowest().unwrap().0, s.fastest().unwrap().0), ("b", "c"));
        assert!((s.mean - 100.0).abs() < 1e-9);
        assert!((s.cv_percent.unwrap() - 16.329_931_618_554_52).abs() < 1e-9);
        // For a latency, lower is faster.
        let s = spread(&v, "µs").unwrap();
        assert_eq!((s.slowest().unwrap().0, s.fastest().unwrap().0), ("c", "b"));
        // A temperature has no slowest host.
        let s = spread(&v, "°C").unwrap();
        assert!(s.slowest().is_none() && s.fastest().is_none());
        assert_eq!(
            (s.lowest_host.as_str(), s.highest_host.as_str()),
            ("b", "c")
        );
        assert!(spread(&[], "MB/s").is_none());
        assert_eq!(
            spread(&[("z".into(), 0.0)], "IOPS").unwrap().cv_percent,
            None
        );
    }

    #[test]
    fn units_become_field_name_suffixes() {
        for (u, want) in [
            ("MB/s", "mb_per_s"),
            ("IOPS", "ios_per_s"),
            ("µs", "us"),
            ("ms", "ms"),
            ("%", "percent"),
            ("°C", "celsius"),
            ("W", "watts"),
            ("kIOPS/W", "kios_per_s_per_w"),
            ("MB/s/W", "mb_per_s_per_w"),
        ] {
            assert_eq!(unit_suffix(u), want, "{u}");
        }
    }

    #[test]
    fn histograms_merge_by_adding_and_series_line_up() {
        let a = [[100, 2], [200, 1]];
        let b = [[200, 4], [300, 1]];
        assert_eq!(merge_buckets(&[&a, &b]), vec![[100, 2], [200, 5], [300, 1]]);
        let o = offsets(&[10_000, 11_020, 10_480], 1000);
        assert_eq!(o, vec![0, 1, 0]);
        let s = sum_on_clock(&[&[1, 2, 3], &[10, 20], &[5]], &o);
        assert_eq!(s, vec![6, 12, 23]);
    }
}
