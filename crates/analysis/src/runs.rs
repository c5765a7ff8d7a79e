//! Runs of consecutive samples that satisfy a condition (stalls, drop
//! episodes).

/// A run of consecutive samples: `len` samples starting at index `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Index of the first sample of the run.
    pub start: usize,
    /// Number of samples in the run (at least 1).
    pub len: usize,
}

/// Maximal runs of consecutive samples for which `pred` holds, in order.
pub fn runs_where(xs: &[f64], pred: impl Fn(f64) -> bool) -> Vec<Run> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &x) in xs.iter().enumerate() {
        match (pred(x), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Run {
                    start: s,
                    len: i - s,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Run {
            start: s,
            len: xs.len() - s,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_runs_including_at_both_ends() {
        let xs = [0.0, 0.0, 5.0, 0.0, 5.0, 5.0, 0.0, 0.0, 0.0];
        let runs = runs_where(&xs, |x| x == 0.0);
        assert_eq!(
            runs,
            vec![
                Run { start: 0, len: 2 },
                Run { start: 3, len: 1 },
                Run { start: 6, len: 3 },
            ]
        );
        assert!(runs_where(&[], |x| x == 0.0).is_empty());
        assert!(runs_where(&[1.0, 2.0], |x| x == 0.0).is_empty());
    }
}
