//! One drive (a model, and a serial when given): all its runs, oldest first, and how each
//! headline number moved across them, coloured by firmware — drawn with the report
//! crate's charts and tables.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use drivelab_report::{fmt_number, Axis, Chart, Column, Report, Row, Section, Series, Table};
use drivelab_store::{RunQuery, RunSummary, SortKey, TextMatch};
use maud::html;
use serde::Deserialize;

use super::field;
use crate::failure::Failure;
use crate::AppState;

/// Most runs a drive page shows (the newest are dropped past it, and it says so).
pub const MAX_RUNS: u64 = 2000;

/// Most headline charts on a drive page.
const MAX_CHARTS: usize = 24;

#[derive(Debug, Default, Deserialize)]
pub struct Params {
    model: Option<String>,
    serial: Option<String>,
}

fn firmware(r: &RunSummary) -> String {
    r.device_firmware
        .clone()
        .unwrap_or_else(|| "firmware unknown".into())
}

/// One chart per (suite, headline): x is the run's place in time, one group per firmware.
fn history_charts(runs: &[RunSummary]) -> Vec<Chart> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in runs {
        for m in &r.metrics {
            let k = (r.suite.clone(), m.name.clone(), m.unit.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.truncate(MAX_CHARTS);
    keys.iter()
        .enumerate()
        .map(|(i, (suite, name, unit))| {
            let mut chart = Chart::new(
                format!("drive-history-{i}"),
                format!("{name} ({suite})"),
                Axis::linear("Run", "count from the oldest"),
                Axis::linear(name.clone(), unit.clone()),
            );
            let mut groups: Vec<String> = Vec::new();
            for r in runs {
                if !groups.contains(&firmware(r)) {
                    groups.push(firmware(r));
                }
            }
            for g in groups {
                let points: Vec<(f64, f64)> = runs
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.suite == *suite && firmware(r) == g)
                    .filter_map(|(x, r)| {
                        let m = r.metrics.iter().find(|m| &m.name == name)?;
                        Some(((x + 1) as f64, m.value))
                    })
                    .collect();
                if !points.is_empty() {
                    chart = chart.with_series(Series::scatter(g.clone(), g, points));
                }
            }
            chart
        })
        .collect()
}

fn runs_table(runs: &[RunSummary]) -> Table {
    Table {
        caption: "Runs, oldest first".into(),
        columns: vec![
            Column::text("#"),
            Column::text("Run"),
            Column::text("Started (UTC)"),
            Column::text("Firmware"),
            Column::text("Suite"),
            Column::text("Host"),
            Column::text("Status"),
            Column::text("Headline"),
        ],
        rows: runs
            .iter()
            .enumerate()
            .map(|(i, r)| Row {
                group: Some(firmware(r)),
                cells: vec![
                    (i + 1).to_string(),
                    r.run_id.clone(),
                    r.started_at.clone(),
                    firmware(r),
                    r.suite.clone(),
                    r.host_name.clone(),
                    r.status.clone(),
                    r.metrics.first().map_or_else(String::new, |m| {
                        format!("{} {} {}", m.name, fmt_number(m.value, 1), m.unit)
                    }),
                ],
            })
            .collect(),
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Query(p): Query<Params>,
) -> Result<Response, Failure> {
    let model = field("model", &p.model)?
        .ok_or_else(|| Failure::bad_request("model: give the drive's model"))?;
    let serial = field("serial", &p.serial)?;
    let query = RunQuery {
        model: Some(TextMatch::Exact(model.clone())),
        serial: serial.clone().map(TextMatch::Exact),
        sort: SortKey::Started,
        descending: false,
        limit: MAX_RUNS,
        ..RunQuery::default()
    };
    let page = state.db.with(move |s| s.page_runs(&query)).await?;
    if page.runs.is_empty() {
        return Err(Failure::not_found("no runs of this drive in this database"));
    }
    let runs = page.runs;
    let mut firmwares: Vec<String> = Vec::new();
    for r in &runs {
        if !firmwares.contains(&firmware(r)) {
            firmwares.push(firmware(r));
        }
    }
    let mut section = Section::new("Headline numbers across firmware and time");
    for c in history_charts(&runs) {
        section = section.chart(c);
    }
    let report = Report::new(format!("Drive {model}"))
        .groups(firmwares)
        .section(Section::new("Runs").table(runs_table(&runs)))
        .section(section);
    let html = report.render().map_err(|e| {
        Failure::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            format!("the drive's charts cannot be drawn: {e}"),
        )
    })?;
    let head = html! {
        h1 #dl-drive-title { (model) }
        p { "Serial: " (serial.as_deref().unwrap_or("any")) " · " (page.total) " runs"
            @if page.total > MAX_RUNS { " (the oldest " (MAX_RUNS) " shown)" } }
        ul #dl-drive-runs { @for r in &runs {
            li { a href={ "/runs/" (r.run_id) } { (r.started_at) " " (r.suite) " (" (firmware(r)) ")" } }
        } }
    };
    Ok(super::layout::report_with_head(html, head))
}
