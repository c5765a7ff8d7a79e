//! `replay`: the storage-trace reviews' scores per drive (average data rate, average and
//! 99th-percentile service time, the share of I/Os over 10, 50 and 100 ms, total replay
//! time, against the original), the data rate over the replay, and service-time
//! exceedance of reads and writes.

use drivelab_suites::replay::ReplayAnalysis;

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart};

fn is_replay(st: &drivelab_suites::StepRecord) -> bool {
    drivelab_suites::replay::is_replay_step(st)
}

fn ms(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / 1e6)
}

fn pct(f: Option<f64>) -> Option<f64> {
    f.map(|v| v * 100.0)
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Trace replay").text(
        "A block I/O trace replayed on each drive (docs/replay.md): as recorded (each I/O \
         at its recorded time, idle kept), scaled, or as fast as the trace's own \
         concurrency allows. Scores as the storage-trace reviews give them: average data \
         rate over the whole replay, service time per I/O, and the share of slow I/Os; \
         where the trace carries the original service times, this drive against them.",
    );
    let mut table = Table {
        caption: "Trace replay scores".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Trace"),
            Column::number("I/Os", "count"),
            Column::number("Average data rate", "MB/s"),
            Column::number("Average service time", "ms"),
            Column::number("Read average", "ms"),
            Column::number("Write average", "ms"),
            Column::number("99th percentile", "ms"),
            Column::number("Over 10 ms", "%"),
            Column::number("Over 50 ms", "%"),
            Column::number("Over 100 ms", "%"),
            Column::number("Replay time", "s"),
            Column::number("Faster than the original", "%"),
            Column::text("Kept up"),
        ],
        rows: Vec::new(),
    };
    let mut rate = Chart::new(
        "replay-rate",
        "Trace replay: data rate over the replay",
        Axis::linear("Time", "s"),
        Axis::linear("Data rate (read + write)", "MB/s"),
    );
    let mut ratio = Chart::new(
        "replay-vs-original",
        "Trace replay: service time against the original, I/O by I/O",
        Axis::log10("This drive's service time / the original's", "ratio"),
        Axis::linear("Share of I/Os at or below", "fraction").range(Some(0.0), Some(1.0)),
    )
    .note("CDF of each I/O's service time over the one the trace recorded for it: left of 1, this drive was faster.");
    let mut exc = exceedance::chart(
        "replay-exceedance".into(),
        "Trace replay: service-time exceedance (reads and writes)".into(),
    );
    for e in entries {
        let Some(a) = e.analysis::<ReplayAnalysis>() else {
            continue;
        };
        let (name, group) = (e.label, e.group);
        let sc = &a.scores;
        let trace = drivelab_suites::replay::trace_name(&e.doc.knobs).unwrap_or_default();
        let kept = match &sc.lag {
            Some(l) if l.kept_up => "yes".to_string(),
            Some(_) => "NO: issue fell behind".to_string(),
            None => "as fast as possible".to_string(),
        };
        table.rows.push(Row {
            group: Some(group.to_string()),
            cells: vec![
                name.to_string(),
                trace,
                a.ios_issued.to_string(),
                cell(Some(sc.avg_data_rate_mb_per_s), 1),
                cell(ms(sc.all.mean_service_ns), 3),
                cell(ms(sc.read.mean_service_ns), 3),
                cell(ms(sc.write.mean_service_ns), 3),
                cell(ms(sc.all.p99_service_ns.map(|v| v as f64)), 3),
                cell(pct(sc.all.over_10ms_fraction), 2),
                cell(pct(sc.all.over_50ms_fraction), 2),
                cell(pct(sc.all.over_100ms_fraction), 2),
                cell(Some(sc.total_replay_s), 2),
                cell(
                    sc.vs_original.as_ref().map(|v| v.faster_fraction * 100.0),
                    1,
                ),
                kept,
            ],
        });
        // The parts one after another, each interval at its end.
        let mut pts: Vec<(f64, f64)> = Vec::new();
        let mut offset_s = 0.0;
        for st in e.steps(is_replay) {
            let Some(run) = &st.run else { continue };
            for r in &run.series.records {
                let end = (r.start_ns + r.duration_ns) as f64 / 1e9;
                pts.push((offset_s + end, r.all.bytes_per_s / 1e6));
            }
            offset_s += run.duration_ns as f64 / 1e9;
        }
        if !pts.is_empty() {
            rate.series.push(curve(name, group, pts));
        }
        if let Some(pts) = ratio_cdf(e) {
            ratio.series.push(curve(name, group, pts));
        }
        let h = e.histograms(is_replay);
        if let Some(series) = exceedance::series(name.to_string(), group, &h, Dir::Both) {
            exc.series.push(series);
        }
    }
    s = s.table(table);
    for ch in [rate, ratio, exc] {
        if !ch.series.is_empty() {
            s = s.chart(ch);
        }
    }
    s
}

/// (ratio, share of I/Os at or below it) over the replay's parts, from the per-mille
/// ratio histograms; None without original service times.
fn ratio_cdf(e: &Entry) -> Option<Vec<(f64, f64)>> {
    let parts = e
        .steps(is_replay)
        .into_iter()
        .filter_map(|s| s.run.as_ref()?.replay.as_ref()?.comparison.as_ref())
        .map(|c| &c.ratio_permille);
    let h = exceedance::merge_histograms(parts)?;
    let total = h.count();
    if total == 0 {
        return None;
    }
    let mut seen = 0;
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for (lo, c) in h.nonempty_buckets() {
        seen += c;
        // (A ratio under 1/1000 counts, but has no place on a log axis.)
        if lo > 0 {
            pts.push((lo as f64 / 1000.0, seen as f64 / total as f64));
        }
    }
    (pts.len() > 1).then_some(pts)
}
