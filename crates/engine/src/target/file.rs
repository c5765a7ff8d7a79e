//! Regular-file targets: drivelab's own test files and files users point at.
//!
//! A test file drivelab creates carries a marker: the extended attribute `user.drivelab`,
//! or a hidden sidecar file `.NAME.drivelab` where the filesystem has no user xattrs. The
//! marker records the file's identity — device, inode, size and modification time —
//! as drivelab last left it, and a file counts as drivelab's only while all four still
//! match. So a sidecar left behind by a deleted file, or a user's data copied over a kept
//! test file (which keeps the inode and its xattr), is not mistaken for a test file: it
//! is only read unless `--overwrite`. A test file is removed only while the path still
//! names the very file drivelab created.
//!
//! A run that is about to write marks the file `writing` with a new random token: a
//! killed run leaves that marker, and the file is taken over by the next writing run
//! only while the token, device, inode and size still match and every sector of it is
//! as drivelab leaves it (stamped with its own offset, or never written: zeros), with
//! at least one written. A user's file copied over it (same inode, same xattr) fails
//! the content check and is the user's: only read, never removed.

use std::fs::{File, OpenOptions as FsOpen};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{
    fs_name, open_error, Handle, OpenOptions, Target, TargetError, TargetInfo, TargetKind,
};

/// The default test file, in the current directory (as CrystalDiskMark does).
pub const TEST_FILE_NAME: &str = "drivelab.test";
/// Size of a test file when none is asked for.
pub const TEST_FILE_SIZE: u64 = 1 << 30;

const XATTR: &str = "user.drivelab";
const MARK_PREFIX: &str = "drivelab-test-file v2";

/// Where the marker of the test file `path` goes when its filesystem has no user
/// xattrs (`.NAME.drivelab` beside it).
pub fn marker_path(path: &Path) -> PathBuf {
    sidecar(path)
}

fn sidecar(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.drivelab"))
}

fn open_flags(write: bool, direct: bool) -> FsOpen {
    let mut o = FsOpen::new();
    o.read(true).write(write);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o
}

/// What a marker says about its file.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Marker {
    pub filled: bool,
    /// A drivelab run was writing the file when the marker was last written: size and
    /// time may have moved since (a killed run), so only device and inode are compared.
    writing: bool,
    /// Drawn at random when a run marks the file `writing`: a marker copied from another
    /// file, or left by an older drivelab, does not carry this file's.
    token: Option<u64>,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl Marker {
    /// The marker for `f` as it is now.
    fn of(f: &File, filled: bool, writing: bool) -> std::io::Result<Marker> {
        let m = f.metadata()?;
        Ok(Marker {
            filled,
            writing,
            token: writing.then(random_token),
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        })
    }

    fn encode(&self) -> String {
        let token = self
            .token
            .map(|t| format!(" token={t:016x}"))
            .unwrap_or_default();
        format!(
            "{MARK_PREFIX} filled={} writing={} dev={} ino={} size={} mtime_ns={}{token}",
            self.filled as u8, self.writing as u8, self.dev, self.ino, self.size, self.mtime_ns
        )
    }

    fn decode(s: &str) -> Option<Marker> {
        let rest = s.trim().strip_prefix(MARK_PREFIX)?;
        let field = |k: &str| {
            rest.split_whitespace()
                .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
        };
        Some(Marker {
            filled: field("filled")? == "1",
            writing: field("writing")? == "1",
            token: field("token").and_then(|t| u64::from_str_radix(t, 16).ok()),
            dev: field("dev")?.parse().ok()?,
            ino: field("ino")?.parse().ok()?,
            size: field("size")?.parse().ok()?,
            mtime_ns: field("mtime_ns")?.parse().ok()?,
        })
    }

    /// Whether the marker describes `f` as it is now (see `writing`).
    fn matches(&self, f: &File) -> bool {
        Marker::of(f, self.filled, false).is_ok_and(|now| {
            let same = (now.dev, now.ino, now.size) == (self.dev, self.ino, self.size);
            if self.writing {
                // drivelab's runs never change a test file's size (it is allocated
                // whole): a different size is someone else's data. Data of the same
                // size copied over the file keeps device, inode and marker, so the
                // content itself, all of it, must be drivelab's.
                same && self.token.is_some() && written_whole_by_drivelab(f, now.size)
            } else {
                same && now.mtime_ns == self.mtime_ns
            }
        })
    }
}

/// A random 64-bit token no other marker (nor another process's) carries: the hash of
/// a randomly keyed hasher over the time and the process id.
pub fn random_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// Whether every 512-byte sector of `f` is as drivelab's writes or its allocation leave
/// it (stamped with its own offset by `random` data, or zeros never written), at least
/// one of them written: read whole, so that no user's data between samples, and no
/// file of zeros or of one byte value, passes. A read error counts against.
fn written_whole_by_drivelab(f: &File, size: u64) -> bool {
    use std::os::unix::fs::FileExt;
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK as usize];
    let mut stamped = false;
    let mut at = 0;
    while at < size {
        let n = CHUNK.min(size - at) as usize;
        if f.read_exact_at(&mut buf[..n], at).is_err() {
            return false;
        }
        for (i, sector) in buf[..n].chunks(512).enumerate() {
            let offset = at + i as u64 * 512;
            if sector.iter().all(|&b| b == 0) {
                continue;
            }
            if sector.len() < 512 || crate::data::stamped_offset(sector) != offset {
                return false;
            }
            stamped = true;
        }
        at += n as u64;
    }
    stamped
}

/// What the marker of a file says.
pub(super) enum MarkerState {
    /// No drivelab marker: a user's file.
    Absent,
    /// A marker that no longer describes the file: it changed since drivelab left it.
    Stale,
    Ours(Marker),
}

/// The marker of `f` (xattr, else the sidecar next to `path`), checked against the file.
pub(super) fn marker_state(f: &File, path: &Path) -> MarkerState {
    match read_marker(f, path) {
        None => MarkerState::Absent,
        Some(m) if m.matches(f) => MarkerState::Ours(m),
        Some(_) => MarkerState::Stale,
    }
}

fn read_marker(f: &File, path: &Path) -> Option<Marker> {
    let text = crate::sys::get_xattr(f, XATTR)
        .map(|v| String::from_utf8_lossy(&v).into_owned())
        .or_else(|| {
            let mut s = String::new();
            let mut side = FsOpen::new();
            side.read(true).custom_flags(libc::O_NOFOLLOW);
            side.open(sidecar(path))
                .and_then(|mut h| std::io::Read::read_to_string(&mut h, &mut s))
                .ok()
                .map(|_| s)
        })?;
    Marker::decode(&text)
}

/// Write (or refresh) the marker of `f`: the xattr, else the sidecar, which is never
/// followed through a symlink.
pub(super) fn write_marker(
    f: &File,
    path: &Path,
    filled: bool,
    writing: bool,
) -> std::io::Result<()> {
    let text = Marker::of(f, filled, writing)?.encode();
    match crate::sys::set_xattr(f, XATTR, text.as_bytes()) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::EPERM)) => {
            let mut o = FsOpen::new();
            o.write(true)
                .create(true)
                .truncate(true)
                .custom_flags(libc::O_NOFOLLOW);
            o.open(sidecar(path))?.write_all(text.as_bytes())
        }
        Err(e) => Err(e),
    }
}

fn info_for(path: &Path, f: &File, created: bool) -> TargetInfo {
    let md = f.metadata().ok();
    let size = md.as_ref().map_or(0, |m| m.len());
    // What direct I/O on the file must be aligned to: as the filesystem reports it, else
    // the logical block size of the device under it, else 512 bytes.
    let sector = crate::sys::dio_offset_align(f)
        .or_else(|| {
            md.as_ref()
                .and_then(|m| super::block::logical_block_size(m.dev()))
        })
        .unwrap_or(512);
    let mut info = TargetInfo::bare(TargetKind::File, path.display().to_string(), size, sector);
    info.physical_sector_bytes = md.as_ref().map_or(4096, |m| m.blksize() as u32);
    if let Ok(magic) = crate::sys::fs_magic(path) {
        let (name, mem) = fs_name(magic);
        info.filesystem = Some(name.to_string());
        if mem {
            info.in_memory = Some(format!("the file is on {name}, which lives in memory"));
        } else if let Some(why) = md
            .as_ref()
            .and_then(|m| super::block::memory_backing_of(m.dev()))
        {
            info.in_memory = Some(format!("the file is on {name} on a disk in memory: {why}"));
        }
    }
    info.device = md.as_ref().and_then(|m| {
        super::identity::identify(
            Path::new("/sys"),
            libc::major(m.dev()),
            libc::minor(m.dev()),
        )
    });
    info.created_by_drivelab = created;
    info
}

fn same_file(a: &File, b: &File) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Create a new test file of `opts.create_size` bytes with the marker.
pub(super) fn create(path: &Path, opts: &OpenOptions) -> Result<Target, TargetError> {
    // Created without O_DIRECT (a filesystem without it would otherwise leave an empty
    // file behind), marked, then reopened for the run's I/O.
    let mut o = open_flags(true, false);
    o.create_new(true);
    let made = o.open(path).map_err(|e| open_error(path, &e, false))?;
    // Another run that finds the file a moment later must find it locked.
    lock_for_run(&made, path)?;
    let fail = |msg: String| {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(sidecar(path));
        TargetError(msg)
    };
    if let Err(e) = crate::sys::fallocate(&made, opts.create_size) {
        if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            made.set_len(opts.create_size).map_err(|e| {
                fail(format!(
                    "target {}: cannot size the test file: {e}",
                    path.display()
                ))
            })?;
        } else {
            return Err(fail(format!(
                "target {}: cannot reserve {} for the test file: {e}",
                path.display(),
                crate::size::human_bytes(opts.create_size)
            )));
        }
    }
    let (f, lock) = if opts.direct {
        let f = open_flags(true, true)
            .open(path)
            .map_err(|e| fail(open_error(path, &e, true).0))?;
        if !same_file(&made, &f) {
            return Err(TargetError(format!(
                "target {}: the file changed while drivelab created it",
                path.display()
            )));
        }
        (f, Some(made))
    } else {
        (made, None)
    };
    write_marker(&f, path, false, false).map_err(|e| {
        fail(format!(
            "target {}: cannot mark the test file: {e}",
            path.display()
        ))
    })?;
    let info = info_for(path, &f, true);
    Ok(Target {
        created_path: Some(path.to_path_buf()),
        lock,
        ..Target::new(info, Handle::File(f))
    })
}

/// Lock `f` (the file at `path`) for this run alone: another drivelab run on the same
/// file, started in the same directory by mistake, would share the device with this
/// one and both would report contaminated numbers.
fn lock_for_run(f: &File, path: &Path) -> Result<(), TargetError> {
    match f.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(TargetError(format!(
            "target {} is in use by another drivelab run; wait for it to finish, or give another file",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(TargetError(format!(
            "target {}: cannot lock it: {e}",
            path.display()
        ))),
    }
}

/// Open an existing regular file; writes only to drivelab's own test file (its marker
/// still describing it) or with `overwrite`.
pub(super) fn open_existing(path: &Path, opts: &OpenOptions) -> Result<Target, TargetError> {
    let probe = File::open(path).map_err(|e| open_error(path, &e, false))?;
    lock_for_run(&probe, path)?;
    if opts.write {
        // Writing it would write under a mounted file system, --overwrite or not.
        let md = probe.metadata().map_err(|e| open_error(path, &e, false))?;
        if let Some(why) = super::block::backed_device_in_use(&md) {
            return Err(TargetError(format!(
                "refusing to write to {}: {why}",
                path.display()
            )));
        }
    }
    let state = marker_state(&probe, path);
    let mark = match &state {
        MarkerState::Ours(m) => Some(m.clone()),
        _ => None,
    };
    let ours = mark.is_some();
    if opts.write && !ours && !opts.overwrite {
        let why = match state {
            MarkerState::Stale => "was changed since drivelab last wrote it",
            _ => "was not created by drivelab",
        };
        return Err(TargetError(format!(
            "target {} {why} and this run writes to it: drivelab writes only to its own test files; pass --overwrite to let it write to this one (its contents will be lost)",
            path.display()
        )));
    }
    // A test file a killed run left behind (its marker still says a run was writing
    // it, and no run holds its lock): a writing run takes it over and removes it at
    // the end like one it created, unless `--keep`. A run that only reads never writes
    // nor removes it: for it, the file is not drivelab's.
    let left_by_a_killed_run = mark.as_ref().is_some_and(|m| m.writing);
    let ours = ours && (opts.write || !left_by_a_killed_run);
    let mark = mark.filter(|_| ours);
    // drivelab's own test files open read-write, so they can be filled before reads.
    let f = open_flags(opts.write || ours, opts.direct)
        .open(path)
        .map_err(|e| open_error(path, &e, opts.direct))?;
    if !same_file(&probe, &f) {
        return Err(TargetError(format!(
            "target {}: the file changed while drivelab opened it",
            path.display()
        )));
    }
    let info = info_for(path, &f, ours);
    if info.span_bytes() == 0 {
        return Err(TargetError(format!("target {} is empty", path.display())));
    }
    let left_by_a_killed_run = left_by_a_killed_run && ours;
    Ok(Target {
        created_path: left_by_a_killed_run.then(|| path.to_path_buf()),
        adopted: left_by_a_killed_run,
        filled: mark.is_some_and(|m| m.filled),
        lock: Some(probe),
        ..Target::new(info, Handle::File(f))
    })
}

/// A test file drivelab created, as it can be removed later, from anywhere (the handler
/// of a second Ctrl-C included): its path and the identity it had when it was noted.
#[derive(Clone, Debug)]
pub struct CreatedFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl CreatedFile {
    pub(super) fn of(f: &File, path: &Path) -> std::io::Result<CreatedFile> {
        let m = f.metadata()?;
        Ok(CreatedFile {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the file and its sidecar marker, but only while the path still names the
    /// file that was created: anything moved into its place is left alone. A file that
    /// is gone already (deleted during the run) is not an error.
    pub fn remove(&self) -> std::io::Result<()> {
        let there = match std::fs::symlink_metadata(&self.path) {
            // Removed by someone else already: nothing left to do.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(sidecar(&self.path));
                return Ok(());
            }
            other => other?,
        };
        if !there.file_type().is_file() || there.dev() != self.dev || there.ino() != self.ino {
            return Err(std::io::Error::other(format!(
                "{} is no longer the test file drivelab created; it was left alone",
                self.path.display()
            )));
        }
        let _ = std::fs::remove_file(sidecar(&self.path));
        std::fs::remove_file(&self.path)
    }
}

/// Remove the test file at `path` and its sidecar, but only while `path` still names
/// `f` itself (a file moved into its place is left alone).
pub(super) fn remove(f: &File, path: &Path) -> std::io::Result<()> {
    CreatedFile::of(f, path)?.remove()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_go_stale_when_the_file_changes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        let f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
            .unwrap();
        f.set_len(4096).unwrap();
        let m = Marker::of(&f, true, false).unwrap();
        assert_eq!(Marker::decode(&m.encode()), Some(m.clone()));
        assert!(m.matches(&f));
        let w = Marker::of(&f, true, true).unwrap();
        assert_eq!(
            Marker::decode("test-file"),
            None,
            "old markers are not trusted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A sector as drivelab's random data leaves it: stamped with its own offset.
        let mut sector = [0x5Au8; 512];
        sector[..8].copy_from_slice(&(1u64 | 7 << 40).to_le_bytes());
        std::os::unix::fs::FileExt::write_at(&f, &sector, 512).unwrap();
        assert!(!m.matches(&f), "a write makes a resting marker stale");
        assert!(
            w.matches(&f),
            "while a run writes, device, inode, size and drivelab-like content count"
        );
        std::os::unix::fs::FileExt::write_at(&f, b"user data", 0).unwrap();
        assert!(
            !w.matches(&f),
            "a crashed run's marker does not make a user's content drivelab's"
        );
        // Nor zeros alone, one byte value throughout, or user data between samples.
        for content in [vec![0u8; 4096], vec![0x5A; 4096]] {
            std::os::unix::fs::FileExt::write_at(&f, &content, 0).unwrap();
            assert!(!w.matches(&f));
        }
        std::os::unix::fs::FileExt::write_at(&f, &[0u8; 4096], 0).unwrap();
        std::os::unix::fs::FileExt::write_at(&f, &sector, 512).unwrap();
        assert!(w.matches(&f));
        std::os::unix::fs::FileExt::write_at(&f, b"between", 2048 + 17).unwrap();
        assert!(!w.matches(&f));
        let old = Marker {
            token: None,
            ..w.clone()
        };
        assert!(!old.matches(&f), "a marker without a token is not trusted");
    }
}
