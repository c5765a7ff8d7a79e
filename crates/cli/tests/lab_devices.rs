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
        echo "nr_requests=$(cat $b/queue/nr_requests)"
        # The link: the SATA port's negotiated speed, the USB device's, the PCIe function's.
        p=$(readlink -f $b/device)
        a=$(echo "$p" | grep -o '/ata[0-9]*/' | head -1 | tr -d /)
        [ -n "$a" ] && echo "sata_spd=$(cat /sys/class/ata_link/link${a#ata}/sata_spd)"
        u=$(echo "$p" | sed -nE 's#(.*/usb[0-9]+/[0-9]+-[0-9.]+)/.*#\1#p')
        [ -n "$u" ] && echo "usb_speed=$(cat $u/speed)" && echo "usb_ids=$(cat $u/idVendor):$(cat $u/idProduct)"
        case $n in nvme*) pci=$(readlink -f $b/device/device)
            echo "pcie_speed=$(cat $pci/current_link_speed 2>/dev/null)"
            echo "pcie_width=$(cat $pci/current_link_width 2>/dev/null)" ;; esac
    } > $f
    drivelab io "$2" --rw randread --iodepth 8 --io_size 1M --json /out/$1.json > /out/$1.txt 2>&1
    echo "drivelab_rc=$?" >> $f
}
"#;

fn trimmed(v: &Value) -> &str {
    v.as_str().map(str::trim).unwrap_or("")
}

/// The NVMe drive's telemetry during an 8 s run, with the SMART log and hwmon as the
/// guest reads them, and a critical warning the host sets (QMP) in the middle of the run
/// once it has begun.
const TELEMETRY: &str = r#"
T=/out/tele.facts
for h in /sys/class/hwmon/hwmon*; do
    [ "$(cat $h/name)" = nvme ] && echo "hwmon_temp1=$(cat $h/temp1_input)" >> $T
done
drivelab io /dev/nvme0n1 --rw randread --io_size 1M --sensors hwmon --json /out/only-hwmon.json > /out/only-hwmon.txt 2>&1
echo "only_hwmon_rc=$?" >> $T
nvme smart-log /dev/nvme0 -o json > /out/smart-before.json
echo "launch_s=$(now)" >> $T
# --ioengine null: the target is opened and its sensors sampled, but no I/O reaches it.
# QEMU 7.2's controller, with the warning set and SMART reads coming in, has been seen
# to stop completing I/O until the kernel times it out and resets it (30 s and more).
drivelab io /dev/nvme0n1 --rw randread --ioengine null --runtime 8 --json /out/tele.json > /out/tele.txt 2>&1 &
DL=$!
# Once the run has begun (its first line is printed as it starts), and a bit more.
i=0; while ! grep -q "drivelab: sensors" /out/tele.txt && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
sleep 2
: > /out/qmp-want-1
i=0; while [ ! -e /out/qmp-done-1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
echo "set_s=$(now)" >> $T
wait $DL; echo "tele_rc=$?" >> $T
nvme smart-log /dev/nvme0 -o json > /out/smart-after.json
# The warning cleared again (QEMU's controller has been seen to stall its I/O queue
# for a kernel timeout after one); the guest's log kept for a look.
: > /out/qmp-want-2
i=0; while [ ! -e /out/qmp-done-2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
dmesg > /out/dmesg.txt
"#;

const SET_WARNING: &str = r#"{"execute":"qom-set","arguments":{"path":"/machine/peripheral/nvme0","property":"smart_critical_warning","value":2}}"#;
const CLEAR_WARNING: &str = r#"{"execute":"qom-set","arguments":{"path":"/machine/peripheral/nvme0","property":"smart_critical_warning","value":0}}"#;

#[test]
fn identity_link_and_telemetry_of_nvme_sata_and_usb_disks() {
    let script = format!(
        "{DISK_FACTS}{}{TELEMETRY}exit 0\n",
        r#"
facts nvme "$(disks_by_transport nvme)"
facts sata "$(disks_by_transport sata)"
facts bot "$(disks_by_transport usb-storage)"
facts uas "$(disks_by_transport uas)"
nvme id-ctrl /dev/nvme0 -o json > /out/id-ctrl.json
nvme id-ns /dev/nvme0n1 -o json > /out/id-ns.json
"#
    );
    let g = lab::run_with_qmp(
        &["nvme:1G", "sata:256M", "usb-bot:128M", "usb-uas:192M"],
        &script,
        600,
        &[SET_WARNING, CLEAR_WARNING],
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
            // the one QEMU was given is in the USB device's descriptor, where drivelab
            // reads it.
            None => {
                assert_eq!(f.get("serial"), "", "{label}");
                assert_eq!(trimmed(&t["serial"]), "LABBOT0", "{label}");
            }
        }
        // 1 MiB of 4 KiB reads, whatever the speed of the emulation.
        assert_eq!(r["totals"]["read"]["ops"], 256, "{label}");
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
    // usb-storage, 14 on QEMU's UAS).
    let qd = |l: &str| g.facts(&format!("{l}.facts")).num::<u32>("queue_depth");
    assert_eq!(qd("sata"), 32);
    assert_eq!(qd("bot"), 1);
    assert!(qd("uas") > 1);
    for (label, transport) in [
        ("nvme", "nvme"),
        ("sata", "sata"),
        ("bot", "usb-bot"),
        ("uas", "usb-uas"),
    ] {
        assert_device(&g, label, transport);
    }
    assert_telemetry(&g);
}

/// drivelab's device identity of the disk `label` against the guest's sysfs.
fn assert_device(g: &lab::GuestRun, label: &str, transport: &str) {
    let f = g.facts(&format!("{label}.facts"));
    let r = g.json(&format!("{label}.json"));
    let d = &r["target"]["device"];
    assert_eq!(d["transport"], transport, "{label}: {d}");
    assert_eq!(
        d["disk"],
        f.get("dev").trim_start_matches("/dev/"),
        "{label}"
    );
    assert_eq!(
        d["block_nr_requests"],
        f.num::<u64>("nr_requests"),
        "{label}"
    );
    let link = &d["link"];
    let lead = |s: &str| s.split_whitespace().next().unwrap().parse::<f64>().ok();
    match transport {
        "nvme" => {
            assert_eq!(d["nvme_transport"], "pcie", "{d}");
            assert!(d["device_queue_depth"].is_null(), "{d}");
            let kinds: Vec<&str> = d["chain"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["kind"].as_str().unwrap())
                .collect();
            assert_eq!(&kinds[..2], ["nvme", "nvme_controller"], "{d}");
            match f.opt("pcie_speed").and_then(lead) {
                Some(gt) => {
                    assert_eq!(link["pcie_current_gt_per_s"], gt, "{d}");
                    assert_eq!(
                        link["pcie_current_width_lanes"],
                        f.num::<u64>("pcie_width"),
                        "{d}"
                    );
                }
                None => assert!(
                    link.is_null() || link["ceiling_bytes_per_s"].is_null(),
                    "{d}"
                ),
            }
        }
        "sata" => {
            assert_eq!(d["device_queue_depth"], 32, "{d}");
            assert_eq!(link["kind"], "sata", "{d}");
            let spd = f.opt("sata_spd").and_then(lead);
            assert_eq!(link["sata_gbit_per_s"].as_f64(), spd, "{d}");
        }
        _ => {
            assert_eq!(d["device_queue_depth"], f.num::<u64>("queue_depth"), "{d}");
            assert_eq!(link["kind"], "usb", "{d}");
            assert_eq!(link["usb_mbit_per_s"], f.num::<f64>("usb_speed"), "{d}");
            assert_eq!(link["usb_mbit_per_s"], 5000.0, "{d}");
            // Bulk-only runs one command at a time: reads and writes share the link.
            assert_eq!(link["full_duplex"], transport == "usb-uas", "{d}");
            let bridge = d["chain"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["kind"] == "usb_bridge");
            assert_eq!(bridge.unwrap()["name"], f.get("usb_ids"), "{d}");
        }
    }
    // An emulated disk is far slower than its link: no ceiling note.
    assert!(
        !has_note(&r, "Faster than the link"),
        "{label}: {}",
        r["notes"]
    );
}

/// The value of the reading `name` from a source starting with `source` in one interval.
fn reading(rec: &Value, name: &str, source: &str) -> Option<f64> {
    rec["sensors"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name && s["source"].as_str().unwrap_or("").starts_with(source))?
        ["value"]
        .as_f64()
}

/// A temperature from nvme-cli's JSON (kelvin in nvme-cli 2, celsius before).
fn cli_celsius(v: &Value) -> f64 {
    let t = v.as_f64().unwrap();
    if t > 200.0 {
        t - 273.15
    } else {
        t
    }
}

/// The NVMe drive's temperatures and SMART log in drivelab's series against hwmon and
/// nvme-cli, and the critical warning the host set during the run.
fn assert_telemetry(g: &lab::GuestRun) {
    let t = g.facts("tele.facts");
    assert_eq!(t.get("tele_rc"), "0", "{}", g.text("tele.txt"));
    assert!(
        g.text("qmp-1.log").contains("\"return\""),
        "{}",
        g.text("qmp-1.log")
    );
    let r = g.json("tele.json");
    let recs = r["series"]["records"].as_array().unwrap();
    assert!(recs.len() >= 6, "{} intervals", recs.len());
    let hwmon = t.num::<f64>("hwmon_temp1") / 1000.0;
    let before = g.json("smart-before.json");
    let smart = cli_celsius(&before["temperature"]);
    for (i, rec) in recs.iter().enumerate() {
        let hw = reading(rec, "temperature", "hwmon:nvme");
        assert!(
            hw.is_some_and(|v| (v - hwmon).abs() < 1e-6),
            "interval {i}: hwmon {hw:?}, the guest read {hwmon}"
        );
        let sm = reading(rec, "temperature", "nvme-smart:nvme0");
        assert!(
            sm.is_some_and(|v| (v - smart).abs() < 1e-6),
            "interval {i}: SMART {sm:?}, nvme-cli {smart}"
        );
        assert!(
            within(hw.unwrap(), sm.unwrap(), 0.01),
            "hwmon and SMART agree"
        );
    }
    // The warning: clear at first, set from some interval on and never cleared again,
    // and seen within an interval or two of the host setting it.
    let cw: Vec<f64> = recs
        .iter()
        .map(|rec| reading(rec, "critical_warning", "nvme-smart").expect("critical_warning"))
        .collect();
    let first = cw
        .iter()
        .position(|&v| v == 2.0)
        .unwrap_or_else(|| panic!("never set: {cw:?}"));
    assert!(first > 0, "set before the run began: {cw:?}");
    assert!(cw[..first].iter().all(|&v| v == 0.0), "{cw:?}");
    assert!(cw[first..].iter().all(|&v| v == 2.0), "{cw:?}");
    let set_after_launch = t.num::<f64>("set_s") - t.num::<f64>("launch_s");
    let seen = secs(&recs[first]["start_ns"]);
    assert!(
        seen <= set_after_launch + 3.0,
        "set {set_after_launch:.1} s after launch, seen at {seen:.1} s of the run"
    );
    let after = g.json("smart-after.json");
    assert_eq!(after["critical_warning"], 2);
    // The power state the controller is in, with the maximum power Identify Controller
    // rates it at (nvme-cli's power-state descriptors), where it answers Get Features.
    let id = g.json("id-ctrl.json");
    for rec in recs.iter() {
        let (Some(ps), Some(w)) = (
            reading(rec, "power_state", "nvme-smart"),
            reading(rec, "rated_max_power", "nvme-smart"),
        ) else {
            continue;
        };
        let d = &id["psds"][ps as usize];
        let scale = if d["flags"].as_u64().unwrap_or(0) & 1 == 1 {
            1e-4
        } else {
            1e-2
        };
        let want = d["max_power"].as_f64().unwrap() * scale;
        assert!(
            (w - want).abs() < 1e-9,
            "state {ps}: {w} W vs nvme-cli's {want} W"
        );
    }
    // The run said what it would sample; --sensors hwmon leaves the SMART log out.
    assert!(
        g.text("tele.txt").contains(
            "drivelab: sensors: hwmon:nvme (temperature, temperature_warning); nvme-smart:nvme0 (SMART / health log)"
        ),
        "{}",
        g.text("tele.txt")
    );
    assert_eq!(t.get("only_hwmon_rc"), "0", "{}", g.text("only-hwmon.txt"));
    let only = g.json("only-hwmon.json");
    let sources: std::collections::BTreeSet<&str> = only["series"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|rec| rec["sensors"].as_array().into_iter().flatten())
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources.into_iter().collect::<Vec<_>>(), ["hwmon:nvme"]);
    // The data read counter as nvme-cli reads it before and after the run.
    let units = |v: &Value| v.as_f64().or_else(|| v.as_str()?.parse().ok()).unwrap() * 512_000.0;
    let dr: Vec<f64> = recs
        .iter()
        .map(|rec| reading(rec, "data_read", "nvme-smart").unwrap())
        .collect();
    assert!(dr.windows(2).all(|w| w[0] <= w[1]), "{dr:?}");
    assert!(dr[0] >= units(&before["data_units_read"]), "{dr:?}");
    assert!(
        *dr.last().unwrap() <= units(&after["data_units_read"]),
        "{dr:?}"
    );
}

/// Linux errnos (x86-64) the devices give.
const EIO: i32 = 5;
const ENODATA: i32 = 61;

fn errors_of(r: &Value) -> &Vec<Value> {
    r["errors"].as_array().unwrap()
}

fn secs(ns: &Value) -> f64 {
    ns.as_u64().unwrap() as f64 / 1e9
}

#[test]
fn medium_errors_bad_blocks_flaky_windows_and_timeouts() {
    let g = lab::run(
        &["none"],
        r#"
. /out/lab.sh
F=/out/errors.facts
# scsi_debug with opts=2: a medium error on LBAs 0x1234..+10 (4 KiB blocks 582 and 583).
# nomerges=2: each I/O reaches the device alone, so exactly the ones touching a bad
# sector fail (merged neighbours would fail with them).
modprobe scsi_debug dev_size_mb=64 opts=2 sector_size=512
SD=$(scsi_debug_disk); echo 2 > /sys/block/${SD#/dev/}/queue/nomerges
drivelab io $SD --rw randread --iodepth 4 --ioengine io_uring --size 16M --randseed 7 --runtime 60 \
    --json /out/sd-stop.json > /out/sd-stop.txt 2>&1; echo "sd_stop_rc=$?" >> $F
drivelab io $SD --rw read --iodepth 8 --size 16M --io_size 100% --continue-on-error \
    --json /out/sd-cont.json > /out/sd-cont.txt 2>&1; echo "sd_cont_rc=$?" >> $F
rmmod scsi_debug

# null_blk with bad sectors 2048-2559 (4 KiB blocks 256-319) and 6001 (block 750).
nullb_create nbe 64 badblocks=+2048-2559 && echo +6001-6001 > /sys/kernel/config/nullb/nbe/badblocks
echo 2 > /sys/block/nbe/queue/nomerges
drivelab io /dev/nbe --rw randread --iodepth 4 --size 4M --randseed 7 --runtime 60 \
    --json /out/nb-stop.json > /out/nb-stop.txt 2>&1; echo "nb_stop_rc=$?" >> $F
drivelab io /dev/nbe --rw read --iodepth 8 --size 4M --io_size 100% --continue-on-error \
    --json /out/nb-cont.json > /out/nb-cont.txt 2>&1; echo "nb_cont_rc=$?" >> $F
drivelab io /dev/nbe --rw read --bs 16k --iodepth 8 --size 4M --io_size 100% --continue-on-error \
    --json /out/nb-cont16.json > /out/nb-cont16.txt 2>&1; echo "nb_cont16_rc=$?" >> $F

# dm-flakey, failing every I/O (up 0 s, down 2 s), swapped in under a running 10 s read
# for 2 s between two linear tables; a 100 ms dm-delay on top paces the reads (about 10
# a second) so that every error is kept. Times are the guest's (seconds since boot).
nullb_create nbf 64; SZ=$(blockdev --getsz /dev/nbf)
dm_create flakey0 "0 $SZ linear /dev/nbf 0" && dm_create flaky "0 $SZ delay /dev/mapper/flakey0 0 100"
for d in /sys/block/dm-*; do [ "$(cat $d/dm/name)" = flaky ] && top=${d##*/}; done
echo "flaky_launch_s=$(now)" >> $F
drivelab io /dev/mapper/flaky --rw randread --iodepth 1 --runtime 10 --continue-on-error \
    --json /out/flaky.json > /out/flaky.txt 2>&1 &
dlpid=$!
# once reads flow (10 done), a second more of them before the window
i=0; while [ "$(awk '{print $1}' /sys/block/$top/stat)" -lt 10 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
echo "flaky_down_start_s=$(now)" >> $F
dmsetup load flakey0 --table "0 $SZ flakey /dev/nbf 0 0 2" && dmsetup resume flakey0
echo "flaky_down_s=$(now)" >> $F
sleep 2
echo "flaky_up_start_s=$(now)" >> $F
dmsetup load flakey0 --table "0 $SZ linear /dev/nbf 0" && dmsetup resume flakey0
echo "flaky_up_s=$(now)" >> $F
wait $dlpid; echo "flaky_rc=$?" >> $F
echo "flaky_exit_s=$(now)" >> $F

# scsi_debug ignoring every 100th command: the SCSI layer times it out (2 s) and retries.
modprobe scsi_debug dev_size_mb=64 every_nth=100 opts=4
SD=$(scsi_debug_disk); echo 2 > /sys/block/${SD#/dev/}/device/timeout
t0=$(now)
timeout 150 drivelab io $SD --rw randread --iodepth 4 --ioengine io_uring --runtime 2 \
    --json /out/sd-timeout.json > /out/sd-timeout.txt 2>&1; echo "timeout_rc=$?" >> $F
echo "timeout_wall_s=$(awk -v a=$t0 -v b=$(now) 'BEGIN{print b-a}')" >> $F
echo "timeouts_seen=$(( $(cat /sys/block/${SD#/dev/}/device/iotmo_cnt) ))" >> $F   # hex
exit 0
"#,
        600,
    );
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("errors.facts");

    // A random read that meets a medium error stops there: exit 1, a partial document
    // naming the offset and the errno.
    let bad_sd = [582 * 4096, 583 * 4096];
    let bad_nb = |off: u64, len: u64| {
        let (a, b) = (off / 512, (off + len) / 512);
        (a < 2560 && b > 2048) || (a <= 6001 && b > 6001)
    };
    for (name, errno, is_bad) in [
        (
            "sd-stop",
            ENODATA,
            &(|o: u64, _l: u64| bad_sd.contains(&o)) as &dyn Fn(u64, u64) -> bool,
        ),
        ("nb-stop", EIO, &bad_nb),
    ] {
        let rc = f.get(&format!("{}_rc", name.replace('-', "_")));
        assert_eq!(rc, "1", "{name}: {}", g.text(&format!("{name}.txt")));
        let r = g.json(&format!("{name}.json"));
        assert_eq!(r["status"], "failed", "{name}");
        let errs = errors_of(&r);
        assert!(!errs.is_empty(), "{name}");
        for e in errs {
            let off = e["offset_bytes"].as_u64().unwrap();
            assert!(is_bad(off, 4096), "{name}: {e} is no bad block");
            assert_eq!(e["errno"], errno, "{name}: {e}");
            assert_eq!(e["len_bytes"], 4096, "{name}: {e}");
        }
        let failure = r["failure"].as_str().unwrap();
        assert!(
            failure.contains(&format!("offset {}", errs[0]["offset_bytes"]))
                && failure.contains(&format!("os error {errno}")),
            "{name}: {failure}"
        );
        assert_eq!(r["totals"]["error_count"], errs.len(), "{name}");
        // The reads before the error are in the partial result.
        assert!(
            r["totals"]["read"]["ops"].as_u64().unwrap() > 0,
            "{name}: {}",
            r["totals"]
        );
        assert!(!r["series"]["records"].as_array().unwrap().is_empty());
    }

    // --continue-on-error reads every block once and counts exactly the I/Os the device
    // fails: 2 on scsi_debug (4 KiB blocks 582-583), 65 4 KiB or 17 16 KiB ones on null_blk.
    for (name, bs, ios, failing) in [
        ("sd-cont", 4096u64, 4096u64, 2u64),
        ("nb-cont", 4096, 1024, 65),
        ("nb-cont16", 16384, 256, 17),
    ] {
        let rc = f.get(&format!("{}_rc", name.replace('-', "_")));
        assert_eq!(rc, "0", "{name}: {}", g.text(&format!("{name}.txt")));
        let r = g.json(&format!("{name}.json"));
        assert_eq!(r["status"], "complete", "{name}");
        assert_eq!(r["totals"]["error_count"], failing, "{name}");
        assert_eq!(r["totals"]["read"]["ops"], ios - failing, "{name}");
        assert_eq!(r["totals"]["read"]["bytes"], (ios - failing) * bs, "{name}");
        let errs = errors_of(&r);
        assert_eq!(errs.len() as u64, failing, "{name}: all kept (under 100)");
        for e in errs {
            let off = e["offset_bytes"].as_u64().unwrap();
            let bad = if name.starts_with("sd") {
                bad_sd.contains(&off)
            } else {
                bad_nb(off, bs)
            };
            assert!(bad, "{name}: {e} is no bad block");
        }
        let notes = r["notes"].to_string();
        assert!(
            notes.contains(&format!("{failing} of {ios} I/Os")),
            "{name}: {notes}"
        );
    }

    // dm-flakey failing for 2 s in the middle of a 10 s run: the errors fall in that
    // window, where the series counts no successful read, and only there.
    assert_eq!(f.get("flaky_rc"), "0", "{}", g.text("flaky.txt"));
    let r = g.json("flaky.json");
    assert_eq!(r["status"], "complete");
    let errs = errors_of(&r);
    let n = r["totals"]["error_count"].as_u64().unwrap();
    assert_eq!(n, errs.len() as u64, "every error kept");
    assert!(n >= 5, "{n} errors in a 2 s window of ~100 ms reads");
    assert!(errs.iter().all(|e| e["errno"] == EIO), "{errs:?}");
    let at: Vec<f64> = errs.iter().map(|e| secs(&e["at_ns"])).collect();
    let (first, last) = (at[0], *at.last().unwrap());
    // The guest's clock around the swaps of the tables and the run.
    let t = |k: &str| f.num::<f64>(&format!("flaky_{k}_s"));
    let (down0, down1, up0, up1) = (t("down_start"), t("down"), t("up_start"), t("up"));
    let (launch, exit) = (t("launch"), t("exit"));
    // The window as long as flakey was in (give or take a read: 0.5 s at each end).
    let (shortest, longest) = (up0 - down1, up1 - down0);
    assert!(
        last - first >= shortest - 1.0 && last - first <= longest + 0.5,
        "errors from {first:.2} s to {last:.2} s for a window of {shortest:.2}-{longest:.2} s"
    );
    // And where it was: the run started after the launch, and early enough to last
    // its duration before drivelab exited.
    let lasted = secs(&r["duration_ns"]) + secs(&r["drain_ns"]);
    let (origin_min, origin_max) = (launch, exit - lasted);
    assert!(
        first >= down0 - origin_max - 0.5 && first <= down1 - origin_min + 0.5,
        "first error at {first:.2} s of the run; flakey in {down0:.2}-{down1:.2} s, run from {origin_min:.2}-{origin_max:.2} s (guest clock)"
    );
    // Whole seconds of the series: none inside the window has a successful read, and
    // every one clear of it (a second of margin: the clocks differ) has some.
    for rec in r["series"]["records"].as_array().unwrap() {
        let s = secs(&rec["start_ns"]);
        let e = s + secs(&rec["duration_ns"]);
        let ok = rec["read"]["ops"].as_u64().unwrap();
        if s >= first && e <= last {
            assert_eq!(ok, 0, "second {s:.0}-{e:.0} lies in the down window");
        }
        if e <= first - 1.0 || s >= last + 1.0 {
            assert!(ok > 0, "second {s:.0}-{e:.0} is clear of the down window");
        }
    }

    // A command the device never answers is timed out by the kernel and retried: drivelab
    // does not hang, and the stall shows in its latency.
    assert_eq!(f.get("timeout_rc"), "0", "{}", g.text("sd-timeout.txt"));
    assert!(f.num::<u32>("timeouts_seen") >= 1, "no command timed out");
    let wall: f64 = f.num("timeout_wall_s");
    assert!(wall < 120.0, "drivelab took {wall} s for a 2 s run");
    let r = g.json("sd-timeout.json");
    assert_eq!(r["status"], "complete");
    let max = r["totals"]["read"]["latency"]["max_ns"].as_u64().unwrap();
    assert!(
        max >= 1_500_000_000,
        "max latency {max} ns: the 2 s timeout is not seen"
    );
}

const WORKERS_NOTE: &str = "handed every I/O to its kernel workers";

fn has_note(r: &Value, needle: &str) -> bool {
    r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains(needle))
}

/// fio's mean and median completion latency (ns) from its JSON output.
fn fio_clat(f: &Value) -> (f64, f64) {
    let c = &f["jobs"][0]["read"]["clat_ns"];
    (
        c["mean"].as_f64().unwrap(),
        c["percentile"]["50.000000"].as_f64().unwrap(),
    )
}

fn p50(lat: &Value) -> f64 {
    lat["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["percentile"] == 50.0)
        .unwrap()["value_ns"]
        .as_f64()
        .unwrap()
}

/// Each 512-byte sector of `data` (read back from `base` on the device) carries its own
/// offset: every write landed where the engine said.
fn assert_stamps(name: &str, data: &[u8], base: u64) {
    assert!(!data.is_empty(), "{name}: nothing read back");
    for (i, s) in data.chunks(512).enumerate() {
        assert_eq!(
            common::stamp(s).0,
            base + i as u64 * 512,
            "{name}: sector {i}"
        );
    }
}

#[test]
fn latency_shapes_and_every_io_uring_mode_on_the_guests_kernel() {
    let g = lab::run(
        &["nvme:256M"],
        r#"
. /out/lab.sh
F=/out/lat.facts
dl() {  # dl NAME DEV ARGS...: drivelab's JSON in /out/NAME.json, its rc in the facts
    n=$1; shift
    drivelab io "$@" --json /out/$n.json > /out/$n.txt 2>&1; echo "${n}_rc=$?" >> $F
}
# qd1 NAME DEV: 3 s of 4 KiB random reads at QD1 each by fio, drivelab (sync), drivelab
# (io_uring) and fio again: the two fio runs bracket drivelab's in time, so a change in
# the (shared, emulated) CPU's load during the four shows in fio's range too.
fio_qd1() {
    fio --name=$1 --filename=$2 --rw=randread --bs=4k --iodepth=1 --ioengine=psync --direct=1 \
        --runtime=3 --time_based --output-format=json --output=/out/$1.json > /dev/null 2>&1
    echo "${1}_rc=$?" >> $F
}
qd1() {
    fio_qd1 $1-fio-before $2
    dl $1-sync $2 --rw randread --iodepth 1 --ioengine sync --runtime 3
    dl $1-uring $2 --rw randread --iodepth 1 --ioengine io_uring --runtime 3
    fio_qd1 $1-fio-after $2
}
# Latency shape: dm-delay adding 20 ms, null_blk completing after a 5 ms timer.
nullb_create nbd 64; SZ=$(blockdev --getsz /dev/nbd)
dm_create delayed "0 $SZ delay /dev/nbd 0 20"
qd1 delay /dev/mapper/delayed
nullb_create nbt 64 irqmode=2 completion_nsec=5000000
qd1 timer /dev/nbt

# io_uring inline (NVMe), io_uring workers (dm-delay takes no RWF_NOWAIT) and sync: each
# 16 KiB block of a 32 MiB region written once, out of order, then read back.
W="--rw randwrite --bs 16k --size 32M --io_size 100% --percentage_random 0"
dl nvme-inline /dev/nvme0n1 $W --iodepth 32 --ioengine io_uring --destructive=/dev/nvme0n1
dd if=/dev/nvme0n1 of=/out/nvme-inline.bin bs=1M count=32 iflag=direct 2>/dev/null
dl nvme-sync /dev/nvme0n1 $W --offset 32M --ioengine sync --destructive=/dev/nvme0n1
dd if=/dev/nvme0n1 of=/out/nvme-sync.bin bs=1M skip=32 count=32 iflag=direct 2>/dev/null
dl nvme-read /dev/nvme0n1 --rw randread --iodepth 32 --ioengine io_uring --runtime 1
dm_create nodelay "0 $SZ delay /dev/nbd 0 0"
dl dm-workers /dev/mapper/nodelay $W --iodepth 32 --ioengine io_uring --destructive=/dev/mapper/nodelay
dd if=/dev/mapper/nodelay of=/out/dm-workers.bin bs=1M count=32 iflag=direct 2>/dev/null
dl dm-workers-read /dev/mapper/nodelay --rw randread --iodepth 32 --ioengine io_uring --runtime 1
exit 0
"#,
        600,
    );
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("lat.facts");
    let ok = |n: &str| {
        assert_eq!(
            f.get(&format!("{n}_rc")),
            "0",
            "{n}: {}",
            g.text(&format!("{n}.txt"))
        );
        g.json(&format!("{n}.json"))
    };

    // QD1 latency agrees with fio's on the same device (within 20 % of what fio
    // measured just before and just after) and with what the device adds: no less, and
    // (generously: dm-delay counts in jiffies, 4 ms at the guest's HZ=250, and TCG
    // inflates every I/O) under twice it.
    for (dev, floor_ns) in [("delay", 20e6), ("timer", 5e6)] {
        let before = fio_clat(&ok(&format!("{dev}-fio-before")));
        let after = fio_clat(&ok(&format!("{dev}-fio-after")));
        // fio's range over the two runs, 20 % wider on each side.
        let agrees = |v: f64, a: f64, b: f64| v >= a.min(b) * 0.8 && v <= a.max(b) * 1.2;
        for engine in ["sync", "uring"] {
            let name = format!("{dev}-{engine}");
            let r = ok(&name);
            let lat = &r["totals"]["read"]["latency"];
            let (mean, med) = (lat["mean_ns"].as_f64().unwrap(), p50(lat));
            assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 10, "{name}");
            assert!(
                agrees(mean, before.0, after.0) && agrees(med, before.1, after.1),
                "{name}: mean {mean:.0} p50 {med:.0} ns; fio's clat before: mean {:.0} p50 {:.0}, after: mean {:.0} p50 {:.0} ns",
                before.0,
                before.1,
                after.0,
                after.1
            );
            assert!(
                med >= floor_ns && med <= floor_ns * 2.0,
                "{name}: p50 {med:.0} ns for a device adding {floor_ns:.0} ns"
            );
        }
    }
    // dm-delay takes no non-blocking I/O: io_uring goes to its workers and says so.
    assert!(has_note(&ok("delay-uring"), WORKERS_NOTE));

    // io_uring inline on NVMe, workers on device-mapper, sync: all write where they should.
    for (name, engine, workers, base) in [
        ("nvme-inline", "io_uring", false, 0u64),
        ("nvme-sync", "sync", false, 32 << 20),
        ("dm-workers", "io_uring", true, 0),
    ] {
        let r = ok(name);
        assert_eq!(r["config"]["ioengine"], engine, "{name}");
        assert_eq!(
            has_note(&r, WORKERS_NOTE),
            workers,
            "{name}: {}",
            r["notes"]
        );
        assert_eq!(r["totals"]["write"]["bytes"], 32 << 20, "{name}");
        assert_eq!(r["totals"]["error_count"], 0, "{name}");
        let data = std::fs::read(g.path(&format!("{name}.bin"))).unwrap();
        assert_eq!(data.len(), 32 << 20, "{name}");
        assert_stamps(name, &data, base);
    }
    // Deep random reads keep the queue deep in both io_uring modes.
    for (name, workers) in [("nvme-read", false), ("dm-workers-read", true)] {
        let r = ok(name);
        assert_eq!(
            has_note(&r, WORKERS_NOTE),
            workers,
            "{name}: {}",
            r["notes"]
        );
        let t = &r["totals"];
        assert!(t["read"]["ops"].as_u64().unwrap() > 100, "{name}: {t}");
        // (workers mode waits for a quarter of the queue per look)
        assert!(t["avg_inflight"].as_f64().unwrap() > 8.0, "{name}: {t}");
    }
}

#[test]
fn held_disks_and_mounted_partitions_of_real_stacks_are_not_written() {
    let g = lab::run(
        &["nvme:256M", "sata:128M"],
        r#"
. /out/lab.sh
F=/out/safety.facts
dl() {  # dl NAME ARGS...: drivelab's output in /out/NAME.txt, its rc in the facts
    # No SMART sampling here: QEMU 7.2's NVMe controller, sent admin log reads while a
    # loaded host slows its I/O, has been seen to stop completing I/O until the kernel
    # removes it (docs/lab.md); the identity test covers the sensors.
    n=$1; shift
    drivelab io "$@" --sensors none > /out/$n.txt 2>&1; echo "${n}_rc=$?" >> $F
}
SATA=$(disks_by_transport sata)
# A device-mapper device over the SATA disk holds it.
dm_create over_sata "0 $(blockdev --getsz $SATA) linear $SATA 0"
h=$(ls /sys/block/${SATA#/dev/}/holders); echo "holder=$h" >> $F; echo "holder_dm_name=$(cat /sys/block/$h/dm/name)" >> $F
echo "sata=$SATA" >> $F
dl held-write $SATA --rw randwrite --destructive=$SATA --runtime 1
dl held-read $SATA --rw randread --runtime 1
dmsetup remove over_sata
dl freed-write $SATA --rw randwrite --destructive=$SATA --runtime 1

# The NVMe namespace: two partitions, an ext4 filesystem mounted on the first.
printf 'label: gpt\n,64M\n,\n' | sfdisk -q /dev/nvme0n1; echo "sfdisk_rc=$?" >> $F
i=0; while [ ! -b /dev/nvme0n1p2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
# ext4 asks the crypto API for crc32c: no udev loads it here.
modprobe -a crc32c_generic ext4; mkfs.ext4 -q -F /dev/nvme0n1p1; echo "mkfs_rc=$?" >> $F
mkdir -p /tmp/fs && mount /dev/nvme0n1p1 /tmp/fs; echo "mount_rc=$?" >> $F
echo kept > /tmp/fs/file; sync
dl ns-mounted /dev/nvme0n1 --rw randwrite --destructive=/dev/nvme0n1 --runtime 1
dl ns-part-confirmed /dev/nvme0n1 --rw randwrite --destructive=/dev/nvme0n1p1 --runtime 1
dl p1-mounted /dev/nvme0n1p1 --rw randwrite --destructive=/dev/nvme0n1p1 --runtime 1
dl ns-read /dev/nvme0n1 --rw randread --runtime 1
dl p2-write /dev/nvme0n1p2 --rw write --bs 1M --io_size 100% --destructive=/dev/nvme0n1p2
umount /tmp/fs
# Unmounted, a confirmation naming the partition still does not cover the namespace.
dl ns-part-confirmed-unmounted /dev/nvme0n1 --rw randwrite --destructive=/dev/nvme0n1p1 --runtime 1
e2fsck -fn /dev/nvme0n1p1 > /out/fsck.txt 2>&1; echo "fsck_rc=$?" >> $F
mount -o ro /dev/nvme0n1p1 /tmp/fs && echo "file=$(cat /tmp/fs/file)" >> $F && umount /tmp/fs
dl ns-free /dev/nvme0n1 --rw randwrite --destructive=/dev/nvme0n1 --runtime 1
exit 0
"#,
        600,
    );
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("safety.facts");
    let refused = |name: &str, needles: &[&str]| {
        let out = g.text(&format!("{name}.txt"));
        assert_eq!(f.get(&format!("{name}_rc")), "2", "{name}: {out}");
        for n in needles {
            assert!(out.contains(n), "{name}: {out:?} should say {n:?}");
        }
    };
    let ran = |name: &str| {
        let out = g.text(&format!("{name}.txt"));
        assert_eq!(f.get(&format!("{name}_rc")), "0", "{name}: {out}");
    };
    for step in ["sfdisk", "mkfs", "mount"] {
        assert_eq!(f.get(&format!("{step}_rc")), "0", "{step}: {}", g.log());
    }
    // Held by the device-mapper device: refused naming the holder; reads go on; once
    // the dm device is gone the write is allowed.
    let sata = f.get("sata");
    assert_eq!(f.get("holder_dm_name"), "over_sata");
    let holder = f.get("holder");
    assert!(holder.starts_with("dm-"), "{holder}");
    refused(
        "held-write",
        &[
            &format!("refusing to write to {sata}"),
            &format!("held by {holder}"),
        ],
    );
    ran("held-read");
    ran("freed-write");
    // A mounted partition protects the whole namespace, even with --destructive.
    refused(
        "ns-mounted",
        &[
            "refusing to write to /dev/nvme0n1",
            "/dev/nvme0n1p1 is mounted on /tmp/fs",
        ],
    );
    refused("p1-mounted", &["/dev/nvme0n1p1 is mounted on /tmp/fs"]);
    // Confirming the partition does not confirm the namespace, mounted or not.
    for name in ["ns-part-confirmed", "ns-part-confirmed-unmounted"] {
        refused(
            name,
            &["--destructive=/dev/nvme0n1p1 does not name the target /dev/nvme0n1"],
        );
    }
    ran("ns-read");
    // The other partition may be written, and the mounted filesystem is untouched.
    ran("p2-write");
    assert_eq!(f.get("fsck_rc"), "0", "{}", g.text("fsck.txt"));
    assert_eq!(f.get("file"), "kept");
    ran("ns-free");
}

/// `a` is within a relative `tol` of `b`.
fn within(a: f64, b: f64, tol: f64) -> bool {
    (a / b - 1.0).abs() <= tol
}

/// smartctl as the sensor of disks with no hwmon device: what drivelab records is what
/// smartctl itself reads in the guest, at the rate it says (1 s or more on SATA); behind a USB
/// bridge, where smartctl reads anything at all, every 10 s, and said so.
#[test]
fn smartctl_reads_a_sata_disk_and_a_usb_bridge_at_their_rates() {
    let script = r#"
. /out/lab.sh
F=/out/smart.facts
S=$(disks_by_transport sata); U=$(disks_by_transport usb-storage)
echo "sata=$S" >> $F
smartctl --json=c -A $S > /out/sata-smart.json; echo "sata_smart_rc=$?" >> $F
drivelab io $S --rw randread --ioengine null --runtime 3 --json /out/sata.json > /out/sata.txt 2>&1
echo "sata_rc=$?" >> $F
smartctl --json=c -A $U > /out/usb-smart.json; echo "usb_smart_rc=$?" >> $F
drivelab io $U --rw randread --ioengine null --runtime 1 --json /out/usb.json > /out/usb.txt 2>&1
echo "usb_rc=$?" >> $F
exit 0
"#;
    let g = lab::run(&["sata:64M", "usb-bot:64M"], script, 600);
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("smart.facts");
    assert_eq!(f.get("sata_rc"), "0", "{}", g.text("sata.txt"));
    let smart = g.json("sata-smart.json");
    let want = smart["temperature"]["current"]
        .as_f64()
        .unwrap_or_else(|| panic!("smartctl read no temperature: {smart}"));
    let disk = f.get("sata").trim_start_matches("/dev/").to_string();
    let source = format!("smartctl:{disk}");
    let said = g.text("sata.txt");
    assert!(
        said.contains(&format!(
            "drivelab: sensors: {source} (SMART through smartctl; a read took"
        )),
        "{said}"
    );
    // At most once a second (or 20 times a read's cost, if longer).
    let every: f64 = said
        .split("; every ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no rate in: {said}"));
    assert!(every >= 1.0, "{said}");
    // --ioengine null: no I/O reached the disk, so its link has nothing to say.
    assert!(
        !said.contains("faster than the link") && !said.contains("Faster than"),
        "{said}"
    );
    let r = g.json("sata.json");
    let recs = r["series"]["records"].as_array().unwrap();
    let temps: Vec<f64> = recs
        .iter()
        .filter_map(|rec| reading(rec, "temperature", &source))
        .collect();
    assert!(!temps.is_empty(), "{recs:?}");
    assert!(
        temps.iter().all(|&t| t == want),
        "{temps:?} vs smartctl's {want}"
    );
    // The drive's own count of bytes written, where smartctl gives one.
    let lba = smart["ata_smart_attributes"]["table"]
        .as_array()
        .and_then(|t| t.iter().find(|a| a["id"] == 241))
        .and_then(|a| a["raw"]["value"].as_f64());
    if let Some(lba) = lba {
        let w = recs
            .iter()
            .find_map(|rec| reading(rec, "data_written", &source));
        assert_eq!(w, Some(lba * 512.0));
    }
    // Behind usb-storage: a source only where smartctl reads the disk, and then slower.
    assert_eq!(f.get("usb_rc"), "0", "{}", g.text("usb.txt"));
    let usb_said = g.text("usb.txt");
    let usb_reads = g.json("usb-smart.json")["temperature"]["current"].is_number();
    if usb_reads {
        assert!(
            usb_said.contains("every 10 s, slower on a USB bridge"),
            "{usb_said}"
        );
    } else {
        assert!(!usb_said.contains("smartctl:"), "{usb_said}");
    }
}

/// Offsets of the integrity test's damage: the block dm-flakey corrupts (byte 2049 of
/// each write to it set to 1) and the block whose writes it acknowledges and drops.
const CORRUPT_BLOCK: u64 = 100;
const CORRUPT_NTH_BYTE: u64 = 2049;
const DROPPED_BLOCK: u64 = 200;

#[test]
fn silent_corruption_and_dropped_writes_of_dm_flakey_are_found_at_their_offsets() {
    // A 4 MiB sequential write with --verify through a table of linear segments and two
    // one-block dm-flakey segments (always down): one corrupting a byte of every write
    // bio (`corrupt_bio_byte`), one acknowledging writes and dropping them
    // (`drop_writes`, a lying drive). The disk underneath is read back with dd, so the
    // test knows independently of drivelab what dm-flakey did.
    let script = format!(
        r#"
. /out/lab.sh
F=/out/f
nullb_create nbv 64 || exit 3
c=$(({cb} * 8)); d=$(({db} * 8)); SZ=$(blockdev --getsz /dev/nbv)
printf '%s\n' \
  "0 $c linear /dev/nbv 0" \
  "$c 8 flakey /dev/nbv $c 0 3600 5 corrupt_bio_byte {nth} w 1 0" \
  "$((c + 8)) $((d - c - 8)) linear /dev/nbv $((c + 8))" \
  "$d 8 flakey /dev/nbv $d 0 3600 1 drop_writes" \
  "$((d + 8)) $((SZ - d - 8)) linear /dev/nbv $((d + 8))" | dmsetup create lie || exit 4
dmsetup mknodes lie
drivelab io /dev/mapper/lie --rw write --bs 4k --size 4M --io_size 4M --iodepth 4 \
    --verify --destructive=/dev/mapper/lie --json /out/v.json > /out/v.txt 2>&1
echo "io_rc=$?" >> $F
drivelab verify /dev/nbv --from /out/v.json --json > /out/later.json 2> /out/later.txt
echo "later_rc=$?" >> $F
echo "corrupt_byte=$(dd if=/dev/nbv bs=1 skip=$(({cb} * 4096 + {nth} - 1)) count=1 2>/dev/null | od -An -tu1 | tr -d ' ')" >> $F
echo "dropped_nonzero=$(dd if=/dev/nbv bs=4096 skip={db} count=1 2>/dev/null | tr -d '\000' | wc -c)" >> $F
dmsetup remove lie
exit 0
"#,
        cb = CORRUPT_BLOCK,
        db = DROPPED_BLOCK,
        nth = CORRUPT_NTH_BYTE,
    );
    let g = lab::run(&["none"], &script, 300);
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("f");
    // What dm-flakey did, seen on the disk underneath: the byte is 1, the block zeros.
    assert_eq!(f.get("corrupt_byte"), "1", "{}", g.log());
    assert_eq!(f.get("dropped_nonzero"), "0", "{}", g.log());
    let at = CORRUPT_BLOCK * 4096 + CORRUPT_NTH_BYTE - 1;
    let check = |v: &Value| {
        assert_eq!(v["blocks_bad"], 2, "{v}");
        assert_eq!(v["classes"]["corrupt"], 1, "{v}");
        assert_eq!(v["classes"]["zeros"], 1, "{v}");
        let m = v["mismatches"].as_array().unwrap();
        assert_eq!(m[0]["class"], "corrupt", "{v}");
        assert_eq!(m[0]["offset_bytes"], CORRUPT_BLOCK * 4096);
        assert_eq!(m[0]["first_bad_byte_offset_bytes"], at);
        assert_eq!(m[1]["class"], "zeros", "{v}");
        assert_eq!(m[1]["offset_bytes"], DROPPED_BLOCK * 4096);
    };
    // The run fails (exit 1) and its document says so, with the two blocks in it.
    assert_eq!(f.get("io_rc"), "1", "{}", g.text("v.txt"));
    let r = g.json("v.json");
    assert_eq!(r["status"], "failed", "{r}");
    check(&r["verify"]);
    // Checked again later straight off the disk underneath: the same two blocks.
    assert_eq!(f.get("later_rc"), "1", "{}", g.text("later.txt"));
    check(&g.json("later.json"));
}

const PL_ROUNDS: u64 = 6;
const PL_ROUND_BLOCKS: u64 = 16;

#[test]
fn powerloss_replayed_from_dm_log_writes_finds_no_loss_on_an_honest_stack_and_the_dropped_writes_of_a_lying_one(
) {
    // A `powerloss` write phase recorded by dm-log-writes (data on one null_blk disk, the
    // log on another; the journal on /out). The kernel's log is then replayed with
    // drivelab's replayer onto a zeroed disk up to each FLUSH entry (the k-th flush is
    // round k's), and `powerloss --check`, given the journal cut after round k's
    // `flushed` record, must find every flushed block durable. As a control, the replay
    // to flush 2 checked against the journal through round 3 must report round 3's
    // blocks lost after a completed flush. In the same boot, a lying stack (dm-flakey
    // drop_writes on block 0, above a second log): the check must find that block lost.
    let script = format!(
        r#"
. /out/lab.sh
F=/out/f
nullb_create nbw 16 && nullb_create nbl 64 && nullb_create nbr 16 || exit 3
SZ=$(blockdev --getsz /dev/nbw)
dm_create lw "0 $SZ log-writes /dev/nbw /dev/nbl" || exit 4
drivelab run powerloss /dev/mapper/lw --destructive=/dev/mapper/lw --journal /out/j.jsonl \
    --rounds {rounds} --round-blocks {rb} --out /out/pl > /out/pl.txt 2>&1
echo "write_rc=$?" >> $F
# A last mark makes dm-log-writes write its super block with the final entry count.
dmsetup message lw 0 mark end; dmsetup remove lw
drivelab lab-replay-log /dev/nbl /dev/nbr --destructive=/dev/nbr --to-mark end > /out/replay-end.json 2> /out/replay-end.txt
echo "replay_end_rc=$?" >> $F
# replay_check NAME FLUSH ROUNDS: replay up to flush FLUSH onto the zeroed nbr, check it
# against the journal through round ROUNDS's flushed record (under the recorded name).
replay_check() {{
    dd if=/dev/zero of=/dev/nbr bs=1M count=16 conv=fsync 2>/dev/null
    drivelab lab-replay-log /dev/nbl /dev/nbr --destructive=/dev/nbr --to-flush $2 > /out/replay-$1.json 2> /out/replay-$1.txt
    echo "replay_rc_$1=$?" >> $F
    awk -v n=$3 '{{ print }} /"record":"flushed"/ {{ if (++k == n) exit }}' /out/j.jsonl > /out/j-$1.jsonl
    dm_create lw "0 $SZ linear /dev/nbr 0"
    drivelab run powerloss --check /out/j-$1.jsonl /dev/mapper/lw > /out/check-$1.txt 2>&1
    echo "check_rc_$1=$?" >> $F
    cp /out/pl/run.json /out/check-$1.json
    dmsetup remove lw
}}
for k in $(seq 1 {rounds}); do replay_check $k $k $k; done
replay_check control 2 3
# A lying stack: dm-flakey drop_writes on block 0 above the log (the dropped writes never
# reach it; the flakey segment drops its empty flushes too, the linear one passes them).
nullb_create nbw2 16 && nullb_create nbl2 64 || exit 5
dm_create lw2 "0 $SZ log-writes /dev/nbw2 /dev/nbl2" || exit 6
printf '%s\n' "0 8 flakey /dev/mapper/lw2 0 0 3600 1 drop_writes" \
    "8 $((SZ - 8)) linear /dev/mapper/lw2 8" | dmsetup create lie && dmsetup mknodes lie || exit 7
drivelab run powerloss /dev/mapper/lie --destructive=/dev/mapper/lie --journal /out/jd.jsonl \
    --rounds {rounds} --round-blocks {rb} --out /out/pld > /out/pld.txt 2>&1
echo "lie_write_rc=$?" >> $F
dmsetup remove lie; dmsetup message lw2 0 mark end; dmsetup remove lw2
for k in 1 {rounds}; do
    dd if=/dev/zero of=/dev/nbr bs=1M count=16 conv=fsync 2>/dev/null
    drivelab lab-replay-log /dev/nbl2 /dev/nbr --destructive=/dev/nbr --to-flush $k > /out/replay-lie-$k.json 2> /out/replay-lie-$k.txt
    echo "replay_rc_lie_$k=$?" >> $F
    awk -v n=$k '{{ print }} /"record":"flushed"/ {{ if (++k == n) exit }}' /out/jd.jsonl > /out/jd-$k.jsonl
    dm_create lie "0 $SZ linear /dev/nbr 0"
    drivelab run powerloss --check /out/jd-$k.jsonl /dev/mapper/lie > /out/check-lie-$k.txt 2>&1
    echo "check_rc_lie_$k=$?" >> $F
    cp /out/pld/run.json /out/check-lie-$k.json
    dmsetup remove lie
done
exit 0
"#,
        rounds = PL_ROUNDS,
        rb = PL_ROUND_BLOCKS,
    );
    let g = lab::run(&["none"], &script, 600);
    assert_eq!(g.rc, 0, "{}", g.log());
    let f = g.facts("f");
    assert_eq!(f.get("write_rc"), "0", "{}", g.text("pl.txt"));
    // The whole log as the kernel wrote it: every round's blocks, nothing discarded.
    assert_eq!(f.get("replay_end_rc"), "0", "{}", g.text("replay-end.txt"));
    let all = g.json("replay-end.json");
    assert!(
        all["bytes_written"].as_u64().unwrap() >= PL_ROUNDS * PL_ROUND_BLOCKS * 4096,
        "{all}"
    );
    assert_eq!(all["discards"], 0, "{all}");
    let analysis =
        |name: &str| g.json(&format!("check-{name}.json"))["summary"]["analysis"].clone();
    for k in 1..=PL_ROUNDS {
        let r = g.json(&format!("replay-{k}.json"));
        assert_eq!(
            f.get(&format!("replay_rc_{k}")),
            "0",
            "{}",
            g.text(&format!("replay-{k}.txt"))
        );
        assert!(
            r["bytes_written"].as_u64().unwrap() >= k * PL_ROUND_BLOCKS * 4096,
            "flush {k}: {r}"
        );
        let check = g.text(&format!("check-{k}.txt"));
        let a = analysis(&k.to_string());
        if k < PL_ROUNDS {
            assert_eq!(f.get(&format!("check_rc_{k}")), "0", "flush {k}: {check}");
            assert_eq!(a["flushes_honoured"], true, "flush {k}: {a}");
        } else {
            // Every round written and flushed before the "cut": nothing was tested.
            assert_eq!(f.get(&format!("check_rc_{k}")), "1", "flush {k}: {check}");
            assert_eq!(a["verdict"], "inconclusive", "flush {k}: {a}");
        }
        assert_eq!(a["lost_after_flush_blocks"], 0, "flush {k}: {a}");
        assert_eq!(a["misdirected_blocks"], 0, "flush {k}: {a}");
        assert_eq!(a["torn_blocks"], 0, "flush {k}: {a}");
        assert_eq!(a["durable_blocks"], k * PL_ROUND_BLOCKS, "flush {k}: {a}");
    }
    // The control: round 3 was flushed in the journal but is not in the replay.
    assert_eq!(
        f.get("check_rc_control"),
        "1",
        "{}",
        g.text("check-control.txt")
    );
    let a = analysis("control");
    assert_eq!(a["flushes_honoured"], false, "{a}");
    assert_eq!(a["lost_after_flush_blocks"], PL_ROUND_BLOCKS, "{a}");
    // The lying stack: block 0 (round 0's) acknowledged and dropped, found lost after a
    // completed flush (as zeros) at the first flush and still at the last.
    assert_eq!(f.get("lie_write_rc"), "0", "{}", g.text("pld.txt"));
    for k in [1, PL_ROUNDS] {
        assert_eq!(
            f.get(&format!("replay_rc_lie_{k}")),
            "0",
            "{}",
            g.text(&format!("replay-lie-{k}.txt"))
        );
        let check = g.text(&format!("check-lie-{k}.txt"));
        assert_eq!(
            f.get(&format!("check_rc_lie_{k}")),
            "1",
            "flush {k}: {check}"
        );
        let a = analysis(&format!("lie-{k}"));
        assert_eq!(a["flushes_honoured"], false, "flush {k}: {a}");
        assert_eq!(a["lost_after_flush_blocks"], 1, "flush {k}: {a}");
        assert_eq!(a["lost_after_flush_found"]["zeros"], 1, "flush {k}: {a}");
        assert_eq!(
            a["durable_blocks"],
            k * PL_ROUND_BLOCKS - 1,
            "flush {k}: {a}"
        );
        let m = &a["cycles"][0]["mismatches"][0];
        assert_eq!(m["offset_bytes"], 0, "flush {k}: {a}");
    }
}
