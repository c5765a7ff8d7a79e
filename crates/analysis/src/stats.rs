//! Small shared statistics: mean, population standard deviation, percentiles,
//! medians and least-squares lines.
//!
//! Every function returns `None` instead of NaN when the value does not exist
//! (empty input, a line through fewer than two distinct x values).

use serde::{Deserialize, Serialize};

/// Reads one measured rate: NaN, infinite and negative samples become 0.
///
/// The analyses call this on every input sample, so a broken sample counts as
/// "no progress measured in that second" and can never turn into NaN output.
pub fn clean(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

/// [`clean`] applied to every sample of a series.
pub fn clean_series(xs: &[f64]) -> Vec<f64> {
    xs.iter().copied().map(clean).collect()
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Population standard deviation (divides by n, not n − 1); `None` for an
/// empty slice.
///
/// A slice whose values are all equal gives exactly 0 (the rounding of the
/// mean is not allowed to leave a tiny non-zero spread).
pub fn stddev_pop(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    let (lo, hi) = min_max(xs)?;
    if lo == hi {
        return Some(0.0);
    }
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64;
    Some(var.sqrt())
}

/// Standard error of the mean of a series of samples taken one after another, by
/// batch means: the series is cut into `batches` batches of equal length (samples
/// left over at the end are dropped; at least 2 batches, of at least one sample), and
/// the error is the sample standard deviation of the batch means ÷ √batches. Batches
/// keep slow swings (a GC cycle over several seconds) in the error, which the spread
/// of single samples would understate. `None` with fewer than 2 samples.
pub fn batch_stderr(xs: &[f64], batches: usize) -> Option<f64> {
    let b = batches.max(2).min(xs.len());
    if b < 2 {
        return None;
    }
    let len = xs.len() / b;
    let means: Vec<f64> = xs
        .chunks_exact(len)
        .take(b)
        .map(|c| c.iter().sum::<f64>() / len as f64)
        .collect();
    let sd = stddev_pop(&means)? * (b as f64 / (b as f64 - 1.0)).sqrt();
    Some(sd / (b as f64).sqrt())
}

/// Smallest and largest value; `None` for an empty slice.
pub fn min_max(xs: &[f64]) -> Option<(f64, f64)> {
    let first = *xs.first()?;
    Some(
        xs.iter()
            .fold((first, first), |(lo, hi), &x| (lo.min(x), hi.max(x))),
    )
}

/// Percentile `p` (0–100) of a slice, by linear interpolation between the two
/// nearest ranks: sorted values v₀ ≤ … ≤ vₙ₋₁, rank r = p/100 × (n − 1),
/// result = v⌊r⌋ + (r − ⌊r⌋) × (v⌈r⌉ − v⌊r⌋). This is the "inclusive" rule of
/// spreadsheet PERCENTILE.INC and numpy's default. `p` is clamped to 0–100.
/// `None` for an empty slice or a NaN `p`.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    percentile_sorted(&v, p)
}

/// [`percentile`] of a slice that is already sorted ascending.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || p.is_nan() {
        return None;
    }
    let r = p.clamp(0.0, 100.0) / 100.0 * (sorted.len() - 1) as f64;
    let lo = r.floor() as usize;
    let hi = r.ceil() as usize;
    let frac = r - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}

/// Median: the 50th [`percentile`] (mean of the two middle values for an even
/// count). `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    percentile(xs, 50.0)
}

/// A least-squares straight line y = slope × x + intercept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    /// Change of y per unit of x.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
}

impl LineFit {
    /// The line's value at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.slope * x + self.intercept
    }
}

/// Ordinary least-squares line through the points (xsᵢ, ysᵢ) (pairs past
/// the shorter slice are ignored). `None` with fewer than two points or when
/// all x are equal.
pub fn linear_fit(xs: &[f64], ys: &[f64]) -> Option<LineFit> {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return None;
    }
    let (xs, ys) = (&xs[..n], &ys[..n]);
    let mx = mean(xs)?;
    let my = mean(ys)?;
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = sxy / sxx;
    Some(LineFit {
        slope,
        intercept: my - slope * mx,
    })
}

/// [`linear_fit`] with x = 0, 1, 2, … (the position in the slice).
pub fn linear_fit_index(ys: &[f64]) -> Option<LineFit> {
    let xs: Vec<f64> = (0..ys.len()).map(|i| i as f64).collect();
    linear_fit(&xs, ys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_stderr_by_hand() {
        // Batches [1, 3] and [5, 7]: means 2 and 6, sample sd 2.83, ÷ √2 = 2.
        assert_eq!(batch_stderr(&[1.0, 3.0, 5.0, 7.0], 2), Some(2.0));
        // A leftover sample is dropped; equal batches have no error.
        assert_eq!(batch_stderr(&[4.0, 4.0, 4.0, 4.0, 100.0], 2), Some(0.0));
        // Fewer samples than batches: one sample a batch.
        assert_eq!(batch_stderr(&[1.0, 3.0], 5), Some(1.0));
        assert_eq!(batch_stderr(&[1.0], 5), None);
        assert_eq!(batch_stderr(&[], 5), None);
    }

    #[test]
    fn mean_and_population_stddev() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        assert_eq!(stddev_pop(&xs), Some(2.0));
        assert_eq!(mean(&[]), None);
        assert_eq!(stddev_pop(&[]), None);
    }

    #[test]
    fn constant_series_has_exactly_zero_stddev() {
        assert_eq!(stddev_pop(&[0.1, 0.1, 0.1]), Some(0.0));
    }

    #[test]
    fn percentile_interpolates_linearly() {
        let xs = [40.0, 10.0, 30.0, 20.0]; // sorted 10 20 30 40
        assert_eq!(percentile(&xs, 0.0), Some(10.0));
        assert_eq!(percentile(&xs, 100.0), Some(40.0));
        // rank 0.5 × 3 = 1.5 → 20 + 0.5 × 10
        assert_eq!(percentile(&xs, 50.0), Some(25.0));
        // rank 0.1 × 3 = 0.3 → 10 + 0.3 × 10
        assert!((percentile(&xs, 10.0).unwrap() - 13.0).abs() < 1e-12);
        assert_eq!(percentile(&xs, 250.0), Some(40.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&xs, f64::NAN), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn least_squares_line() {
        let fit = linear_fit_index(&[1.0, 3.0, 5.0, 7.0]).unwrap();
        assert!((fit.slope - 2.0).abs() < 1e-12);
        assert!((fit.intercept - 1.0).abs() < 1e-12);
        // y = [1, 2, 2, 3, 7] at x 0..4: x̄ = 2, ȳ = 3, Sxy = 13, Sxx = 10
        let fit = linear_fit_index(&[1.0, 2.0, 2.0, 3.0, 7.0]).unwrap();
        assert!((fit.slope - 1.3).abs() < 1e-12);
        assert!((fit.intercept - 0.4).abs() < 1e-12);
        assert!((fit.at(4.0) - 5.6).abs() < 1e-12);
        assert_eq!(linear_fit_index(&[5.0]), None);
        assert_eq!(linear_fit(&[1.0, 1.0], &[2.0, 3.0]), None);
    }

    #[test]
    fn clean_maps_broken_samples_to_zero() {
        assert_eq!(
            clean_series(&[f64::NAN, f64::INFINITY, -3.0, 7.5]),
            vec![0.0, 0.0, 0.0, 7.5]
        );
    }
}
