//! Helpers shared by the command-line tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

/// drivelab, with the results database of the default location kept inside the calling
/// test's own data directory (never the user's), removed when that test ends.
pub fn drivelab() -> Command {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(remove_data_of_finished_test_processes);
    let mut c = Command::new(env!("CARGO_BIN_EXE_drivelab"));
    c.env("XDG_DATA_HOME", TEST_DATA.with(|d| d.0.clone()));
    c
}

thread_local! {
    /// The data directory of the test running on this thread (libtest runs each test
    /// on a thread of its own): made by drivelab when it first writes there (the
    /// default results database), removed as the thread ends, whether the test passed
    /// or panicked.
    static TEST_DATA: DataDir = DataDir::new();
}

/// `drivelab-test-data-PID-N` in the temporary directory: N counts this process's
/// tests, so two tests never share a default database. Removed on drop.
struct DataDir(PathBuf);

impl DataDir {
    fn new() -> DataDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("drivelab-test-data-{}-{n}", std::process::id());
        DataDir(std::env::temp_dir().join(name))
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The data directories of test processes that ended without removing them (killed in
/// the middle of a test): removed by the next one, so `cargo test` run by hand does not
/// fill the temporary directory (scripts/test removes its whole TMPDIR anyway).
fn remove_data_of_finished_test_processes() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("drivelab-test-data-") else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or_default();
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Run drivelab with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    drivelab()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("drivelab runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Run and parse the JSON result from stdout (`--output-format json`).
pub fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--output-format", "json"]);
    let o = run_in(dir, &a);
    assert!(
        o.status.success(),
        "drivelab {args:?} failed: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(&o)))
}

/// Byte offset a sector written with `random` data says it belongs at, and its write tag.
pub fn stamp(sector: &[u8]) -> (u64, u64) {
    let v = u64::from_le_bytes(sector[..8].try_into().unwrap());
    ((v & ((1 << 40) - 1)) * 512, v >> 40)
}

/// A loop device over a new sparse file of `size` bytes; detached on drop.
pub struct Loop {
    pub dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    /// The file the device reads and writes.
    pub fn image(&self) -> std::path::PathBuf {
        self._dir.path().join("disk.img")
    }

    pub fn new(size: u64, partitions: bool) -> Loop {
        Loop::with_sector(size, partitions, 512)
    }

    /// With a logical sector of `sector` bytes (512 or 4096).
    pub fn with_sector(size: u64, partitions: bool, sector: u32) -> Loop {
        Loop::build("/var/tmp", size, partitions, sector)
    }

    /// Over a file in memory (tmpfs).
    pub fn in_memory(size: u64) -> Loop {
        Loop::build("/dev/shm", size, false, 512)
    }

    fn build(under: &str, size: u64, partitions: bool, sector: u32) -> Loop {
        let dir = tempfile::tempdir_in(under).unwrap();
        let img = dir.path().join("disk.img");
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let sector = sector.to_string();
        let mut args = vec!["-f", "--show", "--sector-size", &sector];
        // A disk-backed loop device reads its file directly, as a drive would be read:
        // without, the page cache answers and drivelab calls it memory.
        if under != "/dev/shm" {
            args.push("--direct-io=on");
        }
        if partitions {
            args.push("-P");
        }
        let o = Command::new("losetup")
            .args(&args)
            .arg(&img)
            .output()
            .expect("losetup is available (the tests run as root)");
        assert!(o.status.success(), "losetup failed: {}", stderr(&o));
        let dev = String::from_utf8(o.stdout).unwrap().trim().to_string();
        Loop { dev, _dir: dir }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A mount of `dev` on a new directory; unmounted on drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(dev: &str) -> Mount {
        let mk = Command::new("mkfs.ext4")
            .args(["-q", "-F", dev])
            .output()
            .unwrap();
        assert!(mk.status.success(), "mkfs.ext4: {}", stderr(&mk));
        let dir = tempfile::tempdir().unwrap();
        let m = Command::new("mount")
            .arg(dev)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(m.status.success(), "mount: {}", stderr(&m));
        Mount { dir }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A zram device of `size` bytes (a block driver that takes no non-blocking I/O);
/// removed on drop.
pub struct Zram {
    pub dev: String,
}

impl Zram {
    pub fn new(size: u64) -> Zram {
        if !Path::new("/sys/class/zram-control").exists() {
            let _ = Command::new("modprobe").arg("zram").status();
        }
        let o = Command::new("zramctl")
            .args(["-f", "-s", &size.to_string()])
            .output()
            .expect("zramctl (util-linux) is available");
        assert!(o.status.success(), "zramctl failed: {}", stderr(&o));
        let dev = String::from_utf8(o.stdout).unwrap().trim().to_string();
        Zram { dev }
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = Command::new("zramctl").args(["-r", &self.dev]).status();
    }
}

/// Wait until `cond` holds, checking every 10 ms, for at most two minutes (a generous
/// bound for a loaded machine: the test waits for an event, never for a time).
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether another process holds the lock drivelab takes on a file target it runs on.
pub fn locked_by_a_run(p: &Path) -> bool {
    std::fs::File::open(p)
        .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// The test file's marker text (xattr `user.drivelab`, else the sidecar), if any.
pub fn marker_text(p: &Path) -> Option<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os,sys; print(os.getxattr(sys.argv[1], 'user.drivelab').decode())",
        ])
        .arg(p)
        .output()
        .ok()?;
    if out.status.success() {
        return Some(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let name = p.file_name()?.to_string_lossy().into_owned();
    std::fs::read_to_string(p.with_file_name(format!(".{name}.drivelab"))).ok()
}

/// Send signal `sig` (e.g. "INT", "HUP") to the process `pid`.
pub fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "kill -{sig} {pid}");
}

/// Bytes the process `pid` has had read from storage so far (`/proc/PID/io`).
pub fn storage_read_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("read_bytes:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// How many unnamed files (made with `O_TMPFILE`, not yet linked) the process `pid`
/// holds open in the directory `dir`: the outputs it claimed there.
pub fn unnamed_files_in(pid: u32, dir: &Path) -> usize {
    let dir = std::fs::canonicalize(dir).unwrap();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|l| {
            let l = l.to_string_lossy();
            l.ends_with(" (deleted)")
                && Path::new(l.trim_end_matches(" (deleted)")).parent() == Some(dir.as_path())
        })
        .count()
}

/// A small tmpfs mounted on a new directory (`opts`: e.g. "size=256k" or "ro");
/// unmounted on drop.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn new(opts: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let m = Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("mount is available (the tests run as root)");
        assert!(m.status.success(), "mount: {}", stderr(&m));
        Tmpfs { dir }
    }

    /// Fill it: a file takes every free byte.
    pub fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.path().join("fill")).unwrap();
        let block = vec![0xA5u8; 4096];
        while f.write_all(&block).is_ok() {}
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Runs the fio job file `job` in `dir` (written there as `job.fio`), its result as
/// `format` (`json`, `json+`) in `dir/out`; the job file's data file `data`, if it made
/// one, removed.
pub fn fio_job(dir: &Path, job: &str, format: &str, out: &str) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let o = Command::new("fio")
        .args([
            &format!("--output-format={format}"),
            &format!("--output={out}"),
            "job.fio",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_file(dir.join("data"));
}
