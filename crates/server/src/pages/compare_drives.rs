//! Drives side by side (`/compare?drive=MODEL|SERIAL&drive=…`, a URL to share): every
//! headline number of each drive as the mean of its runs, the run-to-run spread where a
//! drive ran a test more than once, the ratio of each drive's mean to the first drive's
//! (marked `~` where it lies inside either drive's spread), and the report's charts with
//! each drive's newest run of a common suite overlaid.
//!
//! A drive is the store's drive key, as the drive page uses it: the model, and the serial
//! when given (empty after the `|`: every serial of the model).

use std::sync::Arc;

use axum::response::Response;
use drivelab_report::bundles::DriveRun;
use drivelab_report::fmt_number;
use drivelab_store::{RunQuery, RunSummary, SortKey, TextMatch};
use maud::{html, Markup};

use super::run::{bundle_bytes, doc_of, load, render_report};
use super::{field, query_string};
use crate::failure::Failure;
use crate::AppState;

/// Most drives compared at once.
pub const MAX_DRIVES: usize = 6;

/// The newest runs of a drive its numbers are taken from.
pub const MAX_RUNS_PER_DRIVE: u64 = 500;

/// Runs looked at (newest first) to find one that keeps its run.json for the charts.
const CHART_CANDIDATES: usize = 3;

/// One drive as the URL names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriveKey {
    pub model: String,
    pub serial: Option<String>,
}

impl DriveKey {
    /// `MODEL|SERIAL` (split at the last `|`; no `|` or nothing after it: any serial).
    pub fn parse(value: &str) -> Result<DriveKey, Failure> {
        let (model, serial) = match value.rsplit_once('|') {
            Some((m, s)) => (m, Some(s.to_string())),
            None => (value, None),
        };
        let model = field("drive", &Some(model.to_string()))?.ok_or_else(|| {
            Failure::bad_request("drive: give MODEL|SERIAL (the serial may be empty)")
        })?;
        let serial = field("drive", &serial)?;
        Ok(DriveKey { model, serial })
    }

    /// The URL value that names this drive.
    pub fn value(&self) -> String {
        format!("{}|{}", self.model, self.serial.as_deref().unwrap_or(""))
    }

    /// The key of a listed run's drive (None: the run names no model).
    pub fn of(r: &RunSummary) -> Option<DriveKey> {
        Some(DriveKey {
            model: r.device_model.clone()?,
            serial: r.device_serial.clone(),
        })
    }

    fn label(&self) -> String {
        match &self.serial {
            Some(s) => format!("{} ({s})", self.model),
            None => self.model.clone(),
        }
    }

    fn query(&self) -> RunQuery {
        RunQuery {
            model: Some(TextMatch::Exact(self.model.clone())),
            serial: self.serial.clone().map(TextMatch::Exact),
            sort: SortKey::Started,
            descending: true,
            limit: MAX_RUNS_PER_DRIVE,
            ..RunQuery::default()
        }
    }
}

/// A drive's runs (newest first) and how many it has in all.
struct Drive {
    key: DriveKey,
    total: u64,
    runs: Vec<RunSummary>,
}

/// One headline number of one drive over its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    mean: f64,
    min: f64,
    max: f64,
    n: usize,
}

impl Stat {
    fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        Some(Stat {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n: values.len(),
        })
    }

    /// (max − min) as a fraction of the mean, where the runs repeat.
    fn spread(&self) -> Option<f64> {
        (self.n > 1 && self.mean != 0.0).then(|| (self.max - self.min) / self.mean.abs())
    }
}

fn stat(d: &Drive, name: &str) -> Option<Stat> {
    let values: Vec<f64> = d
        .runs
        .iter()
        .filter_map(|r| r.metrics.iter().find(|m| m.name == name).map(|m| m.value))
        .collect();
    Stat::of(&values)
}

/// Every headline name and unit, in the order the drives' runs give them.
fn metric_names(drives: &[Drive]) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for m in drives.iter().flat_map(|d| &d.runs).flat_map(|r| &r.metrics) {
        if !names.iter().any(|(n, _)| n == &m.name) {
            names.push((m.name.clone(), m.unit.clone()));
        }
    }
    names
}

/// The ratio of `b` to `a`, with `~` where the difference lies inside either spread.
fn ratio(a: Option<Stat>, b: Option<Stat>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a.mean != 0.0 => {
            let r = b.mean / a.mean;
            let noise = a.spread().unwrap_or(0.0).max(b.spread().unwrap_or(0.0));
            let within = noise > 0.0 && (r - 1.0).abs() <= noise;
            format!("{}{r:.3}", if within { "~" } else { "" })
        }
        _ => "–".into(),
    }
}

fn cell(s: Option<Stat>) -> Markup {
    html! {
        @match s {
            None => "–",
            Some(s) => {
                (fmt_number(s.mean, 1))
                @if let Some(sp) = s.spread() {
                    br; small.dl-spread { (s.n) " runs, " (fmt_number(s.min, 1)) "–" (fmt_number(s.max, 1)) ", spread " (format!("{:.1}", sp * 100.0)) " %" }
                }
            }
        }
    }
}

fn table(drives: &[Drive]) -> Markup {
    html! {
        table.dl-list #dl-drive-ratios {
            thead { tr {
                th { "Headline" } th { "Unit" }
                @for (i, d) in drives.iter().enumerate() {
                    th { a href={ "/drive?" (query_string(&drive_pairs(&d.key))) } { (d.key.label()) } }
                    @if i > 0 { th { "× first" } }
                }
            } }
            tbody { @for (name, unit) in metric_names(drives) {
                tr {
                    td { (name) } td { (unit) }
                    @for (i, d) in drives.iter().enumerate() {
                        td.num { (cell(stat(d, &name))) }
                        @if i > 0 { td.num.dl-ratio { (ratio(stat(&drives[0], &name), stat(d, &name))) } }
                    }
                }
            } }
        }
    }
}

fn drive_pairs(k: &DriveKey) -> Vec<(&str, &str)> {
    let mut pairs = vec![("model", k.model.as_str())];
    if let Some(s) = &k.serial {
        pairs.push(("serial", s.as_str()));
    }
    pairs
}

/// The suite most of the drives ran (the first drive's newest on a tie): its runs are
/// the ones whose charts can be overlaid.
fn common_suite(drives: &[Drive]) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for r in drives.iter().flat_map(|d| &d.runs) {
        let n = drives
            .iter()
            .filter(|d| d.runs.iter().any(|x| x.suite == r.suite))
            .count();
        if best.is_none_or(|(b, _)| n > b) {
            best = Some((n, &r.suite));
        }
    }
    best.map(|(_, s)| s.to_string())
}

/// The report of each drive's newest run of `suite` that keeps a readable run.json,
/// labelled by drive (read and drawn within the drawing budget), and how many drives it
/// shows.
async fn draw_charts(
    state: &AppState,
    drives: &[Drive],
    suite: Option<&str>,
) -> Result<(String, usize), Failure> {
    let candidates = |d: &Drive| -> Vec<String> {
        d.runs
            .iter()
            .filter(|r| Some(r.suite.as_str()) == suite)
            .take(CHART_CANDIDATES)
            .map(|r| r.run_id.clone())
            .collect()
    };
    let all: Vec<String> = drives.iter().flat_map(candidates).collect();
    let _permit = state
        .renders
        .permit(bundle_bytes(state, all).await?)
        .await?;
    let mut out = Vec::new();
    for d in drives {
        for id in candidates(d) {
            if let Some(doc) = doc_of(&load(state, id).await?) {
                out.push(DriveRun::new(Some(d.key.label()), doc));
                break;
            }
        }
    }
    Ok((render_report(&out)?, out.len()))
}

/// The drives the query names (2 to [`MAX_DRIVES`], each once).
pub fn parse_keys(values: &[String]) -> Result<Vec<DriveKey>, Failure> {
    let mut keys: Vec<DriveKey> = Vec::new();
    for v in values {
        let k = DriveKey::parse(v)?;
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    if keys.len() < 2 || keys.len() > MAX_DRIVES {
        return Err(Failure::bad_request(format!(
            "drive: pick 2 to {MAX_DRIVES} drives to compare (drive=MODEL|SERIAL&drive=MODEL|SERIAL)"
        )));
    }
    Ok(keys)
}

pub async fn page(state: Arc<AppState>, keys: Vec<DriveKey>) -> Result<Response, Failure> {
    let mut drives = Vec::new();
    for key in keys {
        let query = key.query();
        let page = state.db.with(move |s| s.page_runs(&query)).await?;
        if page.runs.is_empty() {
            return Err(Failure::not_found(format!(
                "no runs of drive {} in this database",
                key.label()
            )));
        }
        drives.push(Drive {
            key,
            total: page.total,
            runs: page.runs,
        });
    }
    let suite = common_suite(&drives);
    let (html, charted) = draw_charts(&state, &drives, suite.as_deref()).await?;
    let head = html! {
        h1 #dl-compare-title { "Comparing " (drives.len()) " drives" }
        p { "Each number is the mean of the drive's runs"
            @if drives.iter().any(|d| d.total > MAX_RUNS_PER_DRIVE) { " (its newest " (MAX_RUNS_PER_DRIVE) ")" }
            "; where a drive ran a test more than once, its runs' range and spread (max − min, % of the mean) are under it. A ratio marked ~ lies inside that spread." }
        ul #dl-compared-drives { @for d in &drives { li { (d.key.label()) ": " (d.total) " runs" } } }
        (table(&drives))
        @if let Some(s) = &suite {
            p { "Charts: each drive's newest " (s) " run that keeps its run.json ("
                (charted) " of " (drives.len()) " drives)." }
        }
    };
    Ok(super::layout::report_with_head(html, head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drive_is_named_by_model_and_serial_split_at_the_last_bar() {
        let k = DriveKey::parse("Vendor | Model 1TB|SN|1").unwrap();
        assert_eq!(k.model, "Vendor | Model 1TB|SN");
        assert_eq!(k.serial.as_deref(), Some("1"));
        assert_eq!(DriveKey::parse("Model|").unwrap().serial, None);
        assert_eq!(DriveKey::parse("Model").unwrap().serial, None);
        let k = DriveKey::parse("A|B").unwrap();
        assert_eq!(DriveKey::parse(&k.value()).unwrap(), k);
        assert!(DriveKey::parse("|S").is_err());
    }

    #[test]
    fn a_ratio_inside_the_spread_is_marked() {
        let a = Stat::of(&[100.0, 110.0]);
        let b = Stat::of(&[105.0]);
        assert_eq!(ratio(a, b), "~1.000");
        let c = Stat::of(&[200.0]);
        assert_eq!(ratio(a, c), "1.905");
        assert_eq!(ratio(Stat::of(&[100.0]), c), "2.000");
        assert_eq!(ratio(None, c), "–");
    }
}
