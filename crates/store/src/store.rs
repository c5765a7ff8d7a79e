//! [`Store`]: opening the database and the operations on runs, written once for both engines.

use std::collections::HashMap;
use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::conn::{in_transaction, like_escape, Backend, Conn, Param, Row};
use crate::error::StoreError;
use crate::export::{build_document, parse_document};
use crate::migrate::{applied_versions, migrate};
use crate::pg::{is_postgres_url, PgConn};
use crate::record::{
    check_run_id, BundleInfo, ImportReport, Metric, RunFilter, RunRecord, RunSummary,
};
use crate::sqlite::SqliteConn;

/// Columns of `runs` in the order [`record_from_row`] reads them.
/// What [`Store::record_run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The run was not stored before.
    Added,
    /// The same run.json was stored already: nothing changed.
    Unchanged,
    /// The run was stored with another run.json, now replaced.
    Replaced,
}

const RUN_COLUMNS: &str = "run_id, suite, started_at, finished_at, tool_version, schema_version, \
     host_name, host_json, device_path, device_model, device_serial, device_firmware, \
     device_capacity_bytes, device_kind, config_hash, config_json, status, bundle_path, bundle_json, \
     device_connection, uploaded_by, bundle_bytes, bundle_sha256";

/// Columns of `runs` in the order [`summary_from_row`] reads them.
pub(crate) const SUMMARY_COLUMNS: &str =
    "run_id, suite, started_at, finished_at, status, tool_version, \
     host_name, device_path, device_model, device_serial, device_firmware, \
     device_capacity_bytes, device_kind, config_hash, device_connection, uploaded_by";

/// How many ids go into one `IN (...)` list.
const IN_CHUNK: usize = 200;

/// How many candidates an ambiguous-prefix error names.
const MAX_CANDIDATES: usize = 5;

/// The results database: a SQLite file or a PostgreSQL database with the same schema.
pub struct Store {
    conn: Box<dyn Conn>,
    location: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.conn.backend())
            .field("location", &self.location)
            .finish()
    }
}

/// `$XDG_DATA_HOME/drivelab/results.sqlite`, else `$HOME/.local/share/drivelab/results.sqlite`.
fn default_location_from(xdg_data_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let base = match xdg_data_home.map(PathBuf::from) {
        // The XDG spec says relative values are to be ignored.
        Some(dir) if dir.is_absolute() => dir,
        _ => match home {
            Some(home) if !home.is_empty() => PathBuf::from(home).join(".local").join("share"),
            _ => PathBuf::from("."),
        },
    };
    base.join("drivelab").join("results.sqlite")
}

/// Open errors of the schema step are reported as errors opening the database.
fn as_open_error(location: &str, err: StoreError) -> StoreError {
    match err {
        StoreError::Query { reason, .. } => StoreError::Open {
            location: location.to_string(),
            reason,
        },
        other => other,
    }
}

fn parse_json(run_id: &str, column: &str, text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Query {
        action: format!("reading run {run_id}"),
        reason: format!("stored {column} is not valid JSON ({e})"),
    })
}

fn to_json_text(value: &Value) -> String {
    // Serialising a serde_json::Value cannot fail (all map keys are strings).
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// The SHA-256 of `text` in lowercase hex.
fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn opt_u64(row: &Row, i: usize) -> Result<Option<u64>, StoreError> {
    row.opt_int(i)?
        .map(|v| {
            u64::try_from(v).map_err(|_| StoreError::Query {
                action: "reading a row".into(),
                reason: format!("column {i} holds negative value {v}"),
            })
        })
        .transpose()
}

pub(crate) fn summary_from_row(row: &Row) -> Result<RunSummary, StoreError> {
    Ok(RunSummary {
        run_id: row.text(0)?,
        suite: row.text(1)?,
        started_at: row.text(2)?,
        finished_at: row.opt_text(3)?,
        status: row.text(4)?,
        tool_version: row.text(5)?,
        host_name: row.text(6)?,
        device_path: row.text(7)?,
        device_model: row.opt_text(8)?,
        device_serial: row.opt_text(9)?,
        device_firmware: row.opt_text(10)?,
        device_capacity_bytes: opt_u64(row, 11)?,
        device_kind: row.text(12)?,
        config_hash: row.text(13)?,
        device_connection: row.opt_text(14)?,
        uploaded_by: row.opt_text(15)?,
        metrics: Vec::new(),
    })
}

fn record_from_row(row: &Row) -> Result<RunRecord, StoreError> {
    let run_id = row.text(0)?;
    let schema_version = row.int(5)?;
    let bundle_json = match row.opt_text(18)? {
        Some(text) => Some(parse_json(&run_id, "bundle_json", &text)?),
        None => None,
    };
    Ok(RunRecord {
        suite: row.text(1)?,
        started_at: row.text(2)?,
        finished_at: row.opt_text(3)?,
        tool_version: row.text(4)?,
        schema_version: u32::try_from(schema_version).map_err(|_| StoreError::Query {
            action: format!("reading run {run_id}"),
            reason: format!("schema_version {schema_version} is out of range"),
        })?,
        host_name: row.text(6)?,
        host: parse_json(&run_id, "host_json", &row.text(7)?)?,
        device_path: row.text(8)?,
        device_model: row.opt_text(9)?,
        device_serial: row.opt_text(10)?,
        device_firmware: row.opt_text(11)?,
        device_capacity_bytes: opt_u64(row, 12)?,
        device_kind: row.text(13)?,
        config_hash: row.text(14)?,
        config: parse_json(&run_id, "config_json", &row.text(15)?)?,
        status: row.text(16)?,
        metrics: Vec::new(),
        bundle_path: row.opt_text(17)?,
        bundle_json,
        device_connection: row.opt_text(19)?,
        uploaded_by: row.opt_text(20)?,
        run_id,
    })
}

/// `WHERE ... ORDER BY ... LIMIT ...` for a filter, newest first.
fn filter_clause(filter: &RunFilter, backend: Backend) -> (String, Vec<Param>) {
    let mut conditions = Vec::new();
    let mut params = Vec::new();
    if let Some(suite) = &filter.suite {
        conditions.push("suite = ?".to_string());
        params.push(Param::from(suite));
    }
    if let Some(status) = &filter.status {
        conditions.push("status = ?".to_string());
        params.push(Param::from(status));
    }
    if let Some(device) = &filter.device {
        let pattern = format!("%{}%", like_escape(&device.to_ascii_lowercase()));
        // ASCII case folding on both engines, as the pattern's: PostgreSQL's LOWER folds
        // other letters too unless the collation is "C" (SQLite's folds ASCII only).
        let c = match backend {
            Backend::Sqlite => "",
            Backend::Postgres => " COLLATE \"C\"",
        };
        conditions.push(format!(
            "(LOWER(COALESCE(device_model, ''){c}) LIKE ? ESCAPE '\\' \
             OR LOWER(COALESCE(device_serial, ''){c}) LIKE ? ESCAPE '\\' \
             OR LOWER(device_path{c}) LIKE ? ESCAPE '\\')"
        ));
        params.push(Param::from(&pattern));
        params.push(Param::from(&pattern));
        params.push(Param::from(&pattern));
    }
    let mut sql = String::new();
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    // Byte order on both engines (PostgreSQL would otherwise use the database's locale).
    sql.push_str(match backend {
        Backend::Sqlite => " ORDER BY started_at DESC, run_id DESC",
        Backend::Postgres => " ORDER BY started_at COLLATE \"C\" DESC, run_id COLLATE \"C\" DESC",
    });
    if let Some(limit) = filter.limit {
        sql.push_str(" LIMIT ?");
        params.push(Param::Int(Some(i64::try_from(limit).unwrap_or(i64::MAX))));
    }
    (sql, params)
}

/// Metrics of the given runs, each list in its stored order.
pub(crate) fn load_metrics(
    conn: &mut dyn Conn,
    run_ids: &[String],
) -> Result<HashMap<String, Vec<Metric>>, StoreError> {
    let mut out: HashMap<String, Vec<Metric>> = HashMap::new();
    for chunk in run_ids.chunks(IN_CHUNK) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let sql = format!(
            "SELECT run_id, name, value, unit FROM metrics WHERE run_id IN ({marks}) ORDER BY run_id, position"
        );
        let params: Vec<Param> = chunk.iter().map(Param::from).collect();
        let rows = conn
            .query(&sql, &params)
            .map_err(|e| e.query("reading metrics"))?;
        for row in rows {
            out.entry(row.text(0)?).or_default().push(Metric {
                name: row.text(1)?,
                value: row.real(2)?,
                unit: row.text(3)?,
            });
        }
    }
    Ok(out)
}

fn run_exists(conn: &mut dyn Conn, run_id: &str) -> Result<bool, StoreError> {
    let rows = conn
        .query(
            "SELECT 1 FROM runs WHERE run_id = ?",
            &[Param::from(run_id)],
        )
        .map_err(|e| e.query(&format!("looking up run {run_id}")))?;
    Ok(!rows.is_empty())
}

/// Writes one validated record; the caller holds a transaction.
fn insert_in(conn: &mut dyn Conn, r: &RunRecord) -> Result<(), StoreError> {
    let action = format!("recording run {}", r.run_id);
    if run_exists(conn, &r.run_id)? {
        return Err(StoreError::DuplicateRun(r.run_id.clone()));
    }
    let capacity = r.device_capacity_bytes.and_then(|c| i64::try_from(c).ok());
    let bundle = r.bundle_json.as_ref().map(to_json_text);
    let params = [
        Param::from(&r.run_id),
        Param::from(&r.suite),
        Param::from(&r.started_at),
        Param::from(&r.finished_at),
        Param::from(&r.tool_version),
        Param::from(i64::from(r.schema_version)),
        Param::from(&r.host_name),
        Param::Text(Some(to_json_text(&r.host))),
        Param::from(&r.device_path),
        Param::from(&r.device_model),
        Param::from(&r.device_serial),
        Param::from(&r.device_firmware),
        Param::Int(capacity),
        Param::from(&r.device_kind),
        Param::from(&r.config_hash),
        Param::Text(Some(to_json_text(&r.config))),
        Param::from(&r.status),
        Param::from(&r.bundle_path),
        Param::Text(bundle.clone()),
        Param::from(&r.device_connection),
        Param::from(&r.uploaded_by),
        Param::Int(bundle.as_ref().map(|b| b.len() as i64)),
        Param::Text(bundle.as_deref().map(sha256_hex)),
    ];
    let marks = vec!["?"; params.len()].join(", ");
    conn.execute(
        &format!("INSERT INTO runs ({RUN_COLUMNS}) VALUES ({marks})"),
        &params,
    )
    .map_err(|e| {
        if e.unique_violation {
            StoreError::DuplicateRun(r.run_id.clone())
        } else {
            e.query(&action)
        }
    })?;
    for (position, metric) in r.metrics.iter().enumerate() {
        conn.execute(
            "INSERT INTO metrics (run_id, position, name, value, unit) VALUES (?, ?, ?, ?, ?)",
            &[
                Param::from(&r.run_id),
                Param::from(position as i64),
                Param::from(&metric.name),
                Param::Real(metric.value),
                Param::from(&metric.unit),
            ],
        )
        .map_err(|e| e.query(&action))?;
    }
    Ok(())
}

/// The stored run.json text of `run_id`: None when the run is not stored, Some(None) when
/// it is stored without its run.json.
fn stored_bundle_text(
    conn: &mut dyn Conn,
    run_id: &str,
) -> Result<Option<Option<String>>, StoreError> {
    let rows = conn
        .query(
            "SELECT bundle_json FROM runs WHERE run_id = ?",
            &[Param::from(run_id)],
        )
        .map_err(|e| e.query(&format!("looking up run {run_id}")))?;
    rows.first().map(|row| row.opt_text(0)).transpose()
}

/// Replaces a stored run by `r`; the caller holds a transaction.
fn replace_in(conn: &mut dyn Conn, r: &RunRecord) -> Result<(), StoreError> {
    let action = format!("recording run {}", r.run_id);
    let id = [Param::from(&r.run_id)];
    conn.execute("DELETE FROM metrics WHERE run_id = ?", &id)
        .map_err(|e| e.query(&action))?;
    conn.execute("DELETE FROM runs WHERE run_id = ?", &id)
        .map_err(|e| e.query(&action))?;
    insert_in(conn, r)
}

impl Store {
    /// Opens the results database at `location` and brings its schema up to date.
    ///
    /// A `postgres://` or `postgresql://` URL connects to PostgreSQL (the URL may carry
    /// libpq-style options such as `?options=-csearch_path%3Dmyschema`); anything else is
    /// a SQLite file path, created along with its parent directories when missing.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        if is_postgres_url(location) {
            let shown = crate::error::redact_url(location);
            let mut conn = PgConn::connect(location)?;
            migrate(&mut conn, &shown).map_err(|e| as_open_error(&shown, e))?;
            Ok(Store {
                conn: Box::new(conn),
                location: shown,
            })
        } else {
            Self::open_sqlite(Path::new(location))
        }
    }

    /// Opens the SQLite file at `path` (see [`Store::open`]).
    pub fn open_sqlite(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        let mut conn = SqliteConn::open(path)?;
        migrate(&mut conn, &shown).map_err(|e| as_open_error(&shown, e))?;
        conn.write_ahead_log(path)?;
        Ok(Store {
            conn: Box::new(conn),
            location: shown,
        })
    }

    /// Opens the database at [`Store::default_location`], making its directories (the
    /// one place drivelab makes directories for a database: a `--db` path's directory
    /// must exist).
    pub fn open_default() -> Result<Store, StoreError> {
        let path = Self::default_location();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|_| StoreError::Open {
                location: path.display().to_string(),
                reason: crate::sqlite::mkdir_reason(parent),
            })?;
        }
        Self::open_sqlite(&path)
    }

    /// `$XDG_DATA_HOME/drivelab/results.sqlite` when `XDG_DATA_HOME` is an absolute path,
    /// else `~/.local/share/drivelab/results.sqlite`.
    pub fn default_location() -> PathBuf {
        default_location_from(env::var_os("XDG_DATA_HOME"), env::var_os("HOME"))
    }

    /// The connection, for the queries of other modules.
    pub(crate) fn conn_mut(&mut self) -> &mut dyn Conn {
        self.conn.as_mut()
    }

    /// Which engine this store uses.
    pub fn backend(&self) -> Backend {
        self.conn.backend()
    }

    /// The database's path or URL (without password), for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The schema version of the open database (the highest migration applied).
    pub fn schema_version(&mut self) -> Result<u32, StoreError> {
        Ok(applied_versions(self.conn.as_mut())?
            .into_iter()
            .max()
            .unwrap_or(0))
    }

    /// Records a run. Fails with [`StoreError::DuplicateRun`] when its run_id is stored already.
    pub fn insert_run(&mut self, record: &RunRecord) -> Result<(), StoreError> {
        record.validate()?;
        let action = format!("recording run {}", record.run_id);
        in_transaction(self.conn.as_mut(), &action, |conn| insert_in(conn, record))
    }

    /// Records a run, or replaces the stored run of the same bundle identity (run id) when
    /// its run.json differs from the stored one (a bundle completed since, e.g. a
    /// powerloss run checked after it was first recorded). A record without a run.json
    /// never replaces a stored run. All in one transaction: the old run stays whole, or
    /// the new one is stored whole.
    pub fn record_run(&mut self, record: &RunRecord) -> Result<Recorded, StoreError> {
        record.validate()?;
        let action = format!("recording run {}", record.run_id);
        let text = record.bundle_json.as_ref().map(to_json_text);
        in_transaction(
            self.conn.as_mut(),
            &action,
            |conn| match stored_bundle_text(conn, &record.run_id)? {
                None => insert_in(conn, record).map(|()| Recorded::Added),
                Some(stored) if text.is_none() || stored == text => Ok(Recorded::Unchanged),
                Some(_) => replace_in(conn, record).map(|()| Recorded::Replaced),
            },
        )
    }

    /// Runs matching `filter`, newest first, with their headline metrics.
    pub fn list_runs(&mut self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let (clause, params) = filter_clause(filter, self.conn.backend());
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs{clause}");
        let rows = self
            .conn
            .query(&sql, &params)
            .map_err(|e| e.query("listing runs"))?;
        let mut runs = rows
            .iter()
            .map(summary_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<String> = runs.iter().map(|r| r.run_id.clone()).collect();
        let mut metrics = load_metrics(self.conn.as_mut(), &ids)?;
        for run in &mut runs {
            run.metrics = metrics.remove(&run.run_id).unwrap_or_default();
        }
        Ok(runs)
    }

    /// The full id of the run whose id is, or uniquely starts with, `id_or_prefix`.
    ///
    /// An exact match wins; a prefix matching several runs is [`StoreError::AmbiguousId`].
    pub fn resolve_run_id(&mut self, id_or_prefix: &str) -> Result<Option<String>, StoreError> {
        if id_or_prefix.is_empty() {
            return Err(StoreError::invalid("", "run id is empty"));
        }
        if check_run_id(id_or_prefix).is_err() {
            return Ok(None);
        }
        if run_exists(self.conn.as_mut(), id_or_prefix)? {
            return Ok(Some(id_or_prefix.to_string()));
        }
        // LIKE folds ASCII case on SQLite only, so match loosely in SQL and exactly here.
        let pattern = format!("{}%", like_escape(&id_or_prefix.to_ascii_lowercase()));
        let rows = self
            .conn
            .query(
                "SELECT run_id FROM runs WHERE LOWER(run_id) LIKE ? ESCAPE '\\'",
                &[Param::from(&pattern)],
            )
            .map_err(|e| e.query(&format!("looking up run {id_or_prefix}")))?;
        let mut matches = Vec::new();
        for row in &rows {
            let id = row.text(0)?;
            if id.starts_with(id_or_prefix) {
                matches.push(id);
            }
        }
        matches.sort();
        match matches.len() {
            0 => Ok(None),
            1 => Ok(matches.pop()),
            _ => {
                matches.truncate(MAX_CANDIDATES);
                Err(StoreError::AmbiguousId {
                    prefix: id_or_prefix.to_string(),
                    candidates: matches,
                })
            }
        }
    }

    /// The run with this id or unique id prefix (like git), or `None`.
    pub fn get_run(&mut self, id_or_prefix: &str) -> Result<Option<RunRecord>, StoreError> {
        match self.resolve_run_id(id_or_prefix)? {
            Some(run_id) => self.load_run(&run_id),
            None => Ok(None),
        }
    }

    /// The stored run.json's identity for the run with this id or unique id prefix: its
    /// full id, size and SHA-256 (see [`BundleInfo`]), without reading the document.
    pub fn bundle_info(&mut self, id_or_prefix: &str) -> Result<Option<BundleInfo>, StoreError> {
        let Some(run_id) = self.resolve_run_id(id_or_prefix)? else {
            return Ok(None);
        };
        let rows = self
            .conn
            .query(
                "SELECT CASE WHEN bundle_json IS NULL THEN 0 ELSE 1 END, bundle_bytes, bundle_sha256 \
                 FROM runs WHERE run_id = ?",
                &[Param::from(&run_id)],
            )
            .map_err(|e| e.query(&format!("reading run {run_id}")))?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        Ok(Some(BundleInfo {
            has_bundle: row.int(0)? != 0,
            bytes: opt_u64(row, 1)?,
            sha256: row.opt_text(2)?,
            run_id,
        }))
    }

    fn load_run(&mut self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let rows = self
            .conn
            .query(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?"),
                &[Param::from(run_id)],
            )
            .map_err(|e| e.query(&format!("reading run {run_id}")))?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let mut record = record_from_row(row)?;
        let ids = [record.run_id.clone()];
        record.metrics = load_metrics(self.conn.as_mut(), &ids)?
            .remove(&record.run_id)
            .unwrap_or_default();
        Ok(Some(record))
    }

    /// Deletes the run with this id or unique id prefix; returns its full id, or `None`
    /// when no run matched.
    pub fn delete_run(&mut self, id_or_prefix: &str) -> Result<Option<String>, StoreError> {
        let Some(run_id) = self.resolve_run_id(id_or_prefix)? else {
            return Ok(None);
        };
        let action = format!("deleting run {run_id}");
        in_transaction(self.conn.as_mut(), &action, |conn| {
            let id = [Param::from(&run_id)];
            conn.execute("DELETE FROM metrics WHERE run_id = ?", &id)
                .map_err(|e| e.query(&action))?;
            conn.execute("DELETE FROM runs WHERE run_id = ?", &id)
                .map_err(|e| e.query(&action))?;
            Ok(())
        })?;
        Ok(Some(run_id))
    }

    /// The runs matching `filter` (newest first) as a self-describing JSON document
    /// (`{"format": "drivelab-db-export", "format_version": 1, "runs": [...]}`).
    pub fn export_runs(&mut self, filter: &RunFilter) -> Result<Value, StoreError> {
        let (clause, params) = filter_clause(filter, self.conn.backend());
        let rows = self
            .conn
            .query(&format!("SELECT run_id FROM runs{clause}"), &params)
            .map_err(|e| e.query("exporting runs"))?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in &rows {
            let run_id = row.text(0)?;
            if let Some(record) = self.load_run(&run_id)? {
                runs.push(record);
            }
        }
        build_document(&runs)
    }

    /// Adds the runs of an export document. Runs whose run_id is already stored are
    /// skipped and counted, so importing the same document twice changes nothing.
    /// Every record is checked first; on any error nothing is imported.
    pub fn import_runs(&mut self, doc: &Value) -> Result<ImportReport, StoreError> {
        let records = parse_document(doc)?;
        in_transaction(self.conn.as_mut(), "importing runs", |conn| {
            let mut report = ImportReport::default();
            for record in &records {
                if run_exists(conn, &record.run_id)? {
                    report.skipped += 1;
                    report.skipped_run_ids.push(record.run_id.clone());
                } else {
                    insert_in(conn, record)?;
                    report.imported += 1;
                    report.imported_run_ids.push(record.run_id.clone());
                }
            }
            Ok(report)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_location_follows_xdg_then_home() {
        assert_eq!(
            default_location_from(Some("/data".into()), Some("/home/u".into())),
            PathBuf::from("/data/drivelab/results.sqlite")
        );
        assert_eq!(
            default_location_from(None, Some("/home/u".into())),
            PathBuf::from("/home/u/.local/share/drivelab/results.sqlite")
        );
        // Relative and empty XDG_DATA_HOME are ignored, as the spec says.
        assert_eq!(
            default_location_from(Some("rel".into()), Some("/home/u".into())),
            PathBuf::from("/home/u/.local/share/drivelab/results.sqlite")
        );
        assert_eq!(
            default_location_from(Some("".into()), Some("/home/u".into())),
            PathBuf::from("/home/u/.local/share/drivelab/results.sqlite")
        );
        assert_eq!(
            default_location_from(None, None),
            PathBuf::from("./drivelab/results.sqlite")
        );
    }

    #[test]
    fn filter_clause_binds_every_condition() {
        let filter = RunFilter {
            suite: Some("quick".into()),
            device: Some("Sam_sung".into()),
            status: Some("complete".into()),
            limit: Some(3),
        };
        let (sql, params) = filter_clause(&filter, Backend::Postgres);
        assert_eq!(sql.matches('?').count(), params.len());
        assert!(sql.contains("COLLATE \"C\""));
        assert_eq!(params[2], Param::from("%sam\\_sung%"));
        assert_eq!(params[5], Param::Int(Some(3)));
        let (sql, params) = filter_clause(&RunFilter::default(), Backend::Sqlite);
        assert_eq!(sql, " ORDER BY started_at DESC, run_id DESC");
        assert!(params.is_empty());
    }
}
