//! Errors of the report layer.

use std::path::PathBuf;

/// What can go wrong while building charts and reports.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart that cannot be drawn honestly or at all.
    #[error("chart '{id}': {why}")]
    InvalidChart {
        /// Chart id.
        id: String,
        /// What is wrong.
        why: String,
    },
    /// A report whose parts do not fit together (e.g. two charts with one id).
    #[error("report: {0}")]
    InvalidReport(String),
    /// The SVG could not be rasterised.
    #[error("PNG rendering of chart '{id}' failed: {why}")]
    Png {
        /// Chart id.
        id: String,
        /// Reason given by the rasteriser.
        why: String,
    },
    /// Writing an output file failed.
    #[error("writing {path}: {source}")]
    Io {
        /// File that could not be written.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}
