//! Devices simulated in virtual time.
//!
//! A [`DeviceModel`] is a target whose I/Os are completed by a model rather than by the
//! kernel. The engine drives it from its discrete-event backend (`backend::virtual_time`):
//! it keeps `numjobs × iodepth` I/Os outstanding, submits each new I/O at the virtual time
//! its predecessor completed, and takes every timestamp (latencies, interval grid, run
//! length) from the model's virtual clock. The engine knows nothing of what is inside a
//! model (NAND, garbage collection, caches); the `drivelab-sim` crate provides one.

use serde::{Deserialize, Serialize};

use crate::op::IoOp;
pub use crate::sensor::SensorReading;

/// Identity and geometry of a simulated device, as a real device would report them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// User-visible capacity in bytes (a multiple of `logical_sector_bytes`).
    pub capacity_bytes: u64,
    pub logical_sector_bytes: u32,
    pub physical_sector_bytes: u32,
    /// Model name as a drive would report it, e.g. "drivelab-sim nvme-tlc".
    pub model: String,
    /// The full resolved parameter string, e.g. `sim:capacity=64G,op=7%,...`.
    pub spec: String,
}

/// A storage device simulated in virtual time.
///
/// Contract: calls come in nondecreasing virtual time (`at_ns` of every call is ≥ the
/// `at_ns` of every earlier call), and the same sequence of calls gives the same answers
/// (determinism: a simulation is repeatable bit for bit).
pub trait DeviceModel: Send {
    /// Identity and geometry.
    fn info(&self) -> ModelInfo;

    /// The model's current virtual time in ns (the latest time it has been told of).
    fn now_ns(&self) -> u64;

    /// The device sits idle until `until_ns`: background work (garbage collection,
    /// cache folding, cooling) may proceed.
    fn advance_to(&mut self, until_ns: u64);

    /// Submit one I/O at virtual time `at_ns`; returns the virtual time it completes
    /// (≥ `at_ns`). `op.offset` and `op.len` are multiples of the logical sector and lie
    /// inside the capacity.
    fn submit(&mut self, op: IoOp, at_ns: u64) -> u64;

    /// A FLUSH (fsync) at `at_ns`: returns when the device says the writes completed
    /// before it are durable. A model without a volatile write cache answers at once.
    fn flush_cache(&mut self, at_ns: u64) -> u64 {
        at_ns
    }

    /// Keep the data written from now on, so that [`DeviceModel::read_data`] returns it
    /// and a power cut takes back what it lost. False when the model cannot (then
    /// `write_data` and `read_data` move no data).
    fn keep_content(&mut self) -> bool {
        false
    }

    /// Write `data` at `offset` at `at_ns` (as `submit`); returns when it completes.
    fn write_data(&mut self, offset: u64, data: &[u8], at_ns: u64) -> u64 {
        let op = IoOp {
            dir: crate::op::Dir::Write,
            offset,
            len: data.len() as u32,
        };
        self.submit(op, at_ns)
    }

    /// Read into `buf` at `offset` at `at_ns` what the medium holds (zeros for a model
    /// that keeps no content); returns when the read completes.
    fn read_data(&mut self, offset: u64, buf: &mut [u8], at_ns: u64) -> u64 {
        buf.fill(0);
        let op = IoOp {
            dir: crate::op::Dir::Read,
            offset,
            len: buf.len() as u32,
        };
        self.submit(op, at_ns)
    }

    /// Whether the model's power cut has happened (by the latest time it was told of).
    fn power_was_cut(&self) -> bool {
        false
    }

    /// Discard (TRIM) a byte range at `at_ns`; returns the time the command completes.
    fn discard(&mut self, offset: u64, len: u64, at_ns: u64) -> u64;

    /// Sensor values at `at_ns` (empty when the model has none). A value over a span of
    /// time (a model's power: its energy since the previous call over the time since)
    /// is stamped with the span's start, so it lands in the interval it describes.
    fn sensors(&mut self, at_ns: u64) -> Vec<SensorReading>;

    /// The model's own ground truth (true steady-state IOPS, write amplification, cache
    /// size, throttle intervals, …), reported apart from what drivelab measured.
    fn ground_truth(&self) -> serde_json::Value;
}
