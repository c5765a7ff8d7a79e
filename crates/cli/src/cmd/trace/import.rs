//! `drivelab trace import FORMAT FILE -o OUT.dltrace [--volume V|all]`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Args;
use drivelab_trace::import::{self, Event, Format, Import, Options, TimeUnit};
use drivelab_trace::{Header, TraceError};

use super::{bytes_text, trace_fail};
use crate::fail::{Fail, INTERRUPTED};
use crate::out_path::{Kind, OutFile};

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The trace's format: fio (iolog v2 or v3), blkparse (default text), blktrace
    /// (binary per-CPU files: give one of them or their NAME), msr, spc, tencent, alibaba,
    /// disksim (DiskSim or MQSim ASCII).
    #[arg(value_name = "FORMAT", value_parser = format_arg)]
    pub format: Format,
    /// The trace file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The drivelab trace to write (conventionally NAME.dltrace).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// The volume to keep from a trace of several (SPC ASU, MSR DiskNumber, DiskSim
    /// device, Tencent/Alibaba volume id, fio file name, blktrace/blkparse device
    /// MAJ,MIN). `all` keeps every volume (not for blktrace/blkparse): each is mapped
    /// into one span at its own offset, in the order of their numbers, each taking its
    /// highest byte touched rounded up to 1 MiB; `trace info` lists where each lies.
    #[arg(long, value_name = "V|all")]
    pub volume: Option<String>,
    /// disksim only: the arrival time's unit (ns, us or ms). Without it, times with a
    /// fraction are DiskSim's milliseconds and whole numbers MQSim's nanoseconds; `trace
    /// info` says which was taken.
    #[arg(long, value_name = "UNIT", value_parser = time_unit_arg)]
    pub time_unit: Option<TimeUnit>,
    /// Replace an existing file drivelab did not write, or one of another kind (a
    /// result document, a report…; a trace is replaced anyway; never the trace being
    /// imported, a results database or a bundle's file).
    #[arg(long)]
    pub force: bool,
}

fn time_unit_arg(s: &str) -> Result<TimeUnit, String> {
    TimeUnit::from_name(s).ok_or_else(|| format!("'{s}' is not a time unit: {}", TimeUnit::NAMES))
}

fn format_arg(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| format!("'{s}' is not a trace format: {}", Format::names()))
}

pub fn run(a: ImportArgs) -> Result<i32, Fail> {
    let mut out = OutFile::claim_file(
        &a.output,
        "-o/--output",
        Kind::Trace,
        a.force,
        super::TRACE_FILES_ONLY,
    )?;
    for input in input_files(a.format, &a.file) {
        out = out.not_the(&input, "the trace being imported")?;
    }
    let what = format!("FILE {}", a.file.display());
    if a.format != Format::Blktrace && !a.file.is_file() {
        return Err(Fail::usage(format!("{what}: not a readable file")));
    }
    if a.time_unit.is_some() && a.format != Format::Disksim {
        return Err(Fail::usage(format!(
            "--time-unit: only for disksim traces ({} traces say their own unit)",
            a.format.name()
        )));
    }
    let start = Instant::now();
    let all_volumes = a.volume.as_deref() == Some("all");
    let opts = Options {
        volume: a.volume.clone().filter(|_| !all_volumes),
        all_volumes,
        time_unit: a.time_unit,
        ..Options::default()
    };
    let imp = import::open(a.format, &a.file, &opts).map_err(|e| match e {
        TraceError::Io(e) => Fail::usage(format!("{what}: cannot read it: {e}")),
        e => trace_fail(&what, e),
    })?;
    // Ctrl-C or SIGTERM stops the import between events; the temporary output goes
    // with `pending`, and a second signal (which ends the process at once) removes it.
    let stop = crate::signals::stop_flag();
    let mut imp = Stoppable {
        inner: imp,
        stop: &stop,
    };
    let dir = out
        .path()
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut scratch = tempfile::tempfile_in(dir).map_err(|e| {
        Fail::failed(format!(
            "-o/--output: cannot make a scratch file in {}: {e}",
            dir.display()
        ))
    })?;
    let mut pending = begin_removed_on_exit(&out)?;
    let written = import::write_native(
        &mut imp,
        &mut scratch,
        std::io::BufWriter::new(pending.file()),
    );
    if stop.load(Ordering::SeqCst) {
        drop(pending);
        crate::signals::undo_on_exit(None);
        return Err(Fail {
            code: INTERRUPTED,
            message: format!(
                "interrupted: nothing was written to {}",
                out.path().display()
            ),
        });
    }
    let (totals, header) = written.map_err(|e| match e {
        // Errors only a write meets are the output's (or its scratch file's, beside it).
        TraceError::Io(e) if is_write_error(&e) => Fail::failed(format!(
            "-o/--output {}: cannot write it: {e}; nothing was written",
            out.path().display()
        )),
        e => trace_fail(&what, e),
    })?;
    let skipped = import::skip_notes(&header);
    if totals.records == 0 {
        // Nothing is written: `pending` is dropped uncommitted.
        let why = if skipped.is_empty() {
            "it is empty".to_string()
        } else {
            skipped.join("; ")
        };
        return Err(Fail::usage(format!(
            "{what}: no I/O to import as {} ({why})",
            a.format.name()
        )));
    }
    let committed = pending.commit();
    crate::signals::undo_on_exit(None);
    committed.map_err(|e| Fail::failed(format!("cannot write {}: {e}", out.path().display())))?;
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "imported {} I/Os ({} read, {} written, {} discarded, {} flushes) from {} to {} in {secs:.2} s ({:.0} I/Os per second)",
        totals.records,
        bytes_text(totals.read_bytes),
        bytes_text(totals.write_bytes),
        bytes_text(totals.discard_bytes),
        totals.flushes,
        a.file.display(),
        out.path().display(),
        totals.records as f64 / secs.max(1e-9),
    );
    for n in skipped {
        eprintln!("  {n}");
    }
    Ok(0)
}

/// Start the output's temporary file, which a second signal (ending the process at
/// once) removes: the path is known to the signal's undo before the file can exist
/// without it (the undo waits for the lock held while the file is made).
fn begin_removed_on_exit(out: &OutFile) -> Result<drivelab_suites::atomic::Pending, Fail> {
    let slot: Arc<Mutex<Option<PathBuf>>> = Arc::default();
    let undo = slot.clone();
    crate::signals::undo_on_exit(Some(Box::new(move || {
        if let Some(p) = undo.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = std::fs::remove_file(p);
        }
    })));
    let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
    let pending = out.begin()?;
    *held = pending.path();
    Ok(pending)
}

/// Whether `e` is one that only writing meets (a full disk or quota, a file too
/// large, a read-only file system): never the input's fault.
fn is_write_error(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || matches!(
            e.raw_os_error(),
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG | libc::EROFS)
        )
}

/// The files an import reads: the trace, or a blktrace recording's per-CPU files.
fn input_files(format: Format, file: &Path) -> Vec<PathBuf> {
    let mut files = vec![file.to_path_buf()];
    if format == Format::Blktrace {
        files.extend(import::per_cpu_files(file).unwrap_or_default());
    }
    files
}

/// An import that ends, as an I/O error, once `stop` is set (Ctrl-C, SIGTERM).
struct Stoppable<'a> {
    inner: Box<dyn Import>,
    stop: &'a AtomicBool,
}

impl Import for Stoppable<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(TraceError::Io(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            )));
        }
        self.inner.next_event()
    }

    fn header(&self) -> Result<Header, TraceError> {
        self.inner.header()
    }
}
