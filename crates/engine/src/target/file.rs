//! Regular-file targets: drivelab's own test files and files users point at.
//!
//! A test file drivelab creates carries a marker (the extended attribute `user.drivelab`,
//! or a hidden sidecar file `.NAME.drivelab` where the filesystem has no user xattrs).
//! Only a marked file is ever written without `--overwrite`.

use std::fs::{File, OpenOptions as FsOpen};
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
pub(super) const MARK_CREATED: &str = "test-file";
pub(super) const MARK_FILLED: &str = "test-file filled";

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

/// The marker of an open file, if any.
pub(super) fn marker(f: &File) -> Option<String> {
    crate::sys::get_xattr(f, XATTR).map(|v| String::from_utf8_lossy(&v).into_owned())
}

fn marker_at(f: &File, path: &Path) -> Option<String> {
    marker(f).or_else(|| {
        std::fs::read_to_string(sidecar(path))
            .ok()
            .map(|s| s.trim().to_string())
    })
}

/// Set the marker (best effort for updates; creation checks it).
pub(super) fn mark(f: &File, value: &str) {
    let _ = crate::sys::set_xattr(f, XATTR, value.as_bytes());
}

fn info_for(path: &Path, f: &File, created: bool) -> TargetInfo {
    let md = f.metadata().ok();
    let size = md.as_ref().map_or(0, |m| m.len());
    let mut info = TargetInfo::bare(TargetKind::File, path.display().to_string(), size, 512);
    info.physical_sector_bytes = md.map_or(4096, |m| m.blksize() as u32);
    if let Ok(magic) = crate::sys::fs_magic(path) {
        let (name, mem) = fs_name(magic);
        info.filesystem = Some(name.to_string());
        if mem {
            info.in_memory = Some(format!("the file is on {name}, which lives in memory"));
        }
    }
    info.created_by_drivelab = created;
    info
}

/// Create a new test file of `opts.create_size` bytes with the marker.
pub(super) fn create(
    path: &Path,
    opts: &OpenOptions,
    _default: bool,
) -> Result<Target, TargetError> {
    let mut o = open_flags(true, opts.direct);
    o.create_new(true);
    let f = o
        .open(path)
        .map_err(|e| open_error(path, &e, opts.direct))?;
    let fail = |msg: String| {
        let _ = std::fs::remove_file(path);
        TargetError(msg)
    };
    if let Err(e) = crate::sys::fallocate(&f, opts.create_size) {
        if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            f.set_len(opts.create_size).map_err(|e| {
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
    if crate::sys::set_xattr(&f, XATTR, MARK_CREATED.as_bytes()).is_err() {
        std::fs::write(sidecar(path), MARK_CREATED).map_err(|e| {
            fail(format!(
                "target {}: cannot mark the test file: {e}",
                path.display()
            ))
        })?;
    }
    let info = info_for(path, &f, true);
    Ok(Target {
        info,
        handle: Handle::File(f),
        created_path: Some(path.to_path_buf()),
        adopted: false,
        sensors: Vec::new(),
    })
}

/// Open an existing regular file; writes only to a marked file or with `overwrite`.
pub(super) fn open_existing(path: &Path, opts: &OpenOptions) -> Result<Target, TargetError> {
    let probe = File::open(path).map_err(|e| open_error(path, &e, false))?;
    let ours = marker_at(&probe, path).is_some();
    drop(probe);
    if opts.write && !ours && !opts.overwrite {
        return Err(TargetError(format!(
            "target {} was not created by drivelab, so it is only read; pass --overwrite to let drivelab write to it (its contents will be lost)",
            path.display()
        )));
    }
    // drivelab's own test files open read-write, so they can be filled before reads.
    let f = open_flags(opts.write || ours, opts.direct)
        .open(path)
        .map_err(|e| open_error(path, &e, opts.direct))?;
    let info = info_for(path, &f, ours);
    if info.capacity_bytes == 0 {
        return Err(TargetError(format!("target {} is empty", path.display())));
    }
    Ok(Target {
        info,
        handle: Handle::File(f),
        created_path: None,
        adopted: false,
        sensors: Vec::new(),
    })
}

/// Remove a test file and its sidecar marker.
pub(super) fn remove(path: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(sidecar(path));
    std::fs::remove_file(path)
}
