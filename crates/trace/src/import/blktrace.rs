//! blktrace's binary output: one file per CPU (`NAME.blktrace.0`, `.1`, …), each a
//! sequence of `struct blk_io_trace` (48 bytes, the writer's byte order, magic
//! `0x65617407`) followed by `pdu_len` bytes, in time order within the file. The files
//! are merged by time. `time` is in ns on the kernel's monotonic clock, `sector` in 512
//! byte units, `bytes` in bytes; `action` is the category bits (`<< 16`: read, write,
//! flush, sync, …, discard, FUA) and the action (1 queue, 8 complete; with the notify
//! category: 0 a process name, 1 the wall-clock time). Records and service times come
//! from queue and complete events (see `blk`); the volume is the device `maj,min`.

use super::blk::{check_queued, BlkEvent, BlkImport, BlkSource, Flags, Kind};
use super::Import;
use crate::{Header, TraceError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
const EVENT_BYTES: usize = 48;
const TA_QUEUE: u32 = 1;
const TA_COMPLETE: u32 = 8;
const TA_CGROUP: u32 = 1 << 8;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;
const TN_PROCESS: u32 = 0;
const TN_TIMESTAMP: u32 = 1;

/// The per-CPU files of the recording `path` names (one of them, or their base name),
/// in CPU order; a single file that is not one of a set is taken alone.
pub fn per_cpu_files(path: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let base = super::blktrace_base(path);
    let dir = base
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = format!(
        "{}.blktrace.",
        base.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .map(|d| d.flatten().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let cpu = name.strip_prefix(&stem)?.parse().ok()?;
            Some((cpu, e.path()))
        })
        .collect();
    found.sort();
    if found.is_empty() {
        if path.is_file() {
            return Ok(vec![path.to_path_buf()]);
        }
        return Err(TraceError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "{}: no such file, nor files {}{stem}N",
                path.display(),
                if dir == Path::new(".") {
                    String::new()
                } else {
                    format!("{}/", dir.display())
                }
            ),
        )));
    }
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// One raw event: the fields of `struct blk_io_trace` drivelab uses, and its pdu.
struct Raw {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    error: u16,
    pdu: Vec<u8>,
    /// Where it is: its file (index), its number there (from 1), its byte offset.
    file: usize,
    event: u64,
    at: u64,
}

/// One per-CPU file.
struct CpuFile {
    input: BufReader<std::fs::File>,
    /// The file's name for messages; `None` when it is the one file the user named.
    name: Option<String>,
    index: usize,
    events: u64,
    /// Bytes read so far.
    offset: u64,
    big_endian: Option<bool>,
}

impl CpuFile {
    fn next_raw(&mut self) -> Result<Option<Raw>, TraceError> {
        let mut b = [0u8; EVENT_BYTES];
        let n = read_full(&mut self.input, &mut b)?;
        if n == 0 {
            return Ok(None);
        }
        self.events += 1;
        let at = self.offset;
        self.offset = self.offset.saturating_add(n as u64);
        let bad = |why: String| event_error(self.name.as_deref(), self.events, at, why);
        if n < EVENT_BYTES {
            return Err(bad("truncated (the file ends inside it)".into()));
        }
        let le = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes"));
        let big = match self.big_endian {
            Some(big) => big,
            None if le & 0xffff_ff00 == MAGIC => false,
            None if le.swap_bytes() & 0xffff_ff00 == MAGIC => true,
            None => return Err(bad("not a blktrace file (no blk_io_trace magic)".into())),
        };
        self.big_endian = Some(big);
        let u32_at = |i: usize| {
            let v = u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
            if big {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let v = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if big {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u16_at = |i: usize| {
            let v = u16::from_le_bytes(b[i..i + 2].try_into().expect("2 bytes"));
            if big {
                v.swap_bytes()
            } else {
                v
            }
        };
        let magic = u32_at(0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(bad("no blk_io_trace magic (a corrupt file?)".into()));
        }
        if magic & 0xff != VERSION {
            return Err(bad(format!(
                "blktrace format version {} (drivelab reads version 7)",
                magic & 0xff
            )));
        }
        let mut pdu = vec![0u8; usize::from(u16_at(46))];
        let got = read_full(&mut self.input, &mut pdu)?;
        self.offset = self.offset.saturating_add(got as u64);
        if got < pdu.len() {
            return Err(bad("truncated (the file ends inside its data)".into()));
        }
        Ok(Some(Raw {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            error: u16_at(44),
            pdu,
            file: self.index,
            event: self.events,
            at,
        }))
    }
}

/// What is wrong with event `n` (at byte `at`) of the file `name` (`None`: the one the
/// user named, whose name the message is already given under).
fn event_error(name: Option<&str>, n: u64, at: u64, why: String) -> TraceError {
    let file = name.map(|f| format!("{f}: ")).unwrap_or_default();
    TraceError::malformed(None, format!("{file}event {n} (byte offset {at}): {why}"))
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The per-CPU files merged by time.
pub(crate) struct Blktrace {
    files: Vec<CpuFile>,
    heads: BinaryHeap<Reverse<(u64, usize)>>,
    next: Vec<Option<Raw>>,
    /// Wall-clock ns at trace-clock ns, from a timestamp notification.
    clock: Option<(u64, u64)>,
}

impl Blktrace {
    fn open(paths: &[PathBuf], named: &Path) -> Result<Blktrace, TraceError> {
        let mut b = Blktrace {
            files: Vec::new(),
            heads: BinaryHeap::new(),
            next: Vec::new(),
            clock: None,
        };
        for (i, p) in paths.iter().enumerate() {
            let f = crate::input::open_regular(p)?;
            let alone = paths.len() == 1 && p.as_path() == named;
            b.files.push(CpuFile {
                input: BufReader::with_capacity(1 << 16, f),
                name: (!alone).then(|| p.display().to_string()),
                index: i,
                events: 0,
                offset: 0,
                big_endian: None,
            });
            b.next.push(None);
            b.refill(i)?;
        }
        Ok(b)
    }

    fn refill(&mut self, i: usize) -> Result<(), TraceError> {
        if let Some(raw) = self.files[i].next_raw()? {
            self.heads.push(Reverse((raw.time, i)));
            self.next[i] = Some(raw);
        }
        Ok(())
    }

    /// The next raw event of all CPUs, by time.
    fn next_raw(&mut self) -> Result<Option<Raw>, TraceError> {
        let Some(Reverse((_, i))) = self.heads.pop() else {
            return Ok(None);
        };
        let raw = self.next[i].take().expect("a head has its event");
        self.refill(i)?;
        Ok(Some(raw))
    }
}

fn flags(cat: u32) -> Flags {
    Flags {
        write: cat & TC_WRITE != 0,
        flush: cat & TC_FLUSH != 0,
        fua: cat & TC_FUA != 0,
        discard: cat & TC_DISCARD != 0,
    }
}

impl BlkSource for Blktrace {
    fn next_blk(&mut self) -> Result<Option<BlkEvent>, TraceError> {
        while let Some(raw) = self.next_raw()? {
            let (cat, what) = (raw.action >> 16, raw.action & 0xffff);
            let pdu = if what & TA_CGROUP != 0 && raw.pdu.len() >= 8 {
                &raw.pdu[8..]
            } else {
                &raw.pdu[..]
            };
            let event = |kind| BlkEvent {
                time_ns: raw.time,
                dev: raw.device,
                kind,
                sector: raw.sector,
                bytes: u64::from(raw.bytes),
                pid: raw.pid,
                error: raw.error != 0,
            };
            if cat & TC_NOTIFY != 0 {
                match what & 0xff {
                    TN_PROCESS => {
                        let end = pdu.iter().position(|&c| c == 0).unwrap_or(pdu.len());
                        let name = String::from_utf8_lossy(&pdu[..end]).into_owned();
                        return Ok(Some(event(Kind::Process(name))));
                    }
                    TN_TIMESTAMP if pdu.len() >= 8 && self.clock.is_none() => {
                        let sec = u32::from_ne_bytes(pdu[0..4].try_into().expect("4 bytes"));
                        let nsec = u32::from_ne_bytes(pdu[4..8].try_into().expect("4 bytes"));
                        self.clock =
                            Some((u64::from(sec) * 1_000_000_000 + u64::from(nsec), raw.time));
                    }
                    _ => {}
                }
                continue;
            }
            match what & 0xff {
                TA_QUEUE => {
                    check_queued(flags(cat), raw.sector, u64::from(raw.bytes)).map_err(|why| {
                        let name = self.files[raw.file].name.as_deref();
                        event_error(name, raw.event, raw.at, why)
                    })?;
                    return Ok(Some(event(Kind::Queue(flags(cat)))));
                }
                TA_COMPLETE => return Ok(Some(event(Kind::Complete(flags(cat))))),
                _ => {}
            }
        }
        Ok(None)
    }

    fn name(&self) -> &'static str {
        "blktrace"
    }

    fn notes(&self, notes: &mut Vec<String>) {
        notes.push(format!(
            "blktrace binary ({} per-CPU files merged by time): times in ns, sectors of 512 bytes",
            self.files.len()
        ));
    }

    fn unix_ns(&self, t: u64) -> Option<u64> {
        let (wall, at) = self.clock?;
        wall.checked_add(t)?.checked_sub(at)
    }
}

/// A blktrace recording as an [`Import`].
pub struct BlktraceImport(BlkImport<Blktrace>);

impl BlktraceImport {
    pub fn open(
        files: &[PathBuf],
        volume: Option<String>,
        path: String,
    ) -> Result<BlktraceImport, TraceError> {
        Ok(BlktraceImport(BlkImport::new(
            Blktrace::open(files, Path::new(&path))?,
            volume,
            path,
        )))
    }
}

impl Import for BlktraceImport {
    fn next_event(&mut self) -> Result<Option<super::Event>, TraceError> {
        self.0.next_event()
    }
    fn header(&self) -> Result<Header, TraceError> {
        self.0.header()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::testutil::*;
    use super::super::{Event, Format};
    use super::*;
    use crate::{Op, Record};

    /// One event as blktrace writes it (little-endian, or big-endian when `big`).
    pub fn event(
        time: u64,
        sector: u64,
        bytes: u32,
        action: u32,
        pid: u32,
        pdu: &[u8],
        big: bool,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        let put32 = |b: &mut Vec<u8>, v: u32| {
            b.extend(if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        put32(&mut b, MAGIC | VERSION);
        put32(&mut b, time as u32); // the sequence: any increasing number
        let put64 = |b: &mut Vec<u8>, v: u64| {
            b.extend(if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        put64(&mut b, time);
        put64(&mut b, sector);
        put32(&mut b, bytes);
        put32(&mut b, action);
        put32(&mut b, pid);
        put32(&mut b, 7 << 20);
        put32(&mut b, 0);
        b.extend(if big {
            0u16.to_be_bytes()
        } else {
            0u16.to_le_bytes()
        });
        b.extend(if big {
            (pdu.len() as u16).to_be_bytes()
        } else {
            (pdu.len() as u16).to_le_bytes()
        });
        b.extend_from_slice(pdu);
        b
    }

    const Q: u32 = TA_QUEUE | (1 << 4) << 16;
    const C: u32 = TA_COMPLETE | (1 << 7) << 16;
    const W: u32 = TC_WRITE << 16;

    #[test]
    fn per_cpu_files_are_merged_by_time() {
        let d = tempfile::tempdir().unwrap();
        let mut comm = b"dd".to_vec();
        comm.resize(16, 0);
        let cpu0 = [
            event(1_000, 0, 0, TC_NOTIFY << 16 | TN_PROCESS, 42, &comm, false),
            event(1_000, 8, 4096, Q | W | TC_FUA << 16, 42, &[], false),
            event(9_000, 16, 4096, Q, 42, &[], false),
        ]
        .concat();
        let mut cg = 5u64.to_le_bytes().to_vec();
        cg.extend_from_slice(&[0; 8]);
        let cpu1 = [
            event(
                3_000,
                0,
                0,
                TC_NOTIFY << 16 | TN_PROCESS | TA_CGROUP,
                43,
                &[&[9; 8], b"kw".as_slice(), &[0; 14]].concat(),
                false,
            ),
            event(5_000, 8, 4096, C | W, 0, &[], false),
            event(
                6_000,
                0,
                0,
                (TC_FLUSH | TC_WRITE) << 16 | TA_QUEUE,
                43,
                &cg,
                false,
            ),
            event(
                7_000,
                0,
                0,
                (TC_FLUSH | TC_WRITE) << 16 | TA_COMPLETE,
                0,
                &[],
                false,
            ),
        ]
        .concat();
        std::fs::write(d.path().join("sda.blktrace.0"), cpu0).unwrap();
        std::fs::write(d.path().join("sda.blktrace.1"), cpu1).unwrap();
        let (ev, h) = import_path(Format::Blktrace, &d.path().join("sda"), None).unwrap();
        let r = records(&ev);
        assert_eq!(
            r[0],
            Record {
                fua: true,
                pid: Some(42),
                service_ns: Some(4_000),
                ..Record::new(0, Op::Write, 4096, 4096)
            }
        );
        assert_eq!(
            r[1],
            Record {
                pid: Some(43),
                service_ns: Some(1_000),
                ..Record::new(5_000, Op::Flush, 0, 0)
            }
        );
        assert_eq!(
            r[2],
            Record {
                pid: Some(42),
                ..Record::new(8_000, Op::Read, 8192, 4096)
            }
        );
        assert!(ev.contains(&Event::Process {
            pid: 43,
            name: "kw".into()
        }));
        assert!(ev.contains(&Event::Process {
            pid: 42,
            name: "dd".into()
        }));
        assert!(
            h.notes.iter().any(|n| n.contains("2 per-CPU files")),
            "{:?}",
            h.notes
        );
        assert!(h.notes.iter().any(|n| n == "volume 7,0"), "{:?}", h.notes);
        // One file of the set names the set.
        let (ev1, _) =
            import_path(Format::Blktrace, &d.path().join("sda.blktrace.1"), None).unwrap();
        assert_eq!(ev1, ev);
    }

    /// blkparse (Debian's blktrace package) reads the events this test writes as the
    /// importer does: the layout of `struct blk_io_trace` is checked against the tool.
    #[test]
    fn blkparse_reads_the_same_records_from_these_files() {
        let d = tempfile::tempdir().unwrap();
        let mut comm = b"fio".to_vec();
        comm.resize(16, 0);
        let fl = (TC_FLUSH | TC_WRITE) << 16;
        let events = [
            event(100, 0, 0, TC_NOTIFY << 16 | TN_PROCESS, 42, &comm, false),
            event(1_000, 2048, 8192, Q | W | TC_FUA << 16, 42, &[], false),
            event(2_000, 64, 4096, Q, 42, &[], false),
            event(2_500, 0, 0, fl | TA_QUEUE, 42, &[], false),
            event(
                3_000,
                4096,
                1 << 20,
                Q | (TC_DISCARD | TC_WRITE) << 16,
                42,
                &[],
                false,
            ),
            event(4_000, 2048, 8192, C | W | TC_FUA << 16, 0, &[], false),
            event(5_000, 64, 4096, C, 0, &[], false),
            event(6_000, 0, 0, fl | TA_COMPLETE, 0, &[], false),
            event(
                7_000,
                4096,
                1 << 20,
                C | (TC_DISCARD | TC_WRITE) << 16,
                0,
                &[],
                false,
            ),
        ];
        std::fs::write(d.path().join("loop0.blktrace.0"), events.concat()).unwrap();
        let text = std::process::Command::new("blkparse")
            .args(["-q", "-i", "loop0"])
            .current_dir(d.path())
            .output()
            .expect("blkparse is installed (scripts/test installs Debian's blktrace)");
        assert!(
            text.status.success(),
            "{}",
            String::from_utf8_lossy(&text.stderr)
        );
        let text = String::from_utf8(text.stdout).unwrap();
        let binary = records(
            &import_path(Format::Blktrace, &d.path().join("loop0"), None)
                .unwrap()
                .0,
        );
        let parsed = records(
            &import_text(Format::Blkparse, &text, None)
                .unwrap_or_else(|e| panic!("{e}: {text}"))
                .0,
        );
        assert_eq!(binary, parsed, "blkparse printed:\n{text}");
        let ops: Vec<(Op, bool, u64, u64)> = binary
            .iter()
            .map(|r| (r.op, r.fua, r.offset_bytes, r.len_bytes))
            .collect();
        assert_eq!(
            ops,
            [
                (Op::Write, true, 2048 * 512, 8192),
                (Op::Read, false, 64 * 512, 4096),
                (Op::Flush, false, 0, 0),
                (Op::Discard, false, 4096 * 512, 1 << 20),
            ]
        );
        assert!(
            binary.iter().all(|r| r.service_ns == Some(3_000)
                || r.service_ns == Some(3_500)
                || r.service_ns == Some(4_000)),
            "{binary:?}"
        );
    }

    #[test]
    fn big_endian_files_read_the_same() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.blktrace.0");
        std::fs::write(
            &p,
            [
                event(10, 2, 512, Q, 1, &[], true),
                event(30, 2, 512, C, 0, &[], true),
            ]
            .concat(),
        )
        .unwrap();
        let r = records(&import_path(Format::Blktrace, &p, None).unwrap().0);
        assert_eq!(
            r,
            [Record {
                pid: Some(1),
                service_ns: Some(20),
                ..Record::new(0, Op::Read, 1024, 512)
            }]
        );
    }

    #[test]
    fn truncated_and_foreign_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.blktrace.0");
        let mut b = [
            event(10, 2, 512, Q, 1, &[], false),
            event(30, 2, 512, C, 0, &[], false),
        ]
        .concat();
        b.truncate(70);
        std::fs::write(&p, &b).unwrap();
        let e = import_path(Format::Blktrace, &p, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("event 2 (byte offset 48): truncated"), "{e}");
        std::fs::write(
            &p,
            "8,0 0 1 0.1 1 Q R 0 + 8 [a] and more text to fill 48 bytes\n",
        )
        .unwrap();
        let e = import_path(Format::Blktrace, &p, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("event 1 (byte offset 0): not a blktrace file"),
            "{e}"
        );
    }
}
