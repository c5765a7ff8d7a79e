//! What a run prints and writes: one small module per format.

pub mod csv;
pub mod json;
pub mod progress;
pub mod stdout;
pub mod summary;
