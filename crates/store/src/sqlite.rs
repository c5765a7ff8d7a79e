//! The SQLite engine: a local file, created on first use in a directory that exists.

use std::fs;
use std::path::Path;
use std::time::Duration;

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::conn::{Backend, Conn, Param, Row, SqlValue};
use crate::error::{io_reason, lower_first, DbError, StoreError};

/// How long a connection waits for another's lock before giving up ("database is
/// locked"): long enough for a server's many uploaders and readers on a loaded machine
/// to take their turns.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct SqliteConn {
    conn: Connection,
}

fn open_error(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Open {
        location: path.display().to_string(),
        reason: reason.into(),
    }
}

fn db_error(err: rusqlite::Error) -> DbError {
    let unique_violation = matches!(
        &err,
        rusqlite::Error::SqliteFailure(e, _)
            if e.code == ErrorCode::ConstraintViolation
                && (e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
    );
    DbError {
        message: sqlite_reason(&err),
        unique_violation,
    }
}

/// SQLite's message in the lowercase style of the rest of the crate.
fn sqlite_reason(err: &rusqlite::Error) -> String {
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => "not a SQLite database".to_string(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
            "the database is locked by another drivelab process".to_string()
        }
        Some(ErrorCode::ReadOnly) => "the database file is read-only".to_string(),
        _ => lower_first(&err.to_string()),
    }
}

/// Why SQLite could not open `path`, asking the OS when SQLite only says "unable to open".
fn open_reason(path: &Path, err: &rusqlite::Error) -> String {
    if err.sqlite_error_code() == Some(ErrorCode::CannotOpen) {
        let probe = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path);
        if let Err(io) = probe {
            return io_reason(&io);
        }
    }
    sqlite_reason(err)
}

/// Why the database's directory is not there, naming a file that is in the way.
pub(crate) fn mkdir_reason(parent: &Path) -> String {
    let blocker = parent
        .ancestors()
        .find(|p| p.exists() && !p.is_dir() && !p.as_os_str().is_empty());
    match blocker {
        Some(file) => format!("{} is not a directory", file.display()),
        None => format!("directory {} does not exist", parent.display()),
    }
}

impl SqliteConn {
    /// Opens (creating if needed) the database file at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if path.as_os_str().is_empty() {
            return Err(open_error(path, "the path is empty"));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(open_error(path, mkdir_reason(parent)));
            }
        }
        if path.is_dir() {
            return Err(open_error(path, "is a directory"));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| open_error(path, open_reason(path, &e)))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| open_error(path, sqlite_reason(&e)))?;
        // Reading the schema makes SQLite look at the file now, so that a file
        // that is not a database is reported as an open error.
        conn.execute_batch("PRAGMA foreign_keys = ON; SELECT count(*) FROM sqlite_master;")
            .map_err(|e| open_error(path, open_reason(path, &e)))?;
        Ok(SqliteConn { conn })
    }

    /// Switches the file (once it is known to be drivelab's: the mode is written into
    /// it) to write-ahead logging: readers do not block a writer nor a writer its
    /// readers, so a server's concurrent uploads and pages wait only for one another's
    /// writes (at most BUSY_TIMEOUT), not fail. On a file system without the shared
    /// memory it needs the mode stays as it was.
    pub(crate) fn write_ahead_log(&self, path: &Path) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .map_err(|e| open_error(path, open_reason(path, &e)))
    }
}

fn to_value(param: &Param) -> Value {
    match param {
        Param::Text(Some(s)) => Value::Text(s.clone()),
        Param::Int(Some(v)) => Value::Integer(*v),
        Param::Real(v) => Value::Real(*v),
        Param::Text(None) | Param::Int(None) => Value::Null,
    }
}

fn from_ref(value: ValueRef<'_>) -> SqlValue {
    match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(v) => SqlValue::Int(v),
        ValueRef::Real(v) => SqlValue::Real(v),
        ValueRef::Text(t) | ValueRef::Blob(t) => SqlValue::Text(String::from_utf8_lossy(t).into()),
    }
}

impl Conn for SqliteConn {
    fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, DbError> {
        let values = params.iter().map(to_value);
        let changed = self
            .conn
            .execute(sql, rusqlite::params_from_iter(values))
            .map_err(db_error)?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.conn.prepare(sql).map_err(db_error)?;
        let columns = stmt.column_count();
        let values = params.iter().map(to_value);
        let mut rows = stmt
            .query(rusqlite::params_from_iter(values))
            .map_err(db_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db_error)? {
            let mut cells = Vec::with_capacity(columns);
            for i in 0..columns {
                cells.push(from_ref(row.get_ref(i).map_err(db_error)?));
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.execute_batch(sql).map_err(db_error)
    }

    fn begin(&mut self) -> Result<(), DbError> {
        // Take the write lock up front so two writers never deadlock on an upgrade.
        self.batch("BEGIN IMMEDIATE")
    }

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }
}
