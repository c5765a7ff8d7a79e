//! Page-mapped flash translation layer: the logical→physical map at 4 KiB, erase blocks,
//! one open block (write frontier) per die, and greedy victim choice for garbage collection.
//!
//! Everything is a flat `Vec` indexed by page or block number (u32 entries), so one host
//! page write costs a handful of memory accesses. Blocks that are full ("closed") sit in
//! one doubly-linked list per valid-page count; the greedy victim (fewest valid pages) is
//! the head of the lowest non-empty list, found in O(1) amortized.
//!
//! This module knows nothing of time: the device charges NAND operations to dies.

use crate::table::Table;

/// "No page / no block" marker in the u32 tables.
pub const NONE: u32 = u32::MAX;

/// Host writes whose map update waits for a batch (see [`Ftl::write_deferred`]).
const DEFER_MAX: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    Open,
    Closed,
    Victim,
}

#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    block: u32,
    off: u32,
}

/// The FTL's tables. Physical page `ppn` is page `ppn % pages_per_block` of block
/// `ppn / pages_per_block`. `p2l[ppn]` records the logical page last programmed there;
/// it is valid only while `l2p` still points back at `ppn`.
#[derive(Debug)]
pub struct Ftl {
    shift: u32,
    np: u32,
    l2p: Table,
    p2l: Table,
    valid: Vec<u32>,
    state: Vec<State>,
    die_of: Vec<u32>,
    head: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    min_bucket: u32,
    closed: u32,
    free: Vec<u32>,
    open: Vec<OpenBlock>,
    mapped: u64,
    victim: u32,
    victim_off: u32,
    victim_left: u32,
    moved: u64,
    deferred: Vec<(u32, u32)>,
}

impl Ftl {
    /// `user_pages` logical pages over `blocks` erase blocks of `pages_per_block` pages (a
    /// power of two) on `dies` dies. The caller picks the die of every page it writes.
    pub fn new(user_pages: u32, blocks: u32, pages_per_block: u32, dies: u32) -> Ftl {
        assert!(pages_per_block.is_power_of_two());
        assert!(blocks > dies && dies > 0);
        assert!((blocks as u64) * (pages_per_block as u64) < NONE as u64);
        let nb = blocks as usize;
        let mut ftl = Ftl {
            shift: pages_per_block.trailing_zeros(),
            np: pages_per_block,
            l2p: Table::new(user_pages as usize, NONE),
            p2l: Table::new(nb * pages_per_block as usize, NONE),
            valid: vec![0; nb],
            state: vec![State::Free; nb],
            die_of: vec![0; nb],
            head: vec![NONE; pages_per_block as usize + 1],
            prev: vec![NONE; nb],
            next: vec![NONE; nb],
            min_bucket: pages_per_block,
            closed: 0,
            // Popped from the end: block 0 first.
            free: (0..blocks).rev().collect(),
            open: Vec::with_capacity(dies as usize),
            mapped: 0,
            victim: NONE,
            victim_off: 0,
            victim_left: 0,
            moved: 0,
            deferred: Vec::with_capacity(DEFER_MAX),
        };
        for d in 0..dies {
            let b = ftl.take_free(d);
            ftl.open.push(OpenBlock { block: b, off: 0 });
        }
        ftl
    }

    /// Pages per erase block.
    pub fn pages_per_block(&self) -> u32 {
        self.np
    }

    /// Number of erase blocks.
    pub fn blocks(&self) -> u32 {
        self.valid.len() as u32
    }

    /// Logical pages.
    pub fn user_pages(&self) -> u32 {
        self.l2p.len() as u32
    }

    /// Erased blocks ready for the frontier.
    #[inline]
    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
    }

    /// Logical pages that hold data.
    pub fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    /// Pages moved by GC so far.
    pub fn moved_pages(&self) -> u64 {
        self.moved
    }

    /// Physical page of `lpn`, or `NONE`.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> u32 {
        debug_assert!(self.deferred.is_empty());
        self.l2p.get(lpn as usize)
    }

    /// Die holding physical page `ppn`.
    #[inline]
    pub fn die_of_page(&self, ppn: u32) -> u32 {
        self.die_of[(ppn >> self.shift) as usize]
    }

    /// Die holding block `b`.
    #[inline]
    pub fn die_of_block(&self, b: u32) -> u32 {
        self.die_of[b as usize]
    }

    /// Valid pages in block `b`.
    pub fn valid_pages(&self, b: u32) -> u32 {
        self.valid[b as usize]
    }

    /// Write `lpn` at die `die`'s frontier now, but leave the forward-map update (and the
    /// invalidation of the old copy) for [`Ftl::flush`], which does a batch of them with
    /// overlapping cache misses. Until then `lookup`, `write`, `trim` and `gc_begin` must
    /// not be called; `needs_flush` says when the batch is full. Returns the new page.
    #[inline]
    pub fn write_deferred(&mut self, lpn: u32, die: u32) -> u32 {
        let ppn = self.place_unmapped(lpn, die);
        self.deferred.push((lpn, ppn));
        ppn
    }

    /// Whether deferred writes are waiting.
    #[inline]
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Whether the deferred batch is full.
    #[inline]
    pub fn needs_flush(&self) -> bool {
        self.deferred.len() >= DEFER_MAX
    }

    /// Apply the deferred writes in order; `on_old` gets every physical page they make
    /// stale.
    pub fn flush(&mut self, mut on_old: impl FnMut(u32)) {
        // Independent loads first, so the batch's cache misses overlap.
        let mut acc = 0u32;
        for &(lpn, _) in &self.deferred {
            acc ^= self.l2p.get(lpn as usize);
        }
        std::hint::black_box(acc);
        for i in 0..self.deferred.len() {
            let (lpn, ppn) = self.deferred[i];
            let old = self.l2p.get(lpn as usize);
            if old != NONE {
                self.invalidate(old);
                on_old(old);
            } else {
                self.mapped += 1;
            }
            self.l2p.set(lpn as usize, ppn);
        }
        self.deferred.clear();
    }

    /// Write `lpn` at die `die`'s frontier; returns (new physical page, old physical page
    /// or `NONE`).
    #[inline]
    pub fn write(&mut self, lpn: u32, die: u32) -> (u32, u32) {
        debug_assert!(self.deferred.is_empty());
        let old = self.l2p.get(lpn as usize);
        if old != NONE {
            self.invalidate(old);
        } else {
            self.mapped += 1;
        }
        (self.place(lpn, die), old)
    }

    /// Discard `lpn`; returns the physical page it had, or `NONE`.
    #[inline]
    pub fn trim(&mut self, lpn: u32) -> u32 {
        debug_assert!(self.deferred.is_empty());
        let old = self.l2p.get(lpn as usize);
        if old != NONE {
            self.invalidate(old);
            self.l2p.set(lpn as usize, NONE);
            self.mapped -= 1;
        }
        old
    }

    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        // The reverse map keeps the stale entry: a physical page is valid only while the
        // forward map still points back at it (see `is_valid`), so invalidation touches
        // no per-page memory besides the forward map the caller already has in cache.
        let b = ppn >> self.shift;
        let v = self.valid[b as usize];
        self.valid[b as usize] = v - 1;
        if self.state[b as usize] == State::Closed {
            self.unlink(b, v);
            self.link(b, v - 1);
        }
    }

    #[inline(always)]
    fn place(&mut self, lpn: u32, die: u32) -> u32 {
        let ppn = self.place_unmapped(lpn, die);
        self.l2p.set(lpn as usize, ppn);
        ppn
    }

    /// Program `lpn` at die `die`'s frontier without touching the forward map.
    #[inline(always)]
    fn place_unmapped(&mut self, lpn: u32, die: u32) -> u32 {
        let d = die as usize;
        let OpenBlock { block, off } = self.open[d];
        let ppn = (block << self.shift) | off;
        self.p2l.set(ppn as usize, lpn);
        self.valid[block as usize] += 1;
        if off + 1 == self.np {
            self.close(block);
            let nb = self.take_free(d as u32);
            self.open[d] = OpenBlock { block: nb, off: 0 };
        } else {
            self.open[d].off = off + 1;
        }
        ppn
    }

    fn take_free(&mut self, die: u32) -> u32 {
        let b = self
            .free
            .pop()
            .expect("FTL invariant: GC keeps a free block for every die's frontier");
        self.state[b as usize] = State::Open;
        self.die_of[b as usize] = die;
        b
    }

    fn close(&mut self, b: u32) {
        self.state[b as usize] = State::Closed;
        self.closed += 1;
        let v = self.valid[b as usize];
        self.link(b, v);
    }

    #[inline]
    fn link(&mut self, b: u32, count: u32) {
        let h = self.head[count as usize];
        self.next[b as usize] = h;
        self.prev[b as usize] = NONE;
        if h != NONE {
            self.prev[h as usize] = b;
        }
        self.head[count as usize] = b;
        if count < self.min_bucket {
            self.min_bucket = count;
        }
    }

    #[inline]
    fn unlink(&mut self, b: u32, count: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head[count as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }

    /// Start collecting the greedy victim (the closed block with fewest valid pages).
    /// Returns it, or `None` when no closed block has an invalid page (nothing to gain).
    pub fn gc_begin(&mut self) -> Option<u32> {
        debug_assert_eq!(self.victim, NONE, "one victim at a time");
        debug_assert!(self.deferred.is_empty());
        if self.closed == 0 {
            return None;
        }
        while self.head[self.min_bucket as usize] == NONE {
            self.min_bucket += 1;
        }
        if self.min_bucket == self.np {
            return None;
        }
        let b = self.head[self.min_bucket as usize];
        self.unlink(b, self.min_bucket);
        self.state[b as usize] = State::Victim;
        self.closed -= 1;
        self.victim = b;
        self.victim_off = 0;
        self.victim_left = self.valid[b as usize];
        self.warm_victim_maps(b);
        Some(b)
    }

    /// Touch the map entries of the victim's valid pages with independent loads, so the
    /// cache misses overlap instead of stalling one by one in the relocation's stores.
    fn warm_victim_maps(&self, b: u32) {
        let base = (b << self.shift) as usize;
        let p2l = &self.p2l.as_slice()[base..base + self.np as usize];
        let l2p = self.l2p.as_slice();
        let mut acc = 0u32;
        for &lpn in p2l {
            if lpn != NONE {
                acc ^= l2p[lpn as usize];
            }
        }
        std::hint::black_box(acc);
    }

    /// Relocate the victim's next valid page to die `die`'s frontier: (old page, new
    /// page, logical page). `None` once the victim holds no valid page.
    #[inline]
    pub fn gc_step(&mut self, die: u32) -> Option<(u32, u32, u32)> {
        if self.victim_left == 0 {
            return None;
        }
        let base = self.victim << self.shift;
        loop {
            let src = base | self.victim_off;
            self.victim_off += 1;
            let lpn = self.p2l.get(src as usize);
            if lpn != NONE && self.l2p.get(lpn as usize) == src {
                self.valid[self.victim as usize] -= 1;
                self.victim_left -= 1;
                self.moved += 1;
                return Some((src, self.place(lpn, die), lpn));
            }
        }
    }

    /// Erase the (now empty) victim and return it to the free pool; returns its die.
    pub fn gc_finish(&mut self) -> u32 {
        let b = self.victim;
        debug_assert!(b != NONE && self.valid[b as usize] == 0 && self.victim_left == 0);
        self.state[b as usize] = State::Free;
        self.free.push(b);
        self.victim = NONE;
        self.die_of[b as usize]
    }

    /// Check every table against the others (tests; O(capacity)).
    pub fn check_invariants(&self) -> Result<(), String> {
        if !self.deferred.is_empty() {
            return Err("deferred writes not flushed".into());
        }
        let mut valid = vec![0u32; self.valid.len()];
        let mut mapped = 0u64;
        for (lpn, &ppn) in self.l2p.as_slice().iter().enumerate() {
            if ppn != NONE {
                mapped += 1;
                if self.p2l.get(ppn as usize) != lpn as u32 {
                    return Err(format!(
                        "l2p[{lpn}]={ppn} but p2l[{ppn}]={}",
                        self.p2l.get(ppn as usize)
                    ));
                }
                valid[(ppn >> self.shift) as usize] += 1;
            }
        }
        let back = self
            .p2l
            .as_slice()
            .iter()
            .enumerate()
            .filter(|&(ppn, &l)| l != NONE && self.l2p.get(l as usize) == ppn as u32)
            .count() as u64;
        if mapped != self.mapped || back != mapped {
            return Err(format!(
                "mapped {mapped}, counter {}, reverse {back}",
                self.mapped
            ));
        }
        if valid != self.valid {
            return Err("per-block valid counts differ from the map".into());
        }
        let total: u64 = self.valid.iter().map(|&v| v as u64).sum();
        if total != mapped {
            return Err(format!("valid pages {total} != mapped LBAs {mapped}"));
        }
        let mut in_buckets = 0u32;
        for (c, &h) in self.head.iter().enumerate() {
            let mut b = h;
            let mut p = NONE;
            while b != NONE {
                if self.state[b as usize] != State::Closed || self.valid[b as usize] != c as u32 {
                    return Err(format!(
                        "block {b} in bucket {c} but valid {}",
                        self.valid[b as usize]
                    ));
                }
                if self.prev[b as usize] != p {
                    return Err(format!("bad back link at block {b}"));
                }
                if (c as u32) < self.min_bucket {
                    return Err(format!("bucket {c} below min {}", self.min_bucket));
                }
                in_buckets += 1;
                p = b;
                b = self.next[b as usize];
            }
        }
        if in_buckets != self.closed {
            return Err(format!(
                "{in_buckets} blocks in buckets, {} closed",
                self.closed
            ));
        }
        let free_state = self.state.iter().filter(|&&s| s == State::Free).count();
        if free_state != self.free.len() {
            return Err("free list and block states disagree".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn gc_until(ftl: &mut Ftl, low: u32) {
        while ftl.free_blocks() < low {
            ftl.gc_begin().expect("a victim");
            while ftl.gc_step(0).is_some() {}
            ftl.gc_finish();
        }
    }

    #[test]
    fn writes_trims_and_gc_keep_tables_consistent() {
        // 512 logical pages, 40 blocks of 16 pages (640 physical), 4 dies.
        let mut ftl = Ftl::new(512, 40, 16, 4);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for i in 0..20_000u32 {
            gc_until(&mut ftl, 6);
            let lpn = rng.next_u32() % 512;
            if i % 7 == 0 {
                ftl.trim(lpn);
            } else {
                ftl.write(lpn, i % 4);
            }
            if i % 997 == 0 {
                ftl.check_invariants().unwrap();
            }
        }
        ftl.check_invariants().unwrap();
        let mapped = ftl.mapped_pages();
        assert!(mapped > 300 && mapped <= 512, "{mapped}");
        for lpn in 0..512 {
            ftl.trim(lpn);
        }
        ftl.check_invariants().unwrap();
        assert_eq!(ftl.mapped_pages(), 0);
        assert!((0..40).all(|b| ftl.valid_pages(b) == 0));
    }

    #[test]
    fn greedy_picks_the_block_with_fewest_valid_pages() {
        let mut ftl = Ftl::new(64, 12, 8, 1);
        for lpn in 0..64 {
            ftl.write(lpn, 0);
        }
        // Blocks 0..8 are closed with 8 valid pages each; invalidate 3 pages of block 5's
        // data (lpns 40..43) and 1 of block 2's.
        for lpn in [40, 41, 42, 17] {
            ftl.write(lpn, 0);
        }
        let v = ftl.gc_begin().unwrap();
        assert_eq!(ftl.valid_pages(v), 5);
        assert_eq!(v, ftl.lookup(43) >> 3);
        let mut moved = 0;
        while ftl.gc_step(0).is_some() {
            moved += 1;
        }
        assert_eq!(moved, 5);
        ftl.gc_finish();
        ftl.check_invariants().unwrap();
    }

    #[test]
    fn deferred_writes_match_immediate_writes() {
        let mut a = Ftl::new(256, 24, 16, 2);
        let mut b = Ftl::new(256, 24, 16, 2);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let (mut stale_a, mut stale_b) = (Vec::new(), Vec::new());
        for i in 0..5_000u32 {
            if a.free_blocks() < 6 {
                b.flush(|p| stale_b.push(p));
                gc_until(&mut a, 6);
                gc_until(&mut b, 6);
            }
            // Small LBA range: the same page is often rewritten within one batch.
            let lpn = rng.next_u32() % 64 + (i % 3) * 64;
            let (pa, old) = a.write(lpn, i % 2);
            if old != NONE {
                stale_a.push(old);
            }
            let pb = b.write_deferred(lpn, i % 2);
            assert_eq!(pa, pb);
            if b.needs_flush() {
                b.flush(|p| stale_b.push(p));
            }
        }
        b.flush(|p| stale_b.push(p));
        assert_eq!(stale_a, stale_b);
        a.check_invariants().unwrap();
        b.check_invariants().unwrap();
        assert!((0..256).all(|l| a.lookup(l) == b.lookup(l)));
    }

    #[test]
    fn pages_land_on_the_chosen_die() {
        let mut ftl = Ftl::new(64, 16, 8, 4);
        for (lpn, die) in [(0, 2), (1, 0), (2, 3), (3, 2)] {
            let ppn = ftl.write(lpn, die).0;
            assert_eq!(ftl.die_of_page(ppn), die);
        }
        ftl.check_invariants().unwrap();
    }
}
