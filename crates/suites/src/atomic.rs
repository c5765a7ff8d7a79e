//! Writing a file so that a crash or a kill leaves the old file or the new one, never a
//! half-written or empty one, and so that nothing planted at the name while drivelab
//! works (a symbolic link, a hard link, a renamed file, a swapped directory) is
//! followed or destroyed.
//!
//! A file is *claimed* first ([`claim`]): its directory is opened once, and the bytes go
//! to an unnamed temporary file made in that directory then (`O_TMPFILE`; where the file
//! system lacks it, a hidden `.NAME.*.tmp` file). Nothing is resolved by path again: at
//! [`Pending::commit`] the file is flushed, linked into the same directory handle and
//! renamed over the name (`renameat`), which replaces a symbolic or hard link planted
//! there (the link, never the file it leads to). A regular file that took the name's
//! place during the work is left alone, and the commit fails. A kill before the commit
//! leaves nothing (an unnamed file vanishes with the process).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Write `bytes` to `path` whole or not at all (see the module). A symbolic link at
/// `path` is replaced, not followed.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut p = claim(path)?;
    p.file().write_all(bytes)?;
    p.commit()
}

/// [`write_file`] into the directory `dir` already opened (a bundle's), under `name`.
pub fn write_in(dir: &Dir, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut p = dir.claim(OsStr::new(name))?;
    p.file().write_all(bytes)?;
    p.commit()
}

/// A directory opened once, into which files are claimed by name.
#[derive(Clone)]
pub struct Dir {
    fd: std::sync::Arc<OwnedFd>,
    path: PathBuf,
}

impl Dir {
    /// Open the directory `path` (following links in it now, once).
    pub fn open(path: &Path) -> std::io::Result<Dir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Dir {
            fd: std::sync::Arc::new(fd),
            path: path.to_path_buf(),
        })
    }

    /// Where the directory was when opened, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Claim the name `name` in this directory (see [`Pending`]).
    pub fn claim(&self, name: &OsStr) -> std::io::Result<Pending> {
        let was = entry(&self.fd, name)?;
        let (file, tmp_name) = temp_file(&self.fd, name)?;
        Ok(Pending {
            dir: self.clone(),
            name: name.to_os_string(),
            was,
            file,
            tmp_name,
        })
    }
}

/// What is at a name in a directory, not following a link: its identity and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    dev: u64,
    ino: u64,
    kind: FileType,
    links: u64,
    mode: u32,
}

fn entry(dir: &OwnedFd, name: &OsStr) -> std::io::Result<Option<Entry>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(Entry {
            dev: st.st_dev,
            ino: st.st_ino,
            kind: FileType::from_raw_mode(st.st_mode),
            links: st.st_nlink,
            mode: st.st_mode & 0o7777,
        })),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A new file in `dir` for the output `name`: unnamed where the file system allows it,
/// else a hidden name beside it (returned, to be renamed or removed). Made `0666` less
/// the umask, like any new file.
fn temp_file(dir: &OwnedFd, name: &OsStr) -> std::io::Result<(std::fs::File, Option<OsString>)> {
    let mode = Mode::from_raw_mode(0o666);
    match rustix::fs::openat(
        dir,
        ".",
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        mode,
    ) {
        Ok(fd) => return Ok((fd.into(), None)),
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR) => {}
        Err(e) => return Err(e.into()),
    }
    loop {
        let tmp = hidden_name(name);
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::RDWR;
        match rustix::fs::openat(dir, tmp.as_os_str(), flags | OFlags::CLOEXEC, mode) {
            Ok(fd) => return Ok((fd.into(), Some(tmp))),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// `.NAME.RANDOM.tmp`: a name no one else picks.
fn hidden_name(name: &OsStr) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(
        ".{:016x}.tmp",
        drivelab_engine::target::random_token()
    ));
    s
}

/// A file claimed and being written, whole or not at all: the bytes go to
/// [`Pending::file`]; [`Pending::commit`] puts it in place under the claimed name; a
/// `Pending` dropped without it leaves nothing.
pub struct Pending {
    dir: Dir,
    name: OsString,
    /// What was at the name when it was claimed.
    was: Option<Entry>,
    file: std::fs::File,
    /// The temporary file's name, when the file system made it give one.
    tmp_name: Option<OsString>,
}

/// Claim `path`: its directory is opened now, and the final name is never followed.
pub fn claim(path: &Path) -> std::io::Result<Pending> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("names no file"))?;
    Dir::open(dir)?.claim(name)
}

/// Start writing `path` (see [`Pending`]); the same as [`claim`].
pub fn begin(path: &Path) -> std::io::Result<Pending> {
    claim(path)
}

impl Pending {
    /// The temporary file the output is written to.
    pub fn file(&mut self) -> &mut std::fs::File {
        &mut self.file
    }

    /// The temporary file's name, if it has one (for a process that must remove it on
    /// its way out); an unnamed one goes with the process.
    pub fn path(&self) -> Option<PathBuf> {
        self.tmp_name.as_ref().map(|t| self.dir.path.join(t))
    }

    /// The claimed file's path, for messages.
    pub fn target(&self) -> PathBuf {
        self.dir.path.join(&self.name)
    }

    /// Flush the file to the disk and rename it over the claimed name.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.sync_all()?;
        let now = entry(&self.dir.fd, &self.name)?;
        if let Some(n) = now.filter(|n| Some(*n) != self.was) {
            // A link holds no data of its own: it is replaced. Anything else that took
            // the name's place meanwhile is someone's file, and stays.
            let link =
                n.kind == FileType::Symlink || (n.kind == FileType::RegularFile && n.links > 1);
            if !link {
                return Err(std::io::Error::other(
                    "another file took its place while drivelab worked; it was left as it is and nothing was written",
                ));
            }
        }
        // A replaced file keeps its permissions: the new one takes them over.
        if let Some(w) = self
            .was
            .filter(|w| Some(*w) == now && w.kind == FileType::RegularFile)
        {
            let _ = rustix::fs::fchmod(&self.file, Mode::from_raw_mode(w.mode));
        }
        let tmp = match self.tmp_name.clone() {
            Some(t) => t,
            None => self.link_in()?,
        };
        let renamed = rustix::fs::renameat(&*self.dir.fd, &tmp, &*self.dir.fd, &self.name);
        if let Err(e) = renamed {
            let _ = rustix::fs::unlinkat(&*self.dir.fd, &tmp, AtFlags::empty());
            return Err(e.into());
        }
        self.tmp_name = None;
        let _ = rustix::fs::fsync(&*self.dir.fd);
        Ok(())
    }

    /// Give the unnamed file a hidden name in the directory (linkat), returned.
    fn link_in(&mut self) -> std::io::Result<OsString> {
        let tmp = hidden_name(&self.name);
        let own = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&self.file)
        );
        let by_proc = rustix::fs::linkat(
            rustix::fs::CWD,
            own.as_str(),
            &*self.dir.fd,
            &tmp,
            AtFlags::SYMLINK_FOLLOW,
        );
        if by_proc.is_err() {
            // Without /proc: the file itself (needs CAP_DAC_READ_SEARCH).
            rustix::fs::linkat(
                self.file.as_fd(),
                "",
                &*self.dir.fd,
                &tmp,
                AtFlags::EMPTY_PATH,
            )?;
        }
        Ok(tmp)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(t) = &self.tmp_name {
            let _ = rustix::fs::unlinkat(&*self.dir.fd, t, AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.json");
        std::fs::write(&p, "old").unwrap();
        write_file(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(names(d.path()), ["out.json"]);
    }

    #[test]
    fn a_pending_file_dropped_uncommitted_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.dltrace");
        let mut w = begin(&p).unwrap();
        w.file().write_all(b"half").unwrap();
        drop(w);
        assert!(names(d.path()).is_empty());
        let mut w = begin(&p).unwrap();
        w.file().write_all(b"whole").unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "whole");
    }

    #[test]
    fn a_symbolic_link_planted_after_the_claim_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim.conf");
        std::fs::write(&victim, "precious").unwrap();
        let p = d.path().join("out.json");
        let mut w = claim(&p).unwrap();
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        w.file().write_all(b"result").unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&p).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "result");
    }

    #[test]
    fn a_hard_link_planted_keeps_its_file_a_file_moved_in_stays() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim.conf");
        std::fs::write(&victim, "precious").unwrap();
        let p = d.path().join("out.json");
        let w = claim(&p).unwrap();
        std::fs::hard_link(&victim, &p).unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_file(&p).unwrap();
        let w = claim(&p).unwrap();
        std::fs::rename(&victim, &p).unwrap();
        let e = w.commit().unwrap_err();
        assert!(e.to_string().contains("took its place"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious");
        assert_eq!(names(d.path()), ["out.json"]);
    }

    #[test]
    fn a_directory_swapped_for_a_link_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&sub).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let w = claim(&sub.join("r.json")).unwrap();
        std::fs::rename(&sub, d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &sub).unwrap();
        w.commit().unwrap();
        assert!(names(&elsewhere).is_empty());
        assert_eq!(names(&d.path().join("moved")), ["r.json"]);
    }

    #[test]
    fn a_new_file_is_readable_by_others_as_umask_allows_a_replaced_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("new.csv");
        write_file(&p, b"x").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .unwrap();
        let umask = u32::from_str_radix(umask.trim(), 8).unwrap();
        assert_eq!(mode, 0o666 & !umask);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&p, b"y").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
}
