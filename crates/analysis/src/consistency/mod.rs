//! Performance-consistency test (4K random writes at QD32 for an hour on a
//! full drive): scores over the final window, stalls (seconds with no
//! completed I/O), the performance levels a drive shifts between, the end
//! of the initial burst (also on a finer series over the run's first seconds), and the
//! phases of the run in order (burst, intermediate, second burst or GC level, steady).
//!
//! Input everywhere is IOPS per second: element i is the number of I/Os
//! completed during second i of the test. NaN, infinite and negative samples
//! are read as 0.

mod burst;
mod levels;
mod phases;

pub use burst::{
    burst_transition, burst_transition_fine, Transition, BURST_FACTOR, BURST_HEAD_S,
    BURST_MIN_FINE_S,
};
pub use levels::{
    levels_after_burst, performance_levels, Level, LevelScope, LEVEL_BANDWIDTH_LN, LEVEL_DIP_RATIO,
    LEVEL_MIN_SHARE, LEVEL_SIGNIFICANCE_Z,
};
pub use phases::{
    describe as describe_phases, phases, Cache, Phase, PhaseKind, PHASE_MAX, PHASE_MIN_S,
    PHASE_SMOOTH_S, PHASE_STEP_RATIO, SECOND_BURST_SHARE,
};

use serde::{Deserialize, Serialize};

use crate::runs::runs_where;
use crate::stats::{clean_series, mean, min_max, percentile_sorted, stddev_pop};

/// The review's scoring window: the last 400 seconds of the hour.
pub const REVIEW_WINDOW_S: usize = 400;

/// Scores of one consistency run, see [`score`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyScores {
    /// Length of the whole series in seconds.
    pub series_len_s: usize,
    /// First second of the scoring window (0-based).
    pub window_start_s: usize,
    /// Length of the scoring window in seconds.
    pub window_len_s: usize,
    /// Mean IOPS over the window, zero seconds included.
    pub avg_iops: Option<f64>,
    /// Population standard deviation of the per-second IOPS in the window.
    pub stddev_iops: Option<f64>,
    /// avg_iops ÷ stddev_iops; `None` when the standard deviation is 0 (a
    /// perfectly flat window) or the window is empty.
    pub avg_over_stddev: Option<f64>,
    /// Lowest per-second IOPS in the window.
    pub min_iops: Option<f64>,
    /// 1st percentile of the per-second IOPS in the window (linear
    /// interpolation, see [`crate::stats::percentile`]).
    pub p1_iops: Option<f64>,
    /// 99th percentile of the per-second IOPS in the window.
    pub p99_iops: Option<f64>,
    /// Seconds in the window with no completed I/O.
    pub zero_seconds: usize,
    /// Longest run of consecutive zero seconds inside the window (a stall
    /// that began before the window counts only its part inside it).
    pub longest_zero_run_s: usize,
    /// Seconds in the whole series with no completed I/O.
    pub series_zero_seconds: usize,
    /// Longest run of consecutive zero seconds in the whole series.
    pub series_longest_zero_run_s: usize,
}

/// Scores the last `window_s` seconds of a per-second IOPS series (the whole
/// series if it is shorter): mean, population standard deviation, mean ÷
/// standard deviation, minimum, 1st and 99th percentiles, all over every second
/// of the window including zero seconds; plus the number of zero seconds and
/// the longest run of them, both inside the window and over the whole series.
/// The statistics are `None` when the window is empty (empty series or
/// `window_s` = 0).
pub fn score(iops_per_s: &[f64], window_s: usize) -> ConsistencyScores {
    let x = clean_series(iops_per_s);
    let len = window_s.min(x.len());
    let start = x.len() - len;
    let w = &x[start..];
    let mut sorted = w.to_vec();
    sorted.sort_by(f64::total_cmp);
    let avg = mean(w);
    let sd = stddev_pop(w);
    let avg_over_stddev = match (avg, sd) {
        (Some(a), Some(s)) if s > 0.0 => Some(a / s),
        _ => None,
    };
    let (zero_seconds, longest_zero_run_s) = zero_stats(w);
    let (series_zero_seconds, series_longest_zero_run_s) = zero_stats(&x);
    ConsistencyScores {
        series_len_s: x.len(),
        window_start_s: start,
        window_len_s: len,
        avg_iops: avg,
        stddev_iops: sd,
        avg_over_stddev,
        min_iops: min_max(w).map(|(lo, _)| lo),
        p1_iops: percentile_sorted(&sorted, 1.0),
        p99_iops: percentile_sorted(&sorted, 99.0),
        zero_seconds,
        longest_zero_run_s,
        series_zero_seconds,
        series_longest_zero_run_s,
    }
}

fn zero_stats(x: &[f64]) -> (usize, usize) {
    let runs = runs_where(x, |v| v == 0.0);
    (
        runs.iter().map(|r| r.len).sum(),
        runs.iter().map(|r| r.len).max().unwrap_or(0),
    )
}

/// A run of consecutive seconds with no completed I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// First second of the stall (0-based).
    pub start_s: usize,
    /// Number of consecutive zero seconds.
    pub len_s: usize,
}

/// Every maximal run of consecutive seconds whose IOPS is 0 (no I/O completed
/// in that second), in time order.
pub fn stalls(iops_per_s: &[f64]) -> Vec<Stall> {
    runs_where(&clean_series(iops_per_s), |v| v == 0.0)
        .into_iter()
        .map(|r| Stall {
            start_s: r.start,
            len_s: r.len,
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod test_series {
    //! Seeded synthetic series shared by this module's tests.

    /// Normally distributed noise (Box–Muller) from a seeded generator.
    pub fn gauss(rng: &mut fastrand::Rng) -> f64 {
        let u1 = rng.f64().max(f64::MIN_POSITIVE);
        let u2 = rng.f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// `value` × (1 + N(0, rel_sd)), never below 1.
    pub fn noisy(rng: &mut fastrand::Rng, value: f64, rel_sd: f64) -> f64 {
        (value * (1.0 + rel_sd * gauss(rng))).max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_hand_computed_window() {
        // Last 8 seconds: 2 4 4 4 5 5 7 9 → mean 5, population sd 2.
        let series = [100.0, 0.0, 2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = score(&series, 8);
        assert_eq!(s.series_len_s, 10);
        assert_eq!((s.window_start_s, s.window_len_s), (2, 8));
        assert_eq!(s.avg_iops, Some(5.0));
        assert_eq!(s.stddev_iops, Some(2.0));
        assert_eq!(s.avg_over_stddev, Some(2.5));
        assert_eq!(s.min_iops, Some(2.0));
        // p1: rank 0.07 → 2 + 0.07 × 2; p99: rank 6.93 → 7 + 0.93 × 2.
        assert!((s.p1_iops.unwrap() - 2.14).abs() < 1e-9);
        assert!((s.p99_iops.unwrap() - 8.86).abs() < 1e-9);
        assert_eq!((s.zero_seconds, s.longest_zero_run_s), (0, 0));
        assert_eq!((s.series_zero_seconds, s.series_longest_zero_run_s), (1, 1));
    }

    #[test]
    fn short_series_uses_whole_series() {
        let s = score(&[10.0, 20.0, 30.0], 400);
        assert_eq!((s.window_start_s, s.window_len_s), (0, 3));
        assert_eq!(s.avg_iops, Some(20.0));
        assert_eq!(s.min_iops, Some(10.0));
        assert!((s.p99_iops.unwrap() - 29.8).abs() < 1e-9);
    }

    #[test]
    fn flat_window_has_no_avg_over_stddev() {
        let s = score(&[5.0, 1000.0, 1000.0, 1000.0], 3);
        assert_eq!(s.stddev_iops, Some(0.0));
        assert_eq!(s.avg_over_stddev, None);
    }

    #[test]
    fn empty_window_has_no_statistics() {
        for s in [score(&[], 400), score(&[1.0, 2.0], 0)] {
            assert_eq!(s.window_len_s, 0);
            assert_eq!(s.avg_iops, None);
            assert_eq!(s.stddev_iops, None);
            assert_eq!(s.avg_over_stddev, None);
            assert_eq!(s.min_iops, None);
            assert_eq!(s.p1_iops, None);
            assert_eq!(s.p99_iops, None);
        }
    }

    #[test]
    fn zero_seconds_inside_and_outside_window() {
        // Whole series: zero runs of 4 (s 1–4), 1 (s 7), 2 (s 10–11).
        // Window = last 6 s (s 6–11): zero runs 1 and 2.
        let series = [9.0, 0.0, 0.0, 0.0, 0.0, 9.0, 9.0, 0.0, 9.0, 9.0, 0.0, 0.0];
        let s = score(&series, 6);
        assert_eq!(s.window_start_s, 6);
        assert_eq!((s.zero_seconds, s.longest_zero_run_s), (3, 2));
        assert_eq!((s.series_zero_seconds, s.series_longest_zero_run_s), (7, 4));
        assert_eq!(s.min_iops, Some(0.0));
        // Window [9, 0, 9, 9, 0, 0]: mean 27/6 = 4.5, every deviation ±4.5.
        assert_eq!(s.avg_iops, Some(4.5));
        assert_eq!(s.stddev_iops, Some(4.5));
        assert_eq!(s.avg_over_stddev, Some(1.0));

        // A stall straddling the window start counts only its inside part.
        let s = score(&series, 9); // window s 3–11
        assert_eq!((s.zero_seconds, s.longest_zero_run_s), (5, 2));
    }

    #[test]
    fn broken_samples_count_as_zero_seconds() {
        let s = score(&[5.0, f64::NAN, -1.0, 5.0], 400);
        assert_eq!(s.zero_seconds, 2);
        assert_eq!(s.avg_iops, Some(2.5));
    }

    #[test]
    fn stalls_are_runs_of_zero_seconds() {
        let series = [0.0, 3.0, 0.0, 0.0, 0.0, 3.0, 3.0, 0.0];
        assert_eq!(
            stalls(&series),
            vec![
                Stall {
                    start_s: 0,
                    len_s: 1
                },
                Stall {
                    start_s: 2,
                    len_s: 3
                },
                Stall {
                    start_s: 7,
                    len_s: 1
                },
            ]
        );
        assert!(stalls(&[1.0, 2.0]).is_empty());
    }

    #[test]
    fn scores_serialize_without_nan() {
        let s = score(&[1.0, 1.0], 400);
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"avg_over_stddev\":null"));
        let back: ConsistencyScores = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }
}
