//! Identity on fake sysfs trees, laid out as the kernel lays them out.

use super::*;

/// A fake sysfs tree in a temporary folder.
struct Fake(tempfile::TempDir);

impl Fake {
    fn new() -> Fake {
        Fake(tempfile::tempdir().unwrap())
    }
    fn root(&self) -> &Path {
        self.0.path()
    }
    fn file(&self, rel: &str, content: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{content}\n")).unwrap();
    }
    fn dir(&self, rel: &str) {
        std::fs::create_dir_all(self.root().join(rel)).unwrap();
    }
    /// `rel` is a symlink to the folder `target` (both under the root).
    fn link(&self, rel: &str, target: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        self.dir(target);
        std::os::unix::fs::symlink(self.root().join(target), p).unwrap();
    }
    /// The block device `dev` ("8:0") at `path`, its `device` link to `device`.
    fn block(&self, dev: &str, path: &str, device: Option<&str>) {
        self.file(&format!("{path}/dev"), dev);
        self.file(&format!("{path}/queue/nr_requests"), "64");
        self.link(&format!("dev/block/{dev}"), path);
        if let Some(d) = device {
            self.link(&format!("{path}/device"), d);
        }
    }
    fn id(&self, major: u32, minor: u32) -> DeviceIdentity {
        identify(self.root(), major, minor).expect("identified")
    }
}

fn kinds(id: &DeviceIdentity) -> Vec<&str> {
    id.chain.iter().map(|c| c.kind.as_str()).collect()
}

const PCI: &str = "devices/pci0000:00/0000:00:04.0";

fn nvme_tree(f: &Fake) {
    f.file(&format!("{PCI}/current_link_speed"), "8.0 GT/s PCIe");
    f.file(&format!("{PCI}/current_link_width"), "4");
    f.file(&format!("{PCI}/max_link_speed"), "16.0 GT/s PCIe");
    f.file(&format!("{PCI}/max_link_width"), "4");
    f.file(&format!("{PCI}/vendor"), "0x1b36");
    f.file(&format!("{PCI}/device"), "0x0010");
    let ctrl = format!("{PCI}/nvme/nvme0");
    f.file(&format!("{ctrl}/transport"), "pcie");
    f.link(&format!("{ctrl}/device"), PCI);
    let ns = format!("{ctrl}/nvme0n1");
    // (QEMU's q35 NVMe, an integrated endpoint, says "Unknown" and widths 0 and 255.)
    f.block("259:0", &ns, Some(&ctrl));
    f.file(&format!("{ns}/nvme0n1p1/partition"), "1");
    f.block("259:1", &format!("{ns}/nvme0n1p1"), None);
}

#[test]
fn an_nvme_partition_names_its_namespace_controller_and_pcie_link() {
    let f = Fake::new();
    nvme_tree(&f);
    let id = f.id(259, 1);
    assert_eq!(id.transport, "nvme");
    assert_eq!(id.disk, "nvme0n1");
    assert_eq!(id.nvme_transport.as_deref(), Some("pcie"));
    assert_eq!(
        kinds(&id),
        ["partition", "nvme", "nvme_controller", "pci_device"]
    );
    assert_eq!(id.chain[0].name, "nvme0n1p1");
    assert_eq!(id.chain[3].name, "0000:00:04.0");
    assert_eq!(id.chain[3].detail.as_deref(), Some("1b36:0010"));
    assert_eq!(id.nvme_controller.as_deref(), Some("nvme0"));
    assert_eq!(id.block_nr_requests, Some(64));
    assert_eq!(id.device_queue_depth, None);
    let l = id.link.unwrap();
    assert_eq!(l.kind, "pcie");
    assert_eq!(
        (l.pcie_current_gt_per_s, l.pcie_current_width_lanes),
        (Some(8.0), Some(4))
    );
    assert_eq!(
        (l.pcie_max_gt_per_s, l.pcie_max_width_lanes),
        (Some(16.0), Some(4))
    );
    assert!(l.full_duplex);
    // 8 GT/s x4, 128b/130b: 3.94 GB/s.
    let c = l.ceiling_bytes_per_s.unwrap();
    assert!((c - 32e9 * 128.0 / 130.0 / 8.0).abs() < 1.0, "{c}");
}

#[test]
fn an_integrated_endpoint_has_no_known_link_speed_or_width() {
    let f = Fake::new();
    nvme_tree(&f);
    f.file(&format!("{PCI}/current_link_speed"), "Unknown");
    f.file(&format!("{PCI}/current_link_width"), "0");
    f.file(&format!("{PCI}/max_link_width"), "255");
    let l = f.id(259, 0).link.unwrap();
    assert_eq!(l.pcie_current_gt_per_s, None);
    assert_eq!(l.pcie_current_width_lanes, None);
    assert_eq!(l.pcie_max_width_lanes, None);
    assert_eq!(l.ceiling_bytes_per_s, None);
}

#[test]
fn nvme_over_fabrics_has_no_pcie_link() {
    let f = Fake::new();
    let ctrl = "devices/virtual/nvme-fabrics/ctl/nvme1";
    f.file(&format!("{ctrl}/transport"), "tcp");
    f.block("259:5", &format!("{ctrl}/nvme1n1"), Some(ctrl));
    let id = f.id(259, 5);
    assert_eq!(id.transport, "nvme");
    assert_eq!(id.nvme_transport.as_deref(), Some("tcp"));
    assert_eq!(id.link, None);
}

const ATA: &str = "devices/pci0000:00/0000:00:1f.2/ata1";

fn sata_tree(f: &Fake) {
    let sdev = format!("{ATA}/host0/target0:0:0/0:0:0:0");
    f.file(&format!("{sdev}/queue_depth"), "32");
    f.file(&format!("{sdev}/scsi_level"), "6");
    f.file(&format!("{ATA}/link1/ata_link/link1/sata_spd"), "6.0 Gbps");
    f.block("8:0", &format!("{sdev}/block/sda"), Some(&sdev));
}

#[test]
fn a_sata_disk_has_its_negotiated_speed_and_ncq_depth() {
    let f = Fake::new();
    sata_tree(&f);
    let id = f.id(8, 0);
    assert_eq!(id.transport, "sata");
    assert_eq!(id.device_queue_depth, Some(32));
    let l = id.link.unwrap();
    assert_eq!((l.kind.as_str(), l.sata_gbit_per_s), ("sata", Some(6.0)));
    assert!(!l.full_duplex);
    // 6 Gb/s, 8b/10b: 600 MB/s.
    assert!((l.ceiling_bytes_per_s.unwrap() - 600e6).abs() < 1.0);
}

#[test]
fn a_sas_disk_has_its_phys_negotiated_rate() {
    let f = Fake::new();
    let port = "devices/pci0000:00/0000:00:05.0/host2/port-2:0";
    f.file(
        &format!("{port}/phy-2:0/sas_phy/phy-2:0/negotiated_linkrate"),
        "12.0 Gbit",
    );
    let sdev = format!("{port}/end_device-2:0/target2:0:0/2:0:0:0");
    f.file(&format!("{sdev}/queue_depth"), "254");
    f.file(&format!("{sdev}/scsi_level"), "7");
    f.block("8:32", &format!("{sdev}/block/sdc"), Some(&sdev));
    let id = f.id(8, 32);
    assert_eq!(id.transport, "sas");
    assert_eq!(id.device_queue_depth, Some(254));
    let l = id.link.unwrap();
    assert_eq!((l.kind.as_str(), l.sas_gbit_per_s), ("sas", Some(12.0)));
    assert!(l.full_duplex);
    // 12 Gb/s, 8b/10b: 1200 MB/s each way.
    assert!((l.ceiling_bytes_per_s.unwrap() - 1200e6).abs() < 1.0);
    assert_eq!(l.describe(), "SAS 12 Gb/s");
}

#[test]
fn the_connection_is_named_as_reviews_name_it() {
    for (driver, speed, want) in [
        ("uas", "10000", "USB 3.2 Gen 2, UAS"),
        ("usb-storage", "10000", "USB 3.2 Gen 2, BOT"),
        ("usb-storage", "480", "USB 2.0, BOT"),
        ("uas", "20000", "USB 3.2 Gen 2x2, UAS"),
    ] {
        let f = Fake::new();
        usb_tree(&f, driver, speed, "1");
        assert_eq!(f.id(8, 16).connection().as_deref(), Some(want));
    }
    let f = Fake::new();
    sata_tree(&f);
    assert_eq!(f.id(8, 0).connection().as_deref(), Some("SATA 6 Gb/s"));
}

fn usb_tree(f: &Fake, driver: &str, speed: &str, depth: &str) {
    let usb = "devices/pci0000:00/0000:00:14.0/usb2/2-2";
    f.file(&format!("{usb}/speed"), speed);
    f.file(&format!("{usb}/idVendor"), "152d");
    f.file(&format!("{usb}/idProduct"), "0578");
    f.file(&format!("{usb}/manufacturer"), "JMicron");
    f.file(&format!("{usb}/product"), "USB to SATA bridge");
    f.file(&format!("{usb}/serial"), "DD5641988392F");
    let intf = format!("{usb}/2-2:1.0");
    f.link(
        &format!("{intf}/driver"),
        &format!("bus/usb/drivers/{driver}"),
    );
    let sdev = format!("{intf}/host3/target3:0:0/3:0:0:0");
    f.file(&format!("{sdev}/queue_depth"), depth);
    f.file(&format!("{sdev}/scsi_level"), "7");
    f.block("8:16", &format!("{sdev}/block/sdb"), Some(&sdev));
}

#[test]
fn usb_disks_are_told_apart_by_their_interface_driver() {
    for (driver, transport, speed, depth, duplex) in [
        ("uas", "usb-uas", "10000", 14, true),
        ("usb-storage", "usb-bot", "480", 1, false),
        ("usb-storage", "usb-bot", "5000", 1, false),
    ] {
        let f = Fake::new();
        usb_tree(&f, driver, speed, &depth.to_string());
        let id = f.id(8, 16);
        assert_eq!(id.transport, transport);
        assert_eq!(id.device_queue_depth, Some(depth));
        assert_eq!(kinds(&id), [transport, "usb_bridge"]);
        assert_eq!(id.chain[1].name, "152d:0578");
        assert_eq!(id.usb_serial.as_deref(), Some("DD5641988392F"));
        assert_eq!(
            id.chain[1].detail.as_deref(),
            Some("JMicron USB to SATA bridge")
        );
        let l = id.link.unwrap();
        assert_eq!(l.usb_mbit_per_s, Some(speed.parse().unwrap()));
        assert_eq!(l.full_duplex, duplex, "{transport}");
    }
}

#[test]
fn virtual_and_named_devices() {
    let f = Fake::new();
    let virtio = "devices/pci0000:00/0000:00:02.0/virtio1";
    f.block("254:0", &format!("{virtio}/block/vda"), Some(virtio));
    let sd = "devices/pseudo_0/adapter0/host2/target2:0:0/2:0:0:0";
    f.file(&format!("{sd}/model"), "scsi_debug      ");
    f.file(&format!("{sd}/scsi_level"), "8");
    f.block("8:32", &format!("{sd}/block/sdc"), Some(sd));
    let sas = "devices/pci0000:00/0000:00:05.0/host4/port-4:0/end_device-4:0/target4:0:0/4:0:0:0";
    f.file(&format!("{sas}/scsi_level"), "7");
    f.block("8:48", &format!("{sas}/block/sdd"), Some(sas));
    f.block("43:0", "devices/virtual/block/nbd0", None);
    f.block("252:0", "devices/virtual/block/zram0", None);
    f.block("9:0", "devices/virtual/block/md0", None);
    f.block("251:0", "devices/virtual/block/nb0", None);
    for (major, minor, transport) in [
        (254, 0, "virtio"),
        (8, 32, "scsi_debug"),
        (8, 48, "sas"),
        (43, 0, "nbd"),
        (252, 0, "zram"),
        (9, 0, "md"),
        (251, 0, "other"),
    ] {
        let id = f.id(major, minor);
        assert_eq!(id.transport, transport, "{major}:{minor}");
        assert_eq!(id.link, None, "{transport}");
    }
    assert_eq!(identify(f.root(), 0, 42), None, "an anonymous device");
    assert_eq!(identify(f.root(), 7, 99), None, "no such device");
}

#[test]
fn a_loop_device_names_its_backing_file_and_whether_it_reads_it_directly() {
    let f = Fake::new();
    let lo = "devices/virtual/block/loop3";
    f.block("7:3", lo, None);
    f.file(&format!("{lo}/loop/backing_file"), "/nonexistent/disk.img");
    f.file(&format!("{lo}/loop/dio"), "0");
    let id = f.id(7, 3);
    assert_eq!(id.transport, "loop");
    assert_eq!(id.loop_direct_io, Some(false));
    assert_eq!(kinds(&id), ["loop", "backing_file"]);
    assert_eq!(id.chain[1].name, "/nonexistent/disk.img");
    f.file(&format!("{lo}/loop/dio"), "1");
    assert_eq!(f.id(7, 3).loop_direct_io, Some(true));
}

#[test]
fn device_mapper_over_one_disk_inherits_its_link_and_sensors() {
    let f = Fake::new();
    sata_tree(&f);
    let dm = "devices/virtual/block/dm-0";
    f.block("253:0", dm, None);
    f.file(&format!("{dm}/dm/name"), "over_sata");
    f.link(
        &format!("{dm}/slaves/sda"),
        &format!("{ATA}/host0/target0:0:0/0:0:0:0/block/sda"),
    );
    let id = f.id(253, 0);
    assert_eq!(id.transport, "device-mapper");
    assert_eq!(kinds(&id), ["device-mapper", "sata"]);
    assert_eq!(id.chain[0].detail.as_deref(), Some("over_sata"));
    assert_eq!(id.link.as_ref().unwrap().sata_gbit_per_s, Some(6.0));
    assert_eq!(id.sensor_dirs.len(), 1);
    // Over two disks, the chain has both but no one link is the device's.
    nvme_tree(&f);
    f.link(
        &format!("{dm}/slaves/nvme0n1"),
        &format!("{PCI}/nvme/nvme0/nvme0n1"),
    );
    let id = f.id(253, 0);
    assert_eq!(
        kinds(&id),
        [
            "device-mapper",
            "sata",
            "nvme",
            "nvme_controller",
            "pci_device"
        ]
    );
    assert_eq!(id.link, None);
}

fn usb_link(mbit: f64) -> DeviceIdentity {
    let mut l = Link::new("usb", mbit >= 5000.0);
    l.usb_mbit_per_s = Some(mbit);
    l.ceiling_bytes_per_s = l.ceiling();
    DeviceIdentity {
        disk: "sdb".into(),
        link: Some(l),
        ..DeviceIdentity::default()
    }
}

#[test]
fn a_result_faster_than_its_link_is_flagged_and_one_below_is_not() {
    // 10 Gb/s USB, 128b/132b: 1.21 GB/s at most.
    let id = usb_link(10000.0);
    let ceiling = id.link.as_ref().unwrap().ceiling_bytes_per_s.unwrap();
    assert!((ceiling - 1.2121e9).abs() < 1e6, "{ceiling}");
    let n = link_ceiling_note(&id, 1.5e9, 0.0).expect("1.5 GB/s through 10 Gb/s USB");
    assert!(
        n.contains("1500 MB/s") && n.contains("USB 10000 Mb/s") && n.contains("not the drive"),
        "{n}"
    );
    assert_eq!(link_ceiling_note(&id, 1.0e9, 1.0e9), None, "full duplex");
    assert!(link_ceiling_note(&id, 0.0, 1.3e9)
        .unwrap()
        .contains("writes"));
    // USB 2 is half duplex: reads and writes share its 60 MB/s.
    let id = usb_link(480.0);
    assert_eq!(link_ceiling_note(&id, 30e6, 25e6), None);
    assert!(link_ceiling_note(&id, 30e6, 35e6).is_some());
    // No link known: nothing to say.
    assert_eq!(
        link_ceiling_note(&DeviceIdentity::default(), 1e12, 0.0),
        None
    );
}
