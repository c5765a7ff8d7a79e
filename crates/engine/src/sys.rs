//! The system calls the standard library does not wrap. All of the engine's `unsafe`
//! outside the io_uring backend lives here, each block with why it is sound.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKPBSZGET: libc::c_ulong = 0x127b;
const BLKDISCARD: libc::c_ulong = 0x1277;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Capacity of a block device in bytes (BLKGETSIZE64).
pub fn block_capacity(f: &File) -> io::Result<u64> {
    let mut v: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `v`.
    check(unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut v as *mut u64) })?;
    Ok(v)
}

/// Logical and physical sector size of a block device (BLKSSZGET, BLKPBSZGET).
pub fn block_sectors(f: &File) -> io::Result<(u32, u32)> {
    let mut logical: libc::c_int = 0;
    let mut physical: libc::c_uint = 0;
    // SAFETY: each ioctl writes one int through its pointer, which points at a local.
    check(unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET as _, &mut logical as *mut _) })?;
    // SAFETY: as above.
    check(unsafe { libc::ioctl(f.as_raw_fd(), BLKPBSZGET as _, &mut physical as *mut _) })?;
    Ok((logical as u32, physical))
}

/// Discard (TRIM) a byte range of a block device (BLKDISCARD).
pub fn block_discard(f: &File, offset: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 from the pointer, which points at `range`.
    check(unsafe { libc::ioctl(f.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) })
}

/// Punch a hole in a regular file (the file equivalent of a discard), keeping its size.
pub fn punch_hole(f: &File, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: fallocate takes plain integers; the fd is valid for the borrow of `f`.
    check(unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    })
}

/// Write the dirty pages of `f` and drop its cached pages in `len` bytes at `offset` from
/// the page cache (fio's `invalidate`), so that buffered I/O starts from the target.
pub fn drop_cache(f: &File, offset: u64, len: u64) -> io::Result<()> {
    f.sync_data()?;
    // SAFETY: posix_fadvise takes plain integers; the fd is valid for the borrow of `f`.
    let rc = unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    match rc {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Tell the kernel how `f` is about to be read (fio's `fadvise_hint`): random access
/// turns readahead off, so that a random 4 KiB read reads 4 KiB, not a window around it.
pub fn advise_access(f: &File, random: bool) -> io::Result<()> {
    let advice = if random {
        libc::POSIX_FADV_RANDOM
    } else {
        libc::POSIX_FADV_SEQUENTIAL
    };
    // SAFETY: as for `drop_cache`.
    match unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Reserve `len` bytes for a regular file.
pub fn fallocate(f: &File, len: u64) -> io::Result<()> {
    // SAFETY: as for `punch_hole`.
    check(unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) })
}

/// Read `buf.len()` bytes at `offset` without blocking (preadv2 with RWF_NOWAIT).
/// Ok(false) when the read went through, Ok(true) when the kernel answered that it
/// would have had to block (EAGAIN) or cannot try without blocking (EOPNOTSUPP).
pub fn read_would_block(f: &File, buf: &mut [u8], offset: u64) -> io::Result<bool> {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the kernel writes at most `iov_len` bytes into `buf`, which is exclusively
    // borrowed for the call; the iovec array of one entry lives on this stack frame.
    let rc = unsafe {
        libc::preadv2(
            f.as_raw_fd(),
            &iov,
            1,
            offset as libc::off_t,
            libc::RWF_NOWAIT,
        )
    };
    if rc >= 0 {
        return Ok(false);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EOPNOTSUPP) => Ok(true),
        _ => Err(e),
    }
}

/// FS_IOC_FIEMAP: _IOWR('f', 11, struct fiemap), the header being 32 bytes.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
/// Extents asked for per FIEMAP call.
const FIEMAP_BATCH: usize = 128;

/// struct fiemap_extent (linux/fiemap.h).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// struct fiemap with room for FIEMAP_BATCH extents after the header.
#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [FiemapExtent; FIEMAP_BATCH],
}

/// Bytes of `len` at `offset` in a regular file that hold data on storage: mapped
/// extents that are not unwritten (fallocated). Holes and unwritten extents read as
/// zeros without any I/O. Err when the filesystem has no FIEMAP (FUSE, some network
/// filesystems): then [`data_bytes_seek`] answers for holes at least. Dirty pages are
/// written back first (FIEMAP_FLAG_SYNC): data written through the page cache and not
/// yet allocated (delayed allocation) would otherwise look like holes.
pub fn written_bytes_fiemap(f: &File, offset: u64, len: u64) -> io::Result<u64> {
    let end = offset.saturating_add(len);
    let mut pos = offset;
    let mut written = 0u64;
    while pos < end {
        let mut m = Fiemap {
            start: pos,
            length: end - pos,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: FIEMAP_BATCH as u32,
            reserved: 0,
            extents: [FiemapExtent::default(); FIEMAP_BATCH],
        };
        // SAFETY: FS_IOC_FIEMAP reads the header and writes at most `extent_count`
        // extents into `m.extents`, which has room for exactly that many; `m` lives on
        // this frame for the call.
        check(unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut m as *mut Fiemap) })?;
        let got = &m.extents[..(m.mapped_extents as usize).min(FIEMAP_BATCH)];
        let Some(last) = got.last() else { break };
        for e in got {
            let lo = e.logical.max(pos);
            let hi = e.logical.saturating_add(e.length).min(end);
            if hi > lo && e.flags & FIEMAP_EXTENT_UNWRITTEN == 0 {
                written += hi - lo;
            }
        }
        let next = last.logical.saturating_add(last.length);
        if last.flags & FIEMAP_EXTENT_LAST != 0 || next <= pos {
            break;
        }
        pos = next;
    }
    Ok(written)
}

/// Bytes of `len` at `offset` that are data, not holes (lseek SEEK_DATA / SEEK_HOLE).
/// Unwritten (fallocated) extents count as data here: only FIEMAP tells them apart.
pub fn data_bytes_seek(f: &File, offset: u64, len: u64) -> io::Result<u64> {
    let end = offset.saturating_add(len);
    let seek = |from: u64, whence: libc::c_int| -> io::Result<Option<u64>> {
        // SAFETY: lseek takes plain integers; the fd is valid for the borrow of `f`.
        let r = unsafe { libc::lseek(f.as_raw_fd(), from as libc::off_t, whence) };
        if r >= 0 {
            return Ok(Some(r as u64));
        }
        let e = io::Error::last_os_error();
        // ENXIO: no data at or after `from` (up to the end of the file).
        match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        }
    };
    let mut pos = offset;
    let mut data = 0u64;
    while pos < end {
        let Some(d) = seek(pos, libc::SEEK_DATA)? else {
            break;
        };
        if d >= end {
            break;
        }
        let h = seek(d, libc::SEEK_HOLE)?.unwrap_or(end).min(end);
        data += h - d;
        pos = h.max(d + 1);
    }
    Ok(data)
}

/// NVME_IOCTL_ADMIN_CMD: _IOWR('N', 0x41, struct nvme_admin_cmd), 72 bytes.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;
/// Get Log Page, an admin command that only reads.
const NVME_ADMIN_GET_LOG_PAGE: u8 = 0x02;
const NVME_LOG_RAE: u32 = 1 << 15;

/// struct nvme_passthru_cmd (linux/nvme_ioctl.h), as the admin ioctl takes it.
#[repr(C)]
#[derive(Default)]
struct NvmeAdminCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

const _: () = assert!(std::mem::size_of::<NvmeAdminCmd>() == 72);

/// Read the controller-wide log page `lid` of the NVMe controller open as `f` (its
/// character device, /dev/nvmeN) into `buf`: Get Log Page (02h) through the admin
/// passthrough ioctl. `buf` holds a whole number of dwords, at most 4 KiB. Read-only.
pub fn nvme_get_log_page(f: &File, lid: u8, buf: &mut [u8]) -> io::Result<()> {
    let dwords = buf.len() / 4;
    if dwords == 0 || !buf.len().is_multiple_of(4) || dwords > 1024 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // NUMDL (dwords less one) in the upper half, the log page id in the lower byte,
    // and RAE (bit 15, retain asynchronous event): reading the log must not
    // acknowledge an event the kernel's driver is waiting for.
    let cdw10 = ((dwords as u32 - 1) << 16) | NVME_LOG_RAE | lid as u32;
    nvme_admin(f, NVME_ADMIN_GET_LOG_PAGE, 0xFFFF_FFFF, cdw10, buf)
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("NVMe Get Log Page {lid:#04x}: {e}")))
}

/// Identify Controller (06h, CNS 01h) of the controller open as `f`: its 4 KiB data
/// structure (model, power-state descriptors, …). Read-only.
pub fn nvme_identify_controller(f: &File, buf: &mut [u8; 4096]) -> io::Result<()> {
    nvme_admin(f, NVME_ADMIN_IDENTIFY, 0, 1, buf).map(|_| ())
}

/// The controller's current power state (Get Features 0Ah, feature 02h, current value):
/// its number, as the power-state descriptors count them. Read-only.
pub fn nvme_power_state(f: &File) -> io::Result<u8> {
    nvme_admin(f, NVME_ADMIN_GET_FEATURES, 0, NVME_FEAT_POWER_MGMT, &mut [])
        .map(|r| (r & 0x1f) as u8)
}

const NVME_ADMIN_IDENTIFY: u8 = 0x06;
const NVME_ADMIN_GET_FEATURES: u8 = 0x0A;
const NVME_FEAT_POWER_MGMT: u32 = 0x02;

/// One admin command that only reads (Get Log Page, Identify, Get Features), with `buf`
/// for the data the controller returns (empty: none); the completion's dword 0.
fn nvme_admin(f: &File, opcode: u8, nsid: u32, cdw10: u32, buf: &mut [u8]) -> io::Result<u32> {
    let mut cmd = NvmeAdminCmd {
        opcode,
        nsid,
        addr: if buf.is_empty() {
            0
        } else {
            buf.as_mut_ptr() as u64
        },
        data_len: buf.len() as u32,
        cdw10,
        ..NvmeAdminCmd::default()
    };
    // SAFETY: the ioctl reads the 72-byte command from `cmd` (repr(C), the kernel's
    // layout, checked above) and the controller writes at most `data_len` bytes to
    // `addr`, which is `buf`, exclusively borrowed for the call and `data_len` long (no
    // data at all when it is empty: address 0, length 0).
    let rc = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            NVME_IOCTL_ADMIN_CMD as _,
            &mut cmd as *mut NvmeAdminCmd,
        )
    };
    match rc {
        0 => Ok(cmd.result),
        r if r < 0 => Err(io::Error::last_os_error()),
        // A positive value is the command's NVMe status.
        status => Err(io::Error::other(format!("status {status:#x}"))),
    }
}

/// Filesystem magic number of the filesystem holding `path` (statfs f_type).
pub fn fs_magic(path: &Path) -> io::Result<i64> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: statfs is plain old data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid out pointer.
    check(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    Ok(st.f_type as i64)
}

/// Offset alignment direct I/O on this open file needs (statx STATX_DIOALIGN, Linux ≥
/// 6.1), if the filesystem reports one.
pub fn dio_offset_align(f: &File) -> Option<u32> {
    // SAFETY: statx is plain old data; all-zero is a valid value.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the call, the path is an empty NUL-terminated
    // string (AT_EMPTY_PATH: the descriptor itself) and `st` a valid out pointer.
    let rc = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut st,
        )
    };
    (rc == 0 && st.stx_mask & libc::STATX_DIOALIGN != 0 && st.stx_dio_offset_align > 0)
        .then_some(st.stx_dio_offset_align)
}

/// A field of /proc/meminfo ("MemTotal", "MemAvailable", …) in bytes.
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()
        .map(|kib| kib * 1024)
}

/// CPU time of the whole process so far: (user, system) seconds.
pub fn process_cpu_s() -> (f64, f64) {
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid out pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_utime), t(ru.ru_stime))
}

/// Read an extended attribute of an open file (None when absent or unsupported).
pub fn get_xattr(f: &File, name: &str) -> Option<Vec<u8>> {
    let n = CString::new(name).ok()?;
    let mut buf = [0u8; 256];
    // SAFETY: `n` is NUL-terminated; `buf` is writable for its full length.
    let len = unsafe {
        libc::fgetxattr(
            f.as_raw_fd(),
            n.as_ptr(),
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len(),
        )
    };
    (len >= 0).then(|| buf[..len as usize].to_vec())
}

/// Set an extended attribute on an open file.
pub fn set_xattr(f: &File, name: &str, value: &[u8]) -> io::Result<()> {
    let n = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `n` is NUL-terminated; `value` is readable for its full length.
    check(unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            n.as_ptr(),
            value.as_ptr() as *const libc::c_void,
            value.len(),
            0,
        )
    })
}

/// CLOCK_MONOTONIC in nanoseconds, read straight from the vDSO: about 19 ns here against
/// 32 ns for `Instant::now()` plus the `Duration` arithmetic of `elapsed()`.
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPU's time-stamp counter (0 where there is none); see [`tsc_usable`].
#[inline(always)]
pub fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions; it only reads a counter.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Whether [`tsc`] may be used as a clock: x86_64 and the kernel's clocksource is "tsc".
pub fn tsc_usable() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .map(|s| s.trim() == "tsc")
        .unwrap_or(false)
}

/// The calling thread's timer slack in ns (PR_GET_TIMERSLACK): how late the kernel may
/// end its sleeps and timed waits to batch wake-ups (50 µs by default).
pub fn timer_slack_ns() -> io::Result<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointers; the result is the value or -1.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as u64)
    }
}

/// Set the calling thread's timer slack (PR_SET_TIMERSLACK; at least 1 ns).
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer, no pointers.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns.max(1) as libc::c_ulong, 0, 0, 0) })
}

/// Send `sig` to every process of the process group `pgid` (a child started in a group
/// of its own, so that whatever it started goes too).
pub fn kill_process_group(pgid: u32, sig: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid)
        .ok()
        .filter(|&p| p > 1)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes plain integers; a negative pid names a process group, and
    // `pgid > 1` rules out 0, -1 and the init group (every process, or ours).
    check(unsafe { libc::kill(-pgid, sig) })
}

/// Send `sig` to the process `pid` (without forking a `kill`: a forked child holds a
/// copy of every descriptor until it execs, e.g. a trace pipe its parent must close).
pub fn kill_process(pid: u32, sig: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .ok()
        .filter(|&p| p > 1)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes plain integers; `pid > 1` names one process, never a group,
    // every process (-1) or init.
    check(unsafe { libc::kill(pid, sig) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// What a run would find written: FIEMAP where the filesystem has it, else holes.
    fn written(f: &File, off: u64, len: u64) -> u64 {
        written_bytes_fiemap(f, off, len)
            .or_else(|_| data_bytes_seek(f, off, len))
            .unwrap()
    }

    /// A new, empty read-write file `name` in `dir`.
    fn new_file(dir: &std::path::Path, name: &str) -> File {
        File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.join(name))
            .unwrap()
    }

    #[test]
    fn a_sparse_file_shows_only_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = new_file(dir.path(), "sparse");
        f.set_len(1 << 20).unwrap();
        assert_eq!(written(&f, 0, 1 << 20), 0, "a file of holes");
        f.write_all_at(&[7u8; 65536], 256 << 10).unwrap();
        f.sync_all().unwrap();
        assert_eq!(written(&f, 0, 1 << 20), 65536);
        // A span around part of the data counts only its part.
        assert_eq!(written(&f, 288 << 10, 64 << 10), 32 << 10);
        assert_eq!(written(&f, 512 << 10, 512 << 10), 0);
        assert_eq!(data_bytes_seek(&f, 0, 1 << 20).unwrap(), 65536);
    }

    #[test]
    fn fallocated_extents_are_not_written_data() {
        let dir = tempfile::tempdir().unwrap();
        let f = new_file(dir.path(), "fallocated");
        fallocate(&f, 1 << 20).unwrap();
        // Only FIEMAP tells unwritten extents from data (tmpfs, say, has none).
        if let Ok(w) = written_bytes_fiemap(&f, 0, 1 << 20) {
            assert_eq!(w, 0);
            f.write_all_at(&[1u8; 4096], 0).unwrap();
            f.sync_all().unwrap();
            assert_eq!(written_bytes_fiemap(&f, 0, 1 << 20).unwrap(), 4096);
        }
    }
}
