//! fio's latency histogram: 29 groups of 64 log-linear bins in nanoseconds (1856 bins;
//! `FIO_IO_U_PLAT_BITS = 6`, `FIO_IO_U_PLAT_GROUP_NR = 29`), exact below 128 ns. The
//! json+ `bins` are keyed by each bin's representative value (fio's
//! `plat_idx_to_val`: the bin's low edge plus half its width), which maps back to the
//! bin exactly. drivelab's own histogram splits every power of two into 128 buckets,
//! twice as fine, so its edges include all of fio's and fio counts move into it
//! without loss: a fio bin becomes the drivelab bucket holding fio's value for it.

use drivelab_engine::hist::{HistogramJson, SCHEME};
use drivelab_engine::result::{LatencyStats, Percentile, PERCENTILES};

/// Bins of fio's histogram.
pub const NR: usize = 1856;
const BITS: u32 = 6;
const VAL: u64 = 1 << BITS;

/// fio's `plat_val_to_idx`: the bin of `v` ns.
pub fn idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= BITS {
        return v as usize;
    }
    let eb = msb - BITS;
    let base = (eb as u64 + 1) << BITS;
    ((base + ((v >> eb) & (VAL - 1))) as usize).min(NR - 1)
}

/// fio's `plat_idx_to_val`: the value fio reports for bin `i` (its low edge plus half
/// its width; the bin's value itself below 128 ns).
pub fn val(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * VAL {
        return i;
    }
    let eb = (i >> BITS) - 1;
    let base = 1u64 << (eb + BITS as u64);
    let k = i % VAL;
    base + (k << eb) + (1 << eb) / 2
}

/// The most `log_hist_coarseness` fio takes (its option's range is 0…6).
pub const MAX_COARSENESS: u32 = 6;

/// The columns of a histogram log row at `log_hist_coarseness` `c`: fio sums each run
/// of 2^c adjacent bins into one column (`hist_sum` in fio's iolog.c), 1856 >> c of
/// them (fio's help text still says 1216 >> c, from before its bins were nanoseconds).
pub fn columns(c: u32) -> usize {
    NR >> c
}

/// The coarseness whose rows have `n` columns, if any.
pub fn coarseness_of(n: usize) -> Option<u32> {
    (0..=MAX_COARSENESS).find(|&c| columns(c) == n)
}

/// The low edge (ns) of fine bin `i` (`i` = NR: the edge past the last bin).
fn lo_edge(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * VAL {
        return i;
    }
    let eb = (i >> BITS) - 1;
    (1u64 << (eb + BITS as u64)) + ((i % VAL) << eb)
}

/// The value of column `j` of a row at coarseness `c`: the middle of the fine bins it
/// sums (its low edge plus half its width, as fio's `plat_idx_to_val` gives a fine bin
/// and fio's `fiologparser_hist.py` a coarse one); [`val`] at coarseness 0. A 2^c run
/// of bins never crosses one of fio's groups of 64, so a column's bins have one width.
pub fn coarse_val(j: usize, c: u32) -> u64 {
    let s = 1usize << c;
    let (lo, hi) = (lo_edge(j * s), lo_edge((j + 1) * s));
    lo + (hi - lo) / 2
}

/// Fine counts summed 2^`c` at a time, as fio writes them at coarseness `c`.
pub fn coarsen(counts: &[u64], c: u32) -> Vec<u64> {
    counts
        .chunks(1 << c)
        .map(|k| k.iter().fold(0u64, |a, &b| a.saturating_add(b)))
        .collect()
}

/// Dense counts from json+ `bins` (keys are fio's bin values in ns).
pub fn from_json_bins(bins: &super::json::Bins) -> Vec<u64> {
    let mut out = vec![0u64; NR];
    for &(v, c) in &bins.0 {
        out[idx(v)] = out[idx(v)].saturating_add(c);
    }
    out
}

/// fio's `calc_clat_percentiles`: the value of the first bin where the running count
/// reaches p/100 · n.
pub fn percentile(counts: &[u64], p: f64) -> Option<u64> {
    percentile_at(counts, p, 0)
}

/// [`percentile`] of counts at coarseness `c` ([`coarsen`]): the first column where the
/// running count reaches p/100 · n, as [`coarse_val`]. fio's own percentile lies in
/// that column, within half its width of the value given.
pub fn percentile_at(counts: &[u64], p: f64, c: u32) -> Option<u64> {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return None;
    }
    let want = p / 100.0 * n as f64;
    let mut sum = 0u64;
    for (i, &n_i) in counts.iter().enumerate() {
        sum += n_i;
        if n_i > 0 && sum as f64 >= want {
            return Some(coarse_val(i, c));
        }
    }
    counts
        .iter()
        .rposition(|&n| n > 0)
        .map(|i| coarse_val(i, c))
}

/// The exact scalars fio reports beside a histogram (`lat_ns` / `clat_ns`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scalars {
    pub n: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
}

/// drivelab's latency statistics: fio's min, max, mean and deviation, and drivelab's
/// percentile list worked out from the bins the way fio does (so they equal fio's own
/// where fio reports the same percentile).
pub fn latency_stats(counts: &[u64], s: &Scalars) -> LatencyStats {
    let n: u64 = counts.iter().sum();
    let some = s.n > 0;
    LatencyStats {
        min_ns: some.then_some(s.min_ns),
        max_ns: some.then_some(s.max_ns),
        mean_ns: some.then_some(s.mean_ns),
        stddev_ns: some.then_some(s.stddev_ns),
        percentiles: PERCENTILES
            .iter()
            .filter_map(|&p| {
                let v = percentile(counts, p)?;
                let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
                Some(Percentile {
                    percentile: p,
                    value_ns: v,
                    samples_above: n - rank,
                })
            })
            .collect(),
    }
}

/// fio's counts as a drivelab histogram: each bin's count in the drivelab bucket that
/// holds fio's value for the bin; count, min, max, sum and sum of squares from fio's
/// exact scalars.
pub fn to_histogram(counts: &[u64], s: &Scalars) -> HistogramJson {
    let mut buckets: std::collections::BTreeMap<u64, u64> = Default::default();
    for (i, &c) in counts.iter().enumerate() {
        if c > 0 {
            let v = val(i);
            let lo = lo_of(v);
            *buckets.entry(lo).or_default() += c;
        }
    }
    let n: u64 = counts.iter().sum();
    HistogramJson {
        scheme: SCHEME.to_string(),
        count: n,
        overflow_count: 0,
        min_ns: (n > 0).then_some(s.min_ns),
        max_ns: (n > 0).then_some(s.max_ns),
        sum_ns: s.mean_ns * n as f64,
        sum_sq_ns2: (s.stddev_ns * s.stddev_ns + s.mean_ns * s.mean_ns) * n as f64,
        buckets: buckets.into_iter().map(|(lo, c)| [lo, c]).collect(),
    }
}

/// Low edge of the drivelab bucket holding `v`.
fn lo_of(v: u64) -> u64 {
    drivelab_engine::hist::bucket_bounds(drivelab_engine::hist::bucket_index(v)).0
}

/// Dense fio counts from a drivelab histogram made by [`to_histogram`] (for merging
/// imported results back on fio's grid).
pub fn from_histogram(h: &HistogramJson) -> Vec<u64> {
    let mut out = vec![0u64; NR];
    for &[lo, c] in &h.buckets {
        out[idx(lo)] += c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_map_back_to_their_bins() {
        for i in 0..NR {
            assert_eq!(idx(val(i)), i, "bin {i}");
        }
        assert_eq!(idx(127), 127);
        assert_eq!(idx(128), 128);
        assert_eq!(val(128), 129);
        // Width 2 from 128: bin 129 is [130, 132), reported as 131.
        assert_eq!(val(129), 131);
        assert_eq!(idx(u64::MAX >> 1), NR - 1);
    }

    #[test]
    fn fio_bins_fall_whole_into_one_drivelab_bucket() {
        // Every fio bin's low and high edge lie in drivelab buckets whose edges include
        // fio's: the bucket of fio's value is inside the bin.
        for i in 128..NR - 1 {
            let lo = lo_of(val(i));
            assert_eq!(idx(lo), i);
        }
    }

    #[test]
    fn percentiles_follow_fio() {
        let mut c = vec![0u64; NR];
        c[idx(1000)] = 50;
        c[idx(5000)] = 49;
        c[idx(90_000)] = 1;
        assert_eq!(percentile(&c, 50.0), Some(val(idx(1000))));
        assert_eq!(percentile(&c, 50.5), Some(val(idx(5000))));
        assert_eq!(percentile(&c, 99.0), Some(val(idx(5000))));
        assert_eq!(percentile(&c, 99.5), Some(val(idx(90_000))));
    }

    #[test]
    fn coarse_columns_sum_whole_runs_of_bins_and_take_their_middle() {
        assert_eq!(
            (0..=MAX_COARSENESS).map(columns).collect::<Vec<_>>(),
            [1856, 928, 464, 232, 116, 58, 29]
        );
        assert_eq!(coarseness_of(464), Some(2));
        assert_eq!(coarseness_of(1216), None);
        for i in 0..NR {
            assert_eq!(coarse_val(i, 0), val(i), "bin {i}");
        }
        // Coarseness 2 above 128 ns: bins 128..=131 are [128, 136), middle 132.
        assert_eq!(coarse_val(32, 2), 132);
        // Exact below 128: [0, 4) → 2.
        assert_eq!(coarse_val(0, 2), 2);
        // Every fine bin's value lies in its column and within half the column's width.
        for c in 1..=MAX_COARSENESS {
            let s = 1usize << c;
            for i in 0..NR {
                let j = i / s;
                let (lo, hi) = (lo_edge(j * s), lo_edge((j + 1) * s));
                assert!((lo..hi).contains(&val(i)), "c {c} bin {i}");
                assert!(
                    coarse_val(j, c).abs_diff(val(i)) <= (hi - lo) / 2,
                    "c {c} bin {i}"
                );
            }
        }
        let mut f = vec![0u64; NR];
        f[idx(1000)] = 50;
        f[idx(5000)] = 50;
        let k = coarsen(&f, 3);
        assert_eq!(k.len(), 232);
        assert_eq!(k.iter().sum::<u64>(), 100);
        let p = percentile_at(&k, 99.0, 3).unwrap();
        assert_eq!(p, coarse_val(idx(5000) / 8, 3));
    }
}
