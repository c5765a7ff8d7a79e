//! `drivelab trace import | info | record`: block I/O traces in drivelab's own format
//! (`docs/trace-format.md`), made from other tools' traces or recorded from a device.

mod import;
mod info;
mod leftovers;
mod record;

use clap::{Args, Subcommand};

use crate::fail::Fail;

#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub cmd: TraceCommand,
}

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Convert another tool's trace (fio, blkparse, blktrace, msr, spc, tencent, alibaba)
    /// into a drivelab trace.
    Import(import::ImportArgs),
    /// Summarise a drivelab trace: header, totals, duration, read/write mix, sizes,
    /// processes, most requests outstanding.
    Info(info::InfoArgs),
    /// Record a block device's I/O through the kernel's block tracing (blktrace), for a
    /// duration or while a command runs.
    Record(record::RecordArgs),
}

pub fn run(a: TraceArgs) -> Result<i32, Fail> {
    match a.cmd {
        TraceCommand::Import(a) => import::run(a),
        TraceCommand::Info(a) => info::run(a),
        TraceCommand::Record(a) => record::run(a),
    }
}

/// Said when `-o` names a device, FIFO or directory.
const TRACE_FILES_ONLY: &str =
    "a trace is written to a regular file only (conventionally NAME.dltrace)";

/// A trace error as the command's failure: the input's fault (exit 2) or an I/O error.
fn trace_fail(what: &str, e: drivelab_trace::TraceError) -> Fail {
    match e {
        drivelab_trace::TraceError::Malformed { .. } => Fail::usage(format!("{what}: {e}")),
        drivelab_trace::TraceError::Io(e) => Fail::failed(format!("{what}: {e}")),
    }
}

/// `n` bytes in binary units, for people.
fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_go_up_to_exbibytes() {
        assert_eq!(super::bytes_text(u64::MAX), "16.0 EiB");
        assert_eq!(super::bytes_text(1 << 50), "1.0 PiB");
        assert_eq!(super::bytes_text(512), "512 B");
    }
}
