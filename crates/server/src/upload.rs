//! `POST /api/bundles`: a test machine's result bundle (its `run.json` as the body, a
//! bearer token in `Authorization`). Checked completely — the token, UTF-8, the bundle
//! schema, the record as `db import` checks it — before one transaction stores it; an
//! upload of a run already stored is recognised and changes nothing.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, State};
use axum::http::{header, HeaderMap, StatusCode};

use crate::auth::Tokens;
use axum::response::{IntoResponse, Response};
use drivelab_report::bundles::parse_run_doc;
use drivelab_store::StoreError;

use crate::failure::Failure;
use crate::AppState;

/// The bearer token of a request, if it carries one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// A refusal decided from the head, sent once the body (within the size limit) has been
/// read and dropped: a client that sends its body without waiting for `100 Continue`
/// would else find the connection closed under it and never read the answer (a broken
/// pipe instead of "wrong token"). A client that waits is answered at once.
async fn after_body(req: axum::extract::Request, max_body_bytes: usize, r: Response) -> Response {
    let waits = req
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if !waits {
        let _ = axum::body::to_bytes(req.into_body(), max_body_bytes).await;
    }
    r
}

/// Whether the request may upload at all, decided from its head before its body is read:
/// a known uploader's token, and a declared length within `max_body_bytes` (a client
/// that waits for `100 Continue` is answered without sending its body).
pub async fn gate(
    tokens: Tokens,
    max_body_bytes: usize,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if tokens.is_empty() {
        let r = Failure::new(
            StatusCode::FORBIDDEN,
            "uploads are off on this server (start it with --tokens FILE)",
        )
        .json();
        return after_body(req, max_body_bytes, r).await;
    }
    let Some(uploader) = bearer(req.headers()).and_then(|t| tokens.uploader(t)) else {
        let mut r = Failure::new(
            StatusCode::UNAUTHORIZED,
            "give an uploader's token as 'Authorization: Bearer TOKEN'",
        )
        .json();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer"),
        );
        return after_body(req, max_body_bytes, r).await;
    };
    let uploader = Uploader(uploader.to_string());
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body_bytes as u64) {
        return Failure::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the bundle is larger than this server takes ({max_body_bytes} bytes)"),
        )
        .json();
    }
    req.extensions_mut().insert(uploader);
    next.run(req).await
}

/// The name (from the tokens file) of the uploader whose token let a request through.
#[derive(Debug, Clone)]
pub struct Uploader(pub String);

/// Checks the body as a bundle and makes its record; the message says what is wrong.
fn bundle_record(body: &[u8]) -> Result<drivelab_store::RunRecord, Failure> {
    let bad = |m: String| Failure::new(StatusCode::UNPROCESSABLE_ENTITY, m);
    let text = std::str::from_utf8(body).map_err(|_| {
        Failure::bad_request("the body is not UTF-8 text: send a bundle's run.json")
    })?;
    let doc = parse_run_doc(text).map_err(bad)?;
    // Checked first: an analysis that is not its suite's is said as that.
    let record = crate::record::run_record(&doc, None).map_err(bad)?;
    if let Some(why) = crate::record::not_recordable(&doc) {
        return Err(bad(why.into()));
    }
    record.validate().map_err(|e| bad(e.to_string()))?;
    Ok(record)
}

/// The upload itself, behind [`gate`] (and the body limit, for bodies of no declared
/// length).
pub async fn upload(
    State(state): State<Arc<AppState>>,
    Extension(uploader): Extension<Uploader>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // A body of no declared length found over the limit while read (413), or cut off:
    // said as JSON like every other refusal, not axum's plain text.
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            let message = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                "the bundle is larger than this server takes (--max-body-mib)".to_string()
            } else {
                format!("the body could not be read: {}", e.body_text())
            };
            return Failure::new(e.status(), message).json();
        }
    };
    let mut record = match bundle_record(&body) {
        Ok(r) => r,
        Err(f) => return f.json(),
    };
    record.uploaded_by = Some(uploader.0);
    let run_id = record.run_id.clone();
    let stored = state
        .db
        .with(move |store| match store.insert_run(&record) {
            Ok(()) => Ok(true),
            Err(StoreError::DuplicateRun(_)) => Ok(false),
            Err(e) => Err(e),
        })
        .await;
    match stored {
        Ok(new) => {
            let status = if new {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            let body = serde_json::json!({
                "run_id": run_id,
                "duplicate": !new,
                "url": format!("/runs/{run_id}"),
            });
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response()
        }
        Err(f) => f.json(),
    }
}
