//! The simulated drive: FTL + SLC cache + NAND timing + host link + thermal model, driven
//! through `drivelab_engine::model::DeviceModel`.
//!
//! With `slc=dynamic` the cache is not a fixed size: it is created from the free space
//! whenever it is empty and enough is free, and a full one is folded beside the host's
//! writes (module `dynamic_slc`); the ground truth's `slc_write_phases` records, as
//! `[virtual ns, mode, host write commands before]`, when host writes went to SLC
//! (`slc`), to native blocks beside folding (`fold`), to native blocks alone (`native`),
//! and to native blocks with GC (`gc`); with `host_write_commands` (the count so far)
//! each phase's true rate follows.

use drivelab_engine::model::{DeviceModel, ModelInfo, SensorReading};
use drivelab_engine::op::{Dir, IoOp};
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashSet;

use serde_json::json;

use crate::analytic::{
    greedy_write_amplification, single_bottleneck_iops, steady_random_write_iops, WriteCosts,
};
use crate::config::SlcSize;
use crate::config::{
    FoldMode, GcMode, SimConfig, CHANNEL_BYTES_PER_S, DRAMLESS_MAP_CACHE_SPAN_BYTES,
    MAP_PAGE_SPAN_BYTES, PAGE_BYTES, READ_UNIT_BYTES, SLC_PROGRAM_UNIT_BYTES, SLC_READ_NS,
};
use crate::content::Content;
use crate::dynamic_slc::DynamicSlc;
use crate::ftl::{Ftl, NONE};
use crate::recent_wa::RecentWa;
use crate::resources::Resources;
use crate::slc::SlcCache;
use crate::thermal::{Energy, Thermal, NVME_ENERGY};
use crate::write_cache::CacheTracker;

/// GC pauses at least this long are reported as stalls.
pub const STALL_REPORT_NS: u64 = 100_000_000;
/// The drive starts background work (folding, idle GC) after this much idle time.
pub const IDLE_DELAY_NS: u64 = 5_000_000;
/// Thermal state is advanced at most this often during I/O.
const THERMAL_STEP_NS: u64 = 1_000_000;
/// Pages per NAND read unit (one 16 KiB plane page).
const READ_UNIT_PAGES: u32 = (READ_UNIT_BYTES / PAGE_BYTES) as u32;

/// Per-operation costs in ns.
#[derive(Debug, Clone, Copy)]
struct Costs {
    prog: u64,
    prog_slc: u64,
    read: u64,
    read_slc: u64,
    gc_read: u64,
    erase: u64,
    xfer: u64,
    link_fs_per_byte: u64,
    link_cmd: u64,
    latency: u64,
    unmapped_read: u64,
}

/// What the tiered GC is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GcPhase {
    /// No GC: the host has every die.
    Fast,
    /// Background GC beside the host, in its tier (0: the least urgent).
    Background(u8),
    /// Foreground refill; the host waits.
    Foreground,
}

impl GcPhase {
    fn name(self) -> &'static str {
        const TIERS: [&str; 8] = [
            "background",
            "background-2",
            "background-3",
            "background-4",
            "background-5",
            "background-6",
            "background-7",
            "background-8",
        ];
        match self {
            GcPhase::Fast => "fast",
            GcPhase::Background(tier) => TIERS[usize::from(tier).min(TIERS.len() - 1)],
            GcPhase::Foreground => "foreground",
        }
    }
}

/// Counters of host and NAND work.
#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    host_write_pages: u64,
    host_bytes_written: u64,
    host_bytes_read: u64,
    host_read_ops: u64,
    host_write_ops: u64,
    trimmed_pages: u64,
    slc_programs: u64,
    native_programs: u64,
    gc_copies: u64,
    folds: u64,
    erases: u64,
    nand_reads: u64,
    map_reads: u64,
    map_writes: u64,
    /// Bytes over the host link: read, written.
    link_bytes: [u64; 2],
    /// Die time spent idle in batch-GC stalls (dies free before the last one).
    stall_idle_die_ns: u64,
}

impl Stats {
    /// Data pages programmed into NAND: host, GC and fold programs (mapping pages apart).
    fn nand_data_pages(&self) -> u64 {
        self.slc_programs + self.native_programs + self.gc_copies + self.folds
    }
}

/// Direct-mapped cache of mapping pages (DRAM-less drives).
#[derive(Debug, Clone)]
struct MapCache {
    tags: Vec<u32>,
    dirty: Vec<bool>,
    mask: u32,
    shift: u32,
}

/// A simulated SSD in virtual time. Build one with [`crate::parse`] or
/// [`SimDevice::new`].
#[derive(Debug)]
pub struct SimDevice {
    cfg: SimConfig,
    spec: String,
    ftl: Ftl,
    res: Resources,
    c: Costs,
    rng: Xoshiro256PlusPlus,
    slc: SlcCache,
    map: Option<MapCache>,
    thermal: Option<Thermal>,
    energy: Energy,
    /// The time and work energy of the last `sensors` call: the power reported next is
    /// over the span since.
    power_mark: (u64, f64),
    /// The time and work energy the heat had reached at the last thermal update: work
    /// issued since is delivered as the device carries it out (see
    /// [`SimDevice::delivered_energy_j`]).
    heat_mark: (u64, f64),
    mult: u64,
    gc_low: u32,
    gc_high: u32,
    gate_ns: u64,
    now_ns: u64,
    stalls: Vec<(u64, u64)>,
    /// Tiered GC: the free-pool level below which background GC runs, the host pages
    /// between its victims, its tiers, the pages written since its last victim, and each
    /// phase's start (time, phase, host pages written before it).
    gc_bg: u32,
    bg_every: u32,
    bg_tiers: u32,
    bg_count: u32,
    phases: Vec<(u64, GcPhase, u64)>,
    /// Times the host waited for a full SLC cache to be folded (`FoldMode::Load`).
    fold_stalls: Vec<(u64, u64)>,
    /// When garbage collection first had to copy a valid page: the end of the
    /// fresh-out-of-box burst, when host writes start paying for write amplification.
    gc_first_copy_ns: Option<u64>,
    /// Host write commands the drive had taken by then: with the time the burst began,
    /// the burst's level.
    gc_first_copy_host_write_commands: Option<u64>,
    last_read_unit: Vec<u32>,
    host_die: u32,
    recent_wa: RecentWa,
    /// Completion time of the latest host write.
    last_write_done_ns: u64,
    /// The dynamic SLC cache's state (`slc=dynamic`).
    dyn_slc: Option<DynamicSlc>,
    /// The command being written bypasses the SLC cache (`slc_bypass`).
    bypass: bool,
    /// Bulk-only transport: when the previous command's status is back (the next one
    /// starts then).
    bot_free_ns: u64,
    /// The volatile write cache and power cut, when the drive has either.
    cache: Option<CacheTracker>,
    /// What the medium holds, when asked to keep it (`keep_content`).
    content: Option<Content>,
    /// A power cut has happened.
    power_was_cut: bool,
    /// Factors on the energy of reads and of writes (`read_power`, `write_power`).
    power_scale: [f64; 2],
    /// Power limit (`peak_power`): the time the work energy issued so far is paid for at
    /// the limit's rate above idle; no command completes before it.
    power_paid_ns: u64,
    st: Stats,
}

impl SimDevice {
    /// Build a drive from its parameters; fails (one line) when the spare area cannot hold
    /// the GC reserve.
    pub fn new(cfg: SimConfig) -> Result<SimDevice, String> {
        cfg.check_thermal()?;
        let user_pages = cfg.capacity_bytes / PAGE_BYTES;
        if cfg.capacity_bytes > crate::config::MAX_CAPACITY_BYTES {
            return Err("sim: bad capacity: expected a size from 64M to 2T".into());
        }
        let np = (cfg.block_bytes / PAGE_BYTES) as u32;
        if cfg.block_bytes < READ_UNIT_BYTES {
            return Err("sim: bad block: expected at least 64K".into());
        }
        let physical_pages = (user_pages as f64 * (1.0 + cfg.op_percent / 100.0)) as u64;
        let tables = crate::memory::tables_bytes(user_pages, physical_pages);
        crate::memory::within_limit(tables, &cfg)?;
        crate::memory::check(tables)?;
        let blocks = physical_pages / np as u64;
        let user_blocks = user_pages.div_ceil(np as u64);
        // Worst case one victim's copies fill every die's open block once; two victims'
        // worth of frontier blocks in reserve keeps the free pool from running dry.
        let gc_low = cfg.gc_low_blocks();
        let spare = blocks.saturating_sub(user_blocks + cfg.dies as u64 + 1);
        if spare < gc_low as u64 + 1 {
            return Err(format!(
                "sim: bad op '{}': the spare area ({spare} blocks of {} KiB) cannot hold the GC reserve \
                 of {} blocks; raise op or capacity, or lower dies or block",
                crate::units::format_percent(cfg.op_percent),
                cfg.block_bytes >> 10,
                gc_low + 1
            ));
        }
        let gc_high = match cfg.gc {
            GcMode::Incremental => gc_low,
            GcMode::Batch | GcMode::Tiered => {
                let room = (spare - gc_low as u64) / 2;
                gc_low + (cfg.gc_batch_blocks as u64).min(room).max(1) as u32
            }
        };
        let ftl = Ftl::new(user_pages as u32, blocks as u32, np, cfg.dies);
        let bg_tiers = cfg.gc_tiers.clamp(1, 8);
        let bg_every = if cfg.gc_bg_every_pages == 0 {
            np
        } else {
            cfg.gc_bg_every_pages
        };
        let (unit_prog, unit_bytes) = (cfg.tprog_ns, cfg.cell.program_unit_bytes());
        let link_bw = cfg.link_rate();
        let c = Costs {
            prog: (unit_prog * PAGE_BYTES / unit_bytes).max(1),
            prog_slc: cfg.tprog_slc_ns * PAGE_BYTES / SLC_PROGRAM_UNIT_BYTES,
            read: cfg.tread_ns,
            read_slc: SLC_READ_NS,
            // GC senses whole 16 KiB plane pages and moves every valid 4 KiB page of each.
            gc_read: cfg.tread_ns / READ_UNIT_PAGES as u64,
            erase: cfg.terase_ns,
            xfer: (PAGE_BYTES as f64 / CHANNEL_BYTES_PER_S * 1e9).round() as u64,
            link_fs_per_byte: (1e15 / link_bw).round() as u64,
            link_cmd: cfg.iface.cmd_ns(),
            latency: cfg.iface.latency_ns(),
            unmapped_read: 2_000,
        };
        let map = (!cfg.dram).then(|| {
            let slots = (DRAMLESS_MAP_CACHE_SPAN_BYTES / MAP_PAGE_SPAN_BYTES) as u32;
            MapCache {
                tags: vec![NONE; slots as usize],
                dirty: vec![false; slots as usize],
                mask: slots - 1,
                shift: (MAP_PAGE_SPAN_BYTES / PAGE_BYTES).trailing_zeros(),
            }
        });
        let dynamic = cfg.slc == SlcSize::Dynamic;
        let slc = if dynamic {
            SlcCache::dynamic(blocks * np as u64)
        } else {
            SlcCache::new(cfg.slc_bytes() / PAGE_BYTES, blocks * np as u64)
        };
        let dyn_slc = dynamic.then(|| {
            DynamicSlc::new(
                cfg.cell.bits(),
                cfg.slc_min_bytes / PAGE_BYTES,
                cfg.fold_every,
            )
        });
        let cache = CacheTracker::new(
            cfg.write_cache,
            cfg.write_cache_bytes,
            cfg.flush,
            cfg.power_cut_ns,
        );
        Ok(SimDevice {
            spec: cfg.to_spec(),
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            thermal: cfg.thermal.then(|| match cfg.start_celsius {
                Some(t0) => Thermal::starting_at(cfg.thermal_params, t0),
                None => Thermal::new(cfg.thermal_params),
            }),
            energy: NVME_ENERGY,
            power_mark: (0, 0.0),
            heat_mark: (0, 0.0),
            res: Resources::new(cfg.dies, cfg.channels),
            last_read_unit: vec![NONE; cfg.dies as usize],
            host_die: 0,
            recent_wa: RecentWa::new(user_pages),
            last_write_done_ns: 0,
            cfg,
            ftl,
            c,
            slc,
            map,
            mult: 1,
            gc_low,
            gc_high,
            gate_ns: 0,
            now_ns: 0,
            stalls: Vec::new(),
            fold_stalls: Vec::new(),
            gc_bg: gc_low + (gc_high - gc_low) / 2,
            bg_every,
            bg_tiers,
            bg_count: 0,
            phases: Vec::new(),
            gc_first_copy_ns: None,
            gc_first_copy_host_write_commands: None,
            dyn_slc,
            bypass: false,
            bot_free_ns: 0,
            cache,
            content: None,
            power_was_cut: false,
            power_scale: [1.0, 1.0],
            power_paid_ns: 0,
            st: Stats::default(),
        }
        .calibrated())
    }

    /// The parameters this drive was built from.
    /// The time of the power cut still to come (`power_cut`), if any.
    pub fn power_cut_pending_ns(&self) -> Option<u64> {
        self.cfg.power_cut_ns.filter(|_| !self.power_was_cut)
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Check the FTL's tables against each other (O(capacity); for tests).
    pub fn check_invariants(&mut self) -> Result<(), String> {
        self.flush();
        self.ftl.check_invariants()
    }

    /// Apply the FTL's deferred map updates; stale pages leave the SLC pending set.
    #[inline]
    fn flush(&mut self) {
        if self.ftl.has_deferred() {
            let slc = &mut self.slc;
            self.ftl.flush(|old| {
                slc.take(old);
            });
        }
    }

    /// Logical pages currently mapped (written and not trimmed).
    pub fn mapped_pages(&mut self) -> u64 {
        self.flush();
        self.ftl.mapped_pages()
    }

    /// SLC cache pages in use.
    pub fn slc_used_pages(&self) -> u64 {
        self.slc.used()
    }

    #[inline]
    fn jitter(&mut self, cost: u64) -> u64 {
        // Uniform in [-1/16, +1/16) of the cost: NAND timing varies from op to op.
        let span = cost >> 3;
        cost - (span >> 1) + (((self.rng.next_u64() >> 32) * span) >> 32)
    }

    fn energy_j(&self) -> f64 {
        let s = &self.st;
        let e = &self.energy;
        let read = s.link_bytes[0] as f64 * e.link_per_byte_j
            + (s.nand_reads + s.map_reads) as f64 * e.read_per_page_j;
        let write = s.link_bytes[1] as f64 * e.link_per_byte_j
            + s.slc_programs as f64 * e.slc_program_per_page_j
            + (s.native_programs + s.gc_copies + s.folds + s.map_writes) as f64
                * e.program_per_page_j
            + s.erases as f64 * e.erase_j;
        read * self.power_scale[0] + write * self.power_scale[1]
    }

    /// Work energy per byte (J) and rate (bytes/s) of a sustained sequential read and
    /// write (into the SLC cache when the drive has one), unscaled.
    fn sequential_work(&self) -> [(f64, f64); 2] {
        let e = &self.energy;
        let slc = self.dyn_slc.is_some() || self.cfg.slc_bytes() > 0;
        let prog = if slc {
            e.slc_program_per_page_j
        } else {
            e.program_per_page_j
        };
        let read_rate = (self.cfg.dies as f64 * READ_UNIT_BYTES as f64 * 1e9 / self.c.read as f64)
            .min(self.cfg.channels as f64 * CHANNEL_BYTES_PER_S)
            .min(self.cfg.link_rate());
        [
            (
                e.link_per_byte_j + e.read_per_page_j / READ_UNIT_BYTES as f64,
                read_rate,
            ),
            (
                e.link_per_byte_j + prog / PAGE_BYTES as f64,
                self.seq_write_rate(slc),
            ),
        ]
    }

    /// Scale the energies of reads and writes so that a sustained sequential read or
    /// write draws `read_power` / `write_power` in all (idle power included).
    fn calibrated(mut self) -> SimDevice {
        let idle = self.cfg.thermal_params.idle_w;
        let work = self.sequential_work();
        for (i, w) in [self.cfg.read_power_w, self.cfg.write_power_w]
            .into_iter()
            .enumerate()
        {
            if let Some(w) = w {
                let (per_byte, rate) = work[i];
                self.power_scale[i] = (w - idle) / (per_byte * rate);
            }
        }
        self
    }

    /// Total power (W) of a sustained sequential read and write, as the model draws them.
    fn sequential_power_w(&self) -> [f64; 2] {
        let idle = self.cfg.thermal_params.idle_w;
        let work = self.sequential_work();
        [0, 1].map(|i| idle + work[i].0 * work[i].1 * self.power_scale[i])
    }

    /// Energy used from virtual time 0 to `at_ns`: idle power all along plus the work
    /// done (what the `power` readings add up to).
    fn total_energy_j(&self, at_ns: u64) -> f64 {
        self.cfg.thermal_params.idle_w * at_ns as f64 * 1e-9 + self.delivered_energy_j(at_ns)
    }

    /// Work energy delivered by `t`: the work issued is charged when it is done, not when
    /// it is queued. Work issued since the last thermal update is spread evenly from
    /// that update to the time the device is busy until (a deep queue of large writes
    /// is hours of NAND work issued at once: charged at once, it would be a heat pulse
    /// of hundreds of watts the drive never dissipates).
    fn delivered_energy_j(&self, t: u64) -> f64 {
        let issued = self.energy_j();
        let (t0, e0) = self.heat_mark;
        let until = self
            .res
            .busy_until()
            .max(self.res.all_dies_free_at())
            .max(self.power_paid_ns);
        if t >= until || issued <= e0 {
            issued
        } else if t <= t0 {
            e0
        } else {
            e0 + (issued - e0) * (t - t0) as f64 / (until - t0) as f64
        }
    }

    /// [`SimDevice::delivered_energy_j`] at `t`, kept as delivered: later calls count
    /// from here, so work queued after `t` never makes the energy seen go back.
    fn deliver_to(&mut self, t: u64) -> f64 {
        let energy = self.delivered_energy_j(t);
        if t >= self.heat_mark.0 {
            self.heat_mark = (t, energy);
        }
        energy
    }

    fn thermal_to(&mut self, t: u64) {
        let energy = self.deliver_to(t);
        if let Some(th) = &mut self.thermal {
            th.update(t, energy);
            self.mult = if th.throttled() {
                u64::from(self.cfg.throttle_factor)
            } else {
                1
            };
        }
    }

    /// The power was cut: the medium keeps only what was durable. A page left with no
    /// write is unmapped (its data was never on NAND).
    fn power_cut(&mut self, lost: &HashSet<u64>) {
        self.power_was_cut = true;
        let Some(content) = &mut self.content else {
            return;
        };
        let emptied = content.power_cut(lost);
        self.flush();
        for lpn in emptied {
            let old = self.ftl.trim(lpn);
            if old != NONE {
                self.slc.take(old);
            }
        }
    }

    /// Bring clocks, background work and temperature up to `t` before a command.
    #[inline]
    fn arrive(&mut self, t: u64) {
        if t > self.now_ns {
            self.now_ns = t;
        }
        if let Some(lost) = self.cache.as_mut().and_then(|c| c.power_cut_due(t)) {
            self.power_cut(&lost);
        }
        let idle_from = self.res.busy_until() + IDLE_DELAY_NS;
        if t > idle_from {
            if let Some(c) = &mut self.cache {
                c.drain(idle_from);
            }
            self.background(idle_from, t);
        } else if self.cfg.fold == FoldMode::Load {
            self.fold_on_free_dies(t);
        }
        if let Some(th) = &self.thermal {
            if t >= th.last_ns() + THERMAL_STEP_NS {
                self.thermal_to(t);
            }
        }
    }

    /// Idle work between `from` and `until`: batch-GC refill, then SLC folding.
    fn background(&mut self, from: u64, until: u64) {
        self.flush();
        if self.cfg.gc != GcMode::Incremental {
            while self.ftl.free_blocks() < self.gc_high
                && self.res.busy_until().max(from) < until
                && (self.cfg.peak_power_w.is_none() || self.power_paid_ns.max(from) < until)
            {
                let before = self.energy_if_limited();
                if !self.collect_one(from) {
                    break;
                }
                self.pay_power(from, before);
            }
        }
        while let Some(ppn) = self.slc.oldest() {
            if self.slc.is_pending(ppn) {
                let d = self.ftl.die_of_page(ppn);
                // Under a power limit, idle folding is paid for at its rate too: it stops
                // where the energy it may draw before `until` runs out.
                let paid = self.power_paid_ns.max(from);
                if self.res.die_free_at(d).max(from) >= until
                    || (self.cfg.peak_power_w.is_some() && paid >= until)
                {
                    break;
                }
            }
            // A fold draws power like a host write (it is paid for by the command
            // when it happens inside one).
            let before = self.energy_if_limited();
            self.fold_oldest(from);
            self.pay_power(from, before);
        }
    }

    /// Fold one SLC page (the oldest slot, if still pending) on its die from `from` on;
    /// frees the slot. Returns whether there was a slot.
    fn fold_oldest(&mut self, from: u64) -> bool {
        let Some(ppn) = self.slc.oldest() else {
            return false;
        };
        if self.slc.take(ppn) {
            let d = self.ftl.die_of_page(ppn);
            let r = self
                .res
                .die(d, from, self.c.read_slc / READ_UNIT_PAGES as u64);
            self.res.die(d, r, self.c.prog * self.mult);
            self.last_read_unit[d as usize] = NONE;
            self.st.folds += 1;
            self.st.nand_reads += 1;
        }
        self.slc.pop_oldest();
        true
    }

    /// Folding under load: fold the oldest SLC pages while their dies are free before
    /// `t` (a die busy with host writes stops it until the next command).
    fn fold_on_free_dies(&mut self, t: u64) {
        self.flush();
        while let Some(ppn) = self.slc.oldest() {
            if self.slc.is_pending(ppn) {
                let d = self.ftl.die_of_page(ppn);
                let free = self.res.die_free_at(d);
                if free >= t {
                    break;
                }
                let before = self.energy_if_limited();
                self.fold_oldest(free);
                self.pay_power(free, before);
            } else {
                self.slc.pop_oldest();
            }
        }
    }

    /// The SLC cache is full under `FoldMode::Load`: the host waits while `fold_batch`
    /// bytes of the oldest SLC data are folded. Returns when host writes may go on.
    fn fold_stall(&mut self, t: u64) -> u64 {
        self.flush();
        let pages = (self.cfg.fold_batch_bytes / PAGE_BYTES).max(1);
        for _ in 0..pages {
            if !self.fold_oldest(t) {
                break;
            }
        }
        let end = self.res.all_dies_free_at().max(t);
        self.fold_stalls.push((t, end));
        self.gate_ns = self.gate_ns.max(end);
        end
    }

    /// Mapping-table access on a DRAM-less drive: a miss reads the mapping page (and
    /// writes back the dirty page it evicts). Returns when the mapping is known.
    #[inline]
    fn map_access(&mut self, lpn: u32, t: u64, write: bool) -> u64 {
        let Some(m) = &mut self.map else { return t };
        let tag = lpn >> m.shift;
        let slot = (tag & m.mask) as usize;
        if m.tags[slot] == tag {
            m.dirty[slot] |= write;
            return t;
        }
        let evict_dirty = m.dirty[slot];
        m.tags[slot] = tag;
        m.dirty[slot] = write;
        let d = tag % self.cfg.dies;
        if evict_dirty {
            self.res.die(d, t, self.c.prog * self.mult);
            self.st.map_writes += 1;
        }
        self.st.map_reads += 1;
        self.last_read_unit[d as usize] = NONE;
        self.res.die_suspend(d, t, self.c.read * self.mult)
    }

    /// Collect one greedy victim with its work starting no earlier than `t`.
    fn collect_one(&mut self, t: u64) -> bool {
        let Some(victim) = self.ftl.gc_begin() else {
            return false;
        };
        let vd = self.ftl.die_of_block(victim);
        let m = self.mult;
        let mut read_ns = 0;
        loop {
            // Moved pages go, a read unit at a time, to whichever die is free soonest; the
            // unit's transfer and program are charged together.
            let dd = self.res.least_busy_die();
            let mut moved = 0;
            while moved < READ_UNIT_PAGES {
                // GC logs its own map updates sequentially: no mapping-page misses.
                let Some((src, _dst, _lpn)) = self.ftl.gc_step(dd) else {
                    break;
                };
                moved += 1;
                if self.gc_first_copy_ns.is_none() {
                    self.gc_first_copy_ns = Some(t);
                    self.gc_first_copy_host_write_commands = Some(self.st.host_write_ops);
                }
                read_ns += if self.slc.take(src) {
                    self.c.read_slc / READ_UNIT_PAGES as u64
                } else {
                    self.c.gc_read
                };
            }
            if moved == 0 {
                break;
            }
            let ct = self.res.chan(dd, t, self.c.xfer * moved as u64);
            self.res.die(dd, ct, self.c.prog * moved as u64 * m);
        }
        // Sensing the victim's pages, then erasing it, on its own die.
        let d = self.ftl.gc_finish();
        self.res.die(d, t, read_ns * m + self.c.erase * m);
        self.last_read_unit[vd as usize] = NONE;
        self.st.erases += 1;
        true
    }

    /// Foreground GC when the free pool is low; returns when host work may proceed.
    fn foreground_gc(&mut self, t: u64) -> u64 {
        self.flush();
        if let Some(d) = &mut self.dyn_slc {
            d.gc_ran = true;
        }
        let before = self.ftl_moved();
        match self.cfg.gc {
            GcMode::Incremental => {
                while self.ftl.free_blocks() < self.gc_low {
                    if !self.collect_one(t) {
                        break;
                    }
                }
                self.account_gc(before);
                t
            }
            GcMode::Batch | GcMode::Tiered => {
                while self.ftl.free_blocks() < self.gc_high {
                    if !self.collect_one(t) {
                        break;
                    }
                }
                self.account_gc(before);
                let end = self.res.all_dies_free_at().max(t);
                // Dies done before the last one idle until the host may write again.
                self.st.stall_idle_die_ns += (0..self.cfg.dies)
                    .map(|d| end - self.res.die_free_at(d).clamp(t, end))
                    .sum::<u64>();
                if end - t >= STALL_REPORT_NS {
                    self.stalls.push((t, end));
                }
                self.gate_ns = end;
                if self.cfg.gc == GcMode::Tiered {
                    self.phase(t, GcPhase::Foreground);
                    self.phase(end, GcPhase::Fast);
                }
                end
            }
        }
    }

    /// Background GC of the tiered mode: below half of the batch reserve, one victim
    /// every `gc_bg_every` host pages beside the host's writes, twice as often in each
    /// deeper tier of the band down to the foreground reserve (`gc_tiers`).
    fn background_gc(&mut self, t: u64) {
        let depth = u64::from(self.gc_bg - self.ftl.free_blocks().min(self.gc_bg));
        let band = u64::from(self.gc_bg - self.gc_low) + 1;
        let tier =
            (depth * u64::from(self.bg_tiers) / band).min(u64::from(self.bg_tiers) - 1) as u32;
        self.phase(t, GcPhase::Background(tier as u8));
        self.bg_count += 1;
        if self.bg_count >= (self.bg_every >> tier).max(1) {
            self.bg_count = 0;
            self.flush();
            // Host writes beside GC copies: the dynamic cache's `gc` mode, as under a
            // foreground refill.
            if let Some(d) = &mut self.dyn_slc {
                d.gc_ran = true;
            }
            let before = self.ftl_moved();
            self.collect_one(t);
            self.account_gc(before);
        }
    }

    /// Record the tiered GC's phase from `t` on (when it changes).
    fn phase(&mut self, t: u64, p: GcPhase) {
        if self.phases.last().is_none_or(|&(_, last, _)| last != p) {
            self.phases.push((t, p, self.st.host_write_pages));
        }
    }

    fn ftl_moved(&self) -> u64 {
        self.ftl.moved_pages()
    }

    fn account_gc(&mut self, before: u64) {
        let moved = self.ftl.moved_pages() - before;
        self.st.gc_copies += moved;
        self.st.nand_reads += moved;
    }

    /// One host page write starting at `t` (`partial`: the command covers only part of
    /// the page, so its old contents are read first; `new_unit`: start a new read unit on
    /// the die free soonest, else continue on the previous page's die). Returns the
    /// program's end.
    #[inline]
    fn write_page(&mut self, lpn: u32, mut t: u64, partial: bool, new_unit: bool) -> u64 {
        if self.ftl.free_blocks() < self.gc_low {
            t = self.foreground_gc(t);
        } else if self.cfg.gc == GcMode::Tiered {
            if self.ftl.free_blocks() <= self.gc_bg {
                self.background_gc(t);
            } else {
                self.phase(t, GcPhase::Fast);
            }
        }
        if new_unit {
            self.host_die = self.res.least_busy_die();
        }
        if self.map.is_some() {
            t = self.map_access(lpn, t, true);
        }
        if partial {
            self.flush();
            let old = self.ftl.lookup(lpn);
            if old != NONE {
                let d = self.ftl.die_of_page(old);
                let rc = if self.slc.is_pending(old) {
                    self.c.read_slc
                } else {
                    self.c.read
                };
                t = self.res.die(d, t, rc * self.mult);
                self.st.nand_reads += 1;
            }
        }
        if self.dyn_slc.is_some() {
            self.dynamic_slc_step(t);
        } else if self.cfg.fold == FoldMode::Load && !self.slc.has_room() && self.slc.used() > 0 {
            t = self.fold_stall(t);
        }
        let to_slc = self.slc.has_room() && !self.bypass;
        let d = self.host_die;
        let ppn = self.ftl.write_deferred(lpn, d);
        if self.ftl.needs_flush() {
            self.flush();
        }
        let cost = if to_slc {
            self.slc.push(ppn);
            self.st.slc_programs += 1;
            self.c.prog_slc
        } else {
            self.st.native_programs += 1;
            self.c.prog
        };
        let cost = self.jitter(cost * self.mult);
        self.last_read_unit[d as usize] = NONE;
        let ct = self.res.chan(d, t, self.c.xfer);
        self.res.die(d, ct, cost)
    }

    /// The dynamic SLC cache before one host page at `t` (see `dynamic_slc`): a full
    /// cache starts emptying, an emptying one folds its share, an empty one is created
    /// again when the free space allows.
    fn dynamic_slc_step(&mut self, t: u64) {
        let Some(mut d) = self.dyn_slc.take() else {
            return;
        };
        let np = self.ftl.pages_per_block() as i64;
        let reserve = (self.gc_high + self.cfg.dies) as i64 * np;
        // Cells free, counting each SLC slot at its SLC size.
        let bits = d.bits as i64;
        let effective =
            |s: &Self| s.ftl.free_blocks() as i64 * np - (bits - 1) * s.slc.used() as i64;
        if d.armed {
            // The cache is whatever SLC room the free space holds now (writes that
            // bypass it use up space too).
            let room = ((effective(self) - reserve).max(0) as u64) / d.bits;
            if room == 0 {
                d.armed = false;
                d.emptying = true;
                self.slc.set_capacity(0);
            } else {
                self.slc.set_capacity(self.slc.used() + room);
            }
        }
        if d.emptying {
            let due = d.folds_due();
            if due > 0 {
                self.flush();
            }
            for _ in 0..due {
                self.drop_folded_heads();
                self.fold_oldest(t);
            }
            self.drop_folded_heads();
            d.emptying = self.slc.used() > 0;
        }
        if !d.armed && !d.emptying {
            if let Some(pages) = d.cache_pages(effective(self), reserve) {
                self.slc.set_capacity(pages + self.slc.used());
                d.armed = true;
                d.gc_ran = false;
            }
        }
        // The command in flight is counted already: it belongs to the mode it starts in.
        d.note(t, self.st.host_write_ops - 1);
        self.dyn_slc = Some(d);
    }

    /// Drop the cache's oldest entries that are no longer pending (overwritten or
    /// folded already), so that its head is the next page to fold.
    fn drop_folded_heads(&mut self) {
        while self.slc.oldest().is_some_and(|p| !self.slc.is_pending(p)) {
            self.slc.pop_oldest();
        }
    }

    /// One host page read at `t`; returns when its data is in the controller.
    #[inline]
    fn read_page(&mut self, lpn: u32, mut t: u64) -> u64 {
        let ppn = self.ftl.lookup(lpn);
        if ppn == NONE {
            return t + self.c.unmapped_read;
        }
        if self.map.is_some() {
            t = self.map_access(lpn, t, false);
        }
        let d = self.ftl.die_of_page(ppn);
        let unit = ppn / READ_UNIT_PAGES;
        let cost = if self.last_read_unit[d as usize] == unit {
            0
        } else {
            self.last_read_unit[d as usize] = unit;
            self.st.nand_reads += 1;
            let base = if self.slc.is_pending(ppn) {
                self.c.read_slc
            } else {
                self.c.read
            };
            self.jitter(base * self.mult)
        };
        let e = self.res.die_read(d, t, cost);
        self.res.chan(d, e, self.c.xfer)
    }

    #[inline]
    fn link_cost(&self, bytes: u64) -> u64 {
        (self.c.link_cmd + bytes * self.c.link_fs_per_byte / 1_000_000) * self.mult
    }

    /// Ground-truth numbers derived from the parameters (see `analytic`): the effective
    /// spare ratio α, the closed form's steady-state write amplification, the per-page
    /// costs that turn a write amplification into a random-write rate, and the mapping
    /// cache's miss ratio.
    fn analytic(&self) -> (f64, f64, WriteCosts, f64) {
        let np = self.ftl.pages_per_block() as f64;
        // Blocks that hold no data on average: the free pool (between the GC watermarks)
        // and the unwritten half of each die's open block.
        let reserve = match self.cfg.gc {
            GcMode::Incremental => self.gc_low as f64 - 0.5,
            GcMode::Batch | GcMode::Tiered => (self.gc_low + self.gc_high) as f64 / 2.0,
        } + self.cfg.dies as f64 / 2.0;
        let alpha = (self.ftl.blocks() as f64 - reserve) * np / self.ftl.user_pages() as f64;
        let wa = greedy_write_amplification(alpha);
        let miss_prob = if self.map.is_some() {
            1.0 - (DRAMLESS_MAP_CACHE_SPAN_BYTES as f64 / self.cfg.capacity_bytes as f64).min(1.0)
        } else {
            0.0
        };
        let costs = WriteCosts {
            prog_ns: self.c.prog as f64,
            gc_read_ns: self.c.gc_read as f64,
            erase_ns: self.c.erase as f64,
            map_miss_ns: (self.c.read + self.c.prog) as f64,
            map_miss_prob: miss_prob,
            xfer_ns: self.c.xfer as f64,
            link_ns: self.link_cost_unthrottled(PAGE_BYTES) as f64,
            pages_per_block: np,
            dies: self.cfg.dies as f64,
            channels: self.cfg.channels as f64,
        };
        (alpha, wa, costs, miss_prob)
    }

    fn link_cost_unthrottled(&self, bytes: u64) -> u64 {
        self.c.link_cmd + bytes * self.c.link_fs_per_byte / 1_000_000
    }
}

impl DeviceModel for SimDevice {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            capacity_bytes: self.cfg.capacity_bytes,
            logical_sector_bytes: 512,
            physical_sector_bytes: PAGE_BYTES as u32,
            model: format!("drivelab-sim {}", self.cfg.preset.unwrap_or("generic")),
            spec: self.spec.clone(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn advance_to(&mut self, until_ns: u64) {
        if until_ns <= self.now_ns {
            return;
        }
        self.arrive(until_ns);
        if self.thermal.is_some() {
            self.thermal_to(until_ns);
        }
    }

    fn submit(&mut self, op: IoOp, at_ns: u64) -> u64 {
        let t = self.command_start(at_ns);
        // (The work's energy is only needed under a power limit: a hot path.)
        let before = self.energy_if_limited();
        let end = self.carry_out(op, t);
        let end = self.power_limited(t, before, end);
        self.command_end(end)
    }

    fn flush_cache(&mut self, at_ns: u64) -> u64 {
        let t = self.command_start(at_ns);
        let done = match &mut self.cache {
            Some(c) => c.flush(t, self.c.latency),
            None => t,
        };
        self.command_end(done + self.c.latency)
    }

    /// Keep the data written from now on (held in memory: meant for small tests of
    /// what a drive keeps): reads return it, and a power cut takes back what it lost, so
    /// a lost write reads as the page's older durable write, or zeros when it had none.
    fn keep_content(&mut self) -> bool {
        self.content.get_or_insert_with(Content::default);
        true
    }

    fn write_data(&mut self, offset: u64, data: &[u8], at_ns: u64) -> u64 {
        let op = IoOp {
            dir: Dir::Write,
            offset,
            len: data.len() as u32,
        };
        // A cut due by now happens before this write (whose pages are numbered next).
        if let Some(lost) = self.cache.as_mut().and_then(|c| c.power_cut_due(at_ns)) {
            self.power_cut(&lost);
        }
        let seq = self.cache.as_ref().map_or(0, CacheTracker::next_seq);
        let done = self.submit(op, at_ns);
        if let Some(c) = &mut self.content {
            c.write(offset, data, seq);
        }
        done
    }

    fn read_data(&mut self, offset: u64, buf: &mut [u8], at_ns: u64) -> u64 {
        let op = IoOp {
            dir: Dir::Read,
            offset,
            len: buf.len() as u32,
        };
        let done = self.submit(op, at_ns);
        match &self.content {
            Some(c) => c.read(offset, buf),
            None => buf.fill(0),
        }
        done
    }

    fn power_was_cut(&self) -> bool {
        self.power_was_cut
    }

    fn discard(&mut self, offset: u64, len: u64, at_ns: u64) -> u64 {
        let t = self.command_start(at_ns);
        self.flush();
        let t = self.res.link(1, t, self.link_cost(0));
        let first = offset.div_ceil(PAGE_BYTES);
        let end = (offset + len) / PAGE_BYTES;
        let mut pages = 0u64;
        for lpn in first..end {
            let lpn = lpn as u32;
            if self.map.is_some() {
                self.map_access(lpn, t, true);
            }
            let old = self.ftl.trim(lpn);
            if old != NONE {
                self.slc.take(old);
                pages += 1;
            }
            if let Some(c) = &mut self.content {
                c.discard(lpn);
            }
        }
        self.st.trimmed_pages += pages;
        // The controller updates its map at about 1 ns per page.
        self.command_end(t + self.c.latency + end.saturating_sub(first))
    }

    /// Temperature and the seconds throttled so far (with the thermal model), and power:
    /// idle power plus the work energy since the previous call over the time since,
    /// stamped at that call's time (the span it describes). The powers add up exactly to
    /// the ground truth's `energy_j` over the same time.
    fn sensors(&mut self, at_ns: u64) -> Vec<SensorReading> {
        let work = self.deliver_to(at_ns);
        let mut v = Vec::new();
        if let Some(th) = &self.thermal {
            let now = at_ns.max(th.last_ns());
            let t = th.temperature_at(now, work);
            v.push(SensorReading::new(
                "temperature",
                "celsius",
                Some(t),
                at_ns,
                "model",
            ));
            let throttled: u64 = th.intervals(now).iter().map(|(a, b)| b - a).sum();
            let s = Some(throttled as f64 / 1e9);
            v.push(SensorReading::new(
                "thermal_time_1",
                "seconds",
                s,
                at_ns,
                "model",
            ));
        }
        let (t0, e0) = self.power_mark;
        if at_ns > t0 {
            let p = self.cfg.thermal_params.idle_w + (work - e0) / ((at_ns - t0) as f64 * 1e-9);
            v.push(SensorReading::new("power", "watt", Some(p), t0, "model"));
        }
        if at_ns >= t0 {
            self.power_mark = (at_ns, work);
        }
        v
    }

    /// Counters so far (host and NAND bytes, write amplification = NAND data page writes /
    /// host page writes), analytic steady-state values (`analytic` module docs), the write
    /// amplification over the last drive write (`recent_wa`) with the random-write rate the
    /// dies sustain at it (what a steady-state measurement should find; null where that
    /// closed form is not exact: batch GC, or a second resource over half busy), the host
    /// write commands per second the drive completed over its last drive write
    /// (`recent_host_write_iops_per_s`, exact for every configuration), the die time
    /// batch-GC stalls left idle over it, the thermal constants and start temperature, cache
    /// size, die count, `random_read_saturation_qd` (outstanding 4 KiB reads needed to
    /// keep the bottleneck — normally every die — busy: max IOPS × QD1 latency, Little's
    /// law; random die collisions make the measured curve approach the limit gradually
    /// above it), throttle intervals, GC stalls of at least `STALL_REPORT_NS`, and
    /// `gc_first_copy_at_ns`: when GC first had to copy a valid page (the end of the
    /// fresh-out-of-box burst). Also the link rate and whether commands queue, the throttle
    /// factor, the total power of sustained sequential reads and writes, the write cache
    /// and flush mode, and after a power cut its time and the blocks it lost by class
    /// (`write_cache` module).
    fn ground_truth(&self) -> serde_json::Value {
        let s = &self.st;
        let nand_data_pages = s.nand_data_pages();
        let nand_pages = nand_data_pages + s.map_writes;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let (alpha, wa_ss, costs, miss_prob) = self.analytic();
        let recent_wa = self.recent_wa.ratio(s.host_write_pages, nand_data_pages);
        let read_iops = (self.cfg.dies as f64 * 1e9 / self.c.read as f64)
            .min(self.cfg.channels as f64 * 1e9 / self.c.xfer as f64)
            .min(1e9 / self.link_cost_unthrottled(PAGE_BYTES) as f64);
        let qd1_read_ns =
            (self.c.read + self.c.xfer + self.link_cost_unthrottled(PAGE_BYTES) + self.c.latency)
                as f64;
        let pairs = |v: &[(u64, u64)]| v.iter().map(|&(a, b)| json!([a, b])).collect::<Vec<_>>();
        let throttle = self
            .thermal
            .as_ref()
            .map(|t| t.intervals(self.now_ns))
            .unwrap_or_default();
        let mut truth = json!({
            "model": format!("drivelab-sim {}", self.cfg.preset.unwrap_or("generic")),
            "spec": self.spec,
            "now_ns": self.now_ns,
            "user_capacity_bytes": self.cfg.capacity_bytes,
            "physical_capacity_bytes": self.ftl.blocks() as u64 * self.cfg.block_bytes,
            "erase_block_bytes": self.cfg.block_bytes,
            "effective_spare_ratio": alpha - 1.0,
            "host_written_bytes": s.host_bytes_written,
            "host_read_bytes": s.host_bytes_read,
            "host_written_pages": s.host_write_pages,
            "trimmed_bytes": s.trimmed_pages * PAGE_BYTES,
            "nand_written_bytes": nand_pages * PAGE_BYTES,
            "nand_data_written_bytes": nand_data_pages * PAGE_BYTES,
            "nand_slc_written_bytes": s.slc_programs * PAGE_BYTES,
            "nand_fold_written_bytes": s.folds * PAGE_BYTES,
            "nand_gc_written_bytes": s.gc_copies * PAGE_BYTES,
            "nand_map_written_bytes": s.map_writes * PAGE_BYTES,
            "nand_erase_count": s.erases,
            "write_amplification_ratio": ratio(nand_data_pages, s.host_write_pages),
            "write_amplification_with_metadata_ratio": ratio(nand_pages, s.host_write_pages),
            "steady_state_write_amplification_ratio": wa_ss,
            "steady_state_random_write_4k_qd32_iops_per_s": steady_random_write_iops(wa_ss, &costs),
            "map_cache_miss_ratio": miss_prob,
            "slc_cache_bytes": self.slc_capacity_bytes(),
            "slc_cache_used_bytes": self.slc.used() * PAGE_BYTES,
            "slc_cache_unfolded_bytes": self.slc.pending() * PAGE_BYTES,
            "slc_write_bytes_per_s": self.seq_write_rate(true),
            "native_write_bytes_per_s": self.seq_write_rate(false),
            "die_count": self.cfg.dies,
            "channel_count": self.cfg.channels,
            "random_read_4k_max_iops_per_s": read_iops,
            "random_read_qd1_latency_ns": qd1_read_ns,
            "random_read_saturation_qd": (read_iops * qd1_read_ns / 1e9).ceil() as u64,
            "thermal_model": self.thermal.is_some(),
            "max_temperature_celsius": self.thermal.as_ref().map(|t| t.max_c()),
            "throttled_now": self.thermal.as_ref().is_some_and(|t| t.throttled()),
            "throttle_intervals_ns": pairs(&throttle),
            "gc_stall_threshold_ns": STALL_REPORT_NS,
            "gc_stall_intervals_ns": pairs(&self.stalls),
            "gc_first_copy_at_ns": self.gc_first_copy_ns,
            "gc_first_copy_host_write_commands": self.gc_first_copy_host_write_commands,
        });
        // (Added apart: one `json!` this long exceeds the macro's recursion limit.)
        truth["recent_write_amplification_ratio"] = json!(recent_wa);
        truth["energy_j"] = json!(self.total_energy_j(self.now_ns));
        truth["idle_power_w"] = json!(self.cfg.thermal_params.idle_w);
        truth["gc_phases"] = json!(self
            .phases
            .iter()
            .map(|&(t, p, pages)| json!([t, p.name(), pages]))
            .collect::<Vec<_>>());
        truth["slc_fold_mode"] = json!(self.cfg.fold.name());
        truth["slc_dynamic"] = json!(self.dyn_slc.is_some());
        truth["slc_write_phases"] = json!(self
            .dyn_slc
            .iter()
            .flat_map(|d| d.phases.iter())
            .map(|&(t, m, ops)| json!([t, m.name(), ops]))
            .collect::<Vec<_>>());
        truth["host_write_commands"] = json!(s.host_write_ops);
        truth["slc_fold_batch_bytes"] = json!(self.cfg.fold_batch_bytes);
        truth["slc_fold_stall_intervals_ns"] = json!(pairs(&self.fold_stalls));
        if let Some(th) = &self.thermal {
            let p = &self.cfg.thermal_params;
            truth["thermal_ambient_celsius"] = json!(p.ambient_c);
            truth["thermal_start_celsius"] = json!(th.start_c());
            truth["thermal_resistance_c_per_w"] = json!(p.resistance_c_per_w);
            truth["thermal_time_constant_s"] = json!(p.tau_s);
            truth["thermal_idle_power_w"] = json!(p.idle_w);
            truth["throttle_celsius"] = json!(p.throttle_c);
            truth["throttle_release_celsius"] = json!(p.release_c);
            let now = self.now_ns.max(th.last_ns());
            truth["temperature_now_celsius"] =
                json!(th.temperature_at(now, self.delivered_energy_j(now)));
        }
        // The dies' budget at that WA, only where it is the rate: one resource alone
        // limits it (the closed form does not model two near-saturated resources in
        // series: a SATA link at 85 % behind the dies lost a quarter of their budget)
        // and GC never holds the host while dies idle (batch GC waits for the last die,
        // and the dies refill after it: 3-5 % under the budget). Null elsewhere;
        // `recent_host_write_iops_per_s` is exact everywhere.
        // Also null when the last drive write was no one steady state (its quarters'
        // WA differ by over 3 %: a window over a fill or SLC bursts reads 22 % to 161 %
        // over the steady rate measured after it), and with a dynamic SLC cache or a
        // volatile write cache.
        let own = self.recent_wa.host_ops_per_s(
            s.host_write_pages,
            s.host_write_ops,
            self.last_write_done_ns,
        );
        let closed_form_applies = self.cfg.gc == GcMode::Incremental
            && self.dyn_slc.is_none()
            && self.cache.as_ref().is_none_or(|c| !c.volatile())
            && self.recent_wa.steady(0.03);
        truth["random_write_4k_qd32_iops_at_recent_wa_per_s"] = json!(recent_wa
            .filter(|_| closed_form_applies)
            .and_then(|wa| single_bottleneck_iops(wa, &costs)));
        truth["recent_gc_stall_idle_die_ratio"] = json!(self.recent_wa.stall_idle_fraction(
            s.host_write_pages,
            s.stall_idle_die_ns,
            self.last_write_done_ns,
            self.cfg.dies,
        ));
        // What the drive completed: host write commands per second over its last drive
        // write, in virtual time (exact for every configuration).
        truth["recent_host_write_iops_per_s"] = json!(own);
        truth["link_bytes_per_s"] = json!(self.cfg.link_rate());
        truth["iface_queued"] = json!(self.cfg.iface.queued());
        truth["throttle_factor"] = json!(self.cfg.throttle_factor);
        let [read_w, write_w] = self.sequential_power_w();
        truth["sequential_read_power_w"] = json!(read_w);
        truth["sequential_write_power_w"] = json!(write_w);
        truth["peak_power_w"] = json!(self.cfg.peak_power_w);
        truth["write_cache"] = json!(self.cfg.write_cache.name());
        truth["write_cache_bytes"] = json!(self.cfg.write_cache_bytes);
        truth["flush_mode"] = json!(self.cfg.flush.name());
        match &self.cache {
            Some(c) => c.truth(&mut truth),
            None => truth["power_cut_at_ns"] = serde_json::Value::Null,
        }
        truth
    }
}

impl SimDevice {
    /// When a command arriving at `at_ns` starts: after a GC or fold stall that holds
    /// the host, and, over bulk-only transport, after the previous command's status.
    fn command_start(&mut self, at_ns: u64) -> u64 {
        self.arrive(at_ns);
        let t = at_ns.max(self.gate_ns);
        if self.cfg.iface.queued() {
            t
        } else {
            t.max(self.bot_free_ns)
        }
    }

    /// A command that completes at `end`: over bulk-only transport nothing else starts
    /// before then.
    fn command_end(&mut self, end: u64) -> u64 {
        if !self.cfg.iface.queued() {
            self.bot_free_ns = self.bot_free_ns.max(end);
        }
        end
    }

    /// A command started at `t` that issued work from energy `before` on and would
    /// complete at `end`: with a power limit, not before its work is paid for at the
    /// limit's rate above idle power.
    fn power_limited(&mut self, t: u64, before: f64, end: u64) -> u64 {
        match self.cfg.peak_power_w {
            Some(_) => end.max(self.pay_power(t, before)),
            None => end,
        }
    }

    /// The work energy issued so far, under a power limit (0 without one: the energy is
    /// only needed there, and host commands are a hot path).
    fn energy_if_limited(&self) -> f64 {
        self.cfg.peak_power_w.map_or(0.0, |_| self.energy_j())
    }

    /// Work issued since energy `before`, from `t` on, paid for at the power limit's
    /// rate above idle power (host commands, GC and folding alike); returns when all
    /// work so far is paid for (`t` without a limit).
    fn pay_power(&mut self, t: u64, before: f64) -> u64 {
        let Some(w) = self.cfg.peak_power_w else {
            return t;
        };
        let work_j = self.energy_j() - before;
        let ns = work_j / (w - self.cfg.thermal_params.idle_w) * 1e9;
        self.power_paid_ns = self.power_paid_ns.max(t) + ns.round() as u64;
        self.power_paid_ns
    }

    /// One read or write starting at `t`; returns when it completes.
    fn carry_out(&mut self, op: IoOp, t: u64) -> u64 {
        let len = op.len as u64;
        if len == 0 {
            return t + self.c.latency;
        }
        let first = (op.offset / PAGE_BYTES) as u32;
        let last = ((op.offset + len - 1) / PAGE_BYTES) as u32;
        self.st.link_bytes[op.dir.index()] += len;
        match op.dir {
            Dir::Write => {
                self.st.host_write_ops += 1;
                self.st.host_bytes_written += len;
                self.st.host_write_pages += (last - first + 1) as u64;
                self.bypass = self.cfg.slc_bypass_bytes > 0 && len >= self.cfg.slc_bypass_bytes;
                let t1 = self.res.link(1, t, self.link_cost(len));
                let head_partial = !op.offset.is_multiple_of(PAGE_BYTES);
                let tail_partial = !(op.offset + len).is_multiple_of(PAGE_BYTES);
                let mut done = t1;
                for lpn in first..=last {
                    let partial = (lpn == first && head_partial) || (lpn == last && tail_partial);
                    let new_unit = lpn == first || lpn % READ_UNIT_PAGES == 0;
                    done = done.max(self.write_page(lpn, t1, partial, new_unit));
                }
                let nand = self.st.nand_data_pages();
                let ack = match &mut self.cache {
                    Some(c) => c.write(first..=last, t1, done),
                    None => done,
                };
                let end = ack + self.c.latency;
                let at = (self.st.host_write_ops, end, self.st.stall_idle_die_ns);
                self.recent_wa.note_at(self.st.host_write_pages, nand, at);
                self.last_write_done_ns = self.last_write_done_ns.max(end);
                end
            }
            Dir::Read => {
                self.flush();
                self.st.host_read_ops += 1;
                self.st.host_bytes_read += len;
                let mut media = t;
                for lpn in first..=last {
                    media = media.max(self.read_page(lpn, t));
                }
                let dir = if self.cfg.iface.full_duplex() { 0 } else { 1 };
                self.res.link(dir, media, self.link_cost(len)) + self.c.latency
            }
        }
    }

    /// The static cache's size, or the dynamic cache's present size.
    fn slc_capacity_bytes(&self) -> u64 {
        match self.dyn_slc {
            Some(_) => self.slc.capacity() * PAGE_BYTES,
            None => self.cfg.slc_bytes(),
        }
    }

    /// Sequential-write rate of the media (SLC or native mode) or the link, whichever is
    /// lower, in bytes/s.
    fn seq_write_rate(&self, slc: bool) -> f64 {
        let per_page = if slc { self.c.prog_slc } else { self.c.prog } as f64;
        let media = self.cfg.dies as f64 * PAGE_BYTES as f64 * 1e9 / per_page;
        let chan = self.cfg.channels as f64 * PAGE_BYTES as f64 * 1e9 / self.c.xfer as f64;
        media.min(chan).min(self.cfg.iface.payload_bytes_per_s())
    }
}
