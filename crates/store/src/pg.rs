//! The PostgreSQL engine, through the synchronous `postgres` client (no TLS).

use std::error::Error as _;
use std::io;
use std::str::FromStr;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Client, Config, NoTls};

use crate::conn::{numbered_placeholders, Backend, Conn, Param, Row, SqlValue};
use crate::error::{io_reason, lower_first, redact_url, DbError, StoreError};

/// How long to wait for the server when the URL sets no `connect_timeout`.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct PgConn {
    client: Client,
}

/// Whether `location` names a PostgreSQL server rather than a file.
pub fn is_postgres_url(location: &str) -> bool {
    let lower = location.to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// Whether a `postgres://` URL is well formed (without connecting): the reason if not.
pub fn check_postgres_url(url: &str) -> Result<(), String> {
    let c = Config::from_str(url).map_err(|e| format!("invalid URL ({})", pg_reason(&e)))?;
    // What the client needs before it connects (else "invalid configuration" later).
    if c.get_hosts().is_empty() {
        return Err("the URL names no server host".into());
    }
    if c.get_user().is_none() {
        return Err("the URL names no user".into());
    }
    Ok(())
}

/// The most telling part of a client error: the server's message, else the OS error.
fn pg_reason(err: &postgres::Error) -> String {
    if let Some(db) = err.as_db_error() {
        return db.message().to_string();
    }
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io_reason(io);
        }
        source = cause.source();
    }
    if err.is_closed() {
        return "the connection to the server was closed".to_string();
    }
    lower_first(&err.to_string())
}

fn db_error(err: postgres::Error) -> DbError {
    DbError {
        unique_violation: err.code() == Some(&SqlState::UNIQUE_VIOLATION),
        message: pg_reason(&err),
    }
}

impl PgConn {
    /// Connects to the server named by a `postgres://` or `postgresql://` URL.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let connect_error = |reason: String| StoreError::Connect {
            url: redact_url(url),
            reason,
        };
        let mut config = Config::from_str(url)
            .map_err(|e| connect_error(format!("invalid URL ({})", pg_reason(&e))))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("drivelab");
        }
        let client = config
            .connect(NoTls)
            .map_err(|e| connect_error(pg_reason(&e)))?;
        Ok(PgConn { client })
    }
}

fn as_sql(param: &Param) -> &(dyn ToSql + Sync) {
    match param {
        Param::Text(v) => v,
        Param::Int(v) => v,
        Param::Real(v) => v,
    }
}

fn read_row(row: &postgres::Row) -> Result<Row, DbError> {
    let mut cells = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let ty = column.type_();
        let cell = if *ty == Type::TEXT || *ty == Type::VARCHAR || *ty == Type::NAME {
            row.try_get::<_, Option<String>>(i)
                .map_err(db_error)?
                .map_or(SqlValue::Null, SqlValue::Text)
        } else if *ty == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)
                .map_err(db_error)?
                .map_or(SqlValue::Null, SqlValue::Int)
        } else if *ty == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)
                .map_err(db_error)?
                .map_or(SqlValue::Null, |v| SqlValue::Int(v.into()))
        } else if *ty == Type::INT2 {
            row.try_get::<_, Option<i16>>(i)
                .map_err(db_error)?
                .map_or(SqlValue::Null, |v| SqlValue::Int(v.into()))
        } else if *ty == Type::FLOAT8 {
            row.try_get::<_, Option<f64>>(i)
                .map_err(db_error)?
                .map_or(SqlValue::Null, SqlValue::Real)
        } else {
            return Err(DbError {
                message: format!("column {} has unsupported type {ty}", column.name()),
                unique_violation: false,
            });
        };
        cells.push(cell);
    }
    Ok(Row(cells))
}

impl Conn for PgConn {
    fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, DbError> {
        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(as_sql).collect();
        self.client
            .execute(numbered_placeholders(sql).as_str(), &values)
            .map_err(db_error)
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Row>, DbError> {
        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(as_sql).collect();
        let rows = self
            .client
            .query(numbered_placeholders(sql).as_str(), &values)
            .map_err(db_error)?;
        rows.iter().map(read_row).collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(db_error)
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN")
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_postgres_urls() {
        assert!(is_postgres_url("postgres://u@h/db"));
        assert!(is_postgres_url("PostgreSQL://u@h/db"));
        assert!(!is_postgres_url("/home/u/postgres://x"));
        assert!(!is_postgres_url("results.sqlite"));
    }

    #[test]
    fn invalid_urls_are_reported_without_password() {
        let err = match PgConn::connect("postgres://u:hunter2@127.0.0.1:notaport/db") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a bad port must not parse"),
        };
        assert!(
            err.starts_with(
                "cannot connect to PostgreSQL at postgres://u@127.0.0.1:notaport/db: invalid URL"
            ),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }
}
