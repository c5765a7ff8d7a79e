//! End of the initial burst: while spare area lasts a drive writes far faster
//! than it does in steady state; this finds where that stops.

use serde::{Deserialize, Serialize};

use crate::stats::{clean_series, mean, median};

/// Seconds at the start of the series whose median must be clearly above the
/// steady level for a burst to exist; also the shortest steady part.
pub const BURST_HEAD_S: usize = 10;
/// "Clearly above": the burst must be at least 1.3 × the steady level (a 25 %
/// over-provisioned drive's burst of 1.47 × for 25–97 s is a burst the reviews
/// discuss; noise of a steady drive stays far below this).
pub const BURST_FACTOR: f64 = 1.3;

/// How many standard errors apart the burst's and the steady part's means must be.
pub const BURST_Z: f64 = 5.0;

/// The shortest burst: one or two fast seconds at the start are noise or a
/// warm-up, not spare area running out.
pub const BURST_MIN_S: usize = 3;

/// An initial burst does not come back: when more than this share of the seconds
/// after it run within 10 % of the burst level, the drive is switching between
/// levels (a thermal throttle cycling on and off), and the first switch is no burst.
pub const BURST_RECUR_SHARE: f64 = 0.10;

/// The shortest burst seen on a finer series over the run's start (see
/// [`burst_transition_fine`]): there a plateau of one second is a level, not one
/// fast sample.
pub const BURST_MIN_FINE_S: f64 = 0.5;

/// Where the initial burst ends, see [`burst_transition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// First second of the steady state (0-based); the burst is seconds
    /// 0 .. at_s − 1: its length rounded to whole seconds, for what is cut on the
    /// per-second series (the phases, the levels after it).
    pub at_s: usize,
    /// The burst's length in seconds at the grain it was found on: 100 ms where the
    /// run's first seconds were logged finer (a burst of 2 s), whole seconds otherwise.
    /// Null in bundles written before it was kept.
    #[serde(default)]
    pub length_s: Option<f64>,
    /// The burst's level: median IOPS of the burst seconds that are closer to
    /// the burst than to the steady level (the seconds of the fall are not).
    pub burst_iops: f64,
    /// The level after the burst: mean IOPS from at_s to the end of the series,
    /// seconds without I/O included (what the drive delivers; a median of a
    /// stuttering drive's seconds can be near zero while it averages thousands).
    pub steady_iops: f64,
}

/// Finds the end of the initial burst in a per-second IOPS series.
///
/// Rule: the series is fitted by a two-level step (a constant before and a
/// constant after a split second) by least squares, over every split
/// 1 ≤ t ≤ n − [`BURST_HEAD_S`] (the steady part needs at least 10 seconds
/// to be a level); `at_s` is the split with the smallest total squared error
/// (the earliest on ties). `steady_iops` is the mean from it on; `burst_iops`
/// the median of the seconds before it that are above the midpoint between
/// their median and `steady_iops`. There is a burst only if both the median of
/// the first min([`BURST_HEAD_S`], at_s) seconds and `burst_iops` are at least
/// [`BURST_FACTOR`] × the larger of `steady_iops` and the steady part's median,
/// the two parts' means are [`BURST_Z`] standard errors apart, the burst lasts at least
/// [`BURST_MIN_S`] seconds, at most [`BURST_RECUR_SHARE`] of the seconds after it
/// come within 10 % of its level again, and at most that share of the seconds before
/// `at_s` are at or below the midpoint (the steady level is not already there); otherwise (or with fewer than 11 seconds) the
/// result is `None`. The burst is the first level: while the seconds before `at_s` are
/// themselves best cut (within the first [`BURST_FIRST_LEVEL_S`] seconds) into a first
/// part at least [`BURST_FACTOR`] × the second, and that earlier cut passes the same
/// rule, it is the burst's end (a cache's burst, then a
/// folding phase, then the steady state). Zero seconds take part like any other second; a few of
/// them do not move the split.
pub fn burst_transition(iops_per_s: &[f64]) -> Option<Transition> {
    let x = clean_series(iops_per_s);
    let t = split(&x, 1, BURST_MIN_S)?;
    Some(Transition {
        at_s: t.at,
        length_s: Some(t.at as f64),
        burst_iops: t.burst,
        steady_iops: t.steady,
    })
}

/// [`burst_transition`] on a series whose first seconds were also logged finer: `head`
/// is IOPS per interval of `head_interval_s` (a whole divisor of a second, like 0.1)
/// from the run's start, `iops_per_s` the per-second series of the whole run. The rule
/// is the same on the run at the head's grain (the head, then each later second as
/// that many intervals of its rate), the shortest burst [`BURST_MIN_FINE_S`]; a burst
/// of two seconds, which per-second data cannot tell from a warm-up, is found with its
/// length to the interval. Without a usable head (empty, or an interval that is no
/// divisor of a second) it is [`burst_transition`].
pub fn burst_transition_fine(
    head: &[f64],
    head_interval_s: f64,
    iops_per_s: &[f64],
) -> Option<Transition> {
    let per_s = (1.0 / head_interval_s).round();
    if head.is_empty()
        || !(1.0..=1000.0).contains(&per_s)
        || (per_s * head_interval_s - 1.0).abs() > 1e-9
    {
        return burst_transition(iops_per_s);
    }
    let per_s = per_s as usize;
    let mut x = clean_series(head);
    // The head's last second, when it stops inside one, is the per-second series'.
    x.truncate(head.len() / per_s * per_s);
    let from = x.len() / per_s;
    for &v in clean_series(iops_per_s).get(from..).unwrap_or(&[]) {
        x.extend(std::iter::repeat_n(v, per_s));
    }
    let min = (BURST_MIN_FINE_S * per_s as f64).ceil() as usize;
    let t = split(&x, per_s, min)?;
    let length_s = t.at as f64 / per_s as f64;
    Some(Transition {
        at_s: length_s.round() as usize,
        length_s: Some(length_s),
        burst_iops: t.burst,
        steady_iops: t.steady,
    })
}

/// The first level is looked for within the first 30 s (the finer head's length): a
/// long burst ending in a slide is one burst, its slide no first level.
pub const BURST_FIRST_LEVEL_S: usize = 30;

/// A split found by [`split`], in samples.
struct Split {
    at: usize,
    burst: f64,
    steady: f64,
}

/// The rule of [`burst_transition`] on a series of `per_s` samples a second, the
/// shortest burst `min` samples.
fn split(x: &[f64], per_s: usize, min: usize) -> Option<Split> {
    let n = x.len();
    let head_n = BURST_HEAD_S * per_s;
    if n < head_n + 1 {
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
    // The best two-level fit over `a..b` split at t, over the splits `lo..=hi`.
    let best = |a: usize, lo: usize, hi: usize, b: usize| {
        (lo..=hi)
            .map(|t| (t, sse(a, t) + sse(t, b)))
            .min_by(|u, v| u.1.total_cmp(&v.1).then(u.0.cmp(&v.0)))
            .map(|(t, _)| t)
    };
    let judge = |at: usize| -> Option<Split> {
        let steady = mean(&x[at..])?;
        let mid = (median(&x[..at])? + steady) / 2.0;
        let fast: Vec<f64> = x[..at].iter().copied().filter(|&v| v > mid).collect();
        let burst = median(&fast).unwrap_or(0.0);
        let head = median(&x[..head_n.min(at)])?;
        // Judged against the steady part's median, which a few zero seconds in a short
        // tail do not drag down as they do the mean.
        let typical = median(&x[at..])?.max(steady);
        let clearly_above = |v: f64| v > 0.0 && v >= BURST_FACTOR * typical;
        // The two levels differ by far more than their noise allows (a short, noisy
        // steady part is no evidence of a burst before it). Counted in seconds: a
        // second repeated as `per_s` samples is one measurement.
        let (nb, ns) = (at as f64, (n - at) as f64);
        let se = (sse(0, at) / nb / nb + sse(at, n) / ns / ns).sqrt() * (per_s as f64).sqrt();
        let (mean_b, mean_s) = (s1[at] / nb, (s1[n] - s1[at]) / ns);
        let distinct = mean_b - mean_s > BURST_Z * se;
        // The burst level does not come back after it, and the steady level is not
        // already there inside it.
        let back = x[at..].iter().filter(|&&v| v >= 0.9 * burst).count();
        let early = x[..at].iter().filter(|&&v| v <= mid).count();
        let once =
            (back as f64) <= BURST_RECUR_SHARE * ns && (early as f64) <= BURST_RECUR_SHARE * nb;
        (at >= min && distinct && once && clearly_above(head) && clearly_above(burst))
            .then_some(Split { at, burst, steady })
    };
    let mut found = judge(best(0, 1, n - head_n, n)?)?;
    // The burst is the first level: where the fit's fast part is itself a step down
    // (97 k IOPS for 3 s, then 38 k while the cache is folded, then the steady state),
    // the burst ends at that first step.
    while found.at >= 2 * min {
        let at = found.at;
        let hi = (at - min).min(BURST_FIRST_LEVEL_S * per_s);
        let Some(t) = (hi >= min)
            .then(|| best(0, min, hi, at))
            .flatten()
            .and_then(judge)
        else {
            break;
        };
        let (first, rest) = (
            s1[t.at] / t.at as f64,
            (s1[at] - s1[t.at]) / (at - t.at) as f64,
        );
        if first < BURST_FACTOR * rest {
            break;
        }
        found = t;
    }
    Some(found)
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
    fn a_level_that_comes_back_is_no_burst() {
        // A throttle cycling: 40 s fast, 36 s throttled, again and again.
        let mut s = Vec::new();
        for _ in 0..8 {
            s.extend(vec![14_000.0; 40]);
            s.extend(vec![4_500.0; 36]);
        }
        assert_eq!(burst_transition(&s), None);
        // The same first 40 s followed by the throttled level for good is a burst.
        let mut s = vec![14_000.0; 40];
        s.extend(vec![4_500.0; 600]);
        assert_eq!(burst_transition(&s).unwrap().at_s, 40);
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
                length_s: Some(120.0),
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
        // The mean after the split holds the end of the slide: within 2 %.
        assert!((t.steady_iops / 8_000.0 - 1.0).abs() < 0.02, "{t:?}");
        assert_eq!(t.burst_iops, 80_000.0, "the slide is not the burst");
    }

    #[test]
    fn the_level_after_a_stuttering_burst_is_what_the_drive_averages() {
        // After the burst, 7 366 IOPS on average, delivered in bursts between
        // seconds with nothing: more than half the seconds are zero.
        let mut s = vec![60_000.0; 100];
        for i in 0..1000 {
            s.push(if i % 5 < 3 { 0.0 } else { 7_366.0 * 2.5 });
        }
        let t = burst_transition(&s).unwrap();
        assert!((t.steady_iops / 7_366.0 - 1.0).abs() < 0.01, "{t:?}");
    }

    #[test]
    fn a_mild_burst_of_25_seconds_is_reported_at_its_own_level() {
        // 25 % over-provisioning: 1.47 × for 25 s, with a three-second fall.
        let mut s = vec![147_700.0; 25];
        s.extend([120_000.0, 110_000.0, 105_000.0]);
        s.extend(vec![100_000.0; 600]);
        let t = burst_transition(&s).expect("a 1.47 × burst is a burst");
        assert!(t.at_s.abs_diff(25) <= 3, "{t:?}");
        assert_eq!(t.burst_iops, 147_700.0);
    }

    /// A head of `head_s` seconds at 100 ms and the per-second series, from a run at
    /// `burst` IOPS for `burst_s` seconds then `steady` (2 % noise at 100 ms).
    fn fine(
        seed: u64,
        burst_s: f64,
        burst: f64,
        steady: f64,
        len_s: usize,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let at = |t: f64| if t < burst_s { burst } else { steady };
        let tenths: Vec<f64> = (0..len_s * 10)
            .map(|i| noisy(&mut rng, at(i as f64 / 10.0 + 0.05), 0.02))
            .collect();
        let secs = tenths
            .chunks(10)
            .map(|c| c.iter().sum::<f64>() / 10.0)
            .collect();
        (tenths[..300].to_vec(), secs)
    }

    #[test]
    fn a_burst_of_two_seconds_is_found_on_the_finer_head() {
        // Issue 24: 120 k IOPS for 2 s then 6 k; per-second data cannot see it.
        for seed in 0..10 {
            let (head, secs) = fine(seed, 2.0, 120e3, 6e3, 600);
            assert_eq!(burst_transition(&secs), None);
            let t = burst_transition_fine(&head, 0.1, &secs).expect("a 2 s burst");
            assert!((t.length_s.unwrap() - 2.0).abs() <= 0.1, "{t:?}");
            assert_eq!(t.at_s, 2);
            assert!((t.burst_iops / 120e3 - 1.0).abs() < 0.02, "{t:?}");
            assert!((t.steady_iops / 6e3 - 1.0).abs() < 0.02, "{t:?}");
        }
        // 2.5 s: the length to the interval, the whole seconds rounded.
        let (head, secs) = fine(1, 2.5, 97e3, 38e3, 600);
        let t = burst_transition_fine(&head, 0.1, &secs).unwrap();
        assert!((t.length_s.unwrap() - 2.5).abs() <= 0.1, "{t:?}");
        // A cache's burst of 3 s, then folding at 38 k for 9 s, a native 64 k for 7 s,
        // then the steady state: the burst is the first level, not the fit's 19 s.
        let mut rng = fastrand::Rng::with_seed(5);
        let level = |t: f64| match t {
            t if t < 3.0 => 97e3,
            t if t < 12.0 => 38e3,
            t if t < 19.0 => 64e3,
            _ => 3.7e3,
        };
        let tenths: Vec<f64> = (0..6000)
            .map(|i| noisy(&mut rng, level(i as f64 / 10.0 + 0.05), 0.02))
            .collect();
        let secs: Vec<f64> = tenths
            .chunks(10)
            .map(|c| c.iter().sum::<f64>() / 10.0)
            .collect();
        let t = burst_transition_fine(&tenths[..300], 0.1, &secs).unwrap();
        assert!((t.length_s.unwrap() - 3.0).abs() <= 0.1, "{t:?}");
        assert!((t.burst_iops / 97e3 - 1.0).abs() < 0.02, "{t:?}");
        // A long burst is found as on the per-second series.
        let (head, secs) = fine(2, 120.0, 50e3, 5e3, 600);
        let t = burst_transition_fine(&head, 0.1, &secs).unwrap();
        assert!((t.length_s.unwrap() - 120.0).abs() <= 0.1, "{t:?}");
        assert_eq!(t.at_s, 120);
        // A steady drive has none, with or without a head; a fast first 100 ms (the
        // queue filling) is no burst.
        let (mut head, secs) = fine(3, 0.0, 0.0, 8e3, 600);
        assert_eq!(burst_transition_fine(&head, 0.1, &secs), None);
        head[0] = 80e3;
        assert_eq!(burst_transition_fine(&head, 0.1, &secs), None);
        // No head, or an interval that does not divide a second: the per-second rule.
        let (_, secs) = fine(4, 30.0, 50e3, 5e3, 600);
        assert_eq!(
            burst_transition_fine(&[], 0.1, &secs),
            burst_transition(&secs)
        );
        assert_eq!(
            burst_transition_fine(&[1.0; 30], 0.3, &secs),
            burst_transition(&secs)
        );
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
