//! What a recording changes, written down before it is changed, so that a recording
//! ended without unwinding (SIGKILL, a crash, power loss of the process) can be undone by
//! the next one.
//!
//! The kernel's tracer is one per system, so there is one state file
//! ([`state_path`]): the recording's pid (and its start time, so a reused pid is not
//! taken for it), every tracefs or sysfs setting with its value before, the tracefs
//! mount made for the recording and its scratch file. A new recording that finds the
//! file of a process that is gone sets everything back, removes the mount and the
//! scratch file, and says so in one line; one that finds a live recording is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::fail::Fail;

/// What one recording has changed so far.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    pid: u32,
    /// The process's start time (`/proc/PID/stat` field 22), clock ticks since boot.
    start_ticks: u64,
    /// Settings in the order they were changed, each with its value before.
    settings: Vec<(PathBuf, String)>,
    mount: Option<PathBuf>,
    scratch: Option<PathBuf>,
}

/// This recording's entry in the state file; the file is removed when dropped (after
/// everything was set back on an ordinary ending).
pub struct Ledger {
    path: PathBuf,
    state: State,
    /// The kernel is known to be as it was (nothing changed yet, or the recording's
    /// undo read back `nop`): only then does the state file go.
    clean: Arc<AtomicBool>,
}

/// Where the state is kept: `/run` (cleared at boot, like the kernel's tracer state),
/// else the temporary directory.
pub fn state_path() -> PathBuf {
    let run = Path::new("/run");
    let dir = if run.is_dir() {
        run.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    dir.join("drivelab-trace-record.json")
}

impl Ledger {
    /// Take the tracer for this process: undo what a recording that is gone left
    /// behind, refuse while another one runs.
    pub fn claim() -> Result<Ledger, Fail> {
        let path = state_path();
        if let Ok(text) = std::fs::read_to_string(&path) {
            match serde_json::from_str::<State>(&text) {
                Ok(old) if alive(old.pid, old.start_ticks) => {
                    return Err(Fail::failed(format!(
                        "another drivelab recording (pid {}) is using the kernel's tracer: one recording at a time",
                        old.pid
                    )));
                }
                Ok(old) => eprintln!("drivelab: {}", undo(&old)),
                Err(e) => eprintln!(
                    "drivelab: ignoring {}, not a recording's state ({e})",
                    path.display()
                ),
            }
            let _ = std::fs::remove_file(&path);
        }
        let pid = std::process::id();
        let state = State {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
            ..State::default()
        };
        let l = Ledger {
            path,
            state,
            clean: Arc::new(AtomicBool::new(true)),
        };
        l.save()?;
        Ok(l)
    }

    /// The state file's path (removed by a second Ctrl-C's last-moment undo too).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The recording's scratch file, once named.
    pub fn scratch_path(&self) -> Option<&Path> {
        self.state.scratch.as_deref()
    }

    /// `file` is about to be set; its value now is `old`.
    pub fn setting(&mut self, file: &Path, old: &str) -> Result<(), Fail> {
        self.clean.store(false, Ordering::SeqCst);
        self.state
            .settings
            .push((file.to_path_buf(), old.to_string()));
        self.save()
    }

    /// The flag the recording's undo sets once it has read the kernel back as it was.
    pub fn clean_flag(&self) -> Arc<AtomicBool> {
        self.clean.clone()
    }

    /// tracefs is about to be mounted on `dir`.
    pub fn mount(&mut self, dir: &Path) -> Result<(), Fail> {
        self.state.mount = Some(dir.to_path_buf());
        self.save()
    }

    /// The recording's scratch file.
    pub fn scratch(&mut self, file: &Path) -> Result<(), Fail> {
        self.state.scratch = Some(file.to_path_buf());
        self.save()
    }

    /// Written whole to a temporary file and renamed over: never half a state.
    fn save(&self) -> Result<(), Fail> {
        let text = serde_json::to_string(&self.state).expect("plain data");
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                Fail::failed(format!(
                    "cannot write the recording's state to {}: {e}",
                    self.path.display()
                ))
            })
    }
}

impl Drop for Ledger {
    /// The state file goes once the kernel is set back; while it is not (an undo that
    /// failed), it stays, so that the next recording sets it back.
    fn drop(&mut self) {
        if self.clean.load(Ordering::SeqCst) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether the settings that keep the kernel tracing are back as they were: the
/// current tracer (`nop`) and the device's trace (`enable` 0), read back after writing.
pub fn set_back(saved: &[(PathBuf, String)]) -> bool {
    saved
        .iter()
        .filter(|(f, _)| f.ends_with("current_tracer") || f.ends_with("trace/enable"))
        .all(|(f, v)| std::fs::read_to_string(f).is_ok_and(|now| now.trim() == v.trim()))
}

/// Set back everything `old` recorded; what was done, in one line.
fn undo(old: &State) -> String {
    for (file, value) in old.settings.iter().rev() {
        let _ = std::fs::write(file, value);
    }
    let mut done = vec![format!("{} tracing settings", old.settings.len())];
    if let Some(m) = &old.mount {
        unmount(m);
        let _ = std::fs::remove_dir(m);
        done.push(format!("the tracefs mount {}", m.display()));
    }
    if let Some(s) = &old.scratch {
        if std::fs::remove_file(s).is_ok() {
            done.push(format!("the scratch file {}", s.display()));
        }
    }
    format!(
        "a recording (pid {}) ended without cleaning up; set back or removed: {}",
        old.pid,
        done.join(", ")
    )
}

/// Unmount a tracefs of ours; lazily, so a file still open in it does not keep it
/// mounted.
pub fn unmount(p: &Path) {
    let _ = Command::new("umount")
        .arg("-l")
        .arg(p)
        .stderr(Stdio::null())
        .status();
}

/// Is `pid` the process that wrote the state (same start time)?
/// A zombie (killed, not yet waited for) is gone.
fn alive(pid: u32, ticks: u64) -> bool {
    stat_fields(pid).is_some_and(|f| {
        f.first().is_some_and(|s| s != "Z" && s != "X")
            && f.get(19)
                .and_then(|t| t.parse().ok())
                .is_some_and(|t: u64| ticks == 0 || t == ticks)
    })
}

fn start_ticks(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// The fields of `/proc/PID/stat` after `PID (COMM)` (COMM may hold spaces and
/// parentheses): the state first.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = std::process::id();
        let t = super::start_ticks(me).expect("own stat");
        assert!(super::alive(me, t));
        assert!(!super::alive(me, t + 1));
        assert!(!super::alive(u32::MAX, 0));
    }
}
