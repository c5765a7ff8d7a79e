//! drivelab-sim: a simulated SSD that runs in virtual time, the ground truth for
//! drivelab's analyses.
//!
//! A [`SimDevice`] implements `drivelab_engine::model::DeviceModel`. Inside: a page-level
//! FTL at 4 KiB with erase blocks and greedy garbage collection that competes with host
//! writes (write amplification emerges from the workload, it is never set), TRIM, an SLC
//! write cache folded back when idle, NAND read/program/erase times on dies and channels
//! modelled by resource reservation, a host-link ceiling (SATA, PCIe, USB), an optional
//! DRAM-less mapping cache, SLC folding when idle or under load (`fold=load`: a full
//! cache holds the host while `fold_batch` is folded), a dynamic SLC cache carved out of
//! the free space and folded beside the host's writes (`slc=dynamic`, see
//! `dynamic_slc`), garbage collection scheduled incrementally, in batches or in tiers
//! (`gc=tiered`: none, background beside the host in `gc_tiers` steps of rising
//! urgency, then a foreground refill while the host waits), and an optional thermal
//! model with throttling and settable constants, heated by the work as it is done (its
//! energies calibrated by `read_power`/`write_power`). The host link is queued (SATA, NVMe,
//! UAS) or bulk-only (`iface=usb-bot`: one command at a time), at any `link` rate. An
//! optional volatile write cache acknowledges writes once cached, answers FLUSH honestly
//! or not (`flush=`), and a `power_cut` drops what is not durable (`write_cache`); a
//! drive asked to keep its data reads back what the medium holds after it (`content`). Every
//! key is in one table, [`KEYS`] (`sim:help`, the README). The same parameters and call
//! sequence give the same results bit for bit.
//!
//! Build one from a target string with [`parse`] (`sim:nvme-tlc,capacity=32G`); list the
//! presets with [`presets`]. [`DeviceModel::ground_truth`](drivelab_engine::model::DeviceModel::ground_truth)
//! reports what the model knows to be true (write amplification, steady-state IOPS, cache
//! size, throttle and GC-stall intervals, the blocks a power cut lost), for checking what
//! drivelab measured.
//!
//! Speed: `examples/consistency_bench.rs` fills a 64 GB `nvme-tlc` drive and runs one
//! virtual hour of 4 KiB QD32 random writes (~109 M submits) in about 26 s on one core
//! (~240 ns per submit including its event loop; the GC copies ~7 pages per host write).

pub mod analytic;
pub mod config;
mod content;
mod device;
mod dynamic_slc;
mod ftl;
mod memory;
mod recent_wa;
mod resources;
mod slc;
mod table;
pub mod thermal;
pub mod units;
mod write_cache;

pub use config::{help_text, keys_markdown, presets, SimConfig, KEYS};
pub use device::{SimDevice, IDLE_DELAY_NS, STALL_REPORT_NS};
pub use ftl::Ftl;

/// Build a simulated drive from a target string such as
/// `sim:capacity=64G,op=7%,slc=8G,channels=8,iface=sata`, `sim:nvme-tlc` or
/// `sim:dramless,capacity=32G,seed=3`. Errors are one line naming the bad key and the
/// accepted form.
pub fn parse(spec: &str) -> Result<SimDevice, String> {
    SimDevice::new(SimConfig::parse(spec)?)
}
