//! Versioned schema migrations, recorded in `schema_migrations`.
//!
//! Each migration is a numbered SQL file embedded in the binary. Most are written in the
//! SQL both engines accept; a migration may give a PostgreSQL variant where types differ.
//! All pending migrations run in one transaction, so a failure leaves the schema as it was.

use std::time::SystemTime;

use crate::conn::{in_transaction, Backend, Conn, Param};
use crate::error::StoreError;

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Schema version after this step (1, 2, ...).
    pub version: u32,
    /// Short name, from the file name.
    pub name: &'static str,
    /// SQL for SQLite.
    pub sqlite: &'static str,
    /// SQL for PostgreSQL.
    pub postgres: &'static str,
}

impl Migration {
    fn sql(&self, backend: Backend) -> &'static str {
        match backend {
            Backend::Sqlite => self.sqlite,
            Backend::Postgres => self.postgres,
        }
    }
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "initial",
        sqlite: include_str!("../migrations/0001_initial.sql"),
        postgres: include_str!("../migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "connection_uploader",
        sqlite: include_str!("../migrations/0002_connection_uploader.sql"),
        postgres: include_str!("../migrations/0002_connection_uploader.sql"),
    },
    Migration {
        version: 3,
        name: "page_indexes",
        sqlite: include_str!("../migrations/0003_page_indexes.sql"),
        postgres: include_str!("../migrations/0003_page_indexes.pg.sql"),
    },
    Migration {
        version: 4,
        name: "bundle_identity",
        sqlite: include_str!("../migrations/0004_bundle_identity.sql"),
        postgres: include_str!("../migrations/0004_bundle_identity.sql"),
    },
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: u32 = MIGRATIONS[MIGRATIONS.len() - 1].version;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)";

/// Every table drivelab's migrations make. A database holding any other table is
/// another program's (or shared): drivelab does not put its schema there.
pub const DRIVELAB_TABLES: &[&str] = &["schema_migrations", "runs", "metrics"];

/// Tables of the database (SQLite) or of the current schema (PostgreSQL).
fn table_names(conn: &mut dyn Conn) -> Result<Vec<String>, StoreError> {
    let sql = match conn.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        }
        Backend::Postgres => {
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
        }
    };
    let rows = conn
        .query(sql, &[])
        .map_err(|e| e.query("reading the list of tables"))?;
    rows.iter().map(|r| r.text(0)).collect()
}

/// Refuse a database that holds tables of another program, naming a few of them.
fn check_ours(conn: &mut dyn Conn, location: &str) -> Result<(), StoreError> {
    let names = table_names(conn)?;
    // A `runs` or `metrics` table without drivelab's migration ledger beside it is
    // another program's that happens to share the name.
    let ledger = names.iter().any(|t| t == "schema_migrations");
    let mut foreign: Vec<String> = names
        .into_iter()
        .filter(|t| !DRIVELAB_TABLES.contains(&t.as_str()) || (!ledger && t != "schema_migrations"))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    let n = foreign.len();
    foreign.truncate(3);
    Err(StoreError::NotDrivelab {
        location: location.to_string(),
        count: n,
        tables: format!("{}{}", foreign.join(", "), if n > 3 { ", …" } else { "" }),
    })
}

/// Serialises migrations of concurrent drivelab processes on one PostgreSQL database.
const PG_LOCK: &str = "SELECT pg_advisory_xact_lock(7243819034551)";

/// Brings the schema up to [`SCHEMA_VERSION`]; returns the versions applied now.
pub(crate) fn migrate(conn: &mut dyn Conn, location: &str) -> Result<Vec<u32>, StoreError> {
    let action = "preparing the schema";
    in_transaction(conn, action, |conn| {
        if conn.backend() == Backend::Postgres {
            conn.batch(PG_LOCK).map_err(|e| e.query(action))?;
        }
        check_ours(conn, location)?;
        conn.batch(CREATE_TABLE).map_err(|e| e.query(action))?;
        let applied = applied_versions(conn)?;
        if let Some(&found) = applied.iter().max() {
            if found > SCHEMA_VERSION {
                return Err(StoreError::NewerSchema {
                    location: location.to_string(),
                    found,
                    known: SCHEMA_VERSION,
                });
            }
        }
        let mut done = Vec::new();
        for migration in MIGRATIONS {
            if applied.contains(&migration.version) {
                continue;
            }
            let failed = |reason: String| StoreError::Migration {
                location: location.to_string(),
                version: migration.version,
                name: migration.name.to_string(),
                reason,
            };
            conn.batch(migration.sql(conn.backend()))
                .map_err(|e| failed(e.message))?;
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                &[
                    Param::from(i64::from(migration.version)),
                    Param::from(migration.name),
                    Param::from(now_rfc3339().as_str()),
                ],
            )
            .map_err(|e| failed(e.message))?;
            done.push(migration.version);
        }
        Ok(done)
    })
}

/// Versions recorded in `schema_migrations`, ascending.
pub(crate) fn applied_versions(conn: &mut dyn Conn) -> Result<Vec<u32>, StoreError> {
    let action = "reading the schema version";
    let rows = conn
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .map_err(|e| e.query(action))?;
    rows.iter()
        .map(|row| {
            let v = row.int(0)?;
            u32::try_from(v).map_err(|_| StoreError::Query {
                action: action.into(),
                reason: format!("schema_migrations holds version {v}"),
            })
        })
        .collect()
}

/// The current time as RFC 3339 UTC with seconds, e.g. `2025-01-31T12:00:00Z`.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.name);
        }
        assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z'));
        humantime::parse_rfc3339(&now).unwrap();
    }
}
