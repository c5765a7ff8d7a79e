//! drivelab-server: `drivelab serve`, a team's results database in a web browser.
//!
//! Pages over the database of [`drivelab_store`] (SQLite or PostgreSQL): the runs, sorted
//! and filtered and paginated; one run with the same sections and charts as the HTML report
//! (rendered by [`drivelab_report`], not a second time here); one drive's history across
//! firmware and time; and several runs side by side with ratios and overlaid charts.
//! Test machines upload result bundles (`POST /api/bundles`, a bearer token from the
//! `--tokens` file, of which only hashes are kept); [`client`] is the uploading side.
//!
//! Safe by default: loopback unless told otherwise, bodies limited in size, a bundle
//! checked completely (as `db import` checks a record) before one transaction stores it,
//! a duplicate recognised, every text from a bundle escaped, no request path reaching the
//! filesystem (the database is the only storage), and 503 while the database is away.
//!
//! axum on tokio serves; the store is synchronous, so every query runs on tokio's
//! blocking pool ([`db`]).

pub mod auth;
pub mod client;
mod db;
mod failure;
mod pages;
pub mod record;
pub mod render;
mod upload;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

pub use auth::Tokens;
/// The command a run page shows to make the run again (tested against the CLI's parser).
pub use pages::run::command as rerun_command;

/// Largest upload body accepted by default (a long suite's run.json is a few MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 << 20;

/// Where the server listens by default: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The results database: a SQLite path or a postgres:// URL.
    pub db: String,
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// Who may upload (none: uploads are refused).
    pub tokens: Tokens,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// When set, reading needs this token too (pages and downloads).
    pub read_token: Option<auth::ReadToken>,
    /// Bytes of rendered run pages kept ([`render::DEFAULT_CACHE_BYTES`]).
    pub cache_bytes: u64,
    /// Bytes of run.json drawn at once ([`render::DEFAULT_RENDER_BUDGET_BYTES`]).
    pub render_budget_bytes: u64,
}

/// What every handler shares.
pub(crate) struct AppState {
    pub db: Arc<db::Db>,
    pub renders: render::Renders,
}

/// The application's routes over `config`'s database.
fn router(config: &Config) -> Router {
    let state = Arc::new(AppState {
        db: Arc::new(db::Db::new(config.db.clone())),
        renders: render::Renders::new(config.cache_bytes, config.render_budget_bytes),
    });
    let pages = Router::new()
        .route("/", get(pages::runs::page))
        .route("/runs", get(pages::runs::page))
        .route("/runs/{id}", get(pages::run::page))
        .route("/runs/{id}/run.json", get(pages::run::run_json))
        .route("/runs/{id}/report.html", get(pages::run::report_html))
        .route("/drive", get(pages::drive::page))
        // Browsers ask for it on every page: nothing, rather than a 404 in their console.
        .route(
            "/favicon.ico",
            get(|| async { axum::http::StatusCode::NO_CONTENT }),
        )
        .route("/compare", get(pages::compare::page))
        .fallback(pages::not_found);
    let pages = match config.read_token.clone() {
        Some(t) => pages.layer(axum::middleware::from_fn(move |req, next| {
            auth::require_read(t.clone(), req, next)
        })),
        None => pages,
    };
    Router::new()
        .route(
            "/api/bundles",
            // Layers of the routed method only: another method is answered 405 (with
            // Allow) before the token is asked for.
            post(upload::upload)
                .route_layer(DefaultBodyLimit::max(config.max_body_bytes))
                .route_layer(axum::middleware::from_fn({
                    let (tokens, max) = (config.tokens.clone(), config.max_body_bytes);
                    move |req, next| upload::gate(tokens.clone(), max, req, next)
                })),
        )
        .merge(pages)
        .method_not_allowed_fallback(pages::method_not_allowed)
        .with_state(state)
}

/// Whether `addr` is reachable from this machine only.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// A server running on its own thread (its own tokio runtime).
pub struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl Running {
    /// The address it listens on (the port chosen when `listen` had port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:8080`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves until the process ends (or the server fails).
    pub fn wait(mut self) -> Result<(), String> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the server thread panicked".into()),
            None => Ok(()),
        }
    }

    /// Stops accepting, finishes the requests under way, and returns.
    pub fn stop(mut self) -> Result<(), String> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.wait()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Binds `config.listen` and starts serving on a thread of its own; returns once the
/// socket listens (an address in use is an error here, not later).
pub fn start(config: Config) -> Result<Running, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(config.listen))
        .map_err(|e| format!("--listen {}: cannot listen there: {e}", config.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("--listen {}: {e}", config.listen))?;
    let app = router(&config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("drivelab-serve".into())
        .spawn(move || {
            runtime.block_on(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await
                    .map_err(|e| format!("the server stopped: {e}"))
            })
        })
        .map_err(|e| format!("cannot start the server thread: {e}"))?;
    Ok(Running {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    })
}
