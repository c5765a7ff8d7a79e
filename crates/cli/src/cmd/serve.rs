//! `drivelab serve`: the results database in a web browser (crates/server), and uploads
//! from test machines when `--tokens` names who may upload.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use drivelab_server::{Config, Tokens, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES};

use crate::fail::Fail;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The results database: a SQLite file or a postgres:// URL
    /// [default: results.sqlite in $XDG_DATA_HOME/drivelab, else ~/.local/share/drivelab].
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// Address and port to listen on. Loopback by default: only this machine can browse;
    /// give 0.0.0.0:8080 (or one interface's address) to serve the lab's network.
    #[arg(long, value_name = "ADDR:PORT", default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Who may upload bundles (POST /api/bundles): a line `NAME TOKEN` per uploader, the
    /// token at least 16 characters. Only the tokens' hashes are kept. Without it,
    /// uploads are refused.
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// Make reading private: pages and downloads need this token (a browser asks for it
    /// as a password; scripts send `Authorization: Bearer TOKEN`). At least 16 characters.
    #[arg(long = "read-token", value_name = "TOKEN")]
    pub read_token: Option<String>,
    /// Largest upload accepted, in MiB.
    #[arg(long = "max-body-mib", value_name = "MIB", value_parser = crate::values::positive, default_value_t = (DEFAULT_MAX_BODY_BYTES >> 20) as u32)]
    pub max_body_mib: u32,
    /// Rendered run pages kept in memory, in MiB (a page is drawn once per content, then
    /// served from here until it is the least recently used).
    #[arg(long = "page-cache-mib", value_name = "MIB", value_parser = crate::values::positive, default_value_t = (drivelab_server::render::DEFAULT_CACHE_BYTES >> 20) as u32)]
    pub page_cache_mib: u32,
    /// run.json drawn into pages at once, in MiB: more readers wait (drawing costs several
    /// times a bundle's size in memory); a larger bundle is drawn alone.
    #[arg(long = "render-budget-mib", value_name = "MIB", value_parser = crate::values::positive, default_value_t = (drivelab_server::render::DEFAULT_RENDER_BUDGET_BYTES >> 20) as u32)]
    pub render_budget_mib: u32,
}

fn tokens(path: Option<&PathBuf>) -> Result<Tokens, Fail> {
    let Some(p) = path else {
        return Ok(Tokens::default());
    };
    let text = drivelab_trace::input::read_text(p, 1 << 20)
        .map_err(|e| Fail::usage(format!("--tokens {}: cannot read it: {e}", p.display())))?;
    let t =
        Tokens::parse(&text).map_err(|e| Fail::usage(format!("--tokens {}: {e}", p.display())))?;
    if t.is_empty() {
        return Err(Fail::usage(format!(
            "--tokens {}: names no uploader; give a line NAME TOKEN per uploader",
            p.display()
        )));
    }
    Ok(t)
}

pub fn run(a: ServeArgs) -> Result<i32, Fail> {
    let listen: SocketAddr = a.listen.parse().map_err(|_| {
        Fail::usage(format!(
            "--listen '{}': give ADDRESS:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080",
            a.listen
        ))
    })?;
    let tokens = tokens(a.tokens.as_ref())?;
    let read_token = a
        .read_token
        .as_deref()
        .map(drivelab_server::auth::ReadToken::new)
        .transpose()
        .map_err(|e| Fail::usage(format!("--read-token: {e}")))?;
    let private = read_token.is_some();
    // The database is opened (made, for a new SQLite file) before the socket listens: a
    // wrong --db is said at once, not on the first page.
    let store = crate::record::open_store(a.db.as_deref())?;
    let location = store.location().to_string();
    drop(store);
    let db = a.db.clone().unwrap_or_else(|| {
        drivelab_store::Store::default_location()
            .display()
            .to_string()
    });
    let config = Config {
        db,
        listen,
        tokens: tokens.clone(),
        max_body_bytes: (a.max_body_mib as usize) << 20,
        read_token,
        cache_bytes: u64::from(a.page_cache_mib) << 20,
        render_budget_bytes: u64::from(a.render_budget_mib) << 20,
    };
    let running = drivelab_server::start(config).map_err(Fail::failed)?;
    let addr = running.addr();
    let reach = match (drivelab_server::is_loopback(&addr), private) {
        (true, _) => "loopback only: other machines cannot reach it (--listen 0.0.0.0:PORT to serve the network)",
        (false, false) => "reachable from the network: anyone who can reach it can read the results (--read-token to make them private)",
        (false, true) => "reachable from the network: reading needs the read token",
    };
    let uploads = if tokens.is_empty() {
        "uploads off (--tokens FILE to allow them)".to_string()
    } else {
        format!("uploads from {} uploader(s)", tokens.len())
    };
    crate::output::stdout::say_line(&format!(
        "drivelab serve: http://{addr}/ ({reach}); results from {location}; {uploads}"
    ))?;
    running.wait().map_err(Fail::failed)?;
    Ok(0)
}
