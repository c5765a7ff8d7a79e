//! Running fio: one process, waited for while a stop request (Ctrl-C) is watched; on a
//! stop fio gets SIGINT, which makes it end its jobs and still write its results.
//!
//! fio catches SIGINT only once it has set itself up (the first tenths of a second):
//! before that a SIGINT kills it and it writes nothing. So fio runs in a process group
//! of its own (a Ctrl-C at the terminal reaches drivelab alone), and drivelab passes the
//! stop on only once fio catches SIGINT (`SigCgt` in /proc); a second Ctrl-C, which ends
//! drivelab at once, kills the fio processes still running ([`kill_all`]).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How a fio process ended.
#[derive(Debug)]
pub struct Ended {
    /// The exit code (None: killed by a signal). drivelab never judges a run by it.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
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

impl Ended {
    /// How it ended, in words: "exit status 0", "killed by signal 2".
    pub fn how(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "ended without a status".into(),
        }
    }
}

/// Process groups of the fio processes running now, for [`kill_all`].
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kill every fio process group still running (for a process about to exit without
/// waiting, e.g. on a second Ctrl-C).
pub fn kill_all() {
    for pgid in running().drain(..) {
        let _ = drivelab_engine::sys::kill_process_group(pgid, libc::SIGKILL);
    }
}

/// Start fio with `args` in `dir`, stderr collected, in a process group of its own.
pub fn spawn(prog: &str, args: &[String], dir: &Path) -> Result<Child, String> {
    use std::os::unix::process::CommandExt;
    let child = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {prog}: {e}"))?;
    running().push(child.id());
    Ok(child)
}

/// Send SIGINT to `pid` (through the engine's syscall layer: no `kill` forked).
pub fn interrupt(pid: u32) {
    let _ = drivelab_engine::sys::kill_process(pid, libc::SIGINT);
}

/// Whether process `pid` catches SIGINT now (its `SigCgt` mask in /proc); true when
/// that cannot be read (then a SIGINT is the only way left).
fn catches_sigint(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_none_or(|mask| mask & (1 << (2 - 1)) != 0)
}

/// How long a stop waits for fio to catch SIGINT before sending it anyway.
const CATCH_WAIT: Duration = Duration::from_secs(10);

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
    // Since when fio is to be interrupted (a stop request, or its deadline passed).
    let mut ending_since: Option<std::time::Instant> = None;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        stopped |= stop.load(Ordering::Relaxed);
        overran |= limit.is_some_and(|l| began.elapsed() > l);
        if stopped || overran {
            ending_since.get_or_insert_with(std::time::Instant::now);
        }
        // Passed on once fio can take it (else it dies without writing its result).
        let due =
            ending_since.is_some_and(|t| catches_sigint(child.id()) || t.elapsed() > CATCH_WAIT);
        match interrupted_at {
            None if due => {
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
    running().retain(|&p| p != child.id());
    use std::os::unix::process::ExitStatusExt;
    Ok(Ended {
        code: status.code(),
        signal: status.signal(),
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
        assert_eq!(e.how(), "killed by signal 2");
        let child = spawn("true", &[], &dir).unwrap();
        let e = wait(child, &stop, None).unwrap();
        assert!(!e.overran && e.code == Some(0));
        assert_eq!(e.how(), "exit status 0");
    }

    #[test]
    fn a_stop_reaches_fio_only_once_it_can_write_its_result() {
        // fio killed by a SIGINT in its first tenths of a second (before it catches the
        // signal) writes nothing: a stop requested from the very start must still end
        // it the way fio ends on Ctrl-C, with its JSON result written.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("j.fio"),
            "[j]\nioengine=null\nsize=1g\ntime_based=1\nruntime=60s\n",
        )
        .unwrap();
        let args = ["--output-format=json", "--output=out.json", "j.fio"].map(String::from);
        let child = spawn(&program(), &args, dir.path()).unwrap();
        let stop = AtomicBool::new(true);
        let e = wait(child, &stop, None).unwrap();
        assert!(e.stopped && !e.overran);
        assert_eq!(e.signal, None, "fio {}: {}", e.how(), e.stderr);
        let out = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
        assert!(super::super::json::parse(&out).is_ok(), "{out}");
    }
}
