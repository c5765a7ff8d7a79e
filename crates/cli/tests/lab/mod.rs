//! The device lab from the tests' side: boot a QEMU guest (Debian's kernel under TCG) with
//! declared emulated disks, run a shell script in it with this build's drivelab, and read
//! back its exit code and the files it left in `/out`.
//!
//! Everything is done by `scripts/lab/run` (see docs/lab.md): the idempotent set-up
//! (packages, kernel, initramfs; under a lock), the snapshot of the drivelab binary given
//! (so a rebuild during the run changes nothing), one guest at a time on the machine (a
//! lock: parallel TCG guests on two cores crawl) and the wall-clock limit that kills QEMU
//! by its PID.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A finished guest run: the script's exit code and its output folder (`/out` inside).
pub struct GuestRun {
    /// The guest script's exit code (124: timed out, 97: the guest died).
    pub rc: i32,
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl GuestRun {
    pub fn path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// A file the guest wrote ("" when it is missing).
    pub fn text(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// A JSON document the guest wrote.
    pub fn json(&self, name: &str) -> serde_json::Value {
        let t = std::fs::read_to_string(self.path(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n--- guest output:\n{}", self.text("cmd.log")));
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("{name} is not JSON ({e}): {t}"))
    }

    /// `key=value` lines of a file the guest wrote (the last value of a key wins).
    pub fn facts(&self, name: &str) -> Facts {
        Facts(
            self.text(name)
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
            name.to_string(),
        )
    }

    /// The guest's output, for assertion messages.
    pub fn log(&self) -> String {
        self.text("cmd.log")
    }
}

impl Drop for GuestRun {
    fn drop(&mut self) {
        // Kept for a look when the test fails.
        if std::thread::panicking() {
            if let Some(d) = self.dir.take() {
                eprintln!("lab output kept in {}", d.keep().display());
            }
        }
    }
}

/// `key=value` facts a guest script recorded.
pub struct Facts(HashMap<String, String>, String);

impl Facts {
    pub fn get(&self, key: &str) -> &str {
        self.0
            .get(key)
            .unwrap_or_else(|| panic!("{}: no {key} in {:?}", self.1, self.0))
    }

    /// The value of `key`, if recorded and not empty.
    pub fn opt(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    pub fn num<T: std::str::FromStr>(&self, key: &str) -> T {
        let v = self.get(key);
        v.parse()
            .unwrap_or_else(|_| panic!("{}: {key}={v} is not a number", self.1))
    }
}

/// Boot the lab with `devices` (as `scripts/lab/run` names them: `nvme`, `sata`,
/// `usb-bot`, `usb-uas`, `none`; `:SIZE` after a name sets its size), run `script`
/// (busybox sh; `. /out/lab.sh` gives the helpers, `drivelab` is this build's binary)
/// and power off; `timeout_s` bounds the boot's wall-clock time (QEMU is killed after it).
pub fn run(devices: &[&str], script: &str, timeout_s: u64) -> GuestRun {
    run_with_qmp(devices, script, timeout_s, &[])
}

/// [`run`], answering the guest's requests for host-side QMP commands: when the guest
/// creates `/out/qmp-want-N` (N from 1), `qmp[N-1]` (one QMP command, JSON) is sent to
/// QEMU, its reply written to `/out/qmp-N.log`, then `/out/qmp-done-N` is created, which
/// the guest waits for (e.g. to set an NVMe critical warning in the middle of a run).
pub fn run_with_qmp(devices: &[&str], script: &str, timeout_s: u64, qmp: &[&str]) -> GuestRun {
    let dir = tempfile::Builder::new()
        .prefix("drivelab-lab-test.")
        .tempdir_in("/var/tmp")
        .unwrap();
    let path = dir.path().to_path_buf();
    let script_file = path.join("script.sh");
    std::fs::write(&script_file, script).unwrap();
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/lab/run");
    let o = Command::new(&runner)
        .arg("--drivelab")
        .arg(env!("CARGO_BIN_EXE_drivelab"))
        .arg("--out")
        .arg(&path)
        .arg("--timeout")
        .arg(timeout_s.to_string())
        .arg("--script")
        .arg(&script_file)
        .arg("-q")
        .args(devices)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} runs: {e}", runner.display()));
    let mut child = o;
    let mut next = 0;
    while child.try_wait().ok().flatten().is_none() {
        if next < qmp.len() && path.join(format!("qmp-want-{}", next + 1)).exists() {
            let reply = qmp_command(&path.join("qmp.sock"), qmp[next])
                .unwrap_or_else(|e| format!("QMP failed: {e}"));
            std::fs::write(path.join(format!("qmp-{}.log", next + 1)), reply).unwrap();
            std::fs::write(path.join(format!("qmp-done-{}", next + 1)), "").unwrap();
            next += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    let rc = o.status.code().unwrap_or(-1);
    let run = GuestRun {
        rc,
        dir: Some(dir),
        path,
    };
    assert!(
        rc != 124 && rc != 97,
        "the lab guest did not finish its script (rc {rc}): {}\n--- guest output:\n{}\n--- console (tail):\n{}",
        String::from_utf8_lossy(&o.stderr),
        run.log(),
        tail(&run.text("serial.log"), 30)
    );
    run
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Send one QMP command to the QEMU listening on `sock`; its reply (JSON).
fn qmp_command(sock: &Path, cmd: &str) -> std::io::Result<String> {
    use std::io::{BufRead, BufReader, Write};
    let s = std::os::unix::net::UnixStream::connect(sock)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut r = BufReader::new(s.try_clone()?);
    let mut w = s;
    let mut line = String::new();
    r.read_line(&mut line)?; // the greeting
    let mut reply = String::new();
    for c in [r#"{"execute":"qmp_capabilities"}"#, cmd] {
        writeln!(w, "{c}")?;
        // Events may come before the reply.
        loop {
            reply.clear();
            if r.read_line(&mut reply)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            if !reply.contains("\"event\"") {
                break;
            }
        }
    }
    Ok(reply)
}
