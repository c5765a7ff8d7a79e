//! The per-job I/O generator: direction, block size and offset of each next I/O.
//!
//! Random offsets are uniform (or zoned) over the span and aligned to the workload's
//! alignment. Sequential I/O with several jobs gives each job its own stream in its own
//! equal region of the span (the "file server streaming to several users" pattern);
//! a stream wraps to the start of its region at the end.

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

/// Produces one job's I/Os.
pub struct OpGen {
    rng: fastrand::Rng,
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
    cursor: u64,
    sector: u64,
}

impl OpGen {
    /// Generator for job `job` of `w.numjobs`; `sector` is the target's logical sector.
    pub fn new(w: &Workload, job: u32, sector: u32) -> OpGen {
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
        OpGen {
            rng: fastrand::Rng::with_seed(seed),
            read_pct: w.read_percent(),
            bs,
            random: w.rw.is_random(),
            random_pct: w.percentage_random,
            align,
            span_start: w.offset_bytes,
            span_len: w.size_bytes,
            zones,
            seq_start,
            seq_end: seq_start + region,
            cursor: seq_start,
            sector: sector as u64,
        }
    }

    /// The next I/O.
    #[inline]
    pub fn next_op(&mut self) -> IoOp {
        let dir = match self.read_pct {
            100 => Dir::Read,
            0 => Dir::Write,
            p => {
                if self.rng.u32(0..100) < p {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        let len = if self.bs.len() == 1 {
            self.bs[0].1
        } else {
            let r = self.rng.u32(0..100);
            self.bs
                .iter()
                .find(|(c, _)| r < *c)
                .map_or(self.bs[0].1, |b| b.1)
        };
        let random =
            self.random && (self.random_pct == 100 || self.rng.u32(0..100) < self.random_pct);
        let offset = if random {
            self.random_offset(len as u64)
        } else {
            self.seq_offset(len as u64)
        };
        IoOp { dir, offset, len }
    }

    #[inline]
    fn random_offset(&mut self, len: u64) -> u64 {
        let (start, span) = if self.zones.is_empty() {
            (self.span_start, self.span_len)
        } else {
            let r = self.rng.u64(0..1 << 32);
            let z = self
                .zones
                .iter()
                .find(|z| r < z.cum && z.len >= len)
                .or_else(|| self.zones.iter().rev().find(|z| z.len >= len))
                .unwrap_or(&self.zones[0]);
            (z.start, z.len)
        };
        let slots = (span.saturating_sub(len)) / self.align + 1;
        start + self.rng.u64(0..slots) * self.align
    }

    #[inline]
    fn seq_offset(&mut self, len: u64) -> u64 {
        if self.cursor + len > self.seq_end {
            self.cursor = self.seq_start;
        }
        let off = self.cursor;
        self.cursor += len;
        off
    }

    /// Shorten the last I/O of a byte-bounded job to what is left (whole sectors).
    pub fn clip(&self, op: &mut IoOp, left: u64) {
        if (op.len as u64) > left {
            op.len = (left / self.sector * self.sector) as u32;
        }
    }

    /// Random u64 for the data source (shares the job's seeded stream).
    #[inline]
    pub fn rng(&mut self) -> &mut fastrand::Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
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
            align_bytes: 4096,
            continue_on_error: false,
            fixedbufs: false,
            registerfiles: false,
            iodepth_batch_submit: 0,
        }
    }

    #[test]
    fn random_offsets_aligned_inside_span_and_mix_holds() {
        let w = workload(RwMode::RandRw, 1);
        let mut g = OpGen::new(&w, 0, 512);
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
            let mut g = OpGen::new(&w, j, 512);
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
        let mut g = OpGen::new(&w, 0, 512);
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
}
