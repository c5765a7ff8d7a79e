//! SNIA PTS steady-state detection over per-round results.
//!
//! The PTS runs a test stimulus in rounds (e.g. one minute of 4K random
//! writes per round) and records one value per round (e.g. that round's mean
//! IOPS). Steady state is reached in a window of 5 consecutive rounds when both
//! - the data excursion, max − min, is ≤ 20 % of the window mean, and
//! - the slope excursion of the least-squares line through the window,
//!   |slope × (5 − 1)| (the line's change from the first to the last round),
//!   is ≤ 10 % of the window mean.
//!
//! The test gives up after 25 rounds: steady state "not reached".

use serde::{Deserialize, Serialize};

use crate::stats::{clean_series, linear_fit_index, mean, min_max};

/// A steady-state rule: window length, limits and the round budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyRule {
    /// Rounds per window (at least 2).
    pub window_rounds: usize,
    /// Allowed max − min as a fraction of the window mean.
    pub range_fraction: f64,
    /// Allowed |slope × (window_rounds − 1)| as a fraction of the window mean.
    pub slope_fraction: f64,
    /// Rounds after which the test gives up.
    pub max_rounds: usize,
}

/// The SNIA PTS rule: 5-round window, 20 % range, 10 % slope excursion,
/// at most 25 rounds.
pub const PTS_RULE: SteadyRule = SteadyRule {
    window_rounds: 5,
    range_fraction: 0.20,
    slope_fraction: 0.10,
    max_rounds: 25,
};

/// Relative allowance for float rounding: a window exactly at a limit passes.
const ROUNDING_TOLERANCE: f64 = 1e-9;

/// The checks on one window of rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowCheck {
    /// First round of the window (0-based).
    pub first_round: usize,
    /// Last round of the window (0-based, inclusive).
    pub last_round: usize,
    /// Mean of the window's rounds (unit of the round values).
    pub mean: f64,
    /// max − min of the window.
    pub range: f64,
    /// range_fraction × |mean|.
    pub range_limit: f64,
    /// |slope × (window_rounds − 1)| of the least-squares line.
    pub slope_excursion: f64,
    /// slope_fraction × |mean|.
    pub slope_limit: f64,
    /// range ≤ range_limit.
    pub range_ok: bool,
    /// slope_excursion ≤ slope_limit.
    pub slope_ok: bool,
}

/// Outcome of the steady-state search, see [`pts_verdict`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyVerdict {
    /// A qualifying window was found within the round budget.
    pub reached: bool,
    /// Not reached and the round budget is used up: the test is over.
    /// (`reached` and `gave_up` both false: more rounds are needed.)
    pub gave_up: bool,
    /// First round of the steady-state window (when reached).
    pub window_first_round: Option<usize>,
    /// Last round of the steady-state window (when reached).
    pub window_last_round: Option<usize>,
    /// Mean of the steady-state window (when reached).
    pub window_mean: Option<f64>,
    /// max − min of the steady-state window (when reached).
    pub range: Option<f64>,
    /// Allowed range of the steady-state window (when reached).
    pub range_limit: Option<f64>,
    /// Slope excursion of the steady-state window (when reached).
    pub slope_excursion: Option<f64>,
    /// Allowed slope excursion of the steady-state window (when reached).
    pub slope_limit: Option<f64>,
    /// Rounds looked at: up to the last round of the qualifying window when
    /// reached, otherwise all rounds given, at most the round budget.
    pub rounds_examined: usize,
    /// When not reached: the checks of the last window examined (None when
    /// fewer rounds than one window were given).
    pub last_window: Option<WindowCheck>,
}

/// The PTS steady-state verdict for per-round values, by [`PTS_RULE`]:
/// windows of 5 consecutive rounds are checked in order, starting at round 0,
/// among the first 25 rounds; the earliest window with max − min ≤ 20 % of its
/// mean and |slope × 4| ≤ 10 % of its mean wins (limits use |mean|; values
/// exactly at a limit pass). Rounds past the 25th are ignored. NaN, infinite
/// and negative values are read as 0.
pub fn pts_verdict(rounds: &[f64]) -> SteadyVerdict {
    verdict(rounds, &PTS_RULE)
}

/// [`pts_verdict`] under any [`SteadyRule`] (a window shorter than 2 rounds is
/// treated as 2).
pub fn verdict(rounds: &[f64], rule: &SteadyRule) -> SteadyVerdict {
    let w = rule.window_rounds.max(2);
    let considered = clean_series(&rounds[..rounds.len().min(rule.max_rounds)]);
    let mut last = None;
    for first in 0..(considered.len() + 1).saturating_sub(w) {
        let check = check_window(&considered[first..first + w], first, rule);
        if check.range_ok && check.slope_ok {
            return SteadyVerdict {
                reached: true,
                gave_up: false,
                window_first_round: Some(check.first_round),
                window_last_round: Some(check.last_round),
                window_mean: Some(check.mean),
                range: Some(check.range),
                range_limit: Some(check.range_limit),
                slope_excursion: Some(check.slope_excursion),
                slope_limit: Some(check.slope_limit),
                rounds_examined: check.last_round + 1,
                last_window: None,
            };
        }
        last = Some(check);
    }
    SteadyVerdict {
        reached: false,
        gave_up: rounds.len() >= rule.max_rounds,
        window_first_round: None,
        window_last_round: None,
        window_mean: None,
        range: None,
        range_limit: None,
        slope_excursion: None,
        slope_limit: None,
        rounds_examined: considered.len(),
        last_window: last,
    }
}

fn check_window(win: &[f64], first: usize, rule: &SteadyRule) -> WindowCheck {
    let mean = mean(win).unwrap_or(0.0);
    let (lo, hi) = min_max(win).unwrap_or((0.0, 0.0));
    let range = hi - lo;
    let slope = linear_fit_index(win).map_or(0.0, |f| f.slope);
    let slope_excursion = (slope * (win.len() - 1) as f64).abs();
    let range_limit = rule.range_fraction * mean.abs();
    let slope_limit = rule.slope_fraction * mean.abs();
    let slack = 1.0 + ROUNDING_TOLERANCE;
    WindowCheck {
        first_round: first,
        last_round: first + win.len() - 1,
        mean,
        range,
        range_limit,
        slope_excursion,
        slope_limit,
        // A window of nothing (a drive that stopped answering) is not a steady state:
        // its limits, fractions of a zero mean, would pass anything flat.
        range_ok: mean > 0.0 && range <= range_limit * slack,
        slope_ok: mean > 0.0 && slope_excursion <= slope_limit * slack,
    }
}

/// Per-round values from a per-second series: the mean of each complete round
/// of `round_s` seconds, in order (a trailing partial round is dropped; empty
/// when `round_s` is 0). NaN, infinite and negative samples are read as 0.
pub fn rounds_from_series(per_s: &[f64], round_s: usize) -> Vec<f64> {
    if round_s == 0 {
        return Vec::new();
    }
    clean_series(per_s)
        .chunks_exact(round_s)
        .map(|c| c.iter().sum::<f64>() / round_s as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_of_nothing_are_not_steady() {
        let v = pts_verdict(&[5000.0, 4000.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(!v.reached, "{v:?}");
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn reached_at_earliest_window() {
        // Rounds 0–1 are the fresh-drive burst; window 2–6 =
        // [100, 104, 98, 102, 96]: mean 100, range 8 ≤ 20; slope =
        // Σ(x−2)(y−100)/Σ(x−2)² = (0 − 4 + 0 + 2 − 8)/10 = −1 → |−1 × 4| = 4 ≤ 10.
        let rounds = [300.0, 200.0, 100.0, 104.0, 98.0, 102.0, 96.0, 101.0, 99.0];
        let v = pts_verdict(&rounds);
        assert!(v.reached);
        assert!(!v.gave_up);
        assert_eq!(
            (v.window_first_round, v.window_last_round),
            (Some(2), Some(6))
        );
        assert!(close(v.window_mean, 100.0));
        assert!(close(v.range, 8.0));
        assert!(close(v.range_limit, 20.0));
        assert!(close(v.slope_excursion, 4.0));
        assert!(close(v.slope_limit, 10.0));
        assert_eq!(v.rounds_examined, 7);
        assert_eq!(v.last_window, None);
    }

    #[test]
    fn range_failing_window_is_skipped() {
        // Window 0–4 = [100, 125, 100, 100, 100]: mean 105, range 25 > 21;
        // slope = (−2·−5 − 1·20 + 0 + 1·−5 + 2·−5)/10 = −2.5 → excursion
        // 10 ≤ 10.5, so only the range fails. Window 1–5 =
        // [125, 100, 100, 100, 100] fails the range too; window 2–6 passes.
        let rounds = [100.0, 125.0, 100.0, 100.0, 100.0, 100.0, 100.0];
        let v = pts_verdict(&rounds);
        assert_eq!(v.window_first_round, Some(2));
        let v = pts_verdict(&rounds[..6]);
        assert!(!v.reached && !v.gave_up);
        assert_eq!(v.rounds_examined, 6);
        let last = v.last_window.unwrap();
        assert_eq!((last.first_round, last.last_round), (1, 5));
        assert!(!last.range_ok);
        let first = check_window(&rounds[..5], 0, &PTS_RULE);
        assert!((first.mean - 105.0).abs() < 1e-9);
        assert!((first.range_limit - 21.0).abs() < 1e-9);
        assert!((first.slope_excursion - 10.0).abs() < 1e-9);
        assert!(!first.range_ok && first.slope_ok);
    }

    #[test]
    fn slope_failing_window_is_rejected() {
        // A steady climb [90, 95, 100, 105, 110]: mean 100, range 20 ≤ 20
        // (exactly at the limit passes), slope 5 → excursion 20 > 10.
        let v = pts_verdict(&[90.0, 95.0, 100.0, 105.0, 110.0]);
        assert!(!v.reached);
        let w = v.last_window.unwrap();
        assert!(w.range_ok && !w.slope_ok);
        assert!((w.range - 20.0).abs() < 1e-9);
        assert!((w.slope_excursion - 20.0).abs() < 1e-9);
        assert!((w.slope_limit - 10.0).abs() < 1e-9);
        // The same window with a shallower climb passes: slope 2.5 → 10.
        let v = pts_verdict(&[95.0, 97.5, 100.0, 102.5, 105.0]);
        assert!(v.reached);
        assert!(close(v.slope_excursion, 10.0));
    }

    #[test]
    fn not_reached_after_25_rounds() {
        // Falling 8 % per round forever: every window's slope fails.
        let rounds: Vec<f64> = (0..30).map(|i| 10_000.0 * 0.92f64.powi(i)).collect();
        let v = pts_verdict(&rounds);
        assert!(!v.reached);
        assert!(v.gave_up);
        assert_eq!(v.rounds_examined, 25);
        assert_eq!(v.window_first_round, None);
        assert_eq!(v.window_mean, None);
        let last = v.last_window.unwrap();
        assert_eq!((last.first_round, last.last_round), (20, 24));
        assert!(!last.slope_ok);

        // Steady state that only appears after round 25 does not count.
        let mut late = rounds[..26].to_vec();
        late.extend([100.0; 10]);
        assert!(!pts_verdict(&late).reached);
        // ... but a window ending exactly at round 24 (the 25th) does.
        let mut just = rounds[..20].to_vec();
        just.extend([100.0; 5]);
        let v = pts_verdict(&just);
        assert!(v.reached);
        assert_eq!(
            (v.window_first_round, v.window_last_round),
            (Some(20), Some(24))
        );
        assert_eq!(v.rounds_examined, 25);
    }

    #[test]
    fn too_few_rounds() {
        let v = pts_verdict(&[100.0, 100.0, 100.0]);
        assert!(!v.reached && !v.gave_up);
        assert_eq!(v.rounds_examined, 3);
        assert_eq!(v.last_window, None);
        assert!(!pts_verdict(&[]).reached);
    }

    #[test]
    fn rounds_from_per_second_series() {
        let per_s = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 7.0];
        assert_eq!(rounds_from_series(&per_s, 3), vec![2.0, 20.0]);
        assert!(rounds_from_series(&per_s, 0).is_empty());
        assert!(rounds_from_series(&per_s, 8).is_empty());
    }

    #[test]
    fn verdict_serializes() {
        let v = pts_verdict(&[1.0; 5]);
        let back: SteadyVerdict =
            serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
    }
}
