//! The test PostgreSQL server, shared by the store's and the command line's tests (the
//! latter include this file by path).

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn script_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-test-server.sh")
}

/// URL of the test PostgreSQL server: `DRIVELAB_TEST_PG_URL`, else the one
/// `scripts/pg-test-server.sh` starts. Panics (the test fails) when none can be had.
pub fn pg_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("DRIVELAB_TEST_PG_URL") {
            if !url.is_empty() {
                return url;
            }
        }
        let script = script_path();
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} failed ({}):\n{stderr}",
            script.display(),
            out.status
        );
        let line = stdout.lines().last().unwrap_or("");
        line.strip_prefix("export DRIVELAB_TEST_PG_URL=")
            .unwrap_or_else(|| panic!("{} printed no URL:\n{stdout}\n{stderr}", script.display()))
            .trim()
            .to_string()
    })
}
