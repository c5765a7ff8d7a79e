//! One page of a filtered, sorted listing and the count of all runs it matches: what a
//! results browser shows over tens of thousands of runs without loading them all.

use crate::conn::{like_escape, Backend, Param};
use crate::error::StoreError;
use crate::record::RunSummary;
use crate::store::{load_metrics, summary_from_row, Store, SUMMARY_COLUMNS};

/// How a text filter matches a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextMatch {
    /// The column contains this text (ASCII case-insensitive).
    Contains(String),
    /// The column is exactly this text.
    Exact(String),
}

/// The column a page is sorted on (ties broken by start time, then run id).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Start time (the default: newest first when descending).
    #[default]
    Started,
    /// Device model.
    Model,
    /// Firmware revision.
    Firmware,
    /// Serial number.
    Serial,
    /// Capacity in bytes.
    Capacity,
    /// Suite name.
    Suite,
    /// Host name.
    Host,
    /// Run status.
    Status,
    /// How the drive was connected.
    Connection,
}

impl SortKey {
    /// Every key, for parsing and for listing the accepted values.
    pub const ALL: [SortKey; 9] = [
        SortKey::Started,
        SortKey::Model,
        SortKey::Firmware,
        SortKey::Serial,
        SortKey::Capacity,
        SortKey::Suite,
        SortKey::Host,
        SortKey::Status,
        SortKey::Connection,
    ];

    /// The key's name in URLs and messages.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Started => "started",
            SortKey::Model => "model",
            SortKey::Firmware => "firmware",
            SortKey::Serial => "serial",
            SortKey::Capacity => "capacity",
            SortKey::Suite => "suite",
            SortKey::Host => "host",
            SortKey::Status => "status",
            SortKey::Connection => "connection",
        }
    }

    /// The key named `name`, if any.
    pub fn from_name(name: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether a run may have no value in this column (a drive that does not say).
    fn may_be_missing(self) -> bool {
        match self {
            SortKey::Started | SortKey::Suite | SortKey::Host | SortKey::Status => false,
            SortKey::Model
            | SortKey::Firmware
            | SortKey::Serial
            | SortKey::Capacity
            | SortKey::Connection => true,
        }
    }

    fn column(self) -> &'static str {
        match self {
            SortKey::Started => "started_at",
            SortKey::Model => "device_model",
            SortKey::Firmware => "device_firmware",
            SortKey::Serial => "device_serial",
            SortKey::Capacity => "device_capacity_bytes",
            SortKey::Suite => "suite",
            SortKey::Host => "host_name",
            SortKey::Status => "status",
            SortKey::Connection => "device_connection",
        }
    }
}

/// Which runs a page shows, in which order, and which slice of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunQuery {
    /// Device model.
    pub model: Option<TextMatch>,
    /// Firmware revision.
    pub firmware: Option<TextMatch>,
    /// Serial number.
    pub serial: Option<TextMatch>,
    /// Host name.
    pub host: Option<TextMatch>,
    /// How the drive was connected (transport and link, e.g. "USB 3.2 Gen 2, UAS").
    pub connection: Option<TextMatch>,
    /// Suite (exact).
    pub suite: Option<String>,
    /// Status (exact).
    pub status: Option<String>,
    /// Capacity in bytes (exact).
    pub capacity_bytes: Option<u64>,
    /// Started at or after this RFC 3339 text (compared as text, as listings sort).
    pub since: Option<String>,
    /// Started before this RFC 3339 text.
    pub until: Option<String>,
    /// Sort column.
    pub sort: SortKey,
    /// Largest first.
    pub descending: bool,
    /// Runs skipped before the page.
    pub offset: u64,
    /// Runs on the page.
    pub limit: u64,
}

impl Default for RunQuery {
    fn default() -> Self {
        RunQuery {
            model: None,
            firmware: None,
            serial: None,
            host: None,
            connection: None,
            suite: None,
            status: None,
            capacity_bytes: None,
            since: None,
            until: None,
            sort: SortKey::Started,
            descending: true,
            offset: 0,
            limit: 50,
        }
    }
}

/// One page of runs and how many runs the query matches in all.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPage {
    /// Runs matching the query's filters (not only this page).
    pub total: u64,
    /// This page's runs, with their headline metrics.
    pub runs: Vec<RunSummary>,
}

/// The query's `WHERE` clause (empty when it filters nothing) and its parameters.
fn where_clause(q: &RunQuery, backend: Backend) -> (String, Vec<Param>) {
    let mut conditions = Vec::new();
    let mut params = Vec::new();
    // ASCII case folding on both engines (see `filter_clause`).
    let c = match backend {
        Backend::Sqlite => "",
        Backend::Postgres => " COLLATE \"C\"",
    };
    let texts = [
        ("device_model", &q.model),
        ("device_firmware", &q.firmware),
        ("device_serial", &q.serial),
        ("host_name", &q.host),
        ("device_connection", &q.connection),
    ];
    for (column, m) in texts {
        match m {
            Some(TextMatch::Contains(t)) => {
                conditions.push(format!(
                    "LOWER(COALESCE({column}, ''){c}) LIKE ? ESCAPE '\\'"
                ));
                params.push(Param::Text(Some(format!(
                    "%{}%",
                    like_escape(&t.to_ascii_lowercase())
                ))));
            }
            Some(TextMatch::Exact(t)) => {
                conditions.push(format!("{column} = ?"));
                params.push(Param::from(t));
            }
            None => {}
        }
    }
    for (cond, value) in [
        ("suite = ?", &q.suite),
        ("status = ?", &q.status),
        ("started_at >= ?", &q.since),
        ("started_at < ?", &q.until),
    ] {
        if let Some(v) = value {
            conditions.push(cond.to_string());
            params.push(Param::from(v));
        }
    }
    if let Some(cap) = q.capacity_bytes {
        conditions.push("device_capacity_bytes = ?".into());
        params.push(Param::Int(Some(i64::try_from(cap).unwrap_or(i64::MAX))));
    }
    if conditions.is_empty() {
        (String::new(), params)
    } else {
        (format!(" WHERE {}", conditions.join(" AND ")), params)
    }
}

/// `ORDER BY` for the query: its column (missing values last), then start time and id,
/// in byte order on both engines. Every term runs in one direction, so that one index
/// (migration 3) serves the page by a scan forwards or backwards instead of a sort of the
/// whole table; a column that may be missing says `NULLS LAST` (its own index for each
/// direction on PostgreSQL).
fn order_clause(q: &RunQuery, backend: Backend) -> String {
    let dir = if q.descending { "DESC" } else { "ASC" };
    let text = |col: &str| match backend {
        Backend::Sqlite => col.to_string(),
        Backend::Postgres => format!("{col} COLLATE \"C\""),
    };
    let col = q.sort.column();
    let key = if q.sort == SortKey::Capacity {
        col.to_string()
    } else {
        text(col)
    };
    let nulls = if q.sort.may_be_missing() {
        " NULLS LAST"
    } else {
        ""
    };
    let run_id = text("run_id");
    if q.sort == SortKey::Started {
        format!(" ORDER BY {key} {dir}, {run_id} {dir}")
    } else {
        let started = text("started_at");
        format!(" ORDER BY {key} {dir}{nulls}, {started} {dir}, {run_id} {dir}")
    }
}

impl Store {
    /// One page of the runs matching `query`, sorted as it asks, and their total count.
    pub fn page_runs(&mut self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let backend = self.backend();
        let (clause, mut params) = where_clause(query, backend);
        let conn = self.conn_mut();
        let rows = conn
            .query(&format!("SELECT COUNT(*) FROM runs{clause}"), &params)
            .map_err(|e| e.query("counting runs"))?;
        let total = match rows.first() {
            Some(row) => u64::try_from(row.int(0)?).unwrap_or(0),
            None => 0,
        };
        let big = |v: u64| Param::Int(Some(i64::try_from(v).unwrap_or(i64::MAX)));
        params.push(big(query.limit));
        params.push(big(query.offset));
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM runs{clause}{} LIMIT ? OFFSET ?",
            order_clause(query, backend)
        );
        let rows = conn
            .query(&sql, &params)
            .map_err(|e| e.query("listing runs"))?;
        let mut runs = rows
            .iter()
            .map(summary_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<String> = runs.iter().map(|r| r.run_id.clone()).collect();
        let mut metrics = load_metrics(conn, &ids)?;
        for run in &mut runs {
            run.metrics = metrics.remove(&run.run_id).unwrap_or_default();
        }
        Ok(RunPage { total, runs })
    }
}
