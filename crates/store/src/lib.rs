//! drivelab's results database.
//!
//! Every finished drivelab run (a result bundle: a directory whose `run.json` describes a
//! suite run) is recorded as a [`RunRecord`] so that drives can be compared side by side
//! and a history of every drive qualified is kept.
//!
//! The database is a SQLite file by default ([`Store::default_location`]) or a shared
//! PostgreSQL database given by a `postgres://` URL. Both hold the same schema, created
//! and upgraded by the numbered migrations in [`MIGRATIONS`] and recorded in a
//! `schema_migrations` table.
//!
//! PostgreSQL is reached with the synchronous `postgres` client and without TLS: use it on
//! a trusted network, over an SSH tunnel, or through a unix socket
//! (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`). A `?options=-csearch_path%3Dname`
//! suffix keeps the tables in a schema of their own. Passwords never appear in messages.
//!
//! Run times are RFC 3339 UTC text; listings sort on that text, newest first, so runs
//! should use one precision (drivelab writes whole or millisecond seconds consistently).
//!
//! ```no_run
//! use drivelab_store::{RunFilter, Store};
//! let mut store = Store::open("/tmp/results.sqlite")?;
//! for run in store.list_runs(&RunFilter { suite: Some("quick".into()), ..Default::default() })? {
//!     println!("{} {} {:?}", run.run_id, run.started_at, run.device_model);
//! }
//! # Ok::<(), drivelab_store::StoreError>(())
//! ```

mod conn;
mod error;
mod export;
mod migrate;
mod page;
mod pg;
mod record;
mod sqlite;
mod store;

pub use conn::Backend;
pub use error::{redact_url, StoreError};
pub use export::{parse_document as parse_export, EXPORT_FORMAT, EXPORT_FORMAT_VERSION};
pub use migrate::{Migration, MIGRATIONS, SCHEMA_VERSION};
pub use page::{RunPage, RunQuery, SortKey, TextMatch};
pub use pg::{check_postgres_url, is_postgres_url};
pub use record::{
    BundleInfo, ImportReport, Metric, RunFilter, RunRecord, RunSummary, DEVICE_KINDS,
    MAX_RUN_ID_LEN, STATUSES,
};
pub use store::{Recorded, Store};
