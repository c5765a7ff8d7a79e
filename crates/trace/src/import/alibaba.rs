//! Alibaba block traces: `device_id,opcode,offset,length,timestamp`. opcode `R` or `W`,
//! offset and length in bytes, timestamp in microseconds (Unix time) — the unit the
//! set's parsers use; the set's own documentation of it was not verified.

use super::lines::{csv, num, scaled_ns, LineFormat, Parsed};
use crate::{Op, Record};

pub(crate) struct Alibaba;

impl LineFormat for Alibaba {
    fn name(&self) -> &'static str {
        "alibaba"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f = csv(line, 5)?;
        let op = match f[1] {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            _ => return Ok(Parsed::Skip("an unknown opcode (neither R nor W)")),
        };
        let offset: u64 = num(&f, 2, "offset")?;
        let len: u64 = num(&f, 3, "length")?;
        let us: u64 = num(&f, 4, "timestamp")?;
        let r = Record::new(scaled_ns(us, 1000, "µs", "timestamp")?, op, offset, len);
        Ok(Parsed::Io(r, Some(f[0])))
    }

    fn notes(&self) -> Vec<String> {
        vec!["Alibaba: offset and length in bytes, timestamp in microseconds (assumed: the unit the set's parsers use); volume = device_id".into()]
    }

    fn unix_ns(&self, t: u64) -> Option<u64> {
        // Microsecond Unix times after 2001; a relative trace starts near 0.
        (t > 1_000_000_000 * 1_000_000_000).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    #[test]
    fn bytes_and_microseconds() {
        let text = "device_id,opcode,offset,length,timestamp\n\
                    3,W,126703616,4096,1577808000000117\n\
                    3,R,0,65536,1577808000000617\n";
        let (ev, h) = import_text(Format::Alibaba, text, None).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 126_703_616, 4096),
                Record::new(500_000, Op::Read, 0, 65_536),
            ]
        );
        assert_eq!(h.start_unix_ns, Some(1_577_808_000_000_117_000));
        assert!(
            h.notes.iter().any(|n| n.contains("header row")),
            "{:?}",
            h.notes
        );
    }

    #[test]
    fn unknown_opcodes_are_skipped_and_bad_numbers_refused() {
        let (ev, h) = import_text(Format::Alibaba, "1,D,0,4096,5\n1,R,0,4096,6\n", None).unwrap();
        assert_eq!(records(&ev).len(), 1);
        assert!(
            h.notes.iter().any(|n| n.contains("unknown opcode")),
            "{:?}",
            h.notes
        );
        let e = import_text(Format::Alibaba, "1,R,0,4096,6\n1,R,0,-1,7\n", None).unwrap_err();
        assert_eq!(line_of(e), Some(2));
    }
}
