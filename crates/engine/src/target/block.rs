//! Block-device targets: identity from ioctls and sysfs, and the refusals that keep
//! drivelab from writing to a device in use.

use std::fs::OpenOptions as FsOpen;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{open_error, Handle, OpenOptions, Target, TargetError, TargetInfo, TargetKind};

fn sysfs_dir(rdev: u64) -> PathBuf {
    PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ))
}

/// Bytes of `len` at `offset` of the loop device open as `f` that are holes or unwritten
/// (fallocated) extents of its backing file: reads of them never reach storage, as
/// for a sparse file target. None for other devices, or when it cannot be said.
pub(super) fn loop_unwritten_bytes(f: &std::fs::File, offset: u64, len: u64) -> Option<u64> {
    let sys = sysfs_dir(f.metadata().ok()?.rdev()).canonicalize().ok()?;
    let backing = read_trim(sys.join("loop/backing_file"))?;
    let base: u64 = read_trim(sys.join("loop/offset")).and_then(|s| s.parse().ok())?;
    // Only a regular file has holes (a FIFO is never opened: checked first).
    if !std::fs::metadata(&backing).ok()?.is_file() {
        return None;
    }
    let b = std::fs::File::open(&backing).ok()?;
    let at = base.checked_add(offset)?;
    let written = crate::sys::written_bytes_fiemap(&b, at, len)
        .or_else(|_| crate::sys::data_bytes_seek(&b, at, len))
        .ok()?;
    Some(len.saturating_sub(written))
}

/// Logical block size of the block device `dev` (a partition's is its disk's), from sysfs.
pub(super) fn logical_block_size(dev: u64) -> Option<u32> {
    let sys = sysfs_dir(dev).canonicalize().ok()?;
    let queue = if sys.join("partition").exists() {
        sys.parent()?.join("queue")
    } else {
        sys.join("queue")
    };
    read_trim(queue.join("logical_block_size"))?.parse().ok()
}

/// Why the block device `name` (sysfs directory `sys`) lives in memory, if it does: a
/// loop device over a file on tmpfs or ramfs or reading its file through the page cache,
/// zram, a RAM disk (brd) or pmem.
fn memory_backing(name: &str, sys: &Path) -> Option<String> {
    if name.starts_with("loop") {
        loop_memory_backing(name, sys)
    } else if name.starts_with("zram") {
        Some(format!("{name} is a compressed RAM disk (zram)"))
    } else if name.starts_with("ram") {
        Some(format!("{name} is a RAM disk (brd)"))
    } else if name.starts_with("pmem") {
        Some(format!("{name} is persistent or emulated memory (pmem)"))
    } else {
        None
    }
}

/// A loop device over a file in memory, or one reading its file without direct I/O
/// (`loop/dio` 0): then the page cache, not the drive under the file, answers.
fn loop_memory_backing(name: &str, sys: &Path) -> Option<String> {
    let b = read_trim(sys.join("loop/backing_file"))?;
    if let Ok(magic) = crate::sys::fs_magic(Path::new(&b)) {
        let (fs, mem) = super::fs_name(magic);
        if mem {
            return Some(format!(
                "{name} is backed by {b} on {fs}, which lives in memory"
            ));
        }
    }
    (read_trim(sys.join("loop/dio")).as_deref() == Some("0")).then(|| {
        format!("{name} reads its backing file {b} through the page cache (no direct I/O: loop/dio is 0)")
    })
}

/// [`memory_backing`] of the disk holding device number `dev` (a filesystem's device:
/// ext4 on a loop device over a tmpfs file is memory too).
pub(super) fn memory_backing_of(dev: u64) -> Option<String> {
    let mut sys = sysfs_dir(dev).canonicalize().ok()?;
    if sys.join("partition").exists() {
        sys = sys.parent()?.to_path_buf();
    }
    let name = sys.file_name()?.to_string_lossy().into_owned();
    memory_backing(&name, &sys)
}

/// The unit serial number from a SCSI VPD page 0x80 (SATA and SAS disks expose it only
/// there): a 4-byte header, then the serial in ASCII.
fn vpd_serial(p: &Path) -> Option<String> {
    let raw = std::fs::read(p).ok()?;
    let text = String::from_utf8_lossy(raw.get(4..)?).trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The device's partitions as (name, "major:minor").
fn partitions(sys: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(dev) = read_trim(p.join("dev")) {
                    out.push((e.file_name().to_string_lossy().into_owned(), dev));
                }
            }
        }
    }
    out.sort();
    out
}

/// The device `rdev` and its partitions: (name, "major:minor") each.
fn with_partitions(rdev: u64) -> Vec<(String, String)> {
    let sys = sysfs_dir(rdev);
    let own = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let name = sys
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut devs = vec![(name, own)];
    devs.extend(partitions(&sys));
    devs
}

/// Scans of `/proc` one holder must be seen in, one after another, to be named.
const HOLD_SCANS: u32 = 5;
/// The pause between two scans.
const HOLD_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);
/// Scans at most, before a stream of passing openers is taken for no holder.
const MAX_SCANS: u32 = 20;

/// A process other than this one that keeps one of `devs` (name, "major:minor") open:
/// said as "/dev/NAME is in use by process PID (COMMAND)". Tools open a new device for
/// a moment (udev's blkid probe, `losetup -f` looking for a free one, a test's
/// neighbour): a process seen holding it is named only when it is seen in
/// [`HOLD_SCANS`] scans in a row, [`HOLD_PAUSE`] apart.
fn open_in_another_process(devs: &[(String, String)]) -> Option<String> {
    let (mut pid, mut why) = opener(devs)?;
    let mut seen = 1;
    for _ in 1..MAX_SCANS {
        if seen == HOLD_SCANS {
            return Some(why);
        }
        std::thread::sleep(HOLD_PAUSE);
        let (p, w) = opener(devs)?;
        seen = if p == pid { seen + 1 } else { 1 };
        (pid, why) = (p, w);
    }
    (seen == HOLD_SCANS).then_some(why)
}

/// A process other than this one that has one of `devs` open now, as `/proc/PID/fd`
/// shows: its pid and the sentence naming it. Only descriptors whose link names a node
/// under /dev are looked at (where block devices live): following every descriptor of
/// every process could block on a dead network or FUSE file system.
fn opener(devs: &[(String, String)]) -> Option<(u32, String)> {
    let me = std::process::id();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        if pid == me {
            continue;
        }
        for fd in fds.flatten() {
            let under_dev = std::fs::read_link(fd.path()).is_ok_and(|l| l.starts_with("/dev/"));
            let Some(m) = under_dev
                .then(|| std::fs::metadata(fd.path()).ok())
                .flatten()
            else {
                continue;
            };
            let d = format!("{}:{}", libc::major(m.rdev()), libc::minor(m.rdev()));
            let found = devs.iter().find(|(_, x)| *x == d);
            if let Some((n, _)) = found.filter(|_| m.file_type().is_block_device()) {
                return Some((
                    pid,
                    format!(
                        "/dev/{n} is in use by process {pid} ({})",
                        command_of(&e.path())
                    ),
                ));
            }
        }
    }
    None
}

/// The command line of the process whose /proc directory is `proc` (shortened), for
/// messages.
fn command_of(proc: &Path) -> String {
    const MAX: usize = 60;
    let cmdline = std::fs::read(proc.join("cmdline")).unwrap_or_default();
    let mut cmd: String = String::from_utf8_lossy(&cmdline)
        .split('\0')
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if cmd.is_empty() {
        cmd = read_trim(proc.join("comm")).unwrap_or_else(|| "?".into());
    }
    if cmd.chars().count() > MAX {
        cmd = cmd.chars().take(MAX).collect::<String>() + " …";
    }
    cmd
}

/// Why writing to this device must be refused (mounted, swap, held, open in another
/// process), if anything.
fn in_use(path: &Path, rdev: u64) -> Option<String> {
    let devs = with_partitions(rdev);
    if let Ok(mi) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in mi.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 4 {
                if let Some((n, _)) = devs.iter().find(|(_, d)| d == f[2]) {
                    return Some(format!("/dev/{n} is mounted on {}", f[4]));
                }
            }
        }
    }
    if let Ok(sw) = std::fs::read_to_string("/proc/swaps") {
        for line in sw.lines().skip(1) {
            let dev = line.split_whitespace().next().unwrap_or("");
            if let Some((n, _)) = devs.iter().find(|(n, _)| {
                dev == format!("/dev/{n}")
                    || Path::new(dev).canonicalize().ok()
                        == Some(PathBuf::from(format!("/dev/{n}")))
            }) {
                return Some(format!("/dev/{n} is in use as swap"));
            }
        }
    }
    for (n, d) in &devs {
        let holders = PathBuf::from(format!("/sys/dev/block/{d}/holders"));
        if let Ok(rd) = std::fs::read_dir(holders) {
            let names: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !names.is_empty() {
                return Some(format!("/dev/{n} is held by {}", names.join(", ")));
            }
        }
    }
    // A loop device over this one (or a partition of it) claims nothing and registers
    // no holder, so only its backing file says so.
    if let Ok(rd) = std::fs::read_dir("/sys/block") {
        for e in rd.flatten() {
            let Some(backing) = read_trim(e.path().join("loop/backing_file")) else {
                continue;
            };
            let backed = std::fs::metadata(&backing)
                .ok()
                .filter(|m| m.file_type().is_block_device())
                .map(|m| format!("{}:{}", libc::major(m.rdev()), libc::minor(m.rdev())));
            if let Some((n, _)) = devs.iter().find(|(_, d)| backed.as_deref() == Some(d)) {
                return Some(format!(
                    "/dev/{n} backs the loop device /dev/{}",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    let _ = path;
    open_in_another_process(&devs)
}

/// Why `path` is in use now, if it is: a block device (or a partition of it) mounted,
/// swap or held, or a regular file backing such a loop device. For a command that only
/// reads it (a check) and must know nothing writes under it.
pub fn in_use_now(path: &Path) -> Option<String> {
    let md = std::fs::metadata(path).ok()?;
    if md.file_type().is_block_device() {
        in_use(path, md.rdev()).or_else(|| sibling_loop_in_use(md.rdev()))
    } else {
        backed_device_in_use(&md)
    }
}

/// Why writing to the regular file `file` must be refused: it backs a loop device that
/// is in use (mounted, swap, held), so writing it writes under that device's users.
pub(super) fn backed_device_in_use(file: &std::fs::Metadata) -> Option<String> {
    let rd = std::fs::read_dir("/sys/block").ok()?;
    for e in rd.flatten() {
        let Some(backing) = read_trim(e.path().join("loop/backing_file")) else {
            continue;
        };
        let backs = std::fs::metadata(&backing)
            .is_ok_and(|m| m.dev() == file.dev() && m.ino() == file.ino());
        let Some((major, minor)) = read_trim(e.path().join("dev"))
            .as_deref()
            .and_then(|d| d.split_once(':'))
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        else {
            continue;
        };
        if !backs {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let dev = PathBuf::from(format!("/dev/{name}"));
        if let Some(why) = in_use(&dev, libc::makedev(major, minor)) {
            return Some(format!(
                "it backs the loop device {}, and {why}",
                dev.display()
            ));
        }
    }
    None
}

/// For a loop device: why its backing file must not be written through it — another
/// loop device over the same file (at any offset) is mounted, swap or held, so this one
/// writes under that device's users.
fn sibling_loop_in_use(rdev: u64) -> Option<String> {
    let backing = read_trim(sysfs_dir(rdev).join("loop/backing_file"))?;
    let md = std::fs::metadata(backing).ok()?;
    let own = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let rd = std::fs::read_dir("/sys/block").ok()?;
    for e in rd.flatten() {
        let dev = read_trim(e.path().join("dev"));
        if dev.as_deref() == Some(own.as_str()) {
            continue;
        }
        let Some(other) = read_trim(e.path().join("loop/backing_file")) else {
            continue;
        };
        let same =
            std::fs::metadata(&other).is_ok_and(|m| m.dev() == md.dev() && m.ino() == md.ino());
        let Some((major, minor)) = dev
            .as_deref()
            .and_then(|d| d.split_once(':'))
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        else {
            continue;
        };
        if !same {
            continue;
        }
        let name = PathBuf::from(format!("/dev/{}", e.file_name().to_string_lossy()));
        if let Some(why) = in_use(&name, libc::makedev(major, minor)) {
            return Some(format!(
                "its backing file also backs the loop device {}, and {why}",
                name.display()
            ));
        }
    }
    None
}

pub(super) fn open(path: &Path, opts: &OpenOptions) -> Result<Target, TargetError> {
    let md = std::fs::metadata(path).map_err(|e| open_error(path, &e, false))?;
    let rdev = md.rdev();
    check_consent(path, opts, rdev)?;
    let f = open_checked(path, opts, rdev)?;
    let (mut info, canon, name) = describe(path, &f, rdev)?;
    identify(&mut info, &canon, &name, rdev);
    Ok(Target::new(info, Handle::File(f)))
}

/// The user's consent for what `opts` asks of the device `path` (`rdev`): a
/// `--destructive` naming it, and for writes a device nothing else holds.
fn check_consent(path: &Path, opts: &OpenOptions, rdev: u64) -> Result<(), TargetError> {
    if let Some(allowed) = &opts.destructive {
        // Checked for reads too: a confirmation naming another device is a mistake.
        let same = std::fs::metadata(allowed)
            .map(|m| m.file_type().is_block_device() && m.rdev() == rdev)
            .unwrap_or(false);
        if !same {
            return Err(TargetError(format!(
                "--destructive={} does not name the target {}; it must name the very device to be written",
                allowed.display(),
                path.display()
            )));
        }
    }
    if opts.write {
        if opts.destructive.is_none() {
            return Err(TargetError(format!(
                "target {} is a block device: writing destroys its data; pass --destructive={} to confirm",
                path.display(),
                path.display()
            )));
        }
        if let Some(why) = in_use(path, rdev).or_else(|| sibling_loop_in_use(rdev)) {
            return Err(TargetError(format!(
                "refusing to write to {}: {why}",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The device opened as `opts` asks (exclusively for writes), and made sure to be the
/// device `rdev` that was checked.
fn open_checked(path: &Path, opts: &OpenOptions, rdev: u64) -> Result<std::fs::File, TargetError> {
    let mut o = FsOpen::new();
    o.read(true).write(opts.write);
    let mut flags = 0;
    if opts.direct {
        flags |= libc::O_DIRECT;
    }
    if opts.write {
        // The kernel refuses O_EXCL on a block device that is mounted or claimed.
        flags |= libc::O_EXCL;
    }
    o.custom_flags(flags);
    let f = o.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            // Claimed since the checks: by a process (another drivelab run), said so,
            // or by the kernel.
            let why = open_in_another_process(&with_partitions(rdev))
                .unwrap_or_else(|| "the device is busy (in use by the kernel)".into());
            TargetError(format!("refusing to write to {}: {why}", path.display()))
        } else {
            open_error(path, &e, opts.direct)
        }
    })?;
    // The path was checked, then opened: make sure the device opened is the one checked
    // (a symlink could have been pointed elsewhere in between).
    let opened = f.metadata().map_err(|e| open_error(path, &e, false))?;
    if !opened.file_type().is_block_device() || opened.rdev() != rdev {
        return Err(TargetError(format!(
            "target {}: the device changed while drivelab opened it",
            path.display()
        )));
    }
    Ok(f)
}

/// The opened device's size, sectors and queue (rotational, scheduler); with its sysfs
/// directory and kernel name.
fn describe(
    path: &Path,
    f: &std::fs::File,
    rdev: u64,
) -> Result<(TargetInfo, PathBuf, String), TargetError> {
    let capacity = crate::sys::block_capacity(f).map_err(|e| {
        TargetError(format!(
            "target {}: cannot read its capacity: {e}",
            path.display()
        ))
    })?;
    let (logical, physical) = crate::sys::block_sectors(f).unwrap_or((512, 512));
    let sys = sysfs_dir(rdev);
    let canon = sys.canonicalize().unwrap_or_else(|_| sys.clone());
    // Queue attributes live on the whole disk: for a partition, one level up.
    let queue = if canon.join("queue").exists() {
        canon.join("queue")
    } else {
        canon.parent().map(|p| p.join("queue")).unwrap_or_default()
    };
    let name = canon
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut info = TargetInfo::bare(
        TargetKind::BlockDevice,
        path.display().to_string(),
        capacity,
        logical,
    );
    info.physical_sector_bytes = physical;
    info.rotational = read_trim(queue.join("rotational")).map(|s| s == "1");
    info.scheduler = read_trim(queue.join("scheduler")).map(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(['[', ']']).to_string())
            .unwrap_or(s)
    });
    Ok((info, canon, name))
}

/// Which drive the device is: model, serial, firmware (a loop device's backing file,
/// a USB disk's descriptor), the hardware behind it, and whether it lives in memory.
fn identify(info: &mut TargetInfo, canon: &Path, name: &str, rdev: u64) {
    let dev = if canon.join("device").exists() {
        canon.join("device")
    } else {
        canon.parent().map(|p| p.join("device")).unwrap_or_default()
    };
    info.model = read_trim(dev.join("model"));
    info.serial = read_trim(dev.join("serial"))
        .or_else(|| read_trim(canon.join("serial")))
        .or_else(|| vpd_serial(&dev.join("vpd_pg80")))
        .or_else(|| read_trim(dev.join("wwid")));
    info.firmware = read_trim(dev.join("firmware_rev")).or_else(|| read_trim(dev.join("rev")));
    if name.starts_with("loop") {
        let backing = read_trim(canon.join("loop/backing_file"));
        if info.model.is_none() {
            info.model = Some("Linux loop device".into());
        }
        // A loop device's identity is the file under it (so that resuming a bundle on a
        // loop device now over another file is refused, as a swapped drive would be).
        if let Some(b) = &backing {
            if let Ok(m) = std::fs::metadata(b) {
                info.serial.get_or_insert(format!(
                    "backing file {b} (device {}:{}, inode {})",
                    libc::major(m.dev()),
                    libc::minor(m.dev()),
                    m.ino()
                ));
            }
        }
    } else if name.starts_with("zram") {
        info.model.get_or_insert("Linux zram".into());
    }
    info.device =
        super::identity::identify(Path::new("/sys"), libc::major(rdev), libc::minor(rdev));
    // A USB disk the kernel knows no serial of (bulk-only: no VPD page) has its
    // descriptor's.
    if info.serial.is_none() {
        info.serial = info.device.as_ref().and_then(|d| d.usb_serial.clone());
    }
    // A partition lives where its disk does.
    info.in_memory = if canon.join("partition").exists() {
        canon.parent().and_then(|disk| {
            let n = disk.file_name()?.to_string_lossy().into_owned();
            memory_backing(&n, disk)
        })
    } else {
        memory_backing(name, canon)
    };
}
