//! `peak`: per workload, throughput and p99/p99.99 latency against queue depth with the
//! selected point (the knee: lowest QD reaching 95 % of the plateau, see
//! [`drivelab_analysis::qd::KNEE_RULE`]) marked and tabulated,
//! and the latency exceedance at that point.

use drivelab_analysis::qd::{KNEE_RULE, THRESHOLD_LABEL};
use drivelab_suites::bundle::StepStatus;
use drivelab_suites::peak::{Analysis, Point, Sweep, SweepEntry};

use drivelab_suites::SuiteKind;

use super::exceedance::{self, Dir};
use super::{cell, curve, Entry};
use crate::html::{Column, Row, Section, Table};
use crate::model::{Axis, Chart, Dash, Mark};

/// Each entry's peak analysis (None when it has none readable).
fn analyses(entries: &[Entry]) -> Vec<Option<Analysis>> {
    entries.iter().map(|e| e.analysis::<Analysis>()).collect()
}

/// (id, label, unit) of each workload in first-seen order.
fn workloads(analyses: &[Option<Analysis>]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for w in analyses.iter().flatten().flat_map(|a| &a.sweeps) {
        if !w.workload.is_empty() && !out.iter().any(|x| x.0 == w.workload) {
            out.push((w.workload.clone(), w.label.clone(), w.unit.clone()));
        }
    }
    out
}

fn sweep_of<'a>(a: &'a Option<Analysis>, id: &str) -> Option<&'a SweepEntry> {
    a.as_ref()?.sweeps.iter().find(|w| w.workload == id)
}

/// (QD, value) of each point of a sweep that has the value.
fn points(sweep: &Sweep, f: impl Fn(&Point) -> Option<f64>) -> Vec<(f64, f64)> {
    sweep
        .curve
        .iter()
        .filter_map(|p| Some((p.qd as f64, f(p)?)))
        .collect()
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Peak (queue-depth sweep)").text(format!(
        "Each workload swept over queue depth (threads each doing one I/O, or io_uring). \
         The ringed point is {KNEE_RULE}: its throughput and latencies are the headline \
         numbers. The dashed line is that 95 % threshold."
    ));
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
        caption: format!("Selected point per workload: {KNEE_RULE}"),
        columns: vec![
            Column::text("Workload"),
            Column::text("Drive"),
            Column::number("QD", "outstanding I/Os"),
            Column::text("Throughput"),
            Column::text("Best"),
            Column::text("Plateau"),
            Column::number("Share of plateau", "%"),
            Column::number("Mean latency", "µs"),
            Column::number("p99", "µs"),
            Column::number("p99.99", "µs"),
        ],
        rows: Vec::new(),
    };
    let analyses = analyses(entries);
    let mut charts = Vec::new();
    for (id, label, unit) in workloads(&analyses) {
        let mut thr = throughput_chart(&id, &label, &unit);
        let mut lat = latency_chart(&id, &label);
        let mut exc = exceedance::chart(
            format!("peak-{id}-exceedance"),
            format!("Peak {label}: latency exceedance at the selected QD"),
        );
        for (e, a) in entries.iter().zip(&analyses) {
            let Some(w) = sweep_of(a, &id) else {
                continue;
            };
            if !add_curves(e, w, &mut thr, &mut lat) {
                continue;
            }
            if let Some(k) = w.sweep.knee_point() {
                mark_knee(e.group, w, k, &mut thr, &mut lat);
                thr.marks.extend(threshold_line(e, w, entries.len() > 1));
                table.rows.push(knee_row(e, w, k));
                // (An imported fio result can be a point of two sweeps: `sweeps` lists them.)
                let h = e.histograms(|st| {
                    (st.params["workload"].as_str() == Some(id.as_str())
                        || st.params["sweeps"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|w| w.as_str() == Some(id.as_str()))))
                        && st.params["qd"].as_u64() == Some(k.qd as u64)
                });
                let name = format!("{} QD{}", e.label, k.qd);
                if let Some(series) = exceedance::series(name, e.group, &h, Dir::Both) {
                    exc.series.push(series);
                }
            }
            thr.notes.extend(skipped_note(e.label, &w.sweep));
            thr.notes.extend(rechecked_note(e.label, &w.sweep));
            thr.notes
                .extend(last_qd_note(e.label, e.doc.suite, &w.sweep));
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

fn qd_axis() -> Axis {
    Axis::log2("Queue depth", "outstanding I/Os")
}

/// Throughput against queue depth, one curve per drive.
fn throughput_chart(id: &str, label: &str, unit: &str) -> Chart {
    Chart::new(
        format!("peak-{id}-throughput"),
        format!("Peak {label}: throughput vs queue depth"),
        qd_axis(),
        Axis::linear("Throughput", unit),
    )
}

/// p99 and p99.99 latency against queue depth.
fn latency_chart(id: &str, label: &str) -> Chart {
    Chart::new(
        format!("peak-{id}-latency"),
        format!("Peak {label}: tail latency vs queue depth"),
        qd_axis(),
        Axis::log10("Latency", "µs"),
    )
    .subtitle("p99 solid, p99.99 dashed")
}

/// A drive's throughput and latency curves; false when its sweep has no points.
fn add_curves(e: &Entry, w: &SweepEntry, thr: &mut Chart, lat: &mut Chart) -> bool {
    let pts = points(&w.sweep, |p| Some(w.throughput(p)));
    if pts.is_empty() {
        return false;
    }
    let (drive, group) = (e.label, e.group);
    // Every measured queue depth marked: a sweep is a few points, not a trace.
    thr.series.push(curve(drive, group, pts).with_markers());
    let p99 = points(&w.sweep, |p| p.lat_p99_us);
    let p9999 = points(&w.sweep, |p| p.lat_p9999_us);
    lat.series.push(
        curve(format!("{drive} p99"), group, p99)
            .dashed(Dash::Solid)
            .with_markers(),
    );
    lat.series.push(
        curve(format!("{drive} p99.99"), group, p9999)
            .dashed(Dash::Dashed)
            .with_markers(),
    );
    true
}

fn decimals(w: &SweepEntry) -> usize {
    if w.in_mbps() {
        1
    } else {
        0
    }
}

/// The knee ringed on both charts (in the drive's group).
fn mark_knee(drive: &str, w: &SweepEntry, k: &Point, thr: &mut Chart, lat: &mut Chart) {
    let (qd, v) = (k.qd as f64, w.throughput(k));
    let text = crate::ticks::fmt_number(v, decimals(w));
    thr.marks.push(Mark::Point {
        x: qd,
        y: v,
        label: format!("QD{}: {text} {}", k.qd, w.unit),
        group: Some(drive.to_string()),
        on_y2: false,
    });
    if let Some(p) = k.lat_p99_us {
        lat.marks.push(Mark::Point {
            x: qd,
            y: p,
            label: format!("QD{}", k.qd),
            group: Some(drive.to_string()),
            on_y2: false,
        });
    }
}

/// The 95 % line the knee was chosen against (absent in old bundles), named after the
/// drive when several are drawn.
fn threshold_line(e: &Entry, w: &SweepEntry, several: bool) -> Option<Mark> {
    let t = w.sweep.knee.as_ref()?.threshold;
    let whose = if several {
        format!(" ({})", e.label)
    } else {
        String::new()
    };
    (t > 0.0).then(|| Mark::HLine {
        y: t,
        label: Some(format!("{THRESHOLD_LABEL}{whose}")),
    })
}

/// A knee at the sweep's highest queue depth: the curve may still be rising there.
/// What shows where it levels off depends on who ran the sweep (`suite`): drivelab's
/// peak suite takes a higher `--max-qd`; fio's results (imported or run by the fio
/// suite) need fio run at a higher iodepth or numjobs.
fn last_qd_note(drive: &str, suite: SuiteKind, sw: &Sweep) -> Option<String> {
    let k = sw.knee.as_ref().filter(|k| k.at_last_qd)?;
    let further = match suite {
        SuiteKind::Fio => "fio run at a higher iodepth or numjobs shows where it levels off",
        SuiteKind::Quick
        | SuiteKind::Peak
        | SuiteKind::Consistency
        | SuiteKind::Seqfill
        | SuiteKind::Iometer
        | SuiteKind::Mixed
        | SuiteKind::Replay
        | SuiteKind::Powerloss => "a higher --max-qd shows where it levels off",
    };
    Some(format!(
        "{drive}: the knee is the sweep's highest queue depth, QD{}: the curve may \
         still be rising there ({further}).",
        k.qd
    ))
}

/// The selected point's row of the table.
fn knee_row(e: &Entry, w: &SweepEntry, k: &Point) -> Row {
    let drive = e.label;
    let knee = w.sweep.knee.as_ref();
    let dec = decimals(w);
    let unit = &w.unit;
    Row {
        group: Some(e.group.to_string()),
        cells: vec![
            w.label.clone(),
            drive.to_string(),
            format!("{}", k.qd),
            format!("{} {unit}", cell(Some(w.throughput(k)), dec)),
            format!("{} {unit}", cell(knee.map(|k| k.peak_throughput), dec)),
            format!("{} {unit}", cell(knee.map(|k| k.plateau()), dec)),
            cell(knee.map(|k| k.fraction_of_plateau() * 100.0), 1),
            cell(k.lat_mean_us, 1),
            cell(k.lat_p99_us, 1),
            cell(k.lat_p9999_us, 1),
        ],
    }
}

/// The queue depths the early-stop rule left out.
fn skipped_note(drive: &str, sw: &Sweep) -> Option<String> {
    if sw.skipped_qds.is_empty() {
        return None;
    }
    let qds: Vec<String> = sw.skipped_qds.iter().map(|q| q.to_string()).collect();
    Some(format!(
        "{drive}: QD {} not run (throughput fell twice past its peak).",
        qds.join(", ")
    ))
}

/// The points of a sweep measured again because they were within their noise of the
/// knee threshold (issue 14): each with its passes and whether it was settled, and the
/// knee from the first passes alone when it moved.
fn rechecked_note(label: &str, sw: &Sweep) -> Option<String> {
    let again: Vec<String> = sw
        .curve
        .iter()
        .filter(|p| p.passes > 1)
        .map(|p| {
            format!(
                "QD{} ×{}{}",
                p.qd,
                p.passes,
                if p.uncertain {
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
    let moved = match (sw.first_pass_knee_qd, sw.knee.as_ref().map(|k| k.qd)) {
        (Some(a), Some(b)) if a != b => format!("; the knee moved from QD{a} to QD{b}"),
        _ => String::new(),
    };
    Some(format!(
        "{label}: measured again, within noise of the knee threshold: {}{moved}.",
        again.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(qd: u32, passes: u32, uncertain: bool) -> Point {
        serde_json::from_value(serde_json::json!({
            "qd": qd, "iops": 1.0, "mbps": 0.004, "lat_mean_us": null, "lat_p99_us": null,
            "lat_p9999_us": null, "passes": passes, "uncertain": uncertain
        }))
        .unwrap()
    }

    #[test]
    fn re_measured_points_are_noted_with_the_knee_they_moved() {
        let mut sw = Sweep {
            curve: vec![point(4, 3, false), point(8, 1, true), point(16, 2, true)],
            knee: Some(
                drivelab_analysis::qd::knee_95(&[
                    drivelab_analysis::qd::SweepPoint {
                        qd: 4,
                        throughput: 1.0,
                        stderr: 0.0,
                    },
                    drivelab_analysis::qd::SweepPoint {
                        qd: 8,
                        throughput: 10.0,
                        stderr: 0.0,
                    },
                ])
                .unwrap(),
            ),
            skipped_qds: vec![],
            state: None,
            first_pass_knee_qd: Some(4),
        };
        assert_eq!(
            rechecked_note("A", &sw).unwrap(),
            "A: measured again, within noise of the knee threshold: QD4 ×3, QD16 ×2 (still within noise); the knee moved from QD4 to QD8."
        );
        // Sweeps that needed no re-measurement (and bundles from before it): no note.
        sw.curve = vec![point(1, 1, false)];
        assert_eq!(rechecked_note("A", &sw), None);
    }

    /// A knee at the highest QD of a sweep fio ran (imported) is not answered with
    /// drivelab's --max-qd, which fio does not have; a peak suite's sweep is.
    #[test]
    fn a_knee_at_the_last_qd_says_what_extends_the_sweep_of_its_source() {
        let pt = |qd, throughput| drivelab_analysis::qd::SweepPoint {
            qd,
            throughput,
            stderr: 0.0,
        };
        let sw = Sweep {
            curve: vec![point(1, 1, false), point(32, 1, false)],
            knee: drivelab_analysis::qd::knee_95(&[pt(1, 1.0), pt(32, 10.0)]),
            skipped_qds: vec![],
            state: None,
            first_pass_knee_qd: None,
        };
        assert!(sw.knee.as_ref().unwrap().at_last_qd);
        let fio = last_qd_note("A", SuiteKind::Fio, &sw).unwrap();
        assert!(
            fio.contains("fio run at a higher iodepth or numjobs"),
            "{fio}"
        );
        assert!(!fio.contains("--max-qd"), "{fio}");
        let peak = last_qd_note("A", SuiteKind::Peak, &sw).unwrap();
        assert!(peak.contains("a higher --max-qd"), "{peak}");
    }
}
