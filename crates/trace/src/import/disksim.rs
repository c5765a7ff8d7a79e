//! DiskSim / MQSim ASCII traces (MQSim ships its WebSearch and TPC-C excerpts in this
//! form): whitespace-separated `arrival_time device lba size type`, arrival time in ns,
//! LBA and size in 512-byte sectors, type 1 = read and 0 = write; no header. The volume
//! is the device number.

use super::lines::{num, scaled, LineFormat, Parsed};
use crate::{Op, Record};

pub(crate) struct Disksim;

impl LineFormat for Disksim {
    fn name(&self) -> &'static str {
        "disksim"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 5 {
            return Err(format!(
                "{} whitespace-separated fields, expected 5 (arrival_ns device lba sectors type)",
                f.len()
            ));
        }
        let t: u64 = num(&f, 0, "arrival time")?;
        let lba: u64 = num(&f, 2, "LBA")?;
        let sectors: u64 = num(&f, 3, "size")?;
        let op = match f[4] {
            "1" => Op::Read,
            "0" => Op::Write,
            _ => {
                return Ok(Parsed::Skip(
                    "an unknown type (neither 1 = read nor 0 = write)",
                ))
            }
        };
        let offset = scaled(lba, 512, "LBA")?;
        let len = scaled(sectors, 512, "size")?;
        Ok(Parsed::Io(Record::new(t, op, offset, len), Some(f[1])))
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "DiskSim/MQSim: arrival time in ns, LBA and size in 512-byte sectors, type 1 = read, 0 = write; volume = device"
                .into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;
    use crate::{Op, Record};

    /// As MQSim's excerpts are: no header, tabs or spaces, several devices, the last
    /// line without a newline.
    const TEXT: &str =
        "0\t0\t14153456\t16\t1\n1543\t0\t2047224\t8\t0\n2900 1 999 8 1\n10021\t0\t1220\t64\t1";

    #[test]
    fn every_record_imports_with_sectors_and_ns() {
        let (ev, h) = import_text(Format::Disksim, TEXT, Some("0")).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Read, 14_153_456 * 512, 16 * 512),
                Record::new(1543, Op::Write, 2_047_224 * 512, 8 * 512),
                Record::new(10_021, Op::Read, 1220 * 512, 64 * 512),
            ]
        );
        assert!(h.notes.iter().any(|n| n.contains("DiskSim/MQSim")));
        // Both devices: each is a volume.
        let e = import_text(Format::Disksim, TEXT, None).unwrap_err();
        assert!(e.to_string().contains("holds 2 volumes (0, 1)"), "{e}");
        let (ev, _) = import_text(Format::Disksim, TEXT, Some("1")).unwrap();
        assert_eq!(records(&ev), [Record::new(0, Op::Read, 999 * 512, 4096)]);
    }

    #[test]
    fn all_devices_are_mapped_into_one_span() {
        let (ev, h) = import_text(Format::Disksim, TEXT, Some("all")).unwrap();
        const MIB: u64 = 1 << 20;
        let offsets: Vec<(&str, u64)> = spans(&h).into_iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(offsets, [("0", 0), ("1", 6911 * MIB)]);
        assert_eq!(
            records(&ev)[2],
            Record::new(2900, Op::Read, 6911 * MIB + 999 * 512, 4096)
        );
    }

    #[test]
    fn a_short_line_names_its_line_and_the_fields_expected() {
        let e = import_text(Format::Disksim, "0 0 1 8 1\n5 0 1\n", Some("0")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: 3 whitespace-separated fields, expected 5 (arrival_ns device lba sectors type)"
        );
    }

    #[test]
    fn the_format_is_told_from_its_first_lines() {
        assert_eq!(Format::detect(TEXT), Some(Format::Disksim));
        assert_eq!(
            Format::detect("0,20941264,8192,W,0.551706\n0,20939840,8192,w,0.554041\n"),
            Some(Format::Spc)
        );
        assert_eq!(Format::detect("hello\nworld\n"), None);
    }
}
