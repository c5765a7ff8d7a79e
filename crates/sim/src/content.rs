//! What the medium holds, for a drive asked to keep its data
//! ([`SimDevice::keep_content`](crate::SimDevice::keep_content)): every 4 KiB page written
//! since the last power cut keeps its versions, numbered like the write cache's page
//! writes, so that a cut can take back the ones it lost. A page never written reads as
//! zeros.

use std::collections::{HashMap, HashSet};

use crate::config::PAGE_BYTES;

/// One version of a page: the number of the page write that made it, and its bytes.
type Version = (u64, Box<[u8]>);

/// The versions of each page written, oldest first.
#[derive(Debug, Default)]
pub struct Content {
    pages: HashMap<u32, Vec<Version>>,
}

impl Content {
    /// Write `data` at byte `offset` (a multiple of 512), the first page as write `seq`
    /// and each next page as the next number. A partial page keeps the rest of its
    /// newest version.
    pub fn write(&mut self, offset: u64, data: &[u8], mut seq: u64) {
        let page = PAGE_BYTES as usize;
        let mut at = 0usize;
        while at < data.len() {
            let pos = offset + at as u64;
            let lpn = (pos / PAGE_BYTES) as u32;
            let inside = (pos % PAGE_BYTES) as usize;
            let n = (page - inside).min(data.len() - at);
            let versions = self.pages.entry(lpn).or_default();
            let mut bytes = match versions.last() {
                Some((_, b)) if n < page => b.clone(),
                _ => vec![0u8; page].into_boxed_slice(),
            };
            bytes[inside..inside + n].copy_from_slice(&data[at..at + n]);
            versions.push((seq, bytes));
            seq += 1;
            at += n;
        }
    }

    /// Fill `buf` with the bytes at `offset`: each page's newest version, zeros where
    /// none was written.
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let mut at = 0usize;
        while at < buf.len() {
            let pos = offset + at as u64;
            let lpn = (pos / PAGE_BYTES) as u32;
            let inside = (pos % PAGE_BYTES) as usize;
            let n = (PAGE_BYTES as usize - inside).min(buf.len() - at);
            let out = &mut buf[at..at + n];
            match self.pages.get(&lpn).and_then(|v| v.last()) {
                Some((_, b)) => out.copy_from_slice(&b[inside..inside + n]),
                None => out.fill(0),
            }
            at += n;
        }
    }

    /// A power cut lost the page writes `lost`: each page keeps its newest version not
    /// lost (the older ones are no longer needed). Returns the pages left with none,
    /// never written as far as the medium knows.
    pub fn power_cut(&mut self, lost: &HashSet<u64>) -> Vec<u32> {
        let mut emptied = Vec::new();
        self.pages.retain(|&lpn, versions| {
            versions.retain(|(seq, _)| !lost.contains(seq));
            if let Some(newest) = versions.pop() {
                *versions = vec![newest];
                true
            } else {
                emptied.push(lpn);
                false
            }
        });
        emptied.sort_unstable();
        emptied
    }

    /// A page discarded (TRIM) reads as zeros.
    pub fn discard(&mut self, lpn: u32) {
        self.pages.remove(&lpn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_takes_back_the_lost_versions_and_keeps_the_newest_durable_one() {
        let mut c = Content::default();
        c.write(0, &[1u8; 8192], 0); // pages 0, 1 as writes 0, 1
        c.write(4096, &[2u8; 4096], 2); // page 1 again
        c.write(8192, &[3u8; 512], 3); // a partial page 2
        c.write(8192 + 512, &[4u8; 512], 4);
        let mut b = vec![9u8; 3 * 4096];
        c.read(0, &mut b);
        assert!(b[..4096].iter().all(|&x| x == 1));
        assert!(b[4096..8192].iter().all(|&x| x == 2));
        assert_eq!((b[8192], b[8192 + 512], b[8192 + 1024]), (3, 4, 0));
        // Writes 2 and 4 lost: page 1 holds its older version, page 2 the first part.
        assert!(c.power_cut(&HashSet::from([2, 4])).is_empty());
        c.read(0, &mut b);
        assert!(b[4096..8192].iter().all(|&x| x == 1));
        assert_eq!((b[8192], b[8192 + 512]), (3, 0));
        // A second cut: page 0 keeps what the first left; page 5 was never durable.
        c.write(0, &[5u8; 4096], 5);
        c.write(5 * 4096, &[6u8; 4096], 6);
        assert_eq!(c.power_cut(&HashSet::from([5, 6])), vec![5]);
        c.read(0, &mut b);
        assert!(b[..4096].iter().all(|&x| x == 1));
        c.read(5 * 4096, &mut b[..4096]);
        assert!(b[..4096].iter().all(|&x| x == 0));
    }
}
