//! The TARGET argument: a path, `null`, or `sim:…`.

use std::path::PathBuf;

use drivelab_engine::target::TargetSpec;

use crate::fail::Fail;

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
