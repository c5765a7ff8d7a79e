//! Writing a file so that a crash or a kill leaves the old file or the new one, never a
//! half-written or empty one: the bytes go to a temporary file in the same directory,
//! are flushed to the disk, and the temporary file is renamed over the name.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically (temporary file in `path`'s directory, fsync,
/// rename, fsync of the directory). A symbolic link at `path` is followed, so the file
/// it points to is the one replaced.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut p = begin(path)?;
    p.file().write_all(bytes)?;
    p.commit()
}

/// A file being written whole or not at all, for outputs too large to hold in memory:
/// the bytes go to a temporary file in the same directory, [`Pending::commit`] puts it in
/// place as [`write_file`] does, and a `Pending` dropped without it leaves nothing.
pub struct Pending {
    tmp: tempfile::NamedTempFile,
    path: std::path::PathBuf,
    dir: std::path::PathBuf,
}

/// Start writing `path` (see [`Pending`]).
pub fn begin(path: &Path) -> std::io::Result<Pending> {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.as_deref().unwrap_or("out")))
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    Ok(Pending { tmp, path, dir })
}

impl Pending {
    /// The temporary file the output is written to.
    pub fn file(&mut self) -> &mut std::fs::File {
        self.tmp.as_file_mut()
    }

    /// Where the temporary file is (for a process that must remove it on its way out).
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Flush the file to the disk and rename it over the path.
    pub fn commit(self) -> std::io::Result<()> {
        let Pending { tmp, path, dir } = self;
        tmp.as_file().sync_all()?;
        // A replaced file keeps its permissions: the new one takes them over.
        if let Ok(m) = std::fs::metadata(&path) {
            let _ = tmp.as_file().set_permissions(m.permissions());
        } else {
            use std::os::unix::fs::PermissionsExt;
            // tempfile makes 0600 files; an output is as readable as any new file (umask).
            let _ = tmp
                .as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o666 & !umask()));
        }
        tmp.persist(&path).map_err(|e| e.error)?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// The process's file-mode creation mask, read from /proc (no system call changes it).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.json");
        std::fs::write(&p, "old").unwrap();
        write_file(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_pending_file_dropped_uncommitted_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.dltrace");
        let mut w = begin(&p).unwrap();
        w.file().write_all(b"half").unwrap();
        drop(w);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        let mut w = begin(&p).unwrap();
        w.file().write_all(b"whole").unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "whole");
    }

    #[test]
    fn follows_a_symbolic_link() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        let link = d.path().join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_new_file_is_readable_by_others_as_umask_allows() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("new.csv");
        write_file(&p, b"x").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }
}
