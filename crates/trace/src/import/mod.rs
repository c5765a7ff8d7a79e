//! Importers: other tools' traces turned into [`Record`]s, one file per format behind
//! the [`Import`] trait.
//!
//! Every importer streams: it reads its input a line (or a binary event) at a time and
//! holds only a bounded window of records, so a week-long trace of tens of millions of
//! I/Os needs no more memory than a short one. A malformed line is refused with its line
//! number; what an importer skips (unknown operations, other volumes, header rows, empty
//! lines) is counted and written into [`Header::notes`] with the reason. Units follow each
//! format's documentation (`docs/trace-format.md`, "Importing").
//!
//! Records come out in issue order, with times rebased to the first record: a format
//! whose lines are slightly out of order goes through a reorder window of
//! [`REORDER_WINDOW`] records; a record later than that keeps its place and its issue
//! time is raised to the one written before it (counted in the notes).

mod alibaba;
mod blk;
mod blkparse;
mod blktrace;
mod disksim;
mod fio;
mod lines;
mod msr;
mod sorted;
mod spc;
mod tencent;
mod volume;

pub use blktrace::{per_cpu_files, BlktraceImport};
pub use disksim::TimeUnit;
pub use lines::MAX_LINE_BYTES;
pub use sorted::REORDER_WINDOW;

use crate::{native, Header, Record, TraceError};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// The longest read or write one request may be: 1 GiB. Linux splits I/O into requests
/// of at most `max_hw_sectors_kb` (a few MiB on today's drives), and the trace formats
/// record requests, so a longer one is a corrupt or misread field (a length of 2^64 − 1
/// imported would be replayed as exabytes).
pub const MAX_IO_BYTES: u64 = 1 << 30;
/// The longest discard one request may be: 4 GiB − 1 (a bio's size is 32 bits; one
/// discard of a whole device is issued as several).
pub const MAX_DISCARD_BYTES: u64 = u32::MAX as u64;

/// Is `r`'s extent one a request can have? `Ok(false)`: a read, write or discard of no
/// bytes (skipped, counted); `Err`: why it cannot be imported (its end is past 2^64, or
/// it is longer than [`MAX_IO_BYTES`] / [`MAX_DISCARD_BYTES`]).
pub(crate) fn check_extent(r: &Record) -> Result<bool, String> {
    use crate::Op;
    let max = match r.op {
        Op::Flush => return Ok(true),
        Op::Discard => MAX_DISCARD_BYTES,
        Op::Read | Op::Write => MAX_IO_BYTES,
    };
    if r.len_bytes == 0 {
        return Ok(false);
    }
    if r.len_bytes > max {
        return Err(format!(
            "a {} of {} bytes: longer than one request can be (at most {max} bytes)",
            r.op.name(),
            r.len_bytes
        ));
    }
    if r.offset_bytes.checked_add(r.len_bytes).is_none() {
        return Err(format!(
            "a {} of {} bytes at byte offset {}: it would end past 2^64 bytes",
            r.op.name(),
            r.len_bytes,
            r.offset_bytes
        ));
    }
    Ok(true)
}

/// What a skipped request of no bytes is called in the notes.
pub(crate) const ZERO_LENGTH: &str = "a read, write or discard of 0 bytes";

/// One item of an imported trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Io(Record),
    /// Names a process for the records after it.
    Process {
        pid: u32,
        name: String,
    },
}

/// An importer: a stream of events in issue order, then the header (known only once the
/// input is read: it carries what was skipped).
pub trait Import {
    /// The next event; `None` at the end of the input.
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;
    /// What the input said about itself and what was skipped; complete after the end.
    fn header(&self) -> Result<Header, TraceError>;
}

/// The formats `drivelab trace import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's iolog, version 2 or 3 (told by its first line).
    Fio,
    /// blkparse's default text output.
    Blkparse,
    /// blktrace's binary per-CPU files (`NAME.blktrace.N`).
    Blktrace,
    /// MSR Cambridge CSV (SNIA IOTTA 388).
    Msr,
    /// SPC / UMass trace repository (`.spc`).
    Spc,
    /// Tencent CBS CSV (SNIA IOTTA 27917).
    Tencent,
    /// Alibaba block traces CSV.
    Alibaba,
    /// DiskSim / MQSim ASCII traces.
    Disksim,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::Fio,
        Format::Blkparse,
        Format::Blktrace,
        Format::Msr,
        Format::Spc,
        Format::Tencent,
        Format::Alibaba,
        Format::Disksim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Blkparse => "blkparse",
            Format::Blktrace => "blktrace",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Tencent => "tencent",
            Format::Alibaba => "alibaba",
            Format::Disksim => "disksim",
        }
    }

    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The text format whose parser takes the first data lines of `text` (up to three,
    /// after a row of column names): a guess, for a message that names the importer.
    /// (blktrace's binary files are not told apart here.)
    pub fn detect(text: &str) -> Option<Format> {
        if text.starts_with("fio version 2 iolog") || text.starts_with("fio version 3 iolog") {
            return Some(Format::Fio);
        }
        let fits = |mut f: Box<dyn lines::LineFormat>| {
            let mut data = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .peekable();
            if data.peek().is_some_and(|l| f.is_header(l)) {
                data.next();
            }
            let mut n = 0;
            for l in data.take(3) {
                match f.parse(l) {
                    Ok(lines::Parsed::Io(..)) => n += 1,
                    _ => return false,
                }
            }
            n > 0
        };
        let candidates: [(Format, Box<dyn lines::LineFormat>); 5] = [
            (Format::Disksim, Box::new(disksim::Disksim::default())),
            (Format::Spc, Box::new(spc::Spc)),
            (Format::Msr, Box::new(msr::Msr)),
            (Format::Alibaba, Box::new(alibaba::Alibaba)),
            (Format::Tencent, Box::new(tencent::Tencent)),
        ];
        let found = candidates
            .into_iter()
            .find_map(|(f, p)| fits(p).then_some(f));
        found.or_else(|| blkparse::looks_like(text).then_some(Format::Blkparse))
    }

    /// The accepted names, for messages: `fio, blkparse, …`.
    pub fn names() -> String {
        Format::ALL.map(Format::name).join(", ")
    }
}

/// Choices an import takes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The volume to keep in a multi-volume trace (MSR DiskNumber, Tencent/Alibaba volume
    /// id, fio file name, blktrace/blkparse device `maj,min`). Without it a trace of more
    /// than one volume is refused with the list of its volumes.
    pub volume: Option<String>,
    /// Keep every volume (`--volume all`; `volume` is then ignored): each is mapped into
    /// one span at its own offset, in the order of their numbers, each taking its highest
    /// byte touched rounded up to 1 MiB ([`Header::volumes`] says where). The input is
    /// read twice. Not for blktrace or blkparse traces.
    pub all_volumes: bool,
    /// blkparse text whose times are on a known clock (the kernel's `mono` clock of a
    /// recording): Unix time minus that clock, in ns, so the header gets its
    /// `start_unix_ns`. blkparse's own times start at 0 and have none.
    pub blkparse_clock_to_unix_ns: Option<i128>,
    /// The arrival time's unit in a DiskSim/MQSim ASCII trace (`--time-unit`); None:
    /// told from the first line (a fraction: DiskSim's ms; a whole number: MQSim's ns).
    pub time_unit: Option<TimeUnit>,
}

/// Open `path` as a trace of `format`. For blktrace, `path` is one per-CPU file or the
/// base name they share (`NAME` for `NAME.blktrace.0`, …): all CPUs are merged by time.
pub fn open(format: Format, path: &Path, opts: &Options) -> Result<Box<dyn Import>, TraceError> {
    let file = || -> Result<Box<dyn BufRead>, TraceError> {
        let f = crate::input::open_regular(path)?;
        Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, f)))
    };
    let vol = opts.volume.clone();
    let path_s = path.display().to_string();
    if opts.all_volumes {
        return open_all_volumes(format, &file, &path_s, opts);
    }
    Ok(match format {
        Format::Fio => Box::new(fio::open(file()?, vol, path_s)?),
        Format::Blkparse => Box::new(blkparse::open(
            file()?,
            vol,
            path_s,
            opts.blkparse_clock_to_unix_ns,
        )),
        Format::Blktrace => {
            let files = per_cpu_files(path)?;
            Box::new(BlktraceImport::open(&files, vol, path_s)?)
        }
        Format::Msr => Box::new(lines::LineImport::new(file()?, msr::Msr, vol, path_s)),
        Format::Spc => Box::new(lines::LineImport::new(file()?, spc::Spc, vol, path_s)),
        Format::Tencent => Box::new(lines::LineImport::new(
            file()?,
            tencent::Tencent,
            vol,
            path_s,
        )),
        Format::Alibaba => Box::new(lines::LineImport::new(
            file()?,
            alibaba::Alibaba,
            vol,
            path_s,
        )),
        Format::Disksim => Box::new(lines::LineImport::new(
            file()?,
            disksim::Disksim::new(opts.time_unit),
            vol,
            path_s,
        )),
    })
}

/// [`open`] with `--volume all`: a line format read twice (see [`Options::all_volumes`]).
fn open_all_volumes(
    format: Format,
    file: &dyn Fn() -> Result<Box<dyn BufRead>, TraceError>,
    path: &str,
    opts: &Options,
) -> Result<Box<dyn Import>, TraceError> {
    fn all<F: lines::LineFormat + 'static>(
        file: &dyn Fn() -> Result<Box<dyn BufRead>, TraceError>,
        path: &str,
        fmt: impl Fn() -> F,
    ) -> Result<Box<dyn Import>, TraceError> {
        Ok(Box::new(lines::LineImport::all_volumes(|| {
            Ok(lines::LineImport::new(file()?, fmt(), None, path.into()))
        })?))
    }
    match format {
        Format::Fio => Ok(Box::new(lines::LineImport::all_volumes(|| {
            fio::open(file()?, None, path.into())
        })?)),
        Format::Msr => all(file, path, || msr::Msr),
        Format::Spc => all(file, path, || spc::Spc),
        Format::Tencent => all(file, path, || tencent::Tencent),
        Format::Alibaba => all(file, path, || alibaba::Alibaba),
        Format::Disksim => all(file, path, || disksim::Disksim::new(opts.time_unit)),
        Format::Blkparse | Format::Blktrace => Err(TraceError::malformed(
            None,
            format!(
                "--volume all is not for {} traces (one device is replayed at a time); choose one device with --volume MAJ,MIN",
                format.name()
            ),
        )),
    }
}

/// Read every event of `import` into a native trace on `out` (the header written last
/// is the one the import ends with, so the body goes to `scratch` first and is copied
/// behind the header: see [`native::rehead`]). Returns the totals and the header.
pub fn write_native<W: Write>(
    import: &mut dyn Import,
    scratch: &mut std::fs::File,
    out: W,
) -> Result<(crate::Totals, Header), TraceError> {
    use std::io::Seek;
    let mut w = native::Writer::new(std::io::BufWriter::new(&mut *scratch), &Header::default())?;
    while let Some(e) = import.next_event()? {
        match e {
            Event::Io(r) => w.write(&r)?,
            Event::Process { pid, name } => w.name_process(pid, &name)?,
        }
    }
    let (totals, buf) = w.finish()?;
    buf.into_inner().map_err(|e| e.into_error())?;
    let header = import.header()?;
    scratch.rewind()?;
    native::rehead(std::io::BufReader::new(&mut *scratch), &header, out)?;
    Ok((totals, header))
}

/// The notes of `header` that say what an import skipped (for the terminal).
pub fn skip_notes(header: &Header) -> Vec<&str> {
    header
        .notes
        .iter()
        .map(String::as_str)
        .filter(|n| n.contains("skipped "))
        .collect()
}

/// The files of a blktrace recording named by `path` (see [`open`]).
pub(crate) fn blktrace_base(path: &Path) -> PathBuf {
    let s = path.to_string_lossy();
    match s.rfind(".blktrace.") {
        Some(i) if s[i + 10..].chars().all(|c| c.is_ascii_digit()) && s.len() > i + 10 => {
            PathBuf::from(&s[..i])
        }
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Every event of an import of `text` as `format`, and its header.
    pub fn import_text(
        format: Format,
        text: &str,
        volume: Option<&str>,
    ) -> Result<(Vec<Event>, Header), TraceError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("in");
        std::fs::write(&p, text).unwrap();
        import_path(format, &p, volume)
    }

    pub fn import_path(
        format: Format,
        p: &Path,
        volume: Option<&str>,
    ) -> Result<(Vec<Event>, Header), TraceError> {
        let opts = Options {
            volume: volume.filter(|v| *v != "all").map(str::to_string),
            all_volumes: volume == Some("all"),
            ..Options::default()
        };
        let mut imp = open(format, p, &opts)?;
        let mut out = Vec::new();
        while let Some(e) = imp.next_event()? {
            out.push(e);
        }
        Ok((out, imp.header()?))
    }

    pub fn records(events: &[Event]) -> Vec<Record> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Io(r) => Some(*r),
                _ => None,
            })
            .collect()
    }

    /// The header's volumes as (name, offset_bytes, extent_bytes).
    pub fn spans(h: &Header) -> Vec<(&str, u64, u64)> {
        h.volumes
            .iter()
            .map(|v| (v.volume.as_str(), v.offset_bytes, v.extent_bytes))
            .collect()
    }

    pub fn line_of(e: TraceError) -> Option<u64> {
        match e {
            TraceError::Malformed { line, .. } => line,
            TraceError::Io(e) => panic!("{e}"),
        }
    }
}
