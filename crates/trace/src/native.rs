//! drivelab's own trace format (specified in `docs/trace-format.md`).
//!
//! ```text
//! drivelab-trace 1\n          magic line
//! {"source_format":…}\n        the Header as one line of JSON
//! entry*                       tagged binary entries, see below
//! trailer                      0x02, varint length, Totals as JSON; then end of file
//! ```
//!
//! An I/O entry's tag has bit 7 set; bits 0–1 are the operation, bit 2 FUA, bit 3 "pid
//! follows", bit 4 "service time follows". Then: issue time as a zig-zag varint delta from
//! the previous record's issue time (ns), offset as a zig-zag varint delta from the end of
//! the previous record (so sequential I/O costs one byte), length as a varint, then the pid
//! and the service time (ns) as varints when flagged. A process entry (tag 0x01) names a
//! pid: varint pid, varint length, UTF-8 name. A sequential 4 KiB stream at 100 k IOPS costs 7
//! bytes per I/O.

use crate::{Header, Op, Record, Totals, TraceError};
use std::collections::HashMap;
use std::io::{BufRead, Write};

pub const MAGIC: &str = "drivelab-trace 1\n";
const TAG_PROCESS: u8 = 0x01;
const TAG_TRAILER: u8 = 0x02;
const TAG_RECORD: u8 = 0x80;
const FLAG_FUA: u8 = 0x04;
const FLAG_PID: u8 = 0x08;
const FLAG_SERVICE: u8 = 0x10;
/// Longest header line and trailer accepted: a corrupt length never allocates much.
const MAX_JSON_BYTES: u64 = 1 << 20;
const MAX_NAME_BYTES: u64 = 4096;
/// The most processes whose names a writer or reader keeps (a trace of 100 000 process
/// names must not hold them all in memory; 4 096 × 4 KiB names at most).
pub const MAX_NAMED_PROCESSES: usize = 4096;

/// Does this file start like a drivelab trace?
pub fn is_native(first_bytes: &[u8]) -> bool {
    first_bytes.starts_with(MAGIC.as_bytes())
}

/// Writes a trace one record at a time; [`Writer::finish`] writes the trailer.
pub struct Writer<W: Write> {
    out: W,
    prev_issue_ns: u64,
    prev_end: u64,
    names: HashMap<u32, String>,
    totals: Totals,
}

impl<W: Write> Writer<W> {
    pub fn new(mut out: W, header: &Header) -> Result<Writer<W>, TraceError> {
        out.write_all(MAGIC.as_bytes())?;
        serde_json::to_writer(&mut out, header).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        Ok(Writer {
            out,
            prev_issue_ns: 0,
            prev_end: 0,
            names: HashMap::new(),
            totals: Totals::default(),
        })
    }

    /// Names the process `pid` (written only when the name is new or changed).
    pub fn name_process(&mut self, pid: u32, name: &str) -> Result<(), TraceError> {
        let name = truncate_utf8(name, MAX_NAME_BYTES as usize);
        if self.names.get(&pid).is_some_and(|n| n == name) {
            return Ok(());
        }
        self.out.write_all(&[TAG_PROCESS])?;
        put_varint(&mut self.out, pid as u64)?;
        put_varint(&mut self.out, name.len() as u64)?;
        self.out.write_all(name.as_bytes())?;
        // Remembered (to write a name once) for at most MAX_NAMED_PROCESSES processes:
        // past them a name is written again whenever it is given, memory stays bounded.
        if self.names.len() < MAX_NAMED_PROCESSES || self.names.contains_key(&pid) {
            self.names.insert(pid, name.to_string());
        }
        Ok(())
    }

    pub fn write(&mut self, r: &Record) -> Result<(), TraceError> {
        let mut tag = TAG_RECORD | r.op.code();
        if r.fua {
            tag |= FLAG_FUA;
        }
        if r.pid.is_some() {
            tag |= FLAG_PID;
        }
        if r.service_ns.is_some() {
            tag |= FLAG_SERVICE;
        }
        self.out.write_all(&[tag])?;
        put_varint(
            &mut self.out,
            zigzag(r.issue_ns.wrapping_sub(self.prev_issue_ns) as i64),
        )?;
        put_varint(
            &mut self.out,
            zigzag(r.offset_bytes.wrapping_sub(self.prev_end) as i64),
        )?;
        put_varint(&mut self.out, r.len_bytes)?;
        if let Some(pid) = r.pid {
            put_varint(&mut self.out, pid as u64)?;
        }
        if let Some(s) = r.service_ns {
            put_varint(&mut self.out, s)?;
        }
        self.prev_issue_ns = r.issue_ns;
        self.prev_end = r.offset_bytes.wrapping_add(r.len_bytes);
        self.totals.add(r);
        Ok(())
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Writes the trailer and flushes; returns the totals and the output.
    pub fn finish(mut self) -> Result<(Totals, W), TraceError> {
        let json = serde_json::to_vec(&self.totals).map_err(std::io::Error::from)?;
        self.out.write_all(&[TAG_TRAILER])?;
        put_varint(&mut self.out, json.len() as u64)?;
        self.out.write_all(&json)?;
        self.out.flush()?;
        Ok((self.totals, self.out))
    }
}

/// Copies the trace `input` to `out` with `header` in place of its own: an importer
/// knows its header (what it skipped, the volume it kept) only after its last record, so
/// it writes the records first and puts the header in front of them with this.
pub fn rehead<R: BufRead, W: Write>(
    mut input: R,
    header: &Header,
    mut out: W,
) -> Result<W, TraceError> {
    let mut magic = vec![0u8; MAGIC.len()];
    input.read_exact(&mut magic).map_err(|_| not_a_trace())?;
    if magic != MAGIC.as_bytes() {
        return Err(not_a_trace());
    }
    let mut old = Vec::new();
    std::io::Read::take(&mut input, MAX_JSON_BYTES).read_until(b'\n', &mut old)?;
    out.write_all(MAGIC.as_bytes())?;
    serde_json::to_writer(&mut out, header).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    std::io::copy(&mut input, &mut out)?;
    out.flush()?;
    Ok(out)
}

/// Reads a trace as an iterator of records; the trailer is checked at the end, so a
/// truncated or corrupted file ends in an error, never in a silently short trace.
pub struct Reader<R: BufRead> {
    input: R,
    header: Header,
    prev_issue_ns: u64,
    prev_end: u64,
    names: HashMap<u32, String>,
    /// Process entries of processes past the first [`MAX_NAMED_PROCESSES`]: not kept.
    names_not_kept: u64,
    seen: Totals,
    trailer: Option<Totals>,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    pub fn new(mut input: R) -> Result<Reader<R>, TraceError> {
        let mut magic = vec![0u8; MAGIC.len()];
        input.read_exact(&mut magic).map_err(|_| not_a_trace())?;
        if magic != MAGIC.as_bytes() {
            return Err(not_a_trace());
        }
        let mut line = Vec::new();
        std::io::Read::take(&mut input, MAX_JSON_BYTES).read_until(b'\n', &mut line)?;
        if line.last() != Some(&b'\n') {
            return Err(TraceError::malformed(
                Some(2),
                "the header line is missing or too long",
            ));
        }
        let header: Header = serde_json::from_slice(&line)
            .map_err(|e| TraceError::malformed(Some(2), format!("header: {e}")))?;
        Ok(Reader {
            input,
            header,
            prev_issue_ns: 0,
            prev_end: 0,
            names: HashMap::new(),
            names_not_kept: 0,
            seen: Totals::default(),
            trailer: None,
            done: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Process entries not kept: of processes past the first [`MAX_NAMED_PROCESSES`]
    /// named (their records read as unnamed).
    pub fn names_not_kept(&self) -> u64 {
        self.names_not_kept
    }

    /// The name of process `pid`, as last named before the record being read.
    pub fn process_name(&self, pid: u32) -> Option<&str> {
        self.names.get(&pid).map(String::as_str)
    }

    /// Totals of the records read so far.
    pub fn seen(&self) -> &Totals {
        &self.seen
    }

    /// The trailer's totals, once the iterator has ended cleanly.
    pub fn trailer(&self) -> Option<&Totals> {
        self.trailer.as_ref()
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            let Some(tag) = self.byte()? else {
                return Err(self.corrupt("truncated: the file ends before its trailer"));
            };
            match tag {
                TAG_PROCESS => self.read_process()?,
                TAG_TRAILER => {
                    self.read_trailer()?;
                    return Ok(None);
                }
                t if t & TAG_RECORD != 0 && t & 0x60 == 0 => return self.read_record(t).map(Some),
                t => return Err(self.corrupt(&format!("unknown entry tag {t:#04x}"))),
            }
        }
    }

    fn read_record(&mut self, tag: u8) -> Result<Record, TraceError> {
        let issue_ns = self
            .prev_issue_ns
            .wrapping_add(unzigzag(self.varint()?) as u64);
        let offset_bytes = self.prev_end.wrapping_add(unzigzag(self.varint()?) as u64);
        let len_bytes = self.varint()?;
        let pid = if tag & FLAG_PID != 0 {
            Some(self.varint()? as u32)
        } else {
            None
        };
        let service_ns = if tag & FLAG_SERVICE != 0 {
            Some(self.varint()?)
        } else {
            None
        };
        if offset_bytes.checked_add(len_bytes).is_none() {
            return Err(self.corrupt(&format!(
                "a {} of {len_bytes} bytes at byte offset {offset_bytes} ends past 2^64 bytes",
                Op::from_code(tag).name()
            )));
        }
        let r = Record {
            issue_ns,
            op: Op::from_code(tag),
            offset_bytes,
            len_bytes,
            fua: tag & FLAG_FUA != 0,
            pid,
            service_ns,
        };
        self.prev_issue_ns = issue_ns;
        self.prev_end = offset_bytes.wrapping_add(len_bytes);
        self.seen.add(&r);
        Ok(r)
    }

    fn read_process(&mut self) -> Result<(), TraceError> {
        let pid = self.varint()? as u32;
        let len = self.varint()?;
        if len > MAX_NAME_BYTES {
            return Err(self.corrupt("a process name is longer than 4096 bytes"));
        }
        let mut name = vec![0u8; len as usize];
        self.input
            .read_exact(&mut name)
            .map_err(|_| self.corrupt("truncated process name"))?;
        if self.names.len() < MAX_NAMED_PROCESSES || self.names.contains_key(&pid) {
            self.names
                .insert(pid, String::from_utf8_lossy(&name).into_owned());
        } else {
            self.names_not_kept += 1;
        }
        Ok(())
    }

    fn read_trailer(&mut self) -> Result<(), TraceError> {
        let len = self.varint()?;
        if len > MAX_JSON_BYTES {
            return Err(self.corrupt("the trailer is too long"));
        }
        let mut json = vec![0u8; len as usize];
        self.input
            .read_exact(&mut json)
            .map_err(|_| self.corrupt("truncated trailer"))?;
        let totals: Totals =
            serde_json::from_slice(&json).map_err(|e| self.corrupt(&format!("trailer: {e}")))?;
        if totals != self.seen {
            let (t, r) = (&totals, &self.seen);
            let differ = [
                ("records", t.records, r.records),
                ("bytes read", t.read_bytes, r.read_bytes),
                ("bytes written", t.write_bytes, r.write_bytes),
                ("bytes discarded", t.discard_bytes, r.discard_bytes),
                ("flushes", t.flushes, r.flushes),
                ("last issue time (ns)", t.last_issue_ns, r.last_issue_ns),
            ]
            .into_iter()
            .filter(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what}: {a} in the trailer, {b} in the records"))
            .collect::<Vec<_>>()
            .join("; ");
            return Err(self.corrupt(&format!(
                "the records do not add up to the trailer's totals ({differ})"
            )));
        }
        if self.byte()?.is_some() {
            return Err(self.corrupt("data after the trailer"));
        }
        self.trailer = Some(totals);
        Ok(())
    }

    fn byte(&mut self) -> Result<Option<u8>, TraceError> {
        let buf = self.input.fill_buf()?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.input.consume(1);
        Ok(Some(b))
    }

    fn varint(&mut self) -> Result<u64, TraceError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(b) = self.byte()? else {
                return Err(self.corrupt("truncated: the file ends inside a record"));
            };
            value |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.corrupt("a number is longer than 64 bits"))
    }

    fn corrupt(&self, what: &str) -> TraceError {
        TraceError::malformed(
            None,
            format!("corrupt trace after record {}: {what}", self.seen.records),
        )
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads the whole trace at `path` once and checks it: every entry well formed, every
/// record's extent within 2^64 bytes, the trailer present, its totals those of the
/// records, nothing after it. For a consumer that streams (replay) and must not start
/// on a trace that turns out corrupt at its end: call this first. Returns the header and
/// the totals; the error says where the file is corrupt.
pub fn verify(path: &std::path::Path) -> Result<(Header, Totals), TraceError> {
    let f = crate::input::open_regular(path)?;
    let mut r = Reader::new(std::io::BufReader::with_capacity(1 << 16, f))?;
    for rec in r.by_ref() {
        rec?;
    }
    let totals = *r.trailer().ok_or_else(|| r.corrupt("no trailer"))?;
    Ok((r.header().clone(), totals))
}

fn not_a_trace() -> TraceError {
    TraceError::malformed(
        Some(1),
        "not a drivelab trace (the first line is not `drivelab-trace 1`)",
    )
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_varint<W: Write>(out: &mut W, mut v: u64) -> std::io::Result<()> {
    let mut buf = [0u8; 10];
    let mut n = 0;
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf[n] = b;
            n += 1;
            break;
        }
        buf[n] = b | 0x80;
        n += 1;
    }
    out.write_all(&buf[..n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_reads_the_whole_file_and_finds_corruption_anywhere() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.dltrace");
        let bytes = encode(&sample());
        std::fs::write(&p, &bytes).unwrap();
        let (h, t) = verify(&p).unwrap();
        assert_eq!(
            (h.source_format.as_str(), t.records, t.flushes),
            ("test", 5, 1)
        );
        // Cut short: no trailer.
        std::fs::write(&p, &bytes[..bytes.len() - 3]).unwrap();
        assert!(verify(&p).is_err());
        // A byte changed in the body: an unknown tag.
        let body = MAGIC.len()
            + bytes[MAGIC.len()..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap()
            + 1;
        let mut bad = bytes.clone();
        bad[body + 6] ^= 0x40; // the first record's tag (after the process entry "fio")
        std::fs::write(&p, &bad).unwrap();
        let e = verify(&p).unwrap_err().to_string();
        assert!(e.starts_with("corrupt trace after record"), "{e}");
        // Data after the trailer.
        let mut long = bytes.clone();
        long.push(0);
        std::fs::write(&p, &long).unwrap();
        assert!(verify(&p)
            .unwrap_err()
            .to_string()
            .contains("data after the trailer"));
        // An extent past 2^64, well formed otherwise.
        let over = encode(&[Record::new(0, Op::Read, u64::MAX - 100, 4096)]);
        std::fs::write(&p, &over).unwrap();
        assert!(verify(&p).unwrap_err().to_string().contains("past 2^64"));
    }

    fn sample() -> Vec<Record> {
        vec![
            Record {
                pid: Some(42),
                ..Record::new(0, Op::Write, 1 << 20, 4096)
            },
            Record::new(1_000, Op::Write, (1 << 20) + 4096, 4096),
            Record {
                service_ns: Some(75_000),
                fua: true,
                ..Record::new(900, Op::Read, 0, 131072)
            },
            Record::new(5_000_000_000, Op::Flush, 0, 0),
            Record::new(5_000_000_001, Op::Discard, u64::MAX - 4096, 4096),
        ]
    }

    fn encode(records: &[Record]) -> Vec<u8> {
        let header = Header {
            source_format: "test".into(),
            device_size_bytes: Some(1 << 30),
            ..Header::default()
        };
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.name_process(42, "fio").unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap().1
    }

    #[test]
    fn process_names_kept_are_bounded() {
        let mut w = Writer::new(Vec::new(), &Header::default()).unwrap();
        let n = MAX_NAMED_PROCESSES as u32 + 100;
        for pid in 0..n {
            w.name_process(pid, &format!("p{pid}")).unwrap();
            w.write(&Record {
                pid: Some(pid),
                ..Record::new(u64::from(pid), Op::Read, 0, 512)
            })
            .unwrap();
        }
        assert_eq!(w.names.len(), MAX_NAMED_PROCESSES);
        let bytes = w.finish().unwrap().1;
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut named = 0;
        while let Some(rec) = r.next() {
            named += u32::from(r.process_name(rec.unwrap().pid.unwrap()).is_some());
        }
        assert_eq!(named as usize, MAX_NAMED_PROCESSES);
        assert_eq!(r.names_not_kept(), 100);
    }

    #[test]
    fn rehead_replaces_only_the_header() {
        let bytes = encode(&sample());
        let h = Header {
            source_format: "msr".into(),
            notes: vec!["skipped 2 lines".into()],
            ..Header::default()
        };
        let out = rehead(&bytes[..], &h, Vec::new()).unwrap();
        let r = Reader::new(&out[..]).unwrap();
        assert_eq!(r.header(), &h);
        assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap(), sample());
    }

    #[test]
    fn round_trips_every_field() {
        let bytes = encode(&sample());
        let mut r = Reader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().device_size_bytes, Some(1 << 30));
        let back: Vec<Record> = r.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, sample());
        assert_eq!(r.process_name(42), Some("fio"));
        assert_eq!(r.trailer().unwrap().records, 5);
        assert_eq!(r.trailer().unwrap().flushes, 1);
    }

    #[test]
    fn sequential_io_is_compact() {
        let records: Vec<Record> = (0..1000)
            .map(|i| Record::new(i * 10_000, Op::Read, i * 4096, 4096))
            .collect();
        let bytes = encode(&records);
        let header_len = bytes.iter().position(|&b| b == b'\n').unwrap();
        assert!(
            bytes.len() < header_len + 200 + 1000 * 7,
            "{} bytes",
            bytes.len()
        );
    }

    #[test]
    fn truncation_anywhere_is_an_error() {
        let bytes = encode(&sample());
        let body = MAGIC.len()
            + bytes[MAGIC.len()..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap()
            + 1;
        for cut in body..bytes.len() {
            let result: Result<Vec<Record>, _> = Reader::new(&bytes[..cut]).unwrap().collect();
            assert!(
                result.is_err(),
                "cut at {cut} of {} read as complete",
                bytes.len()
            );
        }
    }

    #[test]
    fn other_files_are_refused_on_the_first_line() {
        let e = Reader::new(&b"fio version 2 iolog\n"[..]).err().unwrap();
        assert!(e.to_string().contains("not a drivelab trace"), "{e}");
        assert!(Reader::new(&b"drivelab-trace 1\n{not json\n"[..]).is_err());
    }
}
