//! Sensors beside the I/O series: temperature, power and the like.
//!
//! A reading is a value with its unit and the time it was taken on the run's clock; the
//! engine files every reading under the interval its time falls in, so temperature or
//! power sit in the same series as IOPS and latency. Two kinds of source feed it: a
//! simulated device's own model (sampled in virtual time at every interval boundary by
//! the discrete-event backend), and [`SensorSource`]s attached to a target (sampled on a
//! side thread at every interval boundary of a real run), where real sensors (hwmon,
//! NVMe SMART, a USB power meter) plug in.

pub mod hwmon;
pub mod meter;
pub mod nvme;
pub mod power_counts;
pub mod sampler;
pub mod smartctl;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::target::identity::DeviceIdentity;

/// One sensor value at a time on the run's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SensorReading {
    /// Short name, e.g. "temperature", "power", "critical_warning".
    pub name: String,
    /// Unit, e.g. "celsius", "watt", "minutes", "bytes".
    pub unit: String,
    /// Null when the sensor could not be read this time (never a made-up 0).
    pub value: Option<f64>,
    /// When it was sampled, on the same clock as the I/O timestamps (ns).
    pub at_ns: u64,
    /// Where it comes from, e.g. "hwmon:nvme", "nvme-smart:nvme0", "model".
    #[serde(default)]
    pub source: String,
}

impl SensorReading {
    pub fn new(name: &str, unit: &str, value: Option<f64>, at_ns: u64, source: &str) -> Self {
        SensorReading {
            name: name.into(),
            unit: unit.into(),
            value,
            at_ns,
            source: source.into(),
        }
    }
}

/// A sensor attached to a real target, sampled once per interval during a run.
pub trait SensorSource: Send {
    /// Current values, stamped `at_ns` (the run's clock); a reading that cannot be taken
    /// right now has a null value.
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading>;

    /// What it reads, for a line at the start of a run (e.g. "hwmon nvme: 3 channels").
    fn describe(&self) -> String {
        "a sensor".into()
    }

    /// Which kind of source it is, as `--sensors` names it: "hwmon", "nvme", "smartctl",
    /// or another word for a source the user named (a meter, `--sensor-hwmon`).
    fn kind(&self) -> &'static str {
        "other"
    }

    /// What went wrong since the last call (a meter that died or printed garbage), for
    /// the run's notes.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// The most power, voltage and current a drive bench can see: a value beyond (or a
/// negative one) is a broken sensor or a misread, not a measurement.
pub const MAX_WATT: f64 = 10_000.0;
pub const MAX_VOLT: f64 = 1_000.0;
pub const MAX_AMPERE: f64 = 1_000.0;

/// Whether `v` in `unit` can be a real reading: finite, and for power, voltage, current
/// and energy not negative, and not beyond [`MAX_WATT`], [`MAX_VOLT`], [`MAX_AMPERE`].
pub fn plausible(unit: &str, v: f64) -> bool {
    let max = match unit {
        "watt" => MAX_WATT,
        "volt" => MAX_VOLT,
        "ampere" => MAX_AMPERE,
        "joule" => f64::INFINITY,
        _ => return v.is_finite(),
    };
    v.is_finite() && (0.0..=max).contains(&v)
}

/// What [`plausible`] accepts, for notes.
pub const PLAUSIBLE: &str = "power, voltage and current are 0 to 10 kW, 1 kV, 1 kA";

/// The kinds `--sensors` can name besides `auto` and `none`.
pub const SENSOR_KINDS: [&str; 3] = ["hwmon", "nvme", "smartctl"];

/// The transports whose disks smartctl reads (SAT passthrough behind a USB bridge).
pub(crate) const SMARTCTL_TRANSPORTS: [&str; 5] = ["sata", "sas", "scsi", "usb-uas", "usb-bot"];

/// The source kinds `choice` keeps: None for all (`auto`), else the listed ones (`none`:
/// none); an unknown word is an error naming what is accepted.
pub fn parse_choice(choice: &str) -> Result<Option<Vec<String>>, String> {
    match choice.trim() {
        "auto" => return Ok(None),
        "none" => return Ok(Some(Vec::new())),
        _ => {}
    }
    let kinds: Vec<String> = choice.split(',').map(|k| k.trim().to_string()).collect();
    match kinds.iter().find(|k| !SENSOR_KINDS.contains(&k.as_str())) {
        Some(bad) => Err(format!(
            "'{bad}' is not auto, none or a list of {}",
            SENSOR_KINDS.join(", ")
        )),
        None => Ok(Some(kinds)),
    }
}

/// The drive's own sensors, found through sysfs under `sys_root` (normally `/sys`),
/// character devices under `dev_root` (normally `/dev`): its hwmon devices and, for
/// NVMe, the SMART / health log of its controller.
pub fn discover(
    sys_root: &Path,
    dev_root: &Path,
    id: &DeviceIdentity,
) -> Vec<Box<dyn SensorSource>> {
    let mut found: Vec<Box<dyn SensorSource>> = Vec::new();
    for s in hwmon::find(&id.sensor_dirs) {
        found.push(Box::new(s));
    }
    if let Some(ctrl) = &id.nvme_controller {
        if let Some(s) = nvme::SmartSource::open(sys_root, dev_root, ctrl) {
            found.push(Box::new(s));
        }
    }
    // smartctl is the fallback for disks with no hwmon device of their own (no
    // drivetemp, or behind a USB bridge).
    if found.is_empty() && SMARTCTL_TRANSPORTS.contains(&id.transport.as_str()) {
        let usb = id.transport.starts_with("usb");
        let dev = dev_root.join(&id.disk);
        if let Some(s) =
            smartctl::find_program().and_then(|p| smartctl::SmartctlSource::open(&p, &dev, usb))
        {
            found.push(Box::new(s));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::parse_choice;

    #[test]
    fn absurd_or_negative_power_is_not_plausible() {
        use super::plausible;
        assert!(plausible("watt", 5.5) && plausible("watt", 0.0) && plausible("celsius", -5.0));
        assert!(!plausible("watt", -3.0) && !plausible("volt", -0.1) && !plausible("ampere", -1.0));
        assert!(!plausible("watt", 1e17) && !plausible("watt", f64::NAN));
        assert!(!plausible("celsius", f64::INFINITY));
    }

    #[test]
    fn sensor_choices() {
        assert_eq!(parse_choice("auto"), Ok(None));
        assert_eq!(parse_choice("none"), Ok(Some(vec![])));
        assert_eq!(
            parse_choice("hwmon, nvme"),
            Ok(Some(vec!["hwmon".into(), "nvme".into()]))
        );
        let e = parse_choice("hwmon,smart").unwrap_err();
        assert!(
            e.contains("'smart'") && e.contains("hwmon, nvme, smartctl"),
            "{e}"
        );
    }
}
