//! The per-job I/O generator: direction, block size and offset of each next I/O.
//!
//! Random offsets are uniform (or zoned) over the span and aligned to the workload's
//! alignment. Sequential I/O with several jobs gives each job its own stream in its own
//! equal region of the span (the "file server streaming to several users" pattern);
//! a stream wraps to the start of its region at the end.
//!
//! As in fio, reads and writes each have their own sequential position (`rw` reads one
//! stream and writes another), and a sequential I/O carries on from the last I/O of its
//! direction, random or not, so `percentage_random` makes short sequential runs from
//! random places. Offsets, directions, block sizes, the random/sequential choice and
//! write content each draw from their own stream of the seed: the same seed gives the
//! same offsets whatever the data pattern or mix.

use crate::op::{Dir, IoOp};
use crate::spec::{Distribution, Workload, Zone};

struct ZoneRange {
    /// Cumulative share of random I/Os up to and including this zone, scaled to 2^32.
    cum: u64,
    start: u64,
    len: u64,
}

/// Where each zone of a zoned distribution lies in the span (`start`, `size` bytes),
/// its edges aligned down to `align`.
fn zone_ranges(zones: &[Zone], start: u64, size: u64, align: u64) -> Vec<ZoneRange> {
    let mut io = 0.0;
    let mut span = 0.0;
    zones
        .iter()
        .map(|z| {
            let from = (size as f64 * span / 100.0) as u64 / align * align;
            span += z.span_percent;
            io += z.io_percent;
            let end = ((size as f64 * span / 100.0) as u64 / align * align).min(size);
            ZoneRange {
                cum: ((io / 100.0) * (1u64 << 32) as f64) as u64,
                start: start + from,
                len: end - from,
            }
        })
        .collect()
}

/// The first zone that is to get I/O but is narrower than `block` bytes (its index and
/// width): its I/Os would have to go elsewhere.
pub fn narrow_zone(zones: &[Zone], size: u64, align: u64, block: u64) -> Option<(usize, u64)> {
    zone_ranges(zones, 0, size, align)
        .iter()
        .zip(zones)
        .enumerate()
        .find(|(_, (r, z))| z.io_percent > 0.0 && r.len < block)
        .map(|(i, (r, _))| (i, r.len))
}

/// Seed of stream `k` of a job seeded with `seed` (SplitMix64's finaliser, so nearby
/// seeds and streams give unrelated sequences).
fn stream_seed(seed: u64, k: u64) -> u64 {
    let mut z = seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Produces one job's I/Os.
pub struct OpGen {
    /// Offsets (and the zone of a zoned distribution).
    offset_rng: fastrand::Rng,
    /// Read or write.
    dir_rng: fastrand::Rng,
    /// Block size of a `bssplit`.
    bs_rng: fastrand::Rng,
    /// Random or sequential (`percentage_random`).
    random_rng: fastrand::Rng,
    /// Write content.
    data_rng: fastrand::Rng,
    read_pct: u32,
    /// Cumulative shares (of 100) and sizes; one entry for a fixed block size.
    bs: Vec<(u32, u32)>,
    random: bool,
    random_pct: u32,
    align: u64,
    span_start: u64,
    span_len: u64,
    zones: Vec<ZoneRange>,
    seq_start: u64,
    seq_end: u64,
    /// Where the next sequential read and write go (fio's last position per direction).
    cursor: [u64; 2],
}

impl OpGen {
    /// Generator for job `job` of `w.numjobs`.
    pub fn new(w: &Workload, job: u32) -> OpGen {
        let seed = w
            .randseed
            .wrapping_add((job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut cum = 0;
        let bs =
            w.bs.iter()
                .map(|b| {
                    cum += b.percent;
                    (cum, b.bytes)
                })
                .collect();
        let align = w.align_bytes as u64;
        let zones = match &w.random_distribution {
            Distribution::Uniform => Vec::new(),
            Distribution::Zoned { zones } => {
                zone_ranges(zones, w.offset_bytes, w.size_bytes, align)
            }
        };
        let region = (w.size_bytes / w.numjobs as u64) / align * align;
        let seq_start = w.offset_bytes + region * job as u64;
        // The last job's region runs to the span's end: no block is left out.
        let seq_end = if job + 1 == w.numjobs {
            w.offset_bytes + w.size_bytes / align * align
        } else {
            seq_start + region
        };
        let stream = |k| fastrand::Rng::with_seed(stream_seed(seed, k));
        OpGen {
            offset_rng: stream(0),
            dir_rng: stream(1),
            bs_rng: stream(2),
            random_rng: stream(3),
            data_rng: stream(4),
            read_pct: w.read_percent(),
            bs,
            random: w.rw.is_random(),
            random_pct: w.percentage_random,
            align,
            span_start: w.offset_bytes,
            span_len: w.size_bytes,
            zones,
            seq_start,
            seq_end,
            cursor: [seq_start; 2],
        }
    }

    /// The next I/O.
    #[inline]
    pub fn next_op(&mut self) -> IoOp {
        let dir = match self.read_pct {
            100 => Dir::Read,
            0 => Dir::Write,
            p => {
                if self.dir_rng.u32(0..100) < p {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        let len = if self.bs.len() == 1 {
            self.bs[0].1
        } else {
            let r = self.bs_rng.u32(0..100);
            self.bs
                .iter()
                .find(|(c, _)| r < *c)
                .map_or(self.bs[0].1, |b| b.1)
        };
        let random = self.random
            && (self.random_pct == 100 || self.random_rng.u32(0..100) < self.random_pct);
        let (offset, len) = if random {
            (self.random_offset(len as u64), len)
        } else {
            self.seq_place(dir, len)
        };
        self.cursor[dir.index()] = offset + len as u64;
        IoOp { dir, offset, len }
    }

    #[inline]
    fn random_offset(&mut self, len: u64) -> u64 {
        let (start, span) = if self.zones.is_empty() {
            (self.span_start, self.span_len)
        } else {
            let r = self.offset_rng.u64(0..1 << 32);
            let z = self
                .zones
                .iter()
                .find(|z| r < z.cum && z.len >= len)
                .or_else(|| self.zones.iter().rev().find(|z| z.len >= len))
                .unwrap_or(&self.zones[0]);
            (z.start, z.len)
        };
        let slots = (span.saturating_sub(len)) / self.align + 1;
        start + self.offset_rng.u64(0..slots) * self.align
    }

    /// Where the next sequential I/O of direction `dir` goes: on from its last I/O, back
    /// to the start of the job's region at the region's end (or, after a random I/O
    /// outside the region, at the span's end).
    ///
    /// With several block sizes, an I/O that would cross that end takes the largest of
    /// them that still fits before it, so the stream covers its region to the end (a
    /// byte-bounded fill of the span writes every byte once); it wraps when none fits.
    #[inline]
    fn seq_place(&self, dir: Dir, len: u32) -> (u64, u32) {
        let at = self.cursor[dir.index()];
        let end = if (self.seq_start..=self.seq_end).contains(&at) {
            self.seq_end
        } else {
            self.span_start + self.span_len
        };
        if at + len as u64 <= end {
            return (at, len);
        }
        match self.largest_within(end.saturating_sub(at)) {
            Some(b) if self.bs.len() > 1 => (at, b),
            _ => (self.seq_start, len),
        }
    }

    /// The largest block size of the workload that is at most `room` bytes.
    fn largest_within(&self, room: u64) -> Option<u32> {
        self.bs
            .iter()
            .map(|b| b.1)
            .filter(|&b| b as u64 <= room)
            .max()
    }

    /// Fit the last I/O of a byte-bounded job into the `left` bytes: the largest block
    /// size of the workload that fits. False when none does (the job is done).
    pub fn fit(&mut self, op: &mut IoOp, left: u64) -> bool {
        if op.len as u64 <= left {
            return true;
        }
        match self.largest_within(left) {
            Some(b) => {
                op.len = b;
                // The next sequential I/O follows this one as it is, with no gap.
                self.cursor[op.dir.index()] = op.offset + b as u64;
                true
            }
            None => false,
        }
    }

    /// The stream write content is drawn from.
    #[inline]
    pub fn data_rng(&mut self) -> &mut fastrand::Rng {
        &mut self.data_rng
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spec::{BsShare, RwMode, WorkloadRequest};

    pub(crate) fn workload(rw: RwMode, numjobs: u32) -> Workload {
        let r = WorkloadRequest::default();
        Workload {
            rw,
            rwmixread: 70,
            bs: vec![BsShare {
                bytes: 4096,
                percent: 100,
            }],
            iodepth: 1,
            numjobs,
            ioengine: crate::spec::IoEngine::Sync,
            direct: false,
            offset_bytes: 1 << 20,
            size_bytes: 64 << 20,
            runtime_ns: Some(1),
            io_size_bytes: None,
            ramp_ns: 0,
            percentage_random: 100,
            random_distribution: r.random_distribution,
            randseed: 7,
            data: r.data,
            log_interval_ns: 1_000_000_000,
            log_head: None,
            align_bytes: 4096,
            continue_on_error: false,
            fixedbufs: false,
            registerfiles: false,
            iodepth_batch_submit: 0,
            invalidate: true,
            end_fsync: false,
            verify: false,
            verify_backlog: None,
            bs_mix: None,
        }
    }

    #[test]
    fn random_offsets_aligned_inside_span_and_mix_holds() {
        let w = workload(RwMode::RandRw, 1);
        let mut g = OpGen::new(&w, 0);
        let n = 200_000;
        let mut reads = 0;
        for _ in 0..n {
            let op = g.next_op();
            assert_eq!(op.offset % 4096, 0);
            assert!(op.offset >= w.offset_bytes);
            assert!(op.offset + op.len as u64 <= w.offset_bytes + w.size_bytes);
            reads += (op.dir == Dir::Read) as u32;
        }
        let share = reads as f64 / n as f64;
        assert!((share - 0.70).abs() < 0.02, "{share}");
    }

    #[test]
    fn sequential_jobs_stream_in_their_own_regions() {
        let w = workload(RwMode::Write, 4);
        let region = w.size_bytes / 4;
        for j in 0..4 {
            let mut g = OpGen::new(&w, j);
            let first = g.next_op().offset;
            assert_eq!(first, w.offset_bytes + region * j as u64);
            let mut prev = first;
            for _ in 1..(region / 4096) {
                let o = g.next_op().offset;
                assert_eq!(o, prev + 4096);
                prev = o;
            }
            assert_eq!(
                g.next_op().offset,
                first,
                "wraps to the start of its region"
            );
        }
    }

    #[test]
    fn zoned_distribution_puts_io_where_asked() {
        let mut w = workload(RwMode::RandRead, 1);
        w.random_distribution = Distribution::parse("zoned:50/5:30/15:20/80").unwrap();
        let mut g = OpGen::new(&w, 0);
        let mut first5 = 0;
        let n = 100_000;
        for _ in 0..n {
            let rel = g.next_op().offset - w.offset_bytes;
            if rel < w.size_bytes * 5 / 100 {
                first5 += 1;
            }
        }
        let share = first5 as f64 / n as f64;
        assert!((share - 0.5).abs() < 0.02, "{share}");
    }

    #[test]
    fn sequential_reads_and_writes_each_have_their_own_stream() {
        let w = workload(RwMode::Rw, 1);
        let mut g = OpGen::new(&w, 0);
        let mut next = [w.offset_bytes; 2];
        let mut seen = [0; 2];
        for _ in 0..1000 {
            let op = g.next_op();
            let d = op.dir.index();
            assert_eq!(
                op.offset, next[d],
                "{:?} carries on from its own last I/O",
                op.dir
            );
            next[d] += op.len as u64;
            seen[d] += 1;
        }
        assert!(seen[0] > 600 && seen[1] > 200, "{seen:?}");
    }

    #[test]
    fn percentage_random_runs_on_from_the_last_io() {
        let mut w = workload(RwMode::RandRead, 1);
        w.percentage_random = 50;
        let mut g = OpGen::new(&w, 0);
        let mut prev_end = None;
        let (mut seq, mut n) = (0, 20_000);
        while n > 0 {
            let op = g.next_op();
            if Some(op.offset) == prev_end {
                seq += 1;
            }
            prev_end = Some(op.offset + op.len as u64);
            n -= 1;
        }
        // Half the I/Os continue from the one before (a random one lands there by chance
        // once in 16 k).
        let share = seq as f64 / 20_000.0;
        assert!((share - 0.5).abs() < 0.02, "{share}");
    }

    #[test]
    fn the_seed_gives_the_same_offsets_whatever_the_mix() {
        let offsets = |rw, read_pct: u32| {
            let mut w = workload(rw, 1);
            w.rwmixread = read_pct;
            let mut g = OpGen::new(&w, 0);
            (0..1000).map(|_| g.next_op().offset).collect::<Vec<_>>()
        };
        let reads = offsets(RwMode::RandRead, 100);
        assert_eq!(offsets(RwMode::RandWrite, 0), reads);
        assert_eq!(offsets(RwMode::RandRw, 30), reads);
    }

    #[test]
    fn the_last_io_of_a_byte_budget_keeps_a_size_of_the_workload() {
        let mut w = workload(RwMode::RandRead, 1);
        w.bs = vec![
            BsShare {
                bytes: 4096,
                percent: 50,
            },
            BsShare {
                bytes: 65536,
                percent: 50,
            },
        ];
        let mut g = OpGen::new(&w, 0);
        let mut op = IoOp {
            dir: Dir::Read,
            offset: 0,
            len: 65536,
        };
        assert!(g.fit(&mut op, 10_000));
        assert_eq!(op.len, 4096);
        assert!(
            !g.fit(&mut op, 2048),
            "nothing fits in less than the smallest block"
        );
    }
}
