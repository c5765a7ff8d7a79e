//! Reading saved steps back for analysis: per-interval values, totals, parameters.

use drivelab_engine::result::Totals;
use drivelab_engine::series::IntervalRecord;

use crate::bundle::{StepRecord, StepStatus};

/// The step's totals when it completed.
pub fn totals(rec: &StepRecord) -> Option<&Totals> {
    match (&rec.run, rec.status) {
        (Some(r), StepStatus::Complete) => Some(&r.totals),
        _ => None,
    }
}

/// One value per measured interval (ramp intervals left out).
pub fn per_interval(rec: &StepRecord, f: impl Fn(&IntervalRecord) -> f64) -> Vec<f64> {
    rec.run.as_ref().map_or_else(Vec::new, |r| {
        r.series.records.iter().filter(|x| !x.ramp).map(f).collect()
    })
}

/// Completed I/Os per second, each interval.
pub fn iops_series(rec: &StepRecord) -> Vec<f64> {
    per_interval(rec, |x| x.all.ops_per_s)
}

/// A string parameter of the step.
pub fn param_str<'a>(rec: &'a StepRecord, key: &str) -> Option<&'a str> {
    rec.params.get(key).and_then(|v| v.as_str())
}

/// A numeric parameter of the step.
pub fn param_u64(rec: &StepRecord, key: &str) -> Option<u64> {
    rec.params.get(key).and_then(|v| v.as_u64())
}

/// Microseconds from nanoseconds.
pub fn us(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / 1e3)
}

/// Mean of the values, None when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Format an optional number with `prec` decimals, `-` when missing.
pub fn fmt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.prec$}"))
}

/// The bundle-level caveat for steps whose write content generation held the target back
/// (`totals.data.limited_by_generator`): which steps, and what to do about it.
pub fn generator_note(steps: &[StepRecord]) -> Option<String> {
    let limited: Vec<&str> = steps
        .iter()
        .filter(|s| {
            s.run
                .as_ref()
                .is_some_and(|r| r.totals.data.limited_by_generator)
        })
        .map(|s| s.name.as_str())
        .collect();
    (!limited.is_empty()).then(|| {
        format!(
            "Preparing write content held the target back in {} step(s) ({}): their figures are partly the data generator's (each step's own note says how much). To measure the target alone, rerun with content that is cheaper to prepare, --data repeat (or zero; a drive that compresses then looks faster), where the suite takes --data.",
            limited.len(),
            limited.join("; ")
        )
    })
}
