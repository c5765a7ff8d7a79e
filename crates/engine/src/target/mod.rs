//! Targets: what I/O is done against — a regular file, a block device, nothing (`null`),
//! or a simulated device — with their identity and the safety rules for writing.
//!
//! Safety rules (drivelab must never lose a user's data):
//! - a regular file drivelab did not create (no marker) is only read, unless `overwrite`;
//! - writes to a block device need `destructive` naming that very device, and are refused
//!   even then while it or any of its partitions is mounted, used as swap or held by
//!   another device; the device is opened with O_EXCL so the kernel refuses too.

mod block;
mod file;
pub mod identity;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{DeviceModel, ModelInfo};
use crate::sensor::{SensorReading, SensorSource};
pub use block::in_use_now;
pub use file::{marker_path, random_token, CreatedFile, TEST_FILE_NAME, TEST_FILE_SIZE};

/// What kind of thing a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
    Null,
    Simulated,
}

/// Identity and geometry of a target, recorded in every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub kind: TargetKind,
    pub path: String,
    /// Bytes the target holds; null when unknown (a block device named by an imported
    /// result). Every target drivelab opens knows it. An old bundle's 0 (fio imports
    /// wrote 0 for unknown) is read as unknown.
    #[serde(deserialize_with = "zero_is_unknown")]
    pub capacity_bytes: Option<u64>,
    pub logical_sector_bytes: u32,
    pub physical_sector_bytes: u32,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// Filesystem type holding a file target (e.g. "ext4", "tmpfs").
    pub filesystem: Option<String>,
    /// Set when the target lives in memory (tmpfs, ramfs, zram, brd, a loop device on
    /// tmpfs): then memory, not a drive, was measured. Says what it is.
    pub in_memory: Option<String>,
    /// A test file drivelab created (and may remove).
    pub created_by_drivelab: bool,
    /// For simulated targets: the model's identity.
    pub simulated: Option<ModelInfo>,
    /// Where the block device (a file's: the one under its filesystem) sits: transport,
    /// the chain down to the hardware, the link and the queue depth it accepts.
    #[serde(default)]
    pub device: Option<identity::DeviceIdentity>,
}

/// A capacity as recorded: a number, or null; 0 (what fio imports wrote for an unknown
/// capacity before it could be null) is unknown too: no target holds 0 bytes.
fn zero_is_unknown<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&c| c > 0))
}

impl TargetInfo {
    /// The capacity of a target drivelab opened (always known there); 0 only for a
    /// record whose capacity is unknown, where no span can be worked out from it.
    pub fn span_bytes(&self) -> u64 {
        self.capacity_bytes.unwrap_or(0)
    }

    fn bare(kind: TargetKind, path: String, capacity: u64, sector: u32) -> TargetInfo {
        TargetInfo {
            kind,
            path,
            capacity_bytes: Some(capacity),
            logical_sector_bytes: sector,
            physical_sector_bytes: sector,
            rotational: None,
            scheduler: None,
            model: None,
            serial: None,
            firmware: None,
            filesystem: None,
            in_memory: None,
            created_by_drivelab: false,
            simulated: None,
            device: None,
        }
    }
}

/// Which target the user named.
pub enum TargetSpec {
    /// A path (file or block device); None: the default test file in the current directory.
    Path(Option<PathBuf>),
    /// No I/O; `capacity` is the pretend size.
    Null { capacity: u64 },
    /// A simulated device.
    Model(Box<dyn DeviceModel>),
}

/// How the target will be used.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// The workload (or a preparation step) writes.
    pub write: bool,
    pub direct: bool,
    /// Write to a file drivelab did not create.
    pub overwrite: bool,
    /// `--destructive=<device>`: the block device the user allows to be written.
    pub destructive: Option<PathBuf>,
    /// Size of a test file to create when the path does not exist.
    pub create_size: u64,
}

/// An error opening a target: the message names the option to change.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetError(pub String);

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An opened target.
pub struct Target {
    pub info: TargetInfo,
    handle: Handle,
    /// A test file created by this run, to remove at the end unless kept.
    created_path: Option<PathBuf>,
    /// `created_path` was taken over from an earlier process, not created now.
    adopted: bool,
    /// A drivelab test file whose whole content has been written.
    filled: bool,
    /// Sensors attached to a real target (temperature, power, …).
    sensors: Vec<Box<dyn SensorSource>>,
    /// Notes about sensor reads between runs (a read left behind), not yet said.
    sensor_notes: Vec<String>,
    /// A file target's exclusive lock (flock), held as long as the target is open so
    /// that two runs never measure one file at once.
    #[allow(dead_code)]
    lock: Option<File>,
}

enum Handle {
    File(File),
    Null,
    Model(Box<dyn DeviceModel>),
}

impl Target {
    /// An opened target as nothing but `info` and `handle`: no test file of this run to
    /// remove, not known to be filled, no sensors yet, no lock (openers set what applies).
    fn new(info: TargetInfo, handle: Handle) -> Target {
        Target {
            info,
            handle,
            created_path: None,
            adopted: false,
            filled: false,
            sensors: Vec::new(),
            sensor_notes: Vec::new(),
            lock: None,
        }
    }

    /// Open (or create) the target named by `spec`, enforcing the safety rules.
    pub fn open(spec: TargetSpec, opts: &OpenOptions) -> Result<Target, TargetError> {
        if let Some(allowed) = &opts.destructive {
            // Like a file target (open_path): a confirmation that confirms nothing is a
            // mistake to point out, not to ignore.
            let shown = match &spec {
                TargetSpec::Null { .. } => Some("null".to_string()),
                TargetSpec::Model(m) => Some(m.info().spec),
                TargetSpec::Path(_) => None,
            };
            if let Some(shown) = shown {
                return Err(TargetError(format!(
                    "--destructive={}: the target {shown} is not a block device; --destructive confirms writes to a block device only",
                    allowed.display()
                )));
            }
        }
        match spec {
            TargetSpec::Null { capacity } => Ok(Target::new(
                TargetInfo::bare(TargetKind::Null, "null".into(), capacity, 512),
                Handle::Null,
            )),
            TargetSpec::Model(model) => {
                let mi = model.info();
                let mut info = TargetInfo::bare(
                    TargetKind::Simulated,
                    mi.spec.clone(),
                    mi.capacity_bytes,
                    mi.logical_sector_bytes,
                );
                info.physical_sector_bytes = mi.physical_sector_bytes;
                info.model = Some(mi.model.clone());
                info.simulated = Some(mi);
                Ok(Target::new(info, Handle::Model(model)))
            }
            TargetSpec::Path(p) => {
                let path = p.unwrap_or_else(|| PathBuf::from(TEST_FILE_NAME));
                open_path(&path, opts)
            }
        }
    }

    /// Bytes of `len` at `offset` of a regular file (or of a loop device's backing file)
    /// that are not on storage: holes and unwritten (fallocated) extents, which read as
    /// zeros without any I/O. None for other targets, or when the filesystem cannot say (neither FIEMAP nor SEEK_HOLE).
    pub fn unwritten_bytes(&self, offset: u64, len: u64) -> Option<u64> {
        let f = match (&self.handle, self.info.kind) {
            (Handle::File(f), TargetKind::File) => f,
            // A loop device: its backing file's holes.
            (Handle::File(f), TargetKind::BlockDevice) => {
                return block::loop_unwritten_bytes(f, offset, len)
            }
            _ => return None,
        };
        let written = crate::sys::written_bytes_fiemap(f, offset, len)
            .or_else(|_| crate::sys::data_bytes_seek(f, offset, len))
            .ok()?;
        Some(len.saturating_sub(written))
    }

    /// The opened file or device, for backends doing real I/O.
    pub fn file(&self) -> Option<&File> {
        match &self.handle {
            Handle::File(f) => Some(f),
            _ => None,
        }
    }

    /// The simulated device, if this is one.
    pub fn model_mut(&mut self) -> Option<&mut (dyn DeviceModel + 'static)> {
        match &mut self.handle {
            Handle::Model(m) => Some(m.as_mut()),
            _ => None,
        }
    }

    pub fn model(&self) -> Option<&dyn DeviceModel> {
        match &self.handle {
            Handle::Model(m) => Some(m.as_ref()),
            _ => None,
        }
    }

    /// Discard a byte range: BLKDISCARD on a block device, a punched hole in a file, the
    /// model's TRIM on a simulated device, nothing on `null`.
    pub fn discard(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        match &mut self.handle {
            Handle::File(f) => {
                if self.info.kind == TargetKind::BlockDevice {
                    crate::sys::block_discard(f, offset, len)
                } else {
                    crate::sys::punch_hole(f, offset, len)?;
                    // Holes read as zeros without touching the disk: a test file is no
                    // longer fully written, and a later read run must fill it again.
                    if len > 0 && self.filled {
                        self.filled = false;
                        self.refresh_marker(false);
                    }
                    Ok(())
                }
            }
            Handle::Null => Ok(()),
            Handle::Model(m) => {
                let now = m.now_ns();
                let done = m.discard(offset, len, now);
                m.advance_to(done);
                Ok(())
            }
        }
    }

    /// Let the target idle: real targets sleep, a simulated device advances its clock.
    pub fn idle(&mut self, ns: u64) {
        match &mut self.handle {
            Handle::Model(m) => {
                let t = m.now_ns() + ns;
                m.advance_to(t);
            }
            _ => std::thread::sleep(std::time::Duration::from_nanos(ns)),
        }
    }

    /// Attach a sensor, sampled once per interval during every later run and by
    /// [`Target::sensors`].
    pub fn add_sensor(&mut self, source: Box<dyn SensorSource>) {
        self.sensors.push(source);
    }

    /// Sensor values now: a simulated device's own, or those of the attached sources
    /// (stamped 0: outside a run there is no run clock). A read that does not return
    /// within [`FINISH_WAIT`](crate::sensor::sampler::FINISH_WAIT) is left behind with
    /// the sources, and a note waits in [`Target::take_sensor_notes`].
    pub fn sensors(&mut self) -> Vec<SensorReading> {
        match &mut self.handle {
            Handle::Model(m) => {
                let now = m.now_ns();
                m.sensors(now)
            }
            _ => {
                use crate::sensor::sampler::{sample_once, FINISH_WAIT};
                let sources = std::mem::take(&mut self.sensors);
                let (back, notes, readings) = sample_once(sources, 0, FINISH_WAIT);
                self.sensors = back;
                self.sensor_notes.extend(notes);
                readings
            }
        }
    }

    /// What happened to the sensors between runs (a read left behind), said once.
    pub fn take_sensor_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.sensor_notes)
    }

    /// Keep only the attached sources `choice` names (`--sensors`: `auto`, `none`, or a
    /// comma list of `hwmon`, `nvme`).
    pub fn select_sensors(&mut self, choice: &str) -> Result<(), String> {
        let kinds = crate::sensor::parse_choice(choice).map_err(|e| format!("--sensors: {e}"))?;
        if let Some(kinds) = kinds {
            self.sensors.retain(|s| kinds.iter().any(|k| k == s.kind()));
        }
        Ok(())
    }

    /// What the attached sources read, one line each (for a line at the start of a run).
    pub fn sensor_sources(&self) -> Vec<String> {
        self.sensors.iter().map(|s| s.describe()).collect()
    }

    /// Lend the attached sources to a run (given back with [`Target::return_sensors`]).
    pub(crate) fn take_sensors(&mut self) -> Vec<Box<dyn SensorSource>> {
        std::mem::take(&mut self.sensors)
    }

    pub(crate) fn return_sensors(&mut self, sensors: Vec<Box<dyn SensorSource>>) {
        self.sensors = sensors;
    }

    /// Whether the file was created by this run (and will be removed by [`Target::close`]).
    pub fn created_now(&self) -> bool {
        self.created_path.is_some() && !self.adopted
    }

    /// Record that a drivelab test file's content is now fully written.
    pub fn mark_filled(&mut self) {
        if let (Handle::File(f), TargetKind::File) = (&self.handle, self.info.kind) {
            if self.info.created_by_drivelab {
                self.filled = true;
                let _ = file::write_marker(f, Path::new(&self.info.path), true, false);
            }
        }
    }

    /// Record that a drivelab test file is no longer fully written (a replay punched
    /// holes in it): a later read run fills it again.
    pub fn forget_filled(&mut self) {
        if self.filled {
            self.filled = false;
            self.refresh_marker(false);
        }
    }

    /// Refresh a drivelab test file's marker to the file as it is now (after drivelab's
    /// own writes), so that a later process still recognises it. A process killed in the
    /// middle of writing leaves the marker stale: the file is then only read unless
    /// `--overwrite`, which errs on the side of the user's data.
    ///
    /// `writing`: a run is about to write the file. Until the marker is refreshed again,
    /// it is recognised by device and inode alone, so a run killed while writing can be
    /// resumed.
    pub fn refresh_marker(&self, writing: bool) {
        if let (Handle::File(f), TargetKind::File) = (&self.handle, self.info.kind) {
            if self.info.created_by_drivelab {
                let _ = file::write_marker(f, Path::new(&self.info.path), self.filled, writing);
            }
        }
    }

    /// Whether a drivelab test file is known to be fully written (so reads hit data).
    pub fn is_filled(&self) -> bool {
        match self.info.kind {
            TargetKind::File => self.filled,
            _ => true,
        }
    }

    /// Close the target: remove a test file created by this run unless `keep`; a test
    /// file that stays gets its marker refreshed to its identity as drivelab leaves it.
    pub fn close(self, keep: bool) -> std::io::Result<()> {
        let Target {
            handle,
            created_path,
            info,
            filled,
            ..
        } = self;
        let Handle::File(f) = handle else {
            return Ok(());
        };
        match created_path {
            Some(p) if !keep => file::remove(&f, &p),
            _ if info.kind == TargetKind::File && info.created_by_drivelab => {
                file::write_marker(&f, Path::new(&info.path), filled, false)
            }
            _ => Ok(()),
        }
    }

    /// Take over a drivelab test file an earlier process created (a resumed suite), so
    /// that [`Target::close`] removes it like one created now. Only a file carrying
    /// drivelab's marker is ever taken over.
    pub fn adopt_test_file(&mut self) {
        if self.info.kind == TargetKind::File
            && self.info.created_by_drivelab
            && self.created_path.is_none()
        {
            self.created_path = Some(PathBuf::from(&self.info.path));
            self.adopted = true;
        }
    }

    /// The test file [`Target::close`] would remove, as something another thread can
    /// remove on its own (a second Ctrl-C that cannot wait for the run to drain).
    pub fn created_file(&self) -> Option<CreatedFile> {
        match (&self.handle, &self.created_path) {
            (Handle::File(f), Some(p)) => file::CreatedFile::of(f, p).ok(),
            _ => None,
        }
    }
}

fn open_path(path: &Path, opts: &OpenOptions) -> Result<Target, TargetError> {
    let shown = path.display();
    let md = std::fs::metadata(path);
    if let Some(allowed) = &opts.destructive {
        // It confirms writing to one block device: anything else is a mistake to point out,
        // not to ignore (a mistyped device path would otherwise become a new test file).
        use std::os::unix::fs::FileTypeExt;
        if !md.as_ref().is_ok_and(|m| m.file_type().is_block_device()) {
            return Err(TargetError(format!(
                "--destructive={}: the target {shown} is not a block device; --destructive confirms writes to a block device only",
                allowed.display()
            )));
        }
    }
    match md {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Ok(to) = std::fs::read_link(path) {
                // A test file is never made through a link (nor where it leads).
                return Err(TargetError(format!(
                    "target {shown} is a symbolic link to {}, which does not exist; give an existing file, or a path that names nothing yet",
                    to.display()
                )));
            }
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err(TargetError(format!(
                    "target {shown}: no such file or directory (its directory {} does not exist)",
                    parent.display()
                )));
            }
            if on_devtmpfs(parent) {
                return Err(TargetError(format!(
                    "target {shown}: no such device (drivelab does not create test files among the device nodes in {})",
                    parent.display()
                )));
            }
            file::create(path, opts).map(with_drive_sensors)
        }
        Err(e) => Err(TargetError(format!("target {shown}: {e}"))),
        Ok(md) => {
            use std::os::unix::fs::FileTypeExt;
            let ft = md.file_type();
            if ft.is_dir() {
                return Err(TargetError(format!(
                    "target {shown} is a directory; give a file path (e.g. {}/{TEST_FILE_NAME}) or a block device",
                    path.display()
                )));
            }
            if ft.is_block_device() {
                block::open(path, opts).map(with_drive_sensors)
            } else if ft.is_file() {
                file::open_existing(path, opts).map(with_drive_sensors)
            } else {
                Err(TargetError(format!(
                    "target {shown} is neither a regular file nor a block device"
                )))
            }
        }
    }
}

/// Attach the sensors of the drive under a path target (its hwmon devices, an NVMe
/// controller's SMART log), found through sysfs.
fn with_drive_sensors(mut t: Target) -> Target {
    if let Some(id) = &t.info.device {
        t.sensors = crate::sensor::discover(Path::new("/sys"), Path::new("/dev"), id);
    }
    t
}

/// Whether `dir` is on devtmpfs (/dev): a path there that does not exist is a device
/// that is not there, not a place for a test file.
fn on_devtmpfs(dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let Ok(mi) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    // The deepest mount point holding `dir` decides.
    let mut best: Option<(usize, bool)> = None;
    for line in mi.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = f.iter().position(|&x| x == "-") else {
            continue;
        };
        let (Some(mnt), Some(fstype)) = (f.get(4), f.get(sep + 1)) else {
            continue;
        };
        let mnt = mnt.replace("\\040", " ");
        if dir.starts_with(&mnt) && best.is_none_or(|(len, _)| mnt.len() >= len) {
            best = Some((mnt.len(), *fstype == "devtmpfs"));
        }
    }
    best.is_some_and(|(_, dev)| dev)
}

pub(crate) fn open_error(path: &Path, e: &std::io::Error, direct: bool) -> TargetError {
    if e.raw_os_error() == Some(libc::EINVAL) && direct {
        return TargetError(format!(
            "target {}: the filesystem does not support O_DIRECT; pass --direct=0",
            path.display()
        ));
    }
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        return TargetError(format!("target {}: permission denied", path.display()));
    }
    TargetError(format!("target {}: {e}", path.display()))
}

/// Filesystem names by statfs magic, and whether they live in memory.
pub(crate) fn fs_name(magic: i64) -> (&'static str, bool) {
    match magic {
        0x0102_1994 => ("tmpfs", true),
        0x8584_58f6 => ("ramfs", true),
        0xEF53 => ("ext4", false),
        0x5846_5342 => ("xfs", false),
        0x9123_683E => ("btrfs", false),
        0xF2F5_2010 => ("f2fs", false),
        0x2FC1_2FC1 => ("zfs", false),
        0x794c_7630 => ("overlayfs", false),
        0x6969 => ("nfs", false),
        0x4d44 => ("vfat", false),
        0x5346_544e => ("ntfs", false),
        0x6573_5546 => ("fuse", false),
        _ => ("unknown", false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_with_the_null_target_is_refused_not_ignored() {
        let opts = OpenOptions {
            destructive: Some(PathBuf::from("/dev/sda")),
            ..OpenOptions::default()
        };
        let e = Target::open(TargetSpec::Null { capacity: 1 << 30 }, &opts)
            .err()
            .expect("refused");
        assert_eq!(
            e.0,
            "--destructive=/dev/sda: the target null is not a block device; \
             --destructive confirms writes to a block device only"
        );
    }
}
