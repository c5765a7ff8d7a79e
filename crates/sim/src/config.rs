//! The simulated drive's parameters, its presets, and the `sim:` spec string that sets them.

use crate::thermal::{ThermalParams, M2_NVME};
use crate::units::{
    format_duration, format_percent, format_size, parse_duration_ns, parse_percent, parse_size,
    parse_switch, DURATION_FORM, PERCENT_FORM, SIZE_FORM,
};

/// Accepted form of a temperature setting, for error messages.
const CELSIUS_FORM: &str = "a temperature in °C from -40 to 150, like 35";

/// The mapping unit and logical page of the FTL.
pub const PAGE_BYTES: u64 = 4096;

/// Host interface: sets the link's payload bandwidth and per-command cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iface {
    /// SATA 6 Gb/s (half duplex, AHCI/NCQ).
    Sata,
    /// PCIe NVMe, generation 1..=5, 1..=16 lanes.
    Pcie { gen: u8, lanes: u8 },
    /// USB 3.x UASP bridge, 10 or 20 Gb/s: commands are queued.
    Usb { gbps: u8 },
    /// USB 3.x bulk-only transport (BOT) bridge, 10 Gb/s: one command at a time, each
    /// with its command and status transfers (CBW/CSW) around the data.
    UsbBot,
}

impl Iface {
    /// Accepted form, for error messages.
    pub const FORM: &'static str =
        "sata, pcie<gen>x<lanes> (e.g. pcie3x4, pcie4x4), usb10, usb20 (UAS) or usb-bot (bulk-only)";

    fn parse(s: &str) -> Option<Iface> {
        match s {
            "sata" => return Some(Iface::Sata),
            "usb10" => return Some(Iface::Usb { gbps: 10 }),
            "usb20" => return Some(Iface::Usb { gbps: 20 }),
            "usb-bot" => return Some(Iface::UsbBot),
            "nvme" => return Some(Iface::Pcie { gen: 3, lanes: 4 }),
            _ => {}
        }
        let rest = s.strip_prefix("pcie")?;
        let (g, l) = rest.split_once('x')?;
        let gen: u8 = g.parse().ok()?;
        let lanes: u8 = l.parse().ok()?;
        ((1..=5).contains(&gen) && [1, 2, 4, 8, 16].contains(&lanes))
            .then_some(Iface::Pcie { gen, lanes })
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> String {
        match self {
            Iface::Sata => "sata".into(),
            Iface::Pcie { gen, lanes } => format!("pcie{gen}x{lanes}"),
            Iface::Usb { gbps } => format!("usb{gbps}"),
            Iface::UsbBot => "usb-bot".into(),
        }
    }

    /// Payload bandwidth in bytes/s after line coding and protocol overhead.
    pub fn payload_bytes_per_s(&self) -> f64 {
        match *self {
            // 6 Gb/s with 8b/10b = 600 MB/s; FIS framing leaves about 93 %.
            Iface::Sata => 560e6,
            Iface::Pcie { gen, lanes } => {
                let per_lane = match gen {
                    1 => 250e6,
                    2 => 500e6,
                    3 => 8e9 * 128.0 / 130.0 / 8.0,
                    4 => 16e9 * 128.0 / 130.0 / 8.0,
                    _ => 32e9 * 128.0 / 130.0 / 8.0,
                };
                // TLP headers, flow control and NVMe queue traffic: about 88 % payload.
                per_lane * lanes as f64 * 0.88
            }
            // 128b/132b coding, UASP framing: about 87 % payload.
            Iface::Usb { gbps } => gbps as f64 * 1e9 * 128.0 / 132.0 / 8.0 * 0.87,
            Iface::UsbBot => Iface::Usb { gbps: 10 }.payload_bytes_per_s(),
        }
    }

    /// Link time per command besides its payload, ns (caps small-block IOPS).
    pub fn cmd_ns(&self) -> u64 {
        match self {
            Iface::Sata => 2_500,
            Iface::Pcie { .. } => 1_000,
            Iface::Usb { .. } => 12_000,
            // CBW out, data, CSW in: three bulk transfers with their host round trips.
            Iface::UsbBot => 40_000,
        }
    }

    /// Fixed latency of the command path (protocol, firmware), ns; not a shared resource.
    pub fn latency_ns(&self) -> u64 {
        match self {
            Iface::Sata => 12_000,
            Iface::Pcie { .. } => 6_000,
            Iface::Usb { .. } | Iface::UsbBot => 30_000,
        }
    }

    /// Whether commands queue (NCQ, NVMe, UAS): with bulk-only transport the host sends
    /// the next command only when the previous one's status is back.
    pub fn queued(&self) -> bool {
        !matches!(self, Iface::UsbBot)
    }

    /// Whether reads and writes use separate link directions.
    pub fn full_duplex(&self) -> bool {
        !matches!(self, Iface::Sata)
    }
}

/// NAND cell type: sets default timings and the program unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Mlc,
    Tlc,
    Qlc,
}

impl Cell {
    fn parse(s: &str) -> Option<Cell> {
        match s {
            "mlc" => Some(Cell::Mlc),
            "tlc" => Some(Cell::Tlc),
            "qlc" => Some(Cell::Qlc),
            _ => None,
        }
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            Cell::Mlc => "mlc",
            Cell::Tlc => "tlc",
            Cell::Qlc => "qlc",
        }
    }

    /// Bits stored per cell in native mode: an SLC-mode block holds this many times less.
    pub fn bits(&self) -> u64 {
        match self {
            Cell::Mlc => 2,
            Cell::Tlc => 3,
            Cell::Qlc => 4,
        }
    }

    /// Bytes one program operation writes on a die in native mode (16 KiB pages × planes ×
    /// bits per cell, one-shot programming).
    pub fn program_unit_bytes(&self) -> u64 {
        match self {
            Cell::Mlc => 64 << 10,
            Cell::Tlc => 192 << 10,
            Cell::Qlc => 256 << 10,
        }
    }

    /// Default (read, program, erase) times in ns.
    pub fn default_times_ns(&self) -> (u64, u64, u64) {
        match self {
            Cell::Mlc => (50_000, 1_300_000, 3_000_000),
            Cell::Tlc => (60_000, 2_400_000, 3_500_000),
            Cell::Qlc => (90_000, 4_000_000, 10_000_000),
        }
    }
}

/// SLC-mode program unit: 16 KiB pages on 4 planes.
pub const SLC_PROGRAM_UNIT_BYTES: u64 = 64 << 10;
/// SLC-mode program time per unit, ns (the default of `tprog_slc`).
pub const SLC_PROGRAM_NS: u64 = 200_000;
/// SLC-mode read time, ns.
pub const SLC_READ_NS: u64 = 25_000;
/// Bytes one NAND read senses (one 16 KiB page on one plane).
pub const READ_UNIT_BYTES: u64 = 16 << 10;
/// NAND channel bus: 1200 MT/s × 8 bit.
pub const CHANNEL_BYTES_PER_S: f64 = 1.2e9;
/// LBA span one cached mapping page covers on a DRAM-less drive (1024 entries × 4 KiB).
pub const MAP_PAGE_SPAN_BYTES: u64 = 4 << 20;
/// LBA span the DRAM-less controller's SRAM mapping cache covers.
pub const DRAMLESS_MAP_CACHE_SPAN_BYTES: u64 = 1 << 30;

/// How garbage collection is scheduled against host writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcMode {
    /// One victim at a time, interleaved with host writes whenever the free pool runs low.
    Incremental,
    /// When the free pool runs low, reclaim `gc_batch` blocks while host I/O waits.
    Batch,
    /// Three tiers by the free pool: above half of the batch reserve, no GC (the host
    /// has every die); below it, background GC of one victim every `gc_bg_every` host
    /// pages beside the host; out of reserve, a foreground batch refill while the host
    /// waits. A drive whose background GC does not keep up cycles through the three.
    /// `gc_tiers` splits the background band into tiers of rising urgency (each one
    /// collects twice as often as the one above it): one level per tier.
    Tiered,
}

impl GcMode {
    fn parse(s: &str) -> Option<GcMode> {
        match s {
            "incremental" => Some(GcMode::Incremental),
            "batch" => Some(GcMode::Batch),
            "tiered" => Some(GcMode::Tiered),
            _ => None,
        }
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            GcMode::Incremental => "incremental",
            GcMode::Batch => "batch",
            GcMode::Tiered => "tiered",
        }
    }
}

/// When the SLC cache is folded into native-mode blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldMode {
    /// Only when the drive is idle; a full cache sends host writes to native mode.
    Idle,
    /// Also under load, on dies that are free (host writes keep going to SLC); a full
    /// cache holds the host while `fold_batch` bytes are folded on every die.
    Load,
}

impl FoldMode {
    fn parse(s: &str) -> Option<FoldMode> {
        match s {
            "idle" => Some(FoldMode::Idle),
            "load" => Some(FoldMode::Load),
            _ => None,
        }
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            FoldMode::Idle => "idle",
            FoldMode::Load => "load",
        }
    }
}

/// The drive's write cache: none (a write completes when it is programmed), or volatile
/// DRAM (a write completes when it is in the cache, and a power cut loses what is there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteCache {
    None,
    Volatile,
}

impl WriteCache {
    fn parse(s: &str) -> Option<WriteCache> {
        match s {
            "none" | "off" => Some(WriteCache::None),
            "volatile" => Some(WriteCache::Volatile),
            _ => None,
        }
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            WriteCache::None => "none",
            WriteCache::Volatile => "volatile",
        }
    }
}

/// How the drive answers a FLUSH (fsync) with a volatile write cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMode {
    /// The flush completes when every write acknowledged before it is on NAND.
    Honest,
    /// The flush completes at once; the cache is written back as usual, so what it
    /// covered becomes durable only when its programs end (a lie for that long).
    Delayed,
    /// The flush completes at once and does nothing: cached data stays in DRAM until
    /// the cache needs its room or the drive is idle.
    Ignored,
}

impl FlushMode {
    fn parse(s: &str) -> Option<FlushMode> {
        match s {
            "honest" => Some(FlushMode::Honest),
            "delayed" => Some(FlushMode::Delayed),
            "ignored" => Some(FlushMode::Ignored),
            _ => None,
        }
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            FlushMode::Honest => "honest",
            FlushMode::Delayed => "delayed",
            FlushMode::Ignored => "ignored",
        }
    }
}

/// SLC cache size: absolute, or a share of the user capacity, or dynamic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SlcSize {
    Bytes(u64),
    Percent(f64),
    /// Carved out of the free space whenever the cache is empty and the free pool
    /// beyond the GC reserve holds at least `slc_min` of SLC-mode data; see
    /// `crate::device`'s module docs.
    Dynamic,
}

/// The smallest and largest `capacity`: the largest keeps the model's tables (see
/// `memory::MAX_TABLES_BYTES`) within reach of a workstation.
pub const MIN_CAPACITY_BYTES: u64 = 64 << 20;
pub const MAX_CAPACITY_BYTES: u64 = 2 << 40;

/// Every parameter of a simulated drive.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Preset the parameters started from, if any.
    pub preset: Option<&'static str>,
    /// User-visible capacity (rounded down to 4 KiB).
    pub capacity_bytes: u64,
    /// Over-provisioning: physical = user × (1 + op/100).
    pub op_percent: f64,
    pub slc: SlcSize,
    pub channels: u32,
    /// Total dies (spread round-robin over the channels).
    pub dies: u32,
    pub iface: Iface,
    pub cell: Cell,
    pub tread_ns: u64,
    /// Time of one native-mode program operation (one program unit).
    pub tprog_ns: u64,
    /// Time of one SLC-mode program operation (64 KiB on a die).
    pub tprog_slc_ns: u64,
    pub terase_ns: u64,
    /// Erase block size (power of two, ≥ 64 KiB).
    pub block_bytes: u64,
    /// Whether the mapping table is held in DRAM (off: a small SRAM cache of mapping pages).
    pub dram: bool,
    pub gc: GcMode,
    /// Blocks reclaimed per batch in `GcMode::Batch`.
    pub gc_batch_blocks: u32,
    /// Host pages written between two background GC victims (`GcMode::Tiered`); 0: one
    /// erase block's worth.
    pub gc_bg_every_pages: u32,
    /// Background GC tiers (`GcMode::Tiered`, 1 to 8): the band between the background
    /// threshold and the foreground reserve is split into this many equal parts, and
    /// the deeper the free pool is into it, the more often a victim is collected
    /// (`gc_bg_every`, half of it, a quarter, …), as controllers raise GC urgency.
    pub gc_tiers: u32,
    /// When the SLC cache is folded.
    pub fold: FoldMode,
    /// Bytes folded while the host waits when the cache is full (`FoldMode::Load`).
    pub fold_batch_bytes: u64,
    /// Dynamic SLC cache: the smallest cache the drive creates.
    pub slc_min_bytes: u64,
    /// Dynamic SLC cache: host pages written per folded page while a full cache is
    /// emptied beside the host's writes.
    pub fold_every: f64,
    /// Host writes of at least this size go straight to native-mode blocks, past the
    /// cache (0: none do).
    pub slc_bypass_bytes: u64,
    pub thermal: bool,
    /// Thermal constants (ambient, resistance, time constant, idle power, throttle and
    /// release temperatures); the M.2 NVMe defaults unless set.
    pub thermal_params: ThermalParams,
    /// Temperature at time 0; None: the idle steady state (ambient + R × idle power).
    pub start_celsius: Option<f64>,
    /// Host link payload rate in bytes/s; None: the interface's own.
    pub link_bytes_per_s: Option<u64>,
    /// A throttled drive runs its link and NAND this many times slower.
    pub throttle_factor: u32,
    /// Total power (W) at the drive's sustained sequential read / write rate; None: the
    /// built-in energies per operation. Scales the energy of reads / writes.
    pub read_power_w: Option<f64>,
    pub write_power_w: Option<f64>,
    /// The controller's power limit (W, idle included): commands wait so that the work
    /// never draws more on average; None: no limit.
    pub peak_power_w: Option<f64>,
    /// Volatile write cache, its size, and how a FLUSH is answered.
    pub write_cache: WriteCache,
    pub write_cache_bytes: u64,
    pub flush: FlushMode,
    /// Virtual time of a power cut (the drive loses its volatile cache and is back at
    /// once); None: no cut.
    pub power_cut_ns: Option<u64>,
    pub seed: u64,
}

/// One `sim:` key: its name, accepted form (with unit), generic default and meaning.
/// The one list `sim:help`, the README's table and the unknown-key error are made from.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    pub key: &'static str,
    pub form: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// Every `sim:` key, in the order `sim:help` lists them.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc { key: "capacity", form: "size (64G, 500GB), 64M to 2T", default: "64G", meaning: "user-visible capacity" },
    KeyDoc { key: "op", form: "percent (7%) or fraction (0.07), 0% to 400%", default: "7%, or the least that holds the GC reserve on a smaller drive (3 x dies + 4 erase blocks beyond the capacity: 325% at 64M with 16 dies of 4M blocks)", meaning: "over-provisioning: physical = user x (1 + op)" },
    KeyDoc { key: "slc", form: "size, percent of capacity, or dynamic", default: "0", meaning: "SLC write cache (dynamic: carved out of free space)" },
    KeyDoc { key: "channels", form: "1 to 64", default: "8", meaning: "NAND channels" },
    KeyDoc { key: "dies", form: "1 to 1024", default: "16", meaning: "NAND dies, round-robin over the channels" },
    KeyDoc { key: "iface", form: "sata, pcieGxL (pcie3x4, pcie4x4), usb10, usb20, usb-bot", default: "pcie3x4", meaning: "host interface: link rate and per-command cost; usb-bot: bulk-only, one command at a time" },
    KeyDoc { key: "link", form: "rate (850MB/s, 1.2GB/s)", default: "the iface's", meaning: "host link payload rate, overriding the iface's" },
    KeyDoc { key: "cell", form: "mlc, tlc, qlc", default: "tlc", meaning: "NAND cell type: default timings and program unit" },
    KeyDoc { key: "tread", form: "duration (60us)", default: "the cell's (tlc 60us)", meaning: "NAND page read time" },
    KeyDoc { key: "tprog", form: "duration (2.4ms)", default: "the cell's (tlc 2400us)", meaning: "native-mode program time per program unit" },
    KeyDoc { key: "tprog_slc", form: "duration (200us)", default: "200us", meaning: "SLC-mode program time per 64 KiB on a die: sets the SLC write rate (below the link: a plateau under it)" },
    KeyDoc { key: "terase", form: "duration (3.5ms)", default: "the cell's (tlc 3500us)", meaning: "block erase time" },
    KeyDoc { key: "block", form: "power of two, 64K to 1G", default: "4M", meaning: "erase block size" },
    KeyDoc { key: "dram", form: "on, off", default: "on", meaning: "mapping table in DRAM (off: a 1 GiB-span SRAM mapping cache)" },
    KeyDoc { key: "gc", form: "incremental, batch, tiered", default: "incremental", meaning: "how garbage collection is scheduled against host writes" },
    KeyDoc { key: "gc_batch", form: "blocks, 1 to 1048576", default: "64", meaning: "blocks reclaimed per batch (batch and tiered GC)" },
    KeyDoc { key: "gc_bg_every", form: "host pages, 0 to 2^30", default: "0 (one erase block)", meaning: "host pages between background GC victims (tiered GC)" },
    KeyDoc { key: "gc_tiers", form: "1 to 8", default: "1", meaning: "background GC tiers of rising urgency (tiered GC)" },
    KeyDoc { key: "fold", form: "idle, load", default: "idle", meaning: "when the SLC cache is folded (load: a full cache holds the host)" },
    KeyDoc { key: "fold_batch", form: "size, at least 4K", default: "4G", meaning: "bytes folded while the host waits on a full cache (fold=load)" },
    KeyDoc { key: "slc_min", form: "size, at least 4K", default: "1G", meaning: "smallest dynamic SLC cache the drive creates" },
    KeyDoc { key: "fold_every", form: "0.25 to 64", default: "1.5", meaning: "host pages per folded page while a full dynamic cache empties" },
    KeyDoc { key: "slc_bypass", form: "size (0: none)", default: "0", meaning: "writes at least this large skip the SLC cache" },
    KeyDoc { key: "thermal", form: "on, off", default: "off", meaning: "thermal model with throttling" },
    KeyDoc { key: "ambient", form: "°C, -40 to 150", default: "35", meaning: "ambient temperature" },
    KeyDoc { key: "start_temp", form: "°C, -40 to 150", default: "idle steady state", meaning: "temperature at time 0" },
    KeyDoc { key: "throttle_temp", form: "°C, -40 to 150", default: "75", meaning: "the drive throttles above this" },
    KeyDoc { key: "release_temp", form: "°C, below throttle_temp", default: "70", meaning: "the throttle releases below this" },
    KeyDoc { key: "throttle_factor", form: "2 to 1000", default: "3", meaning: "a throttled drive's link and NAND run this many times slower" },
    KeyDoc { key: "thermal_r", form: "°C per W, above 0 to 1000", default: "12", meaning: "thermal resistance to ambient" },
    KeyDoc { key: "thermal_tau", form: "duration (4s)", default: "4s", meaning: "thermal time constant" },
    KeyDoc { key: "idle_power", form: "W, above 0 to 100", default: "0.4", meaning: "power when idle (also the floor under load)" },
    KeyDoc { key: "read_power", form: "W, above idle_power to 100", default: "from the energies per operation", meaning: "total power at the sustained sequential read rate" },
    KeyDoc { key: "write_power", form: "W, above idle_power to 100", default: "from the energies per operation", meaning: "total power at the sustained sequential write rate (SLC rate with a cache)" },
    KeyDoc { key: "peak_power", form: "W, above idle_power to 100", default: "none", meaning: "power limit: commands wait so that the drive never draws more on average (a power state)" },
    KeyDoc { key: "write_cache", form: "none, volatile", default: "none", meaning: "volatile DRAM write cache: writes complete when cached; a power cut loses them" },
    KeyDoc { key: "write_cache_size", form: "size, at least 4K", default: "64M", meaning: "volatile write cache size" },
    KeyDoc { key: "flush", form: "honest, delayed, ignored", default: "honest", meaning: "how a FLUSH is answered with a volatile cache" },
    KeyDoc { key: "power_cut", form: "duration (20ms, 30s, 2min, 1h: virtual time since the drive was made)", default: "none", meaning: "power cut: the volatile cache is lost (listed in the truth), the drive is back at once" },
    KeyDoc { key: "seed", form: "whole number", default: "1", meaning: "seed of the NAND timing jitter" },
];

/// `sim:help`: every key with its form, default and meaning, and the presets.
pub fn help_text() -> String {
    let mut s = String::from(
        "sim: a simulated SSD in virtual time: sim:[PRESET,]key=value,...\n\npresets:\n",
    );
    for (name, what) in PRESETS {
        s.push_str(&format!("  {name:<10} {what}\n"));
    }
    s.push_str("\nkeys (default without a preset):\n");
    for k in KEYS {
        s.push_str(&format!(
            "  {:<16} {}\n  {:<16}   form: {}; default: {}\n",
            k.key, k.meaning, "", k.form, k.default
        ));
    }
    s
}

/// The keys as a Markdown table (the README's, kept equal to this by a test).
pub fn keys_markdown() -> String {
    let mut s = String::from("| key | meaning | form | default |\n|---|---|---|---|\n");
    for k in KEYS {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.key, k.meaning, k.form, k.default
        ));
    }
    s
}

/// A temperature setting (°C) from the spec: a decimal from -40 to 150.
fn parse_celsius(s: &str) -> Option<f64> {
    let v: f64 = s.trim_end_matches('C').trim_end_matches("°").parse().ok()?;
    (v.is_finite() && (-40.0..=150.0).contains(&v)).then_some(v)
}

/// A positive decimal up to `hi`.
fn parse_positive(s: &str, hi: f64) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v > 0.0 && v <= hi).then_some(v)
}

/// Presets: (name, one-line description).
const PRESETS: [(&str, &str); 3] = [
    (
        "sata-mlc",
        "256 GB SATA 6 Gb/s MLC drive, 8 channels x 16 dies, 7% spare, no SLC cache, no throttling",
    ),
    (
        "nvme-tlc",
        "512 GB PCIe 4.0 x4 NVMe TLC drive, 16 dies, 7% spare, SLC cache of 10% of capacity, thermal throttling",
    ),
    (
        "dramless",
        "256 GB DRAM-less PCIe 3.0 x4 TLC drive, 4 dies, 5% spare, small SLC cache, batch GC that stalls for seconds",
    ),
];

/// Preset names and one-line descriptions, for help text.
pub fn presets() -> Vec<(&'static str, &'static str)> {
    PRESETS.to_vec()
}

impl SimConfig {
    /// The parameters used when a spec names no preset: a generic 64 GB PCIe 3.0 x4 TLC drive.
    pub fn generic() -> SimConfig {
        let cell = Cell::Tlc;
        let (tr, tp, te) = cell.default_times_ns();
        SimConfig {
            preset: None,
            capacity_bytes: 64 << 30,
            op_percent: 7.0,
            slc: SlcSize::Bytes(0),
            channels: 8,
            dies: 16,
            iface: Iface::Pcie { gen: 3, lanes: 4 },
            cell,
            tread_ns: tr,
            tprog_ns: tp,
            tprog_slc_ns: SLC_PROGRAM_NS,
            terase_ns: te,
            block_bytes: 4 << 20,
            dram: true,
            gc: GcMode::Incremental,
            gc_batch_blocks: 64,
            gc_bg_every_pages: 0,
            gc_tiers: 1,
            fold: FoldMode::Idle,
            fold_batch_bytes: 4 << 30,
            slc_min_bytes: 1 << 30,
            fold_every: 1.5,
            slc_bypass_bytes: 0,
            thermal: false,
            thermal_params: M2_NVME,
            start_celsius: None,
            link_bytes_per_s: None,
            throttle_factor: 3,
            read_power_w: None,
            write_power_w: None,
            peak_power_w: None,
            write_cache: WriteCache::None,
            write_cache_bytes: 64 << 20,
            flush: FlushMode::Honest,
            power_cut_ns: None,
            seed: 1,
        }
    }

    /// A named preset.
    pub fn preset(name: &str) -> Option<SimConfig> {
        let mut c = SimConfig::generic();
        match name {
            "sata-mlc" => {
                c.preset = Some("sata-mlc");
                c.capacity_bytes = 256 << 30;
                c.iface = Iface::Sata;
                c.set_cell(Cell::Mlc);
            }
            "nvme-tlc" => {
                c.preset = Some("nvme-tlc");
                c.capacity_bytes = 512 << 30;
                c.iface = Iface::Pcie { gen: 4, lanes: 4 };
                c.slc = SlcSize::Percent(10.0);
                c.thermal = true;
            }
            "dramless" => {
                c.preset = Some("dramless");
                c.capacity_bytes = 256 << 30;
                c.op_percent = 5.0;
                c.slc = SlcSize::Percent(2.0);
                c.channels = 2;
                c.dies = 4;
                c.dram = false;
                c.gc = GcMode::Batch;
                c.gc_batch_blocks = 8;
            }
            _ => return None,
        }
        Some(c)
    }

    fn set_cell(&mut self, cell: Cell) {
        self.cell = cell;
        let (tr, tp, te) = cell.default_times_ns();
        self.tread_ns = tr;
        self.tprog_ns = tp;
        self.terase_ns = te;
    }

    /// SLC cache size in bytes (a multiple of 4 KiB, at most the capacity); 0 for a
    /// dynamic cache, whose size follows the free space.
    pub fn slc_bytes(&self) -> u64 {
        let b = match self.slc {
            SlcSize::Bytes(b) => b,
            SlcSize::Percent(p) => (self.capacity_bytes as f64 * p / 100.0) as u64,
            SlcSize::Dynamic => 0,
        };
        b.min(self.capacity_bytes) / PAGE_BYTES * PAGE_BYTES
    }

    /// Parse a `sim:` target string: an optional preset name first, then `key=value`
    /// overrides separated by commas, each read by [`SpecReader::set`]; then the
    /// checks across keys and the defaults that depend on them ([`SpecReader::finish`]).
    pub fn parse(spec: &str) -> Result<SimConfig, String> {
        let body = spec.trim();
        let body = body.strip_prefix("sim:").unwrap_or(body);
        let mut parts = body
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .peekable();
        let start = match parts.peek() {
            Some(first) if !first.contains('=') => preset_named(parts.next().unwrap_or_default())?,
            _ => SimConfig::generic(),
        };
        let mut reader = SpecReader::new(start);
        for part in parts {
            reader.set(&Setting::of(part)?)?;
        }
        reader.finish()
    }

    /// Erase blocks garbage collection keeps free (see `SimDevice::new`): two victims'
    /// worth of every die's frontier.
    pub fn gc_low_blocks(&self) -> u32 {
        2 * self.dies + 2
    }

    /// Erase blocks the drive needs beyond those of its capacity: the dies' open blocks,
    /// one more, and the GC reserve with one to spare.
    pub fn spare_blocks_needed(&self) -> u64 {
        self.dies as u64 + 1 + self.gc_low_blocks() as u64 + 1
    }

    /// The least over-provisioning (in percent, rounded up to 0.1) whose spare area
    /// holds [`SimConfig::spare_blocks_needed`]: the default `op` on a drive too small
    /// for 7 %.
    pub fn least_op_percent(&self) -> f64 {
        let user_pages = (self.capacity_bytes / PAGE_BYTES).max(1) as f64;
        let np = (self.block_bytes / PAGE_BYTES).max(1) as f64;
        let user_blocks = (user_pages / np).ceil();
        let need_pages = (user_blocks + self.spare_blocks_needed() as f64) * np;
        ((need_pages / user_pages - 1.0) * 1000.0 - 1e-9).ceil() / 10.0
    }

    /// The full resolved spec string; `parse` of it gives back these parameters.
    pub fn to_spec(&self) -> String {
        let mut s = String::from("sim:");
        if let Some(p) = self.preset {
            s.push_str(p);
            s.push(',');
        }
        let slc = match self.slc {
            SlcSize::Bytes(b) => format_size(b),
            SlcSize::Percent(p) => format_percent(p),
            SlcSize::Dynamic => "dynamic".into(),
        };
        s.push_str(&format!(
            "capacity={},op={},slc={slc},channels={},dies={},iface={},cell={},tread={},tprog={},\
             terase={},block={},dram={},gc={},gc_batch={},thermal={},seed={}",
            format_size(self.capacity_bytes),
            format_percent(self.op_percent),
            self.channels,
            self.dies,
            self.iface.name(),
            self.cell.name(),
            format_duration(self.tread_ns),
            format_duration(self.tprog_ns),
            format_duration(self.terase_ns),
            format_size(self.block_bytes),
            on_off(self.dram),
            self.gc.name(),
            self.gc_batch_blocks,
            on_off(self.thermal),
            self.seed
        ));
        if self.gc_bg_every_pages != 0 {
            s.push_str(&format!(",gc_bg_every={}", self.gc_bg_every_pages));
        }
        if self.gc_tiers != 1 {
            s.push_str(&format!(",gc_tiers={}", self.gc_tiers));
        }
        if self.fold != FoldMode::Idle || self.fold_batch_bytes != 4 << 30 {
            s.push_str(&format!(
                ",fold={},fold_batch={}",
                self.fold.name(),
                format_size(self.fold_batch_bytes)
            ));
        }
        if self.slc == SlcSize::Dynamic || self.slc_min_bytes != 1 << 30 || self.fold_every != 1.5 {
            s.push_str(&format!(
                ",slc_min={},fold_every={}",
                format_size(self.slc_min_bytes),
                self.fold_every
            ));
        }
        if self.slc_bypass_bytes != 0 {
            s.push_str(&format!(
                ",slc_bypass={}",
                format_size(self.slc_bypass_bytes)
            ));
        }
        let t = &self.thermal_params;
        if *t != M2_NVME {
            s.push_str(&format!(
                ",ambient={},throttle_temp={},release_temp={},thermal_r={},thermal_tau={},idle_power={}",
                t.ambient_c,
                t.throttle_c,
                t.release_c,
                t.resistance_c_per_w,
                format_duration((t.tau_s * 1e9).round() as u64),
                t.idle_w
            ));
        }
        if let Some(c) = self.start_celsius {
            s.push_str(&format!(",start_temp={c}"));
        }
        if self.tprog_slc_ns != SLC_PROGRAM_NS {
            s.push_str(&format!(
                ",tprog_slc={}",
                format_duration(self.tprog_slc_ns)
            ));
        }
        if let Some(r) = self.link_bytes_per_s {
            s.push_str(&format!(",link={r}/s"));
        }
        if self.throttle_factor != 3 {
            s.push_str(&format!(",throttle_factor={}", self.throttle_factor));
        }
        if let Some(w) = self.read_power_w {
            s.push_str(&format!(",read_power={w}"));
        }
        if let Some(w) = self.write_power_w {
            s.push_str(&format!(",write_power={w}"));
        }
        if let Some(w) = self.peak_power_w {
            s.push_str(&format!(",peak_power={w}"));
        }
        if self.write_cache != WriteCache::None {
            s.push_str(&format!(
                ",write_cache={},write_cache_size={},flush={}",
                self.write_cache.name(),
                format_size(self.write_cache_bytes),
                self.flush.name()
            ));
        }
        if let Some(t) = self.power_cut_ns {
            s.push_str(&format!(",power_cut={}", format_duration(t)));
        }
        s
    }

    /// The host link's payload rate in bytes/s: `link` if set, else the interface's.
    pub fn link_rate(&self) -> f64 {
        self.link_bytes_per_s
            .map_or_else(|| self.iface.payload_bytes_per_s(), |r| r as f64)
    }

    /// Thermal and power constants that cannot work: the throttle must release below
    /// where it starts, an active power must be above the idle power.
    pub fn check_thermal(&self) -> Result<(), String> {
        let t = &self.thermal_params;
        for (key, w) in [
            ("read_power", self.read_power_w),
            ("write_power", self.write_power_w),
            ("peak_power", self.peak_power_w),
        ] {
            if let Some(w) = w.filter(|&w| w <= t.idle_w) {
                return Err(format!(
                    "sim: bad {key} '{w}': expected a power above idle_power ({} W)",
                    t.idle_w
                ));
            }
        }
        if t.release_c >= t.throttle_c {
            return Err(format!(
                "sim: bad release_temp '{}': expected a temperature below throttle_temp ({})",
                t.release_c, t.throttle_c
            ));
        }
        Ok(())
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn parse_count(s: &str, lo: u32, hi: u32) -> Option<u32> {
    s.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n))
}

/// The preset a spec starts with; refused naming the presets there are.
fn preset_named(name: &str) -> Result<SimConfig, String> {
    SimConfig::preset(name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        format!(
            "sim: unknown preset '{name}': expected one of {} (or key=value settings)",
            names.join(", ")
        )
    })
}

/// One `key=value` part of a spec.
struct Setting<'a> {
    key: &'a str,
    value: &'a str,
}

impl<'a> Setting<'a> {
    /// The part split at its `=`; refused when it has none (after the first part, where
    /// a preset's name may stand).
    fn of(part: &'a str) -> Result<Setting<'a>, String> {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "sim: '{part}' is not key=value (a preset name may only come first)"
            ));
        };
        Ok(Setting {
            key: key.trim(),
            value: value.trim(),
        })
    }

    /// The refusal of this setting: one line naming the key, its value and `form`.
    fn bad(&self, form: &str) -> String {
        format!("sim: bad {} '{}': expected {form}", self.key, self.value)
    }

    fn size_or(&self, form: &str) -> Result<u64, String> {
        parse_size(self.value).ok_or_else(|| self.bad(form))
    }

    fn duration_ns(&self) -> Result<u64, String> {
        parse_duration_ns(self.value).ok_or_else(|| self.bad(DURATION_FORM))
    }

    fn count(&self, lo: u32, hi: u32, form: &str) -> Result<u32, String> {
        parse_count(self.value, lo, hi).ok_or_else(|| self.bad(form))
    }

    fn switch(&self) -> Result<bool, String> {
        parse_switch(self.value).ok_or_else(|| self.bad("on or off"))
    }

    fn celsius(&self) -> Result<f64, String> {
        parse_celsius(self.value).ok_or_else(|| self.bad(CELSIUS_FORM))
    }

    fn positive(&self, hi: f64, form: &str) -> Result<f64, String> {
        parse_positive(self.value, hi).ok_or_else(|| self.bad(form))
    }
}

/// A group of keys [`SpecReader::set`] tries in turn: Ok(false) when the key is not
/// one of the group's.
type KeyGroup = fn(&mut SpecReader, &Setting) -> Result<bool, String>;

/// A spec's settings read one after another onto the parameters they started from,
/// with what the checks after the last one need to know.
struct SpecReader {
    cfg: SimConfig,
    /// tread, tprog, terase given explicitly: a `cell=` (before or after) leaves them.
    times_set: [bool; 3],
    /// `op=` given: else the least over-provisioning that fits, when above the default.
    op_given: bool,
}

impl SpecReader {
    fn new(cfg: SimConfig) -> SpecReader {
        SpecReader {
            cfg,
            times_set: [false; 3],
            op_given: false,
        }
    }

    /// Reads one setting by the group of keys it belongs to; an unknown key is refused
    /// with the list of keys.
    fn set(&mut self, s: &Setting) -> Result<(), String> {
        const GROUPS: [KeyGroup; 8] = [
            SpecReader::set_size_and_layout,
            SpecReader::set_host_link,
            SpecReader::set_nand,
            SpecReader::set_gc,
            SpecReader::set_slc_cache,
            SpecReader::set_thermal,
            SpecReader::set_power,
            SpecReader::set_write_cache,
        ];
        for group in GROUPS {
            if group(self, s)? {
                return Ok(());
            }
        }
        let names: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        Err(format!(
            "sim: unknown key '{}': expected one of {} (sim:help lists them)",
            s.key,
            names.join(", ")
        ))
    }

    /// The checks across keys (thermal and power constants that cannot work), then
    /// the default over-provisioning a small drive needs.
    fn finish(self) -> Result<SimConfig, String> {
        let mut cfg = self.cfg;
        cfg.check_thermal()?;
        if !self.op_given {
            cfg.op_percent = cfg.op_percent.max(cfg.least_op_percent());
        }
        Ok(cfg)
    }

    /// capacity, op, channels, dies, block, dram, seed.
    fn set_size_and_layout(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "capacity" => {
                let b = s.size_or(SIZE_FORM)?;
                if !(MIN_CAPACITY_BYTES..=MAX_CAPACITY_BYTES).contains(&b) {
                    return Err(s.bad("a size from 64M to 2T"));
                }
                c.capacity_bytes = b / PAGE_BYTES * PAGE_BYTES;
            }
            "op" => {
                let p = parse_percent(s.value).ok_or_else(|| s.bad(PERCENT_FORM))?;
                if p > 400.0 {
                    return Err(s.bad("a percentage from 0% to 400%"));
                }
                c.op_percent = p;
                self.op_given = true;
            }
            "channels" => c.channels = s.count(1, 64, "a whole number from 1 to 64")?,
            "dies" => c.dies = s.count(1, 1024, "a whole number from 1 to 1024")?,
            "block" => {
                c.block_bytes = parse_size(s.value)
                    .filter(|b| b.is_power_of_two() && (64 << 10..=1 << 30).contains(b))
                    .ok_or_else(|| s.bad("a power of two from 64K to 1G, like 4M"))?
            }
            "dram" => c.dram = s.switch()?,
            "seed" => {
                c.seed = s
                    .value
                    .parse()
                    .map_err(|_| s.bad("a whole number like 42"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// iface, link.
    fn set_host_link(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "iface" => c.iface = Iface::parse(s.value).ok_or_else(|| s.bad(Iface::FORM))?,
            "link" => {
                let r = s
                    .value
                    .strip_suffix("/s")
                    .and_then(parse_size)
                    .filter(|&r| (1_000_000..=1_000_000_000_000).contains(&r))
                    .ok_or_else(|| {
                        s.bad("a rate from 1MB/s to 1TB/s, like 850MB/s (MB = 10^6 bytes)")
                    })?;
                c.link_bytes_per_s = Some(r);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// cell and the NAND timings: tread, tprog, tprog_slc, terase.
    fn set_nand(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "cell" => {
                let cell = Cell::parse(s.value).ok_or_else(|| s.bad("mlc, tlc or qlc"))?;
                let (tr, tp, te) = cell.default_times_ns();
                c.cell = cell;
                // Timings given explicitly (before or after) win over the cell's defaults.
                if !self.times_set[0] {
                    c.tread_ns = tr;
                }
                if !self.times_set[1] {
                    c.tprog_ns = tp;
                }
                if !self.times_set[2] {
                    c.terase_ns = te;
                }
            }
            "tread" => {
                c.tread_ns = s.duration_ns()?;
                self.times_set[0] = true;
            }
            "tprog" => {
                c.tprog_ns = s.duration_ns()?;
                self.times_set[1] = true;
            }
            "tprog_slc" => c.tprog_slc_ns = s.duration_ns()?,
            "terase" => {
                c.terase_ns = s.duration_ns()?;
                self.times_set[2] = true;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// gc, gc_batch, gc_bg_every, gc_tiers.
    fn set_gc(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "gc" => {
                c.gc =
                    GcMode::parse(s.value).ok_or_else(|| s.bad("incremental, batch or tiered"))?
            }
            "gc_bg_every" => {
                c.gc_bg_every_pages = s.count(
                    0,
                    1 << 30,
                    "a number of host pages from 0 to 1073741824 (0: one erase block)",
                )?
            }
            "gc_tiers" => {
                c.gc_tiers = s.count(1, 8, "a number of background GC tiers from 1 to 8")?
            }
            "gc_batch" => {
                c.gc_batch_blocks = s.count(1, 1 << 20, "a number of blocks from 1 to 1048576")?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// slc and its folding: fold, fold_batch, slc_min, fold_every, slc_bypass.
    fn set_slc_cache(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "slc" => {
                c.slc = if s.value == "dynamic" {
                    SlcSize::Dynamic
                } else if s.value.ends_with('%') {
                    let p = parse_percent(s.value)
                        .filter(|p| *p <= 100.0)
                        .ok_or_else(|| s.bad("a size like 8G or a share of capacity like 10%"))?;
                    SlcSize::Percent(p)
                } else {
                    SlcSize::Bytes(s.size_or(
                        "a size like 8G (0 for none), a share of capacity like 10%, or dynamic",
                    )?)
                }
            }
            "fold" => c.fold = FoldMode::parse(s.value).ok_or_else(|| s.bad("idle or load"))?,
            "fold_batch" => {
                c.fold_batch_bytes = parse_size(s.value)
                    .filter(|&b| b >= PAGE_BYTES)
                    .ok_or_else(|| s.bad("a size of at least 4K, like 4G"))?
            }
            "slc_min" => {
                c.slc_min_bytes = parse_size(s.value)
                    .filter(|&b| b >= PAGE_BYTES)
                    .ok_or_else(|| s.bad("a size of at least 4K, like 1G"))?
            }
            "fold_every" => {
                c.fold_every = parse_positive(s.value, 64.0)
                    .filter(|&v| v >= 0.25)
                    .ok_or_else(|| s.bad("host pages per folded page from 0.25 to 64, like 1.5"))?
            }
            "slc_bypass" => c.slc_bypass_bytes = s.size_or("a write size like 128K (0: none)")?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// thermal and its constants: ambient, start_temp, throttle_temp, release_temp,
    /// thermal_r, thermal_tau, idle_power, throttle_factor.
    fn set_thermal(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        let t = &mut c.thermal_params;
        match s.key {
            "thermal" => c.thermal = s.switch()?,
            "ambient" => t.ambient_c = s.celsius()?,
            "start_temp" => c.start_celsius = Some(s.celsius()?),
            "throttle_temp" => t.throttle_c = s.celsius()?,
            "release_temp" => t.release_c = s.celsius()?,
            "thermal_r" => {
                t.resistance_c_per_w = s.positive(
                    1000.0,
                    "a thermal resistance in °C per W from above 0 to 1000, like 12",
                )?
            }
            "thermal_tau" => {
                let ns = parse_duration_ns(s.value)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| s.bad("a time constant like 4s or 90s"))?;
                t.tau_s = ns as f64 / 1e9;
            }
            "idle_power" => {
                t.idle_w = s.positive(100.0, "an idle power in W from above 0 to 100, like 0.4")?
            }
            "throttle_factor" => {
                c.throttle_factor = s.count(2, 1000, "a slowdown from 2 to 1000")?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// read_power, write_power, peak_power (checked against idle_power at the end).
    fn set_power(&mut self, s: &Setting) -> Result<bool, String> {
        let (field, like) = match s.key {
            "read_power" => (&mut self.cfg.read_power_w, "5.5"),
            "write_power" => (&mut self.cfg.write_power_w, "7.2"),
            "peak_power" => (&mut self.cfg.peak_power_w, "8.25"),
            _ => return Ok(false),
        };
        *field = Some(s.positive(
            100.0,
            &format!("a power in W from above 0 to 100, like {like}"),
        )?);
        Ok(true)
    }

    /// write_cache, write_cache_size, flush, power_cut.
    fn set_write_cache(&mut self, s: &Setting) -> Result<bool, String> {
        let c = &mut self.cfg;
        match s.key {
            "write_cache" => {
                c.write_cache =
                    WriteCache::parse(s.value).ok_or_else(|| s.bad("none or volatile"))?
            }
            "write_cache_size" => {
                c.write_cache_bytes = parse_size(s.value)
                    .filter(|&b| (PAGE_BYTES..=1 << 40).contains(&b))
                    .ok_or_else(|| s.bad("a size from 4K to 1T, like 64M"))?
            }
            "flush" => {
                c.flush =
                    FlushMode::parse(s.value).ok_or_else(|| s.bad("honest, delayed or ignored"))?
            }
            "power_cut" => {
                // Read as --runtime is (one duration parser): 20ms, 90s, 2min, 1h.
                c.power_cut_ns = Some(
                    drivelab_engine::size::parse_duration_ns(s.value)
                        .ok()
                        .filter(|&ns| ns > 0)
                        .ok_or_else(|| {
                            s.bad(&format!(
                                "a virtual time above 0: {}",
                                drivelab_engine::size::DURATION_FORM
                            ))
                        })?,
                )
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// power_cut= reads a duration as --runtime does (minutes and hours too), and
    /// round-trips through the spec.
    #[test]
    fn power_cut_takes_every_duration_form() {
        for (text, ns) in [
            ("20ms", 20_000_000),
            ("90s", 90_000_000_000),
            ("90m", 5_400_000_000_000),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
        ] {
            let c =
                SimConfig::parse(&format!("sim:write_cache=volatile,power_cut={text}")).unwrap();
            assert_eq!(c.power_cut_ns, Some(ns), "{text}");
            assert_eq!(
                SimConfig::parse(&c.to_spec()).unwrap(),
                c,
                "{}",
                c.to_spec()
            );
        }
        for bad in ["0", "1x", "-1s"] {
            let e =
                SimConfig::parse(&format!("sim:write_cache=volatile,power_cut={bad}")).unwrap_err();
            assert_eq!(
                e,
                format!("sim: bad power_cut '{bad}': expected a virtual time above 0: a duration like 30 (seconds), 500ms, 10s, 5m or 1h")
            );
        }
    }

    #[test]
    fn explicit_keys_override_generic_defaults() {
        let c = SimConfig::parse("sim:capacity=64G,op=7%,slc=8G,channels=8,iface=sata").unwrap();
        assert_eq!(c.capacity_bytes, 64 << 30);
        assert_eq!(c.op_percent, 7.0);
        assert_eq!(c.slc_bytes(), 8 << 30);
        assert_eq!(c.channels, 8);
        assert_eq!(c.iface, Iface::Sata);
        assert_eq!(c.preset, None);
    }

    #[test]
    fn presets_take_overrides_and_round_trip() {
        for (name, _) in presets() {
            let c = SimConfig::parse(&format!("sim:{name},capacity=32G,seed=9")).unwrap();
            assert_eq!(c.preset, Some(name));
            assert_eq!(c.capacity_bytes, 32 << 30);
            assert_eq!(c.seed, 9);
            assert_eq!(
                SimConfig::parse(&c.to_spec()).unwrap(),
                c,
                "{}",
                c.to_spec()
            );
        }
        let c = SimConfig::parse("sim:nvme-tlc").unwrap();
        assert!(c.thermal);
        assert_eq!(c.slc_bytes(), (512u64 << 30) / 10 / 4096 * 4096);
        assert_eq!(SimConfig::parse("sim:sata-mlc").unwrap().slc_bytes(), 0);
        assert!(!SimConfig::parse("sim:dramless").unwrap().dram);
        let c =
            SimConfig::parse("sim:nvme-tlc,thermal=off,iface=pcie3x2,cell=qlc,tprog=3ms").unwrap();
        assert!(!c.thermal);
        assert_eq!(c.iface, Iface::Pcie { gen: 3, lanes: 2 });
        assert_eq!((c.tread_ns, c.tprog_ns), (90_000, 3_000_000));
    }

    #[test]
    fn errors_name_the_key_and_the_accepted_form() {
        let e = SimConfig::parse("sim:op=seven").unwrap_err();
        assert!(e.contains("op") && e.contains("7%"), "{e}");
        assert!(!e.contains('\n'));
        let e = SimConfig::parse("sim:capacity=12X").unwrap_err();
        assert!(e.contains("capacity") && e.contains("64G"), "{e}");
        let e = SimConfig::parse("sim:iface=scsi").unwrap_err();
        assert!(e.contains("iface") && e.contains("pcie4x4"), "{e}");
        let e = SimConfig::parse("sim:thermal=maybe").unwrap_err();
        assert!(e.contains("thermal") && e.contains("on or off"), "{e}");
        let e = SimConfig::parse("sim:hdd").unwrap_err();
        assert!(e.contains("hdd") && e.contains("nvme-tlc"), "{e}");
        let e = SimConfig::parse("sim:color=red").unwrap_err();
        assert!(e.contains("color") && e.contains("capacity"), "{e}");
        let e = SimConfig::parse("sim:capacity=1G,nvme-tlc").unwrap_err();
        assert!(e.contains("nvme-tlc"), "{e}");
        let e = SimConfig::parse("sim:block=3M").unwrap_err();
        assert!(e.contains("block") && e.contains("power of two"), "{e}");
    }

    #[test]
    fn thermal_constants_and_start_temperature_are_settable() {
        let c = SimConfig::parse(
            "sim:nvme-tlc,ambient=45,start_temp=56,thermal_r=20,thermal_tau=30s,idle_power=0.8,throttle_temp=80,release_temp=72",
        )
        .unwrap();
        let t = c.thermal_params;
        assert_eq!(
            (t.ambient_c, t.resistance_c_per_w, t.tau_s),
            (45.0, 20.0, 30.0)
        );
        assert_eq!((t.idle_w, t.throttle_c, t.release_c), (0.8, 80.0, 72.0));
        assert_eq!(c.start_celsius, Some(56.0));
        assert_eq!(
            SimConfig::parse(&c.to_spec()).unwrap(),
            c,
            "{}",
            c.to_spec()
        );
        // Defaults print nothing new.
        assert!(!SimConfig::parse("sim:nvme-tlc")
            .unwrap()
            .to_spec()
            .contains("ambient"));
        let e = SimConfig::parse("sim:release_temp=80").unwrap_err();
        assert!(e.contains("release_temp") && e.contains("below"), "{e}");
        let e = SimConfig::parse("sim:ambient=hot").unwrap_err();
        assert!(e.contains("ambient") && e.contains("°C"), "{e}");
        let c = SimConfig::parse("sim:nvme-tlc,fold=load,fold_batch=12G").unwrap();
        assert_eq!((c.fold, c.fold_batch_bytes), (FoldMode::Load, 12 << 30));
        assert_eq!(
            SimConfig::parse(&c.to_spec()).unwrap(),
            c,
            "{}",
            c.to_spec()
        );
        let c = SimConfig::parse("sim:gc=tiered,gc_batch=1000,gc_bg_every=512").unwrap();
        assert_eq!(
            (c.gc, c.gc_bg_every_pages, c.gc_tiers),
            (GcMode::Tiered, 512, 1)
        );
        let c = SimConfig::parse("sim:gc=tiered,gc_tiers=3").unwrap();
        assert_eq!(c.gc_tiers, 3);
        assert_eq!(SimConfig::parse(&c.to_spec()).unwrap().gc_tiers, 3);
        for bad in ["0", "9", "x"] {
            let e = SimConfig::parse(&format!("sim:gc_tiers={bad}")).unwrap_err();
            assert!(e.contains("gc_tiers") && e.contains("1 to 8"), "{e}");
        }
        assert_eq!(
            SimConfig::parse(&c.to_spec()).unwrap(),
            c,
            "{}",
            c.to_spec()
        );
        let c =
            SimConfig::parse("sim:cell=qlc,slc=dynamic,slc_min=2G,fold_every=1.25,slc_bypass=128K")
                .unwrap();
        assert_eq!(c.slc, SlcSize::Dynamic);
        assert_eq!(
            (c.slc_min_bytes, c.fold_every, c.slc_bypass_bytes),
            (2 << 30, 1.25, 128 << 10)
        );
        assert_eq!(c.slc_bytes(), 0);
        assert_eq!(
            SimConfig::parse(&c.to_spec()).unwrap(),
            c,
            "{}",
            c.to_spec()
        );
        let e = SimConfig::parse("sim:fold_every=0").unwrap_err();
        assert!(e.contains("fold_every") && e.contains("0.25"), "{e}");
        let e = SimConfig::parse("sim:fold=sometimes").unwrap_err();
        assert!(e.contains("fold") && e.contains("idle or load"), "{e}");
        let e = SimConfig::parse("sim:thermal_tau=0s").unwrap_err();
        assert!(e.contains("thermal_tau"), "{e}");
    }

    #[test]
    fn every_key_in_the_table_is_accepted_and_round_trips() {
        // One setting per key that the table lists; the parser knows each of them.
        let example = |key: &str| match key {
            "capacity" => "8G",
            "op" => "12%",
            "slc" => "dynamic",
            "channels" => "4",
            "dies" => "8",
            "iface" => "usb-bot",
            "link" => "850MB/s",
            "cell" => "qlc",
            "tread" | "tprog" | "terase" | "tprog_slc" => "70us",
            "block" => "1M",
            "dram" | "thermal" => "off",
            "gc" => "tiered",
            "gc_batch" | "gc_bg_every" => "128",
            "gc_tiers" => "3",
            "fold" => "load",
            "fold_batch" | "slc_min" | "slc_bypass" | "write_cache_size" => "8M",
            "fold_every" => "2",
            "ambient" | "start_temp" => "40",
            "throttle_temp" => "80",
            "release_temp" => "72",
            "throttle_factor" => "20",
            "thermal_r" => "20",
            "thermal_tau" => "30s",
            "idle_power" => "2.91",
            "read_power" => "5.5",
            "write_power" => "7.23",
            "peak_power" => "8.25",
            "write_cache" => "volatile",
            "flush" => "ignored",
            "power_cut" => "30s",
            "seed" => "7",
            other => panic!("no example for key {other}"),
        };
        let all: Vec<String> = KEYS
            .iter()
            .map(|k| format!("{}={}", k.key, example(k.key)))
            .collect();
        for kv in &all {
            SimConfig::parse(&format!("sim:{kv}")).unwrap_or_else(|e| panic!("{kv}: {e}"));
        }
        let c = SimConfig::parse(&format!("sim:{}", all.join(","))).unwrap();
        assert_eq!(
            SimConfig::parse(&c.to_spec()).unwrap(),
            c,
            "{}",
            c.to_spec()
        );
        assert_eq!(c.iface, Iface::UsbBot);
        assert_eq!(c.link_bytes_per_s, Some(850_000_000));
        assert_eq!(
            (c.write_cache, c.flush),
            (WriteCache::Volatile, FlushMode::Ignored)
        );
        assert_eq!(c.power_cut_ns, Some(30_000_000_000));
        // The unknown-key error lists the table's keys; the help text has every one.
        let e = SimConfig::parse("sim:colour=red").unwrap_err();
        let help = help_text();
        for k in KEYS {
            assert!(e.contains(k.key), "{e}");
            assert!(
                help.contains(k.key) && help.contains(k.meaning),
                "{}",
                k.key
            );
        }
    }

    #[test]
    fn the_readme_lists_the_keys_of_the_table() {
        let readme = include_str!("../../../README.md");
        assert!(
            readme.contains(&keys_markdown()),
            "README.md's simulator section must hold keys_markdown() verbatim:\n{}",
            keys_markdown()
        );
    }

    #[test]
    fn iface_bandwidths_are_plausible() {
        let sata = Iface::Sata.payload_bytes_per_s();
        assert!((500e6..600e6).contains(&sata));
        let g4 = Iface::Pcie { gen: 4, lanes: 4 }.payload_bytes_per_s();
        assert!((6.5e9..7.9e9).contains(&g4), "{g4}");
        let u10 = Iface::Usb { gbps: 10 }.payload_bytes_per_s();
        assert!((0.9e9..1.25e9).contains(&u10), "{u10}");
    }
    /// Every refusal of `parse`, word for word: one line naming the key (or the preset,
    /// or the part that is not key=value) and the form it takes. (The unknown key's,
    /// which lists every key, is checked against the table above.)
    #[test]
    fn every_refusal_names_its_key_and_form_in_one_line() {
        for (spec, refusal) in [
            ("sim:hdd", "sim: unknown preset 'hdd': expected one of sata-mlc, nvme-tlc, dramless (or key=value settings)"),
            ("sim:capacity=1G,nvme-tlc", "sim: 'nvme-tlc' is not key=value (a preset name may only come first)"),
            ("sim:capacity=12X", "sim: bad capacity '12X': expected a size like 512M, 64G, 64GB or 1T (k/Ki/KiB = 1024, KB = 1000)"),
            ("sim:capacity=32M", "sim: bad capacity '32M': expected a size from 64M to 2T"),
            ("sim:op=seven", "sim: bad op 'seven': expected a percentage like 7% or a fraction from 0 to 1 like 0.07 (a bare 3 is not taken for 300%)"),
            ("sim:op=500%", "sim: bad op '500%': expected a percentage from 0% to 400%"),
            ("sim:slc=150%", "sim: bad slc '150%': expected a size like 8G or a share of capacity like 10%"),
            ("sim:slc=lots", "sim: bad slc 'lots': expected a size like 8G (0 for none), a share of capacity like 10%, or dynamic"),
            ("sim:channels=0", "sim: bad channels '0': expected a whole number from 1 to 64"),
            ("sim:dies=2000", "sim: bad dies '2000': expected a whole number from 1 to 1024"),
            ("sim:iface=scsi", "sim: bad iface 'scsi': expected sata, pcie<gen>x<lanes> (e.g. pcie3x4, pcie4x4), usb10, usb20 (UAS) or usb-bot (bulk-only)"),
            ("sim:cell=slc", "sim: bad cell 'slc': expected mlc, tlc or qlc"),
            ("sim:tread=fast", "sim: bad tread 'fast': expected a duration like 60us, 2.4ms or 500ns"),
            ("sim:tprog=x", "sim: bad tprog 'x': expected a duration like 60us, 2.4ms or 500ns"),
            ("sim:tprog_slc=x", "sim: bad tprog_slc 'x': expected a duration like 60us, 2.4ms or 500ns"),
            ("sim:terase=x", "sim: bad terase 'x': expected a duration like 60us, 2.4ms or 500ns"),
            ("sim:block=3M", "sim: bad block '3M': expected a power of two from 64K to 1G, like 4M"),
            ("sim:dram=maybe", "sim: bad dram 'maybe': expected on or off"),
            ("sim:gc=sometimes", "sim: bad gc 'sometimes': expected incremental, batch or tiered"),
            ("sim:gc_bg_every=-1", "sim: bad gc_bg_every '-1': expected a number of host pages from 0 to 1073741824 (0: one erase block)"),
            ("sim:gc_tiers=9", "sim: bad gc_tiers '9': expected a number of background GC tiers from 1 to 8"),
            ("sim:gc_batch=0", "sim: bad gc_batch '0': expected a number of blocks from 1 to 1048576"),
            ("sim:fold=sometimes", "sim: bad fold 'sometimes': expected idle or load"),
            ("sim:fold_batch=1K", "sim: bad fold_batch '1K': expected a size of at least 4K, like 4G"),
            ("sim:slc_min=0", "sim: bad slc_min '0': expected a size of at least 4K, like 1G"),
            ("sim:fold_every=0", "sim: bad fold_every '0': expected host pages per folded page from 0.25 to 64, like 1.5"),
            ("sim:slc_bypass=big", "sim: bad slc_bypass 'big': expected a write size like 128K (0: none)"),
            ("sim:thermal=maybe", "sim: bad thermal 'maybe': expected on or off"),
            ("sim:ambient=hot", "sim: bad ambient 'hot': expected a temperature in °C from -40 to 150, like 35"),
            ("sim:start_temp=200", "sim: bad start_temp '200': expected a temperature in °C from -40 to 150, like 35"),
            ("sim:throttle_temp=x", "sim: bad throttle_temp 'x': expected a temperature in °C from -40 to 150, like 35"),
            ("sim:release_temp=x", "sim: bad release_temp 'x': expected a temperature in °C from -40 to 150, like 35"),
            ("sim:thermal_r=0", "sim: bad thermal_r '0': expected a thermal resistance in °C per W from above 0 to 1000, like 12"),
            ("sim:thermal_tau=0s", "sim: bad thermal_tau '0s': expected a time constant like 4s or 90s"),
            ("sim:idle_power=0", "sim: bad idle_power '0': expected an idle power in W from above 0 to 100, like 0.4"),
            ("sim:link=10KB/s", "sim: bad link '10KB/s': expected a rate from 1MB/s to 1TB/s, like 850MB/s (MB = 10^6 bytes)"),
            ("sim:link=850MB", "sim: bad link '850MB': expected a rate from 1MB/s to 1TB/s, like 850MB/s (MB = 10^6 bytes)"),
            ("sim:throttle_factor=1", "sim: bad throttle_factor '1': expected a slowdown from 2 to 1000"),
            ("sim:read_power=0", "sim: bad read_power '0': expected a power in W from above 0 to 100, like 5.5"),
            ("sim:peak_power=200", "sim: bad peak_power '200': expected a power in W from above 0 to 100, like 8.25"),
            ("sim:write_power=x", "sim: bad write_power 'x': expected a power in W from above 0 to 100, like 7.2"),
            ("sim:write_cache=big", "sim: bad write_cache 'big': expected none or volatile"),
            ("sim:write_cache_size=2T", "sim: bad write_cache_size '2T': expected a size from 4K to 1T, like 64M"),
            ("sim:flush=never", "sim: bad flush 'never': expected honest, delayed or ignored"),
            ("sim:power_cut=0", "sim: bad power_cut '0': expected a virtual time above 0: a duration like 30 (seconds), 500ms, 10s, 5m or 1h"),
            ("sim:seed=x", "sim: bad seed 'x': expected a whole number like 42"),
            ("sim:read_power=0.3", "sim: bad read_power '0.3': expected a power above idle_power (0.4 W)"),
            ("sim:write_power=0.4", "sim: bad write_power '0.4': expected a power above idle_power (0.4 W)"),
            ("sim:peak_power=0.2", "sim: bad peak_power '0.2': expected a power above idle_power (0.4 W)"),
            ("sim:release_temp=80", "sim: bad release_temp '80': expected a temperature below throttle_temp (75)"),
            ("sim:nvme-tlc,capacity=8G,op=x", "sim: bad op 'x': expected a percentage like 7% or a fraction from 0 to 1 like 0.07 (a bare 3 is not taken for 300%)"),
        ] {
            assert_eq!(SimConfig::parse(spec).unwrap_err(), refusal, "{spec}");
            assert!(!refusal.contains('\n'));
        }
    }

    /// NAND timings given explicitly win over a cell's defaults whether they come before
    /// or after `cell=`; without `op=` a drive too small for 7 % gets the least that
    /// holds its GC reserve, with it exactly what was asked.
    #[test]
    fn timings_win_over_the_cell_either_way_and_op_defaults_to_what_fits() {
        for spec in ["sim:tprog=3ms,cell=qlc", "sim:cell=qlc,tprog=3ms"] {
            let c = SimConfig::parse(spec).unwrap();
            let (tr, _, te) = Cell::Qlc.default_times_ns();
            assert_eq!(
                (c.tread_ns, c.tprog_ns, c.terase_ns),
                (tr, 3_000_000, te),
                "{spec}"
            );
        }
        let c = SimConfig::parse("sim:capacity=64M").unwrap();
        assert_eq!(c.op_percent, c.least_op_percent());
        assert!(c.op_percent > 7.0, "{}", c.op_percent);
        assert_eq!(
            SimConfig::parse("sim:capacity=64M,op=7%")
                .unwrap()
                .op_percent,
            7.0
        );
        assert_eq!(
            SimConfig::parse("sim:op=7%,capacity=64M")
                .unwrap()
                .op_percent,
            7.0
        );
        assert_eq!(SimConfig::parse(" sim: , ").unwrap(), SimConfig::generic());
    }
}
