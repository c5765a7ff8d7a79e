//! SPC traces of the UMass trace repository (Financial1/2, WebSearch1-3, `.spc`):
//! `ASU,LBA,Size,Opcode,Timestamp[,…]`. LBA in 512-byte blocks, Size in bytes, Opcode
//! `r` or `w`, Timestamp in seconds from the trace's start. The volume is the ASU.

use super::lines::{csv, num, scaled, seconds_ns, LineFormat, Parsed};
use crate::{Op, Record};

pub(crate) struct Spc;

impl LineFormat for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f = csv(line, 5)?;
        let lba: u64 = num(&f, 1, "LBA")?;
        let size: u64 = num(&f, 2, "Size")?;
        let op = match f[3] {
            "r" | "R" => Op::Read,
            "w" | "W" => Op::Write,
            _ => return Ok(Parsed::Skip("an unknown Opcode (neither r nor w)")),
        };
        let t = seconds_ns(f[4], "Timestamp")?;
        let offset = scaled(lba, 512, "LBA")?;
        Ok(Parsed::Io(Record::new(t, op, offset, size), Some(f[0])))
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "SPC/UMass: LBA in 512-byte blocks, Size in bytes, Timestamp in seconds; volume = ASU"
                .into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    #[test]
    fn lba_in_blocks_size_in_bytes_seconds() {
        let text = "0,20941264,8192,W,0.551706\n0,20939840,8192,w,0.554041,extra\n0,3436288,15872,r,0.555365\n";
        let (ev, h) = import_text(Format::Spc, text, None).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 20_941_264 * 512, 8192),
                Record::new(2_335_000, Op::Write, 20_939_840 * 512, 8192),
                Record::new(3_659_000, Op::Read, 3_436_288 * 512, 15_872),
            ]
        );
        assert_eq!(h.start_unix_ns, None);
    }

    #[test]
    fn asus_are_volumes_and_unknown_opcodes_are_skipped() {
        let text = "8,21888,32768,r,2077.065185\n1,0,512,r,2077.1\n8,0,512,x,2077.2\n";
        let e = import_text(Format::Spc, text, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds 2 volumes (1, 8)"), "{e}");
        let (ev, h) = import_text(Format::Spc, text, Some("8")).unwrap();
        assert_eq!(
            records(&ev),
            [Record::new(0, Op::Read, 21_888 * 512, 32_768)]
        );
        assert!(
            h.notes.iter().any(|n| n.contains("unknown Opcode")),
            "{:?}",
            h.notes
        );
    }

    #[test]
    fn a_bad_timestamp_names_its_line() {
        let e = import_text(Format::Spc, "0,1,512,r,0.1\n0,1,512,r,-3\n", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: the Timestamp `-3` is not a time in seconds from 0 to 1.8e10"
        );
    }

    #[test]
    fn all_asus_are_mapped_into_one_span_in_asu_order() {
        // Financial1-like: three ASUs, interleaved.
        let text = "0,20941264,8192,W,0.551706\n2,3436288,15872,r,0.555365\n1,20939840,8192,w,0.554041\n0,1000,512,r,0.56\n";
        let (ev, h) = import_text(Format::Spc, text, Some("all")).unwrap();
        const MIB: u64 = 1 << 20;
        let spans = spans(&h);
        assert_eq!(
            spans,
            [
                ("0", 0, 10_226 * MIB),
                ("1", 10_226 * MIB, 10_225 * MIB),
                ("2", 20_451 * MIB, 1_678 * MIB)
            ]
        );
        assert_eq!(h.device_size_bytes, Some(22_129 * MIB));
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Write, 20_941_264 * 512, 8192),
                Record::new(2_335_000, Op::Write, 10_226 * MIB + 20_939_840 * 512, 8192),
                Record::new(3_659_000, Op::Read, 20_451 * MIB + 3_436_288 * 512, 15_872),
                Record::new(8_294_000, Op::Read, 1000 * 512, 512),
            ]
        );
        assert!(
            h.notes
                .iter()
                .any(|n| n.starts_with("--volume all: 3 volumes")),
            "{:?}",
            h.notes
        );
    }
}
