//! The database as the server uses it: a few open connections kept for reuse, every
//! query on tokio's blocking pool (the store is synchronous), and a connection that
//! failed dropped, so that a database that went away is reconnected when it returns.

use std::sync::Mutex;

use drivelab_store::{Store, StoreError};

use crate::failure::Failure;

/// Idle connections kept; more are opened under load and closed after.
const IDLE: usize = 8;

/// The results database at one location.
pub struct Db {
    location: String,
    idle: Mutex<Vec<Store>>,
}

/// Whether an error means the connection may be broken (then it is not reused).
fn connection_suspect(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Open { .. } | StoreError::Connect { .. } | StoreError::Query { .. }
    )
}

impl Db {
    pub fn new(location: String) -> Db {
        Db {
            location,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Result<Store, StoreError> {
        let idle = self.idle.lock().ok().and_then(|mut v| v.pop());
        match idle {
            Some(s) => Ok(s),
            None => Store::open(&self.location),
        }
    }

    fn give_back(&self, store: Store) {
        if let Ok(mut v) = self.idle.lock() {
            if v.len() < IDLE {
                v.push(store);
            }
        }
    }

    /// Runs `f` with a connection on the blocking pool.
    pub async fn with<T, F>(self: &std::sync::Arc<Self>, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        let db = self.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut store = db.take()?;
            let out = f(&mut store);
            match &out {
                Err(e) if connection_suspect(e) => drop(store),
                _ => db.give_back(store),
            }
            out
        })
        .await;
        match joined {
            Ok(r) => r.map_err(Failure::from),
            Err(_) => Err(Failure::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "the request's database work failed unexpectedly",
            )),
        }
    }
}
