//! SLC write cache bookkeeping.
//!
//! Host pages written in SLC mode are still placed in the FTL's map (at the physical page
//! they will occupy once folded), but are marked *pending*: their native-mode program has
//! not happened yet. The cache holds at most `capacity` pages in FIFO order; its space is
//! given back only by folding (when the drive is idle), which takes the oldest entry and
//! programs it in native mode if it is still pending. Data overwritten, trimmed, or moved
//! by GC (which programs it in native mode) stops being pending but keeps its cache slot
//! until folding reaches it, as SLC blocks free only when erased.

use std::collections::VecDeque;

/// The SLC cache: FIFO of physical pages and the pending-bit set.
#[derive(Debug, Clone)]
pub struct SlcCache {
    capacity: u64,
    fifo: VecDeque<u32>,
    pending: Vec<u64>,
    pending_count: u64,
}

impl SlcCache {
    /// A cache of `capacity` pages over `physical_pages` physical pages.
    pub fn new(capacity: u64, physical_pages: u64) -> SlcCache {
        let words = if capacity == 0 {
            0
        } else {
            physical_pages.div_ceil(64) as usize
        };
        SlcCache {
            capacity,
            fifo: VecDeque::with_capacity(capacity as usize),
            pending: vec![0; words],
            pending_count: 0,
        }
    }

    /// An empty dynamic cache over `physical_pages` physical pages: no room until
    /// [`SlcCache::set_capacity`] creates it.
    pub fn dynamic(physical_pages: u64) -> SlcCache {
        SlcCache {
            capacity: 0,
            fifo: VecDeque::new(),
            pending: vec![0; physical_pages.div_ceil(64) as usize],
            pending_count: 0,
        }
    }

    /// Pages the cache may hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Resize a dynamic cache (created from free space, or given back).
    pub fn set_capacity(&mut self, pages: u64) {
        debug_assert!(pages == 0 || !self.pending.is_empty());
        self.capacity = pages;
    }

    /// Whether a host page written now goes to SLC.
    #[inline]
    pub fn has_room(&self) -> bool {
        (self.fifo.len() as u64) < self.capacity
    }

    /// Pages of cache in use (including slots whose data went stale).
    pub fn used(&self) -> u64 {
        self.fifo.len() as u64
    }

    /// Pages still waiting for their native-mode program.
    pub fn pending(&self) -> u64 {
        self.pending_count
    }

    /// Record a host page written in SLC mode at `ppn`.
    #[inline]
    pub fn push(&mut self, ppn: u32) {
        self.fifo.push_back(ppn);
        self.pending[(ppn >> 6) as usize] |= 1 << (ppn & 63);
        self.pending_count += 1;
    }

    /// Whether `ppn` is pending.
    #[inline]
    pub fn is_pending(&self, ppn: u32) -> bool {
        self.pending_count > 0 && self.pending[(ppn >> 6) as usize] & (1 << (ppn & 63)) != 0
    }

    /// Clear `ppn`'s pending bit (overwritten, trimmed or moved); returns whether it was set.
    #[inline]
    pub fn take(&mut self, ppn: u32) -> bool {
        if self.pending_count == 0 {
            return false;
        }
        let w = &mut self.pending[(ppn >> 6) as usize];
        let bit = 1u64 << (ppn & 63);
        if *w & bit != 0 {
            *w &= !bit;
            self.pending_count -= 1;
            true
        } else {
            false
        }
    }

    /// The oldest cache slot's page, if any.
    #[inline]
    pub fn oldest(&self) -> Option<u32> {
        self.fifo.front().copied()
    }

    /// Free the oldest slot (after folding it or finding it stale).
    #[inline]
    pub fn pop_oldest(&mut self) {
        self.fifo.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_free_only_in_fifo_order() {
        let mut c = SlcCache::new(3, 1000);
        for p in [10, 200, 999] {
            assert!(c.has_room());
            c.push(p);
        }
        assert!(!c.has_room());
        assert!(c.take(200));
        assert!(!c.take(200));
        assert_eq!(c.pending(), 2);
        assert!(!c.has_room(), "a stale slot still holds space");
        assert_eq!(c.oldest(), Some(10));
        assert!(c.is_pending(10));
        c.pop_oldest();
        assert!(c.has_room());
        assert_eq!(c.used(), 2);
    }
}
