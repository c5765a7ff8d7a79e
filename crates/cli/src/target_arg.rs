//! The TARGET argument: a path, `null`, or `sim:…`.

use std::path::PathBuf;

use clap::Args;

use drivelab_engine::target::TargetSpec;

use crate::fail::Fail;
use crate::values::{nonblank, sensor_choice};

/// Pretend capacity of the `null` target.
pub const NULL_CAPACITY: u64 = 1 << 40;

/// Whether the TARGET argument names a simulated device (told from the text, before
/// the simulator is built).
pub fn is_sim(target: Option<&str>) -> bool {
    target.is_some_and(|s| s.starts_with("sim:") || s == "sim")
}

/// What the user named, before opening.
pub fn parse(target: Option<&str>) -> Result<TargetSpec, Fail> {
    match target {
        None => Ok(TargetSpec::Path(None)),
        Some("null") => Ok(TargetSpec::Null {
            capacity: NULL_CAPACITY,
        }),
        Some(s) if is_sim(target) => drivelab_sim::parse(s)
            .map(|d| TargetSpec::Model(Box::new(d)))
            .map_err(|e| Fail::usage(format!("TARGET {s}: {e}"))),
        Some("") => Err(Fail::usage(
            "TARGET: empty; give a file path, a block device, null or sim:…",
        )),
        Some(p) => Ok(TargetSpec::Path(Some(PathBuf::from(p)))),
    }
}

/// `--ioengine E` on the null target: refused (it does no I/O and always runs on the
/// null engine; the engine asked for would be replaced without a word).
pub fn refuse_engine_on_null(
    spec: &TargetSpec,
    engine: Option<drivelab_engine::spec::IoEngine>,
) -> Result<(), Fail> {
    match (spec, engine) {
        (TargetSpec::Null { .. }, Some(e)) if e != drivelab_engine::spec::IoEngine::Null => {
            Err(Fail::usage(format!(
                "--ioengine {}: the null target does no I/O and runs on the null engine; leave --ioengine out",
                e.name()
            )))
        }
        _ => Ok(()),
    }
}

/// The TARGET as recorded for `--resume`: paths made absolute (the default test file too).
pub fn recorded(given: Option<&str>) -> Result<String, Fail> {
    match given {
        Some(s) if s == "null" || s == "sim" || s.starts_with("sim:") => Ok(s.to_string()),
        other => {
            let p = PathBuf::from(other.unwrap_or(drivelab_engine::target::TEST_FILE_NAME));
            std::path::absolute(&p)
                .map(|p| p.display().to_string())
                .map_err(|e| Fail::usage(format!("TARGET {}: {e}", p.display())))
        }
    }
}

/// Where I/O goes and what drivelab may do to it.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// A file, a block device, `null` (no I/O: the engine's own cost) or `sim:…` (a
    /// simulated SSD; `drivelab io sim:help` lists its keys). Default: ./drivelab.test, a
    /// 1 GiB test file created and removed.
    pub target: Option<String>,
    /// Keep a test file drivelab created instead of removing it at the end.
    #[arg(long)]
    pub keep: bool,
    /// Allow writes to an existing file drivelab did not create (its contents are lost).
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writes to this block device (must name the target itself). Refused anyway
    /// while the device or a partition of it is mounted, swap or held.
    #[arg(long, value_name = "DEVICE")]
    pub destructive: Option<PathBuf>,
    /// The drive's sensors sampled every interval: auto (all found), none, or a comma
    /// list of hwmon (temperatures, power), nvme (the SMART / health log) and smartctl
    /// (SATA, SAS and USB disks without hwmon, when smartmontools is installed).
    #[arg(long, value_name = "auto|none|hwmon,nvme,smartctl", default_value = "auto", value_parser = sensor_choice)]
    pub sensors: String,
    /// An external meter: a command printing one reading per line (watts; volts and
    /// amps; or name=value unit), read on the side and stamped on arrival, killed at
    /// the end. E.g. --sensor-cmd 'my-usb-meter --stream'.
    #[arg(long = "sensor-cmd", value_name = "COMMAND", value_parser = nonblank)]
    pub sensor_cmd: Option<String>,
    /// An hwmon device to sample besides the drive's own (a power-measuring riser's
    /// INA2xx, a PMBus supply): /sys/class/hwmon/hwmonN. Repeatable.
    #[arg(long = "sensor-hwmon", value_name = "DIR")]
    pub sensor_hwmon: Vec<PathBuf>,
}
