//! Latency exceedance curves (1 − CDF on a log scale) from the saved histograms: the
//! share of I/Os slower than each latency, which shows the whole tail at once.

use drivelab_engine::hist::{Histogram, HistogramJson};
use drivelab_engine::result::Histograms;

use crate::model::{Axis, Chart, Series};

/// Merges histograms (read, write or both of several steps) into one; None when empty
/// or when one is of an unknown bucket scheme.
pub fn merge_histograms<'a>(
    hists: impl IntoIterator<Item = &'a HistogramJson>,
) -> Option<Histogram> {
    let mut total = Histogram::new();
    for j in hists {
        total.merge(&Histogram::from_json(j).ok()?);
    }
    (total.count() > 0).then_some(total)
}

/// Width of the bucket starting at `lower` ns (the engine's log-linear layout).
fn bucket_width(lower: u64) -> u64 {
    if lower < 256 {
        1
    } else {
        1 << ((63 - lower.leading_zeros()) - 7)
    }
}

/// `(latency µs, share of I/Os slower)` at each bucket's upper edge, starting with
/// `(min, 1)`. Points within 2 % in latency and 10 % in share of the previous are
/// thinned; shares of 0 (beyond the
/// slowest I/O) are left out, as a log axis cannot show them.
pub fn exceedance_points(h: &Histogram) -> Vec<(f64, f64)> {
    let total = h.count();
    if total == 0 {
        return Vec::new();
    }
    let mut pts = Vec::new();
    if let Some(min) = h.min() {
        pts.push((min as f64 / 1e3, 1.0));
    }
    let mut seen = 0u64;
    let buckets: Vec<(u64, u64)> = h.nonempty_buckets().collect();
    for (i, &(lo, c)) in buckets.iter().enumerate() {
        seen += c;
        let above = total.saturating_sub(seen);
        if above == 0 {
            break;
        }
        let x = (lo + bucket_width(lo)) as f64 / 1e3;
        let y = above as f64 / total as f64;
        let last = i + 1 == buckets.len();
        match pts.last() {
            Some(&(px, py)) if x < px * 1.02 && y > py * 0.9 && !last => {}
            _ => pts.push((x, y)),
        }
    }
    pts
}

/// Which direction(s) of the step histograms a curve counts.
#[derive(Clone, Copy)]
pub(crate) enum Dir {
    Read,
    Write,
    Both,
}

/// The exceedance series of `hists` (merged), or None when they hold no I/O.
pub(crate) fn series(name: String, group: &str, hists: &[&Histograms], dir: Dir) -> Option<Series> {
    let parts = hists.iter().flat_map(|h| match dir {
        Dir::Read => vec![&h.read],
        Dir::Write => vec![&h.write],
        Dir::Both => vec![&h.read, &h.write],
    });
    let merged = merge_histograms(parts)?;
    let pts = exceedance_points(&merged);
    (pts.len() > 1).then(|| Series::line(name, group, pts))
}

/// An empty exceedance chart.
pub(crate) fn chart(id: String, title: String) -> Chart {
    Chart::new(
        id,
        title,
        Axis::log10("Latency", "µs"),
        Axis::log10("Share of I/Os slower", "fraction").range(None, Some(1.0)),
    )
    .note("1 − CDF of every completed I/O's latency; 10⁻² is the p99, 10⁻⁴ the p99.99.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceedance_of_known_latencies() {
        let mut h = Histogram::new();
        // 90 I/Os at 100 ns, 9 at 1000 ns, 1 at 10 000 ns.
        for _ in 0..90 {
            h.record(100);
        }
        for _ in 0..9 {
            h.record(1000);
        }
        h.record(10_000);
        let p = exceedance_points(&h);
        assert_eq!(p[0], (0.1, 1.0));
        // After the 100 ns bucket (upper edge 101 ns) 10 % are slower.
        assert_eq!(p[1], (0.101, 0.1));
        // After the 1000 ns bucket (width 4 ns) 1 % is slower.
        assert_eq!(p[2], (1.004, 0.01));
        // The slowest I/O leaves nothing above it: no point at 0.
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn widths_follow_the_engine_layout() {
        assert_eq!(bucket_width(255), 1);
        assert_eq!(bucket_width(256), 2);
        assert_eq!(bucket_width(1000), 4);
        assert_eq!(bucket_width(1 << 20), 1 << 13);
    }
}
