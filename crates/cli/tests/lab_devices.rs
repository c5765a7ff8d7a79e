//! drivelab on devices this machine's kernel does not have, through the device lab
//! (scripts/lab, docs/lab.md): a QEMU guest running Debian's kernel under TCG with
//! emulated NVMe, SATA and USB disks, null_blk, scsi_debug and device-mapper.
//!
//! Each test is one boot (about 6 s of boot under TCG, plus its checks); the lab runs one
//! guest at a time. Lab numbers are emulation, not drives: these tests assert behaviour
//! and generous ratios, never speed.

mod common;
mod lab;

use serde_json::Value;

/// What a guest script records about one disk from sysfs (and drivelab's JSON on it).
const DISK_FACTS: &str = r#"
. /out/lab.sh
# facts LABEL DEV: sysfs' view of DEV into /out/LABEL.facts, drivelab's into /out/LABEL.json
facts() {
    n=${2#/dev/}; b=/sys/block/$n; f=/out/$1.facts
    {
        echo "dev=$2"
        echo "transport=$(disk_transport "$n")"
        echo "model=$(cat $b/device/model)"
        echo "firmware=$(cat $b/device/firmware_rev 2>/dev/null || cat $b/device/rev)"
        echo "serial=$(cat $b/device/serial 2>/dev/null || tail -c +5 $b/device/vpd_pg80 2>/dev/null)"
        echo "wwid=$(cat $b/device/wwid 2>/dev/null)"
        echo "logical=$(cat $b/queue/logical_block_size)"
        echo "physical=$(cat $b/queue/physical_block_size)"
        echo "rotational=$(cat $b/queue/rotational)"
        echo "scheduler=$(cat $b/queue/scheduler)"
        echo "bytes=$(( $(cat $b/size) * 512 ))"
        echo "queue_depth=$(cat $b/device/queue_depth 2>/dev/null || cat $b/queue/nr_requests)"
    } > $f
    drivelab io "$2" --rw randread --iodepth 8 --runtime 1 --json /out/$1.json > /out/$1.txt 2>&1
    echo "drivelab_rc=$?" >> $f
}
"#;

fn trimmed(v: &Value) -> &str {
    v.as_str().map(str::trim).unwrap_or("")
}

#[test]
fn identity_of_nvme_sata_and_usb_disks_matches_sysfs_and_nvme_cli() {
    let script = format!(
        "{DISK_FACTS}{}",
        r#"
facts nvme "$(disks_by_transport nvme)"
facts sata "$(disks_by_transport sata)"
facts bot "$(disks_by_transport usb-storage)"
facts uas "$(disks_by_transport uas)"
nvme id-ctrl /dev/nvme0 -o json > /out/id-ctrl.json
nvme id-ns /dev/nvme0n1 -o json > /out/id-ns.json
exit 0
"#
    );
    let g = lab::run(
        &["nvme:1G", "sata:256M", "usb-bot:128M", "usb-uas:192M"],
        &script,
        240,
    );
    assert_eq!(g.rc, 0, "{}", g.log());
    for (label, transport, bytes, rotational, serial) in [
        ("nvme", "nvme", 1u64 << 30, false, Some("LABNVME0")),
        ("sata", "sata", 256 << 20, true, Some("LABSATA0")),
        // usb-storage asks for no VPD page: the kernel takes the disk as rotating.
        ("bot", "usb-storage", 128 << 20, true, None),
        // QEMU's scsi-hd with rotation_rate=1: a solid-state disk behind UAS.
        ("uas", "uas", 192 << 20, false, Some("LABUAS0")),
    ] {
        let f = g.facts(&format!("{label}.facts"));
        assert_eq!(f.get("transport"), transport, "{label}");
        assert_eq!(
            f.get("drivelab_rc"),
            "0",
            "{label}: {}",
            g.text(&format!("{label}.txt"))
        );
        let r = g.json(&format!("{label}.json"));
        let t = &r["target"];
        // What drivelab records is what the guest's kernel says about the disk.
        assert_eq!(t["kind"], "block_device", "{label}");
        assert_eq!(t["path"], f.get("dev"), "{label}");
        assert_eq!(t["capacity_bytes"], f.num::<u64>("bytes"), "{label}");
        assert_eq!(
            t["capacity_bytes"], bytes,
            "{label}: the size QEMU was given"
        );
        assert_eq!(
            t["logical_sector_bytes"],
            f.num::<u64>("logical"),
            "{label}"
        );
        assert_eq!(
            t["physical_sector_bytes"],
            f.num::<u64>("physical"),
            "{label}"
        );
        assert_eq!(t["rotational"], f.get("rotational") == "1", "{label}");
        assert_eq!(t["rotational"], rotational, "{label}");
        assert_eq!(trimmed(&t["model"]), f.get("model"), "{label}");
        assert_eq!(trimmed(&t["firmware"]), f.get("firmware"), "{label}");
        assert!(
            f.get("scheduler")
                .contains(&format!("[{}]", trimmed(&t["scheduler"]))),
            "{label}: {} vs {}",
            t["scheduler"],
            f.get("scheduler")
        );
        match serial {
            Some(s) => {
                assert_eq!(f.get("serial"), s, "{label}: the serial QEMU was given");
                assert_eq!(trimmed(&t["serial"]), s, "{label}");
            }
            // Behind usb-storage the kernel has no serial (no VPD page 0x80, no wwid);
            // the one QEMU was given is only in the USB device's descriptor, which
            // drivelab does not read yet.
            None => {
                assert_eq!(f.get("serial"), "", "{label}");
                assert!(
                    t["serial"].is_null() || trimmed(&t["serial"]) == "LABBOT0",
                    "{label}: {}",
                    t["serial"]
                );
            }
        }
        // Reads happened on the device (this is emulation: no speed is asserted).
        assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0, "{label}");
        assert_eq!(r["totals"]["error_count"], 0, "{label}");
    }
    // QEMU's SATA disk (through libata) and the emulated NVMe drive as nvme-cli sees them.
    let sata = g.json("sata.json");
    assert_eq!(trimmed(&sata["target"]["model"]), "Lab SATA Disk");
    let nvme = g.json("nvme.json");
    let id = g.json("id-ctrl.json");
    assert_eq!(trimmed(&nvme["target"]["model"]), trimmed(&id["mn"]));
    assert_eq!(trimmed(&nvme["target"]["serial"]), trimmed(&id["sn"]));
    assert_eq!(trimmed(&nvme["target"]["firmware"]), trimmed(&id["fr"]));
    let ns = g.json("id-ns.json");
    let fmt = ns["flbas"].as_u64().unwrap() & 0xf;
    let lba_bytes = 1u64 << ns["lbafs"][fmt as usize]["ds"].as_u64().unwrap();
    assert_eq!(nvme["target"]["logical_sector_bytes"], lba_bytes);
    assert_eq!(
        nvme["target"]["capacity_bytes"],
        ns["nsze"].as_u64().unwrap() * lba_bytes
    );
    // The queue depth each device accepts differs by transport (NCQ 32 on SATA, 1 on
    // usb-storage); drivelab does not record it yet, the guest's view is kept here.
    let qd = |l: &str| g.facts(&format!("{l}.facts")).num::<u32>("queue_depth");
    assert_eq!(qd("sata"), 32);
    assert_eq!(qd("bot"), 1);
    assert!(qd("uas") > 1);
}
