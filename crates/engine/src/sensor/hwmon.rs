//! hwmon: the kernel's hardware-monitoring devices of the drive itself (`nvme` on an
//! NVMe controller, `drivetemp` under a SATA disk's SCSI device). Temperatures
//! (`temp*_input`, m°C), power (`power*_input`, µW) and voltage × current pairs
//! (`in*_input` mV × `curr*_input` mA), read once per sample; a channel that cannot be
//! read gives a null value and the others go on.

use std::path::{Path, PathBuf};

use super::{SensorReading, SensorSource};

/// One hwmon device of the drive.
pub struct HwmonSource {
    /// "hwmon:" and the device's `name` (e.g. "hwmon:nvme").
    source: String,
    channels: Vec<Channel>,
    /// Values out of range since the last notes, and the first of them.
    rejected: u64,
    first_rejected: Option<String>,
}

struct Channel {
    name: String,
    unit: &'static str,
    input: PathBuf,
    /// The current (mA) to multiply a voltage (mV) by: a power computed from a pair.
    current: Option<PathBuf>,
    /// What the file's value is divided by to be in `unit` (exactly: 41000 m°C is 41 °C).
    divisor: f64,
}

/// The hwmon devices in or under the folders `dirs` (`DIR/hwmonN` or
/// `DIR/hwmon/hwmonN`), each once.
pub fn find(dirs: &[PathBuf]) -> Vec<HwmonSource> {
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for parent in [dir.join("hwmon"), dir.clone()] {
            for p in numbered(&parent, "hwmon", "") {
                let canon = p.canonicalize().unwrap_or(p);
                if !seen.contains(&canon) {
                    seen.push(canon);
                }
            }
        }
    }
    seen.iter()
        .filter_map(|p| HwmonSource::open(p).ok())
        .collect()
}

/// Entries `PREFIX<n>SUFFIX` of `dir`, by `n`.
fn numbered(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let i = n.strip_prefix(prefix)?.strip_suffix(suffix)?.parse().ok()?;
            Some((i, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

fn index_of(p: &Path, prefix: &str, suffix: &str) -> Option<u32> {
    let n = p.file_name()?.to_str()?;
    n.strip_prefix(prefix)?.strip_suffix(suffix)?.parse().ok()
}

/// The most of an attribute read: its value is a line of a few digits.
const MAX_ATTR_BYTES: u64 = 256;

/// An attribute's text, trimmed. Opened non-blocking and read at most
/// [`MAX_ATTR_BYTES`], and only from a regular file (sysfs attributes are), so that
/// neither a FIFO nor a device file can block a read or flood memory.
fn read(p: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_ATTR_BYTES).read_to_string(&mut text).ok()?;
    Some(text.trim().to_string()).filter(|s| !s.is_empty())
}

/// A file of the device that is not a regular file (a FIFO, a device node), which no
/// sysfs attribute is.
fn not_regular(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()))
}

/// A label as part of a name: "Sensor 1" → "sensor_1".
fn slug(label: &str) -> String {
    label
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// The reading's name: the first channel (or the "Composite" one) is plainly `what`;
/// others carry their label, else their number.
fn channel_name(dir: &Path, what: &str, kind: &str, i: u32) -> String {
    match read(&dir.join(format!("{kind}{i}_label"))) {
        Some(l) if l.eq_ignore_ascii_case("composite") => what.into(),
        Some(l) => format!("{what}_{}", slug(&l)),
        None if i == 1 => what.into(),
        None => format!("{what}_{i}"),
    }
}

impl HwmonSource {
    /// The hwmon device at `dir`; why not when it has no channel drivelab reads or a
    /// file of it is not a regular file.
    pub fn open(dir: &Path) -> Result<HwmonSource, String> {
        if !dir.exists() {
            return Err("does not exist".into());
        }
        if let Some(p) = not_regular(dir) {
            return Err(format!(
                "{} is not a regular file (an hwmon attribute is one)",
                p.display()
            ));
        }
        // The driver's name, shown as the source: never a control byte on a terminal.
        let name = read(&dir.join("name"))
            .map_or_else(|| "unknown".into(), |n| crate::text::shortened(&n));
        let mut channels = Vec::new();
        // (file prefix, reading's name, unit, what one unit is in the file)
        const DIRECT: [(&str, &str, &str, f64); 2] = [
            ("temp", "temperature", "celsius", 1e3),
            ("power", "power", "watt", 1e6),
        ];
        for (prefix, what, unit, divisor) in DIRECT {
            for p in numbered(dir, prefix, "_input") {
                let Some(i) = index_of(&p, prefix, "_input") else {
                    continue;
                };
                channels.push(Channel {
                    name: channel_name(dir, what, prefix, i),
                    unit,
                    input: p,
                    current: None,
                    divisor,
                });
            }
        }
        // The drive's warning temperature (NVMe WCTEMP as nvme's temp1_max; drivetemp's
        // SCT limit): above it a drive throttles.
        let first_temp = channels
            .iter()
            .find(|c| c.unit == "celsius")
            .map(|c| c.input.clone());
        if let Some(max) = first_temp.map(|p| {
            p.with_file_name(p.file_name().map_or_else(String::new, |n| {
                n.to_string_lossy().replace("_input", "_max")
            }))
        }) {
            if read_f64(&max).is_some() {
                channels.push(Channel {
                    name: "temperature_warning".into(),
                    unit: "celsius",
                    input: max,
                    current: None,
                    divisor: 1e3,
                });
            }
        }
        channels.extend(voltage_current_pairs(dir));
        if channels.is_empty() {
            return Err("no temp*_input, power*_input or in*_input with curr*_input there".into());
        }
        Ok(HwmonSource {
            source: format!("hwmon:{name}"),
            channels,
            rejected: 0,
            first_rejected: None,
        })
    }
}

/// `inN_input` with a `currN_input` of the same number: mV × mA = µW.
fn voltage_current_pairs(dir: &Path) -> Vec<Channel> {
    numbered(dir, "in", "_input")
        .into_iter()
        .filter_map(|p| {
            let i = index_of(&p, "in", "_input")?;
            let curr = dir.join(format!("curr{i}_input"));
            curr.exists().then(|| Channel {
                name: format!("power_in{i}"),
                unit: "watt",
                input: p,
                current: Some(curr),
                divisor: 1e6,
            })
        })
        .collect()
}

fn read_f64(p: &Path) -> Option<f64> {
    read(p)?.parse::<f64>().ok()
}

impl Channel {
    fn value(&self) -> Option<f64> {
        let v = read_f64(&self.input)?;
        let factor = match &self.current {
            Some(c) => read_f64(c)?,
            None => 1.0,
        };
        Some(v * factor / self.divisor)
    }
}

impl SensorSource for HwmonSource {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        let mut out = Vec::with_capacity(self.channels.len());
        for c in &self.channels {
            let mut v = c.value();
            if let Some(x) = v.filter(|&x| !super::plausible(c.unit, x)) {
                self.rejected += 1;
                self.first_rejected
                    .get_or_insert_with(|| format!("{} {x} {}", c.name, c.unit));
                v = None;
            }
            out.push(SensorReading::new(&c.name, c.unit, v, at_ns, &self.source));
        }
        out
    }

    fn notes(&mut self) -> Vec<String> {
        if self.rejected == 0 {
            return Vec::new();
        }
        let note = format!(
            "{} gave {} value(s) out of range (the first: {}), taken as null: {}.",
            self.source,
            self.rejected,
            self.first_rejected.take().unwrap_or_default(),
            super::PLAUSIBLE
        );
        self.rejected = 0;
        vec![note]
    }

    fn describe(&self) -> String {
        let names: Vec<&str> = self.channels.iter().map(|c| c.name.as_str()).collect();
        format!("{} ({})", self.source, names.join(", "))
    }

    fn kind(&self) -> &'static str {
        "hwmon"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, v: &str) {
        std::fs::write(dir.join(name), format!("{v}\n")).unwrap();
    }

    fn values(s: &mut HwmonSource) -> Vec<(String, Option<f64>)> {
        s.sample(7)
            .into_iter()
            .map(|r| {
                assert_eq!((r.at_ns, r.source.as_str()), (7, "hwmon:nvme"));
                (r.name, r.value)
            })
            .collect()
    }

    #[test]
    fn channels_are_named_scaled_and_null_when_unreadable() {
        let d = tempfile::tempdir().unwrap();
        let ctrl = d.path().join("nvme0");
        let hw = ctrl.join("hwmon3");
        std::fs::create_dir_all(&hw).unwrap();
        write(&hw, "name", "nvme");
        write(&hw, "temp1_input", "49850");
        write(&hw, "temp1_label", "Composite");
        write(&hw, "temp2_input", "38850");
        write(&hw, "temp2_label", "Sensor 1");
        write(&hw, "temp1_max", "69850");
        write(&hw, "power1_input", "5250000");
        write(&hw, "in0_input", "12000");
        write(&hw, "curr0_input", "500");
        let mut found = find(&[ctrl.clone(), ctrl]);
        assert_eq!(found.len(), 1, "each device once");
        let s = &mut found[0];
        let approx = |v: Option<f64>, want: f64| v.is_some_and(|x| (x - want).abs() < 1e-9);
        let got = values(s);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "temperature",
                "temperature_sensor_1",
                "power",
                "temperature_warning",
                "power_in0"
            ]
        );
        assert!(
            approx(got[0].1, 49.85) && approx(got[1].1, 38.85),
            "{got:?}"
        );
        assert!(approx(got[2].1, 5.25) && approx(got[4].1, 6.0), "{got:?}");
        assert!(approx(got[3].1, 69.85), "{got:?}");
        let units: Vec<String> = s.sample(0).into_iter().map(|r| r.unit).collect();
        assert_eq!(units, ["celsius", "celsius", "watt", "celsius", "watt"]);
        // A channel that goes away (or reads garbage) is null; the others still read.
        std::fs::remove_file(hw.join("temp2_input")).unwrap();
        write(&hw, "curr0_input", "n/a");
        let got = values(s);
        assert_eq!(got[1].1, None);
        assert_eq!(got[4].1, None);
        assert!(approx(got[0].1, 49.85), "{got:?}");
        assert!(s.describe().starts_with("hwmon:nvme (temperature"));
    }

    #[test]
    fn absurd_or_negative_values_are_null_with_a_note() {
        let d = tempfile::tempdir().unwrap();
        let hw = d.path().join("hwmon1");
        std::fs::create_dir_all(&hw).unwrap();
        write(&hw, "name", "nvme");
        write(&hw, "power1_input", "99999999999999999999999");
        write(&hw, "power2_input", "-3000000");
        write(&hw, "power3_input", "5500000");
        let mut s = HwmonSource::open(&hw).unwrap();
        let got = values(&mut s);
        assert_eq!(got[0].1, None);
        assert_eq!(got[1].1, None);
        assert_eq!(got[2].1, Some(5.5));
        let notes = s.notes();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("2 value(s) out of range"), "{notes:?}");
        assert!(s.notes().is_empty(), "said once");
    }

    #[test]
    fn a_fifo_is_refused_and_never_blocks_a_read() {
        let d = tempfile::tempdir().unwrap();
        let hw = d.path().join("hwmon1");
        std::fs::create_dir_all(&hw).unwrap();
        write(&hw, "temp1_input", "41000");
        let fifo = hw.join("in0_input");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        write(&hw, "curr0_input", "100");
        let e = HwmonSource::open(&hw).err().unwrap();
        assert!(e.contains("in0_input is not a regular file"), "{e}");
        assert!(find(&[d.path().to_path_buf()]).is_empty());
        // Opened non-blocking: no writer, no wait.
        assert_eq!(read(&fifo), None);
    }

    #[test]
    fn a_device_without_channels_or_no_hwmon_at_all_gives_nothing() {
        let d = tempfile::tempdir().unwrap();
        let hw = d.path().join("dev/hwmon/hwmon0");
        std::fs::create_dir_all(&hw).unwrap();
        write(&hw, "name", "drivetemp");
        assert!(find(&[d.path().join("dev")]).is_empty());
        write(&hw, "temp1_input", "31000");
        let found = find(&[d.path().join("dev")]);
        assert_eq!(found.len(), 1, "under DIR/hwmon/hwmonN too");
        assert!(find(&[d.path().join("nothing")]).is_empty());
    }
}
