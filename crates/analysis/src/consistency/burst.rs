//! End of the initial burst: while spare area lasts a drive writes far faster
//! than it does in steady state; this finds where that stops.

use serde::{Deserialize, Serialize};

use crate::stats::{clean_series, median};

/// Seconds at the start of the series whose median must be clearly above the
/// steady level for a burst to exist; also the shortest steady part.
pub const BURST_HEAD_S: usize = 10;
/// "Clearly above": the burst must be at least 1.5 × the steady level.
pub const BURST_FACTOR: f64 = 1.5;

/// Where the initial burst ends, see [`burst_transition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// First second of the steady state (0-based); the burst is seconds
    /// 0 .. at_s − 1, so this is also the burst's length in seconds.
    pub at_s: usize,
    /// Median IOPS of the burst seconds.
    pub burst_iops: f64,
    /// Median IOPS from at_s to the end of the series.
    pub steady_iops: f64,
}

/// Finds the end of the initial burst in a per-second IOPS series.
///
/// Rule: the series is fitted by a two-level step (a constant before and a
/// constant after a split second) by least squares, over every split
/// 1 ≤ t ≤ n − [`BURST_HEAD_S`] (the steady part needs at least 10 seconds
/// to be a level); `at_s` is the split with the smallest total squared error
/// (the earliest on ties). `burst_iops` is the median before it,
/// `steady_iops` the median from it on. There is a burst only if both the
/// median of the first min([`BURST_HEAD_S`], at_s) seconds and `burst_iops`
/// are at least [`BURST_FACTOR`] × `steady_iops`; otherwise (or with fewer
/// than 11 seconds) the result is `None`. Zero seconds take part like any
/// other second; a few of them do not move the split.
pub fn burst_transition(iops_per_s: &[f64]) -> Option<Transition> {
    let x = clean_series(iops_per_s);
    let n = x.len();
    if n < BURST_HEAD_S + 1 {
        return None;
    }
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, &v) in x.iter().enumerate() {
        s1[i + 1] = s1[i] + v;
        s2[i + 1] = s2[i] + v * v;
    }
    let sse = |a: usize, b: usize| {
        let sum = s1[b] - s1[a];
        ((s2[b] - s2[a]) - sum * sum / (b - a) as f64).max(0.0)
    };
    let mut best = (1, f64::INFINITY);
    for t in 1..=n - BURST_HEAD_S {
        let e = sse(0, t) + sse(t, n);
        if e < best.1 {
            best = (t, e);
        }
    }
    let at = best.0;
    let burst = median(&x[..at])?;
    let steady = median(&x[at..])?;
    let head = median(&x[..BURST_HEAD_S.min(at)])?;
    let clearly_above = |v: f64| v > 0.0 && v >= BURST_FACTOR * steady;
    (clearly_above(head) && clearly_above(burst)).then_some(Transition {
        at_s: at,
        burst_iops: burst,
        steady_iops: steady,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_series::noisy;
    use super::*;

    /// `burst_s` seconds at `burst` IOPS then `steady_s` at `steady`, with
    /// relative noise and about 1 % zero seconds in the steady part.
    fn series(seed: u64, burst_s: usize, burst: f64, steady_s: usize, steady: f64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut out: Vec<f64> = (0..burst_s).map(|_| noisy(&mut rng, burst, 0.05)).collect();
        out.extend((0..steady_s).map(|_| {
            if rng.u32(0..100) == 0 {
                0.0
            } else {
                noisy(&mut rng, steady, 0.15)
            }
        }));
        out
    }

    #[test]
    fn finds_burst_end_within_a_few_seconds() {
        for seed in 0..20 {
            let s = series(seed, 300, 80_000.0, 3000, 8_000.0);
            assert!(s[300..].contains(&0.0));
            let t = burst_transition(&s).unwrap();
            assert!(t.at_s.abs_diff(300) <= 2, "seed {seed}: {t:?}");
            assert!((t.burst_iops / 80_000.0 - 1.0).abs() < 0.03, "{t:?}");
            assert!((t.steady_iops / 8_000.0 - 1.0).abs() < 0.03, "{t:?}");
        }
    }

    #[test]
    fn exact_step_is_exact() {
        let mut s = vec![50_000.0; 120];
        s.extend(vec![5_000.0; 600]);
        let t = burst_transition(&s).unwrap();
        assert_eq!(
            t,
            Transition {
                at_s: 120,
                burst_iops: 50_000.0,
                steady_iops: 5_000.0
            }
        );
    }

    #[test]
    fn shortest_series_with_a_burst() {
        let mut s = vec![50_000.0; 5];
        s.extend([5_000.0; 10]);
        assert_eq!(burst_transition(&s).map(|t| t.at_s), Some(5));
    }

    #[test]
    fn short_burst_and_gradual_fall() {
        let t = burst_transition(&series(5, 20, 60_000.0, 2000, 6_000.0)).unwrap();
        assert!(t.at_s.abs_diff(20) <= 1, "{t:?}");

        // 200 s burst, then a 20 s linear slide to the steady level: the
        // split lands inside the slide.
        let mut s = vec![80_000.0; 200];
        s.extend((1..=20).map(|i| 80_000.0 - 72_000.0 * i as f64 / 20.0));
        s.extend(vec![8_000.0; 2000]);
        let t = burst_transition(&s).unwrap();
        assert!((200..=220).contains(&t.at_s), "{t:?}");
        assert_eq!(t.steady_iops, 8_000.0);
    }

    #[test]
    fn no_burst_gives_none() {
        // Steady from the start.
        assert_eq!(burst_transition(&series(1, 0, 0.0, 3000, 8_000.0)), None);
        // First seconds only slightly above the steady level.
        assert_eq!(
            burst_transition(&series(2, 300, 10_000.0, 3000, 8_000.0)),
            None
        );
        // A rise later in the run is not a burst.
        let mut s = series(3, 0, 0.0, 1000, 8_000.0);
        s.extend(series(4, 0, 0.0, 1000, 30_000.0));
        assert_eq!(burst_transition(&s), None);
        // A zero (or low) last second is not a steady state after a "burst".
        for seed in 0..50 {
            let mut s = series(seed, 0, 0.0, 500, 8_000.0);
            *s.last_mut().unwrap() = 0.0;
            assert_eq!(burst_transition(&s), None, "seed {seed}");
        }
        assert_eq!(burst_transition(&[]), None);
        assert_eq!(burst_transition(&[1000.0]), None);
        assert_eq!(burst_transition(&[9_000.0; 10]), None);
        assert_eq!(burst_transition(&[0.0; 50]), None);
    }
}
