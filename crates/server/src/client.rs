//! The uploading side of `POST /api/bundles` (`drivelab db push`, `drivelab run
//! --upload`): a blocking HTTP client (ureq, without TLS: plain `http://` to a server on
//! the lab's network, or through an SSH tunnel or a TLS proxy in front of it).

use std::time::Duration;

/// What the server did with an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Stored as a new run.
    Stored(String),
    /// The server had the run already.
    Duplicate(String),
}

/// Why an upload failed: the request's fault (a bad token or bundle: exit 2) or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushError {
    /// One line for the user.
    pub message: String,
    /// The server refused the request itself (4xx).
    pub refused: bool,
}

/// Checks a server URL: `http://HOST[:PORT]` with nothing but an optional `/` after.
pub fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err("give the server as http://HOST:PORT (https is not spoken; use a tunnel or a TLS proxy)".into());
    };
    let host = rest.trim_end_matches('/');
    if host.is_empty()
        || host.contains(['/', '?', '#', '@'])
        || host.chars().any(char::is_whitespace)
    {
        return Err("give the server as http://HOST:PORT".into());
    }
    Ok(())
}

/// Sends one bundle's `run.json` to the server at `base` with `token`.
pub fn push(base: &str, token: &str, run_json: &[u8]) -> Result<Pushed, PushError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(300)))
        .build()
        .into();
    let url = format!("{}/api/bundles", base.trim_end_matches('/'));
    let failed = |message: String| PushError {
        message,
        refused: false,
    };
    let mut resp = agent
        .post(&url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(run_json)
        .map_err(|e| failed(format!("{url}: {e}")))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| failed(format!("{url}: reading the answer: {e}")))?;
    let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let field = |k: &str| {
        json.as_ref()
            .and_then(|j| j.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    match status {
        201 | 200 => {
            let id = field("run_id")
                .ok_or_else(|| failed(format!("{url}: the answer names no run_id")))?;
            Ok(if status == 201 {
                Pushed::Stored(id)
            } else {
                Pushed::Duplicate(id)
            })
        }
        _ => {
            let why = field("error").unwrap_or_else(|| text.trim().chars().take(200).collect());
            Err(PushError {
                message: format!("{url}: {status}: {why}"),
                refused: (400..500).contains(&status),
            })
        }
    }
}
