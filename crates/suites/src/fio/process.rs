//! Running fio: one process, waited for while a stop request (Ctrl-C) is watched; on a
//! stop fio gets SIGINT, which makes it end its jobs and still write its results.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How a fio process ended.
#[derive(Debug)]
pub struct Ended {
    /// The exit code (None: killed by a signal). drivelab never judges a run by it.
    pub code: Option<i32>,
    /// What fio wrote on stderr.
    pub stderr: String,
    /// A stop was requested while it ran.
    pub stopped: bool,
    /// It ran past its deadline and was stopped.
    pub overran: bool,
}

/// How long a step may take before its fio is stopped: the step's own time (idle,
/// ramp, runtime) twice over plus two minutes for setting up (laying out files, a slow
/// host's start); None for a step bounded by bytes, whose time is not known.
pub fn deadline(step: &crate::plan::PlannedStep) -> Option<Duration> {
    let w = &step.workload;
    let ns = w.runtime_ns? + w.ramp_ns + step.idle_before_ns;
    Some(Duration::from_nanos(ns.saturating_mul(2)) + Duration::from_secs(120))
}

/// The fio program: `DRIVELAB_FIO` when set (another build), else `fio` on the PATH.
pub fn program() -> String {
    std::env::var("DRIVELAB_FIO").unwrap_or_else(|_| "fio".into())
}

/// `fio --version` of `prog`, e.g. `fio-3.33`.
pub fn version(prog: &str) -> Result<String, String> {
    let o = Command::new(prog)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {prog}: {e} (install fio, e.g. apt-get install fio)"))?;
    let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
    if !o.status.success() || !v.starts_with("fio-") {
        return Err(format!(
            "{prog} --version did not name a fio version ('{v}')"
        ));
    }
    Ok(v)
}

/// Start fio with `args` in `dir`, stderr collected.
pub fn spawn(prog: &str, args: &[String], dir: &Path) -> Result<Child, String> {
    Command::new(prog)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {prog}: {e}"))
}

/// Send SIGINT to `pid` (through kill(1): the suites hold no unsafe code).
pub fn interrupt(pid: u32) {
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
}

/// Wait for `child`, interrupting it once when `stop` is set or `limit` has passed (a
/// host whose fio hangs must not hang the run), and killing it 30 s after that.
pub fn wait(mut child: Child, stop: &AtomicBool, limit: Option<Duration>) -> Result<Ended, String> {
    let began = std::time::Instant::now();
    let mut interrupted_at: Option<std::time::Instant> = None;
    let mut overran = false;
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = err.as_mut() {
            let _ = std::io::Read::read_to_string(e, &mut s);
        }
        s
    });
    let mut stopped = false;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if !stopped && stop.load(Ordering::Relaxed) {
            stopped = true;
        }
        overran |= limit.is_some_and(|l| began.elapsed() > l);
        match interrupted_at {
            None if stopped || overran => {
                interrupt(child.id());
                interrupted_at = Some(std::time::Instant::now());
            }
            Some(t) if t.elapsed() > Duration::from_secs(30) => {
                let _ = child.kill();
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Ended {
        code: status.code(),
        stderr: reader.join().unwrap_or_default(),
        stopped,
        overran,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_past_its_deadline_is_stopped() {
        let dir = std::env::temp_dir();
        let child = spawn("sleep", &["30".to_string()], &dir).unwrap();
        let stop = AtomicBool::new(false);
        let e = wait(child, &stop, Some(Duration::from_millis(100))).unwrap();
        // Interrupted (SIGINT ends sleep), not waited for.
        assert!(e.overran && !e.stopped);
        assert_eq!(e.code, None, "ended by a signal");
        let child = spawn("true", &[], &dir).unwrap();
        let e = wait(child, &stop, None).unwrap();
        assert!(!e.overran && e.code == Some(0));
    }
}
