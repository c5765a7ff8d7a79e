//! Imported results with fio's per-window logs as series, analysed as drivelab's own:
//! stalls (runs of windows without a completed I/O) for every one, the consistency
//! analysis for long 4K random writes logged each second, the fill analysis for a
//! sequential write.

use serde::{Deserialize, Serialize};

use drivelab_analysis::consistency::{stalls, REVIEW_WINDOW_S};
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
    /// Long 4K random writes logged each second: as the consistency suite analyses its
    /// run (null otherwise).
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

fn entry(s: &StepRecord) -> SeriesEntry {
    let iops = records::iops_series(s);
    let interval_s = s.config.log_interval_ns as f64 / 1e9;
    let st = stalls(&iops);
    let one_s = s.config.log_interval_ns == 1_000_000_000;
    let single_4k = matches!(s.config.bs.as_slice(), [b] if b.bytes == 4096);
    let consistency =
        (s.config.rw == RwMode::RandWrite && single_4k && one_s && iops.len() >= CONSISTENCY_MIN_S)
            .then(|| {
                let mut run = s.clone();
                run.params["continuous"] = serde_json::json!(true);
                let window = REVIEW_WINDOW_S.min(iops.len());
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

/// Each series' stall count as a metric.
pub fn metrics(entries: &[SeriesEntry], steps: &[StepRecord]) -> Vec<Metric> {
    entries
        .iter()
        .filter_map(|e| {
            let name = &steps.iter().find(|s| s.id == e.step)?.name;
            Metric::new(
                format!("{name} windows without I/O"),
                Some(e.stall_windows as f64),
                "windows",
            )
        })
        .collect()
}
