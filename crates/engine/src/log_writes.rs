//! The on-disk format of the kernel's dm-log-writes target, and a replayer.
//!
//! dm-log-writes records every write that reached a device, in the order the device
//! completed it (after the flush that made it durable), onto a log device, with the
//! flush / FUA / discard flags of each write and user marks (`dmsetup message DEV 0 mark
//! NAME`). Replaying the log onto a fresh device up to a mark gives the device as it was
//! durable at that mark: the xfstests method of checking crash consistency.
//!
//! Layout (drivers/md/dm-log-writes.c, all little-endian): block 0 of the log holds
//! `log_write_super { magic u64, version u64, nr_entries u64, sectorsize u32 }`. Entries
//! follow from block 1, each one block of metadata `log_write_entry { sector u64,
//! nr_sectors u64, flags u64, data_len u64 }` (a mark's name right after it in the same
//! block), then — unless the entry is a discard — `nr_sectors` blocks of the written
//! data. `sector` and `nr_sectors` count blocks of `sectorsize` bytes.

use std::fmt;
use std::io::{Read, Seek, SeekFrom, Write};

/// `WRITE_LOG_MAGIC` of the kernel's dm-log-writes.
pub const MAGIC: u64 = 0x006a_7366_7773_6872;
/// `WRITE_LOG_VERSION` of the kernel's dm-log-writes.
pub const VERSION: u64 = 1;
/// `LOG_FLUSH_FLAG`: the entry is a flush (a cache flush request reached the device).
pub const FLAG_FLUSH: u64 = 1 << 0;
/// `LOG_FUA_FLAG`: the write was forced unit access.
pub const FLAG_FUA: u64 = 1 << 1;
/// `LOG_DISCARD_FLAG`: the entry discards its range (no data follows).
pub const FLAG_DISCARD: u64 = 1 << 2;
/// `LOG_MARK_FLAG`: the entry is a user mark; its name follows the entry.
pub const FLAG_MARK: u64 = 1 << 3;

/// Entry header size in bytes (four u64).
const ENTRY_BYTES: usize = 32;
/// Longest accepted sector size (the kernel uses the device's logical block size).
const MAX_SECTORSIZE: u32 = 64 * 1024;

/// The log's super block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Super {
    pub nr_entries: u64,
    pub sectorsize: u32,
}

/// One logged entry, without its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// First block written, in units of the log's sector size.
    pub sector: u64,
    /// Blocks written (or discarded).
    pub nr_sectors: u64,
    /// The raw `LOG_*_FLAG` bits.
    pub flags: u64,
    /// The mark's name when `flags` has [`FLAG_MARK`].
    pub mark: Option<String>,
    /// Byte offset of the entry's data in the log (valid when `nr_sectors > 0` and not a discard).
    pub data_offset_bytes: u64,
}

impl Entry {
    pub fn is_flush(&self) -> bool {
        self.flags & FLAG_FLUSH != 0
    }
    pub fn is_fua(&self) -> bool {
        self.flags & FLAG_FUA != 0
    }
    pub fn is_discard(&self) -> bool {
        self.flags & FLAG_DISCARD != 0
    }
}

/// Why a log could not be read or replayed.
#[derive(Debug)]
pub enum LogError {
    Io(std::io::Error),
    BadMagic(u64),
    BadVersion(u64),
    BadSectorSize(u32),
    /// The log ends before entry `index` (of the super's `nr_entries`).
    Truncated {
        index: u64,
    },
    /// No mark of this name in the log.
    NoMark(String),
    /// The log has fewer FLUSH entries than this (flushes count from 1).
    NoFlush(u64),
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Io(e) => write!(f, "dm-log-writes log: {e}"),
            LogError::BadMagic(m) => write!(f, "not a dm-log-writes log (magic {m:#x})"),
            LogError::BadVersion(v) => {
                write!(f, "dm-log-writes log version {v} (only {VERSION} is known)")
            }
            LogError::BadSectorSize(s) => write!(
                f,
                "dm-log-writes log sector size {s} (a power of two, 512 to 65536)"
            ),
            LogError::Truncated { index } => {
                write!(f, "dm-log-writes log ends inside entry {index}")
            }
            LogError::NoMark(m) => write!(f, "dm-log-writes log has no mark {m:?}"),
            LogError::NoFlush(n) => write!(
                f,
                "dm-log-writes log has no flush number {n} (they count from 1)"
            ),
        }
    }
}

impl std::error::Error for LogError {}

impl From<std::io::Error> for LogError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            LogError::Truncated { index: 0 }
        } else {
            LogError::Io(e)
        }
    }
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Read and check the super block.
pub fn read_super<R: Read + Seek>(log: &mut R) -> Result<Super, LogError> {
    let mut b = [0u8; 28];
    log.seek(SeekFrom::Start(0))?;
    log.read_exact(&mut b)?;
    let magic = le64(&b, 0);
    if magic != MAGIC {
        return Err(LogError::BadMagic(magic));
    }
    let version = le64(&b, 8);
    if version != VERSION {
        return Err(LogError::BadVersion(version));
    }
    let sectorsize = u32::from_le_bytes(b[24..28].try_into().expect("4 bytes"));
    if !(512..=MAX_SECTORSIZE).contains(&sectorsize) || !sectorsize.is_power_of_two() {
        return Err(LogError::BadSectorSize(sectorsize));
    }
    Ok(Super {
        nr_entries: le64(&b, 16),
        sectorsize,
    })
}

/// All entries of the log, in order (data left in the log, see [`Entry::data_offset_bytes`]).
pub fn read_entries<R: Read + Seek>(log: &mut R) -> Result<(Super, Vec<Entry>), LogError> {
    let sup = read_super(log)?;
    let ss = u64::from(sup.sectorsize);
    let mut block = vec![0u8; sup.sectorsize as usize];
    let mut pos = ss;
    let mut entries = Vec::new();
    for index in 0..sup.nr_entries {
        log.seek(SeekFrom::Start(pos))?;
        log.read_exact(&mut block)
            .map_err(|e| match LogError::from(e) {
                LogError::Truncated { .. } => LogError::Truncated { index },
                other => other,
            })?;
        let (sector, nr_sectors, flags) = (le64(&block, 0), le64(&block, 8), le64(&block, 16));
        let data_len = le64(&block, 24);
        let mark = (flags & FLAG_MARK != 0).then(|| {
            let n = (data_len as usize).min(block.len() - ENTRY_BYTES);
            let name = &block[ENTRY_BYTES..ENTRY_BYTES + n];
            let end = name.iter().position(|&c| c == 0).unwrap_or(n);
            String::from_utf8_lossy(&name[..end]).into_owned()
        });
        pos += ss;
        let data_offset_bytes = pos;
        if flags & FLAG_DISCARD == 0 {
            pos = nr_sectors
                .checked_mul(ss)
                .and_then(|n| pos.checked_add(n))
                .ok_or(LogError::Truncated { index })?;
        }
        entries.push(Entry {
            sector,
            nr_sectors,
            flags,
            mark,
            data_offset_bytes,
        });
    }
    Ok((sup, entries))
}

/// How far to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Until {
    /// Every entry.
    End,
    /// Entries up to and including the mark of this name (its first occurrence).
    Mark(String),
    /// Entries up to and including the n-th FLUSH entry (from 1): the device as the
    /// n-th completed flush left it durable.
    Flush(u64),
}

/// What a replay did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Replayed {
    pub entries: u64,
    pub writes: u64,
    pub bytes_written: u64,
    pub discards: u64,
}

/// How many of `entries` a replay up to `until` applies (an error when the log has no
/// such mark or flush), so that a caller can refuse a bad request before writing.
pub fn stop_index(entries: &[Entry], until: &Until) -> Result<usize, LogError> {
    Ok(match until {
        Until::End => entries.len(),
        Until::Mark(name) => {
            entries
                .iter()
                .position(|e| e.mark.as_deref() == Some(name))
                .ok_or_else(|| LogError::NoMark(name.clone()))?
                + 1
        }
        Until::Flush(n) => {
            entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.is_flush())
                .nth(n.checked_sub(1).ok_or(LogError::NoFlush(0))? as usize)
                .ok_or(LogError::NoFlush(*n))?
                .0
                + 1
        }
    })
}

/// Replay the log's writes onto `dev` (a fresh device or file) up to `until`. Discarded
/// ranges are written with zeros (what a zeroing discard leaves; a test must not rely
/// on the content of discarded blocks). Returns counts of what was applied.
pub fn replay<R: Read + Seek, W: Write + Seek>(
    log: &mut R,
    dev: &mut W,
    until: &Until,
) -> Result<Replayed, LogError> {
    let (sup, entries) = read_entries(log)?;
    let stop = stop_index(&entries, until)?;
    let ss = u64::from(sup.sectorsize);
    let mut buf = vec![0u8; sup.sectorsize as usize];
    let mut done = Replayed::default();
    for e in &entries[..stop] {
        done.entries += 1;
        if e.nr_sectors == 0 || e.mark.is_some() {
            continue;
        }
        dev.seek(SeekFrom::Start(e.sector * ss))?;
        for i in 0..e.nr_sectors {
            if e.is_discard() {
                buf.fill(0);
            } else {
                log.seek(SeekFrom::Start(e.data_offset_bytes + i * ss))?;
                log.read_exact(&mut buf)?;
            }
            dev.write_all(&buf)?;
        }
        if e.is_discard() {
            done.discards += 1;
        } else {
            done.writes += 1;
            done.bytes_written += e.nr_sectors * ss;
        }
    }
    dev.flush()?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    const SS: usize = 512;

    /// A log image built by hand the way the kernel lays it out.
    struct Image(Vec<u8>, u64);

    impl Image {
        fn new() -> Self {
            Image(vec![0u8; SS], 0)
        }
        fn entry(&mut self, sector: u64, flags: u64, data: &[u8], mark: Option<&str>) {
            let mut b = vec![0u8; SS];
            let nr = (data.len() / SS) as u64;
            let data_len = mark.map_or(0, |m| m.len() as u64);
            let flags = if mark.is_some() {
                flags | FLAG_MARK
            } else {
                flags
            };
            for (i, v) in [sector, nr, flags, data_len].iter().enumerate() {
                b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            if let Some(m) = mark {
                b[32..32 + m.len()].copy_from_slice(m.as_bytes());
            }
            self.0.extend_from_slice(&b);
            self.0.extend_from_slice(data);
            self.1 += 1;
        }
        fn discard(&mut self, sector: u64, nr: u64) {
            let mut b = vec![0u8; SS];
            for (i, v) in [sector, nr, FLAG_DISCARD, 0].iter().enumerate() {
                b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            self.0.extend_from_slice(&b);
            self.1 += 1;
        }
        fn finish(mut self) -> Vec<u8> {
            self.0[0..8].copy_from_slice(&MAGIC.to_le_bytes());
            self.0[8..16].copy_from_slice(&VERSION.to_le_bytes());
            self.0[16..24].copy_from_slice(&self.1.to_le_bytes());
            self.0[24..28].copy_from_slice(&(SS as u32).to_le_bytes());
            self.0
        }
    }

    fn sample() -> Vec<u8> {
        let mut img = Image::new();
        img.entry(2, 0, &[0xaa; 2 * SS], None);
        img.entry(0, FLAG_FLUSH, &[], None);
        img.entry(0, 0, &[], Some("one"));
        img.entry(3, FLAG_FUA, &[0xbb; SS], None);
        img.discard(2, 1);
        img.entry(0, 0, &[], Some("two"));
        img.finish()
    }

    #[test]
    fn parses_entries_flags_and_marks() {
        let (sup, es) = read_entries(&mut Cursor::new(sample())).unwrap();
        assert_eq!(
            sup,
            Super {
                nr_entries: 6,
                sectorsize: 512
            }
        );
        assert_eq!(es.len(), 6);
        assert_eq!(
            (es[0].sector, es[0].nr_sectors, es[0].data_offset_bytes),
            (2, 2, 1024)
        );
        assert!(es[1].is_flush() && es[1].nr_sectors == 0);
        assert_eq!(es[2].mark.as_deref(), Some("one"));
        assert!(es[3].is_fua());
        assert_eq!(es[3].data_offset_bytes, (1 + 3 + 1 + 1 + 1) as u64 * 512);
        assert!(es[4].is_discard());
        assert_eq!(es[5].mark.as_deref(), Some("two"));
    }

    #[test]
    fn replays_up_to_each_mark() {
        let log = sample();
        let mut dev = Cursor::new(vec![0u8; 8 * SS]);
        let r = replay(&mut Cursor::new(&log), &mut dev, &Until::Mark("one".into())).unwrap();
        assert_eq!((r.entries, r.writes, r.bytes_written), (3, 1, 1024));
        let d = dev.get_ref();
        assert!(d[2 * SS..4 * SS].iter().all(|&b| b == 0xaa));
        assert!(d[4 * SS..].iter().all(|&b| b == 0));

        let mut dev = Cursor::new(vec![0u8; 8 * SS]);
        let r = replay(&mut Cursor::new(&log), &mut dev, &Until::Mark("two".into())).unwrap();
        assert_eq!((r.writes, r.discards), (2, 1));
        let d = dev.get_ref();
        assert!(
            d[2 * SS..3 * SS].iter().all(|&b| b == 0),
            "discarded block zeroed"
        );
        assert!(d[3 * SS..4 * SS].iter().all(|&b| b == 0xbb));
    }

    #[test]
    fn replays_up_to_the_nth_flush() {
        let mut img = Image::new();
        img.entry(1, 0, &[0xaa; SS], None);
        img.entry(0, FLAG_FLUSH, &[], None);
        img.entry(2, 0, &[0xbb; SS], None);
        img.entry(0, FLAG_FLUSH, &[], None);
        let log = img.finish();
        let mut dev = Cursor::new(vec![0u8; 4 * SS]);
        let r = replay(&mut Cursor::new(&log), &mut dev, &Until::Flush(1)).unwrap();
        assert_eq!((r.entries, r.writes), (2, 1));
        assert!(dev.get_ref()[2 * SS..3 * SS].iter().all(|&b| b == 0));
        let r = replay(&mut Cursor::new(&log), &mut dev, &Until::Flush(2)).unwrap();
        assert_eq!((r.entries, r.writes), (4, 2));
        assert!(dev.get_ref()[2 * SS..3 * SS].iter().all(|&b| b == 0xbb));
        for n in [0, 3] {
            let e = replay(&mut Cursor::new(&log), &mut dev, &Until::Flush(n));
            assert!(matches!(e, Err(LogError::NoFlush(m)) if m == n), "{e:?}");
        }
    }

    #[test]
    fn rejects_bad_logs() {
        let mut log = sample();
        assert!(matches!(
            replay(
                &mut Cursor::new(&log),
                &mut Cursor::new(Vec::new()),
                &Until::Mark("nope".into())
            ),
            Err(LogError::NoMark(_))
        ));
        let cut = log[..3 * SS].to_vec();
        assert!(matches!(
            read_entries(&mut Cursor::new(cut)),
            Err(LogError::Truncated { index: 1 })
        ));
        log[24..28].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            read_super(&mut Cursor::new(&log)),
            Err(LogError::BadSectorSize(1000))
        ));
        log[0] ^= 1;
        assert!(matches!(
            read_super(&mut Cursor::new(&log)),
            Err(LogError::BadMagic(_))
        ));
    }
}
