//! Page-mapped flash translation layer: the logical→physical map at 4 KiB, erase blocks,
//! the write frontier striped over dies, and greedy victim choice for garbage collection.
//!
//! Everything is a flat `Vec` indexed by page or block number (u32 entries), so one host
//! page write costs a handful of memory accesses. Blocks that are full ("closed") sit in
//! one doubly-linked list per valid-page count; the greedy victim (fewest valid pages) is
//! the head of the lowest non-empty list, found in O(1) amortized.
//!
//! This module knows nothing of time: the device charges NAND operations to dies.

/// "No page / no block" marker in the u32 tables.
pub const NONE: u32 = u32::MAX;

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
/// `ppn / pages_per_block`.
#[derive(Debug, Clone)]
pub struct Ftl {
    shift: u32,
    np: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
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
    dies: u32,
    stripe_pages: u32,
    stripe_die: u32,
    stripe_left: u32,
    mapped: u64,
    victim: u32,
    victim_off: u32,
    victim_left: u32,
    moved: u64,
}

impl Ftl {
    /// `user_pages` logical pages over `blocks` erase blocks of `pages_per_block` pages (a
    /// power of two) on `dies` dies; the frontier moves to the next die every
    /// `stripe_pages` pages.
    pub fn new(user_pages: u32, blocks: u32, pages_per_block: u32, dies: u32, stripe_pages: u32) -> Ftl {
        assert!(pages_per_block.is_power_of_two() && pages_per_block >= stripe_pages);
        assert!(blocks > dies && dies > 0 && stripe_pages > 0);
        assert!((blocks as u64) * (pages_per_block as u64) < NONE as u64);
        let nb = blocks as usize;
        let mut ftl = Ftl {
            shift: pages_per_block.trailing_zeros(),
            np: pages_per_block,
            l2p: vec![NONE; user_pages as usize],
            p2l: vec![NONE; nb * pages_per_block as usize],
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
            dies,
            stripe_pages,
            stripe_die: dies - 1,
            stripe_left: 0,
            mapped: 0,
            victim: NONE,
            victim_off: 0,
            victim_left: 0,
            moved: 0,
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
        self.l2p[lpn as usize]
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

    /// Write `lpn` at the frontier; returns (new physical page, old physical page or `NONE`).
    #[inline]
    pub fn write(&mut self, lpn: u32) -> (u32, u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
        } else {
            self.mapped += 1;
        }
        (self.place(lpn), old)
    }

    /// Discard `lpn`; returns the physical page it had, or `NONE`.
    #[inline]
    pub fn trim(&mut self, lpn: u32) -> u32 {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
            self.mapped -= 1;
        }
        old
    }

    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        let b = ppn >> self.shift;
        self.p2l[ppn as usize] = NONE;
        let v = self.valid[b as usize];
        self.valid[b as usize] = v - 1;
        if self.state[b as usize] == State::Closed {
            self.unlink(b, v);
            self.link(b, v - 1);
        }
    }

    #[inline]
    fn place(&mut self, lpn: u32) -> u32 {
        if self.stripe_left == 0 {
            self.stripe_die += 1;
            if self.stripe_die == self.dies {
                self.stripe_die = 0;
            }
            self.stripe_left = self.stripe_pages;
        }
        self.stripe_left -= 1;
        let d = self.stripe_die as usize;
        let OpenBlock { block, off } = self.open[d];
        let ppn = (block << self.shift) | off;
        self.p2l[ppn as usize] = lpn;
        self.l2p[lpn as usize] = ppn;
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
        Some(b)
    }

    /// Relocate the victim's next valid page to the frontier: (old page, new page,
    /// logical page). `None` once the victim holds no valid page.
    #[inline]
    pub fn gc_step(&mut self) -> Option<(u32, u32, u32)> {
        if self.victim_left == 0 {
            return None;
        }
        let base = self.victim << self.shift;
        loop {
            let src = base | self.victim_off;
            self.victim_off += 1;
            let lpn = self.p2l[src as usize];
            if lpn != NONE {
                self.p2l[src as usize] = NONE;
                self.valid[self.victim as usize] -= 1;
                self.victim_left -= 1;
                self.moved += 1;
                return Some((src, self.place(lpn), lpn));
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
        let mut valid = vec![0u32; self.valid.len()];
        let mut mapped = 0u64;
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn != NONE {
                mapped += 1;
                if self.p2l[ppn as usize] != lpn as u32 {
                    return Err(format!("l2p[{lpn}]={ppn} but p2l[{ppn}]={}", self.p2l[ppn as usize]));
                }
                valid[(ppn >> self.shift) as usize] += 1;
            }
        }
        let back = self.p2l.iter().filter(|&&l| l != NONE).count() as u64;
        if mapped != self.mapped || back != mapped {
            return Err(format!("mapped {mapped}, counter {}, reverse {back}", self.mapped));
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
                    return Err(format!("block {b} in bucket {c} but valid {}", self.valid[b as usize]));
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
            return Err(format!("{in_buckets} blocks in buckets, {} closed", self.closed));
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
            while ftl.gc_step().is_some() {}
            ftl.gc_finish();
        }
    }

    #[test]
    fn writes_trims_and_gc_keep_tables_consistent() {
        // 512 logical pages, 40 blocks of 16 pages (640 physical), 4 dies.
        let mut ftl = Ftl::new(512, 40, 16, 4, 4);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for i in 0..20_000u32 {
            gc_until(&mut ftl, 6);
            let lpn = (rng.next_u32() % 512) as u32;
            if i % 7 == 0 {
                ftl.trim(lpn);
            } else {
                ftl.write(lpn);
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
        let mut ftl = Ftl::new(64, 12, 8, 1, 8);
        for lpn in 0..64 {
            ftl.write(lpn);
        }
        // Blocks 0..8 are closed with 8 valid pages each; invalidate 3 pages of block 5's
        // data (lpns 40..43) and 1 of block 2's.
        for lpn in [40, 41, 42, 17] {
            ftl.write(lpn);
        }
        let v = ftl.gc_begin().unwrap();
        assert_eq!(ftl.valid_pages(v), 5);
        assert_eq!(v, ftl.lookup(43) >> 3);
        let mut moved = 0;
        while ftl.gc_step().is_some() {
            moved += 1;
        }
        assert_eq!(moved, 5);
        ftl.gc_finish();
        ftl.check_invariants().unwrap();
    }

    #[test]
    fn frontier_stripes_over_dies() {
        let mut ftl = Ftl::new(64, 16, 8, 4, 2);
        let dies: Vec<u32> = (0..8)
            .map(|l| {
                let ppn = ftl.write(l).0;
                ftl.die_of_page(ppn)
            })
            .collect();
        assert_eq!(dies, [0, 0, 1, 1, 2, 2, 3, 3]);
    }
}
