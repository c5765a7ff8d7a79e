//! Sequential fill consistency: 128K sequential writes over 90 % of a drive,
//! write rate each interval against bytes written. Finds the write cache (the
//! fast initial phase and how many bytes it absorbed) and the episodes where
//! the rate collapses.
//!
//! Inputs: `mbps[i]` is the write rate during interval i in decimal MB/s
//! (10⁶ bytes per second), `cum_bytes_written[i]` the bytes written by the
//! end of interval i, and `interval_s` the width of one interval in seconds
//! (1 for a per-second series; a fill logged every 100 ms sees caches that
//! last under two seconds and drops that straddle two seconds). Only the
//! first min(len) intervals of the two series are used. NaN, infinite and
//! negative rates are read as 0.

use serde::{Deserialize, Serialize};

use crate::runs::runs_where;
use crate::stats::{clean, clean_series, mean, median};

/// The initial (cache) speed is taken from this many first seconds.
pub const INITIAL_WINDOW_S: usize = 5;
/// ... from those of them within this fraction of the fastest.
pub const INITIAL_NEAR_FRACTION: f64 = 0.10;
/// The cache has ended once the rate falls below (1 − 0.10) × the initial
/// speed ...
pub const CACHE_DROP_FRACTION: f64 = 0.10;
/// ... and stays there: the median of the [`CACHE_CONFIRM_S`] seconds starting
/// at the first slow second must be below that threshold too, ...
pub const CACHE_CONFIRM_S: usize = 60;
/// ... and at least this many seconds must be left to judge that.
pub const CACHE_MIN_CONFIRM_S: usize = 30;
/// Seconds below this fraction of the post-cache median are dips, not the
/// post-cache level, when placing the cache end.
pub const CACHE_DIP_FRACTION: f64 = 0.5;
/// Seconds on each side of the cache end used to measure the cache and
/// post-cache levels for the sub-interval interpolation.
pub const CACHE_LEVEL_WINDOW_S: usize = 60;
/// A drop episode lasts at least this long less one interval (so that a drop
/// of one second is found whatever its phase against the intervals; at 1 s
/// intervals every slow second is one).
pub const DROP_MIN_S: f64 = 1.0;

/// A cache can end in periodic stalls instead of a lower level (a drive that folds
/// its full cache while the host waits, and writes at the link's speed between): at
/// least this many drops, ...
pub const STALL_CACHE_MIN_DROPS: usize = 3;
/// ... the first after a stretch this many times longer than the longest stretch
/// between two later drops (a drive with no cache that stalls from the start has its
/// first drop as soon as the others), ...
pub const STALL_CACHE_GAP_FACTOR: f64 = 3.0;

const BYTES_PER_MB: f64 = 1e6;

/// A run of intervals whose write rate is below the drop threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// Start of the episode, seconds from the start of the fill.
    pub start_s: f64,
    /// Length of the episode in seconds (whole intervals).
    pub len_s: f64,
    /// Lowest rate of an interval during the episode.
    pub min_mbps: f64,
    /// Bytes written before the episode began (0 when it starts at the start).
    pub at_bytes: u64,
    /// Bytes written by the episode's end.
    pub end_bytes: u64,
}

/// Result of [`analyze_fill`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillSummary {
    /// Width of the intervals analysed, seconds.
    pub interval_s: f64,
    /// Seconds analysed.
    pub duration_s: f64,
    /// Bytes written by the end of the last interval analysed.
    pub total_bytes: u64,
    /// Initial (cache) speed: median of those of the first [`INITIAL_WINDOW_S`]
    /// seconds that are within 10 % of the fastest of them when there are two or more,
    /// else of all of them (at the resolution that found the cache, see
    /// `cache_resolution_s`).
    pub initial_mbps: Option<f64>,
    /// Rate below which the cache counts as exhausted: 0.9 × initial_mbps.
    pub cache_threshold_mbps: Option<f64>,
    /// Bytes written before the cache ran out, interpolated within the interval
    /// where it did; `None` when there is no sustained drop (no cache seen).
    pub cache_bytes: Option<u64>,
    /// Start of the first interval below the cache threshold at the start of
    /// the sustained drop, seconds (the cache ran out during it or the one before).
    pub cache_end_s: Option<f64>,
    /// Width of the intervals the cache was found at: 1 s, or the logging
    /// interval when the cache lasted under [`INITIAL_WINDOW_S`] seconds or ended
    /// in stalls.
    pub cache_resolution_s: f64,
    /// The cache ended in periodic stalls rather than at a lower level: it ends where
    /// the first drop begins, and the post-cache average holds the stalls (see
    /// [`STALL_CACHE_MIN_DROPS`]); false when a sustained drop ended it or no cache
    /// was seen (and in bundles written before this was analysed).
    #[serde(default)]
    pub cache_ended_by_stalls: bool,
    /// No cache end was found but the first interval ran faster than 1/0.9 of the
    /// median rate: a cache that ran out inside it is too short to see at this
    /// logging interval.
    pub cache_too_short_to_see: bool,
    /// Median rate of up to [`CACHE_LEVEL_WINDOW_S`] seconds before the cache
    /// end (the cache level used for the interpolation).
    pub cache_mbps: Option<f64>,
    /// Mean rate from cache_end_s to the end (None without a cache end).
    pub post_cache_avg_mbps: Option<f64>,
    /// Median rate from cache_end_s to the end (None without a cache end).
    pub post_cache_median_mbps: Option<f64>,
    /// Mean of all per-interval rates.
    pub overall_avg_mbps: Option<f64>,
    /// The rate drops are measured against: the median of the post-cache intervals
    /// (the whole series when there is no cache end) that are at least half of
    /// their 90th percentile (the level the drive writes at when it writes).
    pub drop_reference_mbps: Option<f64>,
    /// drop_fraction × drop_reference_mbps.
    pub drop_threshold_mbps: Option<f64>,
    /// Every run of intervals below the drop threshold lasting at least
    /// [`DROP_MIN_S`] less one interval, in time order.
    pub drops: Vec<Episode>,
    /// Number of drop episodes.
    pub drop_count: usize,
    /// Longest drop episode in seconds (0 when none).
    pub drop_longest_s: f64,
    /// Seconds spent in drop episodes.
    pub drop_total_s: f64,
}

/// The cache as found at one resolution.
#[derive(Debug, Clone, Copy)]
struct Cache {
    initial: Option<f64>,
    threshold: Option<f64>,
    /// Interval index of the cache end, the cache level and the bytes it held.
    end: Option<(usize, f64, u64)>,
}

/// Analyses a sequential fill.
///
/// Rules (windows given in seconds are that many seconds of intervals):
/// - **Resolution**: the cache is looked for in the per-second rates (whole
///   seconds of intervals merged); when it is not found there, or ends within
///   the first [`INITIAL_WINDOW_S`] seconds, and the intervals are shorter than
///   a second, it is looked for again in the intervals themselves, where a
///   cache of 1.3 s is 13 intervals of 100 ms. Drops are always found in the
///   intervals.
/// - **Initial speed**: the median of those of the first [`INITIAL_WINDOW_S`] (5)
///   seconds within 10 % of the fastest of them, when there are at least two: a slow
///   first second does not matter, and a cache that lasts two seconds still sets it (a
///   plain median of the five took the second in which such a cache ran out). A single
///   fast second (a DRAM buffer's burst) does not: then it is the median of the five.
/// - **Cache end**: call an interval slow when its rate is below the threshold
///   0.9 × initial speed. The first sustained drop is the first interval
///   s₀ ≥ 1 that is slow and where the median of the 60 s from s₀ on
///   (those that exist, at least 30 s) is below the threshold as well: dips
///   that fill less than half of the minute after them — like 3–5 s
///   collapses every 10–15 s — are never a sustained drop. No such interval:
///   no cache behaviour, `cache_bytes` is `None` (so a cache that runs out in
///   the last 30 s is not seen). Intervals below [`CACHE_DIP_FRACTION`] (½) ×
///   that median are dips, which the following steps leave out. The cache end
///   is the slow non-dip interval s in the 60 s from s₀ that fits a step best:
///   the fewest misfits = (slow non-dip intervals in the 60 s before s) +
///   (fast non-dip intervals in the 60 s from s), the earliest on ties. So a dip
///   just before the real end does not move it, and neither does a brief slow
///   spell inside the cache phase (a thermal throttle) followed by more cache
///   speed.
/// - **Cache size**: the cache ran out inside interval s − 1 or s. With c the
///   median of up to 60 s of non-dip intervals before s − 1 and p the median of
///   up to 60 s of non-dip intervals after s, the fraction of an interval spent at
///   cache speed is f = (rate − p)/(c − p), clamped to 0–1, taken in whichever of
///   the two intervals is further from a pure level (s − 1 if it is not
///   a dip and 1 − f(s−1) > f(s), else s); `cache_bytes` = bytes
///   written before that interval + f × c × 10⁶ × interval, kept within that
///   interval's bytes.
/// - **Drop episodes**: maximal runs of intervals whose rate is below
///   `drop_fraction` × the post-cache writing level (the median of the
///   post-cache intervals at least half of their 90th percentile; of the whole
///   series when there is no cache end: a drive down most of the time keeps
///   the level it writes at), lasting at least [`DROP_MIN_S`] less one interval,
///   anywhere in the series. A NaN, infinite or negative `drop_fraction` finds
///   no episodes.
pub fn analyze_fill(
    mbps: &[f64],
    cum_bytes_written: &[u64],
    interval_s: f64,
    drop_fraction: f64,
) -> FillSummary {
    let k = if interval_s.is_finite() && interval_s > 0.0 {
        interval_s.min(1.0)
    } else {
        1.0
    };
    let n = mbps.len().min(cum_bytes_written.len());
    let v = clean_series(&mbps[..n]);
    let cum = &cum_bytes_written[..n];
    let group = (1.0 / k).round().max(1.0) as usize;

    // Whole seconds first (the last partial second left out when there are intervals).
    let (secs, cum_secs) = per_second(&v, cum, group);
    let coarse = find_cache(&secs, &cum_secs, 1.0);
    let short = |c: &Cache| c.end.is_none_or(|(e, _, _)| e < INITIAL_WINDOW_S);
    let (mut cache, mut res) = if group > 1 && short(&coarse) {
        let fine = find_cache(&v, cum, k);
        if fine.end.is_some() {
            (fine, k)
        } else {
            (coarse, 1.0)
        }
    } else {
        (coarse, 1.0)
    };
    let stalled = cache.end.is_none()
        && match cache
            .initial
            .and_then(|i| stall_cache_end(&v, cum, k, i, drop_fraction))
        {
            Some(end) => {
                (cache.end, res) = (Some(end), k);
                true
            }
            None => false,
        };
    let cache_end_s = cache.end.map(|(e, _, _)| e as f64 * res);
    // The first interval after the cache end.
    let post_from = cache_end_s.map(|t| ((t / k).round() as usize).min(n));
    let post = post_from.map(|i| &v[i..]);
    let post_cache_median_mbps = post.and_then(median);
    let whole_median = median(&v);
    let too_short =
        cache.end.is_none() && whole_median.is_some_and(|m| v[0] * (1.0 - CACHE_DROP_FRACTION) > m);
    let drop_reference_mbps = writing_level(match post_from {
        Some(i) => &v[i..],
        None => &v,
    });
    let drop_threshold_mbps = drop_reference_mbps.map(|r| clean(drop_fraction) * r);
    let drops = drop_threshold_mbps.map_or_else(Vec::new, |thr| drops(&v, cum, k, thr));

    FillSummary {
        interval_s: k,
        duration_s: n as f64 * k,
        total_bytes: cum.last().copied().unwrap_or(0),
        initial_mbps: cache.initial,
        cache_threshold_mbps: cache.threshold,
        cache_bytes: cache.end.map(|(_, _, b)| b),
        cache_end_s,
        cache_resolution_s: res,
        cache_ended_by_stalls: stalled,
        cache_too_short_to_see: too_short,
        cache_mbps: cache.end.map(|(_, c, _)| c),
        post_cache_avg_mbps: post.and_then(mean),
        post_cache_median_mbps,
        overall_avg_mbps: mean(&v),
        drop_reference_mbps,
        drop_threshold_mbps,
        drop_count: drops.len(),
        drop_longest_s: drops.iter().map(|e| e.len_s).fold(0.0, f64::max),
        drop_total_s: drops.iter().map(|e| e.len_s).fold(0.0, |a, b| a + b),
        drops,
    }
}

/// The rate a drive writes at when it writes: the median of the intervals at least
/// [`CACHE_DIP_FRACTION`] of the 90th percentile. Without dips this is the median; a
/// drive down more than half of the time (long fold stalls) keeps the level of its
/// writing intervals, not 0, so its drops are still drops.
fn writing_level(v: &[f64]) -> Option<f64> {
    let top = crate::stats::percentile(v, 90.0)?;
    let writing: Vec<f64> = v
        .iter()
        .copied()
        .filter(|&x| x >= CACHE_DIP_FRACTION * top)
        .collect();
    median(&writing)
}

/// Whole seconds of `group` intervals each: mean rate and bytes by the second's end.
/// With one interval a second, the series as they are.
fn per_second(v: &[f64], cum: &[u64], group: usize) -> (Vec<f64>, Vec<u64>) {
    if group == 1 {
        return (v.to_vec(), cum.to_vec());
    }
    let whole = v.len() / group;
    let secs = (0..whole)
        .map(|s| v[s * group..(s + 1) * group].iter().sum::<f64>() / group as f64)
        .collect();
    let cum_secs = (0..whole).map(|s| cum[(s + 1) * group - 1]).collect();
    (secs, cum_secs)
}

/// Intervals in `secs` seconds at interval width `k` (at least 1).
fn intervals(secs: usize, k: f64) -> usize {
    ((secs as f64 / k).round() as usize).max(1)
}

/// The initial speed, the cache threshold, and the cache end and size at one resolution.
fn find_cache(v: &[f64], cum: &[u64], k: f64) -> Cache {
    let n = v.len();
    let first = &v[..n.min(intervals(INITIAL_WINDOW_S, k))];
    let fastest = first.iter().copied().fold(0.0, f64::max);
    let near: Vec<f64> = first
        .iter()
        .copied()
        .filter(|&x| x >= (1.0 - INITIAL_NEAR_FRACTION) * fastest)
        .collect();
    // One fast interval alone (a DRAM buffer's burst ahead of the SLC cache) does not
    // set it: the plain median of the first seconds does then.
    let initial = if near.len() >= 2 {
        median(&near)
    } else {
        median(first)
    };
    let threshold = initial.map(|i| i * (1.0 - CACHE_DROP_FRACTION));
    let edge = threshold.and_then(|thr| find_cache_end(v, thr, k));
    let end = match (edge, initial) {
        (Some(e), Some(init)) => Some(cache_size(v, cum, k, e, init)),
        _ => None,
    };
    Cache {
        initial,
        threshold,
        end,
    }
}

/// The cache end's interval, the cache level and the bytes the cache held.
fn cache_size(v: &[f64], cum: &[u64], k: f64, e: CacheEdge, init: f64) -> (usize, f64, u64) {
    let n = v.len();
    let before = |s: usize| if s == 0 { 0 } else { cum[s - 1] };
    let t = e.end_s;
    let w = intervals(CACHE_LEVEL_WINDOW_S, k);
    let level = |x: &[f64]| median(&e.without_dips(x));
    let c = level(&v[(t - 1).saturating_sub(w)..t - 1]).unwrap_or(init);
    let p = level(&v[(t + 1).min(n)..n.min(t + 1 + w)]).unwrap_or(v[t]);
    let bytes = if c > p {
        let frac = |s: usize| ((v[s] - p) / (c - p)).clamp(0.0, 1.0);
        let (sec, f) = if !e.is_dip(v[t - 1]) && 1.0 - frac(t - 1) > frac(t) {
            (t - 1, frac(t - 1))
        } else {
            (t, frac(t))
        };
        let lo = before(sec);
        let hi = cum[sec].max(lo);
        let est = lo as f64 + f * c * BYTES_PER_MB * k;
        (est.round() as u64).clamp(lo, hi)
    } else {
        before(t)
    };
    (t, c, bytes)
}

/// A cache that ends in periodic stalls, when no sustained drop ended it: at least
/// [`STALL_CACHE_MIN_DROPS`] drops (against the writing level of the whole series), the
/// first one after a stretch [`STALL_CACHE_GAP_FACTOR`] times longer than the longest
/// from one later drop's start to the next's, and the mean rate from it on (stalls
/// included) below the cache threshold (0.9 × `initial`). The cache ends where the first
/// drop begins; its level is the median rate before it, its bytes those written before it.
fn stall_cache_end(
    v: &[f64],
    cum: &[u64],
    k: f64,
    initial: f64,
    drop_fraction: f64,
) -> Option<(usize, f64, u64)> {
    let level = writing_level(v)?;
    let found = drops(v, cum, k, clean(drop_fraction) * level);
    if found.len() < STALL_CACHE_MIN_DROPS {
        return None;
    }
    let start = |e: &Episode| (e.start_s / k).round() as usize;
    let first = start(&found[0]);
    let longest_gap = found
        .windows(2)
        .skip(1)
        .map(|w| start(&w[1]) - start(&w[0]))
        .max()
        .unwrap_or(0);
    let long_before = first >= intervals(INITIAL_WINDOW_S, k)
        && first as f64 > STALL_CACHE_GAP_FACTOR * longest_gap as f64;
    let slower_after = mean(&v[first..]).is_some_and(|m| m < (1.0 - CACHE_DROP_FRACTION) * initial);
    (long_before && slower_after).then(|| {
        (
            first,
            median(&v[..first]).unwrap_or(initial),
            cum[first - 1],
        )
    })
}

/// The drop episodes of the series against the threshold `thr`.
fn drops(v: &[f64], cum: &[u64], k: f64, thr: f64) -> Vec<Episode> {
    let before = |s: usize| if s == 0 { 0 } else { cum[s - 1] };
    let min_len = ((DROP_MIN_S / k).round() as usize).saturating_sub(1).max(1);
    runs_where(v, |x| x < thr)
        .into_iter()
        .filter(|r| r.len >= min_len)
        .map(|r| Episode {
            start_s: r.start as f64 * k,
            len_s: r.len as f64 * k,
            min_mbps: v[r.start..r.start + r.len]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min),
            at_bytes: before(r.start),
            end_bytes: cum[r.start + r.len - 1],
        })
        .collect()
}

/// Where the cache ran out, and which intervals are dips rather than levels.
#[derive(Clone, Copy)]
struct CacheEdge {
    /// First interval of the post-cache phase.
    end_s: usize,
    /// Intervals below this rate are dips (see [`CACHE_DIP_FRACTION`]).
    dip_below: f64,
}

impl CacheEdge {
    fn is_dip(&self, x: f64) -> bool {
        x < self.dip_below
    }

    fn without_dips(&self, w: &[f64]) -> Vec<f64> {
        w.iter().copied().filter(|&x| !self.is_dip(x)).collect()
    }
}

/// The cache end rule of [`analyze_fill`], at interval width `k`.
fn find_cache_end(v: &[f64], thr: f64, k: f64) -> Option<CacheEdge> {
    let n = v.len();
    let confirm = intervals(CACHE_CONFIRM_S, k);
    let min_confirm = intervals(CACHE_MIN_CONFIRM_S, k);
    let window = |s: usize| &v[s..n.min(s + confirm)];
    let first = (1..n).find(|&s| {
        let w = window(s);
        v[s] < thr && w.len() >= min_confirm && median(w).is_some_and(|m| m < thr)
    })?;
    let edge = |end_s| CacheEdge {
        end_s,
        dip_below: median(window(first)).unwrap_or(0.0) * CACHE_DIP_FRACTION,
    };
    let probe = edge(first);
    // Non-dip intervals of a window that a step at its edge would misplace.
    let misfits = |w: &[f64], fits: &dyn Fn(f64) -> bool| {
        probe.without_dips(w).iter().filter(|&&x| !fits(x)).count()
    };
    let step_misfits = |s: usize| {
        misfits(&v[s.saturating_sub(confirm)..s], &|x| x >= thr) + misfits(window(s), &|x| x < thr)
    };
    // Fewest misfits, the earliest interval on ties.
    let best = (first..n.min(first + confirm))
        .filter(|&s| v[s] < thr && !probe.is_dip(v[s]))
        .map(|s| (s, step_misfits(s)))
        .fold(None, |best: Option<(usize, usize)>, (s, m)| match best {
            Some((_, b)) if b <= m => best,
            _ => Some((s, m)),
        });
    Some(edge(best.map_or(first, |b| b.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: f64 = 1e9;

    fn gauss(rng: &mut fastrand::Rng) -> f64 {
        let u1 = rng.f64().max(f64::MIN_POSITIVE);
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * rng.f64()).cos()
    }

    /// A synthetic fill.
    struct Drive {
        cache_bytes: f64,
        cache_mbps: f64,
        post_mbps: f64,
        total_bytes: f64,
        /// Dips (3–5 s at 20–45 MB/s, every 10–15 s) once this many bytes
        /// are written.
        dips_after: Option<f64>,
        /// Relative standard deviation of each second's rate.
        noise: f64,
    }

    struct Fill {
        mbps: Vec<f64>,
        cum: Vec<u64>,
        /// (start_s, len_s) of every generated dip.
        dips: Vec<(usize, usize)>,
    }

    impl Drive {
        /// Simulates second by second, each second in 100 slices so the
        /// cache runs out at the right byte, not at a second boundary.
        fn run(&self, seed: u64) -> Fill {
            let mut rng = fastrand::Rng::with_seed(seed);
            let (mut mbps, mut cum, mut dips) = (Vec::new(), Vec::new(), Vec::new());
            let mut written = 0.0;
            let mut until_dip = rng.usize(10..=15);
            let mut dip_left = 0;
            while written < self.total_bytes {
                let s = mbps.len();
                let factor = 1.0 + self.noise * gauss(&mut rng);
                let start = written;
                if self.dips_after.is_some_and(|d| written >= d) && dip_left == 0 {
                    if until_dip == 0 {
                        dip_left = rng.usize(3..=5);
                        dips.push((s, dip_left));
                        until_dip = rng.usize(10..=15);
                    } else {
                        until_dip -= 1;
                    }
                }
                if dip_left > 0 {
                    dip_left -= 1;
                    written += rng.f64() * 25e6 + 20e6;
                } else {
                    for _ in 0..100 {
                        let rate = if written < self.cache_bytes {
                            self.cache_mbps
                        } else {
                            self.post_mbps
                        };
                        written += rate * factor * 1e6 / 100.0;
                    }
                }
                mbps.push((written - start) / 1e6);
                cum.push(written as u64);
            }
            Fill { mbps, cum, dips }
        }
    }

    fn cum_of(mbps: &[f64]) -> Vec<u64> {
        let mut total = 0u64;
        mbps.iter()
            .map(|&m| {
                total += (m * 1e6) as u64;
                total
            })
            .collect()
    }

    fn within(got: Option<u64>, want: f64, rel: f64) -> bool {
        got.is_some_and(|g| (g as f64 - want).abs() <= rel * want)
    }

    #[test]
    fn cache_of_30_gb_within_1_percent() {
        let drive = Drive {
            cache_bytes: 30.0 * GB,
            cache_mbps: 1800.0,
            post_mbps: 1500.0,
            total_bytes: 900.0 * GB,
            dips_after: None,
            noise: 0.01,
        };
        for seed in 0..20 {
            let f = drive.run(seed);
            let r = analyze_fill(&f.mbps, &f.cum, 1.0, 0.5);
            assert!(
                within(r.cache_bytes, 30.0 * GB, 0.01),
                "seed {seed}: {:?}",
                r.cache_bytes
            );
            assert!((r.cache_end_s.unwrap() - 17.0).abs() <= 1.0);
            assert!((r.initial_mbps.unwrap() / 1800.0 - 1.0).abs() < 0.02);
            assert!((r.post_cache_avg_mbps.unwrap() / 1500.0 - 1.0).abs() < 0.01);
            assert!((r.post_cache_median_mbps.unwrap() / 1500.0 - 1.0).abs() < 0.01);
            assert_eq!(r.drop_count, 0);
            assert!(r.drops.is_empty());
            assert_eq!(r.total_bytes, *f.cum.last().unwrap());
            let overall = 900.0 * GB / 1e6 / f.mbps.len() as f64;
            assert!((r.overall_avg_mbps.unwrap() / overall - 1.0).abs() < 0.01);
        }
    }

    #[test]
    fn dips_after_610_gb_are_episodes_not_the_cache_end() {
        let drive = Drive {
            cache_bytes: 13.0 * GB,
            cache_mbps: 1800.0,
            post_mbps: 1400.0,
            total_bytes: 900.0 * GB,
            dips_after: Some(610.0 * GB),
            noise: 0.01,
        };
        for seed in 0..10 {
            let f = drive.run(seed);
            assert!(f.dips.len() > 10);
            let r = analyze_fill(&f.mbps, &f.cum, 1.0, 0.5);
            // 1 % noise on a 400 MB/s step: σ ≈ 0.04 s × 1.8 GB/s ≈ 0.55 %.
            assert!(
                within(r.cache_bytes, 13.0 * GB, 0.02),
                "seed {seed}: {:?}",
                r.cache_bytes
            );
            let found: Vec<(usize, usize)> = r
                .drops
                .iter()
                .map(|e| (e.start_s as usize, e.len_s as usize))
                .collect();
            assert_eq!(found, f.dips, "seed {seed}");
            for e in &r.drops {
                assert!(e.at_bytes as f64 >= 610.0 * GB);
                assert!(e.min_mbps < 50.0);
                assert_eq!(e.at_bytes, f.cum[e.start_s as usize - 1]);
            }
            assert_eq!(r.drop_count, f.dips.len());
            assert_eq!(
                r.drop_longest_s as usize,
                f.dips.iter().map(|d| d.1).max().unwrap()
            );
            assert_eq!(
                r.drop_total_s as usize,
                f.dips.iter().map(|d| d.1).sum::<usize>()
            );
            assert!((r.post_cache_median_mbps.unwrap() / 1400.0 - 1.0).abs() < 0.01);
            assert!((r.drop_reference_mbps.unwrap() / 1400.0 - 1.0).abs() < 0.01);
            assert_eq!(
                r.drop_threshold_mbps,
                r.drop_reference_mbps.map(|m| m * 0.5)
            );
        }
    }

    #[test]
    fn dips_during_the_cache_do_not_end_it() {
        let drive = Drive {
            cache_bytes: 100.0 * GB,
            cache_mbps: 2000.0,
            post_mbps: 900.0,
            total_bytes: 300.0 * GB,
            dips_after: Some(0.0),
            noise: 0.02,
        };
        for seed in 0..10 {
            let f = drive.run(seed);
            let r = analyze_fill(&f.mbps, &f.cum, 1.0, 0.5);
            assert!(
                within(r.cache_bytes, 100.0 * GB, 0.01),
                "seed {seed}: {:?}",
                r.cache_bytes
            );
            assert_eq!(r.drop_count, f.dips.len(), "seed {seed}");
        }
    }

    #[test]
    fn no_cache_drive_with_dips() {
        let drive = Drive {
            cache_bytes: 0.0,
            cache_mbps: 0.0,
            post_mbps: 1500.0,
            total_bytes: 200.0 * GB,
            dips_after: Some(0.0),
            noise: 0.02,
        };
        let f = drive.run(42);
        let r = analyze_fill(&f.mbps, &f.cum, 1.0, 0.5);
        assert_eq!(r.cache_bytes, None);
        assert_eq!(r.cache_end_s, None);
        assert_eq!(r.post_cache_avg_mbps, None);
        assert!((r.drop_reference_mbps.unwrap() / 1500.0 - 1.0).abs() < 0.02);
        let found: Vec<(usize, usize)> = r
            .drops
            .iter()
            .map(|e| (e.start_s as usize, e.len_s as usize))
            .collect();
        assert_eq!(found, f.dips);
    }

    #[test]
    fn a_cache_of_two_seconds_sets_the_initial_speed() {
        // The review's simulated NVMe drive: the cache ran out in the third second.
        let mut mbps = vec![5242.9, 5243.0, 3754.2];
        mbps.extend(vec![1310.7; 200]);
        let cum = cum_of(&mbps);
        let r = analyze_fill(&mbps, &cum, 1.0, 0.5);
        assert!((r.initial_mbps.unwrap() - 5242.95).abs() < 0.01, "{r:?}");
        assert_eq!(r.cache_end_s, Some(2.0));
        let c = r.cache_bytes.unwrap() as f64 / 1e6;
        assert!(c > 2.0 * 5242.0 && c < 3.0 * 5243.0, "{c} MB");
        // A slow first second is still left out.
        let mut mbps = vec![900.0];
        mbps.extend(vec![1800.0; 100]);
        let r = analyze_fill(&mbps, &cum_of(&mbps), 1.0, 0.5);
        assert_eq!(r.initial_mbps, Some(1800.0));
        // One fast second ahead of a long cache is not the cache.
        let mut mbps = vec![3000.0];
        mbps.extend(vec![1500.0; 60]);
        mbps.extend(vec![500.0; 100]);
        let r = analyze_fill(&mbps, &cum_of(&mbps), 1.0, 0.5);
        assert_eq!(r.initial_mbps, Some(1500.0));
        assert_eq!(r.cache_end_s, Some(61.0), "{r:?}");
    }

    /// Intervals of `k` s of a fill whose rate at time t (s) is `rate(t, written)`,
    /// integrated in 1 ms steps, until `total` bytes.
    fn sample(k: f64, total: f64, rate: impl Fn(f64, f64) -> f64) -> (Vec<f64>, Vec<u64>) {
        let steps = (k * 1000.0).round() as usize;
        let (mut mbps, mut cum) = (Vec::new(), Vec::new());
        let (mut written, mut ms) = (0.0, 0usize);
        while written < total {
            let start = written;
            for _ in 0..steps {
                written += rate(ms as f64 / 1000.0, written) * 1e6 / 1000.0;
                ms += 1;
            }
            mbps.push((written - start) / 1e6 / k);
            cum.push(written as u64);
        }
        (mbps, cum)
    }

    #[test]
    fn a_cache_of_1_3_seconds_is_seen_at_100_ms() {
        // The preset nvme-tlc at 64 GiB: 6.87 GB of SLC cache written at 5.2 GB/s.
        let cache = 6.87e9;
        let drive = |_t: f64, w: f64| if w < cache { 5242.9 } else { 1310.7 };
        let (mbps, cum) = sample(0.1, 57.6e9, drive);
        let r = analyze_fill(&mbps, &cum, 0.1, 0.5);
        assert_eq!(r.cache_resolution_s, 0.1);
        assert!(
            (r.initial_mbps.unwrap() / 5242.9 - 1.0).abs() < 0.01,
            "{r:?}"
        );
        let got = r.cache_bytes.unwrap() as f64;
        assert!((got / cache - 1.0).abs() < 0.01, "{got}");
        assert!((r.cache_end_s.unwrap() - 1.3).abs() <= 0.1, "{r:?}");
        assert!((r.post_cache_median_mbps.unwrap() / 1310.7 - 1.0).abs() < 0.01);
        assert!(!r.cache_too_short_to_see);
        // Per second, the same fill's cache is too short to see: that is said.
        let (mbps, cum) = sample(1.0, 57.6e9, drive);
        let r = analyze_fill(&mbps, &cum, 1.0, 0.5);
        assert_eq!(r.cache_bytes, None);
        assert!(r.cache_too_short_to_see, "{r:?}");
        // A long cache logged at 100 ms is found per second, as before.
        let (mbps, cum) = sample(0.1, 200e9, |_, w| if w < 30e9 { 1800.0 } else { 1500.0 });
        let r = analyze_fill(&mbps, &cum, 0.1, 0.5);
        assert_eq!(r.cache_resolution_s, 1.0);
        assert!((r.cache_bytes.unwrap() as f64 / 30e9 - 1.0).abs() < 0.01);
    }

    #[test]
    fn a_drop_straddling_two_seconds_is_found_at_100_ms() {
        // One second at 40 MB/s from t = 30.5 s: each of seconds 30 and 31 averages
        // 670 MB/s, above half of 1300.
        let drive = |t: f64, _w: f64| {
            if (30.5..31.5).contains(&t) {
                40.0
            } else {
                1300.0
            }
        };
        let (mbps, cum) = sample(1.0, 100e9, drive);
        let r = analyze_fill(&mbps, &cum, 1.0, 0.5);
        assert_eq!(r.drop_count, 0, "{:?}", r.drops);
        let (mbps, cum) = sample(0.1, 100e9, drive);
        let r = analyze_fill(&mbps, &cum, 0.1, 0.5);
        assert_eq!(r.drop_count, 1, "{:?}", r.drops);
        let e = &r.drops[0];
        assert!(
            (e.start_s - 30.5).abs() < 0.05 && (e.len_s - 1.0).abs() < 0.05,
            "{e:?}"
        );
        assert!(e.min_mbps < 50.0);
        assert!(e.end_bytes > e.at_bytes);
        // A 100 ms hiccup is not an episode.
        let hiccup = |t: f64, _w: f64| {
            if (30.5..30.6).contains(&t) {
                40.0
            } else {
                1300.0
            }
        };
        let (mbps, cum) = sample(0.1, 100e9, hiccup);
        assert_eq!(analyze_fill(&mbps, &cum, 0.1, 0.5).drop_count, 0);
    }

    #[test]
    fn a_drive_down_most_of_the_time_still_has_drops() {
        // After the cache: 3 s at 900 MB/s, then 5 s at 0, again and again (a drive
        // folding its cache while the host waits, longer than it writes).
        let mut mbps = vec![1800.0; 100];
        for _ in 0..40 {
            mbps.extend([900.0; 3]);
            mbps.extend([0.0; 5]);
        }
        let r = analyze_fill(&mbps, &cum_of(&mbps), 1.0, 0.5);
        assert_eq!(r.drop_reference_mbps, Some(900.0));
        assert_eq!(r.drop_count, 40, "{r:?}");
        assert!(r.drops.iter().all(|e| e.len_s == 5.0));
    }

    #[test]
    fn a_cache_that_ends_in_periodic_stalls_is_a_cache() {
        // Issue 24: a 610 GB cache at 1767.8 MB/s, then 21 stalls of 4 s to 0 MB/s every
        // 14 s with the link's speed between: no lower level follows the cache, but the
        // average after it is 28 % lower. At 100 ms intervals, 1 % noise.
        let mut rng = fastrand::Rng::with_seed(24);
        let mut mbps = Vec::new();
        let cache_s: f64 = 610e9 / 1767.8e6;
        let cache_n = (cache_s * 10.0).round() as usize;
        mbps.extend((0..cache_n).map(|_| 1767.8 * (1.0 + 0.01 * gauss(&mut rng))));
        for _ in 0..21 {
            mbps.extend([0.0; 40]);
            mbps.extend((0..100).map(|_| 1767.8 * (1.0 + 0.01 * gauss(&mut rng))));
        }
        let cum: Vec<u64> = mbps
            .iter()
            .scan(0.0, |b, &m| {
                *b += m * 1e5;
                Some(*b as u64)
            })
            .collect();
        let r = analyze_fill(&mbps, &cum, 0.1, 0.5);
        assert!(r.cache_ended_by_stalls, "{r:?}");
        assert!(
            within(r.cache_bytes, 610.0 * GB, 0.01),
            "{:?}",
            r.cache_bytes
        );
        assert!((r.cache_end_s.unwrap() - cache_n as f64 * 0.1).abs() < 1e-9);
        let after = mean(&mbps[cache_n..]).unwrap();
        assert!((r.post_cache_avg_mbps.unwrap() / after - 1.0).abs() < 1e-9);
        assert!((after / 1767.8 - 10.0 / 14.0).abs() < 0.01, "{after}");
        assert_eq!(r.drop_count, 21);
        assert_eq!(
            r.drops[0].at_bytes,
            r.cache_bytes.unwrap(),
            "the cache ends where the first drop begins"
        );
        // A drive with no cache that stalls so from the start has no cache.
        let r = analyze_fill(&mbps[cache_n..], &cum[cache_n..], 0.1, 0.5);
        assert_eq!(
            (r.cache_bytes, r.cache_ended_by_stalls),
            (None, false),
            "{r:?}"
        );
    }

    #[test]
    fn hand_computed_fill() {
        // 6 s at 1000 MB/s, then 40 s at 500 MB/s with a 2 s dip to 100 and
        // 50 at seconds 12–13.
        let mut mbps = vec![1000.0; 6];
        mbps.extend(vec![500.0; 40]);
        mbps[12] = 100.0;
        mbps[13] = 50.0;
        let cum = cum_of(&mbps);
        let r = analyze_fill(&mbps, &cum, 1.0, 0.6);
        assert_eq!(r.initial_mbps, Some(1000.0));
        assert_eq!(r.cache_threshold_mbps, Some(900.0));
        assert_eq!(r.cache_end_s, Some(6.0));
        assert_eq!(r.cache_bytes, Some(6_000_000_000));
        assert_eq!(r.cache_mbps, Some(1000.0));
        assert_eq!(r.post_cache_median_mbps, Some(500.0));
        // (38 × 500 + 100 + 50) / 40
        assert_eq!(r.post_cache_avg_mbps, Some(478.75));
        assert_eq!(r.drop_threshold_mbps, Some(300.0));
        assert_eq!(
            r.drops,
            vec![Episode {
                start_s: 12.0,
                len_s: 2.0,
                min_mbps: 50.0,
                at_bytes: 9_000_000_000,
                end_bytes: 9_150_000_000,
            }]
        );
        assert_eq!(
            (r.drop_count, r.drop_longest_s, r.drop_total_s),
            (1, 2.0, 2.0)
        );
        // (6000 + 19150) / 46
        assert!((r.overall_avg_mbps.unwrap() - 25150.0 / 46.0).abs() < 1e-9);
        assert_eq!(r.duration_s, 46.0);
        assert_eq!(r.total_bytes, 25_150_000_000);
    }

    #[test]
    fn mixed_second_is_interpolated() {
        // Cache at 1000, post 500; second 6 spends 0.4 s at 1000 and 0.6 s at
        // 500 = 700 MB, so the cache held 6 000 + 400 MB.
        let mut mbps = vec![1000.0; 6];
        mbps.push(700.0);
        mbps.extend(vec![500.0; 40]);
        let cum = cum_of(&mbps);
        let r = analyze_fill(&mbps, &cum, 1.0, 0.5);
        assert_eq!(r.cache_end_s, Some(6.0));
        assert_eq!(r.cache_bytes, Some(6_400_000_000));
        // Above the threshold, the mixed second comes before the first slow one.
        mbps[6] = 950.0; // 0.9 s at 1000 + 0.1 s at 500
        let r = analyze_fill(&mbps, &cum_of(&mbps), 1.0, 0.5);
        assert_eq!(r.cache_end_s, Some(7.0));
        assert_eq!(r.cache_bytes, Some(6_900_000_000));
    }

    #[test]
    fn dip_shortly_before_the_cache_end_is_not_the_end() {
        // 100 s at 1000 MB/s with a 4 s dip at 90–93, then 500 MB/s.
        let mut mbps = vec![1000.0; 100];
        mbps[90..94].fill(30.0);
        mbps.extend(vec![500.0; 200]);
        let r = analyze_fill(&mbps, &cum_of(&mbps), 1.0, 0.5);
        assert_eq!(r.cache_end_s, Some(100.0));
        assert_eq!(r.cache_bytes, Some(96_120_000_000));
        assert_eq!(r.drop_count, 1);
        assert_eq!(r.drops[0].start_s, 90.0);
    }

    #[test]
    fn a_thermal_throttle_inside_the_cache_is_not_its_end() {
        // 6 s at cache speed, 2 s throttled, 4 s at cache speed again, then native.
        let mut mbps = vec![5000.0; 6];
        mbps.extend([3000.0; 2]);
        mbps.extend([5000.0; 4]);
        mbps.extend([1300.0; 100]);
        let mut total = 0u64;
        let cum: Vec<u64> = mbps
            .iter()
            .map(|m| {
                total += (m * 1e6) as u64;
                total
            })
            .collect();
        let r = analyze_fill(&mbps, &cum, 1.0, 0.5);
        assert_eq!(r.cache_end_s, Some(12.0), "{r:?}");
        let cache = r.cache_bytes.unwrap() as f64;
        assert!((cache - 56e9).abs() < 1.5e9, "{cache}");
    }

    #[test]
    fn short_or_broken_input() {
        let r = analyze_fill(&[], &[], 1.0, 0.5);
        assert_eq!(r.duration_s, 0.0);
        assert_eq!(r.initial_mbps, None);
        assert_eq!(r.cache_bytes, None);
        assert_eq!(r.overall_avg_mbps, None);
        assert!(r.drops.is_empty());

        // Lengths differ: only the common seconds count.
        let r = analyze_fill(
            &[100.0, 100.0, 100.0],
            &[100_000_000, 200_000_000],
            1.0,
            0.5,
        );
        assert_eq!(r.duration_s, 2.0);
        assert_eq!(r.total_bytes, 200_000_000);

        // A slow tail too short to confirm is not a cache end.
        let mut mbps = vec![1000.0; 30];
        mbps.extend([400.0; 3]);
        let cum: Vec<u64> = (1..=33).map(|i| i * 1_000_000_000).collect();
        assert_eq!(analyze_fill(&mbps, &cum, 1.0, 0.5).cache_end_s, None);

        // NaN drop fraction finds nothing; NaN rates are zero-rate seconds.
        let r = analyze_fill(&[500.0, f64::NAN, 500.0], &[1, 2, 3], 1.0, f64::NAN);
        assert!(r.drops.is_empty());
        let r = analyze_fill(&[500.0, f64::NAN, 500.0], &[1, 2, 3], 1.0, 0.5);
        assert_eq!(r.drop_count, 1);
        assert_eq!(r.drops[0].min_mbps, 0.0);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<FillSummary>(&json).unwrap(), r);
    }
}
