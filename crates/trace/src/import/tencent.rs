//! Tencent CBS block traces (SNIA IOTTA 27917): `Timestamp,Offset,Size,IOType,VolumeID`.
//! Timestamp in Unix seconds (whole seconds: requests within one second keep their line
//! order at the same time), Offset and Size in 512-byte sectors, IOType 0 = read and
//! 1 = write, as the set's README documents.

use super::lines::{csv, num, scaled, scaled_ns, LineFormat, Parsed};
use crate::{Op, Record};

pub(crate) struct Tencent;

impl LineFormat for Tencent {
    fn name(&self) -> &'static str {
        "tencent"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f = csv(line, 5)?;
        let secs: u64 = num(&f, 0, "Timestamp")?;
        let offset: u64 = num(&f, 1, "Offset")?;
        let size: u64 = num(&f, 2, "Size")?;
        let op = match f[3] {
            "0" => Op::Read,
            "1" => Op::Write,
            _ => {
                return Ok(Parsed::Skip(
                    "an unknown IOType (neither 0 = read nor 1 = write)",
                ))
            }
        };
        let r = Record::new(
            scaled_ns(secs, 1_000_000_000, "s", "Timestamp")?,
            op,
            scaled(offset, 512, "Offset")?,
            scaled(size, 512, "Size")?,
        );
        Ok(Parsed::Io(r, Some(f[4])))
    }

    fn notes(&self) -> Vec<String> {
        vec!["Tencent CBS: Timestamp in Unix seconds (1 s resolution), Offset and Size in 512-byte sectors, IOType 0 = read, 1 = write; volume = VolumeID".into()]
    }

    fn unix_ns(&self, t: u64) -> Option<u64> {
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    #[test]
    fn sectors_and_unix_seconds() {
        let text = "1538323200,12734,16,1,1063\n1538323200,8,8,0,1063\n1538323201,0,1,1,1063\n";
        let (ev, h) = import_text(Format::Tencent, text, None).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 12_734 * 512, 8192),
                Record::new(0, Op::Read, 4096, 4096),
                Record::new(1_000_000_000, Op::Write, 0, 512),
            ]
        );
        assert_eq!(h.start_unix_ns, Some(1_538_323_200_000_000_000));
    }

    #[test]
    fn volumes_unknown_types_and_malformed_lines() {
        let text = "1538323200,0,8,0,1063\n1538323200,0,8,0,7\n1538323200,0,8,2,7\n";
        assert!(import_text(Format::Tencent, text, None)
            .unwrap_err()
            .to_string()
            .contains("(1063, 7)"));
        let (ev, h) = import_text(Format::Tencent, text, Some("7")).unwrap();
        assert_eq!(records(&ev).len(), 1);
        assert!(
            h.notes.iter().any(|n| n.contains("unknown IOType")),
            "{:?}",
            h.notes
        );
        let e = import_text(Format::Tencent, "1538323200,0,8,0\n", None).unwrap_err();
        assert_eq!(line_of(e), Some(1));
    }
}
