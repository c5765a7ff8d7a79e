//! A one-line progress display on stderr, only when stderr is a terminal.

use std::io::{IsTerminal, Write};

use drivelab_engine::run::Progress;

pub struct Line {
    enabled: bool,
}

fn show(p: &Progress<'_>) {
    show_with("", p);
}

/// Draw the progress line of `p`, led by `prefix` (e.g. the running step of a suite).
pub fn show_with(prefix: &str, p: &Progress<'_>) {
    let mut line = format!("\r\x1b[2K{prefix}[{:>5.0}s]", p.wall.as_secs_f64());
    if let Some(r) = p.latest {
        if r.read.ops > 0 {
            line += &format!(
                " read {:>9.0} IOPS {:>8.1} MB/s",
                r.read.ops_per_s,
                r.read.bytes_per_s / 1e6
            );
        }
        if r.write.ops > 0 {
            line += &format!(
                " write {:>9.0} IOPS {:>8.1} MB/s",
                r.write.ops_per_s,
                r.write.bytes_per_s / 1e6
            );
        }
        if r.ramp {
            line += " (ramp)";
        }
    }
    line += "   ";
    let _ = std::io::stderr().write_all(line.as_bytes());
}

impl Line {
    /// `wanted`: the caller allows progress (not when stdout carries JSON... it never
    /// goes to stdout anyway, but quiet modes turn it off).
    pub fn new(wanted: bool) -> Line {
        Line {
            enabled: wanted && std::io::stderr().is_terminal(),
        }
    }

    pub fn callback(&self) -> Option<&'static (dyn Fn(&Progress<'_>) + Sync)> {
        self.enabled
            .then_some(&show as &'static (dyn Fn(&Progress<'_>) + Sync))
    }

    /// Erase the line.
    pub fn clear(&self) {
        if self.enabled {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        }
    }
}
