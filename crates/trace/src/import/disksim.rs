//! DiskSim and MQSim ASCII traces: whitespace-separated `arrival_time device block
//! size flags`, block and size in 512-byte sectors, no header; the volume is the device
//! number. The two differ in the arrival time's unit:
//!
//! - DiskSim (its manual, and its reader `sscanf("%lf %d %d %d %x")`): milliseconds as
//!   a decimal number (`0.000000 0 24536 8 1`), flags a hexadecimal bit field whose bit 0
//!   is a read.
//! - MQSim (its WebSearch and TPC-C excerpts): whole nanoseconds, type 1 = read and
//!   0 = write.
//!
//! The first data line tells them apart: a time with a fraction (a `.` or an exponent)
//! is DiskSim's milliseconds, a whole number MQSim's nanoseconds, unless the user names
//! the unit ([`TimeUnit`], `--time-unit`). The unit chosen is in the header's notes.

use super::lines::{num, scaled, LineFormat, Parsed};
use crate::{Op, Record};

/// The unit of an ASCII trace's arrival time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
}

impl TimeUnit {
    /// The names `--time-unit` takes.
    pub const NAMES: &'static str = "ns, us or ms";

    pub fn from_name(s: &str) -> Option<TimeUnit> {
        match s {
            "ns" => Some(TimeUnit::Ns),
            "us" | "µs" => Some(TimeUnit::Us),
            "ms" => Some(TimeUnit::Ms),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
        }
    }

    fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
        }
    }
}

/// How the arrival time's unit was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chosen {
    /// `--time-unit`.
    Given(TimeUnit),
    /// DiskSim: the first time had a fraction.
    Fraction,
    /// MQSim: the first time was a whole number.
    Whole,
}

impl Chosen {
    fn unit(self) -> TimeUnit {
        match self {
            Chosen::Given(u) => u,
            Chosen::Fraction => TimeUnit::Ms,
            Chosen::Whole => TimeUnit::Ns,
        }
    }
}

/// The importer: the unit given, or none until the first data line settles it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Disksim {
    chosen: Option<Chosen>,
}

impl Disksim {
    /// An importer whose arrival times are in `unit` (None: told from the first line).
    pub fn new(unit: Option<TimeUnit>) -> Disksim {
        Disksim {
            chosen: unit.map(Chosen::Given),
        }
    }

    /// The arrival time `f` in ns, in the unit settled by the first line.
    fn arrival_ns(&mut self, f: &str) -> Result<u64, String> {
        let fraction = f.contains(['.', 'e', 'E']);
        let chosen = *self.chosen.get_or_insert(if fraction {
            Chosen::Fraction
        } else {
            Chosen::Whole
        });
        if chosen == Chosen::Whole && fraction {
            return Err(format!(
                "the arrival time (field 1) `{f}` has a fraction, but the first line's whole number read the trace as MQSim's (ns); give --time-unit ms for DiskSim's milliseconds"
            ));
        }
        let unit = chosen.unit();
        if !fraction {
            let whole: u64 = num(&[f], 0, "arrival time")?;
            return whole.checked_mul(unit.ns()).ok_or_else(|| {
                format!(
                    "the arrival time (field 1) `{f}` {} is beyond 2^64 ns",
                    unit.name()
                )
            });
        }
        let v: f64 = f
            .parse()
            .map_err(|_| format!("the arrival time (field 1) `{f}` is not a number"))?;
        let ns = v * unit.ns() as f64;
        if !(0.0..1.8e19).contains(&ns) {
            return Err(format!(
                "the arrival time (field 1) `{f}` {} is not a time from 0 to 2^64 ns",
                unit.name()
            ));
        }
        Ok(ns.round() as u64)
    }

    /// The request's direction from its flags: 1 = read, 0 = write (both); in DiskSim's
    /// milliseconds, other values as its bit field (bit 0 = read); None for MQSim's other
    /// values.
    fn op(&self, f: &str) -> Option<Op> {
        match f {
            "1" => Some(Op::Read),
            "0" => Some(Op::Write),
            _ if self.chosen.map(Chosen::unit) == Some(TimeUnit::Ms) => {
                let hex = f.trim_start_matches("0x").trim_start_matches("0X");
                let bits = u32::from_str_radix(hex, 16).ok()?;
                Some(if bits & 1 == 1 { Op::Read } else { Op::Write })
            }
            _ => None,
        }
    }
}

impl LineFormat for Disksim {
    fn name(&self) -> &'static str {
        "disksim"
    }

    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String> {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 5 {
            return Err(format!(
                "{} whitespace-separated fields, expected 5 (arrival_time device block size flags)",
                f.len()
            ));
        }
        let t = self.arrival_ns(f[0])?;
        let lba: u64 = num(&f, 2, "block number")?;
        let sectors: u64 = num(&f, 3, "size")?;
        let Some(op) = self.op(f[4]) else {
            return Ok(Parsed::Skip(
                "an unknown type (neither 1 = read nor 0 = write)",
            ));
        };
        let offset = scaled(lba, 512, "block number")?;
        let len = scaled(sectors, 512, "size")?;
        Ok(Parsed::Io(Record::new(t, op, offset, len), Some(f[1])))
    }

    fn notes(&self) -> Vec<String> {
        let rest = "block and size in 512-byte sectors; volume = device";
        let note = match self.chosen {
            Some(Chosen::Given(u)) => format!(
                "DiskSim/MQSim ASCII: arrival time in {} (--time-unit), {}; {rest}",
                u.name(),
                if u == TimeUnit::Ms {
                    "flags bit 0 = read"
                } else {
                    "type 1 = read, 0 = write"
                }
            ),
            Some(Chosen::Fraction) => format!(
                "DiskSim ASCII: arrival time in ms (the times have fractions; --time-unit overrides), flags bit 0 = read; {rest}"
            ),
            Some(Chosen::Whole) | None => format!(
                "MQSim ASCII: arrival time in ns (the times are whole numbers; --time-unit ms for DiskSim's milliseconds), type 1 = read, 0 = write; {rest}"
            ),
        };
        vec![note]
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
        assert!(h.notes.iter().any(|n| n.contains("MQSim ASCII")));
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
            "line 2: 3 whitespace-separated fields, expected 5 (arrival_time device block size flags)"
        );
    }

    /// As DiskSim's own ASCII traces are (and its reader, `%lf %d %d %d %x`): times in
    /// ms with fractions, flags in hexadecimal with bits besides bit 0 (read).
    const DISKSIM: &str = "0.000000 0 24536 8 1\n\
                           1.250000 0 1200 16 0\n\
                           2.5 0 88 8 3\n\
                           1.2e1 0 64 8 4\n";

    /// Import `text` as disksim with `--time-unit` `unit`.
    fn import_unit(
        text: &str,
        unit: Option<super::TimeUnit>,
    ) -> Result<(Vec<crate::import::Event>, crate::Header), crate::TraceError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("in");
        std::fs::write(&p, text).unwrap();
        let opts = crate::import::Options {
            volume: Some("0".into()),
            time_unit: unit,
            ..Default::default()
        };
        let mut imp = crate::import::open(Format::Disksim, &p, &opts)?;
        let mut out = Vec::new();
        while let Some(e) = imp.next_event()? {
            out.push(e);
        }
        Ok((out, imp.header()?))
    }

    #[test]
    fn disksim_times_with_fractions_are_milliseconds() {
        let (ev, h) = import_text(Format::Disksim, DISKSIM, Some("0")).unwrap();
        assert_eq!(
            records(&ev),
            [
                Record::new(0, Op::Read, 24_536 * 512, 8 * 512),
                Record::new(1_250_000, Op::Write, 1200 * 512, 16 * 512),
                Record::new(2_500_000, Op::Read, 88 * 512, 8 * 512),
                Record::new(12_000_000, Op::Write, 64 * 512, 8 * 512),
            ]
        );
        assert!(
            h.notes
                .iter()
                .any(|n| n.starts_with("DiskSim ASCII: arrival time in ms")),
            "{:?}",
            h.notes
        );
        assert_eq!(Format::detect(DISKSIM), Some(Format::Disksim));
    }

    #[test]
    fn mqsim_whole_times_stay_nanoseconds_and_the_note_says_so() {
        let (ev, h) = import_text(Format::Disksim, TEXT, Some("0")).unwrap();
        assert_eq!(records(&ev)[1].issue_ns, 1543);
        assert!(
            h.notes
                .iter()
                .any(|n| n.starts_with("MQSim ASCII: arrival time in ns")),
            "{:?}",
            h.notes
        );
        // MQSim's types are 0 and 1 only: another value is skipped, not read as bits.
        let (ev, h) = import_text(Format::Disksim, "0 0 8 8 1\n5 0 8 8 3\n", Some("0")).unwrap();
        assert_eq!(records(&ev).len(), 1);
        assert!(
            h.notes.iter().any(|n| n.contains("unknown type")),
            "{:?}",
            h.notes
        );
    }

    #[test]
    fn a_fraction_after_whole_times_names_the_option() {
        let e = import_text(Format::Disksim, "0 0 8 8 1\n0.5 0 16 8 1\n", Some("0")).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("line 2: the arrival time (field 1) `0.5`"),
            "{m}"
        );
        assert!(m.contains("--time-unit ms"), "{m}");
        // Named, the unit holds for every line: whole milliseconds too.
        let (ev, h) = import_unit("0 0 8 8 1\n0.5 0 16 8 1\n", Some(super::TimeUnit::Ms)).unwrap();
        let t: Vec<u64> = records(&ev).iter().map(|r| r.issue_ns).collect();
        assert_eq!(t, [0, 500_000]);
        assert!(h.notes[0].contains("in ms (--time-unit)"), "{:?}", h.notes);
        let (ev, _) = import_unit("0 0 8 8 1\n3 0 8 8 1\n", Some(super::TimeUnit::Us)).unwrap();
        assert_eq!(records(&ev)[1].issue_ns, 3_000);
        let (ev, _) = import_unit("0 0 8 8 1\n7.4 0 8 8 1\n", Some(super::TimeUnit::Ns)).unwrap();
        assert_eq!(records(&ev)[1].issue_ns, 7);
    }

    #[test]
    fn impossible_times_are_refused_in_one_line() {
        for bad in ["-1.5", "1e30", "1.2.3", "1.5x"] {
            let text = format!("0.0 0 8 8 1\n{bad} 0 8 8 1\n");
            let e = import_text(Format::Disksim, &text, Some("0")).unwrap_err();
            let m = e.to_string();
            assert!(
                m.starts_with("line 2: the arrival time (field 1)"),
                "{bad}: {m}"
            );
            assert_eq!(m.lines().count(), 1);
        }
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
