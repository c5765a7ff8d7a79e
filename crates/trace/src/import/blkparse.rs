//! blkparse's default text output (`blkparse_fmt.c`, `HEADER` and `process_default`):
//! `DEV CPU SEQ SEC.NSEC PID ACTION RWBS TAIL`, e.g.
//! `  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]`; the kernel's
//! blk tracer (tracefs, option `blk_classic`) prints the same without SEQ.
//! DEV is `major,minor`; the time is seconds and nanoseconds since the trace's start;
//! sectors are 512 bytes. Q lines end in `SECTOR + COUNT [COMMAND]`, C lines in
//! `SECTOR + COUNT [ERROR]`. RWBS: an `F` before the data letter is a flush (a preflush
//! with data), `D` discard, `W` write, `R` read, `N` none; an `F` after it is FUA. The
//! summary blkparse prints at the end is not read. Records and service times come from
//! Q and C lines (see `blk`); the volume is DEV.

use super::blk::{check_queued, BlkEvent, BlkImport, BlkSource, Flags, Kind};
use super::lines::Lines;
use crate::TraceError;
use std::collections::VecDeque;
use std::io::BufRead;

pub(crate) struct Blkparse {
    lines: Lines,
    queued: VecDeque<BlkEvent>,
    /// The process the last Q line named.
    last_named: Option<(u32, String)>,
    summary_at: Option<u64>,
    to_unix_ns: Option<i128>,
}

pub(crate) fn open(
    input: Box<dyn BufRead>,
    volume: Option<String>,
    path: String,
    to_unix_ns: Option<i128>,
) -> BlkImport<Blkparse> {
    let src = Blkparse {
        lines: Lines::new(input, 0),
        queued: VecDeque::new(),
        last_named: None,
        summary_at: None,
        to_unix_ns,
    };
    BlkImport::new(src, volume, path)
}

/// Whether the first line of `text` reads as blkparse's: a `major,minor` device, then a
/// CPU, a sequence number and a `SEC.NSEC` time (a guess for [`super::Format::detect`]).
pub(crate) fn looks_like(text: &str) -> bool {
    let f: Vec<&str> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_ascii_whitespace()
        .collect();
    f.len() >= 6 && device(f[0]).is_some() && time_ns(f[3]).is_some()
}

/// RWBS letters as flags.
pub(crate) fn rwbs(s: &str) -> Flags {
    let mut f = Flags::default();
    let mut data = false;
    for c in s.chars() {
        match c {
            'F' if data => f.fua = true,
            'F' => f.flush = true,
            'D' => (f.discard, data) = (true, true),
            'W' => (f.write, data) = (true, true),
            'R' | 'N' => data = true,
            _ => {}
        }
    }
    f
}

/// `SECTOR + COUNT` at the start of a tail, as (sector, bytes); none for a tail without.
fn extent(tail: &[&str]) -> Result<(u64, u64), String> {
    match tail {
        [s, "+", n, ..] => {
            let s = s
                .parse()
                .map_err(|_| format!("the sector `{s}` is not a whole number"))?;
            let n: u64 = n
                .parse()
                .map_err(|_| format!("the sector count `{n}` is not a whole number"))?;
            let bytes = n
                .checked_mul(512)
                .ok_or_else(|| format!("the sector count `{n}` is beyond 2^64 bytes"))?;
            Ok((s, bytes))
        }
        _ => Ok((0, 0)),
    }
}

fn device(s: &str) -> Option<u32> {
    let (maj, min) = s.split_once(',')?;
    let (maj, min): (u32, u32) = (maj.parse().ok()?, min.parse().ok()?);
    (maj < 4096 && min < 1 << 20).then_some(maj << 20 | min)
}

fn time_ns(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nsec = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    sec.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(nsec)
}

/// The bracketed last field: `[kjournald]` → `kjournald`.
fn bracketed(line: &str) -> Option<&str> {
    let open = line.rfind('[')?;
    line[open + 1..].strip_suffix(']')
}

/// One line into `queued`: only Q and C lines are read past their action (a request
/// passes through G, I, D, M and more lines too, which say nothing the import keeps).
/// The fields are split without copying the line; `last_named` is the process the last
/// Q line named (the same process naming itself again says nothing new).
fn parse_into(
    queued: &mut VecDeque<BlkEvent>,
    last_named: &mut Option<(u32, String)>,
    line: &str,
) -> Result<(), String> {
    // DEV CPU SEQ TIME PID ACTION RWBS SECTOR + COUNT: ten fields at most are needed.
    let mut f = [""; 10];
    let mut n = 0;
    for (slot, x) in f.iter_mut().zip(line.split_ascii_whitespace()) {
        (*slot, n) = (x, n + 1);
    }
    // The kernel's own blk tracer (tracefs, `blk_classic`) prints no sequence number.
    let s = usize::from(!f[2].contains('.'));
    if n + 1 - s < 6 {
        return Err(format!(
            "{} fields, expected at least 6 (DEV CPU SEQ TIME PID ACTION)",
            n + 1 - s
        ));
    }
    let (dev, time, pid, action) = (f[0], f[2 + s], f[3 + s], f[4 + s]);
    if action != "Q" && action != "C" {
        return Ok(());
    }
    let (rw, tail) = (f[5 + s], &f[6 + s..(9 + s).min(n.max(6 + s))]);
    let dev = device(dev).ok_or_else(|| format!("the device `{dev}` is not MAJOR,MINOR"))?;
    let time_ns =
        time_ns(time).ok_or_else(|| format!("the time `{time}` is not SECONDS.NANOSECONDS"))?;
    let pid: u32 = pid
        .parse()
        .map_err(|_| format!("the pid `{pid}` is not a whole number"))?;
    let event = |kind, (sector, bytes), error| BlkEvent {
        time_ns,
        dev,
        kind,
        sector,
        bytes,
        pid,
        error,
    };
    if action == "Q" {
        if let Some(name) = bracketed(line) {
            if last_named
                .as_ref()
                .is_none_or(|(p, known)| *p != pid || known != name)
            {
                *last_named = Some((pid, name.into()));
                queued.push_back(event(Kind::Process(name.into()), (0, 0), false));
            }
        }
        let (flags, ext) = (rwbs(rw), extent(tail)?);
        check_queued(flags, ext.0, ext.1)?;
        queued.push_back(event(Kind::Queue(flags), ext, false));
    } else {
        let error = bracketed(line).is_some_and(|e| e != "0");
        queued.push_back(event(Kind::Complete(rwbs(rw)), extent(tail)?, error));
    }
    Ok(())
}

impl BlkSource for Blkparse {
    fn next_blk(&mut self) -> Result<Option<BlkEvent>, TraceError> {
        loop {
            if let Some(e) = self.queued.pop_front() {
                return Ok(Some(e));
            }
            if self.summary_at.is_some() {
                return Ok(None);
            }
            let Some((n, line)) = self.lines.next_line()? else {
                return Ok(None);
            };
            let first = line.split_whitespace().next().unwrap_or("");
            if first.is_empty() || line.starts_with("Input file ") {
                // blkparse's "Input file NAME added" on its standard output.
                continue;
            }
            if device(first).is_none()
                && n > 1
                && ["CPU", "Total"].iter().any(|p| first.starts_with(p))
            {
                self.summary_at = Some(n);
                continue;
            }
            parse_into(&mut self.queued, &mut self.last_named, line)
                .map_err(|why| TraceError::malformed(Some(n), why))?;
        }
    }

    fn name(&self) -> &'static str {
        "blkparse"
    }

    fn unix_ns(&self, t: u64) -> Option<u64> {
        u64::try_from(i128::from(t) + self.to_unix_ns?).ok()
    }

    fn notes(&self, notes: &mut Vec<String>) {
        notes.push("blkparse text: times in seconds.nanoseconds since the trace's start, sectors of 512 bytes".into());
        if let Some(n) = self.summary_at {
            notes.push(format!("blkparse's summary (from line {n}) was not read"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{Event, Format};
    use crate::{Op, Record};

    const TEXT: &str = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001000   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002000   697  Q   W 223498 + 8 [kjournald]
  8,0    3        4     0.000002500   697  M   W 223498 + 8 [kjournald]
  8,0    1        5     0.000003000   701  Q   R 1000 + 16 [cat]
  8,0    3        6     0.000004000   697  D   W 223490 + 16 [kjournald]
  8,0    1        7     0.000010000   701  Q FWS [sync]
  8,0    1        8     0.000011000   701  Q WFS 5000 + 8 [sync]
  8,0    0        9     0.000100000     0  C   W 223490 + 16 [0]
  8,0    0       10     0.000200000     0  C   R 1000 + 16 [0]
  8,0    0       11     0.000300000     0  C FWS 0 + 0 [0]
  8,0    0       12     0.000400000     0  C WFS 5000 + 8 [0]
  8,0    1       13     0.000500000   701  Q  DS 8 + 2048 [fstrim]
  8,0    1        0     0.000600000     0  m   N cfq701 some message
CPU0 (8,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           3,       12KiB
Total (8,0):
Throughput (R/W): 0KiB/s / 0KiB/s
";

    #[test]
    fn queued_extents_past_2_64_or_too_long_are_refused() {
        let over = "8,0 0 1 0.1 1 Q R 36028797018963967 + 8 [a]\n";
        let e = import_text(Format::Blkparse, over, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("line 1: a read of 4096 bytes at byte offset"),
            "{e}"
        );
        assert!(e.ends_with("past 2^64 bytes"), "{e}");
        let far = "8,0 0 1 0.1 1 Q R 36028797018963968 + 8 [a]\n";
        let e = import_text(Format::Blkparse, far, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "line 1: the sector 36028797018963968 is beyond 2^64 bytes"
        );
        let long = "8,0 0 1 0.1 1 Q W 0 + 4194304 [a]\n";
        let e = import_text(Format::Blkparse, long, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a write of 2147483648 bytes: longer than"),
            "{e}"
        );
        // A discard may be longer (up to a bio's 4 GiB).
        let trim = "8,0 0 1 0.1 1 Q D 0 + 4194304 [a]\n";
        assert!(import_text(Format::Blkparse, trim, None).is_ok());
    }

    #[test]
    fn queue_and_completion_lines_make_records_with_service_times() {
        let (ev, h) = import_text(Format::Blkparse, TEXT, None).unwrap();
        let svc = |issue: u64, op, off: u64, len, pid, s: Option<u64>| Record {
            pid: Some(pid),
            service_ns: s,
            ..Record::new(issue, op, off, len)
        };
        let r = records(&ev);
        assert_eq!(
            r[0],
            svc(0, Op::Write, 223_490 * 512, 4096, 697, Some(100_000))
        );
        // Merged into the request of the first: completed by the same C.
        assert_eq!(
            r[1],
            svc(2_000, Op::Write, 223_498 * 512, 4096, 697, Some(98_000))
        );
        assert_eq!(
            r[2],
            svc(3_000, Op::Read, 1000 * 512, 8192, 701, Some(197_000))
        );
        assert_eq!(r[3], svc(10_000, Op::Flush, 0, 0, 701, Some(290_000)));
        assert_eq!(
            r[4],
            Record {
                fua: true,
                ..svc(11_000, Op::Write, 5000 * 512, 4096, 701, Some(389_000))
            }
        );
        assert_eq!(
            r[5],
            svc(500_000, Op::Discard, 8 * 512, 2048 * 512, 701, None)
        );
        assert_eq!(r.len(), 6);
        let names: Vec<_> = ev
            .iter()
            .filter_map(|e| match e {
                Event::Process { pid, name } => Some((*pid, name.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                (697, "kjournald"),
                (701, "cat"),
                (701, "sync"),
                (701, "fstrim")
            ]
        );
        let notes = h.notes.join("\n");
        assert!(
            notes.contains("summary (from line 15) was not read"),
            "{notes}"
        );
        assert!(notes.contains("1 requests have no completion"), "{notes}");
        assert!(notes.contains("volume 8,0"), "{notes}");
    }

    #[test]
    fn the_kernels_blk_tracer_lines_have_no_sequence_number() {
        let text = "  7,1    0 18660.817214483 30671  Q  WS 0 + 128 [dd]\n\
                      7,1    0 18660.818141896 30671  P   N [dd]\n\
                      7,1    0 18660.818142727 30671  U   N [dd] 1\n\
                      7,1    0 18660.818455153    14  C  WS 0 + 128 [0]\n";
        let r = records(&import_text(Format::Blkparse, text, None).unwrap().0);
        assert_eq!(
            r,
            [Record {
                pid: Some(30671),
                service_ns: Some(1_240_670),
                ..Record::new(0, Op::Write, 0, 65536)
            }]
        );
    }

    #[test]
    fn a_preflush_with_data_is_a_flush_then_the_write() {
        let text =
            "8,16 0 1 1.5 9 Q FWFS 64 + 8 [jbd2/sdb]\n8,16 0 2 1.000001500 0 C WFS 64 + 8 [0]\n";
        let r = records(&import_text(Format::Blkparse, text, None).unwrap().0);
        assert_eq!((r[0].op, r[0].service_ns), (Op::Flush, None));
        assert_eq!(
            (r[1].op, r[1].fua, r[1].offset_bytes),
            (Op::Write, true, 64 * 512)
        );
    }

    #[test]
    fn lines_other_than_q_and_c_are_passed_over_unread() {
        // G, I, D and M lines of the same request: their fields are never parsed (a
        // time that is no time there is no error), and the records are as from Q and C.
        let text = "8,0 1 1 0.000000000 7 Q W 8 + 8 [fio]\n\
                    8,0 1 2 0.000000300 7 G W 8 + 8 [fio]\n\
                    8,0 1 3 x.y 7 I W 8 + 8 [fio]\n\
                    8,0 1 4 0.000001500 7 D W 8 + 8 [fio]\n\
                    8,0 1 5 0.000001600 7 M W 16 + 8 [fio]\n\
                    8,0 1 6 0.000100000 0 C W 8 + 8 [0]\n";
        let (events, _) = import_text(Format::Blkparse, text, None).unwrap();
        let r = records(&events);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].offset_bytes, r[0].len_bytes), (8 * 512, 8 * 512));
        assert_eq!(r[0].service_ns, Some(100_000));
    }

    #[test]
    fn devices_are_volumes_and_bad_lines_are_refused() {
        let text = "8,0 0 1 0.000000001 1 Q R 0 + 8 [a]\n8,16 0 2 0.000000002 1 Q R 0 + 8 [a]\n";
        let e = import_text(Format::Blkparse, text, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds 2 volumes (8,0, 8,16)"), "{e}");
        assert_eq!(
            records(&import_text(Format::Blkparse, text, Some("8,16")).unwrap().0).len(),
            1
        );
        let e = import_text(
            Format::Blkparse,
            "8,0 0 1 0.1 1 Q R 0 + 8 [a]\n8,0 0 1 0.x 1 Q R 0 + 8 [a]\n",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: the time `0.x` is not SECONDS.NANOSECONDS"
        );
    }
}
