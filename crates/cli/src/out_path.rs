//! Output paths, checked before any work: a result that cannot be written, or whose
//! writing would destroy something, is found out in the first millisecond, not after a
//! run of an hour.
//!
//! What an output may replace: nothing, or a file drivelab itself wrote of the same
//! [`Kind`] (a result document, a series CSV, a report, a database export, a chart, a
//! trace). Refused unless the user says `--force`: any other file, drivelab's of another
//! kind too (a report never replaces a recorded trace). Refused always, `--force` or not: a results
//! database (any SQLite file, or its journal or write-ahead log: drivelab never replaces
//! one with a document), a file in a result bundle's directory (the bundle is drivelab's
//! record of a run, not an output folder), something that is not a regular file (a FIFO
//! would hang the writer), the target under test, a command's input, and the other output
//! of the same command. Files are written whole or not at all
//! ([`drivelab_suites::atomic`]), so a kill leaves the old file or the new one, never an
//! empty document.
//!
//! `-` is standard output for a document (JSON, CSV, HTML), which then carries that
//! document alone; an output that cannot go there (a binary trace, a directory of
//! charts) refuses `-`. (A file named `-` is still `./-`.)

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::fail::Fail;

/// Where bundles go by default, under the current directory.
pub const RESULTS_DIR: &str = "drivelab-results";

/// What an output of drivelab holds, told from a file's first bytes: an output
/// replaces only an earlier output of its own kind (a report never replaces a recorded
/// trace, which cannot be captured again, nor a result document that `verify --from`
/// needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A result document (`io --json`, also `io --verify`'s).
    Result,
    /// The interval series CSV (`io --csv`).
    SeriesCsv,
    /// The HTML report (`report -o`).
    Report,
    /// The database export (`db export -o`).
    Export,
    /// A block I/O trace (`trace import -o`, `trace record -o`).
    Trace,
    /// A fio job file (`--emit-fio`).
    FioJob,
    /// An SVG chart (`report --svg`).
    Svg,
    /// A PNG chart (`report --png`).
    Png,
}

impl Kind {
    /// The kind of drivelab output a file that starts with `head` is, if it is one: it
    /// starts with drivelab's mark exactly as drivelab writes it. A mark anywhere else
    /// (a `package.json` naming "drivelab") does not count.
    pub fn of(head: &[u8]) -> Option<Kind> {
        let csv = format!("{},", crate::output::csv::HEADER_START);
        if is_result_document(head) {
            Some(Kind::Result)
        } else if is_export(head) {
            Some(Kind::Export)
        } else if head.starts_with(csv.as_bytes()) {
            Some(Kind::SeriesCsv)
        } else if head.starts_with(drivelab_trace::native::MAGIC.as_bytes()) {
            Some(Kind::Trace)
        } else if drivelab_suites::fio::is_own_job(head) {
            Some(Kind::FioJob)
        } else if head.starts_with(drivelab_report::html_start().as_bytes()) {
            Some(Kind::Report)
        } else if head.starts_with(drivelab_report::svg_start().as_bytes()) {
            Some(Kind::Svg)
        } else if drivelab_report::is_own_png(head) {
            Some(Kind::Png)
        } else {
            None
        }
    }

    /// What a file of this kind holds, for messages.
    pub fn what(self) -> &'static str {
        match self {
            Kind::Result => "a drivelab result document",
            Kind::SeriesCsv => "a drivelab series CSV",
            Kind::Report => "a drivelab HTML report",
            Kind::Export => "a drivelab database export",
            Kind::Trace => "a drivelab trace (a recording cannot be made again)",
            Kind::FioJob => "a drivelab fio job file",
            Kind::Svg => "a drivelab SVG chart",
            Kind::Png => "a drivelab PNG chart",
        }
    }

    /// What this output is, for messages (the thing that would replace the file).
    fn output(self) -> &'static str {
        match self {
            Kind::Result => "a result document",
            Kind::SeriesCsv => "a series CSV",
            Kind::Report => "a report",
            Kind::Export => "a database export",
            Kind::Trace => "a trace",
            Kind::FioJob => "a fio job file",
            Kind::Svg => "an SVG chart",
            Kind::Png => "a PNG chart",
        }
    }
}

/// Whether `head` starts as `db export` writes (pretty-printed, keys in order):
/// `{\n  "exported_by": "drivelab-store VERSION",\n  "format": "drivelab-db-export",\n`.
fn is_export(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"{\n  \"exported_by\": \"drivelab-store ".as_slice())
    else {
        return false;
    };
    let format = format!(
        "\",\n  \"format\": \"{}\",\n",
        drivelab_store::EXPORT_FORMAT
    );
    rest.iter()
        .take_while(|&&b| b != b'\n')
        .position(|&b| b == b'"')
        .is_some_and(|i| rest[i..].starts_with(format.as_bytes()))
}

/// Whether `head` starts as drivelab's result document does:
/// `{\n  "schema_version": N,\n  "tool": {\n    "name": "drivelab",\n`.
fn is_result_document(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"{\n  \"schema_version\": ".as_slice()) else {
        return false;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with(b",\n  \"tool\": {\n    \"name\": \"drivelab\",\n")
}

/// The first bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The first `n` bytes of the file at `p` (fewer if it is shorter or unreadable).
pub fn head(p: &Path, n: usize) -> Vec<u8> {
    let mut head = Vec::with_capacity(n);
    if let Ok(f) = std::fs::File::open(p) {
        let _ = f.take(n as u64).read_to_end(&mut head);
    }
    head
}

/// How far into a file the marks are looked for.
const HEAD_BYTES: usize = 4096;

/// An output file, claimed at the start of a command and written at its end; or
/// standard output (`-`).
pub struct OutFile {
    path: PathBuf,
    flag: &'static str,
    stdout: bool,
    /// The file claimed: its directory opened and its temporary file made at the
    /// claim, so that nothing put at the path during the run is followed at the write
    /// ([`drivelab_suites::atomic`]). Taken by the write.
    pending: std::sync::Mutex<Option<drivelab_suites::atomic::Pending>>,
}

/// Whether an output option's value `p` means standard output.
pub fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Whether an existing file may be replaced.
enum Replace {
    /// Yes: drivelab wrote it (or it is empty).
    Yes,
    /// Only with `--force`, for this reason.
    WithForce(String),
    /// Never, for this reason (said whole: no `--force` advised).
    Never(String),
}

/// Refuse an output path (`flag` names it) that no output may take, whatever it holds
/// and `--force` or not: a file in a result bundle's directory, a SQLite database's
/// journal or write-ahead log. Every output passes it: the documents (`--json`,
/// `--csv`, `-o`) through [`OutFile::claim`], and the outputs that are no document
/// (`--db`, `--journal`) directly.
pub fn check_place(p: &Path, flag: &str) -> Result<(), Fail> {
    match off_limits(p) {
        Some(why) => Err(Fail::usage(format!("{flag} {}: {why}", p.display()))),
        None => Ok(()),
    }
}

/// Why no output may be written at `p` (see [`check_place`]), if so.
fn off_limits(p: &Path) -> Option<String> {
    if let Some(b) = bundle_of(p) {
        let what = if p.exists() {
            "is a file of"
        } else {
            "is inside"
        };
        // The bundle as the user named it, unless a link led elsewhere.
        let given = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let shown = match std::fs::canonicalize(given) {
            Ok(g) if g == b => given.to_path_buf(),
            _ => b,
        };
        return Some(format!(
            "{what} the result bundle {}, drivelab's record of a run; give a file name outside it",
            shown.display()
        ));
    }
    sqlite_companion_of(p).map(|db| format!(
        "is part of the SQLite database {} (its journal or write-ahead log), which drivelab never replaces; give a new file name",
        db.display()
    ))
}

/// Whether the output file `p`, of `kind`, may be written (it need not exist).
fn replace(p: &Path, kind: Kind) -> Replace {
    if let Some(why) = off_limits(p) {
        return Replace::Never(why);
    }
    if !p.exists() {
        return Replace::Yes;
    }
    let head = head(p, HEAD_BYTES);
    if head.starts_with(SQLITE_HEADER) {
        return Replace::Never(
            "is a SQLite database (a results database?), which drivelab never replaces; give a new file name"
                .into(),
        );
    }
    match Kind::of(&head) {
        _ if head.is_empty() => Replace::Yes,
        Some(k) if k == kind => Replace::Yes,
        Some(k) => Replace::WithForce(format!("holds {}, not {}", k.what(), kind.output())),
        None => Replace::WithForce("exists and was not written by drivelab".into()),
    }
}

/// The SQLite database whose journal, write-ahead log or shared-memory file `p` is
/// (`NAME-journal`, `NAME-wal`, `NAME-shm` beside a SQLite file `NAME`), if it is one:
/// replacing it would lose the database's latest commits.
fn sqlite_companion_of(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_str()?;
    let base = ["-journal", "-wal", "-shm"]
        .iter()
        .find_map(|s| name.strip_suffix(s))?;
    let db = p.with_file_name(base);
    head(&db, SQLITE_HEADER.len())
        .starts_with(SQLITE_HEADER)
        .then_some(db)
}

/// Whether `dir` is a result bundle's directory: it holds the bundle's run.json, which
/// names drivelab (a user's own run.json elsewhere does not make a bundle).
fn is_bundle_dir(dir: &Path) -> bool {
    let doc = dir.join(drivelab_suites::bundle::RUN_JSON);
    let head = head(&doc, HEAD_BYTES);
    let marks: [&[u8]; 2] = [b"\"name\": \"drivelab\"", b"\"name\":\"drivelab\""];
    doc.is_file() && marks.iter().any(|m| contains(&head, m))
}

/// The result bundle directory that holds (or would hold) the file `p`, if it is one.
fn bundle_of(p: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(p)
        .unwrap_or_else(|_| absolute(p))
        .parent()?
        .to_path_buf();
    is_bundle_dir(&dir).then_some(dir)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What kind of thing other than a regular file `m` is, for messages.
fn special_kind(m: &std::fs::Metadata) -> Option<&'static str> {
    let t = m.file_type();
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_dir() {
        Some("a directory")
    } else {
        None
    }
}

impl OutFile {
    /// Claim `p` for a result document (`-`: standard output): refused (exit 2) unless
    /// it may be written (see the module's rules; `force` lets a foreign regular file be
    /// replaced).
    pub fn claim(p: &Path, flag: &'static str, kind: Kind, force: bool) -> Result<OutFile, Fail> {
        Self::claim_doc(
            p,
            flag,
            kind,
            force,
            "results are written to regular files only (- as the file name, or --output-format json, puts the result on standard output)",
        )
    }

    /// [`OutFile::claim`] for a document whose command has its own word on where it
    /// goes (`only_files`: said when `p` is a device, FIFO, directory, …).
    pub fn claim_doc(
        p: &Path,
        flag: &'static str,
        kind: Kind,
        force: bool,
        only_files: &str,
    ) -> Result<OutFile, Fail> {
        if is_stdout(p) {
            return Ok(OutFile {
                path: p.to_path_buf(),
                flag,
                stdout: true,
                pending: Default::default(),
            });
        }
        Self::claim_file(p, flag, kind, force, only_files)
    }

    /// Claim `p` for an output that only a regular file can hold (a binary trace):
    /// `-` is refused; `only_files` says where it goes.
    pub fn claim_file(
        p: &Path,
        flag: &'static str,
        kind: Kind,
        force: bool,
        only_files: &str,
    ) -> Result<OutFile, Fail> {
        let bad = |why: String| Fail::usage(format!("{flag} {}: {why}", p.display()));
        if is_stdout(p) {
            return Err(bad(format!("standard output cannot take it: {only_files}")));
        }
        if let Some(kind) = std::fs::metadata(p).ok().as_ref().and_then(special_kind) {
            return Err(bad(format!("is {kind}; {only_files}")));
        }
        if let Some(d) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !d.is_dir() {
                return Err(bad(format!("directory {} does not exist", d.display())));
            }
        }
        let ours = match replace(p, kind) {
            Replace::Yes => true,
            Replace::WithForce(_) if force => false,
            Replace::WithForce(why) => {
                return Err(bad(format!(
                    "{why}; give a new file name, or --force to replace it"
                )))
            }
            Replace::Never(why) => return Err(bad(why)),
        };
        // A link given as the output is followed now, once, to drivelab's own file of
        // this kind (a `latest.html` kept pointing at a report): that file is updated.
        // A link to anything else, replaced with --force, is replaced itself: the file it
        // names is the user's and is left as it was.
        let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        let real = match (link, ours) {
            (true, false) => p.to_path_buf(),
            _ => std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()),
        };
        let pending = claim_writable(&real).map_err(|e| bad(format!("cannot write there: {e}")))?;
        Ok(OutFile {
            path: p.to_path_buf(),
            flag,
            stdout: false,
            pending: std::sync::Mutex::new(Some(pending)),
        })
    }

    /// Refuse an output file that is the very file (or device) under test.
    pub fn not_the_target(self, target: &Path) -> Result<OutFile, Fail> {
        let marker = drivelab_engine::target::marker_path(target);
        self.not_the(target, "the target under test")?
            .not_the(&marker, "the marker file of the target under test")
    }

    /// Refuse an output file that is `other` (`what` it is, e.g. "the trace being
    /// imported"): the same file, also through a symbolic or hard link.
    pub fn not_the(self, other: &Path, what: &str) -> Result<OutFile, Fail> {
        if !self.stdout && same_file(&self.path, other) {
            return Err(Fail::usage(format!(
                "{} {}: is {what}; give another file name",
                self.flag,
                self.path.display()
            )));
        }
        Ok(self)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output is standard output (`-`).
    pub fn is_stdout(&self) -> bool {
        self.stdout
    }

    /// Where the output goes, for messages: its path or "standard output".
    pub fn shown(&self) -> String {
        if self.stdout {
            "standard output".into()
        } else {
            self.path.display().to_string()
        }
    }

    /// Start writing the output in pieces; it appears whole at
    /// [`drivelab_suites::atomic::Pending::commit`], or not at all. Only for a file
    /// ([`OutFile::claim_file`]).
    pub fn begin(&self) -> Result<drivelab_suites::atomic::Pending, Fail> {
        if self.stdout {
            return Err(Fail::usage(format!(
                "{} -: this output is written to a regular file only",
                self.flag
            )));
        }
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| Fail::failed(format!("{} {}: written already", self.flag, self.shown())))
    }

    /// Write the output, whole or not at all (to standard output: as it is, and a
    /// reader that closed the pipe early is no error).
    pub fn write(&self, bytes: &[u8]) -> Result<(), Fail> {
        if self.stdout {
            return crate::output::stdout::write_all(bytes);
        }
        let mut pending = self.begin()?;
        let cannot =
            |e: std::io::Error| Fail::failed(format!("cannot write {}: {e}", self.path.display()));
        std::io::Write::write_all(pending.file(), bytes).map_err(cannot)?;
        pending.commit().map_err(cannot)
    }
}

/// Two outputs of one command must not be the same file, nor both standard output:
/// one would be lost, or the two mixed.
pub fn distinct(outs: &[Option<&OutFile>]) -> Result<(), Fail> {
    let outs: Vec<&OutFile> = outs.iter().flatten().copied().collect();
    for (i, a) in outs.iter().enumerate() {
        let rest = &outs[i + 1..];
        if let Some(b) = rest.iter().find(|b| a.stdout && b.stdout) {
            return Err(Fail::usage(format!(
                "{} -: standard output already carries the document of {}; give one of them a file name",
                b.flag, a.flag
            )));
        }
        let same = |b: &&&OutFile| !a.stdout && !b.stdout && same_file(&a.path, &b.path);
        if let Some(b) = rest.iter().find(same) {
            return Err(Fail::usage(format!(
                "{} {}: is also the file of {}; give each output its own file",
                b.flag,
                b.path.display(),
                a.flag
            )));
        }
    }
    Ok(())
}

/// Refuse a target to be written that is one of the command's inputs (`input`, given
/// as `flag`; `what` it is, e.g. "the trace being replayed"): the same file or device,
/// also through a symbolic or hard link. Refused `--overwrite` or not: the input would
/// be destroyed by the very run that reads it.
pub fn target_not_input(target: &Path, input: &Path, flag: &str, what: &str) -> Result<(), Fail> {
    if same_file(target, input) {
        return Err(Fail::usage(format!(
            "TARGET {}: is {what} ({flag} {}), which this command reads; a command's input is never its target, --overwrite or not; give another target",
            target.display(),
            input.display()
        )));
    }
    Ok(())
}

/// The same file: the same inode when both exist (or the same block device, also
/// through two device nodes), else the same absolute path.
fn same_file(a: &Path, b: &Path) -> bool {
    let id = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| match m.file_type().is_block_device() {
                true => (0, 0, m.rdev()),
                false => (m.dev(), m.ino(), 0),
            })
    };
    match (id(a), id(b)) {
        (Some(x), Some(y)) => x == y,
        _ => absolute(a) == absolute(b),
    }
}

fn absolute(p: &Path) -> PathBuf {
    let parent = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    dir.join(p.file_name().unwrap_or_default())
}

/// Claim `p` for writing ([`drivelab_suites::atomic::claim`]: its temporary file is made
/// now, so a directory that cannot take it is found out at once); an existing file that
/// cannot be opened for writing is refused too.
fn claim_writable(p: &Path) -> std::io::Result<drivelab_suites::atomic::Pending> {
    let pending = drivelab_suites::atomic::claim(p)?;
    // (A link left here is replaced, not written through: nothing to open.)
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file()) {
        std::fs::OpenOptions::new().write(true).open(p).map(drop)?;
    }
    Ok(pending)
}

/// A directory of chart files (`--png`, `--svg`): made if missing (its parent must
/// exist). Nothing is written yet; [`OutDir::check_files`] vets the files once their
/// names are known.
pub struct OutDir {
    path: PathBuf,
    made: bool,
    flag: &'static str,
    /// What the directory's files hold.
    kind: Kind,
    force: bool,
}

impl OutDir {
    /// Claim the directory `p` for files: made if missing; never standard output (`-`)
    /// nor a result bundle's directory.
    pub fn claim(p: &Path, flag: &'static str, kind: Kind, force: bool) -> Result<OutDir, Fail> {
        if is_stdout(p) {
            return Err(Fail::usage(format!(
                "{flag} -: names a directory for files, not standard output; give a directory"
            )));
        }
        if is_bundle_dir(p) {
            return Err(Fail::usage(format!(
                "{flag} {}: is a result bundle, drivelab's record of a run; give another directory",
                p.display()
            )));
        }
        if let Some(b) = bundle_of(p) {
            return Err(Fail::usage(format!(
                "{flag} {}: is inside the result bundle {}, drivelab's record of a run; give a directory outside it",
                p.display(),
                b.display()
            )));
        }
        if p.exists() && !p.is_dir() {
            return Err(Fail::usage(format!(
                "{flag} {}: exists and is not a directory; give a directory for the files",
                p.display()
            )));
        }
        let made = !p.exists();
        if made {
            std::fs::create_dir(p).map_err(|e| {
                Fail::usage(format!(
                    "{flag} {}: cannot make the directory: {e}",
                    p.display()
                ))
            })?;
        }
        Ok(OutDir {
            path: p.to_path_buf(),
            made,
            flag,
            kind,
            force,
        })
    }

    /// Claim `p` for files that only this kind of output writes (`what`, e.g. "fio job
    /// files"): a new directory, an empty one, or one whose every entry `own` accepts;
    /// never a result bundle, a database folder or any other directory of the user's.
    pub fn claim_own(
        p: &Path,
        flag: &'static str,
        kind: Kind,
        what: &str,
        own: impl Fn(&Path) -> bool,
    ) -> Result<OutDir, Fail> {
        if p.is_dir() && !is_bundle_dir(p) {
            let entries = std::fs::read_dir(p)
                .map_err(|e| Fail::usage(format!("{flag} {}: {e}", p.display())))?;
            for e in entries {
                let e = e.map_err(|e| Fail::usage(format!("{flag} {}: {e}", p.display())))?;
                let path = e.path();
                if !e.file_type().is_ok_and(|t| t.is_file()) || !own(&path) {
                    return Err(Fail::usage(format!(
                        "{flag} {}: holds {}, which is not one of drivelab's {what}; give a new or empty directory",
                        p.display(),
                        e.file_name().to_string_lossy()
                    )));
                }
            }
        }
        OutDir::claim(p, flag, kind, false)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every file to be written into the directory may be (see [`OutFile::claim`]).
    pub fn check_files(&self, names: impl IntoIterator<Item = String>) -> Result<(), Fail> {
        self.check_files_beside(names, None)
    }

    /// [`OutDir::check_files`], and none is the command's other output `other`.
    pub fn check_files_beside(
        &self,
        names: impl IntoIterator<Item = String>,
        other: Option<&OutFile>,
    ) -> Result<(), Fail> {
        for n in names {
            let f = self.path.join(n);
            if let Some(other) = other.filter(|o| !o.stdout && same_file(&f, &o.path)) {
                return Err(Fail::usage(format!(
                    "{} {}: is also a file {} writes (the command's other output); give each output its own file",
                    other.flag,
                    other.path.display(),
                    self.flag
                )));
            }
            OutFile::claim_file(
                &f,
                self.flag,
                self.kind,
                self.force,
                "the directory's files are written as regular files only; remove what has the name, or give another directory",
            )?;
        }
        Ok(())
    }

    /// The command wrote its files here: leave the directory.
    pub fn keep(mut self) {
        self.made = false;
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.made {
            // Only what this check made, and only while still empty.
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(p: &Path, force: bool) -> String {
        match OutFile::claim(p, "--json", Kind::Result, force) {
            Ok(_) => panic!("{} was claimed", p.display()),
            Err(f) => {
                assert_eq!(f.code, crate::fail::USAGE);
                f.message
            }
        }
    }

    #[test]
    fn a_new_file_or_drivelab_output_may_be_written() {
        let d = tempfile::tempdir().unwrap();
        assert!(OutFile::claim(&d.path().join("new.json"), "--json", Kind::Result, false).is_ok());
        let own = d.path().join("r.json");
        std::fs::write(
            &own,
            "{\n  \"schema_version\": 1,\n  \"tool\": {\n    \"name\": \"drivelab\",\n",
        )
        .unwrap();
        assert!(OutFile::claim(&own, "--json", Kind::Result, false).is_ok());
        let csv = d.path().join("s.csv");
        std::fs::write(&csv, "index,start_s,duration_s,ramp,read_ops\n").unwrap();
        assert!(OutFile::claim(&csv, "--csv", Kind::SeriesCsv, false).is_ok());
        let empty = d.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        assert!(OutFile::claim(&empty, "--csv", Kind::SeriesCsv, false).is_ok());
        // Nothing was left behind by the checks.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
    }

    #[test]
    fn only_a_file_that_starts_with_drivelab_s_mark_as_written_is_drivelab_s() {
        let d = tempfile::tempdir().unwrap();
        let foreign: [&[u8]; 6] = [
            b"{\n  \"name\": \"drivelab\",\n  \"version\": \"1.0.0\"\n}\n",
            b"{\"name\":\"drivelab\"}",
            b"x\nindex,start_s,duration_s,ramp,read_ops\n",
            b"{\n  \"schema_version\": 2,\n  \"tool\": {\n    \"name\": \"drivelabs\",\n",
            b"<html><meta name=\"generator\" content=\"drivelab\">",
            b"notes\n; drivelab-fio-job: x\n",
        ];
        for (i, text) in foreign.iter().enumerate() {
            let p = d.path().join(format!("f{i}"));
            std::fs::write(&p, text).unwrap();
            assert!(
                refused(&p, false).contains("not written by drivelab"),
                "{i}"
            );
            assert_eq!(std::fs::read(&p).unwrap(), *text);
        }
        let html = drivelab_report::html_start() + "<title>x</title>";
        let job = "; WARNING: this job WRITES to /dev/x: whatever it holds is lost\n; drivelab-fio-job: drivelab 0.1.0\n";
        let export = "{\n  \"exported_by\": \"drivelab-store 0.1.0\",\n  \"format\": \"drivelab-db-export\",\n";
        let own = [
            (html.as_str(), Kind::Report),
            (job, Kind::FioJob),
            (export, Kind::Export),
            ("drivelab-trace 1\n", Kind::Trace),
        ];
        for (i, (text, kind)) in own.iter().enumerate() {
            let p = d.path().join(format!("own{i}"));
            std::fs::write(&p, text).unwrap();
            assert_eq!(Kind::of(text.as_bytes()), Some(*kind), "{text}");
            assert!(OutFile::claim(&p, "-o", *kind, false).is_ok(), "{text}");
        }
    }

    #[test]
    fn a_foreign_file_needs_force_a_database_or_bundle_file_is_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("notes.txt");
        std::fs::write(&user, "my notes").unwrap();
        assert!(refused(&user, false).contains("not written by drivelab"));
        assert!(OutFile::claim(&user, "--json", Kind::Result, true).is_ok());
        let db = d.path().join("results.sqlite");
        std::fs::write(&db, b"SQLite format 3\0rest").unwrap();
        for force in [false, true] {
            let m = refused(&db, force);
            assert!(m.contains("SQLite database"), "{m}");
            assert!(!m.contains("--force"), "{m}");
        }
        let wal = d.path().join("results.sqlite-wal");
        std::fs::write(&wal, b"\x37\x7f\x06\x82rest").unwrap();
        for f in [wal, d.path().join("results.sqlite-journal")] {
            let m = refused(&f, true);
            assert!(m.contains("part of the SQLite database"), "{m}");
        }
        let bundle = d.path().join("b");
        std::fs::create_dir(&bundle).unwrap();
        std::fs::write(bundle.join("run.json"), "{\"name\": \"drivelab\"}").unwrap();
        std::fs::write(bundle.join("summary.txt"), "table").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(bundle.join("run.json"), &link).unwrap();
        for f in [
            bundle.join("run.json"),
            bundle.join("summary.txt"),
            bundle.join("new.html"),
            link,
        ] {
            for force in [false, true] {
                let m = refused(&f, force);
                assert!(m.contains("result bundle"), "{m}");
                assert!(!m.contains("--force"), "{m}");
            }
        }
        assert_eq!(std::fs::read_to_string(&user).unwrap(), "my notes");
    }

    #[test]
    fn force_replaces_a_link_to_a_user_s_file_not_the_file() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("user.txt");
        std::fs::write(&user, "precious").unwrap();
        let link = d.path().join("link.html");
        std::os::unix::fs::symlink(&user, &link).unwrap();
        assert!(refused(&link, false).contains("--force"));
        let out = OutFile::claim(&link, "-o", Kind::Report, true).unwrap();
        out.write(b"<!doctype html>report").unwrap();
        assert_eq!(std::fs::read_to_string(&user).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(
            std::fs::read_to_string(&link).unwrap(),
            "<!doctype html>report"
        );
        // A link to drivelab's own report is followed: that report is updated.
        let ours = d.path().join("r1.html");
        std::fs::write(&ours, format!("{}old", drivelab_report::html_start())).unwrap();
        let latest = d.path().join("latest.html");
        std::os::unix::fs::symlink(&ours, &latest).unwrap();
        let out = OutFile::claim(&latest, "-o", Kind::Report, false).unwrap();
        out.write(b"new").unwrap();
        assert!(std::fs::symlink_metadata(&latest)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&ours).unwrap(), "new");
    }

    #[test]
    fn standard_output_is_a_document_s_not_a_file_s() {
        let out = OutFile::claim(Path::new("-"), "--json", Kind::Result, false).unwrap();
        assert!(out.is_stdout());
        let csv = OutFile::claim(Path::new("-"), "--csv", Kind::SeriesCsv, false).unwrap();
        let e = distinct(&[Some(&out), Some(&csv)]).unwrap_err();
        assert!(
            e.message.starts_with("--csv -: standard output"),
            "{}",
            e.message
        );
        let e = OutFile::claim_file(Path::new("-"), "-o/--output", Kind::Trace, false, "a trace");
        let e = e.err();
        assert_eq!(
            e.unwrap().message,
            "-o/--output -: standard output cannot take it: a trace"
        );
        let e = OutDir::claim(Path::new("-"), "--png", Kind::Png, false);
        let e = e.err().unwrap();
        assert!(
            e.message.starts_with("--png -: names a directory"),
            "{}",
            e.message
        );
    }

    #[test]
    fn special_files_are_refused_even_with_force() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert!(refused(&fifo, true).contains("FIFO"));
        assert!(refused(Path::new("/dev/null"), true).contains("character device"));
        assert!(refused(d.path(), true).contains("directory"));
    }

    #[test]
    fn two_outputs_of_one_command_must_differ() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        let a = OutFile::claim(&p, "--json", Kind::Result, false).unwrap();
        let b = OutFile::claim(&p, "--csv", Kind::SeriesCsv, false).unwrap();
        let e = distinct(&[Some(&a), Some(&b)]).unwrap_err();
        assert!(
            e.message.contains("also the file of --json"),
            "{}",
            e.message
        );
        let c = OutFile::claim(&d.path().join("c"), "--csv", Kind::SeriesCsv, false).unwrap();
        assert!(distinct(&[Some(&a), Some(&c), None]).is_ok());
    }

    #[test]
    fn an_output_replaces_only_drivelab_s_file_of_its_own_kind() {
        let d = tempfile::tempdir().unwrap();
        let trace = d.path().join("app.dltrace");
        std::fs::write(&trace, "drivelab-trace 1\nrecords").unwrap();
        for (flag, kind) in [
            ("-o", Kind::Report),
            ("--json", Kind::Result),
            ("--csv", Kind::SeriesCsv),
            ("-o", Kind::Export),
        ] {
            let m = match OutFile::claim(&trace, flag, kind, false) {
                Ok(_) => panic!("{kind:?} may replace a trace"),
                Err(f) => f.message,
            };
            assert!(m.starts_with(&format!("{flag} ")), "{m}");
            assert!(m.contains("holds a drivelab trace"), "{m}");
            assert!(m.contains("--force"), "{m}");
            assert!(OutFile::claim(&trace, flag, kind, true).is_ok());
        }
        assert!(OutFile::claim(&trace, "-o", Kind::Trace, false).is_ok());
        assert_eq!(
            std::fs::read_to_string(&trace).unwrap(),
            "drivelab-trace 1\nrecords"
        );
    }
}
