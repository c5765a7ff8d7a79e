//! drivelab-trace: block I/O traces — drivelab's own trace format, and (one file per
//! format under `import`) the importers that turn other tools' traces into it.
//!
//! A trace is a [`Header`] and a stream of [`Record`]s in issue order. Everything here
//! streams: a week-long trace of tens of millions of I/Os is read and written one record
//! at a time, never held in memory. The replayer (`suites::replay`) and the recorder take
//! and give [`Record`]s; nothing in this crate does I/O to a device.
//!
//! - [`import`]: the importers (fio iolog, blkparse, blktrace, MSR, SPC, Tencent,
//!   Alibaba), one file per format behind [`import::Import`].
//! - [`stats`]: what `drivelab trace info` reports.
//! - [`native`]: drivelab's compact binary format (`docs/trace-format.md`): nanosecond
//!   times, delta-coded, with a trailer that makes a truncated file an error.
//! - [`input`]: opening an input file (a regular file only, never blocked on).
//! - [`text`]: user and file text quoted in messages (control bytes escaped, cut short);
//!   shared by every crate.

pub mod import;
pub mod input;
pub mod native;
pub mod stats;
pub mod text;

use serde::{Deserialize, Serialize};
use std::fmt;

/// What one request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// A cache flush (no data; offset and length are 0).
    Flush,
    /// A discard / trim / unmap of `len_bytes` at `offset_bytes`.
    Discard,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Discard => "discard",
        }
    }

    fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => 2,
            Op::Discard => 3,
        }
    }

    fn from_code(code: u8) -> Op {
        match code & 3 {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Flush,
            _ => Op::Discard,
        }
    }
}

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// When the request was issued, nanoseconds since the trace's start.
    pub issue_ns: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Forced unit access (write through the drive's cache).
    pub fua: bool,
    /// The issuing process, when the source knows it (its name is in the trace's
    /// process table: [`native::Reader::process_name`]).
    pub pid: Option<u32>,
    /// The original service time (completion − issue), when the source recorded it.
    pub service_ns: Option<u64>,
}

impl Record {
    /// A record with no FUA, process or service time.
    pub fn new(issue_ns: u64, op: Op, offset_bytes: u64, len_bytes: u64) -> Record {
        Record {
            issue_ns,
            op,
            offset_bytes,
            len_bytes,
            fua: false,
            pid: None,
            service_ns: None,
        }
    }
}

/// What a trace says about itself: where it came from and what it was recorded on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format the trace was recorded or imported from: `record`, `fio-iolog-v2`,
    /// `msr`, ….
    pub source_format: String,
    /// The file or device it came from, as the user named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_path: Option<String>,
    /// The size of the traced device or volume, when known (replay maps offsets into the
    /// target's span with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_size_bytes: Option<u64>,
    /// Wall-clock time of the trace's start, nanoseconds since the Unix epoch, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_unix_ns: Option<u64>,
    /// Free-form notes: what an importer skipped and why, the volume chosen, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The volumes of a multi-volume trace imported whole (`--volume all`), each mapped
    /// into one span at its offset, in the order of their numbers; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<VolumeSpan>,
}

/// Where one volume of a multi-volume trace lies in the imported trace's span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeSpan {
    /// The volume's name in the source (SPC ASU, MSR DiskNumber, DiskSim device, …).
    pub volume: String,
    /// Where its byte 0 is in the imported trace (a multiple of 1 MiB).
    pub offset_bytes: u64,
    /// Its highest byte touched, rounded up to 1 MiB.
    pub extent_bytes: u64,
}

/// Totals written in the trailer of a native trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub records: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    pub flushes: u64,
    /// Issue time of the last record.
    pub last_issue_ns: u64,
}

impl Totals {
    /// Counts `r` (saturating: a corrupt trace's sums never wrap or panic).
    pub fn add(&mut self, r: &Record) {
        self.records = self.records.saturating_add(1);
        let sum = match r.op {
            Op::Read => &mut self.read_bytes,
            Op::Write => &mut self.write_bytes,
            Op::Discard => &mut self.discard_bytes,
            Op::Flush => &mut self.flushes,
        };
        *sum = sum.saturating_add(if r.op == Op::Flush { 1 } else { r.len_bytes });
        self.last_issue_ns = self.last_issue_ns.max(r.issue_ns);
    }
}

/// Why a trace could not be read or written.
#[derive(Debug)]
pub enum TraceError {
    Io(std::io::Error),
    /// The input is not what its format says; `line` is 1-based where the format has
    /// lines, the record number otherwise.
    Malformed {
        line: Option<u64>,
        message: String,
    },
}

impl TraceError {
    pub fn malformed(line: Option<u64>, message: impl Into<String>) -> TraceError {
        TraceError::Malformed {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "{e}"),
            TraceError::Malformed {
                line: Some(l),
                message,
            } => write!(f, "line {l}: {message}"),
            TraceError::Malformed {
                line: None,
                message,
            } => f.write_str(message),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<std::io::Error> for TraceError {
    fn from(e: std::io::Error) -> TraceError {
        TraceError::Io(e)
    }
}
