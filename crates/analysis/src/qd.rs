//! Queue-depth sweep analysis for the enterprise review: the knee of the
//! throughput curve (lowest QD reaching 95 % of the plateau, the level within noise
//! of the best throughput, robust to each point's measured noise) and the rule for stopping a sweep early once
//! throughput keeps falling.

use serde::{Deserialize, Serialize};

use crate::stats::{clean, mean};

/// One measured point of a queue-depth sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Queue depth (outstanding I/Os).
    pub qd: u32,
    /// Throughput at that depth, in any unit (IOPS or MB/s) as long as every
    /// point of a sweep uses the same one.
    pub throughput: f64,
    /// Standard error of `throughput` (same unit), as measured from the point's
    /// own samples (see [`crate::stats::batch_stderr`]); 0 when unknown, which
    /// makes the knee rule the plain one.
    #[serde(default)]
    pub stderr: f64,
}

/// The knee of a sweep, as chosen by [`knee_95`] / [`knee_at`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Position of the knee point in the input slice as given (not in QD
    /// order), so callers can look up that point's latency or power.
    pub index: usize,
    /// Queue depth of the knee point.
    pub qd: u32,
    /// Throughput at the knee (same unit as the input).
    pub throughput: f64,
    /// Queue depth of the best throughput (the lowest such QD on ties).
    pub peak_qd: u32,
    /// Best throughput seen in the sweep.
    pub peak_throughput: f64,
    /// throughput ÷ peak_throughput, in 0–1.
    pub fraction_of_peak: f64,
    /// The level the knee is measured against: the mean of the points within
    /// noise of the best one (the best throughput itself when no point has a
    /// measured noise).
    #[serde(default)]
    pub plateau_throughput: f64,
    /// The knee threshold: fraction × plateau_throughput.
    #[serde(default)]
    pub threshold: f64,
    /// Queue depths up to the knee whose throughput is within their noise of
    /// the threshold: whether they reach it is not settled by this measurement
    /// (repeat or lengthen them to settle it).
    #[serde(default)]
    pub uncertain_qds: Vec<u32>,
    /// The knee is the sweep's highest queue depth: the curve may still be rising
    /// there, so the knee (and the level) may lie beyond the sweep.
    #[serde(default)]
    pub at_last_qd: bool,
}

/// The review's knee fraction: 95 % of the level the drive sustains at its best (the
/// plateau, see [`knee_95`]).
pub const KNEE_FRACTION: f64 = 0.95;

/// What [`knee_95`] selects, in words for captions and labels (one definition: reports
/// say this, not their own paraphrase).
pub const KNEE_RULE: &str = "the lowest queue depth whose throughput reaches 95 % of the \
    plateau (the mean throughput of the points within noise of the best), allowing for \
    its own measured noise";

/// The knee line's name on a chart: [`Knee::threshold`].
pub const THRESHOLD_LABEL: &str = "95 % of the plateau";

/// Relative tolerance for float rounding when comparing against the knee
/// threshold (a point at exactly 95 % counts as reaching it).
const ROUNDING_TOLERANCE: f64 = 1e-9;

/// Standard errors apart that count as a real difference between two points
/// (about 95 % confidence).
pub const NOISE_Z: f64 = 2.0;

impl Knee {
    /// The level the knee was measured against: `plateau_throughput`, or the best
    /// throughput for knees saved before it was (they were chosen against the best).
    pub fn plateau(&self) -> f64 {
        if self.plateau_throughput > 0.0 {
            self.plateau_throughput
        } else {
            self.peak_throughput
        }
    }

    /// The knee's throughput as a share of [`Knee::plateau`], in 0–1 (under 0.95 by no
    /// more than its noise).
    pub fn fraction_of_plateau(&self) -> f64 {
        self.throughput / self.plateau()
    }
}

/// The review's knee rule, made robust to noise: the lowest queue depth whose
/// throughput reaches 95 % of the level the drive sustains at its best.
///
/// - **Level**: the best throughput anywhere in the sweep is inflated by its
///   own noise (the best of several noisy points is a lucky one), so the level
///   is the mean of the points not significantly below the best: tᵢ ≥ t_best −
///   2·√(σᵢ² + σ_best²), σ being each point's standard error (`stderr`).
/// - **Knee**: the lowest QD that is not significantly below 95 % of that
///   level: tᵢ + 2·σᵢ ≥ 0.95 × level. Points up to the knee within 2·σᵢ of
///   the threshold either way are listed as `uncertain_qds`.
///
/// With no noise measured (every σ = 0) this is the plain rule: the lowest QD
/// with at least 95 % of the best throughput. Points may come in any order;
/// they are considered in increasing QD order (input order among equal QDs).
/// Because the level is taken over the whole sweep, a dip after the knee or a
/// noisy tail does not move the knee, and on a plateau the knee is the first
/// point of the plateau. Throughputs and errors that are NaN, infinite or
/// negative are read as 0. Returns `None` for an empty sweep or when no point
/// has a throughput above 0 (there is no curve to have a knee).
pub fn knee_95(points: &[SweepPoint]) -> Option<Knee> {
    knee_at(points, KNEE_FRACTION)
}

/// [`knee_95`] with another fraction of the peak (clamped to 0–1; NaN → 0.95).
pub fn knee_at(points: &[SweepPoint], fraction: f64) -> Option<Knee> {
    let fraction = if fraction.is_nan() {
        KNEE_FRACTION
    } else {
        fraction.clamp(0.0, 1.0)
    };
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| points[i].qd); // stable: input order among equal QDs
    let tp = |i: usize| clean(points[i].throughput);
    let se = |i: usize| clean(points[i].stderr);

    // Lowest QD with the highest throughput.
    let mut peak = *order.first()?;
    for &i in &order {
        if tp(i) > tp(peak) {
            peak = i;
        }
    }
    let peak_tp = tp(peak);
    if peak_tp <= 0.0 {
        return None;
    }
    let plateau: Vec<f64> = order
        .iter()
        .filter(|&&i| tp(i) >= peak_tp - NOISE_Z * se(i).hypot(se(peak)))
        .map(|&i| tp(i))
        .collect();
    let level = mean(&plateau).unwrap_or(peak_tp);
    let threshold = fraction * level;
    let cut = threshold * (1.0 - ROUNDING_TOLERANCE);
    let knee = order
        .iter()
        .copied()
        .find(|&i| tp(i) + NOISE_Z * se(i) >= cut)?;
    // Points above the knee cannot move it.
    let uncertain_qds = order
        .iter()
        .filter(|&&i| points[i].qd <= points[knee].qd)
        .filter(|&&i| se(i) > 0.0 && (tp(i) - threshold).abs() <= NOISE_Z * se(i))
        .map(|&i| points[i].qd)
        .collect();
    Some(Knee {
        index: knee,
        qd: points[knee].qd,
        throughput: tp(knee),
        peak_qd: points[peak].qd,
        peak_throughput: peak_tp,
        fraction_of_peak: tp(knee) / peak_tp,
        plateau_throughput: level,
        threshold,
        uncertain_qds,
        at_last_qd: order
            .last()
            .is_some_and(|&i| points[i].qd == points[knee].qd),
    })
}

/// Which points of a sweep another pass should settle, in the order to measure them.
///
/// - The knee's `uncertain_qds`: points up to the knee whose throughput is within
///   their noise of the 95 % threshold, so whether they reach it is not known.
/// - The best point, once, whenever the sweep's noise is measured, and again (up to
///   `max_passes`) while any point is uncertain and it lies above the knee: the
///   threshold is set by the level, and the best of several noisy points is the best
///   partly by luck (issue 14: QD32 read 7 % high on a drive flat from QD8; issue 24:
///   with 10 s points a steady-state random-write peak read 13 % high and put the knee
///   at QD32, where no point near it was in doubt); a new pass of it is not selected
///   for luck, and pooled with the first it pulls the level back.
///
/// Only points with fewer than `max_passes` passes are listed (the bound on the extra
/// time), those with the fewest passes first, then the lowest QD (a lower point settled
/// can move the knee down). `passes[i]` is how many passes `points[i]` pools (a missing
/// entry counts as 1). Empty when the knee is settled, when every candidate has had its
/// passes, or when the sweep has no knee. Asked again after each pass (with the passes
/// pooled), a point leaves the list as soon as its standard error puts it clearly on
/// one side of the threshold.
pub fn points_needing_pass(points: &[SweepPoint], passes: &[u32], max_passes: u32) -> Vec<u32> {
    let Some(knee) = knee_95(points) else {
        return Vec::new();
    };
    let passes_of = |qd: u32| {
        points
            .iter()
            .position(|p| p.qd == qd)
            .and_then(|i| passes.get(i).copied())
            .unwrap_or(1)
    };
    let mut due_qds = knee.uncertain_qds.clone();
    let peak_noisy = points
        .iter()
        .any(|p| p.qd == knee.peak_qd && clean(p.stderr) > 0.0);
    let peak_once = peak_noisy && passes_of(knee.peak_qd) < 2;
    if peak_once || (!due_qds.is_empty() && knee.peak_qd > knee.qd) {
        due_qds.push(knee.peak_qd);
    }
    let mut due: Vec<(u32, u32)> = due_qds
        .iter()
        .map(|&qd| (passes_of(qd), qd))
        .filter(|&(n, _)| n < max_passes)
        .collect();
    due.sort_unstable();
    due.dedup();
    due.into_iter().map(|(_, qd)| qd).collect()
}

/// Noise tolerance of the early-stop rule: a point counts as a fall only when
/// it is more than 1 % below the point before it.
pub const STOP_FALL_TOLERANCE: f64 = 0.01;

/// Early-stop rule for a sweep in progress. `throughputs` are the results so
/// far in increasing-QD order. Returns true once throughput has fallen for two
/// consecutive points past the peak: the maximum of the series lies before the
/// last two points, and each of the last two points is lower than its
/// predecessor by more than [`STOP_FALL_TOLERANCE`] (tᵢ < tᵢ₋₁ × 0.99).
/// NaN, infinite and negative values are read as 0. Fewer than three points
/// never stop the sweep.
pub fn sweep_should_stop(throughputs: &[f64]) -> bool {
    let n = throughputs.len();
    if n < 3 {
        return false;
    }
    let t: Vec<f64> = throughputs.iter().copied().map(clean).collect();
    let peak = t
        .iter()
        .enumerate()
        .fold(0, |best, (i, &x)| if x > t[best] { i } else { best });
    let falls = |i: usize| t[i] < t[i - 1] * (1.0 - STOP_FALL_TOLERANCE);
    peak < n - 2 && falls(n - 2) && falls(n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(pairs: &[(u32, f64)]) -> Vec<SweepPoint> {
        pairs
            .iter()
            .map(|&(qd, throughput)| SweepPoint {
                qd,
                throughput,
                stderr: 0.0,
            })
            .collect()
    }

    fn gauss(rng: &mut fastrand::Rng) -> f64 {
        let u1 = rng.f64().max(f64::MIN_POSITIVE);
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * rng.f64()).cos()
    }

    /// The issue's 4K random-write sweep: flat from QD8, QD32 read 7 % high.
    fn issue_sweep() -> Vec<SweepPoint> {
        sweep(&[
            (1, 9000.0),
            (2, 16000.0),
            (4, 24000.0),
            (8, 29441.0),
            (16, 27340.0),
            (32, 31253.0),
            (64, 25269.0),
        ])
    }

    #[test]
    fn the_issue_sweep_with_its_noise_has_its_knee_at_qd8() {
        // 4K random writes on a drive whose true rate is flat from QD8; QD32 read 7 %
        // high. Without noise measured, the plain rule puts the knee at QD32.
        let mut pts = issue_sweep();
        assert_eq!(knee_95(&pts).unwrap().qd, 32);
        // Each point's measured standard error: 5 % of its throughput.
        for p in &mut pts {
            p.stderr = 0.05 * p.throughput;
        }
        let k = knee_95(&pts).unwrap();
        assert_eq!(k.qd, 8, "{k:?}");
        assert_eq!(k.peak_qd, 32);
        assert!(k.plateau_throughput < 31253.0 && k.threshold < 0.95 * 31253.0);
        assert!(k.uncertain_qds.contains(&8), "{k:?}");
        assert!(!k.uncertain_qds.contains(&4), "{k:?}");
    }

    #[test]
    fn an_inflated_best_point_is_measured_again_though_no_point_is_in_doubt() {
        // Issue 24: 10 s points of a drive in its steady state; QD32 read 13 % above the
        // drive's rate and set a threshold that QD8 and QD16 are clearly below.
        let mut pts = sweep(&[(4, 14000.0), (8, 17600.0), (16, 18000.0), (32, 21500.0)]);
        for p in &mut pts {
            p.stderr = 0.01 * p.throughput;
        }
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.uncertain_qds.len()), (32, 0), "{k:?}");
        assert!(k.at_last_qd);
        assert_eq!(points_needing_pass(&pts, &[1, 1, 1, 1], 3), vec![32]);
        // Its second pass read a little below the drive's rate; pooled, the knee is QD8.
        // The best point is QD16 now, measured once: it gets its second pass too, and
        // then nothing is asked for.
        pts[3].throughput = (21500.0 + 14300.0) / 2.0;
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.peak_qd), (8, 16), "{k:?}");
        assert!(!k.at_last_qd);
        assert_eq!(points_needing_pass(&pts, &[1, 1, 1, 2], 3), vec![16]);
        assert!(points_needing_pass(&pts, &[1, 1, 2, 2], 3).is_empty());
    }

    #[test]
    fn points_within_noise_of_the_threshold_get_another_pass_until_settled() {
        // The issue's sweep with 5 % standard errors: QD8 is within its noise of the
        // threshold (the knee), QD4 clearly below, QD16 and up above the knee.
        let mut pts = issue_sweep();
        for p in &mut pts {
            p.stderr = 0.05 * p.throughput;
        }
        let one = vec![1; pts.len()];
        // QD8, and the best point (QD32), which sets the threshold.
        assert_eq!(points_needing_pass(&pts, &one, 3), vec![8, 32]);
        // QD4 read within its noise of the threshold: the knee is QD4 unless more
        // passes say otherwise, and QD8 (above that knee) no longer matters. Fewest
        // passes first: QD4 had its second pass, QD32 goes before QD4's third.
        let mut two = one.clone();
        two[2] = 2;
        pts[2].throughput = 26000.0;
        assert_eq!(knee_95(&pts).unwrap().qd, 4);
        assert_eq!(points_needing_pass(&pts, &two, 3), vec![32, 4]);
        // A point that had its passes is not asked for again (the bound).
        let done = vec![3; pts.len()];
        assert!(points_needing_pass(&pts, &done, 3).is_empty());
        // Passes pooled: QD32's second pass read the drive's flat level, and the
        // standard errors shrank: QD8 is clearly above the threshold, QD4 clearly
        // below: settled, nothing more to measure.
        pts[2].throughput = 24000.0;
        pts[5].throughput = 29300.0;
        two[5] = 2;
        // The best point is QD8 now: it has one pass only, so it is measured again.
        assert_eq!(points_needing_pass(&pts, &two, 3), vec![8]);
        two[3] = 2;
        for p in &mut pts {
            p.stderr = 0.01 * p.throughput;
        }
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.uncertain_qds.len()), (8, 0), "{k:?}");
        assert!(points_needing_pass(&pts, &two, 3).is_empty());
        // No noise measured, no knee, no passes asked for.
        assert!(points_needing_pass(&sweep(&[(1, 5.0), (2, 9.0)]), &[1, 1], 3).is_empty());
        assert!(points_needing_pass(&[], &[], 3).is_empty());
        // max_passes 1: re-measuring is off.
        pts[3].stderr = 0.05 * pts[3].throughput;
        assert!(points_needing_pass(&pts, &one, 1).is_empty());
    }

    #[test]
    fn noisy_sweeps_of_a_flat_drive_find_the_true_knee() {
        // True curve flat at 29 000 from QD8; each point the mean of 30 seconds with
        // 20 % noise per second; the standard error by batch means.
        let truth = [
            (1, 8000.0),
            (2, 15000.0),
            (4, 23000.0),
            (8, 29000.0),
            (16, 29000.0),
            (32, 29000.0),
            (64, 29000.0),
            (128, 29000.0),
        ];
        let (mut robust, mut plain) = (0, 0);
        let trials = 300;
        for seed in 0..trials {
            let mut rng = fastrand::Rng::with_seed(seed);
            let pts: Vec<SweepPoint> = truth
                .iter()
                .map(|&(qd, t)| {
                    let secs: Vec<f64> =
                        (0..30).map(|_| t * (1.0 + 0.2 * gauss(&mut rng))).collect();
                    SweepPoint {
                        qd,
                        throughput: mean(&secs).unwrap(),
                        stderr: crate::stats::batch_stderr(&secs, 5).unwrap(),
                    }
                })
                .collect();
            robust += usize::from(knee_95(&pts).unwrap().qd == 8);
            let bare: Vec<SweepPoint> = pts
                .iter()
                .map(|p| SweepPoint { stderr: 0.0, ..*p })
                .collect();
            plain += usize::from(knee_95(&bare).unwrap().qd == 8);
        }
        assert!(
            robust >= trials as usize * 97 / 100,
            "robust {robust}/{trials}"
        );
        assert!(plain < robust * 9 / 10, "plain {plain} vs robust {robust}");
    }

    #[test]
    fn knee_is_lowest_qd_reaching_95_percent_of_peak() {
        let pts = sweep(&[
            (1, 100.0),
            (2, 190.0),
            (4, 350.0),
            (8, 520.0),
            (16, 610.0),
            (32, 640.0),
            (64, 600.0), // dip after the knee
            (128, 655.0),
            (256, 630.0),
        ]);
        // peak 655 at QD 128; 95 % = 622.25; first QD at or above: 32 (640).
        let k = knee_95(&pts).unwrap();
        assert_eq!(k.qd, 32);
        assert_eq!(k.index, 5);
        assert_eq!(k.throughput, 640.0);
        assert_eq!(k.peak_qd, 128);
        assert_eq!(k.peak_throughput, 655.0);
        assert!((k.fraction_of_peak - 640.0 / 655.0).abs() < 1e-12);
    }

    #[test]
    fn exactly_95_percent_counts() {
        let pts = sweep(&[(1, 50.0), (2, 95.0), (4, 100.0)]);
        assert_eq!(knee_95(&pts).unwrap().qd, 2);
        let pts = sweep(&[(1, 50.0), (2, 94.99), (4, 100.0)]);
        assert_eq!(knee_95(&pts).unwrap().qd, 4);
    }

    #[test]
    fn plateau_knee_is_first_point_of_plateau() {
        let pts = sweep(&[(1, 100.0), (2, 200.0), (4, 300.0), (8, 300.0), (16, 300.0)]);
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.peak_qd, k.fraction_of_peak), (4, 4, 1.0));

        // A noisy plateau: 296 is within 95 % of the best (302 at QD 64).
        let pts = sweep(&[
            (1, 90.0),
            (2, 170.0),
            (4, 260.0),
            (8, 296.0),
            (16, 301.0),
            (32, 293.0),
            (64, 302.0),
        ]);
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.peak_qd), (8, 64));
    }

    #[test]
    fn unordered_input_is_sorted_by_qd_and_index_points_into_input() {
        let pts = sweep(&[
            (32, 980.0),
            (1, 200.0),
            (8, 960.0),
            (4, 700.0),
            (16, 1000.0),
        ]);
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.index), (8, 2));
        assert_eq!((k.peak_qd, k.peak_throughput), (16, 1000.0));
    }

    #[test]
    fn empty_and_all_zero_sweeps_have_no_knee() {
        assert_eq!(knee_95(&[]), None);
        assert_eq!(knee_95(&sweep(&[(1, 0.0), (2, 0.0), (4, 0.0)])), None);
        assert_eq!(knee_95(&sweep(&[(1, f64::NAN), (2, -1.0)])), None);
    }

    #[test]
    fn broken_samples_never_become_the_peak() {
        let pts = sweep(&[(1, 100.0), (2, f64::INFINITY), (4, 200.0)]);
        let k = knee_95(&pts).unwrap();
        assert_eq!((k.qd, k.peak_qd), (4, 4));
    }

    #[test]
    fn other_fraction() {
        let pts = sweep(&[(1, 40.0), (2, 80.0), (4, 100.0)]);
        assert_eq!(knee_at(&pts, 0.8).unwrap().qd, 2);
        assert_eq!(knee_at(&pts, 0.0).unwrap().qd, 1);
    }

    #[test]
    fn stops_after_two_consecutive_falls_past_peak() {
        assert!(!sweep_should_stop(&[]));
        assert!(!sweep_should_stop(&[100.0, 90.0]));
        assert!(!sweep_should_stop(&[100.0, 200.0, 300.0]));
        assert!(!sweep_should_stop(&[100.0, 200.0, 300.0, 280.0]));
        assert!(sweep_should_stop(&[100.0, 200.0, 300.0, 280.0, 260.0]));
        // One fall, then a rise, then one fall: not two consecutive.
        assert!(!sweep_should_stop(&[100.0, 300.0, 280.0, 290.0, 270.0]));
        // Falls within the 1 % noise tolerance do not count.
        assert!(!sweep_should_stop(&[100.0, 300.0, 298.0, 296.0]));
        assert!(sweep_should_stop(&[100.0, 300.0, 296.0, 292.0]));
        // Exactly 1 % lower is not "more than" 1 %.
        assert!(!sweep_should_stop(&[100.0, 300.0, 297.0, 290.0]));
    }

    #[test]
    fn falls_before_a_later_peak_do_not_stop() {
        // The two falls happened, but the sweep later climbed higher: the
        // last two points are what matter, and they rise.
        assert!(!sweep_should_stop(&[300.0, 250.0, 200.0, 400.0, 410.0]));
        // After the new peak, two falls: stop.
        assert!(sweep_should_stop(&[
            300.0, 250.0, 200.0, 400.0, 380.0, 350.0
        ]));
    }
}
