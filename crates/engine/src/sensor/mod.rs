//! Sensors beside the I/O series: temperature, power and the like.
//!
//! A reading is a value with its unit and the time it was taken on the run's clock; the
//! engine files every reading under the interval its time falls in, so temperature or
//! power sit in the same series as IOPS and latency. Two kinds of source feed it: a
//! simulated device's own model (sampled in virtual time at every interval boundary by
//! the discrete-event backend), and [`SensorSource`]s attached to a target (sampled on a
//! side thread at every interval boundary of a real run), where real sensors (hwmon,
//! NVMe SMART, a USB power meter) plug in.

use serde::{Deserialize, Serialize};

/// One sensor value at a time on the run's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SensorReading {
    /// Short name, e.g. "temperature", "power".
    pub name: String,
    /// Unit, e.g. "celsius", "watt".
    pub unit: String,
    pub value: f64,
    /// When it was sampled, on the same clock as the I/O timestamps (ns).
    pub at_ns: u64,
}

/// A sensor attached to a real target, sampled once per interval during a run.
pub trait SensorSource: Send {
    /// Current values, stamped `at_ns` (the run's clock); empty when nothing is readable
    /// right now.
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading>;
}
