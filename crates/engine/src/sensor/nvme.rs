//! NVMe SMART / Health Information (log page 02h), read from the controller's character
//! device through the admin passthrough ioctl ([`crate::sys::nvme_get_log_page`]):
//! composite temperature and sensors 1-8, the critical-warning bits, the time spent
//! above the warning and critical composite temperatures, the thermal-management
//! transition counts and times, and the data read and written; the current power state
//! (Get Features) with its rated maximum power (Identify Controller's power-state
//! descriptors); and, on drives with the OCP datacenter SMART log (C0h), the physical
//! media units written, from which a step gets the drive's own write amplification.
//! Read-only: only Get Log Page, Identify and Get Features are sent.

use std::fs::File;
use std::path::Path;

use super::{SensorReading, SensorSource};

/// Log page 02h.
const SMART_LOG: u8 = 0x02;
/// An NVMe "data unit": 1000 sectors of 512 bytes.
const DATA_UNIT_BYTES: f64 = 512_000.0;

/// The fields of the SMART / health log drivelab records (NVMe 1.4, figure 194).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmartLog {
    pub critical_warning: u8,
    pub composite_kelvin: u16,
    pub data_units_read: u128,
    pub data_units_written: u128,
    pub warning_temperature_minutes: u32,
    pub critical_temperature_minutes: u32,
    /// Sensors 1-8 in kelvin; 0 where the controller has no such sensor.
    pub sensors_kelvin: [u16; 8],
    /// Thermal management temperature 1 and 2: transitions, and seconds spent there.
    pub thermal_transitions: [u32; 2],
    pub thermal_seconds: [u32; 2],
    /// Power cycles, power-on hours and unsafe shutdowns (not sampled: read once, as
    /// evidence of a power cut, by [`super::power_counts`]).
    pub power_cycles: u128,
    pub power_on_hours: u128,
    pub unsafe_shutdowns: u128,
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

fn u128_at(b: &[u8], off: usize) -> u128 {
    u128::from_le_bytes(b[off..off + 16].try_into().expect("16 bytes"))
}

/// Kelvin to °C (in hundredths, so that 323 K is exactly 49.85 °C); 0 K means "not
/// reported".
fn celsius(k: u16) -> Option<f64> {
    (k > 0).then_some((k as f64 * 100.0 - 27315.0) / 100.0)
}

impl SmartLog {
    pub fn parse(b: &[u8; 512]) -> SmartLog {
        let mut sensors_kelvin = [0u16; 8];
        for (i, s) in sensors_kelvin.iter_mut().enumerate() {
            *s = u16_at(b, 200 + 2 * i);
        }
        SmartLog {
            critical_warning: b[0],
            composite_kelvin: u16_at(b, 1),
            data_units_read: u128_at(b, 32),
            data_units_written: u128_at(b, 48),
            warning_temperature_minutes: u32_at(b, 192),
            critical_temperature_minutes: u32_at(b, 196),
            sensors_kelvin,
            thermal_transitions: [u32_at(b, 216), u32_at(b, 220)],
            thermal_seconds: [u32_at(b, 224), u32_at(b, 228)],
            power_cycles: u128_at(b, 112),
            power_on_hours: u128_at(b, 128),
            unsafe_shutdowns: u128_at(b, 144),
        }
    }

    /// The log as (name, unit, value) readings.
    pub fn values(&self) -> Vec<(String, &'static str, Option<f64>)> {
        let mut v = vec![
            (
                "temperature".to_string(),
                "celsius",
                celsius(self.composite_kelvin),
            ),
            (
                "critical_warning".into(),
                "bitmask",
                Some(self.critical_warning as f64),
            ),
            (
                "warning_temperature_time".into(),
                "minutes",
                Some(self.warning_temperature_minutes as f64),
            ),
            (
                "critical_temperature_time".into(),
                "minutes",
                Some(self.critical_temperature_minutes as f64),
            ),
        ];
        for (i, &k) in self.sensors_kelvin.iter().enumerate() {
            if k > 0 {
                v.push((
                    format!("temperature_sensor_{}", i + 1),
                    "celsius",
                    celsius(k),
                ));
            }
        }
        for i in 0..2 {
            let n = i + 1;
            let (c, s) = (self.thermal_transitions[i], self.thermal_seconds[i]);
            v.push((format!("thermal_transitions_{n}"), "count", Some(c as f64)));
            v.push((format!("thermal_time_{n}"), "seconds", Some(s as f64)));
        }
        let bytes = |u: u128| Some(u as f64 * DATA_UNIT_BYTES);
        v.push(("data_read".into(), "bytes", bytes(self.data_units_read)));
        v.push((
            "data_written".into(),
            "bytes",
            bytes(self.data_units_written),
        ));
        v
    }
}

/// The OCP datacenter SMART log (SMART / Health Information Extended).
const OCP_LOG: u8 = 0xC0;
/// Its log page GUID (bytes 496-511), which tells it from a vendor's own C0h page.
const OCP_GUID: u128 = 0xAFD5_14C9_7C6F_4F9C_A4F2_BFEA_2810_AFC5;

/// Physical media units written (bytes) from an OCP C0h log page; None when the page is
/// not the OCP one.
pub fn ocp_media_written(b: &[u8; 512]) -> Option<u128> {
    (u128_at(b, 496) == OCP_GUID).then(|| u128_at(b, 0))
}

/// The rated maximum power (W) of each power state in Identify Controller's data.
pub fn power_state_watts(id: &[u8; 4096]) -> Vec<f64> {
    let npss = id[263] as usize + 1;
    (0..npss.min(32))
        .map(|i| {
            let d = &id[2048 + 32 * i..2048 + 32 * (i + 1)];
            let mp = u16_at(d, 0) as f64;
            // MXPS: the unit is 0.0001 W when set, else 0.01 W.
            mp * if d[3] & 1 == 1 { 1e-4 } else { 1e-2 }
        })
        .collect()
}

/// The SMART log of one NVMe controller, read at every sample.
pub struct SmartSource {
    file: File,
    source: String,
    /// What the last good read gave, so that a failed one is the same names, null.
    names: Vec<(String, &'static str)>,
    /// Rated maximum power of each power state (empty when Identify could not be read).
    power_states: Vec<f64>,
    /// The controller has the OCP C0h log.
    ocp: bool,
}

/// The character device of controller `ctrl` ("nvme0") under `dev_root`, when it is
/// the one sysfs (under `sys_root`) names (a stale or planted node is not opened).
pub(crate) fn open_controller(sys_root: &Path, dev_root: &Path, ctrl: &str) -> Option<File> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let want = std::fs::read_to_string(sys_root.join(format!("class/nvme/{ctrl}/dev"))).ok()?;
    let file = File::open(dev_root.join(ctrl)).ok()?;
    let m = file.metadata().ok()?;
    let have = format!("{}:{}", libc::major(m.rdev()), libc::minor(m.rdev()));
    (m.file_type().is_char_device() && want.trim() == have).then_some(file)
}

/// Read the SMART log of the controller open as `f`.
pub fn read_smart(f: &File) -> std::io::Result<SmartLog> {
    let mut buf = [0u8; 512];
    crate::sys::nvme_get_log_page(f, SMART_LOG, &mut buf)?;
    Ok(SmartLog::parse(&buf))
}

impl SmartSource {
    /// The controller `ctrl` ("nvme0"): its character device under `dev_root`, checked
    /// against the device number sysfs (under `sys_root`) gives it. None when it cannot
    /// be opened or read (not root, not a PCIe or fabrics controller drivelab can ask).
    pub fn open(sys_root: &Path, dev_root: &Path, ctrl: &str) -> Option<SmartSource> {
        let file = open_controller(sys_root, dev_root, ctrl)?;
        let log = read_smart(&file).ok()?;
        let mut s = SmartSource::with(file, &format!("nvme-smart:{ctrl}"), &log);
        let mut id = [0u8; 4096];
        // The power state only where the controller answers Get Features for it.
        if crate::sys::nvme_identify_controller(&s.file, &mut id).is_ok()
            && crate::sys::nvme_power_state(&s.file).is_ok()
        {
            s.power_states = power_state_watts(&id);
        }
        s.ocp = read_ocp(&s.file).is_some();
        Some(s)
    }

    fn with(file: File, source: &str, first: &SmartLog) -> SmartSource {
        SmartSource {
            file,
            source: source.into(),
            names: first.values().into_iter().map(|(n, u, _)| (n, u)).collect(),
            power_states: Vec::new(),
            ocp: false,
        }
    }

    /// The power state and the OCP log's media writes, as (name, unit, value).
    fn extra(&self) -> Vec<(String, &'static str, Option<f64>)> {
        let mut v = Vec::new();
        if !self.power_states.is_empty() {
            let ps = crate::sys::nvme_power_state(&self.file).ok();
            v.push(("power_state".into(), "state", ps.map(f64::from)));
            let rated = ps.and_then(|p| self.power_states.get(p as usize).copied());
            v.push(("rated_max_power".into(), "watt", rated));
        }
        if self.ocp {
            let w = read_ocp(&self.file).map(|b| b as f64);
            v.push(("media_written".into(), "bytes", w));
        }
        v
    }
}

/// The OCP log's physical media units written, if the controller has that log.
fn read_ocp(f: &File) -> Option<u128> {
    let mut buf = [0u8; 512];
    crate::sys::nvme_get_log_page(f, OCP_LOG, &mut buf).ok()?;
    ocp_media_written(&buf)
}

impl SensorSource for SmartSource {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        let src = self.source.clone();
        match read_smart(&self.file) {
            Ok(log) => {
                let mut v = log.values();
                v.extend(self.extra());
                self.names = v.iter().map(|(n, u, _)| (n.clone(), *u)).collect();
                v.into_iter()
                    .map(|(n, u, x)| SensorReading::new(&n, u, x, at_ns, &src))
                    .collect()
            }
            Err(_) => self
                .names
                .iter()
                .map(|(n, u)| SensorReading::new(n, u, None, at_ns, &src))
                .collect(),
        }
    }

    fn describe(&self) -> String {
        format!("{} (SMART / health log)", self.source)
    }

    fn kind(&self) -> &'static str {
        "nvme"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log page as QEMU 7.2's emulated controller fills it (323 K), with a temperature
    /// warning set and some thermal history.
    fn page() -> [u8; 512] {
        let mut b = [0u8; 512];
        b[0] = 0x02;
        b[1..3].copy_from_slice(&323u16.to_le_bytes());
        b[32..48].copy_from_slice(&1234u128.to_le_bytes());
        b[48..64].copy_from_slice(&(1u128 << 70).to_le_bytes());
        b[192..196].copy_from_slice(&17u32.to_le_bytes());
        b[196..200].copy_from_slice(&3u32.to_le_bytes());
        b[200..202].copy_from_slice(&310u16.to_le_bytes());
        b[204..206].copy_from_slice(&300u16.to_le_bytes());
        b[216..220].copy_from_slice(&5u32.to_le_bytes());
        b[228..232].copy_from_slice(&90u32.to_le_bytes());
        b[112..128].copy_from_slice(&1517u128.to_le_bytes());
        b[128..144].copy_from_slice(&20_411u128.to_le_bytes());
        b[144..160].copy_from_slice(&61u128.to_le_bytes());
        b
    }

    fn get(v: &[(String, &'static str, Option<f64>)], name: &str) -> (&'static str, Option<f64>) {
        let (_, u, x) = v
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("{name}"));
        (*u, *x)
    }

    #[test]
    fn the_smart_log_is_read_at_the_specs_offsets() {
        let log = SmartLog::parse(&page());
        assert_eq!(log.critical_warning, 2);
        assert_eq!(log.composite_kelvin, 323);
        assert_eq!(log.sensors_kelvin, [310, 0, 300, 0, 0, 0, 0, 0]);
        assert_eq!(
            (log.power_cycles, log.power_on_hours, log.unsafe_shutdowns),
            (1517, 20_411, 61)
        );
        let v = log.values();
        let (u, t) = get(&v, "temperature");
        assert_eq!(u, "celsius");
        assert!((t.unwrap() - 49.85).abs() < 1e-9);
        assert_eq!(get(&v, "critical_warning"), ("bitmask", Some(2.0)));
        assert_eq!(get(&v, "warning_temperature_time"), ("minutes", Some(17.0)));
        assert_eq!(get(&v, "critical_temperature_time"), ("minutes", Some(3.0)));
        assert!((get(&v, "temperature_sensor_1").1.unwrap() - 36.85).abs() < 1e-9);
        assert!((get(&v, "temperature_sensor_3").1.unwrap() - 26.85).abs() < 1e-9);
        assert!(
            !v.iter().any(|(n, _, _)| n == "temperature_sensor_2"),
            "absent sensors are left out"
        );
        assert_eq!(get(&v, "thermal_transitions_1"), ("count", Some(5.0)));
        assert_eq!(get(&v, "thermal_time_2"), ("seconds", Some(90.0)));
        assert_eq!(get(&v, "data_read"), ("bytes", Some(1234.0 * 512_000.0)));
        assert_eq!(
            get(&v, "data_written").1,
            Some((1u128 << 70) as f64 * 512_000.0)
        );
    }

    #[test]
    fn no_composite_temperature_is_null_not_zero() {
        let mut b = page();
        b[1..3].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(get(&SmartLog::parse(&b).values(), "temperature").1, None);
    }

    #[test]
    fn a_log_that_cannot_be_read_gives_the_same_names_null() {
        // A regular file takes no NVMe ioctl: every read fails.
        let f = tempfile::tempfile().unwrap();
        assert!(read_smart(&f).is_err());
        let mut s = SmartSource::with(f, "nvme-smart:nvme9", &SmartLog::parse(&page()));
        let r = s.sample(42);
        assert_eq!(r.len(), SmartLog::parse(&page()).values().len());
        assert!(r
            .iter()
            .all(|x| x.value.is_none() && x.at_ns == 42 && x.source == "nvme-smart:nvme9"));
        assert!(r.iter().any(|x| x.name == "critical_warning"));
    }

    #[test]
    fn power_states_and_the_ocp_log_are_read_at_their_offsets() {
        let mut id = [0u8; 4096];
        id[263] = 2; // three power states
        id[2048..2050].copy_from_slice(&825u16.to_le_bytes()); // 8.25 W
        id[2080..2082].copy_from_slice(&350u16.to_le_bytes()); // 3.5 W
        id[2112..2114].copy_from_slice(&25_000u16.to_le_bytes());
        id[2112 + 3] = 1; // in 0.0001 W: 2.5 W
        let w = power_state_watts(&id);
        assert_eq!(w.len(), 3);
        assert!((w[0] - 8.25).abs() < 1e-12 && (w[1] - 3.5).abs() < 1e-12);
        assert!((w[2] - 2.5).abs() < 1e-12, "{w:?}");
        let mut c0 = [0u8; 512];
        c0[0..16].copy_from_slice(&123_456_789u128.to_le_bytes());
        assert_eq!(
            ocp_media_written(&c0),
            None,
            "no OCP GUID: a vendor's own C0h"
        );
        c0[496..512].copy_from_slice(&OCP_GUID.to_le_bytes());
        assert_eq!(ocp_media_written(&c0), Some(123_456_789));
    }

    #[test]
    fn a_controller_that_is_not_there_is_no_source() {
        let d = tempfile::tempdir().unwrap();
        assert!(SmartSource::open(d.path(), d.path(), "nvme0").is_none());
    }
}
