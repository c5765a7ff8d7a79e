//! The small SQL interface both engines implement, so every query is written once.
//!
//! Statements use `?` placeholders; the PostgreSQL side numbers them (`$1`, `$2`, ...).

use crate::error::{DbError, StoreError};

/// A statement parameter. NULLs carry their type because PostgreSQL checks it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param {
    Text(Option<String>),
    Int(Option<i64>),
    Real(f64),
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Text(Some(v.to_string()))
    }
}

impl From<&String> for Param {
    fn from(v: &String) -> Self {
        Param::Text(Some(v.clone()))
    }
}

impl From<&Option<String>> for Param {
    fn from(v: &Option<String>) -> Self {
        Param::Text(v.clone())
    }
}

impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Int(Some(v))
    }
}

/// A value read back from a result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

/// One result row, with typed accessors that name the column on mismatch.
#[derive(Debug, Clone)]
pub(crate) struct Row(pub Vec<SqlValue>);

impl Row {
    fn at(&self, i: usize) -> Result<&SqlValue, StoreError> {
        self.0.get(i).ok_or_else(|| StoreError::Query {
            action: "reading a row".into(),
            reason: format!("column {i} is missing"),
        })
    }

    fn mismatch(i: usize, wanted: &str, got: &SqlValue) -> StoreError {
        StoreError::Query {
            action: "reading a row".into(),
            reason: format!("column {i} holds {got:?}, expected {wanted}"),
        }
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.at(i)? {
            SqlValue::Null => Ok(None),
            SqlValue::Text(s) => Ok(Some(s.clone())),
            other => Err(Self::mismatch(i, "text", other)),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, StoreError> {
        self.opt_text(i)?
            .ok_or_else(|| Self::mismatch(i, "text", &SqlValue::Null))
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.at(i)? {
            SqlValue::Null => Ok(None),
            SqlValue::Int(v) => Ok(Some(*v)),
            other => Err(Self::mismatch(i, "an integer", other)),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.opt_int(i)?
            .ok_or_else(|| Self::mismatch(i, "an integer", &SqlValue::Null))
    }

    pub fn real(&self, i: usize) -> Result<f64, StoreError> {
        match self.at(i)? {
            SqlValue::Real(v) => Ok(*v),
            // SQLite may hand back whole numbers as integers.
            SqlValue::Int(v) => Ok(*v as f64),
            other => Err(Self::mismatch(i, "a number", other)),
        }
    }
}

/// Which engine a connection talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A local SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A connection to one of the engines.
pub(crate) trait Conn: Send {
    /// Runs a statement; returns the number of rows changed.
    fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, DbError>;
    /// Runs a query and returns all rows.
    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Row>, DbError>;
    /// Runs several `;`-separated statements without parameters.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Starts a write transaction.
    fn begin(&mut self) -> Result<(), DbError>;
    /// The engine behind this connection.
    fn backend(&self) -> Backend;
}

/// Runs `work` inside a transaction: committed when it succeeds, rolled back otherwise.
pub(crate) fn in_transaction<T>(
    conn: &mut dyn Conn,
    action: &str,
    work: impl FnOnce(&mut dyn Conn) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.begin().map_err(|e| e.query(action))?;
    match work(conn) {
        Ok(value) => {
            conn.batch("COMMIT").map_err(|e| e.query(action))?;
            Ok(value)
        }
        Err(err) => {
            // The original error matters more than a failed rollback.
            let _ = conn.batch("ROLLBACK");
            Err(err)
        }
    }
}

/// Escapes `%`, `_` and `\` for a `LIKE ... ESCAPE '\'` pattern.
pub(crate) fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Rewrites `?` placeholders to PostgreSQL's `$1`, `$2`, ... (not inside quotes).
pub(crate) fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
                continue;
            }
            (None, _) => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered_placeholders(
                "SELECT a FROM t WHERE b = ? AND c LIKE ? ESCAPE '\\' AND d = '?' LIMIT ?"
            ),
            "SELECT a FROM t WHERE b = $1 AND c LIKE $2 ESCAPE '\\' AND d = '?' LIMIT $3"
        );
    }

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(like_escape(r"50%_a\b"), r"50\%\_a\\b");
    }

    #[test]
    fn rows_convert_and_report_mismatches() {
        let row = Row(vec![
            SqlValue::Text("x".into()),
            SqlValue::Null,
            SqlValue::Int(3),
            SqlValue::Real(1.5),
        ]);
        assert_eq!(row.text(0).unwrap(), "x");
        assert_eq!(row.opt_text(1).unwrap(), None);
        assert_eq!(row.int(2).unwrap(), 3);
        assert_eq!(row.real(2).unwrap(), 3.0);
        assert_eq!(row.real(3).unwrap(), 1.5);
        assert!(row
            .int(0)
            .unwrap_err()
            .to_string()
            .contains("expected an integer"));
        assert!(row.text(1).is_err());
        assert!(row.text(9).is_err());
    }
}
