//! `peak`: per workload, throughput and p99/p99.99 latency against queue depth with the
//! selected point (lowest QD reaching 95 % of the best throughput) marked and tabulated,
//! and the latency exceedance at that point.

use drivelab_suites::bundle::StepStatus;
use serde_json::Value;

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark};

/// (id, label, unit) of each workload in first-seen order.
fn workloads(entries: &[Entry]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for e in entries {
        for w in e.summary.analysis["sweeps"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let id = w["workload"].as_str().unwrap_or_default().to_string();
            if !id.is_empty() && !out.iter().any(|x| x.0 == id) {
                out.push((
                    id,
                    w["label"].as_str().unwrap_or_default().to_string(),
                    w["unit"].as_str().unwrap_or("IOPS").to_string(),
                ));
            }
        }
    }
    out
}

fn sweep_of<'v>(e: &'v Entry, id: &str) -> Option<&'v Value> {
    e.summary.analysis["sweeps"]
        .as_array()?
        .iter()
        .find(|w| w["workload"].as_str() == Some(id))
        .map(|w| &w["sweep"])
}

fn points(sweep: &Value, f: impl Fn(&Value) -> Option<f64>) -> Vec<(f64, f64)> {
    sweep["curve"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["qd"].as_f64()?, f(p)?)))
        .collect()
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Peak (queue-depth sweep)").text(
        "Each workload swept over queue depth (threads each doing one I/O, or io_uring). \
         The ringed point is the lowest queue depth giving at least 95 % of the best \
         throughput: its throughput and latencies are the headline numbers.",
    );
    // The random-write sweep's state: after a spell of random writes, or fresh.
    for e in entries {
        let steady = e.doc.steps.iter().find(|st| st.id == "steady-writes");
        let writes_randomly = e
            .doc
            .steps
            .iter()
            .any(|st| st.id.starts_with("4k-randwrite"));
        let complete = steady.is_some_and(|st| st.status == StepStatus::Complete);
        match steady.and_then(|st| st.run.as_ref()) {
            Some(r) if !complete => {
                s = s.text(format!(
                    "{}: the random writes before the 4K random-write sweep stopped after {:.0} s: the sweep may not show the drive's steady state.",
                    e.label,
                    r.totals.elapsed_ns as f64 / 1e9
                ))
            }
            Some(r) => {
                s = s.text(format!(
                    "{}: the 4K random-write sweep followed {:.0} s of 4K random writes at QD32 over the span, so it shows the drive's steady state.",
                    e.label,
                    r.totals.elapsed_ns as f64 / 1e9
                ))
            }
            None if writes_randomly => {
                s = s.text(format!(
                    "{}: the 4K random-write sweep ran on a drive not first brought to its steady state (no steady-writes step): it may show the fresh drive's burst.",
                    e.label
                ))
            }
            None => {}
        }
    }
    let mut table = Table {
        caption: "Selected point per workload: lowest QD with ≥ 95 % of the best throughput".into(),
        columns: vec![
            Column::text("Workload"),
            Column::text("Drive"),
            Column::number("QD", "outstanding I/Os"),
            Column::text("Throughput"),
            Column::text("Best"),
            Column::number("Share of best", "%"),
            Column::number("Mean latency", "µs"),
            Column::number("p99", "µs"),
            Column::number("p99.99", "µs"),
        ],
        rows: Vec::new(),
    };
    let mut charts = Vec::new();
    for (id, label, unit) in workloads(entries) {
        let qd_axis = || Axis::log2("Queue depth", "outstanding I/Os");
        let thr_key = if unit == "MB/s" { "mbps" } else { "iops" };
        let mut thr = Chart::new(
            format!("peak-{id}-throughput"),
            format!("Peak {label}: throughput vs queue depth"),
            qd_axis(),
            Axis::linear("Throughput", unit.clone()),
        );
        let mut lat = Chart::new(
            format!("peak-{id}-latency"),
            format!("Peak {label}: tail latency vs queue depth"),
            qd_axis(),
            Axis::log10("Latency", "µs"),
        )
        .subtitle("p99 solid, p99.99 dashed");
        let mut exc = exceedance::chart(
            format!("peak-{id}-exceedance"),
            format!("Peak {label}: latency exceedance at the selected QD"),
        );
        for e in entries {
            let Some(sw) = sweep_of(e, &id) else {
                continue;
            };
            let pts = points(sw, |p| p[thr_key].as_f64());
            if pts.is_empty() {
                continue;
            }
            thr.series.push(curve(e.label, e.label, pts));
            let p99 = points(sw, |p| p["lat_p99_us"].as_f64());
            let p9999 = points(sw, |p| p["lat_p9999_us"].as_f64());
            lat.series
                .push(curve(format!("{} p99", e.label), e.label, p99).dashed(Dash::Solid));
            lat.series
                .push(curve(format!("{} p99.99", e.label), e.label, p9999).dashed(Dash::Dashed));
            let knee = &sw["knee"];
            let Some(k) = knee["index"]
                .as_u64()
                .and_then(|i| sw["curve"].get(i as usize))
            else {
                continue;
            };
            let qd = k["qd"].as_f64().unwrap_or(f64::NAN);
            let v = k[thr_key].as_f64().unwrap_or(f64::NAN);
            let dec = if unit == "MB/s" { 1 } else { 0 };
            thr.marks.push(Mark::Point {
                x: qd,
                y: v,
                label: format!("QD{qd}: {} {unit}", crate::html::fmt_number(v, dec)),
                group: Some(e.label.to_string()),
                on_y2: false,
            });
            if let Some(p) = k["lat_p99_us"].as_f64() {
                lat.marks.push(Mark::Point {
                    x: qd,
                    y: p,
                    label: format!("QD{qd}"),
                    group: Some(e.label.to_string()),
                    on_y2: false,
                });
            }
            table.rows.push(Row {
                group: Some(e.label.to_string()),
                cells: vec![
                    label.clone(),
                    e.label.to_string(),
                    format!("{qd}"),
                    format!("{} {unit}", cell(Some(v), dec)),
                    format!("{} {unit}", cell(knee["peak_throughput"].as_f64(), dec)),
                    cell(knee["fraction_of_peak"].as_f64().map(|f| f * 100.0), 1),
                    cell(k["lat_mean_us"].as_f64(), 1),
                    cell(k["lat_p99_us"].as_f64(), 1),
                    cell(k["lat_p9999_us"].as_f64(), 1),
                ],
            });
            let kq = k["qd"].as_u64();
            // (An imported fio result can be a point of two sweeps: `sweeps` lists them.)
            let h = e.histograms(|st| {
                (st.params["workload"].as_str() == Some(id.as_str())
                    || st.params["sweeps"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|w| w.as_str() == Some(id.as_str()))))
                    && st.params["qd"].as_u64() == kq
            });
            if let Some(series) =
                exceedance::series(format!("{} QD{qd}", e.label), e.label, &h, Dir::Both)
            {
                exc.series.push(series);
            }
            let skipped: Vec<String> = sw["skipped_qds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .map(|q| q.to_string())
                .collect();
            if !skipped.is_empty() {
                thr.notes.push(format!(
                    "{}: QD {} not run (throughput fell twice past its peak).",
                    e.label,
                    skipped.join(", ")
                ));
            }
            if let Some(n) = rechecked_note(e.label, sw) {
                thr.notes.push(n);
            }
            if knee["at_last_qd"] == true {
                thr.notes.push(format!(
                    "{}: the knee is the sweep's highest queue depth, QD{qd}: the curve may \
                     still be rising there (a higher --max-qd shows where it levels off).",
                    e.label
                ));
            }
        }
        for c in [thr, lat, exc] {
            if !c.series.is_empty() {
                charts.push(c);
            }
        }
    }
    s = s.table(table);
    for c in charts {
        s = s.chart(c);
    }
    s
}

/// The points of a sweep measured again because they were within their noise of the
/// knee threshold (issue 14) or the best point, whose luck sets it (issue 24): each with its passes and whether it was settled, and the
/// knee from the first passes alone when it moved.
fn rechecked_note(label: &str, sw: &Value) -> Option<String> {
    let again: Vec<String> = sw["curve"]
        .as_array()?
        .iter()
        .filter(|p| p["passes"].as_u64().is_some_and(|n| n > 1))
        .map(|p| {
            format!(
                "QD{} ×{}{}",
                p["qd"],
                p["passes"],
                if p["uncertain"] == true {
                    " (still within noise)"
                } else {
                    ""
                }
            )
        })
        .collect();
    if again.is_empty() {
        return None;
    }
    let moved = match (sw["first_pass_knee_qd"].as_u64(), sw["knee"]["qd"].as_u64()) {
        (Some(a), Some(b)) if a != b => format!("; the knee moved from QD{a} to QD{b}"),
        _ => String::new(),
    };
    Some(format!(
        "{label}: measured again, within noise of the knee threshold or the best point \
         (which sets it): {}{moved}.",
        again.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn re_measured_points_are_noted_with_the_knee_they_moved() {
        let sw = serde_json::json!({
            "curve": [
                {"qd": 4, "passes": 3, "uncertain": false},
                {"qd": 8, "passes": 1, "uncertain": true},
                {"qd": 16, "passes": 2, "uncertain": true}
            ],
            "knee": {"qd": 8},
            "first_pass_knee_qd": 4
        });
        assert_eq!(
            rechecked_note("A", &sw).unwrap(),
            "A: measured again, within noise of the knee threshold or the best point (which sets it): QD4 ×3, QD16 ×2 (still within noise); the knee moved from QD4 to QD8."
        );
        // Bundles from before re-measurement, and sweeps that needed none: no note.
        assert_eq!(
            rechecked_note("A", &serde_json::json!({"curve": [{"qd": 1}]})),
            None
        );
    }
}
