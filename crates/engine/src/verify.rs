//! Data verification (`--verify`): every block a verifying run writes carries a header,
//! and a verify pass reads each block back and says what it found.
//!
//! The header is built on the per-sector stamp of `data` (8 bytes at the start of every
//! 512-byte sector: the sector's number and the write's sequence): the first sector of a
//! block carries, after its stamp, a magic, the block's offset and length, the job, the
//! run's seed, the write's generation (the job's write sequence number) and a CRC-32C of
//! the whole block (the checksum field taken as absent). The rest of the block keeps the
//! data pattern, so random data stays incompressible.
//!
//! What was written where is not stored: the verify pass replays each job's seeded
//! generator for the number of writes the job made (recorded in the result), which gives
//! every write's offset, generation and content. A block whose bytes differ from its last
//! write is classified ([`Class`]) with the first byte that differs. The pass itself, on
//! the workload's backend, is [`crate::verify_pass`].

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::block_header::*;
use crate::data::DataPool;
use crate::gen::OpGen;
use crate::op::Dir;
use crate::spec::Workload;

/// Mismatches listed in full; beyond this only counted.
pub const LISTED_MISMATCHES: usize = 20;

/// What a block that is not as last written holds instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Zeros throughout (a lost write on a fresh or trimmed block).
    Zeros,
    /// An intact earlier write of the same block (a lost or reordered write).
    Older,
    /// An intact block of this run meant for another offset (a misdirected write).
    Misdirected,
    /// Parts of two different writes (by the per-sector stamps: the first sectors of one
    /// write, the rest of another): a write in flight at a cut.
    Torn,
    /// Bad checksum, every sector stamped by one write: the header names a write, the
    /// content differs from it (silent corruption, bit rot, a bridge that flips bytes).
    Corrupt,
    /// Anything else: no header, another run's block.
    Foreign,
}

impl Class {
    /// The class's name, as in JSON (`torn`, `zeros`, ...): the terminal says the same.
    pub fn name(self) -> &'static str {
        match self {
            Class::Zeros => "zeros",
            Class::Older => "older",
            Class::Misdirected => "misdirected",
            Class::Torn => "torn",
            Class::Corrupt => "corrupt",
            Class::Foreign => "foreign",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One write the run made, as the replay gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub job: u32,
    pub generation: u64,
    /// The random number that chose the write's content.
    pub pick: u64,
}

/// One block found not as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    pub offset_bytes: u64,
    pub class: Class,
    pub expected_generation: u64,
    /// From the block's header; null when it has none.
    pub found_generation: Option<u64>,
    /// Where an intact block found here says it belongs (misdirected).
    pub found_offset_bytes: Option<u64>,
    /// The target's byte offset of the first byte that differs from the write.
    pub first_bad_byte_offset_bytes: u64,
}

/// Compare `found` (read at `offset`) with `expected` (the last write's bytes, made by
/// `last`): None when equal, else the mismatch and its class.
pub fn classify(
    offset: u64,
    found: &[u8],
    expected: &[u8],
    last: Written,
    seed: u64,
) -> Option<Mismatch> {
    let first = found.iter().zip(expected).position(|(a, b)| a != b)?;
    let h = header(found);
    let intact = h.filter(|h| h.len as usize == found.len() && h.crc == block_crc(found));
    let class = if found.iter().all(|&b| b == 0) {
        Class::Zeros
    } else if h.is_some_and(|h| !of_this_run(h, seed, found.len()))
        && found[HEADER_BYTES..] != expected[HEADER_BYTES..]
    {
        // Another run's header (its seed, or a write length this run never made) over
        // content that is not this write's: another run's block. The same content under
        // a damaged header is this write, corrupted (below).
        Class::Foreign
    } else if h.is_some() && intact.is_none() {
        if stamped_by_two_writes(offset, found) {
            Class::Torn
        } else {
            Class::Corrupt
        }
    } else {
        match intact {
            Some(h) if h.seed != seed => Class::Foreign,
            Some(h) if h.offset != offset => Class::Misdirected,
            Some(h) if h.job == last.job && h.generation < last.generation => Class::Older,
            _ => Class::Foreign,
        }
    };
    Some(Mismatch {
        offset_bytes: offset,
        class,
        expected_generation: last.generation,
        found_generation: h.map(|h| h.generation),
        found_offset_bytes: intact.map(|h| h.offset).filter(|&o| o != offset),
        first_bad_byte_offset_bytes: offset + first as u64,
    })
}

/// Whether header `h` can be one this run wrote into a block of `len` bytes: the run's
/// seed and its (one) block size. Another run's block, read at this run's block size,
/// carries its own seed and length (its CRC-32C covers bytes this block does not hold).
fn of_this_run(h: Header, seed: u64, len: usize) -> bool {
    h.seed == seed && h.len as usize == len
}

/// Whether the sectors of `found` (read at `offset`) that are stamped for their own place
/// carry two different write sequences: the block holds parts of two writes.
fn stamped_by_two_writes(offset: u64, found: &[u8]) -> bool {
    let stride = crate::data::STAMP_STRIDE;
    let mut seqs = found
        .chunks_exact(stride)
        .zip((offset..).step_by(stride))
        .filter(|(s, at)| crate::data::stamped_offset(s) == *at)
        .map(|(s, _)| crate::data::stamped_seq(s));
    let first = seqs.next();
    seqs.any(|q| Some(q) != first)
}

/// Blocks found per class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCounts {
    pub zeros: u64,
    pub older: u64,
    pub misdirected: u64,
    pub torn: u64,
    /// Absent from documents made before the class existed (their corrupt blocks are
    /// counted as torn there).
    #[serde(default)]
    pub corrupt: u64,
    pub foreign: u64,
}

impl ClassCounts {
    /// Add another count's blocks (every field named: a new class must be summed here).
    pub fn add_all(&mut self, o: &ClassCounts) {
        let ClassCounts {
            zeros,
            older,
            misdirected,
            torn,
            corrupt,
            foreign,
        } = o;
        self.zeros += zeros;
        self.older += older;
        self.misdirected += misdirected;
        self.torn += torn;
        self.corrupt += corrupt;
        self.foreign += foreign;
    }

    pub fn add(&mut self, c: Class) {
        *match c {
            Class::Zeros => &mut self.zeros,
            Class::Older => &mut self.older,
            Class::Misdirected => &mut self.misdirected,
            Class::Torn => &mut self.torn,
            Class::Corrupt => &mut self.corrupt,
            Class::Foreign => &mut self.foreign,
        } += 1;
    }
}

/// What a verifying run wrote (enough to replay it) and what its verify pass found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Writes each job made, in order: job `j` wrote generations `0..writes_per_job[j]`.
    pub writes_per_job: Vec<u64>,
    /// Blocks read back (the distinct blocks written); null when no pass ran.
    pub blocks_checked: Option<u64>,
    /// Blocks not as last written; null when no pass ran.
    pub blocks_bad: Option<u64>,
    pub classes: ClassCounts,
    /// The first mismatches by offset (at most 20).
    pub mismatches: Vec<Mismatch>,
    /// Why the pass could not run or stopped (a read error).
    pub error: Option<String>,
    /// The run's read-back pass: how long it took (its reads are in the run's series and
    /// totals); null when none ran, and in `drivelab verify`'s own document. Absent from
    /// result documents before schema 3.
    #[serde(default)]
    pub pass_ns: Option<u64>,
    /// The index of the pass's first interval in the run's series (the intervals from it
    /// on are the pass's reads, not the workload's); null when no pass ran.
    #[serde(default)]
    pub pass_first_index: Option<u64>,
    /// `--verify-backlog`: blocks read back and checked during the run (their reads are
    /// in the series and totals with the workload's); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_blocks_checked: Option<u64>,
    /// Of them, blocks not as written (listed in `mismatches`, counted in `classes`; the
    /// first stops the run); absent without `--verify-backlog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_blocks_bad: Option<u64>,
}

impl VerifyResult {
    /// A run's record before its pass.
    pub fn unchecked(writes_per_job: Vec<u64>) -> VerifyResult {
        VerifyResult {
            writes_per_job,
            blocks_checked: None,
            blocks_bad: None,
            classes: ClassCounts::default(),
            mismatches: Vec::new(),
            error: None,
            pass_ns: None,
            pass_first_index: None,
            backlog_blocks_checked: None,
            backlog_blocks_bad: None,
        }
    }

    /// Count what the run's check reads (`--verify-backlog`) found: their mismatches
    /// come first in the list.
    pub fn with_backlog(mut self, found: BacklogFound) -> Self {
        self.backlog_blocks_checked = Some(found.checked);
        self.backlog_blocks_bad = Some(found.bad);
        let pass = std::mem::replace(&mut self.classes, found.classes);
        self.classes.add_all(&pass);
        let mut listed = found.mismatches;
        listed.extend(std::mem::take(&mut self.mismatches));
        listed.truncate(LISTED_MISMATCHES);
        self.mismatches = listed;
        self
    }

    /// Whether the pass ran and found every block as written (and the run's check
    /// reads too).
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self.blocks_bad == Some(0)
            && self.backlog_blocks_bad.unwrap_or(0) == 0
    }

    /// One line for a failed run.
    pub fn failure(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(format!("verify: {e}"));
        }
        if let Some(m) = self
            .backlog_blocks_bad
            .filter(|&b| b > 0)
            .map(|_| &self.mismatches[0])
        {
            return Some(format!(
                "verify: a block read back during the run (--verify-backlog) is not as written: at byte {} ({}, generation {} expected)",
                m.first_bad_byte_offset_bytes, m.class, m.expected_generation
            ));
        }
        let bad = self.blocks_bad.filter(|&b| b > 0)?;
        let m = &self.mismatches[0];
        Some(format!(
            "verify: {bad} of {} blocks not as written; first at byte {} ({})",
            self.blocks_checked.unwrap_or(0),
            m.first_bad_byte_offset_bytes,
            m.class
        ))
    }
}

/// Why a workload cannot be verified (one line naming the option), or Ok.
pub fn check_workload(w: &Workload) -> Result<(), String> {
    if !w.writes() {
        return Err(
            "--verify: needs a workload that writes (--rw write, randwrite, rw or randrw)".into(),
        );
    }
    if w.bs.len() != 1 || w.bs[0].bytes < 512 || !w.bs[0].bytes.is_multiple_of(512) {
        return Err("--verify: needs one block size, a multiple of 512 bytes, like --bs 4k".into());
    }
    if !matches!(
        w.data,
        crate::spec::DataPattern::Random | crate::spec::DataPattern::Compress(_)
    ) {
        return Err("--verify: needs --data random or compress=N (content made per write)".into());
    }
    Ok(())
}

/// The last write to each block, replayed from the seeded generators: block offset →
/// the last write of each job that wrote it (jobs writing one block in an order the run
/// does not fix, any of them may be found).
pub fn plan(w: &Workload, writes_per_job: &[u64]) -> HashMap<u64, Vec<Written>> {
    let mut last: HashMap<u64, Vec<Written>> = HashMap::new();
    for (job, &writes) in writes_per_job.iter().enumerate() {
        let mut gen = OpGen::new(w, job as u32);
        let mut generation = 0;
        while generation < writes {
            let op = gen.next_op();
            if op.dir != Dir::Write {
                continue;
            }
            let pick = gen.data_rng().u64(..);
            let wr = Written {
                job: job as u32,
                generation,
                pick,
            };
            let v = last.entry(op.offset).or_default();
            match v.iter_mut().find(|x| x.job == wr.job) {
                Some(x) => *x = wr,
                None => v.push(wr),
            }
            generation += 1;
        }
    }
    last
}

/// The bytes write `wr` put at `offset` (its block filled as the run filled it).
pub fn expected(pool: &DataPool, seed: u64, offset: u64, wr: Written, block: &mut [u8]) {
    pool.fill_write(block, offset, wr.pick, wr.generation);
    seal(block, offset, seed, wr.job, wr.generation);
}

/// Whether an intact older generation found in place of `last` was in flight with it
/// (fewer than `iodepth` writes apart in one job), so that either may have landed last.
pub fn in_flight_together(m: &Mismatch, last: Written, iodepth: u32) -> bool {
    m.class == Class::Older
        && m.found_generation
            .is_some_and(|g| last.generation - g < u64::from(iodepth.max(1)))
}

/// The most bytes the pass reads at once: blocks written next to each other are read
/// together (a sequential run's pass makes one read per MiB, not one per block).
pub const READ_BYTES: usize = 1 << 20;

/// `blocks` (sorted by offset, `bs` bytes each) cut into runs of adjacent blocks of at
/// most `most` blocks.
pub(crate) fn adjacent_runs(
    blocks: &[(u64, Vec<Written>)],
    bs: u64,
    most: usize,
) -> impl Iterator<Item = &[(u64, Vec<Written>)]> {
    let mut rest = blocks;
    std::iter::from_fn(move || {
        let first = rest.first()?.0;
        let n = rest
            .iter()
            .take(most)
            .enumerate()
            .take_while(|(i, b)| b.0 == first + *i as u64 * bs)
            .count();
        let (run, tail) = rest.split_at(n);
        rest = tail;
        Some(run)
    })
}

/// What `found` at `offset` is against the last writes of each job there: None when it
/// is one of them (or an older write in flight with it), else the mismatch that says
/// most (against the job whose header it carries).
pub(crate) fn worst_mismatch(
    w: &Workload,
    pool: &DataPool,
    offset: u64,
    found: &[u8],
    writes: &[Written],
    exp: &mut [u8],
) -> Option<Mismatch> {
    // Fast path, fio's `verify=crc32c` guarantee: a header naming this block, this run
    // and one of the writes expected here, over a block its CRC-32C matches, is that
    // write (its content is a function of those fields). Only a block that fails this
    // is regenerated and compared byte by byte, to classify it and find its first bad byte.
    if header(found).is_some_and(|h| {
        h.offset == offset
            && h.len as usize == found.len()
            && h.seed == w.randseed
            && writes
                .iter()
                .any(|x| x.job == h.job && x.generation == h.generation)
            && h.crc == block_crc(found)
    }) {
        return None;
    }
    let mut worst = None;
    for &wr in writes {
        expected(pool, w.randseed, offset, wr, exp);
        match classify(offset, found, exp, wr, w.randseed) {
            None => return None,
            // Writes of one job to one block in flight together land in either order.
            Some(m) if in_flight_together(&m, wr, w.iodepth) => return None,
            Some(m) => {
                let same_job = header(found).is_some_and(|h| h.job == wr.job);
                if worst.is_none() || same_job {
                    worst = Some(m);
                }
            }
        }
    }
    worst
}

/// A failed read-back in words: a target that ends before the blocks says so.
pub(crate) fn read_error(e: &std::io::Error, len: usize, offset: u64) -> String {
    let end = offset + len as u64;
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => format!(
            "the target ends before byte {end}, the end of the {len} bytes written from byte {offset} (cut shorter since the run?)"
        ),
        _ => format!("reading back the {len} bytes written from byte {offset} failed ({e})"),
    }
}

/// What a job's backlog found (`--verify-backlog`, [`crate::verify_backlog`]; summed over jobs in the run's verify result).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BacklogFound {
    /// Blocks read back and compared.
    pub checked: u64,
    /// Blocks not as written.
    pub bad: u64,
    pub classes: ClassCounts,
    /// The first mismatches (at most [`LISTED_MISMATCHES`]).
    pub mismatches: Vec<Mismatch>,
}

impl BacklogFound {
    /// Add another job's findings.
    pub fn add(&mut self, o: BacklogFound) {
        self.checked += o.checked;
        self.bad += o.bad;
        self.classes.add_all(&o.classes);
        for m in o.mismatches {
            if self.mismatches.len() < LISTED_MISMATCHES {
                self.mismatches.push(m);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DataPattern;

    const SEED: u64 = 42;

    fn block(pool: &DataPool, offset: u64, job: u32, generation: u64) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        let wr = Written {
            job,
            generation,
            pick: generation.wrapping_mul(77),
        };
        expected(pool, SEED, offset, wr, &mut b);
        b
    }

    fn wr(generation: u64) -> Written {
        Written {
            job: 0,
            generation,
            pick: generation.wrapping_mul(77),
        }
    }

    #[test]
    fn each_class_is_told_apart() {
        let pool = DataPool::new(DataPattern::Random, 4096, SEED, true);
        let off = 8192;
        let good = block(&pool, off, 0, 5);
        assert_eq!(classify(off, &good, &good, wr(5), SEED), None);
        let c = |found: &[u8]| classify(off, found, &good, wr(5), SEED).unwrap();

        let zeros = c(&[0u8; 4096]);
        assert_eq!((zeros.class, zeros.found_generation), (Class::Zeros, None));

        let old = c(&block(&pool, off, 0, 3));
        assert_eq!((old.class, old.found_generation), (Class::Older, Some(3)));
        assert_eq!(old.expected_generation, 5);
        // Generations 3 and 5 may have been in flight together at a depth above 2.
        assert!(!in_flight_together(&old, wr(5), 1));
        assert!(!in_flight_together(&old, wr(5), 2));
        assert!(in_flight_together(&old, wr(5), 3));

        let elsewhere = c(&block(&pool, 3 * 4096, 0, 5));
        assert_eq!(elsewhere.class, Class::Misdirected);
        assert_eq!(elsewhere.found_offset_bytes, Some(3 * 4096));
        // The stamp of the first sector already names the other offset.
        assert_eq!(elsewhere.first_bad_byte_offset_bytes, off);

        // A flipped byte in a block one write stamped throughout: corrupt, not torn.
        let mut flipped = good.clone();
        flipped[1000] ^= 0x40;
        let t = c(&flipped);
        assert_eq!(t.class, Class::Corrupt);
        assert_eq!(t.first_bad_byte_offset_bytes, off + 1000);
        assert_eq!(t.found_generation, Some(5));
        // A few bytes, the header's generation among them: still one write's sectors.
        let mut few = good.clone();
        few[40] ^= 1;
        few[3000] ^= 0xFF;
        assert_eq!(c(&few).class, Class::Corrupt);

        // The first sectors of generation 5, the rest of generation 4: torn.
        let mut half = good.clone();
        half[2048..].copy_from_slice(&block(&pool, off, 0, 4)[2048..]);
        assert_eq!(c(&half).class, Class::Torn);
        // The first sector of generation 4 (its header), the rest of 5: torn too.
        let mut head = good.clone();
        head[..512].copy_from_slice(&block(&pool, off, 0, 4)[..512]);
        assert_eq!(c(&head).class, Class::Torn);

        let foreign = c(&[0x5Au8; 4096]);
        assert_eq!(
            (foreign.class, foreign.found_generation),
            (Class::Foreign, None)
        );
        let other_run = {
            let mut b = vec![0u8; 4096];
            pool.fill_write(&mut b, off, 1, 5);
            seal(&mut b, off, SEED + 1, 0, 5);
            b
        };
        assert_eq!(c(&other_run).class, Class::Foreign);
    }

    /// The first 4 KiB of a `len`-byte write made by a run seeded `seed` at `off`.
    fn head_of_write(seed: u64, len: usize, off: u64, generation: u64) -> Vec<u8> {
        let pool = DataPool::new(DataPattern::Random, len as u32, seed, true);
        let mut b = vec![0u8; len];
        pool.fill_write(&mut b, off, generation.wrapping_mul(31), generation);
        seal(&mut b, off, seed, 0, generation);
        b.truncate(4096);
        b
    }

    #[test]
    fn another_runs_larger_blocks_are_foreign_not_corrupt() {
        let pool = DataPool::new(DataPattern::Random, 4096, SEED, true);
        let off = 128 << 10;
        let good = block(&pool, off, 0, 32);
        let c = |found: &[u8]| classify(off, found, &good, wr(32), SEED).unwrap();
        // Another run (its seed) wrote 128 KiB blocks: the 4 KiB at a 128 KiB boundary
        // holds its header, whose CRC covers bytes this block does not hold.
        let theirs = c(&head_of_write(SEED + 7, 128 << 10, off, 1));
        assert_eq!(theirs.class, Class::Foreign);
        assert_eq!(theirs.found_generation, Some(1));
        // The same seed (a fixed --randseed) and another block size: a write this run,
        // whose blocks are all 4 KiB, never made.
        assert_eq!(c(&head_of_write(SEED, 8192, off, 16)).class, Class::Foreign);
        // A smaller block of another run, intact, at this block's start: foreign too.
        let mut small = head_of_write(SEED + 7, 4096, off, 3);
        small.truncate(512);
        small.resize(4096, 0x33);
        assert_eq!(c(&small).class, Class::Foreign);
        // This run's own write with its header's seed or length damaged: the content is
        // the write's, so it is corrupt, not foreign.
        for at in [24, 32] {
            let mut hurt = good.clone();
            hurt[at] ^= 0x01;
            let m = c(&hurt);
            assert_eq!(m.class, Class::Corrupt, "byte {at}");
            assert_eq!(m.first_bad_byte_offset_bytes, off + at as u64);
        }
    }

    #[test]
    fn a_block_bad_during_the_run_fails_it_first_and_is_listed_first() {
        let m = |offset: u64, class| Mismatch {
            offset_bytes: offset,
            class,
            expected_generation: 3,
            found_generation: None,
            found_offset_bytes: None,
            first_bad_byte_offset_bytes: offset + 9,
        };
        let mut found = BacklogFound {
            checked: 40,
            bad: 1,
            ..Default::default()
        };
        found.classes.add(Class::Zeros);
        found.mismatches.push(m(8192, Class::Zeros));
        // No pass ran (the run stopped at the block).
        let v = VerifyResult::unchecked(vec![41]).with_backlog(found.clone());
        assert_eq!(
            (v.backlog_blocks_checked, v.backlog_blocks_bad),
            (Some(40), Some(1))
        );
        assert!(!v.passed());
        let why = v.failure().unwrap();
        assert!(
            why.contains("--verify-backlog") && why.contains("8201 (zeros"),
            "{why}"
        );
        // With a pass: both counted, the run's first.
        let mut pass = VerifyResult::unchecked(vec![41]);
        pass.blocks_checked = Some(41);
        pass.blocks_bad = Some(1);
        pass.classes.add(Class::Corrupt);
        pass.mismatches.push(m(0, Class::Corrupt));
        let v = pass.with_backlog(found);
        assert_eq!((v.classes.zeros, v.classes.corrupt), (1, 1));
        assert_eq!(v.mismatches[0].offset_bytes, 8192);
        assert_eq!(v.mismatches.len(), 2);
        // Without the option the JSON is as before: no backlog keys.
        let plain = serde_json::to_value(VerifyResult::unchecked(vec![1])).unwrap();
        assert!(plain.get("backlog_blocks_checked").is_none());
    }

    #[test]
    fn class_names_are_the_json_names() {
        for c in [
            Class::Zeros,
            Class::Older,
            Class::Misdirected,
            Class::Torn,
            Class::Corrupt,
            Class::Foreign,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
            assert_eq!(c.to_string(), c.name());
        }
    }

    #[test]
    fn the_header_round_trips_and_the_data_stays_random() {
        let pool = DataPool::new(DataPattern::Random, 4096, SEED, true);
        let b = block(&pool, 1 << 20, 3, 9);
        let h = header(&b).unwrap();
        assert_eq!(
            (h.offset, h.len, h.job, h.seed, h.generation),
            (1 << 20, 4096, 3, SEED, 9)
        );
        assert_eq!(h.crc, block_crc(&b));
        // The sector stamps are kept.
        for (i, s) in b.chunks(512).enumerate() {
            assert_eq!(crate::data::stamped_offset(s), (1 << 20) + 512 * i as u64);
        }
    }

    #[test]
    fn adjacent_blocks_are_read_together_up_to_the_limit() {
        let b = |o: u64| (o * 4096, vec![wr(o)]);
        let blocks: Vec<_> = [0, 1, 2, 3, 5, 6, 9].into_iter().map(b).collect();
        let runs: Vec<Vec<u64>> = adjacent_runs(&blocks, 4096, 3)
            .map(|r| r.iter().map(|x| x.0 / 4096).collect())
            .collect();
        assert_eq!(runs, vec![vec![0, 1, 2], vec![3], vec![5, 6], vec![9]]);
    }

    #[test]
    fn the_plan_replays_the_last_write_of_each_block() {
        let mut w = crate::gen::tests::workload(crate::spec::RwMode::RandWrite, 1);
        w.size_bytes = 64 * 4096;
        let plan = plan(&w, &[500]);
        assert!(plan.len() <= 64 && plan.len() > 32);
        assert_eq!(plan.values().map(|v| v.len()).sum::<usize>(), plan.len());
        // The highest generation is the last write: generation 499 is in the plan.
        assert!(plan.values().flatten().any(|x| x.generation == 499));
        // Replaying again gives the same picks.
        assert_eq!(plan, super::plan(&w, &[500]));
    }
}
