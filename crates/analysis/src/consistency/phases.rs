//! The phases of a consistency run: the stretches of time at one level each, in order
//! ("burst 51k IOPS to 26 s, intermediate 18k to 122 s, second burst 51k to 133 s, …,
//! then 9k"). A drive with extra spare area can go through an intermediate phase and a
//! second burst before its steady state; one level and one burst end cannot say that.

use serde::{Deserialize, Serialize};

use super::Transition;
use crate::stats::{clean_series, mean, median};

/// The shortest phase, in seconds.
pub const PHASE_MIN_S: usize = 5;
/// Two neighbouring phases differ by at least this factor in level (the noise of a
/// steady drive, and the slow drift of its garbage collection settling, stay below it).
pub const PHASE_STEP_RATIO: f64 = 1.25;
/// At most this many phases; a drive cycling between levels for the whole run is
/// described by its levels (see `performance_levels`), not as a sequence.
pub const PHASE_MAX: usize = 8;
/// Width of the running median the boundaries are found on: a stall of a second or two
/// does not start a phase.
pub const PHASE_SMOOTH_S: usize = 5;
/// A later phase at least this share of the first burst's level is a burst again.
pub const SECOND_BURST_SHARE: f64 = 0.85;
/// A phase below this share of the first burst's level is the host waiting on garbage
/// collection (a foreground refill): a full-speed phase right after it is GC's.
pub const GC_STALL_SHARE: f64 = 0.1;
/// Levels within this factor of each other are the same level coming back.
pub const PHASE_SAME_RATIO: f64 = 1.1;

/// What a phase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// Far above the final level: the first phase (a fresh drive's spare area, or a
    /// cache), or a later one back at its level on a drive with a cache (created again).
    Burst,
    /// A later phase back at the first burst's level on a drive without a cache: the
    /// drive writing with every die between garbage-collection phases, no burst.
    GcLevel,
    /// Between the first phase and the last that is not a burst.
    Intermediate,
    /// The last phase (the only one when the drive never changed level).
    Steady,
}

impl PhaseKind {
    /// The word for reports.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Burst => "burst",
            PhaseKind::GcLevel => "GC level",
            PhaseKind::Intermediate => "intermediate",
            PhaseKind::Steady => "steady",
        }
    }
}

/// One phase, see [`phases`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// First second (0-based).
    pub start_s: usize,
    /// One past the last second: the next phase's `start_s`, or the series' length.
    pub end_s: usize,
    /// Mean IOPS over the phase's seconds, the first and last left out when it has more
    /// than two (they straddle the change); seconds without I/O count. The last phase,
    /// when it holds the whole scoring window, has the window's own average: the final
    /// level the phases end on is the one the run is scored on.
    pub level_iops: f64,
    pub kind: PhaseKind,
}

/// Cuts a per-second IOPS series into phases.
///
/// Rule: with an initial burst (the verdict of `burst_transition`, passed as `burst`),
/// the first phase is that burst, from 0 to its `at_s` at the burst's own level
/// (`burst_iops`), and the rest of the run is cut
/// as follows; without one, the whole run is, and no phase is a burst (a fast phase of
/// garbage collection is no burst: one verdict for the burst line and the phases).
/// The boundaries are found on the series' running median over
/// [`PHASE_SMOOTH_S`] seconds, by binary segmentation: of every phase so far, the
/// split (both sides at least [`PHASE_MIN_S`] seconds) that best fits a constant on
/// each side by least squares; the split that lowers the total squared error most is
/// taken if its two sides' means differ by at least [`PHASE_STEP_RATIO`] and it fits
/// better than one straight line over the phase (a drift is no step), until none
/// does or there are [`PHASE_MAX`] phases. Then neighbouring phases whose levels (see
/// [`Phase::level_iops`], on the raw series) differ by less than that factor are
/// merged, and from the first phase whose level (within [`PHASE_SAME_RATIO`]) comes
/// back twice more the rest is one phase: a cycle is a steady state (see
/// `performance_levels` for its levels). The last phase is `Steady`; the first is a
/// `Burst` with an initial burst; a phase between that comes back to
/// [`SECOND_BURST_SHARE`] of the first burst's level is a `GcLevel` when it follows a
/// phase below [`GC_STALL_SHARE`] of that level on a drive with no cache seen
/// ([`Cache::NotSeen`]: the drive writing with every die after GC refilled its free pool
/// while the host waited), else a `Burst` again (a cache created again); other phases
/// between are `Intermediate`. The last phase's level is the mean of the last `window_s` seconds
/// (the scoring window, zero seconds included) when the phase starts at or before the
/// window. Empty for an empty series.
pub fn phases(
    iops_per_s: &[f64],
    window_s: usize,
    burst: Option<&Transition>,
    cache: Cache,
) -> Vec<Phase> {
    let x = clean_series(iops_per_s);
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    // The burst verdict's end is the first cut; the phases after it are found on the
    // rest of the run.
    let from = burst.map_or(0, |b| b.at_s.min(n));
    let mut cuts = segment(&x, from);
    if from > 0 {
        cuts.insert(0, 0);
    }
    let window_start = n - window_s.clamp(1, n);
    label(
        cuts.windows(2)
            .map(|w| {
                let scored = w[1] == n && w[0] <= window_start;
                let lvl = if let (Some(b), true) = (burst, w[0] == 0 && from > 0) {
                    // The burst's own level, found at the grain it was found on.
                    b.burst_iops
                } else if scored {
                    mean(&x[window_start..]).unwrap_or(0.0)
                } else {
                    level(&x[w[0]..w[1]])
                };
                (w[0], w[1], lvl)
            })
            .collect(),
        burst.is_some(),
        cache,
    )
}

/// Whether the drive has a write cache its bursts can come from (seen before the test,
/// in its precondition's sequential fill): a later phase back at the burst's level is
/// the cache again only where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    Seen,
    NotSeen,
}

/// The cuts of `x[from..]` into phases (see [`phases`]), from `from` to the end.
fn segment(x: &[f64], from: usize) -> Vec<usize> {
    let n = x.len();
    if from >= n {
        return vec![n];
    }
    let y = running_median(&x[from..], PHASE_SMOOTH_S);
    let prefix = Prefix::new(&y);
    let mut cuts = vec![0, n - from];
    while cuts.len() <= PHASE_MAX {
        let best = cuts
            .windows(2)
            .filter_map(|w| best_split(&prefix, w[0], w[1]))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((t, _)) => {
                let i = cuts.partition_point(|&c| c < t);
                cuts.insert(i, t);
            }
            None => break,
        }
    }
    let rest = &x[from..];
    merge_close(rest, &mut cuts);
    merge_cycles(rest, &mut cuts);
    cuts.iter().map(|c| c + from).collect()
}

/// Sums and sums of squares from the start, for O(1) squared error of a constant fit.
struct Prefix {
    s1: Vec<f64>,
    s2: Vec<f64>,
    /// Sums of i·y (i the second), for the straight-line fit.
    sx: Vec<f64>,
}

impl Prefix {
    fn new(y: &[f64]) -> Prefix {
        let mut s1 = vec![0.0; y.len() + 1];
        let mut s2 = vec![0.0; y.len() + 1];
        let mut sx = vec![0.0; y.len() + 1];
        for (i, &v) in y.iter().enumerate() {
            s1[i + 1] = s1[i] + v;
            s2[i + 1] = s2[i] + v * v;
            sx[i + 1] = sx[i] + i as f64 * v;
        }
        Prefix { s1, s2, sx }
    }

    /// Squared error of the least-squares straight line over `a..b`.
    fn line_sse(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        let (a, b) = (a as f64, b as f64);
        // Sums of i and i² over a..b, in closed form.
        let si = (a + b - 1.0) * n / 2.0;
        let sii = ((b - 1.0) * b * (2.0 * b - 1.0) - (a - 1.0) * a * (2.0 * a - 1.0)) / 6.0;
        let (a, b) = (a as usize, b as usize);
        let sy = self.s1[b] - self.s1[a];
        let sxx = sii - si * si / n;
        let sxy = (self.sx[b] - self.sx[a]) - si * sy / n;
        let syy = (self.s2[b] - self.s2[a]) - sy * sy / n;
        if sxx <= 0.0 {
            return syy.max(0.0);
        }
        (syy - sxy * sxy / sxx).max(0.0)
    }

    fn mean(&self, a: usize, b: usize) -> f64 {
        (self.s1[b] - self.s1[a]) / (b - a) as f64
    }

    fn sse(&self, a: usize, b: usize) -> f64 {
        let sum = self.s1[b] - self.s1[a];
        ((self.s2[b] - self.s2[a]) - sum * sum / (b - a) as f64).max(0.0)
    }
}

/// The best split of `a..b` and how much it lowers the squared error, when its sides
/// differ by at least [`PHASE_STEP_RATIO`] and the step fits better than a straight
/// line (a slow drift is not two phases).
fn best_split(p: &Prefix, a: usize, b: usize) -> Option<(usize, f64)> {
    if b - a < 2 * PHASE_MIN_S {
        return None;
    }
    let whole = p.sse(a, b);
    let (t, e) = (a + PHASE_MIN_S..=b - PHASE_MIN_S)
        .map(|t| (t, p.sse(a, t) + p.sse(t, b)))
        .min_by(|u, v| u.1.total_cmp(&v.1))?;
    (apart(p.mean(a, t), p.mean(t, b)) && e < p.line_sse(a, b)).then_some((t, whole - e))
}

/// Whether two levels differ by at least [`PHASE_STEP_RATIO`].
fn apart(u: f64, v: f64) -> bool {
    let (lo, hi) = if u < v { (u, v) } else { (v, u) };
    hi > 0.0 && hi >= PHASE_STEP_RATIO * lo
}

/// See [`Phase::level_iops`].
fn level(s: &[f64]) -> f64 {
    let inner = if s.len() > 2 { &s[1..s.len() - 1] } else { s };
    mean(inner).unwrap_or(0.0)
}

/// Merge neighbouring phases whose levels are not [`apart`], the closest pair first.
fn merge_close(x: &[f64], cuts: &mut Vec<usize>) {
    loop {
        let levels: Vec<f64> = cuts.windows(2).map(|w| level(&x[w[0]..w[1]])).collect();
        let closest = levels
            .windows(2)
            .enumerate()
            .filter(|(_, w)| !apart(w[0], w[1]))
            .min_by(|(_, u), (_, v)| ratio(u[0], u[1]).total_cmp(&ratio(v[0], v[1])));
        match closest {
            Some((i, _)) => {
                cuts.remove(i + 1);
            }
            None => return,
        }
    }
}

/// A drive cycling between levels (a throttle switching on and off, GC falling behind
/// and catching up) is in its steady state, not in a sequence of phases: from the first
/// phase whose level comes back twice more, the rest is one phase (all of the run when
/// that is the first).
fn merge_cycles(x: &[f64], cuts: &mut Vec<usize>) {
    let levels: Vec<f64> = cuts.windows(2).map(|w| level(&x[w[0]..w[1]])).collect();
    let same = |u: f64, v: f64| (u <= 0.0 && v <= 0.0) || ratio(u, v) < PHASE_SAME_RATIO;
    let cycling = (0..levels.len()).find(|&i| {
        levels[i + 1..]
            .iter()
            .filter(|&&v| same(levels[i], v))
            .count()
            >= 2
    });
    if let Some(i) = cycling {
        let n = cuts[cuts.len() - 1];
        cuts.truncate(i + 1);
        cuts.push(n);
    }
}

fn ratio(u: f64, v: f64) -> f64 {
    u.max(v) / u.min(v).max(f64::MIN_POSITIVE)
}

/// Kinds for (start, end, level) spans, see [`phases`]; `burst`: the first span is the
/// initial burst's.
fn label(spans: Vec<(usize, usize, f64)>, burst: bool, cache: Cache) -> Vec<Phase> {
    let first = spans.first().map_or(0.0, |s| s.2);
    let first_burst = burst && spans.len() > 1;
    let levels: Vec<f64> = spans.iter().map(|s| s.2).collect();
    let k = spans.len();
    spans
        .into_iter()
        .enumerate()
        .map(|(i, (start_s, end_s, level_iops))| {
            let kind = if i + 1 == k {
                PhaseKind::Steady
            } else if first_burst && i == 0 {
                PhaseKind::Burst
            } else if first_burst && level_iops >= SECOND_BURST_SHARE * first {
                // Back at full speed right after a stall, with no cache seen: the
                // drive's GC refilled its free pool while the host waited.
                let after_stall = i > 0 && levels[i - 1] < GC_STALL_SHARE * first;
                match (cache, after_stall) {
                    (Cache::NotSeen, true) => PhaseKind::GcLevel,
                    _ => PhaseKind::Burst,
                }
            } else {
                PhaseKind::Intermediate
            };
            Phase {
                start_s,
                end_s,
                level_iops,
                kind,
            }
        })
        .collect()
}

/// Median of each second's window of `w` seconds centred on it (shorter at the ends).
fn running_median(x: &[f64], w: usize) -> Vec<f64> {
    let h = w / 2;
    (0..x.len())
        .map(|i| {
            let (a, b) = (i.saturating_sub(h), (i + h + 1).min(x.len()));
            median(&x[a..b]).unwrap_or(0.0)
        })
        .collect()
}

/// "burst 51 k IOPS to 26 s, intermediate 18 k to 122 s, second burst … then 9 k IOPS":
/// the phases in one line, or `None` with fewer than two.
pub fn describe(phases: &[Phase]) -> Option<String> {
    if phases.len() < 2 {
        return None;
    }
    let mut bursts = 0;
    let mut parts = Vec::new();
    for (i, p) in phases.iter().enumerate() {
        let iops = format!("{:.0}", p.level_iops);
        if i + 1 == phases.len() {
            parts.push(format!("then {iops} IOPS"));
            break;
        }
        let name = match p.kind {
            PhaseKind::Burst => {
                bursts += 1;
                match bursts {
                    1 => "burst".to_string(),
                    2 => "second burst".to_string(),
                    n => format!("burst {n}"),
                }
            }
            k => k.name().to_string(),
        };
        let unit = if i == 0 { " IOPS" } else { "" };
        parts.push(format!("{name} {iops}{unit} to {} s", p.end_s));
    }
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::burst_transition;
    use super::super::test_series::noisy;
    use super::*;

    /// The phases as the suite finds them: with the run's own burst verdict.
    fn with_burst(x: &[f64], window_s: usize) -> Vec<Phase> {
        phases(x, window_s, burst_transition(x).as_ref(), Cache::Seen)
    }

    #[test]
    fn the_burst_line_and_the_phases_give_one_verdict() {
        // Issue 24: 120 k IOPS for 2 s, then 6 k: no burst the burst rule accepts (too
        // short for per-second data), and so no phase is called one.
        let mut x = vec![120e3, 120e3];
        x.extend(series(8, &[(600, 6e3)]));
        assert_eq!(burst_transition(&x), None);
        let got = with_burst(&x, 400);
        assert!(got.iter().all(|p| p.kind != PhaseKind::Burst), "{got:#?}");
        // Where there is a burst, the first phase ends where the burst line says.
        let x = series(9, &[(37, 90e3), (600, 20e3)]);
        let b = burst_transition(&x).unwrap();
        let got = with_burst(&x, 400);
        assert_eq!((got[0].kind, got[0].end_s), (PhaseKind::Burst, b.at_s));
    }

    /// Spans of (seconds, level) with 2 % noise, one second straddling each change (the
    /// mean of its two sides), and a single-second stall in every 97.
    fn series(seed: u64, spans: &[(usize, f64)]) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut x = Vec::new();
        for (i, &(secs, lvl)) in spans.iter().enumerate() {
            for s in 0..secs {
                let v = if s == 0 && i > 0 {
                    (spans[i - 1].1 + lvl) / 2.0
                } else {
                    noisy(&mut rng, lvl, 0.02)
                };
                x.push(v);
            }
        }
        for i in (50..x.len()).step_by(97) {
            x[i] = 0.0;
        }
        x
    }

    fn assert_phases(got: &[Phase], want: &[(usize, usize, f64, PhaseKind)]) {
        assert_eq!(got.len(), want.len(), "{got:#?}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.start_s.abs_diff(w.0) <= 1, "{g:?} vs {w:?}");
            assert!(g.end_s.abs_diff(w.1) <= 1, "{g:?} vs {w:?}");
            assert!((g.level_iops - w.2).abs() <= 0.05 * w.2, "{g:?} vs {w:?}");
            assert_eq!(g.kind, w.3, "{g:?}");
        }
    }

    #[test]
    fn burst_intermediate_second_burst_then_steady() {
        use PhaseKind::*;
        let spans = [(40, 150e3), (170, 60e3), (20, 140e3), (370, 45e3)];
        for seed in 0..20 {
            let got = with_burst(&series(seed, &spans), 300);
            assert_phases(
                &got,
                &[
                    (0, 40, 150e3, Burst),
                    (40, 210, 60e3, Intermediate),
                    (210, 230, 140e3, Burst),
                    (230, 600, 45e3, Steady),
                ],
            );
            assert_eq!(
                describe(&got).unwrap().split(", ").collect::<Vec<_>>()[2]
                    .split(' ')
                    .next(),
                Some("second")
            );
        }
    }

    #[test]
    fn fast_phases_of_a_drive_without_a_cache_are_gc_levels_not_bursts() {
        use PhaseKind::*;
        // Burst, GC in the background, a foreground refill (no I/O), every die again.
        let spans = [
            (40, 150e3),
            (150, 60e3),
            (20, 0.0),
            (20, 140e3),
            (370, 45e3),
        ];
        let x = series(1, &spans);
        let got = phases(&x, 300, burst_transition(&x).as_ref(), Cache::NotSeen);
        assert_phases(
            &got,
            &[
                (0, 40, 150e3, Burst),
                (40, 190, 60e3, Intermediate),
                (190, 210, 1.0, Intermediate),
                (210, 230, 140e3, GcLevel),
                (230, 600, 45e3, Steady),
            ],
        );
        let text = describe(&got).unwrap();
        assert!(
            text.contains(", GC level 1") && !text.contains("second"),
            "{text}"
        );
        // With a cache seen before the test, it is the cache again.
        let got = phases(&x, 300, burst_transition(&x).as_ref(), Cache::Seen);
        assert_eq!(got[3].kind, Burst);
    }

    #[test]
    fn a_steady_drive_is_one_phase_and_a_slow_drift_is_no_phase() {
        let flat = series(3, &[(600, 30e3)]);
        let got = with_burst(&flat, 400);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].kind, PhaseKind::Steady);
        assert_eq!(describe(&got), None);
        // Garbage collection settling: +20 % or +50 % over 500 s after a burst.
        for rise in [0.2, 0.5] {
            let mut rng = fastrand::Rng::with_seed(4);
            let mut x = series(4, &[(30, 90e3)]);
            x.extend(
                (0..500).map(|i| noisy(&mut rng, 30e3 * (1.0 + rise * i as f64 / 500.0), 0.1)),
            );
            let got = with_burst(&x, 400);
            assert_eq!(got.len(), 2, "{got:?}");
            assert_eq!((got[0].kind, got[0].end_s), (PhaseKind::Burst, 30));
            // The final level is the scoring window's own average, not the phase's
            // (which holds the slower start of the drift).
            for window in [100, 400] {
                let got = with_burst(&x, window);
                let scored = mean(&x[x.len() - window..]).unwrap();
                assert_eq!(got[1].level_iops, scored, "window {window}");
                assert!(scored > level(&x[30..]), "{scored} vs the phase");
            }
        }
    }

    #[test]
    fn a_drive_cycling_between_levels_has_no_sequence_of_phases() {
        // A throttle: 43 s fast, then 35 s slow and 23 s fast over and over.
        let mut spans = vec![(43, 14e3)];
        for _ in 0..10 {
            spans.extend([(35, 4.6e3), (23, 14e3)]);
        }
        let got = with_burst(&series(6, &spans), 400);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].kind, PhaseKind::Steady);
        // A burst, then GC that stalls for whole seconds now and then: burst, then steady.
        let mut spans = vec![(30, 90e3), (60, 25e3)];
        for _ in 0..6 {
            spans.extend([(40, 0.0), (50, 25e3)]);
        }
        let got = with_burst(&series(7, &spans), 400);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(got[0].kind, PhaseKind::Burst);
        assert!(got[0].end_s.abs_diff(30) <= 1, "{got:#?}");
        assert_eq!(got[1].kind, PhaseKind::Steady);
    }

    #[test]
    fn stalls_of_a_second_or_two_are_no_phase() {
        let mut x = series(5, &[(60, 80e3), (240, 20e3)]);
        for i in [100, 101, 170, 230, 231] {
            x[i] = 0.0;
        }
        let got = with_burst(&x, 400);
        assert_eq!(got.len(), 2, "{got:?}");
        // (The second straddling the change, halfway, is the burst's by its rule.)
        assert!(got[0].end_s.abs_diff(60) <= 1, "{got:?}");
        // The stalls count in the level: what the drive delivered.
        // Seconds 61..299 less their 7 zero seconds (5 set here, 147 and 244).
        let want = (231.0 * 20e3) / 238.0;
        assert!((got[1].level_iops - want).abs() < 0.03 * want, "{got:?}");
        assert_eq!(with_burst(&[], 400), Vec::new());
        assert_eq!(with_burst(&[5.0], 400).len(), 1);
    }
}
