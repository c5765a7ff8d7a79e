//! Drive telemetry beside any suite's charts: temperature and power over the suite's
//! time (each step's measured seconds, and the idle between tests where the suite idles),
//! each workload marked where it starts, the seconds the drive throttled shaded, the
//! lowest and highest power ringed; and, for the peak suite, efficiency bars per drive at
//! each workload's headline queue depth.

use drivelab_analysis::telemetry::{self as tele, Interval, Reading};
use drivelab_engine::model::SensorReading;
use drivelab_suites::bundle::StepRecord;
use drivelab_suites::records::telemetry_intervals;

use super::Entry;
use crate::model::{Axis, Chart, Dash, Mark, Series};

/// Workloads are labelled up to this many times as many steps (more would pile up).
const MAX_STEP_LABELS: usize = 12;
/// Steps are marked at all up to this many.
const MAX_STEP_MARKS: usize = 60;

/// One drive's telemetry on the suite's time axis (seconds).
#[derive(Default)]
struct Timeline {
    power: Vec<(f64, f64)>,
    temperature: Vec<(f64, f64)>,
    throttled: Vec<(f64, f64)>,
    starts: Vec<(f64, String)>,
    end: f64,
}

/// The idle readings as intervals of a second each (the reading at the end of each).
fn idle_intervals(readings: &[SensorReading]) -> Vec<(u64, Interval)> {
    let mut out: Vec<(u64, Interval)> = Vec::new();
    for r in readings {
        let reading = Reading::new(&r.name, &r.unit, &r.source, r.value);
        match out.iter_mut().find(|(at, _)| *at == r.at_ns) {
            Some((_, i)) => i.readings.push(reading),
            None => out.push((
                r.at_ns,
                Interval {
                    duration_s: 1.0,
                    readings: vec![reading],
                    ..Interval::default()
                },
            )),
        }
    }
    out
}

/// Consecutive flagged spans merged into ranges.
fn ranges(spans: &[(f64, f64, bool)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &(a, b, on) in spans {
        if !on {
            continue;
        }
        match out.last_mut() {
            Some(last) if (last.1 - a).abs() < 1e-9 => last.1 = b,
            _ => out.push((a, b)),
        }
    }
    out
}

fn push_step(tl: &mut Timeline, st: &StepRecord, offset: &mut f64) {
    let idle = idle_intervals(&st.idle_sensors);
    if !idle.is_empty() {
        let ivs: Vec<Interval> = idle.iter().map(|(_, i)| i.clone()).collect();
        let at = |k: usize| *offset + idle[k].0 as f64 / 1e9;
        for (k, p) in tele::power_series(&ivs).into_iter().enumerate() {
            tl.power.extend(p.map(|p| (at(k) - 0.5, p)));
        }
        for (k, t) in tele::temperature_series(&ivs).into_iter().enumerate() {
            tl.temperature.extend(t.map(|t| (at(k), t)));
        }
    }
    *offset += st.idle_before_ns as f64 / 1e9;
    let Some(run) = &st.run else { return };
    tl.starts.push((*offset, st.name.clone()));
    let ivs = telemetry_intervals(run);
    let starts: Vec<f64> = run
        .series
        .records
        .iter()
        .map(|r| *offset + r.start_ns as f64 / 1e9)
        .collect();
    let mid = |k: usize| starts[k] + ivs[k].duration_s / 2.0;
    for (k, p) in tele::power_series(&ivs).into_iter().enumerate() {
        tl.power.extend(p.map(|p| (mid(k), p)));
    }
    for (k, t) in tele::temperature_series(&ivs).into_iter().enumerate() {
        tl.temperature.extend(t.map(|t| (starts[k], t)));
    }
    if let Some((flags, _)) = tele::throttled_intervals(&ivs) {
        let spans: Vec<(f64, f64, bool)> = flags
            .iter()
            .enumerate()
            .map(|(k, &f)| (starts[k], starts[k] + ivs[k].duration_s, f))
            .collect();
        tl.throttled.extend(ranges(&spans));
    }
    *offset += run
        .series
        .records
        .iter()
        .map(|r| r.duration_ns)
        .sum::<u64>() as f64
        / 1e9;
}

fn timeline(e: &Entry) -> Timeline {
    let mut tl = Timeline::default();
    let mut offset = 0.0;
    for st in &e.doc.steps {
        push_step(&mut tl, st, &mut offset);
    }
    tl.end = offset;
    tl
}

/// A line where each workload starts: repeated runs of one test ("…, run 2") are one
/// workload; labels only where they have room (a sixth of the time axis apart).
fn workload_marks(starts: &[(f64, String)], end: f64, group: Option<String>) -> Vec<Mark> {
    let mut marks = Vec::new();
    let mut prev: Option<&str> = None;
    let mut last_label = f64::NEG_INFINITY;
    let mut lines = 0;
    for (x, name) in starts {
        let workload = name.split(", run ").next().unwrap_or(name);
        if prev == Some(workload) {
            continue;
        }
        prev = Some(workload);
        lines += 1;
        if lines > MAX_STEP_MARKS {
            break;
        }
        let room = x - last_label >= end / 6.0;
        if room {
            last_label = *x;
        }
        marks.push(Mark::VLine {
            x: *x,
            label: (room && starts.len() <= MAX_STEP_LABELS * 4).then(|| workload.to_string()),
            group: group.clone(),
        });
    }
    marks
}

fn extreme(points: &[(f64, f64)], max: bool) -> Option<(f64, f64)> {
    points.iter().copied().reduce(|a, b| {
        if (b.1 > a.1) == max && b.1 != a.1 {
            b
        } else {
            a
        }
    })
}

/// Temperature and power over the suite's time, None when no drive had either.
pub(crate) fn over_time(suite: drivelab_suites::SuiteKind, entries: &[Entry]) -> Option<Chart> {
    let mut c = Chart::new(
        format!("{suite}-telemetry"),
        format!("{}: drive power and temperature over time", title(suite)),
        Axis::linear("Time (measured seconds and idle between tests)", "s"),
        Axis::linear("Power", "W"),
    );
    let (mut any_power, mut any_temp, mut any_throttle) = (false, false, false);
    let one = entries.len() == 1;
    for e in entries {
        let tl = timeline(e);
        let g = Some(e.group.to_string());
        if !tl.power.is_empty() {
            any_power = true;
            for (max, word) in [(false, "min"), (true, "max")] {
                if let Some((x, y)) = extreme(&tl.power, max) {
                    c.marks.push(Mark::Point {
                        x,
                        y,
                        label: format!("{word} {y:.2} W"),
                        group: g.clone(),
                        on_y2: false,
                    });
                }
            }
            c.series.push(super::curve(
                format!("{} power", e.label),
                e.group,
                tl.power,
            ));
        }
        if !tl.temperature.is_empty() {
            any_temp = true;
            c.series.push(
                super::curve(format!("{} temperature", e.label), e.group, tl.temperature)
                    .on_y2()
                    .dashed(Dash::Dotted),
            );
        }
        for (x0, x1) in tl.throttled {
            any_throttle = true;
            c.marks.push(Mark::XRange {
                x0,
                x1,
                label: Some("throttled".into()),
                group: g.clone(),
            });
        }
        // Each workload where it starts (the first drive's, or each drive's alone).
        if one || e.label == entries[0].label {
            c.marks.extend(workload_marks(&tl.starts, tl.end, g));
        }
    }
    if !any_power && !any_temp {
        return None;
    }
    if any_temp {
        c = c.with_y2(Axis::linear("Temperature", "°C").tight());
    }
    if !any_power {
        c.y = Axis::linear("Power (no reading)", "W");
    }
    let mut sub = String::from("power solid, temperature dotted (right axis)");
    if any_throttle {
        sub += "; shaded: seconds the drive throttled";
    }
    c = c.subtitle(sub);
    Some(c)
}

fn title(suite: drivelab_suites::SuiteKind) -> String {
    let mut c = suite.name().chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Efficiency bars per drive at each workload's headline queue depth (peak): kIOPS/W
/// for the random workloads, MB/s/W for the sequential ones.
pub(crate) fn peak_efficiency(entries: &[Entry]) -> Vec<Chart> {
    let mut out = Vec::new();
    type PerWatt = fn(&drivelab_suites::peak::Point) -> Option<f64>;
    let by: [(bool, &str, PerWatt); 2] = [
        (true, "kIOPS/W", |p| p.kiops_per_w),
        (false, "MB/s/W", |p| p.mbps_per_w),
    ];
    for (random, unit, per_watt) in by {
        let mut labels: Vec<String> = Vec::new();
        // (name, group, (workload label, value) of each workload).
        type Bars<'e> = (&'e str, &'e str, Vec<(String, f64)>);
        let mut per_drive: Vec<Bars> = Vec::new();
        for e in entries {
            let mut vals = Vec::new();
            let sweeps = e
                .analysis::<drivelab_suites::peak::Analysis>()
                .map(|a| a.sweeps)
                .unwrap_or_default();
            for sw in sweeps {
                if sw.workload.starts_with("4k") != random {
                    continue;
                }
                let Some(k) = sw.sweep.knee_point() else {
                    continue;
                };
                if let Some(v) = per_watt(k) {
                    if !labels.contains(&sw.label) {
                        labels.push(sw.label.clone());
                    }
                    vals.push((sw.label, v));
                }
            }
            per_drive.push((e.label, e.group, vals));
        }
        if labels.is_empty() {
            continue;
        }
        let mut c = Chart::new(
            format!(
                "peak-efficiency-{}",
                if random { "random" } else { "sequential" }
            ),
            format!("Peak: efficiency at the headline QD ({unit})"),
            Axis::categories("Workload", labels.clone()),
            Axis::linear("Efficiency", unit),
        )
        .subtitle("throughput per watt of mean power at the knee (the lowest QD reaching 95 % of the plateau)");
        for (drive, group, vals) in per_drive {
            let pts: Vec<(f64, f64)> = vals
                .iter()
                .filter_map(|(l, v)| Some((labels.iter().position(|x| x == l)? as f64, *v)))
                .collect();
            if !pts.is_empty() {
                c.series.push(Series::bars(drive, group, pts));
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flagged_spans_merge_into_ranges() {
        let spans = [
            (0.0, 1.0, false),
            (1.0, 2.0, true),
            (2.0, 3.0, true),
            (3.0, 4.0, false),
            (4.0, 4.5, true),
        ];
        assert_eq!(ranges(&spans), [(1.0, 3.0), (4.0, 4.5)]);
    }

    #[test]
    fn the_extremes_are_the_first_lowest_and_highest() {
        let p = [(0.0, 2.0), (1.0, 1.0), (2.0, 5.0), (3.0, 1.0)];
        assert_eq!(extreme(&p, false), Some((1.0, 1.0)));
        assert_eq!(extreme(&p, true), Some((2.0, 5.0)));
    }
}
