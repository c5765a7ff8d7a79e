//! What a request that cannot be answered gets: a status and one plain sentence, as an
//! HTML page for people or JSON for the upload API.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use drivelab_store::StoreError;

/// A request that failed, with the status that says why.
#[derive(Debug)]
pub struct Failure {
    /// The HTTP status.
    pub status: StatusCode,
    /// One sentence for the user.
    pub message: String,
}

impl Failure {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// The same failure as a JSON body `{"error": "..."}` (for API clients).
    pub fn json(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string();
        (
            self.status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }
}

impl From<StoreError> for Failure {
    /// A database that cannot be opened or answer is away for now (503: try again); a
    /// record it refuses is the request's fault (422); an ambiguous id finds nothing.
    fn from(e: StoreError) -> Self {
        let status = match &e {
            StoreError::Open { .. }
            | StoreError::Connect { .. }
            | StoreError::Query { .. }
            | StoreError::Migration { .. }
            | StoreError::NewerSchema { .. }
            | StoreError::NotDrivelab { .. } => StatusCode::SERVICE_UNAVAILABLE,
            StoreError::InvalidRecord { .. } | StoreError::InvalidExport(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            StoreError::AmbiguousId { .. } => StatusCode::NOT_FOUND,
            StoreError::DuplicateRun(_) => StatusCode::CONFLICT,
        };
        Failure::new(status, e.to_string())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let mut r = crate::pages::layout::error_page(self.status, &self.message);
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("5"),
            );
        }
        r
    }
}
