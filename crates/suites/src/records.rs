//! Reading saved steps back for analysis: per-interval values, totals, parameters.

use drivelab_analysis::telemetry::{self, Interval, StepTelemetry};
use drivelab_engine::result::{Measured, Totals};
use drivelab_engine::series::IntervalRecord;

use crate::bundle::{StepRecord, StepStatus};
use crate::suite::Report;

/// A run's interval series as the telemetry analysis reads it.
pub fn telemetry_intervals(m: &Measured) -> Vec<Interval> {
    let mut names = telemetry::Names::default();
    m.series
        .records
        .iter()
        .map(|x| Interval {
            duration_s: x.duration_ns as f64 / 1e9,
            ramp: x.ramp,
            ops: x.all.ops,
            bytes: x.all.bytes,
            readings: x
                .sensors
                .iter()
                .map(|r| names.reading(&r.name, &r.unit, &r.source, r.value))
                .collect(),
        })
        .collect()
}

/// A run's telemetry: temperature, throttling, power, energy, efficiency. Where power
/// was read in every measured interval, the efficiency is the run's own throughput (its
/// totals, the headline numbers) per watt; else that of the intervals with a reading.
pub fn telemetry_of(m: &Measured) -> StepTelemetry {
    let mut t = telemetry::step_telemetry(&telemetry_intervals(m));
    if let (Some(1.0), Some(w)) = (t.power_coverage_ratio, t.power_mean_w.filter(|&w| w > 0.0)) {
        let all = &m.totals.all;
        t.kiops_per_w = Some(all.ops_per_s / 1e3 / w);
        t.mbps_per_w = Some(all.mbps / w);
    }
    t
}

/// A step's telemetry: as saved, else from its series (bundles made before it was saved).
pub fn step_telemetry(rec: &StepRecord) -> Option<StepTelemetry> {
    rec.telemetry
        .clone()
        .or_else(|| rec.run.as_ref().map(telemetry_of))
}

/// The per-step telemetry in the summary (`analysis.telemetry`, steps that ran and had a
/// reading), with the table's lines for power and temperature.
pub fn add_telemetry(report: &mut Report, steps: &[StepRecord]) {
    let rows: Vec<(&StepRecord, StepTelemetry)> = steps
        .iter()
        .filter_map(|s| Some((s, step_telemetry(s)?)))
        .filter(|(_, t)| *t != StepTelemetry::default())
        .collect();
    if rows.is_empty() {
        return;
    }
    report.table += &if rows.len() <= MAX_TELEMETRY_ROWS {
        telemetry_rows(&rows)
    } else {
        telemetry_overall(&rows)
    };
    let list: Vec<serde_json::Value> = rows
        .iter()
        .map(|(s, t)| {
            let mut v = serde_json::to_value(t).unwrap_or_default();
            if let serde_json::Value::Object(m) = &mut v {
                m.insert("step".into(), s.id.clone().into());
            }
            v
        })
        .collect();
    if let serde_json::Value::Object(m) = &mut report.summary.analysis {
        m.insert("telemetry".into(), list.into());
    } else if report.summary.analysis.is_null() {
        report.summary.analysis = serde_json::json!({ "telemetry": list });
    }
}

/// Steps printed one row each; more are summed up in one line (all are in run.json).
const MAX_TELEMETRY_ROWS: usize = 24;

fn telemetry_rows(rows: &[(&StepRecord, StepTelemetry)]) -> String {
    let line = |cells: [&str; 9]| {
        format!(
            "{:<40} {:>8} {:>8} {:>8} {:>11} {:>8} {:>11} {:>8} {:>8}\n",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8]
        )
    };
    let mut out = line([
        "Telemetry",
        "°C start",
        "°C end",
        "°C max",
        "throttled s",
        "W mean",
        "W min–max",
        "kIOPS/W",
        "MB/s/W",
    ]);
    for (s, t) in rows {
        // Indented under the heading, apart from the suite's own rows above.
        let name: String = format!("  {}", s.name.chars().take(38).collect::<String>());
        let range = match (t.power_min_w, t.power_max_w) {
            (Some(a), Some(b)) => format!("{a:.1}–{b:.1}"),
            _ => "-".into(),
        };
        out += &line([
            &name,
            &fmt(t.temperature_start_celsius, 1),
            &fmt(t.temperature_end_celsius, 1),
            &fmt(t.temperature_max_celsius, 1),
            &fmt(t.throttled_s, 0),
            &fmt(t.power_mean_w, 2),
            &range,
            &fmt(t.kiops_per_w, 2),
            &fmt(t.mbps_per_w, 1),
        ]);
    }
    out
}

/// Many steps in one line: the temperature range, the power range and the energy-weighted
/// mean, the seconds throttled in all.
fn telemetry_overall(rows: &[(&StepRecord, StepTelemetry)]) -> String {
    let pick = |f: fn(&StepTelemetry) -> Option<f64>| -> Vec<f64> {
        rows.iter().filter_map(|(_, t)| f(t)).collect()
    };
    let lo = |v: Vec<f64>| v.into_iter().reduce(f64::min);
    let hi = |v: Vec<f64>| v.into_iter().reduce(f64::max);
    let throttled = pick(|t| t.throttled_s);
    format!(
        "Telemetry over {} steps (each in run.json): {}–{} °C, power {}–{} W, throttled {} s in all\n",
        rows.len(),
        fmt(lo(pick(|t| t.temperature_start_celsius)), 1),
        fmt(hi(pick(|t| t.temperature_max_celsius)), 1),
        fmt(lo(pick(|t| t.power_min_w)), 2),
        fmt(hi(pick(|t| t.power_max_w)), 2),
        fmt((!throttled.is_empty()).then(|| throttled.iter().sum()), 0)
    )
}

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
        workload_records(r)
            .filter(|x| !x.ramp)
            .map(|x| f(&x))
            .collect()
    })
}

/// A step's intervals of its workload: a verifying step's read-back pass (`--verify`),
/// whose intervals follow in the series, left out.
pub fn workload_records(
    r: &drivelab_engine::result::Measured,
) -> impl Iterator<Item = IntervalRecord> + '_ {
    let pass_first = r.verify.as_ref().and_then(|v| v.pass_first_index);
    r.series
        .records
        .iter()
        .take_while(move |x| pass_first.is_none_or(|i| x.index < i))
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

/// Reads a number saved from an `f64` field: `null` (what JSON makes of a value that
/// was not finite) reads back as NaN, so one such value does not make a whole saved
/// analysis unreadable.
pub fn f64_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// [`f64_or_nan`] for each number of a list.
pub fn vec_f64_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    use serde::Deserialize;
    Ok(Vec::<Option<f64>>::deserialize(d)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
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
