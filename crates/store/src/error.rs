//! The one error type of the crate, with messages written for users.

use std::io;

/// Everything that can go wrong with the results database.
///
/// Messages name the database (a file path, or a PostgreSQL URL with any password
/// removed) and say what happened in plain words.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The SQLite file (or its parent directory) could not be opened or created.
    #[error("cannot open results database {location}: {reason}")]
    Open {
        /// The file path.
        location: String,
        /// Why, e.g. "permission denied".
        reason: String,
    },
    /// The PostgreSQL server could not be reached or refused the login.
    #[error("cannot connect to PostgreSQL at {url}: {reason}")]
    Connect {
        /// The URL with the password removed.
        url: String,
        /// Why, e.g. "connection refused".
        reason: String,
    },
    /// The database holds another program's tables: drivelab leaves it alone.
    #[error("{location} is not a drivelab results database: it holds {count} other table(s) ({tables}); give a new file or an existing drivelab database")]
    NotDrivelab {
        /// The database (path or redacted URL).
        location: String,
        /// How many foreign tables.
        count: usize,
        /// A few of their names.
        tables: String,
    },
    /// A schema migration failed; the database is left at the previous version.
    #[error(
        "cannot upgrade results database {location} to schema version {version} ({name}): {reason}"
    )]
    Migration {
        /// The database (path or redacted URL).
        location: String,
        /// The migration's number.
        version: u32,
        /// The migration's name.
        name: String,
        /// The database's message.
        reason: String,
    },
    /// The database was written by a newer drivelab with migrations this build lacks.
    #[error("results database {location} has schema version {found}, newer than this drivelab understands ({known}); upgrade drivelab")]
    NewerSchema {
        /// The database (path or redacted URL).
        location: String,
        /// The highest version recorded in the database.
        found: u32,
        /// The highest version this build knows.
        known: u32,
    },
    /// A run with this id is already stored.
    #[error("run {0} is already in the results database")]
    DuplicateRun(String),
    /// An id prefix matched more than one run.
    #[error("run id prefix {prefix:?} is ambiguous: it matches {}", .candidates.join(", "))]
    AmbiguousId {
        /// The prefix given.
        prefix: String,
        /// The matching run ids (at most a few).
        candidates: Vec<String>,
    },
    /// A record failed validation before it was written.
    #[error("invalid run record{}: {reason}", run_label(.run_id))]
    InvalidRecord {
        /// The record's run id, when it has one.
        run_id: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// An import document is not a drivelab database export.
    #[error("invalid results export: {0}")]
    InvalidExport(String),
    /// A query failed after the database was opened.
    #[error("results database error while {action}: {reason}")]
    Query {
        /// What was being done, e.g. "listing runs".
        action: String,
        /// The database's message.
        reason: String,
    },
}

fn run_label(run_id: &Option<String>) -> String {
    match run_id {
        Some(id) => format!(" {id}"),
        None => String::new(),
    }
}

impl StoreError {
    pub(crate) fn invalid(run_id: &str, reason: impl Into<String>) -> Self {
        StoreError::InvalidRecord {
            run_id: (!run_id.is_empty()).then(|| run_id.to_string()),
            reason: reason.into(),
        }
    }
}

/// A database-level failure, before it is given its user-facing context.
#[derive(Debug)]
pub(crate) struct DbError {
    pub message: String,
    /// The statement broke a primary key or unique constraint.
    pub unique_violation: bool,
}

impl DbError {
    pub fn query(self, action: &str) -> StoreError {
        StoreError::Query {
            action: action.to_string(),
            reason: self.message,
        }
    }
}

/// An OS error as a short lowercase phrase: "permission denied", "not a directory".
pub(crate) fn io_reason(err: &io::Error) -> String {
    lower_first(&strip_os_error(&err.to_string()))
}

/// Drops the " (os error 13)" suffix that std adds to OS errors.
fn strip_os_error(text: &str) -> String {
    match text.rfind(" (os error ") {
        Some(pos) if text.ends_with(')') => text[..pos].to_string(),
        _ => text.to_string(),
    }
}

pub(crate) fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The URL with its password removed (both `user:password@` and `password=` forms).
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let (before_query, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    let mut out = scheme.to_string();
    match before_query.rfind('@') {
        Some(at) => {
            let user = before_query[..at].split(':').next().unwrap_or("");
            out.push_str(user);
            out.push_str(&before_query[at..]);
        }
        None => out.push_str(before_query),
    }
    if let Some(query) = query {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.to_ascii_lowercase().starts_with("password="))
            .collect();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_in_userinfo_and_query() {
        assert_eq!(
            redact_url("postgres://u:secret@127.0.0.1:5432/db"),
            "postgres://u@127.0.0.1:5432/db"
        );
        assert_eq!(
            redact_url("postgresql://u:p@ss@host/db?sslmode=disable&password=x&application_name=a"),
            "postgresql://u@host/db?sslmode=disable&application_name=a"
        );
        assert_eq!(
            redact_url("postgres://host/db?password=x"),
            "postgres://host/db"
        );
        assert_eq!(redact_url("postgres://u@host/db"), "postgres://u@host/db");
    }

    #[test]
    fn io_errors_become_short_phrases() {
        let err = io::Error::from_raw_os_error(13);
        assert_eq!(io_reason(&err), "permission denied");
        let err = io::Error::from_raw_os_error(20);
        assert_eq!(io_reason(&err), "not a directory");
        let err = io::Error::other("Custom thing");
        assert_eq!(io_reason(&err), "custom thing");
    }

    #[test]
    fn messages_read_well() {
        let err = StoreError::Open {
            location: "/x/y.sqlite".into(),
            reason: "permission denied".into(),
        };
        assert_eq!(
            err.to_string(),
            "cannot open results database /x/y.sqlite: permission denied"
        );
        let err = StoreError::AmbiguousId {
            prefix: "ab".into(),
            candidates: vec!["ab1".into(), "ab2".into()],
        };
        assert_eq!(
            err.to_string(),
            "run id prefix \"ab\" is ambiguous: it matches ab1, ab2"
        );
        assert_eq!(
            StoreError::invalid("r1", "bad").to_string(),
            "invalid run record r1: bad"
        );
        assert_eq!(
            StoreError::invalid("", "bad").to_string(),
            "invalid run record: bad"
        );
    }
}
