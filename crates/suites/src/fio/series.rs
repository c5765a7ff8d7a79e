//! Imported results with fio's per-window logs as series, analysed as drivelab's own:
//! stalls (runs of windows without a completed I/O) for every one, the consistency
//! analysis for long 4K random writes logged each second, the fill analysis for a
//! sequential write.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use drivelab_analysis::consistency::{stalls, REVIEW_WINDOW_S};
use drivelab_engine::series::{IntervalDir, IntervalRecord};
use drivelab_engine::spec::RwMode;

use crate::bundle::{Metric, StepRecord};
use crate::consistency::{self, ConsistencyAnalysis};
use crate::records;
use crate::seqfill::{self, SeqFillAnalysis};

/// Shortest run of 4K random writes the consistency analysis is made for (its window
/// is the review's 400 s at most, the run's length when shorter).
pub const CONSISTENCY_MIN_S: usize = 300;

/// Seconds of a consistency analysis' rounds (its steady-state rule).
const ROUND_S: usize = 60;

/// One result's series analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesEntry {
    /// The step's id.
    pub step: String,
    /// Length of a window (fio's log_avg_msec).
    pub interval_s: f64,
    pub windows: usize,
    /// Runs of windows without a completed I/O, and the windows in them.
    pub stalls: usize,
    pub stall_windows: usize,
    /// The longest such run, in seconds.
    pub longest_stall_s: f64,
    /// Long 4K random writes logged each second or more often (finer windows regrouped
    /// to seconds, [`per_second`]: the consistency methodology scores seconds): as the
    /// consistency suite analyses its run (null otherwise).
    pub consistency: Option<ConsistencyAnalysis>,
    /// A sequential write: as the seqfill suite analyses its fill (null otherwise).
    pub fill: Option<SeqFillAnalysis>,
}

/// The series of the steps that have logs (`logged[i]`).
pub fn analyse(steps: &[StepRecord], logged: &[bool]) -> Vec<SeriesEntry> {
    steps
        .iter()
        .zip(logged)
        .filter(|(s, &l)| l && records::totals(s).is_some())
        .map(|(s, _)| entry(s))
        .collect()
}

/// The step as the consistency analysis reads it: logged each second (windows shorter
/// than a second regrouped, [`per_second`]) and marked as one continuous run; None when
/// it is not long 4K random writes logged each second or more often.
pub fn consistency_run(s: &StepRecord) -> Option<StepRecord> {
    let single_4k = matches!(s.config.bs.as_slice(), [b] if b.bytes == 4096);
    let fine = s.config.log_interval_ns <= SECOND_NS;
    if s.config.rw != RwMode::RandWrite || !single_4k || !fine {
        return None;
    }
    let mut run = per_second(s).into_owned();
    run.params["continuous"] = serde_json::json!(true);
    (records::iops_series(&run).len() >= CONSISTENCY_MIN_S).then_some(run)
}

const SECOND_NS: u64 = 1_000_000_000;

/// The step with its series regrouped to one-second windows when fio logged it more
/// often (`log_avg_msec` below 1000: 250 ms gives four windows a second), as the
/// consistency methodology scores seconds; the step itself otherwise. A second's
/// window holds the windows that start in it: I/Os and bytes summed, rates over the
/// windows' time, the mean latency weighted by I/Os; its percentiles are not known
/// (fio logs each window's mean) unless it is one window.
pub fn per_second(s: &StepRecord) -> Cow<'_, StepRecord> {
    let Some(run) = s.run.as_ref() else {
        return Cow::Borrowed(s);
    };
    let iv = run.series.interval_ns;
    if iv == 0 || iv >= SECOND_NS {
        return Cow::Borrowed(s);
    }
    let mut out = s.clone();
    let recs: Vec<IntervalRecord> = run.series.records.iter().collect();
    let mut merged: Vec<IntervalRecord> = Vec::new();
    let mut i = 0;
    while i < recs.len() {
        let sec = recs[i].start_ns / SECOND_NS;
        let n = recs[i..]
            .iter()
            .take_while(|r| r.start_ns / SECOND_NS == sec)
            .count();
        merged.push(merge(&recs[i..i + n], merged.len() as u64));
        i += n;
    }
    if let Some(r) = out.run.as_mut() {
        r.series.records = merged.into();
        r.series.interval_ns = SECOND_NS;
    }
    out.config.log_interval_ns = SECOND_NS;
    Cow::Owned(out)
}

/// Consecutive windows as one (`index`: its place in the new series).
fn merge(w: &[IntervalRecord], index: u64) -> IntervalRecord {
    let last = &w[w.len() - 1];
    let duration_ns: u64 = w.iter().map(|r| r.duration_ns).sum();
    let dir = |f: fn(&IntervalRecord) -> &IntervalDir| merge_dir(w.iter().map(f), duration_ns);
    IntervalRecord {
        index,
        start_ns: w[0].start_ns,
        duration_ns,
        ramp: w.iter().all(|r| r.ramp),
        read: dir(|r| &r.read),
        write: dir(|r| &r.write),
        all: dir(|r| &r.all),
        cum_write_bytes: last.cum_write_bytes,
        sensors: last.sensors.clone(),
        over_link_ceiling: w.iter().any(|r| r.over_link_ceiling),
    }
}

fn merge_dir<'a>(ds: impl Iterator<Item = &'a IntervalDir> + Clone, dur_ns: u64) -> IntervalDir {
    let secs = dur_ns.max(1) as f64 / 1e9;
    let ops: u64 = ds.clone().map(|d| d.ops).sum();
    let bytes: u64 = ds.clone().map(|d| d.bytes).sum();
    let weighted: Vec<(f64, u64)> = ds
        .clone()
        .filter(|d| d.ops > 0)
        .filter_map(|d| Some((d.lat_mean_ns?, d.ops)))
        .collect();
    let with_ops = ds.clone().filter(|d| d.ops > 0).count();
    let lat_mean_ns = (!weighted.is_empty() && weighted.len() == with_ops).then(|| {
        weighted.iter().map(|(m, n)| m * *n as f64).sum::<f64>()
            / weighted.iter().map(|w| w.1).sum::<u64>() as f64
    });
    let one = ds.clone().count() == 1;
    let first = ds.clone().next();
    IntervalDir {
        ops,
        bytes,
        ops_per_s: ops as f64 / secs,
        bytes_per_s: bytes as f64 / secs,
        lat_mean_ns,
        lat_p50_ns: first.and_then(|d| d.lat_p50_ns).filter(|_| one),
        lat_p99_ns: first.and_then(|d| d.lat_p99_ns).filter(|_| one),
        lat_p9999_ns: first.and_then(|d| d.lat_p9999_ns).filter(|_| one),
        lat_max_ns: ds.clone().filter_map(|d| d.lat_max_ns).max(),
        errors: ds.map(|d| d.errors).sum(),
    }
}

fn entry(s: &StepRecord) -> SeriesEntry {
    let iops = records::iops_series(s);
    let interval_s = s.config.log_interval_ns as f64 / 1e9;
    let st = stalls(&iops);
    let consistency = consistency_run(s).map(|run| {
        let window = REVIEW_WINDOW_S.min(records::iops_series(&run).len());
        consistency::analyze(&[run], window, ROUND_S)
    });
    let fill = (s.config.rw == RwMode::Write && iops.len() >= 2)
        .then(|| seqfill::analyze(s, seqfill::SeqFill::new(false).drop_fraction));
    SeriesEntry {
        step: s.id.clone(),
        interval_s,
        windows: iops.len(),
        stalls: st.len(),
        stall_windows: st.iter().map(|x| x.len_s).sum(),
        longest_stall_s: st.iter().map(|x| x.len_s).max().unwrap_or(0) as f64 * interval_s,
        consistency,
        fill,
    }
}

/// Each series' stall count as a metric, and the consistency and fill analyses' headline
/// metrics by the names their suites give them ([`consistency::headline_metrics`],
/// [`seqfill::headline_metrics`]), so `compare`, `db` and `serve` see an import's like a
/// native run's; a step's name goes before them only when several series have one.
pub fn metrics(entries: &[SeriesEntry], steps: &[StepRecord]) -> Vec<Metric> {
    let name_of = |e: &SeriesEntry| steps.iter().find(|s| s.id == e.step).map(|s| &s.name);
    let mut out: Vec<Metric> = entries
        .iter()
        .filter_map(|e| {
            Metric::new(
                format!("{} windows without I/O", name_of(e)?),
                Some(e.stall_windows as f64),
                "windows",
            )
        })
        .collect();
    let analysed = |f: fn(&SeriesEntry) -> Vec<Metric>| {
        let each: Vec<(&SeriesEntry, Vec<Metric>)> = entries
            .iter()
            .map(|e| (e, f(e)))
            .filter(|(_, m)| !m.is_empty())
            .collect();
        let several = each.len() > 1;
        each.into_iter().flat_map(move |(e, ms)| {
            let prefix = name_of(e).filter(|_| several).cloned();
            ms.into_iter().map(move |mut m| {
                if let Some(p) = &prefix {
                    m.name = format!("{p}: {}", m.name);
                }
                m
            })
        })
    };
    let consistency = |e: &SeriesEntry| {
        e.consistency
            .as_ref()
            .map(consistency::headline_metrics)
            .unwrap_or_default()
    };
    let fill = |e: &SeriesEntry| {
        e.fill
            .as_ref()
            .map(seqfill::headline_metrics)
            .unwrap_or_default()
    };
    let extra: Vec<Metric> = analysed(consistency).chain(analysed(fill)).collect();
    out.extend(extra);
    out
}
