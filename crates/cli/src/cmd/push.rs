//! `drivelab db push URL [BUNDLE…]` and `drivelab run … --upload URL`: result bundles sent
//! to a `drivelab serve` with an uploader's token (drivelab_server::client).

use std::path::{Path, PathBuf};

use clap::Args;
use drivelab_report::bundles::parse_run_doc;
use drivelab_server::client::{self, Pushed};
use drivelab_store::RunFilter;
use drivelab_suites::bundle::RUN_JSON;

use crate::fail::Fail;

/// The environment variable that carries the token when `--token` is not given.
pub const TOKEN_ENV: &str = "DRIVELAB_TOKEN";

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The server, http://HOST:PORT.
    #[arg(value_name = "URL", required = true)]
    pub url: Option<String>,
    /// Result bundle directories [default: every run in the database].
    #[arg(value_name = "BUNDLE")]
    pub bundles: Vec<PathBuf>,
    /// The uploader's token, as in the server's --tokens file [default: $DRIVELAB_TOKEN].
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

/// Where and as whom to upload, checked before anything is sent.
#[derive(Debug, Clone)]
pub struct Upload {
    pub url: String,
    pub token: String,
}

impl Upload {
    /// The server `url` (named `option` in messages) and the token given or in the
    /// environment.
    pub fn new(option: &str, url: &str, token: Option<String>) -> Result<Upload, Fail> {
        client::check_url(url).map_err(|e| Fail::usage(format!("{option} '{url}': {e}")))?;
        let token = token
            .or_else(|| std::env::var(TOKEN_ENV).ok())
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                Fail::usage(format!(
                    "--token: give the uploader's token (or set {TOKEN_ENV})"
                ))
            })?;
        Ok(Upload {
            url: url.to_string(),
            token: token.trim().to_string(),
        })
    }

    /// Sends one run.json; says on stdout what the server did.
    pub fn send(&self, run_json: &[u8]) -> Result<String, Fail> {
        match client::push(&self.url, &self.token, run_json) {
            Ok(Pushed::Stored(id)) => {
                crate::output::stdout::say_line(&format!("uploaded run {id} to {}", self.url))?;
                Ok(id)
            }
            Ok(Pushed::Duplicate(id)) => {
                crate::output::stdout::say_line(&format!("run {id} is on {} already", self.url))?;
                Ok(id)
            }
            Err(e) if e.refused => Err(Fail::usage(e.message)),
            Err(e) => Err(Fail::failed(e.message)),
        }
    }
}

/// A bundle's run.json as on disk, checked as the server will check it.
fn read_bundle(dir: &Path) -> Result<Vec<u8>, Fail> {
    let path = dir.join(RUN_JSON);
    let text = drivelab_trace::input::read_text(&path, drivelab_suites::bundle::MAX_RUN_JSON_BYTES)
        .map_err(|e| {
            Fail::usage(format!(
                "BUNDLE {}: not a result bundle directory (cannot read {RUN_JSON}: {e})",
                dir.display()
            ))
        })?;
    let doc =
        parse_run_doc(&text).map_err(|e| Fail::usage(format!("BUNDLE {}: {e}", dir.display())))?;
    if let Some(why) = crate::record::not_recordable(&doc) {
        return Err(Fail::usage(format!("BUNDLE {}: {why}", dir.display())));
    }
    Ok(text.into_bytes())
}

/// The run.json of every run in the database that keeps one.
fn stored_bundles(db: Option<&str>) -> Result<Vec<Vec<u8>>, Fail> {
    let Some(mut store) = crate::record::open_existing_store(db)? else {
        return Ok(Vec::new());
    };
    let failed = |e: drivelab_store::StoreError| Fail::failed(e.to_string());
    let runs = store.list_runs(&RunFilter::default()).map_err(failed)?;
    let mut out = Vec::new();
    for r in runs {
        if let Some(doc) = store
            .get_run(&r.run_id)
            .map_err(failed)?
            .and_then(|r| r.bundle_json)
        {
            out.push(serde_json::to_vec(&doc).map_err(|e| Fail::failed(e.to_string()))?);
        }
    }
    Ok(out)
}

pub fn push(db: Option<&str>, a: PushArgs) -> Result<i32, Fail> {
    let url = a.url.unwrap_or_default();
    let upload = Upload::new("URL", &url, a.token)?;
    // Every bundle is read and checked before the first is sent.
    let bodies = if a.bundles.is_empty() {
        stored_bundles(db)?
    } else {
        a.bundles
            .iter()
            .map(|d: &PathBuf| read_bundle(d))
            .collect::<Result<Vec<_>, _>>()?
    };
    if bodies.is_empty() {
        crate::output::stdout::say_line("no runs with a stored run.json to upload")?;
    }
    for b in &bodies {
        upload.send(b)?;
    }
    Ok(0)
}
