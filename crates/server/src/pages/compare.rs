//! Runs side by side (`/compare?run=A&run=B…`, a URL to share; drives:
//! [`super::compare_drives`]): each headline number for
//! every run with its ratio to the first, the run-to-run spread where several of the
//! runs are the same test of the same drive, and the report crate's charts with the runs
//! overlaid.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use drivelab_report::bundles::{drive_label, DriveRun};
use drivelab_report::fmt_number;
use drivelab_store::RunRecord;
use maud::{html, Markup};

use super::run::{bundle_bytes, doc_of, load, render_report};
use crate::failure::Failure;
use crate::AppState;

/// Most runs compared at once.
pub const MAX_RUNS: usize = 12;

fn label(r: &RunRecord) -> String {
    let drive = r.device_model.as_deref().unwrap_or(&r.device_path);
    format!("{drive} · {} · {}", r.suite, r.run_id)
}

/// Every headline name, in the order the runs give them.
fn metric_names(runs: &[RunRecord]) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for r in runs {
        for m in &r.metrics {
            if !names.iter().any(|(n, _)| n == &m.name) {
                names.push((m.name.clone(), m.unit.clone()));
            }
        }
    }
    names
}

fn value(r: &RunRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

fn ratios(runs: &[RunRecord]) -> Markup {
    html! {
        table.dl-list #dl-ratios {
            thead { tr {
                th { "Headline" } th { "Unit" }
                @for (i, r) in runs.iter().enumerate() {
                    th { (label(r)) } @if i > 0 { th { "× first" } }
                }
            } }
            tbody { @for (name, unit) in metric_names(runs) {
                tr {
                    td { (name) } td { (unit) }
                    @for (i, r) in runs.iter().enumerate() {
                        td.num { (value(r, &name).map_or("–".into(), |v| fmt_number(v, 1))) }
                        @if i > 0 { td.num.dl-ratio {
                            @match (value(&runs[0], &name), value(r, &name)) {
                                (Some(a), Some(b)) if a != 0.0 => (format!("{:.3}", b / a)),
                                _ => "–",
                            }
                        } }
                    }
                }
            } }
        }
    }
}

/// Runs that repeat one test of one drive (same model, serial and configuration).
fn repeats(runs: &[RunRecord]) -> Vec<Vec<&RunRecord>> {
    let key = |r: &RunRecord| {
        (
            r.device_model.clone(),
            r.device_serial.clone(),
            r.config_hash.clone(),
        )
    };
    let mut groups: Vec<Vec<&RunRecord>> = Vec::new();
    for r in runs {
        match groups.iter_mut().find(|g| key(g[0]) == key(r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

fn spread(runs: &[RunRecord]) -> Markup {
    let groups = repeats(runs);
    html! {
        @for g in &groups {
            table.dl-list.dl-spread {
                caption { "Run-to-run spread: " (g.len()) " runs of " (g[0].device_model.as_deref().unwrap_or(&g[0].device_path)) " (" (g[0].suite) ")" }
                thead { tr { th { "Headline" } th { "Unit" } th { "Mean" } th { "Min" } th { "Max" } th { "Spread % of mean" } } }
                tbody { @for (name, unit) in metric_names(runs) {
                    @let vals: Vec<f64> = g.iter().filter_map(|r| value(r, &name)).collect();
                    @if vals.len() > 1 {
                        @let mean = vals.iter().sum::<f64>() / vals.len() as f64;
                        @let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
                        @let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        tr {
                            td { (name) } td { (unit) }
                            td.num { (fmt_number(mean, 1)) } td.num { (fmt_number(min, 1)) } td.num { (fmt_number(max, 1)) }
                            td.num { @if mean != 0.0 { (format!("{:.1}", (max - min) / mean * 100.0)) } @else { "–" } }
                        }
                    }
                } }
            }
        }
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Response, Failure> {
    let mut ids: Vec<String> = Vec::new();
    let mut drives: Vec<String> = Vec::new();
    for (k, v) in params {
        match k.as_str() {
            "run" if !ids.contains(&v) => ids.push(v),
            "run" => {}
            "drive" => drives.push(v),
            _ => {
                return Err(Failure::bad_request(format!(
                    "{k}: not a compare parameter; give run=ID for each run, or drive=MODEL|SERIAL for each drive"
                )))
            }
        }
    }
    if !drives.is_empty() {
        if !ids.is_empty() {
            return Err(Failure::bad_request(
                "drive: compare runs or drives, not both (give only run=ID or only drive=MODEL|SERIAL)",
            ));
        }
        let keys = super::compare_drives::parse_keys(&drives)?;
        return super::compare_drives::page(state, keys).await;
    }
    if ids.len() < 2 || ids.len() > MAX_RUNS {
        return Err(Failure::bad_request(format!(
            "run: pick 2 to {MAX_RUNS} runs to compare (run=ID&run=ID)"
        )));
    }
    let bytes = bundle_bytes(&state, ids.clone()).await?;
    let _permit = state.renders.permit(bytes).await?;
    let mut runs = Vec::new();
    for id in ids {
        runs.push(load(&state, id).await?);
    }
    let drive_runs: Vec<DriveRun> = runs
        .iter()
        .filter_map(doc_of)
        .map(|d| DriveRun::new(Some(drive_label(&d)), d))
        .collect();
    let html = render_report(&drive_runs)?;
    let head = html! {
        h1 #dl-compare-title { "Comparing " (runs.len()) " runs" }
        (ratios(&runs))
        (spread(&runs))
        @if drive_runs.len() < runs.len() {
            p { "Some runs have no run.json in the database: their charts are missing below." }
        }
    };
    Ok(super::layout::report_with_head(html, head))
}
