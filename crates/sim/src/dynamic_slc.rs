//! Dynamic SLC cache (`slc=dynamic`): a cache carved out of the free space, as on
//! drives whose cache shrinks as they fill, and what that does to a drive with spare area.
//!
//! A page held in SLC mode takes `bits` (2 for MLC, 3 for TLC, 4 for QLC) pages' worth of
//! cells. The FTL places every page at its native position (see `slc`), so the extra
//! cells are accounted here: the *effective* free space is the FTL's free pages minus
//! `bits − 1` per SLC slot in use (stale slots included, as SLC blocks free only when
//! folded and erased).
//!
//! The cycle, one decision per host page:
//! 1. **Created**: when the cache is empty and the effective free space beyond the GC
//!    reserve holds at least `slc_min` of SLC-mode data, the cache gets all of it:
//!    (effective free − reserve) / `bits` pages. Host writes go to SLC (the burst).
//! 2. **Full**: the effective free space is down to the reserve. Host writes go to
//!    native-mode blocks, and the drive must fold the cache to get its cells back: one
//!    folded page (an SLC read and a native program) per `fold_every` host pages, beside
//!    the host's writes (an intermediate level). Each folded slot gives back `bits − 1`
//!    pages, so with `fold_every` < `bits − 1` the free space grows while the cache empties.
//! 3. **Empty again**: the space folding won back becomes the next cache if it holds at
//!    least `slc_min` (a second, shorter burst: each cycle keeps
//!    (`bits − 1 − fold_every`) / `bits` of the last cache, a little more when cached
//!    data was overwritten before its fold, as a stale slot is dropped for free);
//!    otherwise host writes stay in native mode without GC until the free pool reaches
//!    the GC threshold, and the drive settles into garbage collection (the steady state).
//!
//! With 25 % over-provisioning (a quarter of the span never written) the free space after
//! a sequential fill is large, which gives the reviews' burst → intermediate phase →
//! second burst → steady state; with 7 % spare the first cache is already small. With
//! `slc_bypass=128K` the sequential fill goes straight to native blocks (firmware that
//! caches only smaller writes), so the random writes after it find the cache empty;
//! without it the fill runs through the cycle itself and the test starts where it ended.

/// What host writes are doing, from the cache's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// To the SLC cache.
    Slc,
    /// To native blocks while the full cache is folded beside them.
    Fold,
    /// To native blocks, no cache and no GC yet.
    Native,
    /// To native blocks with garbage collection (no cache).
    Gc,
}

impl Mode {
    /// The name in the ground truth.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Slc => "slc",
            Mode::Fold => "fold",
            Mode::Native => "native",
            Mode::Gc => "gc",
        }
    }
}

/// The dynamic cache's state and the history of its modes.
#[derive(Debug, Clone)]
pub struct DynamicSlc {
    /// Pages of cells an SLC page takes.
    pub bits: u64,
    /// Smallest cache created, in pages.
    pub min_pages: u64,
    /// Host pages per fold while the full cache empties.
    fold_every: f64,
    credit: f64,
    /// Host writes go to the cache.
    pub armed: bool,
    /// The full cache is being folded.
    pub emptying: bool,
    /// GC ran since the cache was last created.
    pub gc_ran: bool,
    /// (virtual time, mode, host write commands before it) at every change.
    pub phases: Vec<(u64, Mode, u64)>,
}

impl DynamicSlc {
    pub fn new(bits: u64, min_pages: u64, fold_every: f64) -> DynamicSlc {
        DynamicSlc {
            bits,
            min_pages: min_pages.max(1),
            fold_every,
            credit: 0.0,
            armed: false,
            emptying: false,
            gc_ran: false,
            phases: Vec::new(),
        }
    }

    /// Size of a cache created now from `effective_free` pages over a reserve of
    /// `reserve` pages, or `None` when it would be under the minimum.
    pub fn cache_pages(&self, effective_free: i64, reserve: i64) -> Option<u64> {
        let pages = ((effective_free - reserve).max(0) as u64) / self.bits;
        (pages >= self.min_pages).then_some(pages)
    }

    /// Folds due for one more host page while the cache empties.
    pub fn folds_due(&mut self) -> u32 {
        // Counted in host pages (exact for fold_every like 1.5 or 2).
        self.credit += 1.0;
        let mut n = 0;
        while self.credit >= self.fold_every {
            self.credit -= self.fold_every;
            n += 1;
        }
        n
    }

    /// The mode now.
    pub fn mode(&self) -> Mode {
        if self.armed {
            Mode::Slc
        } else if self.emptying {
            Mode::Fold
        } else if self.gc_ran {
            Mode::Gc
        } else {
            Mode::Native
        }
    }

    /// Record the mode at `t`, after `host_ops` host write commands, when it changed.
    pub fn note(&mut self, t: u64, host_ops: u64) {
        let m = self.mode();
        if self.phases.last().is_none_or(|&(_, last, _)| last != m) {
            self.phases.push((t, m, host_ops));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_come_at_the_set_rate() {
        let mut d = DynamicSlc::new(4, 10, 1.5);
        let folds: u32 = (0..300).map(|_| d.folds_due()).sum();
        assert_eq!(folds, 200);
    }

    #[test]
    fn a_cache_under_the_minimum_is_not_created() {
        let d = DynamicSlc::new(3, 100, 1.0);
        assert_eq!(d.cache_pages(1000 + 300, 1000), Some(100));
        assert_eq!(d.cache_pages(1000 + 299, 1000), None);
        assert_eq!(d.cache_pages(10, 1000), None);
    }
}
