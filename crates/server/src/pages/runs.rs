//! The runs page: every run, filtered by drive model, firmware, serial, capacity,
//! connection (transport and link), suite, host, date and status, sorted on any column, a page at a time (one COUNT and one
//! LIMIT/OFFSET query: fast on tens of thousands of runs), with boxes to pick runs to
//! compare.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use drivelab_store::{RunQuery, RunSummary, SortKey, TextMatch, STATUSES};
use maud::{html, Markup};
use serde::Deserialize;

use super::compare_drives::DriveKey;
use super::{capacity, field, query_string};
use crate::failure::Failure;
use crate::AppState;

/// Runs on one page.
pub const PAGE_SIZE: u64 = 50;

/// The page's query string, as typed into the filter form.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct Params {
    model: Option<String>,
    firmware: Option<String>,
    serial: Option<String>,
    capacity: Option<String>,
    connection: Option<String>,
    suite: Option<String>,
    host: Option<String>,
    status: Option<String>,
    since: Option<String>,
    until: Option<String>,
    sort: Option<String>,
    dir: Option<String>,
    page: Option<String>,
}

/// The filters as checked values.
struct Filters {
    model: Option<String>,
    firmware: Option<String>,
    serial: Option<String>,
    capacity: Option<String>,
    connection: Option<String>,
    suite: Option<String>,
    host: Option<String>,
    status: Option<String>,
    since: Option<String>,
    until: Option<String>,
    sort: SortKey,
    descending: bool,
    page: u64,
}

impl Filters {
    fn parse(p: &Params) -> Result<Filters, Failure> {
        let sort = match field("sort", &p.sort)? {
            None => SortKey::Started,
            Some(s) => SortKey::from_name(&s).ok_or_else(|| {
                let names: Vec<&str> = SortKey::ALL.iter().map(|k| k.name()).collect();
                Failure::bad_request(format!("sort: give one of {}", names.join(", ")))
            })?,
        };
        let descending = match field("dir", &p.dir)?.as_deref() {
            None | Some("desc") => true,
            Some("asc") => false,
            Some(_) => return Err(Failure::bad_request("dir: give asc or desc")),
        };
        let page = match field("page", &p.page)? {
            None => 1,
            Some(n) => n
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| Failure::bad_request("page: give a page number from 1"))?,
        };
        let capacity = field("capacity", &p.capacity)?;
        if capacity
            .as_deref()
            .is_some_and(|c| c.parse::<u64>().is_err())
        {
            return Err(Failure::bad_request("capacity: give a capacity in bytes"));
        }
        let status = field("status", &p.status)?;
        if status.as_deref().is_some_and(|s| !STATUSES.contains(&s)) {
            return Err(Failure::bad_request(format!(
                "status: give one of {}",
                STATUSES.join(", ")
            )));
        }
        Ok(Filters {
            model: field("model", &p.model)?,
            firmware: field("firmware", &p.firmware)?,
            serial: field("serial", &p.serial)?,
            capacity,
            connection: field("connection", &p.connection)?,
            suite: field("suite", &p.suite)?,
            host: field("host", &p.host)?,
            status,
            since: field("since", &p.since)?,
            until: field("until", &p.until)?,
            sort,
            descending,
            page,
        })
    }

    fn query(&self) -> RunQuery {
        let contains = |v: &Option<String>| v.clone().map(TextMatch::Contains);
        RunQuery {
            model: contains(&self.model),
            firmware: contains(&self.firmware),
            serial: contains(&self.serial),
            host: contains(&self.host),
            connection: contains(&self.connection),
            suite: self.suite.clone(),
            status: self.status.clone(),
            capacity_bytes: self.capacity.as_deref().and_then(|c| c.parse().ok()),
            since: self.since.clone(),
            until: self.until.clone(),
            sort: self.sort,
            descending: self.descending,
            offset: (self.page - 1) * PAGE_SIZE,
            limit: PAGE_SIZE,
        }
    }

    /// The filter fields that are set, for links that keep them.
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("model", &self.model),
            ("firmware", &self.firmware),
            ("serial", &self.serial),
            ("capacity", &self.capacity),
            ("connection", &self.connection),
            ("suite", &self.suite),
            ("host", &self.host),
            ("status", &self.status),
            ("since", &self.since),
            ("until", &self.until),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }

    /// This listing sorted on `key` (the other direction when already sorted on it).
    fn sort_link(&self, key: SortKey) -> String {
        let dir = if key == self.sort && self.descending {
            "asc"
        } else {
            "desc"
        };
        let mut pairs = self.pairs();
        pairs.push(("sort", key.name()));
        pairs.push(("dir", dir));
        format!("/runs?{}", query_string(&pairs))
    }

    fn page_link(&self, page: u64) -> String {
        let mut pairs = self.pairs();
        let sort = self.sort.name();
        let dir = if self.descending { "desc" } else { "asc" };
        let page = page.to_string();
        pairs.extend([("sort", sort), ("dir", dir), ("page", page.as_str())]);
        format!("/runs?{}", query_string(&pairs))
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<Params>,
) -> Result<Response, Failure> {
    let filters = Filters::parse(&params)?;
    let query = filters.query();
    let page = state.db.with(move |s| s.page_runs(&query)).await?;
    let pages = page.total.div_ceil(PAGE_SIZE).max(1);
    let body = html! {
        h1 { "Runs" }
        (filter_form(&filters))
        p #dl-count { (page.total) " runs" @if page.total > 0 { ", page " (filters.page) " of " (pages) } }
        form #dl-compare-form action="/compare" method="get" {
            (runs_table(&filters, &page.runs))
            button type="submit" { "Compare selected" }
        }
        p.dl-pages {
            @if filters.page > 1 { a rel="prev" href=(filters.page_link(filters.page - 1)) { "← newer page" } " " }
            @if filters.page < pages { a rel="next" href=(filters.page_link(filters.page + 1)) { "next page →" } }
        }
    };
    Ok(super::layout::page("Runs", body))
}

fn filter_form(f: &Filters) -> Markup {
    let text = |name: &str, label: &str, v: &Option<String>| {
        html! { label { (label) " " input type="text" name=(name) value=(v.as_deref().unwrap_or("")); } }
    };
    html! {
        form.dl-filter #dl-filter action="/runs" method="get" {
            (text("model", "Model", &f.model))
            (text("firmware", "Firmware", &f.firmware))
            (text("serial", "Serial", &f.serial))
            (text("capacity", "Capacity (bytes)", &f.capacity))
            (text("connection", "Connection", &f.connection))
            (text("suite", "Suite", &f.suite))
            (text("host", "Host", &f.host))
            label { "Status " select name="status" {
                option value="" { "any" }
                @for s in STATUSES { option value=(s) selected[f.status.as_deref() == Some(s)] { (s) } }
            } }
            (text("since", "From (UTC)", &f.since))
            (text("until", "Before (UTC)", &f.until))
            button type="submit" { "Filter" }
        }
    }
}

fn drive_link(r: &RunSummary) -> Option<String> {
    let model = r.device_model.as_deref()?;
    let mut pairs = vec![("model", model)];
    if let Some(s) = r.device_serial.as_deref() {
        pairs.push(("serial", s));
    }
    Some(format!("/drive?{}", query_string(&pairs)))
}

fn headline(r: &RunSummary) -> String {
    r.metrics.first().map_or_else(String::new, |m| {
        format!(
            "{} {} {}",
            m.name,
            drivelab_report::fmt_number(m.value, 1),
            m.unit
        )
    })
}

fn runs_table(f: &Filters, runs: &[RunSummary]) -> Markup {
    let head = |key: SortKey, label: &str| {
        let mark = match (key == f.sort, f.descending) {
            (true, true) => " ▼",
            (true, false) => " ▲",
            _ => "",
        };
        html! { th { a href=(f.sort_link(key)) { (label) (mark) } } }
    };
    html! {
        table.dl-list #dl-runs {
            thead { tr {
                th { "Pick run" }
                (head(SortKey::Started, "Started (UTC)"))
                (head(SortKey::Model, "Model"))
                (head(SortKey::Firmware, "Firmware"))
                (head(SortKey::Serial, "Serial"))
                (head(SortKey::Capacity, "Capacity"))
                (head(SortKey::Connection, "Connection"))
                (head(SortKey::Suite, "Suite"))
                (head(SortKey::Host, "Host"))
                th { "Uploaded by" }
                (head(SortKey::Status, "Status"))
                th { "Headline" }
                th { "Pick drive" }
            } }
            tbody {
                @for r in runs {
                    tr data-run=(r.run_id) {
                        td { input type="checkbox" name="run" value=(r.run_id); }
                        td { a.dl-run href={ "/runs/" (r.run_id) } { (r.started_at) } }
                        td { @match drive_link(r) {
                            Some(l) => a.dl-drive href=(l) { (r.device_model.as_deref().unwrap_or("")) },
                            None => (r.device_path),
                        } }
                        td { (r.device_firmware.as_deref().unwrap_or("–")) }
                        td { (r.device_serial.as_deref().unwrap_or("–")) }
                        td.num { (capacity(r.device_capacity_bytes)) }
                        td.dl-connection { (r.device_connection.as_deref().unwrap_or("–")) }
                        td { (r.suite) }
                        td { (r.host_name) }
                        td.dl-uploader { (r.uploaded_by.as_deref().unwrap_or("–")) }
                        td { (r.status) }
                        td { (headline(r)) }
                        td { @if let Some(k) = DriveKey::of(r) { input.dl-pick-drive type="checkbox" name="drive" value=(k.value()); } }
                    }
                }
            }
        }
    }
}
