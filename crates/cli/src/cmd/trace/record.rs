//! `drivelab trace record DEVICE -o OUT.dltrace (--duration D | -- COMMAND ARGS…)`.
//!
//! Through the kernel's block tracing, driven through tracefs directly: the device's
//! `trace/enable` in sysfs and the kernel's `blk` tracer with `blk_classic` output (the
//! blktrace program's relay files are refused on kernels locked down against debugfs;
//! tracefs is not). The tracer's lines (blkparse's text, nanosecond times, queue and
//! complete events) are copied from `trace_pipe` into a scratch file beside the output,
//! then read with the blkparse importer: records are the queued bios with their pid and
//! process name, service time = completion − queue. Read-only towards the device:
//! nothing opens it. Whatever the ending (done, the command failed, Ctrl-C, SIGTERM, an
//! error) the tracer is set back to `nop`, the device's trace removed and the tracing
//! options restored. The kernel's tracer is one per system: a recording is refused while
//! another tracer is in use.

use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use drivelab_trace::import::{self, Event, Format, Import, Options};
use drivelab_trace::{Header, TraceError};

use super::leftovers::{set_back, unmount, Ledger};
use super::{bytes_text, trace_fail};
use crate::fail::{Fail, INTERRUPTED};
use crate::out_path::{Kind, OutFile};

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The block device to trace (only watched: nothing is written to it).
    #[arg(value_name = "DEVICE")]
    pub device: PathBuf,
    /// The drivelab trace to write (conventionally NAME.dltrace).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Record for this long, e.g. 30s, 5m (or give a command after `--`).
    #[arg(long, value_parser = crate::values::duration, value_name = "D")]
    pub duration: Option<u64>,
    /// Replace an existing file drivelab did not write, or one of another kind (a
    /// result document, a report…; a trace is replaced anyway).
    #[arg(long)]
    pub force: bool,
    /// The command to record while it runs (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

const POLL: Duration = Duration::from_millis(10);
/// The kernel's trace buffer per CPU while recording (KiB).
const BUFFER_KB: &str = "16384";

pub fn run(a: RecordArgs) -> Result<i32, Fail> {
    if a.duration.is_some() != a.command.is_empty() {
        return Err(Fail::usage(
            "give --duration D (e.g. 30s) or a command to record after `--`, one of them",
        ));
    }
    if a.duration == Some(0) {
        return Err(Fail::usage("--duration: must be more than 0, like 30s"));
    }
    let out = OutFile::claim_file(
        &a.output,
        "-o/--output",
        Kind::Trace,
        a.force,
        super::TRACE_FILES_ONLY,
    )?;
    let dev = Device::of(&a.device)?;
    let out = out.not_the_target(&a.device)?;
    let out_dir = dir_of(out.path()).to_path_buf();
    if std::fs::metadata(&out_dir)
        .is_ok_and(|m| std::os::unix::fs::MetadataExt::dev(&m) == dev.rdev)
    {
        return Err(Fail::usage(format!(
            "-o/--output {}: is on {}, the traced device: writing it would be recorded too; give a file on another device",
            out.path().display(),
            a.device.display()
        )));
    }
    let mut ledger = Ledger::claim()?;
    if dev.traced() {
        return Err(Fail::usage(format!(
            "DEVICE {}: a block trace is already set up on it (blktrace, or a tracer left running?); stop that tool, or if none runs, reset: {}",
            a.device.display(),
            full_reset(&dev)
        )));
    }
    let scratch = tempfile::Builder::new()
        .prefix(".drivelab-record.")
        .tempfile_in(&out_dir)
        .map_err(|e| {
            Fail::failed(format!(
                "-o/--output: cannot make a scratch file in {}: {e}",
                out_dir.display()
            ))
        })?;
    ledger.scratch(scratch.path())?;
    let rec = capture(&a, &dev, scratch.as_file(), &mut ledger)?;
    let opts = Options {
        blkparse_clock_to_unix_ns: Some(rec.mono_to_unix_ns),
        ..Options::default()
    };
    let inner = import::open(Format::Blkparse, scratch.path(), &opts)
        .map_err(|e| trace_fail("the recording", e))?;
    let mut imp = Recorded {
        inner,
        device: a.device.display().to_string(),
        size: dev.size_bytes(),
        notes: rec.notes,
    };
    let mut body = tempfile::tempfile_in(&out_dir)
        .map_err(|e| Fail::failed(format!("-o/--output: cannot make a scratch file: {e}")))?;
    let mut pending = out.begin()?;
    let (totals, _) = import::write_native(&mut imp, &mut body, BufWriter::new(pending.file()))
        .map_err(|e| Fail::failed(format!("the recording: {e}")))?;
    if totals.records == 0 {
        // An empty trace replays nothing (replay refuses it): nothing is written.
        drop(pending);
        let why = match &rec.ending {
            Ending::CommandFailed(s) => format!(" (`{}` ended with {s})", a.command.join(" ")),
            Ending::Interrupted => " (interrupted)".into(),
            Ending::Done => String::new(),
        };
        let message = format!(
            "no I/O reached {} while recording{why}: nothing written to {}",
            a.device.display(),
            out.path().display()
        );
        // Interrupted is interrupted (130) whatever was recorded by then: two signals
        // that arrive together are one to the process, so the first's end must be the
        // second's too.
        return Err(match rec.ending {
            Ending::Interrupted => Fail {
                code: INTERRUPTED,
                message,
            },
            _ => Fail::failed(message),
        });
    }
    pending
        .commit()
        .map_err(|e| Fail::failed(format!("cannot write {}: {e}", out.path().display())))?;
    eprintln!(
        "recorded {} I/Os ({} read, {} written, {} discarded, {} flushes) on {} to {}",
        totals.records,
        bytes_text(totals.read_bytes),
        bytes_text(totals.write_bytes),
        bytes_text(totals.discard_bytes),
        totals.flushes,
        a.device.display(),
        out.path().display()
    );
    match rec.ending {
        Ending::Done => Ok(0),
        Ending::Interrupted => Ok(INTERRUPTED),
        Ending::CommandFailed(s) => Err(Fail::failed(format!(
            "`{}` ended with {s}; its trace was written",
            a.command.join(" ")
        ))),
    }
}

/// A recording's tracer lines (in the scratch file) and what is known about them.
struct Capture {
    ending: Ending,
    notes: Vec<String>,
    /// Unix time minus the tracer's clock (CLOCK_MONOTONIC), ns.
    mono_to_unix_ns: i128,
}

/// Trace the device for the duration or while the command runs, the tracer's lines into
/// `lines`; everything set back before it returns, however it ends.
fn capture(
    a: &RecordArgs,
    dev: &Device,
    lines: &std::fs::File,
    ledger: &mut Ledger,
) -> Result<Capture, Fail> {
    let stop = crate::signals::stop_flag();
    let tracefs = Tracefs::mounted(ledger)?;
    let mono_to_unix_ns = unix_now_ns() - i128::from(drivelab_engine::sys::monotonic_ns());
    let mut tracer = Tracer::start(&tracefs, dev, ledger)?;
    let mut lines = BufWriter::new(lines);
    let what = match a.duration {
        Some(ns) => format!("for {:.3} s", ns as f64 / 1e9),
        None => format!("while `{}` ran", a.command.join(" ")),
    };
    eprintln!(
        "recording {} {}; Ctrl-C stops",
        a.device.display(),
        what.replace(" ran", " runs")
    );
    let started = Instant::now();
    let ending = match a.duration {
        Some(ns) => tracer.copy_for(Duration::from_nanos(ns), &stop, &mut lines)?,
        None => tracer.copy_while(&a.command, &stop, &mut lines)?,
    };
    let lost = tracer.stop(&mut lines)?;
    lines
        .flush()
        .map_err(|e| Fail::failed(format!("the recording: {e}")))?;
    let mut notes = vec![format!(
        "recorded through the kernel's blk tracer on {} {what} ({:.3} s)",
        a.device.display(),
        started.elapsed().as_secs_f64()
    )];
    if lost > 0 {
        let l = format!("the kernel's trace buffer overflowed: {lost} events were lost");
        eprintln!("drivelab: warning: {l}");
        notes.push(l);
    }
    Ok(Capture {
        ending,
        notes,
        mono_to_unix_ns,
    })
}

fn unix_now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

fn dir_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The traced device, as the kernel knows it.
struct Device {
    rdev: u64,
    sys: PathBuf,
}

impl Device {
    fn of(p: &Path) -> Result<Device, Fail> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = std::fs::metadata(p)
            .map_err(|e| Fail::usage(format!("DEVICE {}: {e}", p.display())))?;
        if !m.file_type().is_block_device() {
            return Err(Fail::usage(format!(
                "DEVICE {}: not a block device (trace record traces a device such as /dev/nvme0n1 or /dev/loop0)",
                p.display()
            )));
        }
        let rdev = m.rdev();
        let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
        let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
        let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        Ok(Device { rdev, sys })
    }

    fn enable_file(&self) -> PathBuf {
        self.sys.join("trace/enable")
    }

    /// Is a block trace set up on the device (by anyone)?
    fn traced(&self) -> bool {
        std::fs::read_to_string(self.enable_file()).is_ok_and(|s| s.trim() == "1")
    }

    fn size_bytes(&self) -> Option<u64> {
        let sectors: u64 = std::fs::read_to_string(self.sys.join("size"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        sectors.checked_mul(512)
    }
}

/// tracefs: the system's, or mounted for this recording on a private directory
/// (unmounted at the end).
struct Tracefs {
    path: PathBuf,
    ours: Option<tempfile::TempDir>,
}

impl Tracefs {
    fn mounted(ledger: &mut Ledger) -> Result<Tracefs, Fail> {
        let sys = PathBuf::from("/sys/kernel/tracing");
        if sys.join("trace_pipe").exists() {
            return Ok(Tracefs {
                path: sys,
                ours: None,
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("drivelab-tracefs.")
            .tempdir()
            .map_err(|e| {
                Fail::failed(format!("cannot make a directory to mount tracefs on: {e}"))
            })?;
        ledger.mount(dir.path())?;
        let ok = Command::new("mount")
            .args(["-t", "tracefs", "tracefs"])
            .arg(dir.path())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Fail::failed(format!("cannot run mount: {e}")))?;
        if !ok.status.success() {
            return Err(Fail::failed(format!(
                "cannot mount tracefs (block tracing needs it; run as root): {}",
                String::from_utf8_lossy(&ok.stderr).trim()
            )));
        }
        Ok(Tracefs {
            path: dir.path().to_path_buf(),
            ours: Some(dir),
        })
    }

    fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn read(&self, name: &str) -> Result<String, Fail> {
        std::fs::read_to_string(self.file(name))
            .map_err(|e| Fail::failed(format!("cannot read {}: {e}", self.file(name).display())))
    }

    fn write(&self, name: &str, value: &str) -> Result<(), Fail> {
        std::fs::write(self.file(name), value).map_err(|e| {
            Fail::failed(format!(
                "cannot write `{value}` to {}: {e}",
                self.file(name).display()
            ))
        })
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.ours.is_some() {
            unmount(&self.path);
        }
    }
}

/// How the recording ended.
enum Ending {
    Done,
    Interrupted,
    CommandFailed(std::process::ExitStatus),
}

/// The kernel's blk tracer on the device; everything set back when dropped.
struct Tracer<'a> {
    fs: &'a Tracefs,
    dev: &'a Device,
    /// The settings changed, with their values before (restored in reverse order).
    saved: Vec<(PathBuf, String)>,
    /// `trace_pipe`, shared with a second Ctrl-C's undo, which must close it before the
    /// kernel lets `current_tracer` change (EBUSY while a reader holds the pipe).
    pipe: Arc<Mutex<Option<std::fs::File>>>,
    /// Set once the undo has read the kernel back as it was (the state file may go).
    clean: Arc<AtomicBool>,
    partial: Vec<u8>,
    lost: u64,
}

impl<'a> Tracer<'a> {
    fn start(fs: &'a Tracefs, dev: &'a Device, ledger: &mut Ledger) -> Result<Tracer<'a>, Fail> {
        let current = fs.read("current_tracer")?;
        if current.trim() != "nop" {
            return Err(Fail::failed(format!(
                "the kernel's tracer is in use (current_tracer is `{}`): stop the tracing tool using it, or if none runs, reset: {}",
                current.trim(),
                full_reset(dev)
            )));
        }
        let mut t = Tracer {
            fs,
            dev,
            saved: Vec::new(),
            pipe: Arc::new(Mutex::new(None)),
            clean: ledger.clean_flag(),
            partial: Vec::new(),
            lost: 0,
        };
        t.set(ledger, "trace_clock", "mono", |s| {
            s.split_whitespace()
                .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
                .unwrap_or("local")
                .to_string()
        })?;
        t.set(ledger, "buffer_size_kb", BUFFER_KB, buffer_size_kb)?;
        ledger.setting(&dev.enable_file(), "0")?;
        std::fs::write(dev.enable_file(), "1").map_err(|e| {
            Fail::failed(format!(
                "cannot start the device's block trace ({}): {e}",
                dev.enable_file().display()
            ))
        })?;
        t.saved.push((dev.enable_file(), "0".into()));
        let _ = std::fs::write(dev.sys.join("trace/act_mask"), "queue,complete");
        t.set(ledger, "current_tracer", "blk", |_| "nop".into())?;
        // An option of the blk tracer, there once it is the current tracer (and gone
        // with it: set back before it).
        t.set(ledger, "trace_options", "blk_classic", |_| {
            "noblk_classic".into()
        })?;
        t.set(ledger, "tracing_on", "1", |s| s.trim().to_string())?;
        let pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fs.file("trace_pipe"))
            .map_err(|e| {
                Fail::failed(format!(
                    "cannot open {}: {e}",
                    fs.file("trace_pipe").display()
                ))
            })?;
        *lock(&t.pipe) = Some(pipe);
        // A second Ctrl-C ends drivelab at once, without unwinding: it closes the pipe,
        // sets these back, and removes the state file only once the tracer is back to
        // nop (else the next recording undoes it from the state file).
        let undo = t.saved.clone();
        let pipe = t.pipe.clone();
        let mount = fs.ours.is_some().then(|| fs.path.clone());
        let state = ledger.path().to_path_buf();
        let scratch = ledger.scratch_path().map(Path::to_path_buf);
        crate::signals::undo_on_exit(Some(Box::new(move || {
            drop(lock(&pipe).take());
            // The kernel keeps the tracer busy while any copy of the pipe is open (a
            // child forked by another thread holds one until it execs): a few tries.
            for _ in 0..50 {
                for (file, value) in undo.iter().rev() {
                    let _ = std::fs::write(file, value);
                }
                if set_back(&undo) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if set_back(&undo) {
                let _ = std::fs::remove_file(&state);
            } else {
                eprintln!(
                    "drivelab: could not set the kernel's tracer back; the next `drivelab trace record` does it ({} keeps what to undo)",
                    state.display()
                );
            }
            if let Some(s) = &scratch {
                let _ = std::fs::remove_file(s);
            }
            if let Some(m) = mount {
                unmount(&m);
                let _ = std::fs::remove_dir(&m);
            }
        })));
        Ok(t)
    }

    /// Set a tracefs file, remembering how to set it back.
    fn set(
        &mut self,
        ledger: &mut Ledger,
        name: &'static str,
        value: &str,
        before: impl FnOnce(&str) -> String,
    ) -> Result<(), Fail> {
        let old = before(&self.fs.read(name)?);
        ledger.setting(&self.fs.file(name), &old)?;
        self.fs.write(name, value)?;
        self.saved.push((self.fs.file(name), old));
        Ok(())
    }

    /// Copy what the tracer has written so far; was there anything?
    fn copy(&mut self, out: &mut impl Write) -> Result<bool, Fail> {
        let mut buf = [0u8; 1 << 16];
        let read = match lock(&self.pipe).as_mut() {
            Some(pipe) => pipe.read(&mut buf),
            // Closed by a second Ctrl-C's undo: the process is ending.
            None => return Ok(false),
        };
        let n = match read {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(true),
            Err(e) => return Err(Fail::failed(format!("reading the kernel's trace: {e}"))),
        };
        self.partial.extend_from_slice(&buf[..n]);
        let end = self
            .partial
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        for line in self.partial[..end].split_inclusive(|&b| b == b'\n') {
            // `CPU:1 [LOST 123 EVENTS]`: the buffer overflowed.
            if let Some(n) = lost_events(line) {
                self.lost += n;
                continue;
            }
            out.write_all(line)
                .map_err(|e| Fail::failed(format!("the recording: {e}")))?;
        }
        self.partial.drain(..end);
        Ok(n > 0)
    }

    fn copy_for(
        &mut self,
        d: Duration,
        stop: &AtomicBool,
        out: &mut impl Write,
    ) -> Result<Ending, Fail> {
        let t0 = Instant::now();
        while t0.elapsed() < d {
            if stop.load(Ordering::SeqCst) {
                return Ok(Ending::Interrupted);
            }
            if !self.copy(out)? {
                std::thread::sleep(POLL.min(d.saturating_sub(t0.elapsed())));
            }
        }
        Ok(Ending::Done)
    }

    fn copy_while(
        &mut self,
        cmd: &[String],
        stop: &AtomicBool,
        out: &mut impl Write,
    ) -> Result<Ending, Fail> {
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .spawn()
            .map_err(|e| Fail::usage(format!("COMMAND `{}`: cannot run it: {e}", cmd[0])))?;
        let mut signalled = false;
        loop {
            if let Some(status) = child.try_wait().map_err(|e| Fail::failed(e.to_string()))? {
                return Ok(match (signalled, status.success()) {
                    (true, _) => Ending::Interrupted,
                    (false, true) => Ending::Done,
                    (false, false) => Ending::CommandFailed(status),
                });
            }
            if stop.load(Ordering::SeqCst) && !signalled {
                // Ctrl-C reached the command too; a SIGTERM to drivelab is passed on.
                let _ = drivelab_engine::sys::kill_process(child.id(), libc::SIGTERM);
                signalled = true;
            }
            if !self.copy(out)? {
                std::thread::sleep(POLL);
            }
        }
    }

    /// Stop tracing, copy what is left, set everything back; the events lost.
    fn stop(mut self, out: &mut impl Write) -> Result<u64, Fail> {
        self.fs.write("tracing_on", "0")?;
        while self.copy(out)? {}
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            out.write_all(&rest)
                .map_err(|e| Fail::failed(format!("the recording: {e}")))?;
        }
        self.lost += self.overruns();
        self.restore()?;
        Ok(self.lost)
    }

    /// Events the kernel dropped for want of buffer space (per CPU `overrun`).
    fn overruns(&self) -> u64 {
        let Ok(cpus) = std::fs::read_dir(self.fs.file("per_cpu")) else {
            return 0;
        };
        cpus.flatten()
            .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.strip_prefix("overrun:")?.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum()
    }

    /// The device's trace removed, the tracer back to nop, every setting as it was.
    fn restore(&mut self) -> Result<(), Fail> {
        // First: the kernel refuses to change current_tracer while the pipe is open.
        drop(lock(&self.pipe).take());
        let all = self.saved.clone();
        let mut first_error = None;
        let mut keep = |r: Result<(), Fail>| {
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        };
        while let Some((file, old)) = self.saved.pop() {
            keep(std::fs::write(&file, &old).map_err(|e| {
                Fail::failed(format!(
                    "cannot set {} back to `{old}`: {e}",
                    file.display()
                ))
            }));
        }
        // Read back while tracefs is still mounted.
        if !all.is_empty() {
            self.clean.store(set_back(&all), Ordering::SeqCst);
        }
        if !all.is_empty() && !self.clean.load(Ordering::SeqCst) {
            keep(Err(Fail::failed(format!(
                "the kernel's tracer is not back to nop after the recording; reset it: {}",
                full_reset(self.dev)
            ))));
        }
        crate::signals::undo_on_exit(None);
        if self.dev.traced() {
            keep(std::fs::write(self.dev.enable_file(), "0").map_err(|e| {
                Fail::failed(format!(
                    "cannot remove the device's block trace ({}): {e}",
                    self.dev.enable_file().display()
                ))
            }));
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Tracer<'_> {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

/// `trace_pipe` (or nothing once closed), whoever holds it last.
fn lock(p: &Mutex<Option<std::fs::File>>) -> std::sync::MutexGuard<'_, Option<std::fs::File>> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// `buffer_size_kb`'s value to set back: `1408`, or `7 (expanded: 1408)` before the
/// buffer was first used (its size once used: setting 7 would shrink it).
fn buffer_size_kb(s: &str) -> String {
    let s = s.trim();
    s.split_once("expanded: ")
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .or_else(|| s.split_whitespace().next())
        .unwrap_or("1408")
        .to_string()
}

/// The commands that take the kernel's block tracing back to its resting state, for a
/// message when something other than a drivelab recording left it set.
fn full_reset(dev: &Device) -> String {
    let t = "/sys/kernel/tracing";
    format!(
        "`echo 0 > {t}/tracing_on; echo 0 > {}; echo noblk_classic > {t}/trace_options; echo nop > {t}/current_tracer` (mount tracefs there first with `mount -t tracefs nodev {t}` if it is not)",
        dev.enable_file().display()
    )
}

/// The count of a `CPU:N [LOST COUNT EVENTS]` line.
fn lost_events(line: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(line).ok()?;
    let rest = s.split_once("[LOST ")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

/// The import of the recording, with the recording's header.
struct Recorded {
    inner: Box<dyn Import>,
    device: String,
    size: Option<u64>,
    notes: Vec<String>,
}

impl Import for Recorded {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        self.inner.next_event()
    }

    fn header(&self) -> Result<Header, TraceError> {
        let mut h = self.inner.header()?;
        h.source_format = "record".into();
        h.source_path = Some(self.device.clone());
        h.device_size_bytes = self.size;
        // The recording's own words instead of the importer's about blkparse's text.
        h.notes.retain(|n| !n.starts_with("blkparse text"));
        h.notes.splice(0..0, self.notes.iter().cloned());
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lost_event_lines_are_counted() {
        assert_eq!(super::lost_events(b"CPU:1 [LOST 123 EVENTS]\n"), Some(123));
        assert_eq!(super::buffer_size_kb("1410\n"), "1410");
        assert_eq!(super::buffer_size_kb("7 (expanded: 1408)\n"), "1408");
        assert_eq!(
            super::lost_events(b"  7,1    0 18660.8 30671  Q  WS 0 + 128 [dd]\n"),
            None
        );
    }
}
