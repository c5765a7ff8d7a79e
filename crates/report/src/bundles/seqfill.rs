//! `seqfill`: write rate against data written with the end of the write cache ringed,
//! drop episodes shaded and the device temperature on a second axis when a sensor was
//! readable; the fill summary tabulated; write latency exceedance.

use std::borrow::Cow;

use drivelab_suites::bundle::StepRecord;
use drivelab_suites::seqfill::SeqFillAnalysis;

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark};

/// Drop episodes labelled one by one up to this many per drive.
const MAX_DROP_LABELS: usize = 6;

fn is_fill(st: &StepRecord) -> bool {
    drivelab_suites::seqfill::is_fill_step(st)
}

/// One drive's sequential fill as the section draws it: a seqfill bundle's, or an
/// imported fio series of sequential writes.
pub(crate) struct Fill<'a> {
    /// Name in legends and tables, and the drive's group (colour and toggle).
    pub label: String,
    pub group: String,
    pub a: SeqFillAnalysis,
    /// The fill's steps.
    pub steps: Vec<Cow<'a, StepRecord>>,
    /// What the fill did ("128K sequential writes, QD32, 8.60 GB span").
    pub workload: Option<String>,
}

impl<'a> Fill<'a> {
    /// A seqfill bundle's fill; None without a readable analysis.
    fn of_entry(e: &'a Entry<'a>) -> Option<Fill<'a>> {
        Some(Fill {
            label: e.label.to_string(),
            group: e.group.to_string(),
            a: e.analysis()?,
            steps: e.steps(is_fill).into_iter().map(Cow::Borrowed).collect(),
            workload: e
                .doc
                .steps
                .iter()
                .find(|s| is_fill(s))
                .map(|s| super::workload_phrase(&s.config)),
        })
    }
}

/// Temperature against GB written: every interval's reading when the series has them,
/// else the readings at the start and the end of the step.
fn temperature(f: &Fill) -> Vec<(f64, f64)> {
    let a = &f.a;
    let mut pts = Vec::new();
    for st in &f.steps {
        for r in st
            .run
            .iter()
            .flat_map(drivelab_suites::records::workload_records)
        {
            if r.ramp {
                continue;
            }
            let t = r.sensors.iter().find(|s| s.name == "temperature");
            if let Some(v) = t.and_then(|t| t.value) {
                pts.push((r.cum_write_bytes as f64 / 1e9, v));
            }
        }
    }
    if pts.is_empty() {
        let total = a.cum_write_bytes.last().copied().unwrap_or(0) as f64 / 1e9;
        if let Some(t) = a.temperature_start_celsius {
            pts.push((0.0, t));
        }
        if let Some(t) = a.temperature_end_celsius {
            pts.push((total, t));
        }
    }
    pts
}

/// The section of the seqfill bundles among `entries`.
pub(crate) fn section(entries: &[Entry]) -> Section {
    let fills: Vec<Fill> = entries.iter().filter_map(Fill::of_entry).collect();
    section_of(&fills)
}

/// The section of `fills`.
pub(crate) fn section_of(fills: &[Fill]) -> Section {
    let what = super::join_workloads(fills.iter().filter_map(|x| x.workload.as_deref()))
        .unwrap_or_else(|| "128K sequential writes".into());
    let mut s = Section::new("Sequential fill").text(format!(
        "Sequential writes ({what}) over most of the span, the write rate recorded each \
         logged interval (100 ms unless set) against the data written so far. The ring marks where the write cache ran \
         out; shaded ranges are drops below the drop threshold."
    ));
    let mut c = Chart::new(
        "seqfill",
        "Sequential fill: write throughput vs data written",
        Axis::linear("Data written", "GB"),
        Axis::linear("Write throughput", "MB/s"),
    )
    .subtitle(what.clone());
    let mut exc = exceedance::chart(
        "seqfill-exceedance".into(),
        "Sequential fill: write latency exceedance".into(),
    );
    let mut table = Table {
        caption: "Sequential fill summary".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Written", "GB"),
            Column::number("Time", "s"),
            Column::number("Initial (cache) speed", "MB/s"),
            Column::number("Cache size", "GB"),
            Column::number("After the cache", "MB/s"),
            Column::number("Overall average", "MB/s"),
            Column::number("Drop episodes", "count"),
            Column::number("Longest drop", "s"),
            Column::number("Temperature start", "°C"),
            Column::number("Temperature end", "°C"),
        ],
        rows: Vec::new(),
    };
    let mut any_temp = false;
    let mut drop_lines: Vec<String> = Vec::new();
    for fill in fills {
        let a = &fill.a;
        let (name, group) = (fill.label.as_str(), fill.group.as_str());
        let g = Some(group.to_string());
        let gb = |i: usize| a.cum_write_bytes.get(i).copied().unwrap_or(0) as f64 / 1e9;
        let pts: Vec<(f64, f64)> = a
            .mbps_per_s
            .iter()
            .enumerate()
            .map(|(i, &v)| (gb(i), v))
            .collect();
        if pts.is_empty() {
            continue;
        }
        c.series.push(curve(name, group, pts));
        let f = &a.fill;
        if let (Some(bytes), Some(v)) = (f.cache_bytes, f.cache_mbps.or(f.initial_mbps)) {
            c.marks.push(Mark::Point {
                x: bytes as f64 / 1e9,
                y: v,
                label: format!(
                    "cache ≈ {} GB{}",
                    cell(Some(bytes as f64 / 1e9), 1),
                    if f.cache_ended_by_stalls {
                        ", ended in stalls"
                    } else {
                        ""
                    }
                ),
                group: g.clone(),
                on_y2: false,
            });
        }
        // A few drops are labelled one by one; many would pile their labels into one
        // unreadable line, so they are counted in the subtitle instead.
        let label_each = f.drops.len() <= MAX_DROP_LABELS;
        for ep in &f.drops {
            c.marks.push(Mark::XRange {
                x0: ep.at_bytes as f64 / 1e9,
                x1: (ep.end_bytes.max(ep.at_bytes)) as f64 / 1e9,
                label: label_each.then(|| format!("drop {} s", cell(Some(ep.len_s), 1))),
                group: g.clone(),
            });
        }
        if !label_each {
            drop_lines.push(format!(
                "{name}: {} drops, the longest {} s",
                f.drops.len(),
                cell(Some(f.drop_longest_s), 1)
            ));
        }
        let temp = temperature(fill);
        if !temp.is_empty() {
            any_temp = true;
            c.series.push(
                curve(format!("{name} temperature"), group, temp)
                    .on_y2()
                    .dashed(Dash::Dotted),
            );
        }
        let h: Vec<_> = fill
            .steps
            .iter()
            .filter_map(|s| s.run.as_ref().map(|r| &r.histogram))
            .collect();
        if let Some(series) = exceedance::series(name.to_string(), group, &h, Dir::Write) {
            exc.series.push(series);
        }
        table.rows.push(Row {
            group: g,
            cells: vec![
                name.to_string(),
                cell(Some(f.total_bytes as f64 / 1e9), 2),
                cell(Some(a.elapsed_s), if a.elapsed_s < 10.0 { 2 } else { 0 }),
                // The cache's own level where its end was found, else the start's.
                cell(f.cache_mbps.or(f.initial_mbps), 1),
                cell(f.cache_bytes.map(|b| b as f64 / 1e9), 2),
                cell(f.post_cache_avg_mbps, 1),
                cell(f.overall_avg_mbps, 1),
                f.drop_count.to_string(),
                cell(Some(f.drop_longest_s), 1),
                cell(a.temperature_start_celsius, 1),
                cell(a.temperature_end_celsius, 1),
            ],
        });
    }
    if !drop_lines.is_empty() {
        c = c.note(format!("Shaded: {}.", drop_lines.join("; ")));
    }
    if any_temp {
        c = c
            .with_y2(Axis::linear("Temperature", "°C").tight())
            .subtitle(format!("{what} · temperature dotted, right axis"));
    } else {
        c = c.note("No temperature sensor was readable: no temperature overlay.");
    }
    s = s.table(table);
    for ch in [c, exc] {
        if !ch.series.is_empty() {
            s = s.chart(ch);
        }
    }
    s
}
