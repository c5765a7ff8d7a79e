//! Large flat `u32` tables (the FTL's maps) in anonymous memory advised for transparent
//! huge pages: a 64 GB drive's maps are 130 MB touched at random, and with 4 KiB pages
//! nearly every access would also miss the TLB.

use memmap2::{MmapMut, MmapOptions};

/// A fixed-length table of `u32`.
#[derive(Debug)]
pub struct Table {
    map: MmapMut,
    len: usize,
}

impl Table {
    /// `len` entries, all `fill`.
    pub fn new(len: usize, fill: u32) -> Table {
        let mut map = MmapOptions::new()
            .len(len.max(1) * 4)
            .map_anon()
            .expect("anonymous memory for the FTL tables");
        #[cfg(target_os = "linux")]
        {
            // Best effort: without huge pages the tables still work, only slower.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        bytemuck::cast_slice_mut::<u8, u32>(&mut map).fill(fill);
        Table { map, len }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// All entries.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &bytemuck::cast_slice::<u8, u32>(&self.map)[..self.len]
    }

    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        self.as_slice()[i]
    }

    /// Set entry `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: u32) {
        bytemuck::cast_slice_mut::<u8, u32>(&mut self.map)[..self.len][i] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_values() {
        let mut t = Table::new(1000, u32::MAX);
        assert_eq!(t.len(), 1000);
        assert!(t.as_slice().iter().all(|&v| v == u32::MAX));
        t.set(999, 7);
        assert_eq!(t.get(999), 7);
    }
}
