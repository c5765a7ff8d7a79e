//! Helpers of the report, compare and database tests: bundles made by `drivelab run
//! … --short` on simulated drives (once per test binary), and a real PostgreSQL server.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

pub fn drivelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelab"))
}

/// Runs drivelab with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    drivelab()
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .output()
        .expect("drivelab runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts a bad-input failure: exit code 2 and one line on stderr containing `want`.
pub fn assert_usage(o: &Output, want: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "not one line: {e}");
    assert!(e.contains(want), "{e:?} lacks {want:?}");
}

/// The bundle of `drivelab run SUITE DRIVE --short`, made once per test binary.
pub fn bundle(suite: &str, drive: &str) -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    static MADE: OnceLock<Mutex<HashMap<(String, String), PathBuf>>> = OnceLock::new();
    let root = ROOT.get_or_init(|| tempfile::tempdir().unwrap().keep());
    let made = MADE.get_or_init(Default::default);
    let mut m = made.lock().unwrap();
    let key = (suite.to_string(), drive.to_string());
    if let Some(p) = m.get(&key) {
        return p.clone();
    }
    let out = root.join(format!("{suite}-{}", m.len()));
    let o = run_in(
        root,
        &[
            "run",
            suite,
            drive,
            "--short",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        o.status.success(),
        "drivelab run {suite} {drive}: {}",
        stderr(&o)
    );
    assert!(out.join("run.json").exists());
    m.insert(key, out.clone());
    out
}

pub const NVME: &str = "sim:nvme-tlc,capacity=4G";
pub const SATA: &str = "sim:sata-mlc,capacity=4G";
pub const DRAMLESS: &str = "sim:dramless,capacity=4G";

#[path = "../../../store/tests/common/pg.rs"]
mod pg;
pub use pg::pg_url;

/// A fresh, empty PostgreSQL schema named after the test; the URL that uses it.
pub fn fresh_pg(test: &str) -> String {
    let schema = format!("dlcli_{test}");
    let mut c = postgres::Client::connect(pg_url(), postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"));
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
    ))
    .unwrap();
    let url = pg_url();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}
