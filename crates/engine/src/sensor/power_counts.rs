//! A drive's own count of its power cycles and its power-on hours, read once (not
//! sampled in a run): what shows later whether the drive's power was cut in between
//! (`drivelab run powerloss` records them before its write phase and compares at its
//! check). An NVMe drive's from its SMART / health log ([`super::nvme`]); other disks'
//! (SATA, SAS, behind a USB bridge) through smartctl ([`super::smartctl`]): ATA
//! attributes 12 (Power_Cycle_Count) and 9 (Power_On_Hours), or smartctl's own reading
//! of them. Read-only, like the sensors.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{nvme, smartctl, SMARTCTL_TRANSPORTS};
use crate::target::identity::DeviceIdentity;

/// What the drive counts of its power.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCounts {
    /// Times the drive was powered on.
    pub power_cycles: u64,
    /// Hours powered on; null when the drive does not say.
    pub power_on_hours: Option<u64>,
    /// Where they were read, e.g. "nvme-smart:nvme0", "smartctl:sda".
    pub source: String,
}

/// The counts of the drive `id` names (sysfs under `sys_root`, devices under
/// `dev_root`); None when no source can read them (no SMART, not root, no smartctl, a
/// loop or device-mapper device, which has no power of its own).
pub fn read(sys_root: &Path, dev_root: &Path, id: &DeviceIdentity) -> Option<PowerCounts> {
    if let Some(ctrl) = &id.nvme_controller {
        let log =
            nvme::open_controller(sys_root, dev_root, ctrl).and_then(|f| nvme::read_smart(&f).ok());
        if let Some(log) = log {
            return Some(of_nvme(&log, &format!("nvme-smart:{ctrl}")));
        }
    }
    if id.transport != "nvme" && !SMARTCTL_TRANSPORTS.contains(&id.transport.as_str()) {
        return None;
    }
    let program = smartctl::find_program()?;
    let doc = smartctl::run(&program, &dev_root.join(&id.disk))?;
    of_smartctl(&doc, &format!("smartctl:{}", id.disk))
}

/// The counts in an NVMe SMART / health log.
pub fn of_nvme(log: &nvme::SmartLog, source: &str) -> PowerCounts {
    PowerCounts {
        power_cycles: u64::try_from(log.power_cycles).unwrap_or(u64::MAX),
        power_on_hours: u64::try_from(log.power_on_hours).ok(),
        source: source.into(),
    }
}

/// The counts in smartctl's JSON (`-A`): its own `power_cycle_count` and
/// `power_on_time.hours` (smartmontools 7 gives them for ATA and NVMe), else ATA
/// attributes 12 and 9's raw values, else its NVMe log's. None without a cycle count.
pub fn of_smartctl(doc: &Value, source: &str) -> Option<PowerCounts> {
    let attr = |id: u64| {
        doc["ata_smart_attributes"]["table"]
            .as_array()?
            .iter()
            .find(|a| a["id"] == id)?["raw"]["value"]
            .as_u64()
    };
    let nvme = &doc["nvme_smart_health_information_log"];
    let power_cycles = doc["power_cycle_count"]
        .as_u64()
        .or_else(|| attr(12))
        .or_else(|| nvme["power_cycles"].as_u64())?;
    let power_on_hours = doc["power_on_time"]["hours"]
        .as_u64()
        .or_else(|| attr(9))
        .or_else(|| nvme["power_on_hours"].as_u64());
    Some(PowerCounts {
        power_cycles,
        power_on_hours,
        source: source.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// smartctl 7.3's `--json=c -A` of a SATA SSD (trimmed to what is read).
    const SATA: &str = r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":0},
        "device":{"name":"/dev/sda","type":"sat","protocol":"ATA"},
        "ata_smart_attributes":{"revision":1,"table":[
          {"id":9,"name":"Power_On_Hours","value":95,"raw":{"value":20411,"string":"20411"}},
          {"id":12,"name":"Power_Cycle_Count","value":99,"raw":{"value":1517,"string":"1517"}},
          {"id":241,"name":"Total_LBAs_Written","raw":{"value":2000,"string":"2000"}}]},
        "power_on_time":{"hours":20411},"power_cycle_count":1517,"temperature":{"current":31}}"#;

    #[test]
    fn smartctl_gives_the_cycle_count_and_hours_of_a_sata_disk() {
        let doc: Value = serde_json::from_str(SATA).unwrap();
        let c = of_smartctl(&doc, "smartctl:sda").unwrap();
        assert_eq!((c.power_cycles, c.power_on_hours), (1517, Some(20411)));
        assert_eq!(c.source, "smartctl:sda");
    }

    #[test]
    fn without_smartctls_summary_the_attributes_or_the_nvme_log_are_read() {
        let mut doc: Value = serde_json::from_str(SATA).unwrap();
        doc["power_cycle_count"] = Value::Null;
        doc["power_on_time"] = Value::Null;
        doc["ata_smart_attributes"]["table"][1]["raw"]["value"] = 1600.into();
        let c = of_smartctl(&doc, "s").unwrap();
        assert_eq!((c.power_cycles, c.power_on_hours), (1600, Some(20411)));
        let nvme: Value = serde_json::from_str(
            r#"{"nvme_smart_health_information_log":{"power_cycles":42,"power_on_hours":7,"unsafe_shutdowns":3}}"#,
        )
        .unwrap();
        let c = of_smartctl(&nvme, "s").unwrap();
        assert_eq!((c.power_cycles, c.power_on_hours), (42, Some(7)));
    }

    #[test]
    fn no_cycle_count_is_none_not_zero() {
        let doc: Value = serde_json::from_str(r#"{"temperature":{"current":30}}"#).unwrap();
        assert_eq!(of_smartctl(&doc, "s"), None);
    }

    #[test]
    fn a_loop_device_or_an_absent_controller_has_no_counts() {
        let d = tempfile::tempdir().unwrap();
        let id = DeviceIdentity {
            disk: "loop0".into(),
            transport: "loop".into(),
            ..DeviceIdentity::default()
        };
        assert_eq!(read(d.path(), d.path(), &id), None);
        let id = DeviceIdentity {
            nvme_controller: Some("nvme0".into()),
            transport: "nvme".into(),
            disk: "nvme0n1".into(),
            ..DeviceIdentity::default()
        };
        // No such controller under the fake roots; smartctl (if installed) cannot open
        // the missing device either.
        assert_eq!(read(d.path(), d.path(), &id), None);
    }
}
