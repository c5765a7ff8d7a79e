//! Test helpers shared by the integration tests.
pub mod bundles;
pub mod chromium;
pub mod sample;
