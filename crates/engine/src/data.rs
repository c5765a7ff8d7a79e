//! Content of written blocks.
//!
//! `random` copies a slice of a pre-generated random pool from a random 4 KiB-aligned
//! place, XORed with a per-write 64-bit key whose bytes are all non-zero, and stamps the
//! first 8 bytes of every 512-byte sector with the sector's own number (low 40 bits:
//! byte offset / 512) and a write sequence number (high 24 bits). So no two writes carry
//! the same content (nothing for a deduplicating or compressing controller to exploit),
//! the cost per byte is about one memcpy (no RNG per byte), and every sector says where
//! it was meant to land, which is how the tests check that bytes land where the engine
//! says. `compress=N` does the same with a pool in which N % of each 512-byte sector is
//! zeros before the XOR (one repeated word after it), so a write of any size is N %
//! compressible. `repeat` is IOMeter's "repeating bytes": each write one byte value
//! throughout, drawn afresh per write (IOMeter: "first IO all A's, second all B's").
//! `zero` fills each buffer once and reuses it.

use std::sync::Arc;

use crate::spec::DataPattern;

/// Bytes of random pool shared by all jobs of a run.
pub const POOL_BYTES: usize = 16 << 20;
/// Bytes between sector stamps (the smallest write).
pub const STAMP_STRIDE: usize = 512;

/// The shared, read-only pool writes are drawn from.
pub struct DataPool {
    pattern: DataPattern,
    pool: Vec<u8>,
    /// The run's seed when each write's first sector also carries the verify header
    /// (`crate::verify`); None for runs without `--verify`.
    verify_seed: Option<u64>,
}

impl DataPool {
    /// Build the pool for `pattern`, sized for blocks up to `max_bs` bytes. A run that
    /// never writes (`writes` false) gets no pool: its buffers only receive reads, and
    /// 16 MiB of random bytes would cost it milliseconds of CPU for nothing.
    pub fn new(pattern: DataPattern, max_bs: u32, seed: u64, writes: bool) -> Arc<DataPool> {
        let pool = match pattern {
            DataPattern::Random | DataPattern::Compress(_) if writes => {
                let len = POOL_BYTES.max(2 * max_bs as usize).next_multiple_of(4096);
                let mut rng = fastrand::Rng::with_seed(seed ^ 0xDA7A);
                let mut v = vec![0u8; len];
                rng.fill(&mut v);
                if let DataPattern::Compress(n) = pattern {
                    // Per sector (the smallest write), after the stamp's 8 bytes.
                    let zeros = (STAMP_STRIDE * n as usize / 100).min(STAMP_STRIDE - 8);
                    for sector in v.chunks_mut(STAMP_STRIDE) {
                        let keep = sector.len().saturating_sub(zeros);
                        sector[keep..].fill(0);
                    }
                }
                v
            }
            _ => Vec::new(),
        };
        Arc::new(DataPool {
            pattern,
            pool,
            verify_seed: None,
        })
    }

    /// The pool of workload `w`'s writes, sealing each with the verify header when `w`
    /// verifies.
    pub fn for_workload(w: &crate::spec::Workload) -> Arc<DataPool> {
        let mut pool = DataPool::new(w.data, w.max_bs(), w.randseed, w.writes());
        if w.verify {
            Arc::get_mut(&mut pool).expect("a new pool").verify_seed = Some(w.randseed);
        }
        pool
    }

    /// The content of write number `seq` of job `job`, landing at `target_offset`
    /// ([`DataPool::fill_write`]), sealed with its verify header when the run verifies.
    #[inline(always)]
    pub fn write_content(&self, buf: &mut [u8], target_offset: u64, pick: u64, seq: u64, job: u32) {
        self.fill_write(buf, target_offset, pick, seq);
        if let Some(seed) = self.verify_seed {
            crate::block_header::seal(buf, target_offset, seed, job, seq);
        }
    }

    /// The seed written into verify headers, when the run verifies.
    #[inline(always)]
    pub fn verify_seed(&self) -> Option<u64> {
        self.verify_seed
    }

    pub fn pattern(&self) -> DataPattern {
        self.pattern
    }

    /// The largest write one pick of the pool serves ([`DataPool::fill_write`]); a
    /// larger one is made in pieces ([`crate::source::Content::make`]).
    pub fn piece_bytes(&self) -> usize {
        if self.pool.is_empty() {
            usize::MAX
        } else {
            self.pool.len() / 2
        }
    }

    /// Whether every write needs fresh content (else buffers are filled once).
    pub fn per_write(&self) -> bool {
        !self.pool.is_empty() || self.pattern == DataPattern::Repeat
    }

    /// Fill a buffer once at the start of a job (all patterns).
    pub fn init_buffer(&self, buf: &mut [u8]) {
        match self.pattern {
            DataPattern::Zero => buf.fill(0),
            // Each write fills its own (`fill_write`).
            DataPattern::Repeat => {}
            // No pool: a read-only run, whose buffers only receive reads.
            DataPattern::Random | DataPattern::Compress(_) if self.pool.is_empty() => {}
            DataPattern::Random | DataPattern::Compress(_) => {
                for chunk in buf.chunks_mut(self.pool.len()) {
                    chunk.copy_from_slice(&self.pool[..chunk.len()]);
                }
            }
        }
    }

    /// Content for one write of `buf.len()` bytes landing at `target_offset`.
    /// `pick` is a random number choosing the pool slice; `seq` the job's write count.
    #[inline]
    pub fn fill_write(&self, buf: &mut [u8], target_offset: u64, pick: u64, seq: u64) {
        if self.pool.is_empty() {
            if self.pattern == DataPattern::Repeat {
                buf.fill(pick as u8);
            }
            return;
        }
        let slots = ((self.pool.len() - buf.len()) / 4096 + 1) as u64;
        let src = ((pick % slots) * 4096) as usize;
        // Every byte of the key is non-zero, so no byte of the copy equals the pool's or
        // another write's copy of the same slice: nothing repeats for a compressor or a
        // deduplicating controller to find.
        let key = (pick.rotate_left(29) ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            | 0x0101_0101_0101_0101;
        xor_copy(buf, &self.pool[src..src + buf.len()], key);
        stamp(buf, target_offset, seq);
    }
}

/// `dst = src ^ key`, eight bytes at a time (vectorised by the compiler).
#[inline]
fn xor_copy(dst: &mut [u8], src: &[u8], key: u64) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (a, b) in (&mut d).zip(&mut s) {
        let v = u64::from_ne_bytes(b.try_into().expect("8 bytes")) ^ key;
        a.copy_from_slice(&v.to_ne_bytes());
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a = *b ^ key as u8;
    }
}

/// Write the per-sector stamps.
#[inline]
fn stamp(buf: &mut [u8], target_offset: u64, seq: u64) {
    let hi = (seq & 0xFF_FFFF) << 40;
    let first = target_offset / STAMP_STRIDE as u64;
    for (sector, chunk) in (first..).zip(buf.chunks_exact_mut(STAMP_STRIDE)) {
        chunk[..8].copy_from_slice(&(sector | hi).to_le_bytes());
    }
}

/// The byte offset a sector written with `random` data says it belongs at.
pub fn stamped_offset(sector: &[u8]) -> u64 {
    let v = u64::from_le_bytes(sector[..8].try_into().expect("8 bytes"));
    (v & ((1 << 40) - 1)) * STAMP_STRIDE as u64
}

/// The write sequence (low 24 bits of the job's write count) a stamped sector carries.
pub fn stamped_seq(sector: &[u8]) -> u64 {
    u64::from_le_bytes(sector[..8].try_into().expect("8 bytes")) >> 40
}

/// Measure how fast one core prepares write content for `pattern` (bytes per second),
/// over about `budget_ms` of work with `bs`-sized writes.
pub fn measure_fill_rate(pool: &DataPool, bs: usize, budget_ms: u64) -> f64 {
    if !pool.per_write() {
        return f64::INFINITY;
    }
    let mut buf = crate::buf::AlignedBuf::new(bs);
    let t = std::time::Instant::now();
    let mut bytes = 0u64;
    let mut i = 0u64;
    while t.elapsed().as_millis() < budget_ms as u128 {
        for _ in 0..64 {
            pool.fill_write(
                buf.as_mut_slice(),
                i * bs as u64,
                i.wrapping_mul(0x9E37_79B9),
                i,
            );
            i += 1;
            bytes += bs as u64;
        }
    }
    bytes as f64 / t.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_carry_offsets_and_writes_differ() {
        let pool = DataPool::new(DataPattern::Random, 1 << 20, 1, true);
        let mut a = vec![0u8; 8192];
        let mut b = vec![0u8; 8192];
        pool.fill_write(&mut a, 1 << 30, 5, 1);
        pool.fill_write(&mut b, 1 << 30, 5, 2);
        assert_ne!(a, b, "same slice, different sequence: different content");
        for (i, s) in a.chunks(512).enumerate() {
            assert_eq!(stamped_offset(s), (1 << 30) + 512 * i as u64);
        }
    }

    #[test]
    fn read_only_runs_get_no_pool() {
        let pool = DataPool::new(DataPattern::Random, 1 << 20, 1, false);
        assert!(!pool.per_write());
        let mut b = vec![7u8; 8192];
        pool.init_buffer(&mut b);
    }

    #[test]
    fn patterns() {
        let z = DataPool::new(DataPattern::Zero, 4096, 1, true);
        let mut b = vec![1u8; 4096];
        z.init_buffer(&mut b);
        assert!(b.iter().all(|&x| x == 0));
        assert!(!z.per_write());
        // Repeating bytes: one value per write, a new one for the next.
        let r = DataPool::new(DataPattern::Repeat, 4096, 1, true);
        assert!(r.per_write());
        let mut values = std::collections::HashSet::new();
        for pick in 0..8u64 {
            r.fill_write(
                &mut b,
                0,
                pick.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56,
                pick,
            );
            assert!(b.iter().all(|&x| x == b[0]));
            values.insert(b[0]);
        }
        assert!(values.len() >= 6, "{values:?}");
        // Half of each sector is one repeated 8-byte word, whatever the write's size:
        // about half compresses away.
        let c = DataPool::new(DataPattern::Compress(50), 4096, 1, true);
        for len in [512, 1536, 4096] {
            let mut b = vec![0u8; len];
            c.fill_write(&mut b, 0, 3, 0);
            for sector in b.chunks(512) {
                let tail = &sector[256..];
                assert!(tail.chunks(8).all(|w| w == &tail[..8]), "{len}");
                let words: std::collections::HashSet<&[u8]> = sector[8..256].chunks(8).collect();
                assert_eq!(words.len(), 31, "{len}: the head is random");
            }
        }
    }
}
