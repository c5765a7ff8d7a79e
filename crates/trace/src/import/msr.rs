//! MSR Cambridge block traces (SNIA IOTTA set 388), one CSV line per request:
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no header row.
//! Timestamp is a Windows FILETIME (100 ns ticks since 1601-01-01 UTC), Type `Read` or
//! `Write`, Offset and Size in bytes, ResponseTime in 100 ns ticks. The volume is the
//! DiskNumber.

use super::lines::{csv, num, LineFormat, Parsed};
use crate::{Op, Record};

/// FILETIME ticks from 1601-01-01 to 1970-01-01.
pub(crate) const FILETIME_UNIX_EPOCH: u64 = 116_444_736_000_000_000;
const TICK_NS: u64 = 100;

pub(crate) struct Msr;

impl LineFormat for Msr {
    fn name(&self) -> &'static str {
        "msr"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f = csv(line, 7)?;
        let ticks: u64 = num(&f, 0, "Timestamp (FILETIME)")?;
        let op = match f[3].to_ascii_lowercase().as_str() {
            "read" => Op::Read,
            "write" => Op::Write,
            _ => return Ok(Parsed::Skip("an unknown Type (neither Read nor Write)")),
        };
        let offset: u64 = num(&f, 4, "Offset")?;
        let size: u64 = num(&f, 5, "Size")?;
        let response: u64 = num(&f, 6, "ResponseTime")?;
        // A FILETIME after 1970 is made a Unix time (it fits 64 bits in ns); an earlier one
        // (a trace whose times were made relative) stays as it is.
        let since = if ticks >= FILETIME_UNIX_EPOCH {
            ticks - FILETIME_UNIX_EPOCH
        } else {
            ticks
        };
        let issue_ns = since
            .checked_mul(TICK_NS)
            .ok_or("the Timestamp is too far in the future")?;
        let r = Record {
            service_ns: Some(
                response
                    .checked_mul(TICK_NS)
                    .ok_or("the ResponseTime is too large")?,
            ),
            ..Record::new(issue_ns, op, offset, size)
        };
        Ok(Parsed::Io(r, Some(f[2])))
    }

    fn notes(&self) -> Vec<String> {
        vec!["MSR Cambridge CSV: Timestamp in Windows FILETIME 100 ns ticks, Offset and Size in bytes, ResponseTime in 100 ns ticks (the service time); volume = DiskNumber".into()]
    }

    fn unix_ns(&self, t: u64) -> Option<u64> {
        // Times from FILETIMEs after 1970 are Unix times; a relative trace starts near 0.
        (t > 1_000_000_000 * 1_000_000_000).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    const HM0: &str = "\
128166372003061629,hm,0,Read,7014609920,24576,41286
128166372016382155,hm,0,Write,1317441536,8192,1963
128166372026382245,hm,0,Write,2436440064,4096,1352
";

    #[test]
    fn filetime_ticks_bytes_and_response_time() {
        let (ev, h) = import_text(Format::Msr, HM0, None).unwrap();
        let r = records(&ev);
        assert_eq!(
            r[0],
            Record {
                service_ns: Some(4_128_600),
                ..Record::new(0, Op::Read, 7_014_609_920, 24_576)
            }
        );
        // (128166372016382155 - 128166372003061629) ticks × 100 ns.
        assert_eq!(r[1].issue_ns, 1_332_052_600);
        assert_eq!((r[1].op, r[1].len_bytes), (Op::Write, 8192));
        // 2007-02-22 17:00:00.306 UTC (the MSR traces start at 5 PM GMT on 22 February 2007).
        let start = h.start_unix_ns.unwrap();
        assert_eq!(
            start,
            (128_166_372_003_061_629 - super::FILETIME_UNIX_EPOCH) * 100
        );
        assert_eq!(start / 1_000_000_000, 1_172_163_600);
        assert_eq!(h.source_format, "msr");
        assert!(h.notes.iter().any(|n| n == "volume 0"), "{:?}", h.notes);
    }

    #[test]
    fn header_row_empty_lines_and_unknown_types_are_skipped_and_noted() {
        let text = format!(
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\r\n{HM0}128166372026382245,hm,0,Trim,0,4096,1\n\n"
        );
        let (ev, h) = import_text(Format::Msr, &text, None).unwrap();
        assert_eq!(records(&ev).len(), 3);
        let notes = h.notes.join("\n");
        assert!(
            notes.contains("skipped 1 lines: a header row of column names (the first at line 1)"),
            "{notes}"
        );
        assert!(
            notes.contains("skipped 2 lines: empty (the first at line 2)"),
            "{notes}"
        );
        assert!(
            notes.contains(
                "skipped 1 lines: an unknown Type (neither Read nor Write) (the first at line 6)"
            ),
            "{notes}"
        );
    }

    #[test]
    fn malformed_lines_are_refused_with_their_number() {
        let bad = format!("{HM0}128166372026382245,hm,0,Read,12x,4096,1\n");
        assert_eq!(
            line_of(import_text(Format::Msr, &bad, None).unwrap_err()),
            Some(4)
        );
        let short = "128166372026382245,hm,0,Read\n";
        let e = import_text(Format::Msr, short, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: 4 comma-separated fields, expected 7"
        );
    }

    #[test]
    fn extents_past_2_64_and_absurd_lengths_are_refused_zero_lengths_skipped() {
        let over = "1,hm,0,Read,18446744073709551000,4096,1\n";
        let e = import_text(Format::Msr, over, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "line 1: a read of 4096 bytes at byte offset 18446744073709551000: it would end past 2^64 bytes"
        );
        let huge = format!("{HM0}1,hm,0,Write,0,18446744073709551615,1\n");
        let e = import_text(Format::Msr, &huge, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("line 4: a write of 18446744073709551615 bytes: longer than one request can be (at most 1073741824 bytes)"),
            "{e}"
        );
        // 1 GiB exactly is the longest accepted.
        let gib = "1,hm,0,Read,0,1073741824,1\n2,hm,0,Write,4096,0,1\n";
        let (ev, h) = import_text(Format::Msr, gib, None).unwrap();
        assert_eq!(records(&ev).len(), 1);
        assert!(
            h.notes.iter().any(|n| n
                == "skipped 1 lines: a read, write or discard of 0 bytes (the first at line 2)"),
            "{:?}",
            h.notes
        );
    }

    #[test]
    fn disk_numbers_are_volumes() {
        let two = format!("{HM0}128166372026382300,hm,1,Read,0,512,10\n");
        let e = import_text(Format::Msr, &two, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("holds 2 volumes (0, 1); choose one with --volume"),
            "{e}"
        );
        let (ev, _) = import_text(Format::Msr, &two, Some("1")).unwrap();
        assert_eq!(
            records(&ev),
            [Record {
                service_ns: Some(1000),
                ..Record::new(0, Op::Read, 0, 512)
            }]
        );
    }

    #[test]
    fn all_disk_numbers_are_mapped_into_one_span() {
        let two = format!("{HM0}128166372026382300,hm,1,Read,0,512,10\n");
        let (ev, h) = import_text(Format::Msr, &two, Some("all")).unwrap();
        const MIB: u64 = 1 << 20;
        let spans = spans(&h);
        // Disk 0's highest byte is 7 014 634 496: 6690 MiB rounded up.
        assert_eq!(spans, [("0", 0, 6690 * MIB), ("1", 6690 * MIB, MIB)]);
        let r = records(&ev);
        assert_eq!(r.len(), 4);
        assert_eq!(
            r.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(),
            [7_014_609_920, 1_317_441_536, 2_436_440_064, 6690 * MIB]
        );
        assert_eq!(h.device_size_bytes, Some(6691 * MIB));
    }

    #[test]
    fn out_of_order_lines_come_out_sorted() {
        let text = "200,h,0,Read,0,512,1\n100,h,0,Write,512,512,1\n";
        let (ev, h) = import_text(Format::Msr, text, None).unwrap();
        let r = records(&ev);
        assert_eq!(
            (r[0].op, r[0].issue_ns, r[1].issue_ns),
            (Op::Write, 0, 10_000)
        );
        assert_eq!(
            h.start_unix_ns, None,
            "ticks before 1970 are a relative trace"
        );
    }
}
