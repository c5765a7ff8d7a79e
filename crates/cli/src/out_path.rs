//! Output paths, checked before any work: a result that cannot be written is found out
//! in the first millisecond, not after a run of an hour.
//!
//! The check is the real thing: the file (or directory) is opened (or made) up front.
//! What was made for the purpose is removed again unless the command got as far as
//! writing it ([`Reserved::keep`]), so bad input still leaves nothing behind.

use std::path::{Path, PathBuf};

use crate::fail::Fail;

/// An output file or directory, made ready at the start of a command.
pub struct Reserved {
    path: PathBuf,
    /// Made by this check (so removed again if the command does not get to keep it).
    made: bool,
    dir: bool,
}

impl Reserved {
    /// A file the command will write: it must not be a directory, its directory must
    /// exist, and it must be writable there.
    pub fn file(p: &Path, flag: &str) -> Result<Reserved, Fail> {
        if p.is_dir() {
            return Err(Fail::usage(format!(
                "{flag} {}: is a directory; give a file name",
                p.display()
            )));
        }
        {
            use std::os::unix::fs::FileTypeExt;
            if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()) {
                return Err(Fail::usage(format!(
                    "{flag} {}: is a block device; give a file name (results are never written over a device)",
                    p.display()
                )));
            }
        }
        if let Some(d) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !d.is_dir() {
                return Err(Fail::usage(format!(
                    "{flag} {}: directory {} does not exist",
                    p.display(),
                    d.display()
                )));
            }
        }
        let existed = p.exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(p)
            .map_err(|e| Fail::usage(format!("{flag} {}: cannot write there: {e}", p.display())))?;
        Ok(Reserved {
            path: p.to_path_buf(),
            made: !existed,
            dir: false,
        })
    }

    /// A directory the command will write files into: made if missing (its parent must
    /// exist).
    pub fn dir(p: &Path, flag: &str) -> Result<Reserved, Fail> {
        if p.exists() && !p.is_dir() {
            return Err(Fail::usage(format!(
                "{flag} {}: exists and is not a directory; give a directory for the files",
                p.display()
            )));
        }
        if p.is_dir() {
            return Ok(Reserved {
                path: p.to_path_buf(),
                made: false,
                dir: true,
            });
        }
        std::fs::create_dir(p).map_err(|e| {
            Fail::usage(format!(
                "{flag} {}: cannot make the directory: {e}",
                p.display()
            ))
        })?;
        Ok(Reserved {
            path: p.to_path_buf(),
            made: true,
            dir: true,
        })
    }

    /// Refuse an output file that is the very file (or device) under test.
    pub fn not_the_target(self, target: &Path, flag: &str) -> Result<Reserved, Fail> {
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        if id(&self.path).is_some() && id(&self.path) == id(target) {
            return Err(Fail::usage(format!(
                "{flag} {}: is the target under test; give another file name",
                self.path.display()
            )));
        }
        Ok(self)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The command wrote its output here: leave it.
    pub fn keep(mut self) {
        self.made = false;
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if self.made {
            // Only what this check made, and a directory only while still empty.
            let _ = if self.dir {
                std::fs::remove_dir(&self.path)
            } else {
                std::fs::remove_file(&self.path)
            };
        }
    }
}
