//! `consistency`: IOPS each second as scatter plots on a log and on a linear axis, a zoom
//! on the scoring window (shaded, both scores printed), stalls marked; the per-second
//! latency band; a histogram of per-second IOPS in the window; the failed I/Os each
//! second when there were any; the scores tabulated, the levels with their shares.

use drivelab_suites::consistency::ConsistencyAnalysis;
use drivelab_suites::plan::StepKind;

use super::exceedance::{self, Dir};
use super::{cell, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark, Series};
use crate::ticks::fmt_number;

struct Drive<'a> {
    e: &'a Entry<'a>,
    a: ConsistencyAnalysis,
}

/// Bins of the per-second IOPS histogram.
const BINS: usize = 40;

/// A step of the random-write test: the continuous run, or a round of `--until-steady`.
fn is_round(st: &drivelab_suites::StepRecord) -> bool {
    st.kind == StepKind::Measure
        && (st.params.get("round").is_some() || st.params.get("continuous").is_some())
}

pub(crate) fn section(entries: &[Entry], opts: &super::ReportOptions) -> Section {
    let drives: Vec<Drive> = entries
        .iter()
        .filter_map(|e| {
            let a = serde_json::from_value(e.summary.analysis.clone()).ok()?;
            Some(Drive { e, a })
        })
        .collect();
    let what =
        super::workloads_of(entries, is_round).unwrap_or_else(|| "4K random writes, QD32".into());
    let mut s = Section::new("Consistency (random writes after preconditioning)").text(format!(
        "Completed I/Os each second ({what}), after a sequential fill. Scored on the last \
         seconds (the shaded window): average IOPS and average ÷ standard deviation \
         (higher is steadier). Ticks along the bottom mark seconds in which no I/O \
         completed."
    ));
    if drives.is_empty() {
        return s.text("No consistency analysis could be read from these bundles.");
    }
    // Second 0 (the fresh drive's burst, which the reviews point at) stands clear of
    // the y axis: the time axis starts a little before it.
    let longest = drives
        .iter()
        .map(|d| d.a.iops_per_s.len())
        .max()
        .unwrap_or(1) as f64;
    // The last second likewise stands clear of the right edge (not half clipped).
    let pad = (longest * 0.01).max(0.5);
    let time = || Axis::linear("Time", "s").range(Some(-pad), Some(longest - 1.0 + pad));
    let mut log = Chart::new(
        "consistency-log",
        "Consistency: IOPS each second (log scale)",
        time(),
        Axis::log10("Throughput", "IOPS"),
    )
    .subtitle(format!("1 point per second · {what}"));
    // The linear scale is the steady state's, as the reference's (which tops out at
    // 40k IOPS for a drive bursting far above): a burst above it is clipped and said so.
    let steady_top = drives
        .iter()
        .map(|d| {
            let from = d.a.burst.as_ref().map_or(0, |b| b.at_s);
            d.a.iops_per_s[from.min(d.a.iops_per_s.len())..]
                .iter()
                .copied()
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
        * 1.05;
    let clipped: Vec<String> = drives
        .iter()
        .filter_map(|d| {
            let b = d.a.burst.as_ref()?;
            let peak = d.a.iops_per_s[..b.at_s].iter().copied().fold(0.0, f64::max);
            (peak > steady_top).then(|| {
                format!(
                    "{}: the initial burst ({} IOPS, the first {} s) is clipped at the top",
                    d.e.label,
                    fmt_number(b.burst_iops, 0),
                    b.at_s
                )
            })
        })
        .collect();
    let mut lin = Chart::new(
        "consistency-linear",
        "Consistency: IOPS each second (linear scale)",
        time(),
        if clipped.is_empty() || steady_top <= 0.0 {
            Axis::linear("Throughput", "IOPS")
        } else {
            Axis::linear("Throughput", "IOPS").range(Some(0.0), Some(steady_top))
        },
    )
    .subtitle(format!("1 point per second · {what}"));
    if !clipped.is_empty() && steady_top > 0.0 {
        lin = lin.note(format!(
            "Scaled to the steady state. {}.",
            clipped.join("; ")
        ));
    }
    // The zoom: from a little before the earliest window to the longest series.
    let start = drives
        .iter()
        .map(|d| d.a.scores.window_start_s)
        .min()
        .unwrap_or(0);
    let end = drives
        .iter()
        .map(|d| d.a.scores.series_len_s)
        .max()
        .unwrap_or(1);
    let lead = ((end - start) as f64 * 0.15).ceil() as usize;
    // Where the user says (the reference zooms at t = 1400 s), else a little before
    // the earliest window.
    let zoom_from = match opts.zoom_from_s {
        Some(s) if (s as usize) < end => s as usize,
        _ => start.saturating_sub(lead),
    };
    let mut zoom = Chart::new(
        "consistency-zoom",
        "Consistency: the scoring window",
        Axis::linear("Time", "s").range(Some(zoom_from as f64), Some(end as f64)),
        Axis::linear("Throughput", "IOPS").tight(),
    );
    let mut band = Chart::new(
        "consistency-latency",
        "Consistency: per-second latency",
        time(),
        Axis::log10("Latency", "µs"),
    )
    .subtitle("band from the median to the p99 of each second; line: p99");
    // Bins over the scoring windows' own range, not the whole test's: the fresh drive's
    // burst would otherwise make bins so wide that a window fills one or two of them.
    let in_window = |d: &Drive| {
        let sc = &d.a.scores;
        let w: Vec<f64> =
            d.a.iops_per_s
                .iter()
                .copied()
                .skip(sc.window_start_s)
                .take(sc.window_len_s)
                .collect();
        w
    };
    let (lo, hi) = drives
        .iter()
        .flat_map(in_window)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let bin_w = nice_bin((hi - lo) / BINS as f64);
    let bin_from = (lo / bin_w).floor() * bin_w;
    let mut hist = Chart::new(
        "consistency-histogram",
        "Consistency: distribution of per-second IOPS in the scoring window",
        Axis::linear("Throughput", "IOPS"),
        Axis::linear("Seconds", "s"),
    );
    let mut exc = exceedance::chart(
        "consistency-exceedance".into(),
        "Consistency: write latency exceedance".into(),
    )
    .subtitle("every second of the random-write test");
    let mut table = Table {
        caption: "Consistency scores".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Window", "s"),
            Column::number("Average", "IOPS"),
            Column::number("Average ÷ std dev", "ratio"),
            Column::number("Minimum", "IOPS"),
            Column::number("p1", "IOPS"),
            Column::number("p99", "IOPS"),
            Column::number("Zero-IOPS seconds in the window", "s"),
            Column::number("Zero-IOPS seconds, whole test", "s"),
            Column::number("Burst ends", "s"),
            Column::text("Performance levels (IOPS, share of the seconds with I/O)"),
            Column::text("PTS steady state"),
        ],
        rows: Vec::new(),
    };
    let window = |d: &Drive| (d.a.scores.window_start_s, d.a.scores.window_len_s);
    let same_window = drives.iter().all(|d| window(d) == window(&drives[0]));
    for (idx, d) in drives.iter().enumerate() {
        let (name, group) = (d.e.label, d.e.group);
        let g = Some(group.to_string());
        let sc = &d.a.scores;
        let pts: Vec<(f64, f64)> =
            d.a.iops_per_s
                .iter()
                .enumerate()
                .map(|(i, &v)| (i as f64, v))
                .collect();
        log.series.push(Series::scatter(
            name,
            group,
            pts.iter().copied().filter(|p| p.1 > 0.0).collect(),
        ));
        lin.series.push(Series::scatter(name, group, pts.clone()));
        zoom.series.push(Series::scatter(
            name,
            group,
            pts.iter()
                .copied()
                .filter(|p| p.0 >= zoom_from as f64)
                .collect(),
        ));
        let stall_xs: Vec<f64> =
            d.a.stalls
                .iter()
                .flat_map(|st| (st.start_s..st.start_s + st.len_s).map(|t| t as f64))
                .collect();
        if !stall_xs.is_empty() {
            for c in [&mut log, &mut lin, &mut zoom] {
                c.marks.push(Mark::Ticks {
                    xs: stall_xs.clone(),
                    label: format!("{name}: no I/O completed"),
                    group: g.clone(),
                });
            }
        }
        let (w0, w1) = (sc.window_start_s, sc.window_start_s + sc.window_len_s);
        if same_window {
            if idx == 0 {
                zoom.marks.push(Mark::XRange {
                    x0: w0 as f64,
                    x1: w1 as f64,
                    label: None,
                    group: None,
                });
            }
        } else {
            // One shaded range per drive would stack into grey: the window's start and
            // end as lines of the drive's own, toggled with it.
            for x in [w0, w1] {
                zoom.marks.push(Mark::VLine {
                    x: x as f64,
                    label: None,
                    group: g.clone(),
                });
            }
        }
        if let (Some(avg), 1) = (sc.avg_iops, drives.len()) {
            zoom.marks.push(Mark::HLine {
                y: avg,
                label: Some("average".into()),
            });
        }
        zoom.callouts.push(format!(
            "{}{} IOPS average, {} average ÷ std dev",
            if drives.len() > 1 {
                format!("{name}: ")
            } else {
                String::new()
            },
            cell(sc.avg_iops, 0),
            cell(sc.avg_over_stddev, 2)
        ));
        band.series.extend(latency_band(d));
        let mut counts = vec![0.0; BINS + 2];
        for v in in_window(d) {
            let b = (((v - bin_from) / bin_w) as usize).min(BINS + 1);
            counts[b] += 1.0;
        }
        let bars: Vec<(f64, f64)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0.0)
            .map(|(b, &c)| (bin_from + (b as f64 + 0.5) * bin_w, c))
            .collect();
        if !bars.is_empty() {
            hist.series
                .push(Series::bars(name, group, bars).with_bar_width(bin_w));
        }
        let h = d.e.histograms(is_round);
        if let Some(series) = exceedance::series(name.to_string(), group, &h, Dir::Write) {
            exc.series.push(series);
        }
        table.rows.push(scores_row(d));
    }
    zoom.subtitle = Some(if same_window {
        format!(
            "shaded: the scoring window, the last {} s",
            drives[0].a.scores.window_len_s
        )
    } else {
        "dashed lines in each drive's colour: its scoring window's start and end".to_string()
    });
    hist.subtitle = Some(format!("bins of {} IOPS", fmt_number(bin_w, 0)));
    log = log
        .note("Seconds with no completed I/O cannot be drawn on a log axis: the ticks mark them.");
    s = s.table(table);
    // The course of a run that changed level more than once (burst, intermediate,
    // second burst, steady), as the reviews describe it.
    for d in &drives {
        if d.a.phases.len() > 2 {
            if let Some(p) = drivelab_analysis::consistency::describe_phases(&d.a.phases) {
                s = s.text(format!("Phases of {}: {p}.", d.e.label));
            }
        }
    }
    let errors = errors_chart(&drives, time());
    for c in [log, lin, zoom, band, hist, exc, errors] {
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}

/// Failed I/Os each second of the random-write test (a drive failing for some seconds
/// mid-run), for the drives whose series had any; empty without them. The counts are the
/// engine's per-interval `errors`, which add up to the run's error count.
fn errors_chart(drives: &[Drive], time: Axis) -> Chart {
    let mut c = Chart::new(
        "consistency-errors",
        "Consistency: failed I/Os each second",
        time,
        Axis::linear("Failed I/Os", "I/Os"),
    );
    for d in drives {
        let pts: Vec<(f64, f64)> =
            d.e.steps(is_round)
                .into_iter()
                .flat_map(|st| {
                    st.run
                        .iter()
                        .flat_map(|r| drivelab_suites::records::workload_records(r).iter())
                })
                .filter(|r| !r.ramp)
                .enumerate()
                .map(|(i, r)| (i as f64, r.all.errors.unwrap_or(0) as f64))
                .collect();
        if pts.iter().any(|p| p.1 > 0.0) {
            let total: f64 = pts.iter().map(|p| p.1).sum();
            c.callouts.push(format!(
                "{}: {} failed I/Os in {} s",
                d.e.label,
                fmt_number(total, 0),
                pts.iter().filter(|p| p.1 > 0.0).count()
            ));
            c.series
                .push(Series::bars(d.e.label, d.e.group, pts).with_bar_width(1.0));
        }
    }
    c
}

/// The per-second latency of the rounds, in the same order as the IOPS series: a band
/// from the median to the p99 of each second, and the p99 as a line.
fn latency_band(d: &Drive) -> Vec<Series> {
    let (name, group) = (d.e.label, d.e.group);
    let mut lo_hi = Vec::new();
    let mut p99 = Vec::new();
    let recs =
        d.e.steps(is_round)
            .into_iter()
            .flat_map(|st| {
                st.run
                    .iter()
                    .flat_map(|r| drivelab_suites::records::workload_records(r).iter())
            })
            .filter(|r| !r.ramp);
    for (i, r) in recs.enumerate() {
        if let (Some(p50), Some(p)) = (r.all.lat_p50_ns, r.all.lat_p99_ns) {
            lo_hi.push((i as f64, p50 as f64 / 1e3, p as f64 / 1e3));
            p99.push((i as f64, p as f64 / 1e3));
        }
    }
    if lo_hi.is_empty() {
        return Vec::new();
    }
    vec![
        Series::band(format!("{name} median–p99"), group, lo_hi),
        Series::line(format!("{name} p99"), group, p99).dashed(Dash::Solid),
    ]
}

/// A drive's row of the scores table.
fn scores_row(d: &Drive) -> Row {
    let sc = &d.a.scores;
    let (w0, w1) = (sc.window_start_s, sc.window_start_s + sc.window_len_s);
    let levels: Vec<String> =
        d.a.levels
            .iter()
            .map(|l| {
                format!(
                    "{} ({:.0} %)",
                    fmt_number(l.centre_iops, 0),
                    100.0 * l.share
                )
            })
            .collect();
    let steady = &d.a.steady;
    Row {
        group: Some(d.e.group.to_string()),
        cells: vec![
            d.e.label.to_string(),
            format!("{}–{}", w0, w1),
            cell(sc.avg_iops, 0),
            cell(sc.avg_over_stddev, 2),
            cell(sc.min_iops, 0),
            cell(sc.p1_iops, 0),
            cell(sc.p99_iops, 0),
            sc.zero_seconds.to_string(),
            sc.series_zero_seconds.to_string(),
            d.a.burst
                .as_ref()
                .map_or_else(|| "–".into(), |b| b.at_s.to_string()),
            if levels.is_empty() {
                "–".into()
            } else {
                levels.join(", ")
            },
            match (
                steady.reached,
                steady.window_first_round,
                steady.window_last_round,
            ) {
                (true, Some(f), Some(l)) => format!("reached, rounds {}–{}", f + 1, l + 1),
                _ if steady.gave_up => "not reached (gave up)".into(),
                _ => format!("not reached in {} rounds", d.a.rounds.len()),
            },
        ],
    }
}

/// A 1-2-5 bin width at or above `raw`.
fn nice_bin(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&w| w >= raw)
        .unwrap_or(10.0 * mag)
        .max(1.0)
}

#[cfg(test)]
mod tests {
    use super::nice_bin;

    #[test]
    fn bins_are_round() {
        assert_eq!(nice_bin(1234.0), 2000.0);
        assert_eq!(nice_bin(50.0), 50.0);
        assert_eq!(nice_bin(0.2), 1.0);
        assert_eq!(nice_bin(0.0), 1.0);
    }
}
