//! Performance levels: the distinct IOPS levels a drive shifts between, found
//! as the significant modes of the per-second IOPS distribution.

use serde::{Deserialize, Serialize};

use super::Transition;
use crate::stats::{clean, min_max};

/// Kernel bandwidth (standard deviation of the Gaussian kernel) in units of
/// ln(IOPS): 0.04 ≈ 4 % of the IOPS value.
pub const LEVEL_BANDWIDTH_LN: f64 = 0.04;
/// Two neighbouring modes stay separate only if the density between them
/// falls to at most this fraction of the lower mode's height.
pub const LEVEL_DIP_RATIO: f64 = 0.5;
/// ... and only if that dip is statistically significant: (peak − valley) ≥
/// z × √(peak + valley), counting kernel-weighted seconds as Poisson counts.
pub const LEVEL_SIGNIFICANCE_Z: f64 = 3.0;
/// A level must hold at least this share of the non-zero seconds.
pub const LEVEL_MIN_SHARE: f64 = 0.03;

/// Density grid points per bandwidth.
const GRID_PER_BANDWIDTH: f64 = 8.0;
/// The kernel is cut off this many bandwidths from its centre.
const KERNEL_REACH: f64 = 4.0;

/// One performance level, see [`performance_levels`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// The mode: IOPS where the level's density peaks.
    pub centre_iops: f64,
    /// Median IOPS of the seconds assigned to the level.
    pub median_iops: f64,
    /// Lowest IOPS of a second assigned to the level.
    pub low_iops: f64,
    /// Highest IOPS of a second assigned to the level.
    pub high_iops: f64,
    /// Number of seconds assigned to the level.
    pub seconds: usize,
    /// seconds ÷ the seconds counted: those with more than `stall_iops` I/Os (the
    /// shares of all levels add up to 1; see [`LevelScope`] for what a run counted).
    pub share: f64,
}

/// Which seconds of a run its performance levels were counted over: what each
/// level's `share` is a share of (see [`levels_after_burst`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelScope {
    /// First second counted: where the initial burst ended (its `at_s`), 0 when the
    /// run had no burst. The burst's seconds are not counted.
    pub from_s: usize,
    /// Seconds from `from_s` on with more than `stall_iops` I/Os: the levels'
    /// `seconds` add up to it.
    pub seconds: usize,
    /// Seconds with at most this many I/Os were not counted: stalls (no I/O) and the
    /// queue that waited through one coming back (the run's queue depth).
    pub stall_iops: f64,
}

impl LevelScope {
    /// The seconds counted, in words, for "% of …": "the 107 s after the initial
    /// burst, from 13 s on, with more than 32 I/Os" (`from_s`: the first whole second
    /// after it, as the per-second series is cut); "the 120 s with I/O" for a run
    /// without a burst, counted with no stall threshold.
    pub fn describe(&self) -> String {
        let after = if self.from_s > 0 {
            format!(" after the initial burst, from {} s on,", self.from_s)
        } else {
            String::new()
        };
        let with = if self.stall_iops > 0.0 {
            format!("with more than {:.0} I/Os", self.stall_iops)
        } else {
            "with I/O".into()
        };
        format!("the {} s{after} {with}", self.seconds)
    }
}

/// The performance levels a drive shifts between once its initial burst is over, and
/// the seconds they were counted over: [`performance_levels`] of the seconds from
/// the burst's end (`burst.at_s`; the whole series without a burst). The burst is a
/// phase (see [`super::phases`]), not a level: a burst of a few per cent of an hour's
/// seconds would otherwise be folded into its neighbouring level's cell or, longer,
/// counted as a level the drive never returns to.
pub fn levels_after_burst(
    iops_per_s: &[f64],
    burst: Option<&Transition>,
    stall_iops: f64,
) -> (Vec<Level>, LevelScope) {
    let from_s = burst.map_or(0, |b| b.at_s).min(iops_per_s.len());
    let after = &iops_per_s[from_s..];
    let stall_iops = stall_iops.max(0.0);
    let scope = LevelScope {
        from_s,
        seconds: after.iter().filter(|&&x| counted(x, stall_iops)).count(),
        stall_iops,
    };
    (performance_levels(after, stall_iops), scope)
}

/// The distinct performance levels of a per-second IOPS series, lowest first.
///
/// Method: zero seconds are left out (they are stalls, see
/// [`super::stalls`]), and so are seconds with at most `stall_iops` I/Os: pass
/// the queue depth, since a second in which only the queue that was waiting
/// through a stall came back (32 I/Os at QD32) is the end of a stall, not a
/// state the drive sustains. The remaining seconds are taken as ln(IOPS), so that
/// levels are compared by ratio, not difference, and a Gaussian kernel density
/// estimate with a fixed bandwidth of [`LEVEL_BANDWIDTH_LN`] (≈ 4 %) is
/// evaluated on a grid of 1/8 bandwidth (samples are linearly binned onto the
/// grid; the kernel is cut at 4 bandwidths). Every local maximum of the density
/// is a candidate level; the valleys (lowest density between neighbouring
/// candidates) split the seconds into cells. Then, one at a time and always
/// the lowest candidate first, a candidate is dropped (its cell joins the
/// neighbour on the side of the shallower valley) while
/// - its cell holds less than [`LEVEL_MIN_SHARE`] (3 %) of the non-zero
///   seconds, or
/// - it is the lower of two neighbours whose valley is not deep enough: the
///   valley must be ≤ [`LEVEL_DIP_RATIO`] (50 %) of the lower peak, and
///   (peak − valley) ≥ [`LEVEL_SIGNIFICANCE_Z`] (3) × √(peak + valley) with
///   densities counted as kernel-weighted seconds.
///
/// Each surviving mode is a level. In practice levels whose IOPS differ by
/// less than about 20 % merge into one, a steady drive with a few per cent of
/// noise is one level, and random bumps in a sparse tail are never levels.
/// Empty when no second has I/O.
pub fn performance_levels(iops_per_s: &[f64], stall_iops: f64) -> Vec<Level> {
    // (ln IOPS, IOPS) of the seconds with more than a stall's I/O, sorted.
    let mut pts: Vec<(f64, f64)> = iops_per_s
        .iter()
        .filter(|&&x| counted(x, stall_iops))
        .map(|&x| (x.ln(), x))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let ys: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let Some((ymin, ymax)) = min_max(&ys) else {
        return Vec::new();
    };

    let h = LEVEL_BANDWIDTH_LN;
    let step = h / GRID_PER_BANDWIDTH;
    let origin = ymin - KERNEL_REACH * h;
    let m = ((ymax + KERNEL_REACH * h - origin) / step).ceil() as usize + 2;
    let density = kde(&ys, origin, step, h, m);

    let mut peaks: Vec<usize> = (1..m - 1)
        .filter(|&j| density[j] > density[j - 1] && density[j] >= density[j + 1])
        .collect();
    let n = ys.len() as f64;
    loop {
        let cells = cells(&peaks, &density, &ys, origin, step);
        // Candidates that break a rule; the lowest of them is dropped.
        let mut weak: Vec<usize> = (0..peaks.len())
            .filter(|&i| ((cells[i].end - cells[i].start) as f64) < LEVEL_MIN_SHARE * n)
            .collect();
        for i in 0..peaks.len().saturating_sub(1) {
            let (a, b) = (density[peaks[i]], density[peaks[i + 1]]);
            let low = a.min(b);
            let valley = density[cells[i].valley.unwrap_or(peaks[i])];
            let separated = valley <= LEVEL_DIP_RATIO * low
                && low - valley >= LEVEL_SIGNIFICANCE_Z * (low + valley).sqrt();
            if !separated {
                weak.push(if a < b { i } else { i + 1 });
            }
        }
        let drop = weak.into_iter().min_by(|&i, &j| {
            density[peaks[i]]
                .total_cmp(&density[peaks[j]])
                .then(i.cmp(&j))
        });
        match drop {
            Some(i) if peaks.len() > 1 => {
                peaks.remove(i);
            }
            _ => {
                return peaks
                    .iter()
                    .zip(&cells)
                    .map(|(&p, c)| level(p, c, &density, &pts, origin, step))
                    .collect();
            }
        }
    }
}

/// Whether a second with `x` I/Os counts towards the levels: more than a stall's
/// (broken samples read as 0).
fn counted(x: f64, stall_iops: f64) -> bool {
    clean(x) > stall_iops.max(0.0)
}

/// Gaussian KDE (unnormalised: the kernel is 1 at its centre, so the density
/// reads as kernel-weighted seconds) of `ys` on the grid origin + j × step,
/// j < m, with linear binning.
fn kde(ys: &[f64], origin: f64, step: f64, h: f64, m: usize) -> Vec<f64> {
    let mut counts = vec![0.0; m];
    for &y in ys {
        let pos = (y - origin) / step;
        let j = (pos.floor() as usize).min(m - 2);
        let frac = pos - j as f64;
        counts[j] += 1.0 - frac;
        counts[j + 1] += frac;
    }
    let reach = (KERNEL_REACH * h / step).ceil() as isize;
    let kernel: Vec<f64> = (-reach..=reach)
        .map(|k| (-0.5 * (k as f64 * step / h).powi(2)).exp())
        .collect();
    (0..m as isize)
        .map(|j| {
            (-reach..=reach)
                .filter_map(|k| {
                    let idx = j + k;
                    (idx >= 0 && (idx as usize) < m)
                        .then(|| counts[idx as usize] * kernel[(k + reach) as usize])
                })
                .sum()
        })
        .collect()
}

/// The seconds (a range of the sorted samples) belonging to one candidate.
struct Cell {
    start: usize,
    end: usize,
    /// Grid index of the valley to the next candidate (None for the last).
    valley: Option<usize>,
}

fn cells(peaks: &[usize], density: &[f64], ys: &[f64], origin: f64, step: f64) -> Vec<Cell> {
    let mut out = Vec::with_capacity(peaks.len());
    let mut start = 0;
    for (i, &p) in peaks.iter().enumerate() {
        let (end, valley) = match peaks.get(i + 1) {
            Some(&q) => {
                let v = (p..=q)
                    .min_by(|&a, &b| density[a].total_cmp(&density[b]))
                    .unwrap_or(p);
                let boundary = origin + v as f64 * step;
                (ys.partition_point(|&y| y <= boundary), Some(v))
            }
            None => (ys.len(), None),
        };
        out.push(Cell { start, end, valley });
        start = end;
    }
    out
}

fn level(
    peak: usize,
    cell: &Cell,
    density: &[f64],
    pts: &[(f64, f64)],
    origin: f64,
    step: f64,
) -> Level {
    // Parabolic refinement of the mode between grid points.
    let (a, b, c) = (density[peak - 1], density[peak], density[peak + 1]);
    let denom = a - 2.0 * b + c;
    let offset = if denom < 0.0 {
        (0.5 * (a - c) / denom).clamp(-0.5, 0.5)
    } else {
        0.0
    };
    let members: Vec<f64> = pts[cell.start..cell.end].iter().map(|p| p.1).collect();
    let k = members.len();
    let median = if k % 2 == 1 {
        members[k / 2]
    } else {
        0.5 * (members[k / 2 - 1] + members[k / 2])
    };
    Level {
        centre_iops: (origin + (peak as f64 + offset) * step).exp(),
        median_iops: median,
        low_iops: members[0],
        high_iops: members[k - 1],
        seconds: k,
        share: k as f64 / pts.len() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_series::noisy;
    use super::*;

    fn steady(seed: u64, n: usize, iops: f64, rel_sd: f64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n).map(|_| noisy(&mut rng, iops, rel_sd)).collect()
    }

    /// A drive hopping between `levels` (IOPS, weight) in blocks of 5–60 s.
    fn hopping(seed: u64, n: usize, levels: &[(f64, f64)], rel_sd: f64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let total: f64 = levels.iter().map(|l| l.1).sum();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let mut r = rng.f64() * total;
            let mut iops = levels[0].0;
            for &(l, w) in levels {
                iops = l;
                if r < w {
                    break;
                }
                r -= w;
            }
            for _ in 0..rng.usize(5..=60) {
                out.push(noisy(&mut rng, iops, rel_sd));
            }
        }
        out.truncate(n);
        out
    }

    fn assert_close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want,
            "got {got}, want {want} ± {}",
            rel * want
        );
    }

    #[test]
    fn steady_drive_with_3_percent_noise_is_one_level() {
        for seed in 0..20 {
            for n in [400, 3600] {
                let s = steady(seed, n, 30_000.0, 0.03);
                let levels = performance_levels(&s, 0.0);
                assert_eq!(levels.len(), 1, "seed {seed} n {n}: {levels:?}");
                assert_close(levels[0].centre_iops, 30_000.0, 0.02);
                assert_eq!(levels[0].seconds, n);
                assert_eq!(levels[0].share, 1.0);
            }
            // Uniform ±3 % noise as well.
            let mut rng = fastrand::Rng::with_seed(seed);
            let s: Vec<f64> = (0..400)
                .map(|_| 30_000.0 * (1.0 + 0.06 * (rng.f64() - 0.5)))
                .collect();
            assert_eq!(performance_levels(&s, 0.0).len(), 1, "uniform seed {seed}");
        }
    }

    #[test]
    fn wide_noise_without_levels_is_still_one_level() {
        for seed in 0..20 {
            for n in [400, 3600] {
                let s = steady(seed, n, 20_000.0, 0.15);
                let levels = performance_levels(&s, 0.0);
                assert_eq!(levels.len(), 1, "seed {seed} n {n}: {levels:?}");
            }
        }
    }

    #[test]
    fn finds_four_levels() {
        let truth = [
            (5_000.0, 0.4),
            (12_000.0, 0.2),
            (20_000.0, 0.2),
            (31_000.0, 0.2),
        ];
        for seed in 0..10 {
            let s = hopping(seed, 3600, &truth, 0.04);
            let levels = performance_levels(&s, 0.0);
            assert_eq!(levels.len(), 4, "seed {seed}: {levels:?}");
            for (l, &(iops, _)) in levels.iter().zip(&truth) {
                assert_close(l.centre_iops, iops, 0.03);
                assert_close(l.median_iops, iops, 0.03);
                assert!(l.low_iops < iops && l.high_iops > iops);
            }
            let total: usize = levels.iter().map(|l| l.seconds).sum();
            assert_eq!(total, 3600);
            // Shares follow the seconds actually spent at each level.
            for (l, &(iops, _)) in levels.iter().zip(&truth) {
                let spent = s.iter().filter(|&&x| (x / iops - 1.0).abs() < 0.25).count();
                assert!(
                    (l.seconds as f64 - spent as f64).abs() <= 5.0,
                    "{l:?} {spent}"
                );
            }
        }
    }

    #[test]
    fn four_levels_with_stalls_in_a_400_second_window() {
        let truth = [
            (5_000.0, 0.4),
            (12_000.0, 0.2),
            (20_000.0, 0.2),
            (31_000.0, 0.2),
        ];
        let mut found = 0;
        for seed in 0..10 {
            // Fixed schedule so every level really appears in the window.
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut s = Vec::new();
            for _ in 0..4 {
                for &(iops, w) in &truth {
                    for _ in 0..(w * 100.0) as usize {
                        s.push(noisy(&mut rng, iops, 0.04));
                    }
                }
            }
            // Stutter: single zero seconds and a 3 s stall.
            for i in (0..s.len()).step_by(37) {
                s[i] = 0.0;
            }
            s[200..203].fill(0.0);
            let zeros = s.iter().filter(|&&x| x == 0.0).count();
            let levels = performance_levels(&s, 0.0);
            if levels.len() == 4 {
                found += 1;
            }
            let total: usize = levels.iter().map(|l| l.seconds).sum();
            assert_eq!(total, s.len() - zeros);
        }
        assert_eq!(found, 10);
    }

    #[test]
    fn stalls_are_not_a_level() {
        let mut s = hopping(7, 2000, &[(8_000.0, 0.5), (24_000.0, 0.5)], 0.05);
        for i in (0..2000).step_by(13) {
            s[i] = 0.0;
        }
        let zeros = s.iter().filter(|&&x| x == 0.0).count();
        let levels = performance_levels(&s, 0.0);
        assert_eq!(levels.len(), 2, "{levels:?}");
        assert_close(levels[0].centre_iops, 8_000.0, 0.03);
        assert_close(levels[1].centre_iops, 24_000.0, 0.03);
        assert!(levels[0].low_iops > 0.0);
        let total: usize = levels.iter().map(|l| l.seconds).sum();
        assert_eq!(total, 2000 - zeros);
        let share: f64 = levels.iter().map(|l| l.share).sum();
        assert!((share - 1.0).abs() < 1e-12);
    }

    #[test]
    fn rare_level_needs_minimum_share() {
        let mut rng = fastrand::Rng::with_seed(3);
        // 5 % of seconds at 40k: a level. 1 % at 3k: below the 3 % minimum.
        let mut s: Vec<f64> = (0..1000)
            .map(|i| {
                let iops = if i % 20 == 0 { 40_000.0 } else { 10_000.0 };
                noisy(&mut rng, iops, 0.03)
            })
            .collect();
        assert_eq!(performance_levels(&s, 0.0).len(), 2);
        for x in s.iter_mut().skip(1).step_by(100) {
            *x = noisy(&mut rng, 3_000.0, 0.03);
        }
        let levels = performance_levels(&s, 0.0);
        assert_eq!(levels.len(), 2, "{levels:?}");
        // The rare seconds join the nearest level: its low bound shows them.
        assert!(levels[0].low_iops < 4_000.0);
        assert_eq!(levels[0].seconds + levels[1].seconds, 1000);
    }

    #[test]
    fn close_levels_merge_far_levels_split() {
        let s = hopping(11, 3600, &[(10_000.0, 1.0), (11_000.0, 1.0)], 0.03);
        assert_eq!(performance_levels(&s, 0.0).len(), 1);
        let s = hopping(11, 3600, &[(10_000.0, 1.0), (13_000.0, 1.0)], 0.03);
        assert_eq!(performance_levels(&s, 0.0).len(), 2);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(performance_levels(&[], 0.0).is_empty());
        assert!(performance_levels(&[0.0, 0.0, f64::NAN], 0.0).is_empty());
        let levels = performance_levels(&[500.0; 10], 0.0);
        assert_eq!(levels.len(), 1);
        assert_close(levels[0].centre_iops, 500.0, 1e-9);
        assert_eq!((levels[0].low_iops, levels[0].high_iops), (500.0, 500.0));
        let levels = performance_levels(&[7.0], 0.0);
        assert_eq!(levels.len(), 1);
        assert_eq!(levels[0].seconds, 1);
    }

    #[test]
    fn a_queue_coming_back_after_a_stall_is_not_a_level() {
        // A drive at 8 000 IOPS that stalls every few seconds; the second after each
        // stall completes only the QD32 queue that waited through it.
        let mut s = Vec::new();
        for i in 0..600 {
            s.push(match i % 5 {
                3 => 0.0,
                4 => 32.0,
                _ => 8_000.0 + (i % 7) as f64 * 50.0,
            });
        }
        assert_eq!(performance_levels(&s, 0.0).len(), 2, "counted as a level");
        let levels = performance_levels(&s, 32.0);
        assert_eq!(levels.len(), 1, "{levels:?}");
        assert!(levels[0].median_iops > 7_900.0);
    }

    #[test]
    fn levels_after_a_cut_off_burst_say_which_seconds_they_share() {
        // A fresh drive: 60 s of burst at 40 000 IOPS, then 15 000 for 540 s with a
        // stall every 50 s and its queue of 32 coming back the second after.
        let mut rng = fastrand::Rng::with_seed(7);
        let s: Vec<f64> = (0..600)
            .map(|i| match i {
                _ if i < 60 => noisy(&mut rng, 40_000.0, 0.03),
                _ if i % 50 == 10 => 0.0,
                _ if i % 50 == 11 => 32.0,
                _ => noisy(&mut rng, 15_000.0, 0.03),
            })
            .collect();
        let burst = super::super::burst_transition(&s).expect("a burst");
        assert_eq!(burst.at_s, 60);
        // Over every second with I/O the burst is a level of its own (10 %) ...
        let whole = performance_levels(&s, 32.0);
        assert_eq!(whole.len(), 2, "{whole:?}");
        assert_close(whole[1].centre_iops, 40_000.0, 0.03);
        // ... after it, one level holding all of the seconds counted: the burst's
        // 60 s, the 11 stalls and the 11 queues after them are not among them.
        let (levels, scope) = levels_after_burst(&s, Some(&burst), 32.0);
        assert_eq!(levels.len(), 1, "{levels:?}");
        assert_close(levels[0].centre_iops, 15_000.0, 0.03);
        assert_eq!(levels[0].share, 1.0);
        let counted = 600 - 60 - 2 * 11;
        assert_eq!(
            scope,
            LevelScope {
                from_s: 60,
                seconds: counted,
                stall_iops: 32.0
            }
        );
        assert_eq!(levels[0].seconds, scope.seconds);
        assert_eq!(
            scope.describe(),
            "the 518 s after the initial burst, from 60 s on, with more than 32 I/Os"
        );
    }

    #[test]
    fn levels_without_a_burst_count_the_whole_series() {
        let s = [0.0, 500.0, 600.0, 550.0, 4.0, 520.0];
        let (levels, scope) = levels_after_burst(&s, None, 0.0);
        assert_eq!((scope.from_s, scope.seconds), (0, 5));
        assert_eq!(levels.iter().map(|l| l.seconds).sum::<usize>(), 5);
        assert_eq!(scope.describe(), "the 5 s with I/O");
        let (_, scope) = levels_after_burst(&s, None, 4.0);
        assert_eq!(scope.describe(), "the 4 s with more than 4 I/Os");
        // A burst said to end past the series counts nothing, and says so.
        let late = Transition {
            at_s: 99,
            length_s: Some(99.0),
            burst_iops: 1e6,
            steady_iops: 1.0,
        };
        let (levels, scope) = levels_after_burst(&s, Some(&late), 0.0);
        assert!(levels.is_empty());
        assert_eq!((scope.from_s, scope.seconds), (6, 0));
    }
}
