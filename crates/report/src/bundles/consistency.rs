//! `consistency`: IOPS each second as scatter plots on a log and on a linear axis, a zoom
//! on the scoring window (shaded, both scores printed), stalls marked; the per-second
//! latency band; a histogram of per-second IOPS in the window; the failed I/Os each
//! second when there were any; the scores tabulated, the levels with their shares.

use drivelab_engine::result::Histograms;
use drivelab_engine::series::IntervalRecord;
use drivelab_suites::bundle::StepRecord;
use drivelab_suites::consistency::{levels_text_with, ConsistencyAnalysis};
use drivelab_suites::plan::StepKind;

use super::exceedance::{self, Dir};
use super::{cell, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark, Series, SeriesKind};
use crate::ticks::fmt_number;

/// One drive's random-write test as the section draws it: a consistency bundle's, or
/// an imported fio series of long 4K random writes (its windows regrouped to seconds).
pub(crate) struct Drive<'a> {
    /// Name in legends and tables, and the drive's group (colour and toggle).
    pub label: String,
    pub group: String,
    pub a: ConsistencyAnalysis,
    /// The steps of the test, in order, each logged once a second.
    pub steps: Vec<std::borrow::Cow<'a, StepRecord>>,
    /// What the test did ("4K random writes, QD32, 8.60 GB span").
    pub workload: Option<String>,
}

impl<'a> Drive<'a> {
    /// A consistency bundle's drive; None without a readable analysis.
    pub fn of_entry(e: &'a Entry<'a>) -> Option<Drive<'a>> {
        Some(Drive {
            label: e.label.to_string(),
            group: e.group.to_string(),
            a: e.analysis()?,
            steps: e
                .steps(is_round)
                .into_iter()
                .map(std::borrow::Cow::Borrowed)
                .collect(),
            workload: e
                .doc
                .steps
                .iter()
                .find(|s| is_round(s))
                .map(|s| super::workload_phrase(&s.config)),
        })
    }

    /// The test's per-second records, ramp left out, in order.
    fn records(&self) -> impl Iterator<Item = IntervalRecord> + '_ {
        self.steps
            .iter()
            .flat_map(|st| {
                st.run
                    .iter()
                    .flat_map(drivelab_suites::records::workload_records)
            })
            .filter(|r| !r.ramp)
    }

    /// The per-second IOPS of the scoring window.
    fn in_window(&self) -> Vec<f64> {
        let sc = &self.a.scores;
        self.a
            .iops_per_s
            .iter()
            .copied()
            .skip(sc.window_start_s)
            .take(sc.window_len_s)
            .collect()
    }

    fn window(&self) -> (usize, usize) {
        (self.a.scores.window_start_s, self.a.scores.window_len_s)
    }

    /// (second, IOPS) of every second of the test.
    fn points(&self) -> Vec<(f64, f64)> {
        self.a
            .iops_per_s
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, v))
            .collect()
    }
}

/// Bins of the per-second IOPS histogram.
const BINS: usize = 40;

/// A step of the random-write test: the continuous run, or a round of `--until-steady`.
fn is_round(st: &StepRecord) -> bool {
    st.kind == StepKind::Measure
        && (st.params.get("round").is_some() || st.params.get("continuous").is_some())
}

/// The section of the consistency bundles among `entries`.
pub(crate) fn section(entries: &[Entry], opts: &super::ReportOptions) -> Section {
    let drives: Vec<Drive> = entries.iter().filter_map(Drive::of_entry).collect();
    section_of(&drives, opts)
}

/// The section of `drives`.
pub(crate) fn section_of(drives: &[Drive], opts: &super::ReportOptions) -> Section {
    let what = super::join_workloads(drives.iter().filter_map(|x| x.workload.as_deref()))
        .unwrap_or_else(|| "4K random writes, QD32".into());
    let s = Section::new("Consistency (random writes after preconditioning)").text(format!(
        "Completed I/Os each second ({what}), after a sequential fill. Scored on the last \
         seconds (the shaded window): average IOPS and average ÷ standard deviation \
         (higher is steadier). Ticks along the bottom mark seconds in which no I/O \
         completed."
    ));
    if drives.is_empty() {
        return s.text("No consistency analysis could be read from these bundles.");
    }
    let time = time_axis(drives);
    let mut iops = [
        log_chart(drives, &what, time.clone()),
        linear_chart(drives, &what, time.clone()),
        zoom_chart(drives, opts),
    ];
    stall_ticks(drives, &mut iops);
    let [log, lin, zoom] = iops;
    let charts = [
        log,
        lin,
        zoom,
        latency_chart(drives, time.clone()),
        histogram_chart(drives),
        exceedance_chart(drives),
        errors_chart(drives, time),
    ];
    let mut s = s.table(scores_table(drives));
    for p in phase_texts(drives) {
        s = s.text(p);
    }
    for c in charts {
        if !c.series.is_empty() {
            s = s.chart(c);
        }
    }
    s
}

/// The time axis of the per-second charts. Second 0 (the fresh drive's burst, which the
/// reviews point at) stands clear of the y axis: the axis starts a little before it;
/// the last second likewise stands clear of the right edge (not half clipped).
fn time_axis(drives: &[Drive]) -> Axis {
    let longest = drives
        .iter()
        .map(|d| d.a.iops_per_s.len())
        .max()
        .unwrap_or(1) as f64;
    let pad = (longest * 0.01).max(0.5);
    Axis::linear("Time", "s").range(Some(-pad), Some(longest - 1.0 + pad))
}

/// IOPS each second on a log axis (seconds without I/O left to the ticks).
fn log_chart(drives: &[Drive], what: &str, time: Axis) -> Chart {
    let mut log = Chart::new(
        "consistency-log",
        "Consistency: IOPS each second (log scale)",
        time,
        Axis::log10("Throughput", "IOPS"),
    )
    .subtitle(format!("1 point per second · {what}"));
    for d in drives {
        log.series.push(Series::scatter(
            &d.label,
            &d.group,
            d.points().into_iter().filter(|p| p.1 > 0.0).collect(),
        ));
    }
    log.note("Seconds with no completed I/O cannot be drawn on a log axis: the ticks mark them.")
}

// --- burst: the linear chart is the steady state's, a burst above it clipped ---

/// The top of the steady state (after each drive's burst), with a margin.
fn steady_top(drives: &[Drive]) -> f64 {
    drives
        .iter()
        .map(|d| {
            let from = d.a.burst.as_ref().map_or(0, |b| b.at_s);
            d.a.iops_per_s[from.min(d.a.iops_per_s.len())..]
                .iter()
                .copied()
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
        * 1.05
}

/// The drives whose initial burst rises above `top`, said as the chart's note says it.
fn clipped_bursts(drives: &[Drive], top: f64) -> Vec<String> {
    drives
        .iter()
        .filter_map(|d| {
            let b = d.a.burst.as_ref()?;
            let peak = d.a.iops_per_s[..b.at_s].iter().copied().fold(0.0, f64::max);
            (peak > top).then(|| {
                format!(
                    "{}: the initial burst ({} IOPS, the first {} s) is clipped at the top",
                    &d.label,
                    fmt_number(b.burst_iops, 0),
                    b.at_s
                )
            })
        })
        .collect()
}

/// IOPS each second on a linear axis: the steady state's, as the reference's (which
/// tops out at 40k IOPS for a drive bursting far above); a burst above it is clipped
/// and said so.
fn linear_chart(drives: &[Drive], what: &str, time: Axis) -> Chart {
    let top = steady_top(drives);
    let clipped = clipped_bursts(drives, top);
    let scaled = !clipped.is_empty() && top > 0.0;
    let mut lin = Chart::new(
        "consistency-linear",
        "Consistency: IOPS each second (linear scale)",
        time,
        if scaled {
            Axis::linear("Throughput", "IOPS").range(Some(0.0), Some(top))
        } else {
            Axis::linear("Throughput", "IOPS")
        },
    )
    .subtitle(format!("1 point per second · {what}"));
    if scaled {
        lin = lin.note(format!(
            "Scaled to the steady state. {}.",
            clipped.join("; ")
        ));
    }
    for d in drives {
        lin.series
            .push(Series::scatter(&d.label, &d.group, d.points()));
    }
    lin
}

// --- score: the zoom on the scoring window and the scores table ---

/// Where the zoom starts and ends: from where the user says (the reference zooms at
/// t = 1400 s), else from a little before the earliest window, to the longest series.
fn zoom_range(drives: &[Drive], opts: &super::ReportOptions) -> (usize, usize) {
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
    let from = match opts.zoom_from_s {
        Some(s) if (s as usize) < end => s as usize,
        _ => start.saturating_sub(lead),
    };
    (from, end)
}

/// The scoring window: each drive's seconds from the zoom's start, the window shaded
/// (or its ends drawn per drive when the windows differ), both scores called out.
fn zoom_chart(drives: &[Drive], opts: &super::ReportOptions) -> Chart {
    let (zoom_from, end) = zoom_range(drives, opts);
    let mut zoom = Chart::new(
        "consistency-zoom",
        "Consistency: the scoring window",
        Axis::linear("Time", "s").range(Some(zoom_from as f64), Some(end as f64)),
        Axis::linear("Throughput", "IOPS").tight(),
    );
    for d in drives {
        zoom.series.push(Series::scatter(
            &d.label,
            &d.group,
            d.points()
                .into_iter()
                .filter(|p| p.0 >= zoom_from as f64)
                .collect(),
        ));
    }
    let same_window = drives.iter().all(|d| d.window() == drives[0].window());
    zoom.subtitle = Some(if same_window {
        format!(
            "shaded: the scoring window, the last {} s",
            drives[0].a.scores.window_len_s
        )
    } else {
        "dashed lines in each drive's colour: its scoring window's start and end".to_string()
    });
    zoom
}

/// The zoom's marks and callouts of drive `idx` (after its stall ticks, as drawn).
fn zoom_marks(zoom: &mut Chart, drives: &[Drive], idx: usize) {
    let d = &drives[idx];
    let sc = &d.a.scores;
    let same_window = drives.iter().all(|x| x.window() == drives[0].window());
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
                group: Some(d.group.to_string()),
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
            format!("{}: ", d.label)
        } else {
            String::new()
        },
        cell(sc.avg_iops, 0),
        cell(sc.avg_over_stddev, 2)
    ));
}

/// Seconds without a completed I/O as ticks on the three IOPS charts, and the zoom's
/// window marks, drive by drive.
fn stall_ticks(drives: &[Drive], [log, lin, zoom]: &mut [Chart; 3]) {
    for (idx, d) in drives.iter().enumerate() {
        let xs: Vec<f64> =
            d.a.stalls
                .iter()
                .flat_map(|st| (st.start_s..st.start_s + st.len_s).map(|t| t as f64))
                .collect();
        if !xs.is_empty() {
            for c in [&mut *log, &mut *lin, &mut *zoom] {
                c.marks.push(Mark::Ticks {
                    xs: xs.clone(),
                    label: format!("{}: no I/O completed", d.label),
                    group: Some(d.group.to_string()),
                });
            }
        }
        zoom_marks(zoom, drives, idx);
    }
}

/// The scores table, one row per drive.
fn scores_table(drives: &[Drive]) -> Table {
    Table {
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
            Column::text(
                "Performance levels after the initial burst (IOPS, % of the seconds counted)",
            ),
            Column::text("PTS steady state"),
        ],
        rows: drives.iter().map(scores_row).collect(),
    }
}

// --- phases and levels ---

/// The course of each run that changed level more than once (burst, intermediate,
/// second burst, steady), as the reviews describe it.
fn phase_texts(drives: &[Drive]) -> Vec<String> {
    drives
        .iter()
        .filter(|d| d.a.phases.len() > 2)
        .filter_map(|d| {
            let p = drivelab_analysis::consistency::describe_phases(&d.a.phases)?;
            Some(format!("Phases of {}: {p}.", d.label))
        })
        .collect()
}

/// The performance levels with their shares and the seconds they are shares of, as the
/// text summary says them: "12 000 (80 %), 3 000 (20 %) IOPS (% of the 3 540 s after the
/// initial burst, from 60 s on, with more than 32 I/Os)"; "–" without a level.
fn levels_cell(d: &Drive) -> String {
    levels_text_with(&d.a, |iops| fmt_number(iops, 0)).unwrap_or_else(|| "–".into())
}

// --- the other charts: latency, histogram, exceedance, errors ---

/// The per-second latency band of every drive.
fn latency_chart(drives: &[Drive], time: Axis) -> Chart {
    let mut band = Chart::new(
        "consistency-latency",
        "Consistency: per-second latency",
        time,
        Axis::log10("Latency", "µs"),
    )
    .subtitle("band from the median to the p99 of each second; line: p99");
    for d in drives {
        band.series.extend(latency_band(d));
    }
    let means = band.series.iter().any(|s| s.dash == Some(Dash::Dotted));
    if means && !band.series.iter().any(|s| s.kind == SeriesKind::Band) {
        band.subtitle = Some(
            "dotted: each second's mean latency (fio's logs hold each window's mean, no \
             percentiles)"
                .into(),
        );
    } else if means {
        band = band.note(
            "Dotted: each second's mean latency, where the series has no percentiles \
             (fio's logs hold each window's mean).",
        );
    }
    band
}

/// Per-second IOPS in the scoring windows, binned over the windows' own range, not the
/// whole test's: the fresh drive's burst would otherwise make bins so wide that a
/// window fills one or two of them.
fn histogram_chart(drives: &[Drive]) -> Chart {
    let (lo, hi) = drives
        .iter()
        .flat_map(Drive::in_window)
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
    for d in drives {
        let mut counts = vec![0.0; BINS + 2];
        for v in d.in_window() {
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
                .push(Series::bars(&d.label, &d.group, bars).with_bar_width(bin_w));
        }
    }
    hist.subtitle = Some(format!("bins of {} IOPS", fmt_number(bin_w, 0)));
    hist
}

/// Write latency exceedance over every second of the test.
fn exceedance_chart(drives: &[Drive]) -> Chart {
    let mut exc = exceedance::chart(
        "consistency-exceedance".into(),
        "Consistency: write latency exceedance".into(),
    )
    .subtitle("every second of the random-write test");
    for d in drives {
        let h: Vec<&Histograms> = d
            .steps
            .iter()
            .filter_map(|s| s.run.as_ref().map(|r| &r.histogram))
            .collect();
        if let Some(series) = exceedance::series(d.label.to_string(), &d.group, &h, Dir::Write) {
            exc.series.push(series);
        }
    }
    exc
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
        let pts: Vec<(f64, f64)> = d
            .records()
            .enumerate()
            .map(|(i, r)| (i as f64, r.all.errors.unwrap_or(0) as f64))
            .collect();
        if pts.iter().any(|p| p.1 > 0.0) {
            let total: f64 = pts.iter().map(|p| p.1).sum();
            c.callouts.push(format!(
                "{}: {} failed I/Os in {} s",
                &d.label,
                fmt_number(total, 0),
                pts.iter().filter(|p| p.1 > 0.0).count()
            ));
            c.series
                .push(Series::bars(&d.label, &d.group, pts).with_bar_width(1.0));
        }
    }
    c
}

/// The per-second latency of the rounds, in the same order as the IOPS series: a band
/// from the median to the p99 of each second, and the p99 as a line; where the series
/// has no percentiles (fio's logs hold each window's mean), the mean as a dotted line.
fn latency_band(d: &Drive) -> Vec<Series> {
    let (name, group) = (&d.label, &d.group);
    let mut lo_hi = Vec::new();
    let mut p99 = Vec::new();
    let mut mean = Vec::new();
    for (i, r) in d.records().enumerate() {
        if let (Some(p50), Some(p)) = (r.all.lat_p50_ns, r.all.lat_p99_ns) {
            lo_hi.push((i as f64, p50 as f64 / 1e3, p as f64 / 1e3));
            p99.push((i as f64, p as f64 / 1e3));
        }
        if let Some(m) = r.all.lat_mean_ns {
            mean.push((i as f64, m / 1e3));
        }
    }
    if lo_hi.is_empty() {
        return if mean.is_empty() {
            Vec::new()
        } else {
            vec![Series::line(format!("{name} mean"), group, mean).dashed(Dash::Dotted)]
        };
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
    let steady = &d.a.steady;
    Row {
        group: Some(d.group.to_string()),
        cells: vec![
            d.label.to_string(),
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
            levels_cell(d),
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
