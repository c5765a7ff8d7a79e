//! smartctl's JSON (smartmontools 7+) for the disks NVMe's passthrough does not reach:
//! SATA and SAS disks and the drives behind USB bridges (which smartctl reaches through
//! SAT passthrough). Read-only: `smartctl --json=c --nocheck=standby -A DEVICE`, which
//! leaves a sleeping disk asleep. Gives the temperature, the warning (trip) temperature
//! where the drive reports one, and the bytes written the drive counts (ATA attribute
//! 241, SAS's "gigabytes processed").
//!
//! A read is a process and a round trip to the drive; some USB bridges hold I/O back
//! while they pass a SMART command through. The first read's cost is measured when the
//! source is opened; on a USB bridge the source reads at most every
//! [`USB_PERIOD_NS`] (or 20 times the measured cost, if longer), elsewhere at most every
//! [`PERIOD_NS`], and says so. Between reads it gives no reading (absent, not repeated).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::{SensorReading, SensorSource};

/// Least time between two reads of a SATA or SAS disk.
pub const PERIOD_NS: u64 = 1_000_000_000;
/// Least time between two reads through a USB bridge.
pub const USB_PERIOD_NS: u64 = 10_000_000_000;

/// A disk read through smartctl.
pub struct SmartctlSource {
    program: PathBuf,
    device: PathBuf,
    source: String,
    /// What one read cost when the source was opened (ns of wall time).
    pub cost_ns: u64,
    pub period_ns: u64,
    usb: bool,
    /// CLOCK_MONOTONIC of the last read.
    last_read: Option<u64>,
}

/// smartctl where Debian puts it, else on the PATH.
pub fn find_program() -> Option<PathBuf> {
    for p in ["/usr/sbin/smartctl", "/usr/bin/smartctl", "/sbin/smartctl"] {
        if Path::new(p).exists() {
            return Some(p.into());
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("smartctl"))
        .find(|p| p.exists())
}

/// smartctl's `-A` document for `device`; None when it could not read the device.
pub(crate) fn run(program: &Path, device: &Path) -> Option<Value> {
    let out = Command::new(program)
        .args(["--json=c", "--nocheck=standby", "-A"])
        .arg(device)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    // smartctl's exit status is a bit mask of findings (bit 0: the command line, bit 1:
    // the device could not be opened); the JSON says what it read.
    if out.status.code().is_some_and(|c| c & 0b11 != 0) {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// The readings in one smartctl JSON document: (name, unit, value).
pub fn values(doc: &Value) -> Vec<(&'static str, &'static str, Option<f64>)> {
    let temp = &doc["temperature"];
    let mut v = vec![("temperature", "celsius", temp["current"].as_f64())];
    if let Some(trip) = temp["drive_trip"]
        .as_f64()
        .or(temp["op_limit_max"].as_f64())
    {
        v.push(("temperature_warning", "celsius", Some(trip)));
    }
    if let Some(b) = written_bytes(doc) {
        v.push(("data_written", "bytes", Some(b)));
    }
    v
}

/// Bytes the drive says it has written: ATA attribute 241 (Total_LBAs_Written, in
/// logical blocks) or a SAS disk's write error-counter log (gigabytes processed).
fn written_bytes(doc: &Value) -> Option<f64> {
    let table = doc["ata_smart_attributes"]["table"].as_array();
    if let Some(a) = table.and_then(|t| t.iter().find(|a| a["id"] == 241)) {
        let block = doc["logical_block_size"].as_f64().unwrap_or(512.0);
        return Some(a["raw"]["value"].as_f64()? * block);
    }
    let gb = doc["scsi_error_counter_log"]["write"]["gigabytes_processed"].as_str()?;
    Some(gb.trim().parse::<f64>().ok()? * 1e9)
}

impl SmartctlSource {
    /// The disk `device` read with `program`; None when smartctl cannot read its
    /// temperature. `usb`: the disk is behind a USB bridge (read less often).
    pub fn open(program: &Path, device: &Path, usb: bool) -> Option<SmartctlSource> {
        let t0 = crate::sys::monotonic_ns();
        let doc = run(program, device)?;
        let cost_ns = crate::sys::monotonic_ns() - t0;
        doc["temperature"]["current"].as_f64()?;
        let period_ns = if usb {
            USB_PERIOD_NS.max(cost_ns.saturating_mul(20))
        } else {
            PERIOD_NS.max(cost_ns.saturating_mul(20))
        };
        let name = device
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into());
        Some(SmartctlSource {
            program: program.into(),
            device: device.into(),
            source: format!("smartctl:{name}"),
            cost_ns,
            period_ns,
            usb,
            last_read: None,
        })
    }
}

impl SensorSource for SmartctlSource {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        let now = crate::sys::monotonic_ns();
        if self
            .last_read
            .is_some_and(|t| now.saturating_sub(t) < self.period_ns)
        {
            return Vec::new();
        }
        self.last_read = Some(now);
        match run(&self.program, &self.device) {
            Some(doc) => values(&doc)
                .into_iter()
                .map(|(n, u, v)| SensorReading::new(n, u, v, at_ns, &self.source))
                .collect(),
            None => vec![SensorReading::new(
                "temperature",
                "celsius",
                None,
                at_ns,
                &self.source,
            )],
        }
    }

    fn describe(&self) -> String {
        let period = self.period_ns as f64 / 1e9;
        format!(
            "{} (SMART through smartctl; a read took {:.0} ms; every {} s{})",
            self.source,
            self.cost_ns as f64 / 1e6,
            if period.fract() == 0.0 {
                format!("{period:.0}")
            } else {
                format!("{period:.1}")
            },
            if self.usb {
                ", slower on a USB bridge: some bridges stall I/O while they pass SMART through"
            } else {
                ""
            }
        )
    }

    fn kind(&self) -> &'static str {
        "smartctl"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for smartctl printing `json` (and counting its calls in `calls`).
    fn fake(dir: &Path, json: &str) -> PathBuf {
        let p = dir.join("smartctl");
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\necho \"$@\" >> {}/calls\ncat <<'EOF'\n{json}\nEOF\n",
                dir.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    const SATA: &str = r#"{"smartctl":{"exit_status":0},"logical_block_size":512,
        "temperature":{"current":38},
        "ata_smart_attributes":{"table":[{"id":9,"raw":{"value":100}},{"id":241,"raw":{"value":2000}}]}}"#;

    #[test]
    fn a_sata_disk_gives_temperature_and_bytes_written_at_its_rate() {
        let d = tempfile::tempdir().unwrap();
        let prog = fake(d.path(), SATA);
        let mut s = SmartctlSource::open(&prog, Path::new("/dev/sdz"), false).unwrap();
        assert!(s.period_ns >= PERIOD_NS);
        let r = s.sample(5);
        let got: Vec<(&str, &str, Option<f64>)> = r
            .iter()
            .map(|x| (x.name.as_str(), x.unit.as_str(), x.value))
            .collect();
        assert_eq!(
            got,
            [
                ("temperature", "celsius", Some(38.0)),
                ("data_written", "bytes", Some(1_024_000.0))
            ]
        );
        assert!(r.iter().all(|x| x.source == "smartctl:sdz" && x.at_ns == 5));
        // At once again: too soon, nothing read.
        assert!(s.sample(6).is_empty());
        let calls = std::fs::read_to_string(d.path().join("calls")).unwrap();
        assert_eq!(calls.lines().count(), 2, "{calls}");
        assert!(calls.contains("--nocheck=standby -A /dev/sdz"), "{calls}");
        assert!(!s.describe().contains("USB"));
    }

    #[test]
    fn a_usb_bridge_is_read_every_ten_seconds_and_says_why() {
        let d = tempfile::tempdir().unwrap();
        let prog = fake(
            d.path(),
            r#"{"temperature":{"current":31,"drive_trip":65}}"#,
        );
        let s = SmartctlSource::open(&prog, Path::new("/dev/sdy"), true).unwrap();
        assert!(s.period_ns >= USB_PERIOD_NS);
        assert!(
            s.describe().contains("some bridges stall I/O"),
            "{}",
            s.describe()
        );
        let v = values(
            &serde_json::from_str(
                r#"{"temperature":{"current":31,"drive_trip":65},
            "scsi_error_counter_log":{"write":{"gigabytes_processed":"1.5"}}}"#,
            )
            .unwrap(),
        );
        assert_eq!(
            v,
            [
                ("temperature", "celsius", Some(31.0)),
                ("temperature_warning", "celsius", Some(65.0)),
                ("data_written", "bytes", Some(1.5e9))
            ]
        );
    }

    #[test]
    fn no_temperature_or_a_failed_smartctl_is_no_source() {
        let d = tempfile::tempdir().unwrap();
        let prog = fake(d.path(), r#"{"smartctl":{"exit_status":2}}"#);
        assert!(SmartctlSource::open(&prog, Path::new("/dev/sdx"), false).is_none());
        let prog = d.path().join("missing");
        assert!(SmartctlSource::open(&prog, Path::new("/dev/sdx"), false).is_none());
    }
}
