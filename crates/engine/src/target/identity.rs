//! Where a block device sits, from sysfs: its transport, the chain of devices from it
//! down to the hardware (a partition's disk, what a device-mapper, md or loop device sits
//! on, a USB disk's bridge), the link to the host with the most payload it can carry, and
//! the queue depth the device accepts.
//!
//! Every function takes the sysfs root (normally `/sys`) so that the tests run on a fake
//! tree in a temporary folder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How deep stacked devices (dm over md over a loop …) are followed.
const MAX_DEPTH: u32 = 6;

/// A block device's place in the machine, recorded in every result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// The whole disk (a partition's disk), e.g. "nvme0n1".
    pub disk: String,
    /// `nvme`, `sata`, `sas`, `scsi`, `usb-uas`, `usb-bot`, `virtio`, `loop`,
    /// `device-mapper`, `md`, `nbd`, `zram`, `brd`, `pmem`, `scsi_debug` or `other`.
    pub transport: String,
    /// For NVMe: how the controller is reached (`pcie`, `tcp`, `rdma`, `fc`, `loop`).
    pub nvme_transport: Option<String>,
    /// From the device named down to the hardware (or the file) it rests on.
    pub chain: Vec<ChainLink>,
    /// The link to the host (of the device itself, or of the one device it sits on).
    pub link: Option<Link>,
    /// Commands the device accepts at once (SCSI `device/queue_depth`: NCQ 32 on SATA,
    /// 1 on USB bulk-only).
    pub device_queue_depth: Option<u32>,
    /// Requests the block layer queues for it (`queue/nr_requests`).
    pub block_nr_requests: Option<u32>,
    /// For a loop device: whether it reads its backing file with direct I/O
    /// (`loop/dio`); without, the page cache answers.
    pub loop_direct_io: Option<bool>,
    /// sysfs folders where the drive's sensors (hwmon) are looked for.
    #[serde(skip)]
    pub(crate) sensor_dirs: Vec<PathBuf>,
    /// The NVMe controller (e.g. "nvme0"), whose character device takes admin commands.
    #[serde(skip)]
    pub(crate) nvme_controller: Option<String>,
    /// A USB disk's serial number from its device descriptor (the only one a bulk-only
    /// disk has: usb-storage reads no VPD page).
    #[serde(skip)]
    pub(crate) usb_serial: Option<String>,
}

/// One device in the chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainLink {
    /// `partition`, a transport (the disk), `nvme_controller`, `pci_device`,
    /// `usb_bridge` or `backing_file`.
    pub kind: String,
    /// Kernel name, path, or `vendor:product` ids.
    pub name: String,
    /// More about it: a dm name, a USB product, an NVMe transport.
    pub detail: Option<String>,
}

/// The link between the device and the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// `pcie`, `sata` or `usb`.
    pub kind: String,
    pub pcie_current_gt_per_s: Option<f64>,
    pub pcie_current_width_lanes: Option<u32>,
    pub pcie_max_gt_per_s: Option<f64>,
    pub pcie_max_width_lanes: Option<u32>,
    /// Negotiated SATA speed (`sata_spd`).
    pub sata_gbit_per_s: Option<f64>,
    /// Negotiated SAS speed of the phy the disk is reached through
    /// (`sas_phy/…/negotiated_linkrate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sas_gbit_per_s: Option<f64>,
    /// The USB device's signalling speed (`speed`).
    pub usb_mbit_per_s: Option<f64>,
    /// Each direction has its own lanes (PCIe, USB 3): reads and writes do not share.
    pub full_duplex: bool,
    /// The most payload the link carries in one direction (see [`Link::ceiling`]).
    pub ceiling_bytes_per_s: Option<f64>,
}

impl Link {
    fn new(kind: &str, full_duplex: bool) -> Link {
        Link {
            kind: kind.into(),
            pcie_current_gt_per_s: None,
            pcie_current_width_lanes: None,
            pcie_max_gt_per_s: None,
            pcie_max_width_lanes: None,
            sata_gbit_per_s: None,
            sas_gbit_per_s: None,
            usb_mbit_per_s: None,
            full_duplex,
            ceiling_bytes_per_s: None,
        }
    }

    /// The payload ceiling: the line rate less its line encoding, which no payload can
    /// exceed. PCIe 1-2 and SATA and USB 5 Gb/s encode 8b/10b (80 %); PCIe 3-5 128b/130b;
    /// PCIe 6 FLITs carry 242 of 256 bytes; USB 10 and 20 Gb/s 128b/132b; USB 2 is
    /// counted at its raw 480 Mb/s. Protocol headers (TLPs, FISes, UAS/BOT wrappers) cost
    /// another 5-20 %, so real drives stay well below: a result above it is impossible
    /// for the link, and only such a result is flagged.
    fn ceiling(&self) -> Option<f64> {
        let gbit = match self.kind.as_str() {
            "pcie" => {
                let gt = self.pcie_current_gt_per_s?;
                let enc = match gt {
                    g if g <= 5.0 => 0.8,
                    g if g <= 32.0 => 128.0 / 130.0,
                    _ => 242.0 / 256.0,
                };
                gt * self.pcie_current_width_lanes? as f64 * enc
            }
            "sata" => self.sata_gbit_per_s? * 0.8,
            // SAS up to 12 Gb/s encodes 8b/10b; 22.5 Gb/s SAS-4 128b/150b.
            "sas" => {
                let g = self.sas_gbit_per_s?;
                g * if g <= 12.0 { 0.8 } else { 128.0 / 150.0 }
            }
            "usb" => {
                let mbit = self.usb_mbit_per_s?;
                let enc = match mbit {
                    m if m < 5000.0 => 1.0,
                    m if m < 10000.0 => 0.8,
                    _ => 128.0 / 132.0,
                };
                mbit / 1000.0 * enc
            }
            _ => return None,
        };
        Some(gbit * 1e9 / 8.0)
    }

    /// What the link is, in words: "PCIe 8 GT/s x4", "SATA 6 Gb/s", "USB 5000 Mb/s".
    pub fn describe(&self) -> String {
        let n = |v: Option<f64>| v.map_or("?".into(), |x| format!("{x}"));
        match self.kind.as_str() {
            "pcie" => format!(
                "PCIe {} GT/s x{}",
                n(self.pcie_current_gt_per_s),
                self.pcie_current_width_lanes
                    .map_or("?".into(), |w| w.to_string())
            ),
            "sata" => format!("SATA {} Gb/s", n(self.sata_gbit_per_s)),
            "sas" => format!("SAS {} Gb/s", n(self.sas_gbit_per_s)),
            "usb" => format!("USB {} Mb/s", n(self.usb_mbit_per_s)),
            k => k.to_string(),
        }
    }
}

impl DeviceIdentity {
    /// How the drive is connected, in the words reviews use: "USB 3.2 Gen 2, UAS",
    /// "USB 2.0, BOT", "PCIe 8 GT/s x4", "SATA 6 Gb/s", "SAS 12 Gb/s"; None for devices
    /// with no link of their own (loop, device-mapper over several disks, …).
    pub fn connection(&self) -> Option<String> {
        let link = self.link.as_ref();
        let usb = |mode: &str| {
            let gen = match link.and_then(|l| l.usb_mbit_per_s) {
                Some(m) if m <= 12.0 => "USB 1.1".to_string(),
                Some(m) if m <= 480.0 => "USB 2.0".to_string(),
                Some(m) if m <= 5000.0 => "USB 3.2 Gen 1".to_string(),
                Some(m) if m <= 10000.0 => "USB 3.2 Gen 2".to_string(),
                Some(m) if m <= 20000.0 => "USB 3.2 Gen 2x2".to_string(),
                Some(m) => format!("USB4 {} Gb/s", m / 1000.0),
                None => "USB".to_string(),
            };
            format!("{gen}, {mode}")
        };
        match self.transport.as_str() {
            "usb-uas" => Some(usb("UAS")),
            "usb-bot" => Some(usb("BOT")),
            _ => link.map(Link::describe),
        }
    }
}

/// Identity of the block device numbered `major:minor`, under sysfs root `root`.
pub fn identify(root: &Path, major: u32, minor: u32) -> Option<DeviceIdentity> {
    if major == 0 {
        // An anonymous device (btrfs, overlayfs, tmpfs): no block device to name.
        return None;
    }
    let node = root
        .join(format!("dev/block/{major}:{minor}"))
        .canonicalize()
        .ok()?;
    Some(identify_node(root, &node, 0))
}

fn identify_node(root: &Path, node: &Path, depth: u32) -> DeviceIdentity {
    let mut chain = Vec::new();
    let disk = if node.join("partition").exists() {
        chain.push(link_of("partition", base(node), None));
        node.parent().unwrap_or(node).to_path_buf()
    } else {
        node.to_path_buf()
    };
    let name = base(&disk);
    let dev = disk.join("device").canonicalize().ok();
    let transport = transport_of(&name, dev.as_deref());
    let mut id = DeviceIdentity {
        disk: name.clone(),
        transport: transport.clone(),
        device_queue_depth: read_num(disk.join("device/queue_depth")),
        block_nr_requests: read_num(disk.join("queue/nr_requests")),
        ..DeviceIdentity::default()
    };
    chain.push(link_of(&transport, name, read(disk.join("dm/name"))));
    id.chain = chain;
    if let Some(dev) = &dev {
        id.sensor_dirs.push(dev.clone());
    }
    match transport.as_str() {
        "nvme" => nvme_details(&mut id, dev.as_deref()),
        "usb-uas" | "usb-bot" => usb_details(&mut id, dev.as_deref()),
        "sata" => id.link = dev.as_deref().and_then(sata_link),
        "sas" => id.link = dev.as_deref().and_then(sas_link),
        "loop" => loop_details(root, &mut id, &disk, depth),
        "device-mapper" | "md" => stacked_details(root, &mut id, &disk, depth),
        _ => {}
    }
    id
}

fn link_of(kind: &str, name: String, detail: Option<String>) -> ChainLink {
    ChainLink {
        kind: kind.into(),
        name,
        detail,
    }
}

fn base(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_num<T: std::str::FromStr>(p: impl AsRef<Path>) -> Option<T> {
    read(p)?.parse().ok()
}

/// The leading number of a sysfs value such as "8.0 GT/s PCIe" or "6.0 Gbps".
fn leading_f64(s: &str) -> Option<f64> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    s[..end].parse().ok()
}

/// Named devices first (by the kernel's names), then by where the device hangs.
fn transport_of(name: &str, dev: Option<&Path>) -> String {
    const BY_NAME: [(&str, &str); 8] = [
        ("loop", "loop"),
        ("dm-", "device-mapper"),
        ("md", "md"),
        ("nbd", "nbd"),
        ("zram", "zram"),
        ("ram", "brd"),
        ("pmem", "pmem"),
        ("nvme", "nvme"),
    ];
    if let Some((_, t)) = BY_NAME.iter().find(|(p, _)| name.starts_with(p)) {
        return t.to_string();
    }
    let Some(dev) = dev else {
        return "other".into();
    };
    let comps: Vec<String> = dev
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let has = |f: &dyn Fn(&str) -> bool| comps.iter().any(|c| f(c));
    if let Some(intf) = usb_interface(dev) {
        return match read_link_base(&intf.join("driver")).as_deref() {
            Some("uas") => "usb-uas".into(),
            _ => "usb-bot".into(),
        };
    }
    if has(&|c| c.starts_with("virtio")) {
        "virtio".into()
    } else if has(&|c| is_numbered(c, "ata")) {
        "sata".into()
    } else if has(&|c| c.starts_with("end_device-") || c.starts_with("expander-")) {
        "sas".into()
    } else if read(dev.join("model")).as_deref() == Some("scsi_debug") {
        "scsi_debug".into()
    } else if dev.join("scsi_level").exists() {
        "scsi".into()
    } else {
        "other".into()
    }
}

/// `c` is `prefix` followed by digits only ("ata1").
fn is_numbered(c: &str, prefix: &str) -> bool {
    c.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn read_link_base(p: &Path) -> Option<String> {
    std::fs::read_link(p).ok().map(|t| base(&t))
}

/// The USB interface folder ("2-2:1.0") above `dev`, if it hangs off USB.
fn usb_interface(dev: &Path) -> Option<PathBuf> {
    dev.ancestors()
        .find(|a| {
            let n = base(a);
            let Some((port, cfg)) = n.split_once(':') else {
                return false;
            };
            port.contains('-')
                && cfg.contains('.')
                && cfg.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
        .map(Path::to_path_buf)
}

fn nvme_details(id: &mut DeviceIdentity, dev: Option<&Path>) {
    let Some(ctrl) = dev.and_then(nvme_controller) else {
        return;
    };
    let name = base(&ctrl);
    id.nvme_transport = read(ctrl.join("transport"));
    id.chain.push(link_of(
        "nvme_controller",
        name.clone(),
        id.nvme_transport.clone(),
    ));
    id.nvme_controller = Some(name);
    if !id.sensor_dirs.contains(&ctrl) {
        id.sensor_dirs.push(ctrl.clone());
    }
    let Ok(pci) = ctrl.join("device").canonicalize() else {
        return;
    };
    if pci.join("current_link_speed").exists() {
        let ids = read(pci.join("vendor")).zip(read(pci.join("device")));
        let detail = ids.map(|(v, d)| format!("{}:{}", hex(&v), hex(&d)));
        id.chain.push(link_of("pci_device", base(&pci), detail));
        id.link = Some(pcie_link(&pci));
    }
}

fn hex(s: &str) -> &str {
    s.trim_start_matches("0x")
}

/// The controller of a namespace's `device`: the device itself, or (multipath) the
/// first controller of its subsystem.
fn nvme_controller(dev: &Path) -> Option<PathBuf> {
    if dev.join("transport").exists() {
        return Some(dev.to_path_buf());
    }
    let mut ctrls: Vec<PathBuf> = std::fs::read_dir(dev)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_numbered(&base(p), "nvme") && p.join("transport").exists())
        .collect();
    ctrls.sort();
    ctrls.into_iter().next()
}

fn pcie_link(pci: &Path) -> Link {
    let mut l = Link::new("pcie", true);
    l.pcie_current_gt_per_s = read(pci.join("current_link_speed")).and_then(|s| leading_f64(&s));
    l.pcie_current_width_lanes = lanes(pci.join("current_link_width"));
    l.pcie_max_gt_per_s = read(pci.join("max_link_speed")).and_then(|s| leading_f64(&s));
    l.pcie_max_width_lanes = lanes(pci.join("max_link_width"));
    l.ceiling_bytes_per_s = l.ceiling();
    l
}

/// A link width; 0 and 255 are what a function with no link of its own (an integrated
/// endpoint, QEMU's q35 devices) reports: unknown.
fn lanes(p: PathBuf) -> Option<u32> {
    read_num(p).filter(|&w: &u32| w > 0 && w < 255)
}

fn usb_details(id: &mut DeviceIdentity, dev: Option<&Path>) {
    let Some(usb) = dev
        .and_then(usb_interface)
        .and_then(|i| i.parent().map(Path::to_path_buf))
    else {
        return;
    };
    let ids = read(usb.join("idVendor")).zip(read(usb.join("idProduct")));
    let product = [read(usb.join("manufacturer")), read(usb.join("product"))]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    if let Some((v, p)) = ids {
        let detail = (!product.is_empty()).then_some(product);
        id.chain
            .push(link_of("usb_bridge", format!("{v}:{p}"), detail));
    }
    id.usb_serial = read(usb.join("serial"));
    let mbit = read(usb.join("speed")).and_then(|s| leading_f64(&s));
    // SuperSpeed carries both directions at once, but bulk-only transport runs one
    // command at a time: only UAS reads and writes together.
    let both = mbit.is_some_and(|m| m >= 5000.0) && id.transport == "usb-uas";
    let mut l = Link::new("usb", both);
    l.usb_mbit_per_s = mbit;
    l.ceiling_bytes_per_s = l.ceiling();
    id.link = Some(l);
}

/// The negotiated speed of the SATA link of the port ("ataN") `dev` hangs off.
fn sata_link(dev: &Path) -> Option<Link> {
    let port = dev.ancestors().find(|a| is_numbered(&base(a), "ata"))?;
    let mut links: Vec<PathBuf> = std::fs::read_dir(port)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_numbered(&base(p), "link"))
        .collect();
    links.sort();
    let spd = links.iter().find_map(|l| {
        let s = read(l.join("ata_link").join(base(l)).join("sata_spd"))?;
        leading_f64(&s)
    });
    let mut l = Link::new("sata", false);
    l.sata_gbit_per_s = spd;
    l.ceiling_bytes_per_s = l.ceiling();
    Some(l)
}

/// The negotiated speed of the SAS phy `dev` is reached through: the phys of the
/// nearest SAS port above it (the HBA's, or an expander's).
fn sas_link(dev: &Path) -> Option<Link> {
    let port = dev.ancestors().find(|a| base(a).starts_with("port-"))?;
    let mut phys: Vec<PathBuf> = std::fs::read_dir(port)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| base(p).starts_with("phy-"))
        .collect();
    phys.sort();
    let rate = phys.iter().find_map(|p| {
        let s = read(p.join("sas_phy").join(base(p)).join("negotiated_linkrate"))?;
        leading_f64(&s)
    })?;
    let mut l = Link::new("sas", true);
    l.sas_gbit_per_s = Some(rate);
    l.ceiling_bytes_per_s = l.ceiling();
    Some(l)
}

fn loop_details(root: &Path, id: &mut DeviceIdentity, disk: &Path, depth: u32) {
    id.loop_direct_io = read(disk.join("loop/dio")).map(|s| s == "1");
    let Some(backing) = read(disk.join("loop/backing_file")) else {
        return;
    };
    id.chain
        .push(link_of("backing_file", backing.clone(), None));
    // The device the backing file lives on (or the block device it is).
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = std::fs::metadata(&backing) else {
        return;
    };
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    inherit_lower(root, id, &[(libc::major(dev), libc::minor(dev))], depth);
}

/// A device-mapper or md device: the devices under it (`slaves`).
fn stacked_details(root: &Path, id: &mut DeviceIdentity, disk: &Path, depth: u32) {
    let mut lower: Vec<(u32, u32)> = std::fs::read_dir(disk.join("slaves"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let d = read(e.path().join("dev"))?;
            let (a, b) = d.split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    lower.sort();
    inherit_lower(root, id, &lower, depth);
}

/// Append the chains of the devices under `id`; with exactly one, its link and sensors
/// are this device's too (a partition, dm-linear or a loop device over one drive).
fn inherit_lower(root: &Path, id: &mut DeviceIdentity, lower: &[(u32, u32)], depth: u32) {
    if depth >= MAX_DEPTH {
        return;
    }
    for &(ma, mi) in lower {
        let node = root.join(format!("dev/block/{ma}:{mi}"));
        let Ok(node) = node.canonicalize() else {
            continue;
        };
        let low = identify_node(root, &node, depth + 1);
        id.chain.extend(low.chain.iter().cloned());
        if lower.len() == 1 {
            id.link = low.link;
            id.sensor_dirs = low.sensor_dirs;
            id.nvme_controller = low.nvme_controller;
        }
    }
}

/// What a link carries of `read` and `write` bytes per second: the busier direction of a
/// full-duplex link, both together on a half-duplex one; with what that is in words.
fn link_load(link: &Link, read: f64, write: f64) -> (&'static str, f64) {
    if link.full_duplex {
        if read >= write {
            ("reads", read)
        } else {
            ("writes", write)
        }
    } else {
        ("reads and writes together", read + write)
    }
}

/// Whether `read` and `write` bytes per second are more than the device's link carries
/// (false when the link or its ceiling is unknown).
pub fn over_link_ceiling(id: &DeviceIdentity, read: f64, write: f64) -> bool {
    id.link.as_ref().is_some_and(|l| {
        l.ceiling_bytes_per_s
            .is_some_and(|c| link_load(l, read, write).1 > c)
    })
}

/// A result's bandwidth the link cannot have carried, as a note: `read` and `write` in
/// bytes per second.
pub fn link_ceiling_note(id: &DeviceIdentity, read: f64, write: f64) -> Option<String> {
    let link = id.link.as_ref()?;
    let ceiling = link.ceiling_bytes_per_s?;
    let (what, rate) = link_load(link, read, write);
    (rate > ceiling).then(|| {
        format!(
            "Faster than the link allows: {what} at {:.0} MB/s through {} ({}), which carries at most {:.0} MB/s. A cache or compression answered, not the drive.",
            rate / 1e6,
            link.describe(),
            id.disk,
            ceiling / 1e6
        )
    })
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
