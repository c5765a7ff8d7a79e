//! fio's iolog, versions 2 and 3 (fio's HOWTO, "Trace file format"; `iolog.c`).
//!
//! - v2: first line `fio version 2 iolog`, then `FILE ACTION` (add, open, close) or
//!   `FILE ACTION OFFSET LENGTH` (read, write, trim, sync, datasync, wait). A v2 log has
//!   no issue times: a `wait` holds the I/Os after it until OFFSET **milliseconds** after
//!   the run's start (`read_iolog_get`: `mtime_since_genesis`, then sleep the rest); I/Os
//!   between waits share a time (issued back to back).
//! - v3 (fio ≥ 3.31): first line `fio version 3 iolog`, then `TIMESTAMP FILE ACTION
//!   [OFFSET LENGTH]`, TIMESTAMP in microseconds since the run's start (what fio's
//!   `write_iolog` writes and its replay assumes); fio ignores a `wait` there, and so
//!   does this importer (counted).
//!
//! Offsets and lengths are bytes. sync and datasync become flushes, trim a discard. The
//! volume is the file name.

use super::lines::{num, LineFormat, LineImport, Parsed};
use crate::{Op, Record, TraceError};
use std::io::BufRead;

pub(crate) struct Fio {
    version: u8,
    /// v2: the time the last `wait` held the I/Os until (ns since the start).
    clock_ns: u64,
}

pub(crate) fn open(
    mut input: Box<dyn BufRead>,
    volume: Option<String>,
    path: String,
) -> Result<LineImport<Fio>, TraceError> {
    let mut first = Vec::new();
    std::io::Read::take(&mut input, 256).read_until(b'\n', &mut first)?;
    let version = match String::from_utf8_lossy(&first).trim() {
        "fio version 2 iolog" => 2,
        "fio version 3 iolog" => 3,
        _ => {
            return Err(TraceError::malformed(
                Some(1),
                "not a fio iolog: the first line is not `fio version 2 iolog` or `fio version 3 iolog` (version 1 logs are unsupported, as in fio since 1.20)",
            ))
        }
    };
    let fmt = Fio {
        version,
        clock_ns: 0,
    };
    Ok(LineImport::after(input, 1, fmt, volume, path))
}

impl LineFormat for Fio {
    fn name(&self) -> &'static str {
        if self.version == 2 {
            "fio-iolog-v2"
        } else {
            "fio-iolog-v3"
        }
    }

    fn is_header(&self, _line: &str) -> bool {
        false
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let mut f: Vec<&str> = line.split_whitespace().collect();
        let t_ns = if self.version == 3 {
            let us: u64 = num(&f, 0, "timestamp (µs)")?;
            f.remove(0);
            super::lines::scaled_ns(us, 1000, "µs", "timestamp")?
        } else {
            self.clock_ns
        };
        let (file, action) = match f[..] {
            [file, action, ..] => (file, action),
            _ => return Err("expected a file name and an action".into()),
        };
        let op = match action {
            "add" | "open" | "close" if f.len() == 2 => {
                return Ok(Parsed::Skip("a file action (add, open, close)"))
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Discard,
            "sync" | "datasync" => Op::Flush,
            "wait" if self.version == 2 => {
                let ms: u64 = num(&f, 2, "wait (ms since the start)")?;
                let t = super::lines::scaled_ns(ms, 1_000_000, "ms", "wait")?;
                self.clock_ns = self.clock_ns.max(t);
                return Ok(Parsed::Nothing);
            }
            "wait" => {
                return Ok(Parsed::Skip(
                    "a `wait` in a version 3 iolog (fio ignores it too)",
                ))
            }
            _ if f.len() >= 4 => return Ok(Parsed::Skip("an unknown action")),
            _ => return Err(format!("the action `{action}` with {} fields", f.len())),
        };
        let (offset, len) = if op == Op::Flush && f.len() == 2 {
            (0, 0)
        } else if f.len() == 4 {
            (num(&f, 2, "offset")?, num(&f, 3, "length")?)
        } else {
            return Err(format!("`{action}` needs an offset and a length"));
        };
        Ok(Parsed::Io(Record::new(t_ns, op, offset, len), Some(file)))
    }

    fn notes(&self) -> Vec<String> {
        vec![if self.version == 2 {
            "fio iolog v2: no issue times; each I/O is at the time the last `wait` before it held until (ms since the start), so I/Os between waits are back to back; offsets and lengths in bytes; sync/datasync = flush, trim = discard; volume = file name".into()
        } else {
            "fio iolog v3: timestamps in µs since the run's start; offsets and lengths in bytes; sync/datasync = flush, trim = discard; volume = file name".into()
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    #[test]
    fn a_wait_beyond_2_64_ns_is_refused_as_a_v3_timestamp_is() {
        for text in [
            "fio version 2 iolog\n/dev/sdb wait 18446744073709551615 0\n/dev/sdb read 0 4096\n",
            "fio version 3 iolog\n18446744073709551615 /dev/sdb read 0 4096\n",
        ] {
            let e = import_text(Format::Fio, text, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("beyond 2^64 ns (584 years)"), "{e}");
        }
    }

    #[test]
    fn version_2_with_file_actions_and_waits() {
        let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n\
                    /dev/sdb write 0 4096\n/dev/sdb read 4096 8192\n\
                    /dev/sdb wait 1500 0\n/dev/sdb trim 8192 4096\n/dev/sdb wait 1000 0\n/dev/sdb sync 0 0\n\
                    /dev/sdb frob 0 0\n/dev/sdb close\n";
        let (ev, h) = import_text(Format::Fio, text, None).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 0, 4096),
                Record::new(0, Op::Read, 4096, 8192),
                Record::new(1_500_000_000, Op::Discard, 8192, 4096),
                Record::new(1_500_000_000, Op::Flush, 0, 0),
            ]
        );
        assert_eq!(h.source_format, "fio-iolog-v2");
        let notes = h.notes.join("\n");
        assert!(
            notes.contains(
                "skipped 3 lines: a file action (add, open, close) (the first at line 2)"
            ),
            "{notes}"
        );
        assert!(
            notes.contains("skipped 1 lines: an unknown action (the first at line 10)"),
            "{notes}"
        );
    }

    #[test]
    fn version_3_timestamps_are_microseconds() {
        let text = "fio version 3 iolog\n0 /tmp/f add\n10 /tmp/f open\n\
                    120 /tmp/f write 0 4096\n\n450 /tmp/f read 0 4096\n900 /tmp/f close\n";
        let (ev, h) = import_text(Format::Fio, text, None).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 0, 4096),
                Record::new(330_000, Op::Read, 0, 4096)
            ]
        );
        assert_eq!(h.source_format, "fio-iolog-v3");
        let (ev, h) = import_text(
            Format::Fio,
            "fio version 3 iolog\n5 /tmp/f wait 10 0\n",
            None,
        )
        .unwrap();
        assert!(ev.is_empty());
        let notes = h.notes.join("\n");
        assert!(notes.contains("a `wait` in a version 3 iolog"), "{notes}");
    }

    #[test]
    fn other_first_lines_and_short_lines_are_refused() {
        let e = import_text(Format::Fio, "0, 0, 4096\n", None).unwrap_err();
        assert!(e.to_string().starts_with("line 1: not a fio iolog"), "{e}");
        let e = import_text(
            Format::Fio,
            "fio version 2 iolog\n/dev/sdb read 4096\n",
            None,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "line 2: `read` needs an offset and a length");
    }

    #[test]
    fn files_are_volumes() {
        let text = "fio version 2 iolog\na write 0 512\nb write 0 512\n";
        let e = import_text(Format::Fio, text, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds 2 volumes (a, b)"), "{e}");
        assert_eq!(
            records(&import_text(Format::Fio, text, Some("b")).unwrap().0).len(),
            1
        );
    }
}
