//! Helpers of the serve tests: a real `drivelab serve` on 127.0.0.x with an ephemeral
//! port, plain HTTP to it, and bundles of real runs varied into other drives.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

pub use crate::report_db_common::*;

/// The uploader token every test server accepts.
pub const TOKEN: &str = "rig1-0123456789abcdef";

/// A `drivelab serve` process, stopped (by its pid) when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    pub dir: PathBuf,
}

impl Server {
    /// Serves `db` on `listen` (port 0) with the test token and `extra` arguments.
    pub fn start_on(db: &str, listen: &str, extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap().keep();
        let tokens = dir.join("tokens");
        std::fs::write(&tokens, format!("# test uploaders\nrig1 {TOKEN}\n")).unwrap();
        let mut child = drivelab()
            .args(["serve", "--db", db, "--listen", listen, "--tokens"])
            .arg(&tokens)
            .args(extra)
            .current_dir(&dir)
            .env("XDG_DATA_HOME", dir.join("xdg"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("drivelab serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Server { child, url, dir }
    }

    /// The server process's id (to read its memory from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no VmHWM in {status}"))
    }

    /// GET: the status and the `X-Drivelab-Render` header (`drawn` or `cached`).
    pub fn get_render(&self, path: &str) -> (u16, Option<String>) {
        let mut r = agent()
            .get(&format!("{}{path}", self.url))
            .call()
            .expect("the server answers");
        let render = r
            .headers()
            .get("x-drivelab-render")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let _ = r.body_mut().with_config().limit(64 << 20).read_to_vec();
        (r.status().as_u16(), render)
    }

    pub fn start(db: &str) -> Server {
        Self::start_on(db, "127.0.0.1:0", &[])
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        get(&format!("{}{path}", self.url))
    }

    pub fn upload(&self, token: &str, body: &[u8]) -> (u16, String) {
        post(&format!("{}/api/bundles", self.url), token, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// GET: the status and the body.
pub fn get(url: &str) -> (u16, String) {
    let mut r = agent().get(url).call().expect("the server answers");
    let status = r.status().as_u16();
    let body = r
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .unwrap();
    (status, body)
}

/// POST with a bearer token: the status and the body.
pub fn post(url: &str, token: &str, body: &[u8]) -> (u16, String) {
    let mut r = agent()
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(body)
        .expect("the server answers");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// A drive of a varied bundle.
pub struct Drive<'a> {
    pub model: &'a str,
    pub serial: &'a str,
    pub firmware: &'a str,
}

/// `bundle`'s run.json as if run at second `n` of a day on another drive (another run id).
pub fn varied(bundle: &Path, n: u32, d: &Drive) -> Vec<u8> {
    let text = std::fs::read_to_string(bundle.join("run.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["created_at"] = format!(
        "2026-03-{:02}T{:02}:{:02}:{:02}.000Z",
        1 + n / 86400,
        n / 3600 % 24,
        n / 60 % 60,
        n % 60
    )
    .into();
    let t = &mut doc["target"];
    t["model"] = d.model.into();
    t["serial"] = d.serial.into();
    t["firmware"] = d.firmware.into();
    serde_json::to_vec(&doc).unwrap()
}

/// The run id the server answers an upload with.
pub fn run_id_of(answer: &str) -> String {
    let v: serde_json::Value =
        serde_json::from_str(answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
    v["run_id"].as_str().unwrap().to_string()
}
