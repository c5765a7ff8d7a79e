//! Opening a file drivelab reads as input (a trace, a blktrace CPU file, a fio result or
//! log): only a regular file is read. A FIFO, a device (`/dev/zero` behind a symlink)
//! or a directory is refused at once with one line, never blocked on or read until
//! memory runs out. Every reader of such an input opens it through here.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a non-regular file is, in words.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Open `path` for reading, refused unless it is a regular file (symlinks followed).
/// Opened without blocking (`O_NONBLOCK`: opening a FIFO with no writer would wait
/// forever), then checked on the open file itself, so nothing can swap it in between.
/// The error names the path and what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file",
                crate::text::shortened(&path.display().to_string()),
                kind(t)
            ),
        ));
    }
    Ok(f)
}

/// The text of the regular file at `path` ([`open_regular`]), refused when it holds
/// more than `max_bytes` (a mistyped path to a huge file does not exhaust memory).
pub fn read_text(path: &Path, max_bytes: u64) -> io::Result<String> {
    use std::io::Read;
    let f = open_regular(path)?;
    let mut text = String::new();
    f.take(max_bytes + 1)
        .read_to_string(&mut text)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    if text.len() as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} holds more than {max_bytes} bytes", path.display()),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_opened() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = open_regular(&fifo).unwrap_err().to_string();
        assert!(e.contains("is a FIFO"), "{e}");
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = open_regular(&zero).unwrap_err().to_string();
        assert!(e.contains("character device"), "{e}");
        assert!(open_regular(d.path()).is_err());
        std::fs::write(d.path().join("f"), "x").unwrap();
        assert!(open_regular(&d.path().join("f")).is_ok());
    }
}
