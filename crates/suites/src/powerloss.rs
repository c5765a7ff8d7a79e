//! `powerloss`: does the drive keep what a completed flush made durable? (issue 27)
//!
//! The write phase writes numbered blocks in rounds over a ring of slots at the start of
//! the target, each block carrying the verify header (`drivelab_engine::verify`: its
//! offset, the run's seed, its generation — the round — and a CRC-32C). A round is
//! announced in a journal on another filesystem before its writes (`begin`: its
//! generation and block ranges) and, once its flush (fsync / FLUSH) completed or its FUA
//! writes all returned, marked durable (`flushed`; with FUA writes each one that
//! returned, `acknowledged`); every record is fsynced before the next write, and the
//! phase's end is recorded (`ended`: how, and which blocks of its last round were
//! issued). The user cuts the power at any moment; the check reads every journalled
//! block back and classes it:
//!
//! - durable: it holds its last flushed write, or the newer write of the round in flight;
//! - lost after a completed flush: it holds less than its last flushed write (zeros, an
//!   older generation, foreign data, or a torn block when no write to it was in flight):
//!   the defect;
//! - unacknowledged lost: the round in flight at the cut never reached it (allowed);
//! - torn: a write in flight at the cut left it half written (header and checksum
//!   disagree);
//! - misdirected: it holds an intact block of this run meant for another offset;
//! - overwritten by another run: another drivelab run's write (not tested).
//!
//! A cycle tests nothing (inconclusive) when a signal, not a cut, ended its write phase,
//! when the target was formatted since, or, on a simulated drive, when the counts differ
//! from the model's truth.
//!
//! A simulated drive (`sim:…,write_cache=volatile,flush=ignored,power_cut=T`) is cut by
//! its model at virtual time T: the run writes until then and checks at once, in one
//! process (the model's medium lives only in it), against the model's truth.
//!
//! Whether the power was cut at all is [`evidence`]'s: a cycle that shows no cut tested
//! nothing, whatever its blocks say.

pub mod evidence;
pub mod signature;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use drivelab_engine::block_header;
use drivelab_engine::buf::AlignedBuf;
use drivelab_engine::data::DataPool;
use drivelab_engine::spec::DataPattern;
use drivelab_engine::target::Target;
use drivelab_engine::verify::{self, Class, ClassCounts, Mismatch, Written};

pub use evidence::{CutEvidence, DriveId, Evidence, PowerState};
pub use signature::{Probe, Signature};

/// The suite's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerLoss {
    /// Rounds to write (the write phase ends earlier when the power goes): 1000.
    pub rounds: u64,
    /// Blocks per round: 256.
    pub round_blocks: u64,
    /// Rounds the ring of slots holds, so a slot is rewritten every this many rounds
    /// (an older generation is there to be found): 8.
    pub ring_rounds: u64,
    /// Bytes per block: 4096.
    pub block_bytes: u32,
    /// Each round made of FUA writes (`RWF_DSYNC`) instead of writes and a flush.
    pub fua: bool,
    /// The seed in every block's header (the run's, told from other runs' blocks).
    pub seed: u64,
}

/// The journal's records, one JSON object a line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    /// The run's knobs and its target, first in the journal.
    Start {
        knobs: PowerLoss,
        target: String,
        /// The bundle the check writes into.
        bundle: Option<String>,
    },
    /// A round is about to be written: `generation` into each `[first_block, blocks]`.
    Begin {
        round: u64,
        generation: u64,
        ranges: Vec<[u64; 2]>,
    },
    /// The round's flush completed (or its FUA writes all returned): it is durable.
    Flushed { round: u64 },
    /// With `--fua`: the round's first `blocks` blocks (in the order of its ranges) were
    /// written and each write returned: each a FUA write, durable. Appended and fsynced
    /// after the write returned, before the next one is issued.
    Acknowledged { round: u64, blocks: u64 },
    /// The write phase ended (`end` says how) with the first `issued_blocks` blocks of
    /// its last round, `round`, issued (their writes sent, returned or not); the round's
    /// other blocks were never written. Absent when the process itself died (the host's
    /// power cut): then every block of the round in flight may have been written.
    Ended {
        round: u64,
        issued_blocks: u64,
        end: WriteEnd,
    },
    /// A check ran: the next cycle's blocks are checked apart from this one's.
    Checked { cycle: u64 },
    /// A cycle's write phase starts (before its first round, after the start record for
    /// the first): what can show its power cut later, and the drive written to (a block
    /// device's; null for a file). Journals without it are read as "unknown".
    Cycle {
        cycle: u64,
        drive: Option<DriveId>,
        power: PowerState,
        /// What the target's start held before the rounds (a filesystem, swap…): one
        /// there at the check that was not is newer than the run. Null in journals from
        /// before drivelab recorded it.
        #[serde(default)]
        signature: Option<Probe>,
    },
}

/// Journals larger than this are refused (a million rounds' records).
const MAX_JOURNAL_BYTES: u64 = 256 << 20;

/// Blocks' slots and the generation of each round.
impl PowerLoss {
    pub fn new(seed: u64) -> PowerLoss {
        PowerLoss {
            rounds: 1000,
            round_blocks: 256,
            ring_rounds: 8,
            block_bytes: 4096,
            fua: false,
            seed,
        }
    }

    /// One line naming the option for knobs that cannot run.
    pub fn validate(&self) -> Result<(), String> {
        if self.rounds == 0 || self.rounds > 1 << 32 {
            return Err("--rounds: expected a count from 1 to 4294967296, like 1000".into());
        }
        if self.round_blocks == 0 || self.round_blocks > 1 << 20 {
            return Err("--round-blocks: expected a count from 1 to 1048576, like 256".into());
        }
        if self.block_bytes < 4096
            || self.block_bytes > 1 << 20
            || !self.block_bytes.is_multiple_of(4096)
        {
            return Err("--bs: expected a multiple of 4096 bytes up to 1 MiB, like 4k".into());
        }
        if self.ring_rounds == 0 || self.ring_rounds > 1 << 16 {
            return Err("ring_rounds: expected a count from 1 to 65536, like 8".into());
        }
        Ok(())
    }

    /// Blocks in the ring.
    pub fn ring_blocks(&self) -> u64 {
        self.round_blocks * self.ring_rounds.max(1)
    }

    /// Bytes of the target the ring takes (from offset 0).
    pub fn ring_bytes(&self) -> u64 {
        self.ring_blocks() * self.block_bytes as u64
    }

    /// The block ranges `[first, count]` round `round` writes (the ring wraps).
    fn ranges(&self, round: u64) -> Vec<[u64; 2]> {
        let ring = self.ring_blocks();
        let first = (round * self.round_blocks) % ring;
        let head = self.round_blocks.min(ring - first);
        let mut v = vec![[first, head]];
        if head < self.round_blocks {
            v.push([0, self.round_blocks - head]);
        }
        v
    }

    /// The bytes round `generation` writes at `block` (of `pool`, this run's random
    /// data: [`PowerLoss::pool`]).
    pub fn block_content(&self, pool: &DataPool, block: u64, generation: u64, buf: &mut [u8]) {
        let offset = block * self.block_bytes as u64;
        verify::expected(
            pool,
            self.seed,
            offset,
            self.written(block, generation),
            buf,
        );
    }

    /// The run's data pool.
    pub fn pool(&self) -> std::sync::Arc<DataPool> {
        DataPool::new(DataPattern::Random, self.block_bytes, self.seed, true)
    }

    fn written(&self, block: u64, generation: u64) -> Written {
        Written {
            job: 0,
            generation,
            pick: block.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ generation,
        }
    }
}

/// The journal, appended to and fsynced record by record.
pub struct Journal {
    file: File,
}

impl Journal {
    /// Create the journal at `path` (never over an existing file), refused on the
    /// target's own filesystem or disk (it must survive the power cut the target sees).
    pub fn create(path: &Path, target: Option<&Path>) -> Result<Journal, String> {
        check_journal_path(path, target)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => format!(
                    "--journal {}: exists; give a new file (a journal is never overwritten)",
                    path.display()
                ),
                _ => format!("--journal {}: {e}", path.display()),
            })?;
        Ok(Journal { file })
    }

    /// Reopen an existing journal to append (a check's mark).
    pub fn append_to(path: &Path) -> Result<Journal, String> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| format!("--check {}: {e}", path.display()))?;
        Ok(Journal { file })
    }

    /// Append one record and make it durable before returning.
    pub fn append(&mut self, r: &Record) -> Result<(), String> {
        let mut line = serde_json::to_vec(r).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.sync_data())
            .map_err(|e| format!("writing the journal: {e}"))
    }
}

/// Refuse a journal path that exists or lies on the target's own disk (before anything
/// is opened).
pub fn check_journal_path(path: &Path, target: Option<&Path>) -> Result<(), String> {
    if path.symlink_metadata().is_ok() {
        return Err(format!(
            "--journal {}: exists; give a new file (a journal is never overwritten)",
            path.display()
        ));
    }
    match target {
        Some(t) => refuse_same_device(path, t),
        None => Ok(()),
    }
}

/// Read a journal's records (a regular file of bounded size). A last line cut short by
/// the power cut is left out.
pub fn read_journal(path: &Path) -> Result<Vec<Record>, String> {
    let name = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("--check {name}: {e}"))?;
    if !meta.is_file() || meta.len() > MAX_JOURNAL_BYTES {
        return Err(format!(
            "--check {name}: expected a powerloss journal (a regular file under 256 MiB)"
        ));
    }
    let f = File::open(path).map_err(|e| format!("--check {name}: {e}"))?;
    let lines: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--check {name}: {e}"))?;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Record>(l) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => return Err(format!("--check {name}: line {}: {e}", i + 1)),
        }
    }
    match out.first() {
        Some(Record::Start { knobs, .. }) => knobs.validate(),
        _ => Err("not a powerloss journal (no start record)".into()),
    }
    .and_then(|_| expectations(&out))
    .map_err(|e| format!("--check {name}: {e}"))?;
    Ok(out)
}

/// The device a path's data lives on: a block device's own number, else its
/// filesystem's; a partition counts as its whole disk (a power cut takes both).
fn disk_of(path: &Path) -> Option<u64> {
    disk_at(path, 0)
}

/// [`disk_of`], `depth` loop devices down.
fn disk_at(path: &Path, depth: u32) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    // A file not made yet lives where its directory does.
    let m = std::fs::metadata(path)
        .or_else(|_| {
            std::fs::metadata(
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new(".")),
            )
        })
        .ok()?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let sys = format!("/sys/dev/block/{major}:{minor}");
    let whole = if Path::new(&sys).join("partition").exists() {
        let whole = std::fs::read_to_string(format!("{sys}/../dev")).ok()?;
        let (a, b) = whole.trim().split_once(':')?;
        rustix::fs::makedev(a.parse().ok()?, b.parse().ok()?)
    } else {
        dev
    };
    // A loop device lives where its backing file does: the journal must not be there.
    let (major, minor) = (rustix::fs::major(whole), rustix::fs::minor(whole));
    match std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/loop/backing_file")) {
        Ok(backing) if depth < 8 => disk_at(Path::new(backing.trim()), depth + 1),
        _ => Some(whole),
    }
}

/// Whether the journal `path` would be on a tmpfs (memory: pulling the host's plug
/// loses it).
pub fn journal_on_tmpfs(path: &Path) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // f_type's integer type differs between architectures.
    #[allow(clippy::unnecessary_cast)]
    let is_tmpfs = |s: rustix::fs::StatFs| s.f_type as i64 == TMPFS_MAGIC;
    rustix::fs::statfs(dir).is_ok_and(is_tmpfs)
}

fn refuse_same_device(journal: &Path, target: &Path) -> Result<(), String> {
    let dir = match journal.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (disk_of(dir), disk_of(target)) {
        (Some(a), Some(b)) if a == b => Err(format!(
            "--journal {}: on the target's own disk; put it on another drive, which keeps its power when the target's is cut",
            journal.display()
        )),
        _ => Ok(()),
    }
}

/// How the write phase ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteEnd {
    /// Every round was written and flushed.
    Done,
    /// The simulated drive's power was cut.
    PowerCut,
    /// A write or flush failed (the drive went away): the message.
    TargetFailed(String),
    /// Stopped by the user.
    Interrupted,
}

/// What the write phase did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WritePhase {
    pub rounds_started: u64,
    pub flushes_completed: u64,
    pub end: WriteEnd,
}

/// The target seen as blocks to write, flush and read, with a model's virtual clock.
struct Medium<'a> {
    target: &'a mut Target,
    now_ns: u64,
    fua: bool,
}

impl Medium<'_> {
    /// Write one block; Ok(false) when the model's power was cut before it completed.
    fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<bool> {
        if let Some(m) = self.target.model_mut() {
            let done = m.write_data(offset, data, self.now_ns);
            let done = if self.fua { m.flush_cache(done) } else { done };
            return Ok(self.advance(done));
        }
        let f = self.file()?;
        if self.fua {
            let flags = rustix::io::ReadWriteFlags::DSYNC;
            let n = rustix::io::pwritev2(f, &[std::io::IoSlice::new(data)], offset, flags)?;
            if n != data.len() {
                return Err(std::io::Error::other("short write"));
            }
            Ok(true)
        } else {
            f.write_all_at(data, offset).map(|_| true)
        }
    }

    /// Flush the drive's cache; Ok(false) when the power was cut before it completed.
    fn flush(&mut self) -> std::io::Result<bool> {
        if let Some(m) = self.target.model_mut() {
            let done = m.flush_cache(self.now_ns);
            return Ok(self.advance(done));
        }
        self.file()?.sync_data().map(|_| true)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if let Some(m) = self.target.model_mut() {
            self.now_ns = m.read_data(offset, buf, self.now_ns);
            return Ok(());
        }
        self.file()?.read_exact_at(buf, offset)
    }

    /// The model's clock moves to `done`; whether the power was still on then.
    fn advance(&mut self, done: u64) -> bool {
        self.now_ns = done;
        let Some(m) = self.target.model_mut() else {
            return true;
        };
        m.advance_to(done);
        !m.power_was_cut()
    }

    fn file(&self) -> std::io::Result<&File> {
        self.target
            .file()
            .ok_or_else(|| std::io::Error::other("the null target holds no data"))
    }
}

/// Make a target ready for the suite: a model keeps its data; the ring must fit.
pub fn prepare(k: &PowerLoss, target: &mut Target) -> Result<(), String> {
    k.validate()?;
    if target.info.span_bytes() < k.ring_bytes() {
        return Err(format!(
            "--round-blocks: the ring of {} blocks of {} bytes needs {} bytes; the target holds {}",
            k.ring_blocks(),
            k.block_bytes,
            k.ring_bytes(),
            target.info.span_bytes()
        ));
    }
    if let Some(m) = target.model_mut() {
        if !m.keep_content() {
            return Err("TARGET: this simulated drive keeps no data to check".into());
        }
    } else if target.file().is_none() {
        return Err("TARGET: the null target keeps no data; give a file, a device or sim:…".into());
    }
    Ok(())
}

/// Write rounds from generation `first_round` on until `k.rounds` are done, the power
/// goes, a write fails or `stop` is set, journalling each round (with `--fua` each
/// write that returned), then how the phase ended.
pub fn write_rounds(
    k: &PowerLoss,
    target: &mut Target,
    journal: &mut Journal,
    first_round: u64,
    stop: &AtomicBool,
) -> Result<WritePhase, String> {
    let mut m = Medium {
        target,
        now_ns: 0,
        fua: k.fua,
    };
    if let Some(model) = m.target.model() {
        m.now_ns = model.now_ns();
    }
    let mut phase = WritePhase {
        rounds_started: 0,
        flushes_completed: 0,
        end: WriteEnd::Done,
    };
    let pool = k.pool();
    let mut buf = AlignedBuf::new(k.block_bytes as usize);
    let mut last = (first_round, 0);
    for round in first_round..first_round + k.rounds {
        phase.rounds_started += 1;
        let (issued, end) = write_round(k, (&pool, &mut buf), &mut m, journal, round, stop)?;
        last = (round, issued);
        if let Some(end) = end {
            phase.end = end;
            break;
        }
        phase.flushes_completed += 1;
    }
    journal.append(&Record::Ended {
        round: last.0,
        issued_blocks: last.1,
        end: phase.end.clone(),
    })?;
    Ok(phase)
}

/// Write and flush one round, journalled: the blocks issued, and why the phase ends
/// here (None when the round's flush completed and was journalled).
fn write_round(
    k: &PowerLoss,
    (pool, buf): (&DataPool, &mut AlignedBuf),
    m: &mut Medium,
    journal: &mut Journal,
    round: u64,
    stop: &AtomicBool,
) -> Result<(u64, Option<WriteEnd>), String> {
    let failed = |e: std::io::Error| Some(WriteEnd::TargetFailed(e.to_string()));
    let ranges = k.ranges(round);
    journal.append(&Record::Begin {
        round,
        generation: round,
        ranges: ranges.clone(),
    })?;
    let mut issued = 0;
    for block in ranges.iter().flat_map(|r| r[0]..r[0] + r[1]) {
        if stop.load(Ordering::Relaxed) {
            return Ok((issued, Some(WriteEnd::Interrupted)));
        }
        k.block_content(pool, block, round, buf.as_mut_slice());
        issued += 1;
        match m.write(block * k.block_bytes as u64, buf.as_slice()) {
            Ok(true) if k.fua => journal.append(&Record::Acknowledged {
                round,
                blocks: issued,
            })?,
            Ok(true) => {}
            Ok(false) => return Ok((issued, Some(WriteEnd::PowerCut))),
            Err(e) => return Ok((issued, failed(e))),
        }
    }
    match if k.fua { Ok(true) } else { m.flush() } {
        Ok(true) => {}
        Ok(false) => return Ok((issued, Some(WriteEnd::PowerCut))),
        Err(e) => return Ok((issued, failed(e))),
    }
    journal.append(&Record::Flushed { round })?;
    Ok((issued, None))
}

/// A journalled block's state after the cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    Durable,
    /// Less than its last flushed write, found as the class says.
    LostAfterFlush(Class),
    UnacknowledgedLost,
    Torn,
    Misdirected,
    /// It holds a block of another run (another seed, this offset): a later run over
    /// the same target wrote it, not the drive's fault, and not tested.
    OverwrittenByAnotherRun,
}

/// What the journal says each block should hold: its last flushed generation and the
/// generation of the round in flight (not flushed) after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Expect {
    flushed: Option<u64>,
    pending: Option<u64>,
}

/// The knobs and each block's expectation in the journal's last cycle (after its last
/// check mark), in block order.
fn expectations(records: &[Record]) -> Result<(PowerLoss, BTreeMap<u64, Expect>), String> {
    let Some(Record::Start { knobs, .. }) = records.first() else {
        return Err("not a powerloss journal (no start record)".into());
    };
    let last_check = cycle_start(records);
    let mut begun: BTreeMap<u64, (u64, Vec<[u64; 2]>)> = BTreeMap::new();
    let mut blocks: BTreeMap<u64, Expect> = BTreeMap::new();
    for r in &records[last_check..] {
        match r {
            Record::Begin {
                round,
                generation,
                ranges,
            } => {
                let n = ranges.iter().map(|r| r[1]).fold(0u64, u64::saturating_add);
                if n > knobs.round_blocks {
                    return Err(format!(
                        "round {round} names {n} blocks, more than a round's {}",
                        knobs.round_blocks
                    ));
                }
                for b in blocks_of(ranges) {
                    if b >= knobs.ring_blocks() {
                        return Err(format!("round {round} names block {b}, outside the ring"));
                    }
                    blocks.entry(b).or_default().pending = Some(*generation);
                }
                begun.insert(*round, (*generation, ranges.clone()));
            }
            Record::Flushed { round } => {
                if let Some((generation, ranges)) = begun.remove(round) {
                    made_durable(&mut blocks, generation, blocks_of(&ranges));
                }
            }
            Record::Acknowledged { round, blocks: n } => {
                if let Some((generation, ranges)) = begun.get(round) {
                    let acked = blocks_of(ranges).take(usize::try_from(*n).unwrap_or(usize::MAX));
                    made_durable(&mut blocks, *generation, acked);
                }
            }
            Record::Ended {
                round,
                issued_blocks,
                ..
            } => {
                if let Some((generation, ranges)) = begun.get(round) {
                    let skip = usize::try_from(*issued_blocks).unwrap_or(usize::MAX);
                    never_issued(&mut blocks, *generation, blocks_of(ranges).skip(skip));
                }
            }
            Record::Start { .. } | Record::Checked { .. } | Record::Cycle { .. } => {}
        }
    }
    Ok((knobs.clone(), blocks))
}

/// The blocks of `[first, count]` ranges, in order.
fn blocks_of(ranges: &[[u64; 2]]) -> impl Iterator<Item = u64> + '_ {
    ranges.iter().flat_map(|r| r[0]..r[0].saturating_add(r[1]))
}

/// `blocks` now hold `generation` durably (a completed flush, or FUA writes returned).
fn made_durable(
    expect: &mut BTreeMap<u64, Expect>,
    generation: u64,
    blocks: impl Iterator<Item = u64>,
) {
    for b in blocks {
        let e = expect.entry(b).or_default();
        e.flushed = Some(generation);
        if e.pending == Some(generation) {
            e.pending = None;
        }
    }
}

/// `generation` was never written to `blocks` (the write phase ended before): they are
/// checked for what they held before, or not at all when that is nothing.
fn never_issued(
    expect: &mut BTreeMap<u64, Expect>,
    generation: u64,
    blocks: impl Iterator<Item = u64>,
) {
    for b in blocks {
        let Some(e) = expect.get_mut(&b).filter(|e| e.pending == Some(generation)) else {
            continue;
        };
        e.pending = None;
        if e.flushed.is_none() {
            expect.remove(&b);
        }
    }
}

/// Where the journal's last cycle starts: after the check mark before its last round
/// (a check run again, with no round since, checks the same cycle again).
fn cycle_start(records: &[Record]) -> usize {
    let last_begin = records
        .iter()
        .rposition(|r| matches!(r, Record::Begin { .. }))
        .unwrap_or(records.len());
    records[..last_begin]
        .iter()
        .rposition(|r| matches!(r, Record::Checked { .. }))
        .map_or(1, |i| i + 1)
}

/// The number of the journal's last cycle (from 1), and whether it was checked already.
pub fn last_cycle(records: &[Record]) -> (u64, bool) {
    let from = cycle_start(records);
    let before = records[..from]
        .iter()
        .filter(|r| matches!(r, Record::Checked { .. }))
        .count() as u64;
    let checked = records[from..]
        .iter()
        .any(|r| matches!(r, Record::Checked { .. }));
    (before + 1, checked)
}

/// What the journal's last cycle recorded before its rounds of what can show its cut;
/// None when it recorded nothing (an older drivelab's journal).
pub fn power_before(records: &[Record]) -> Option<PowerState> {
    records[cycle_start(records)..]
        .iter()
        .find_map(|r| match r {
            Record::Cycle { power, .. } => Some(power.clone()),
            _ => None,
        })
}

/// What the journal's last cycle recorded of its target's start before its rounds;
/// None when it recorded nothing (an older drivelab's journal).
pub fn signature_before(records: &[Record]) -> Option<Probe> {
    records[cycle_start(records)..]
        .iter()
        .find_map(|r| match r {
            Record::Cycle { signature, .. } => signature.clone(),
            _ => None,
        })
}

/// The drive the journal's first cycle wrote to (None for a file, a simulated drive or
/// an older drivelab's journal).
pub fn journal_drive(records: &[Record]) -> Option<DriveId> {
    records.iter().find_map(|r| match r {
        Record::Cycle { drive, .. } => Some(drive.clone()),
        _ => None,
    })?
}

/// Refuse a target that is not the drive the journal was written to (one line).
pub fn refuse_other_drive(records: &[Record], target: &Target) -> Result<(), String> {
    let (Some(was), Some(now)) = (journal_drive(records), DriveId::of(&target.info)) else {
        return Ok(());
    };
    match was.mismatch(&now) {
        Some(how) => Err(format!(
            "TARGET {}: not the drive the journal was written to: {how}",
            target.info.path
        )),
        None => Ok(()),
    }
}

/// Whether the power was cut between the journal's last cycle's write phase and now:
/// a simulated drive's model says; a real one's recorded state is compared with now's.
pub fn cut_evidence(records: &[Record], target: &Target) -> (Evidence, Option<PowerState>) {
    if let Some(m) = target.model() {
        let e = match m.power_was_cut() {
            true => Evidence {
                evidence: CutEvidence::SimulatedCut,
                note: "the simulated drive's model cut its power".into(),
            },
            false => Evidence {
                evidence: CutEvidence::NoCut,
                note: "no power cut: the simulated drive's power_cut time never came in the write phase".into(),
            },
        };
        return (e, None);
    }
    let now = PowerState::now(target);
    (
        evidence::decide(power_before(records).as_ref(), &now),
        Some(now),
    )
}

/// Whether `found`, read at `offset` and holding none of this run's writes there, holds
/// another run's write (one of drivelab's, since this run's): a header of another run
/// (`seed`) for this offset; or, with no header of this run, a block inside a larger
/// write of another run — one whose header an earlier block holds and whose length
/// reaches here (`covered`), or whose sectors are all stamped for their own place by one
/// write (this run's blocks each start with their header). Such a block is not the
/// drive's to answer for, and is not tested.
fn another_runs(seed: u64, offset: u64, found: &[u8], covered: bool) -> bool {
    match block_header::header(found) {
        Some(h) if h.seed == seed => false,
        Some(h) => h.offset == offset || covered,
        // (A header whose magic alone was damaged still names this run's seed.)
        None => {
            let seed_field = found
                .get(32..40)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            seed_field != Some(seed) && (covered || stamped_by_one_write(offset, found))
        }
    }
}

/// Whether every sector of `found` (read at `offset`) is stamped for its own place, all
/// by the same write.
fn stamped_by_one_write(offset: u64, found: &[u8]) -> bool {
    let stride = drivelab_engine::data::STAMP_STRIDE;
    let mut sectors = found.chunks_exact(stride).zip((offset..).step_by(stride));
    let seq = drivelab_engine::data::stamped_seq(found);
    sectors.all(|(s, at)| {
        drivelab_engine::data::stamped_offset(s) == at
            && drivelab_engine::data::stamped_seq(s) == seq
    })
}

/// The state of one block read as `found`, `covered` by a larger write of another run
/// whose header an earlier block holds.
fn classify(
    k: &PowerLoss,
    pool: &DataPool,
    block: u64,
    e: Expect,
    (found, covered): (&[u8], bool),
) -> (BlockState, Option<Mismatch>) {
    let offset = block * k.block_bytes as u64;
    let mut exp = vec![0u8; found.len()];
    let mut matches = |generation: u64| {
        k.block_content(pool, block, generation, &mut exp);
        exp == found
    };
    if e.pending.is_some_and(&mut matches) {
        return (BlockState::Durable, None);
    }
    if e.flushed.is_some_and(&mut matches) {
        let s = match e.pending {
            Some(_) => BlockState::UnacknowledgedLost,
            None => BlockState::Durable,
        };
        return (s, None);
    }
    let Some(want) = e.flushed.or(e.pending) else {
        return (BlockState::Durable, None);
    };
    if another_runs(k.seed, offset, found, covered) {
        return (BlockState::OverwrittenByAnotherRun, None);
    }
    k.block_content(pool, block, want, &mut exp);
    let Some(m) = verify::classify(offset, found, &exp, k.written(block, want), k.seed) else {
        return (BlockState::Durable, None);
    };
    let state = match (m.class, e.flushed, e.pending) {
        (Class::Misdirected, _, _) => BlockState::Misdirected,
        (Class::Torn, _, Some(_)) => BlockState::Torn,
        (c, Some(_), _) => BlockState::LostAfterFlush(c),
        (_, None, _) => BlockState::UnacknowledgedLost,
    };
    (state, Some(m))
}

/// Blocks by state, for one check or added up over cycles.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub checked_blocks: u64,
    pub durable_blocks: u64,
    /// Blocks holding less than their last flushed write: the defect.
    pub lost_after_flush_blocks: u64,
    /// What those blocks held instead.
    pub lost_after_flush_found: ClassCounts,
    /// Blocks the write in flight at the cut never reached (allowed).
    pub unacknowledged_lost_blocks: u64,
    pub torn_blocks: u64,
    pub misdirected_blocks: u64,
    /// Blocks holding another run's writes at their offset (a later powerloss run over
    /// the same target): not the drive's fault, not tested.
    #[serde(default)]
    pub overwritten_by_another_run_blocks: u64,
}

impl Counts {
    fn add_state(&mut self, s: BlockState) {
        self.checked_blocks += 1;
        match s {
            BlockState::Durable => self.durable_blocks += 1,
            BlockState::LostAfterFlush(c) => {
                self.lost_after_flush_blocks += 1;
                self.lost_after_flush_found.add(c);
            }
            BlockState::UnacknowledgedLost => self.unacknowledged_lost_blocks += 1,
            BlockState::Torn => self.torn_blocks += 1,
            BlockState::Misdirected => self.misdirected_blocks += 1,
            BlockState::OverwrittenByAnotherRun => self.overwritten_by_another_run_blocks += 1,
        }
    }

    fn add(&mut self, o: &Counts) {
        self.checked_blocks += o.checked_blocks;
        self.durable_blocks += o.durable_blocks;
        self.lost_after_flush_blocks += o.lost_after_flush_blocks;
        let (a, b) = (&mut self.lost_after_flush_found, &o.lost_after_flush_found);
        a.zeros += b.zeros;
        a.older += b.older;
        a.misdirected += b.misdirected;
        a.torn += b.torn;
        a.corrupt += b.corrupt;
        a.foreign += b.foreign;
        self.unacknowledged_lost_blocks += o.unacknowledged_lost_blocks;
        self.torn_blocks += o.torn_blocks;
        self.misdirected_blocks += o.misdirected_blocks;
        self.overwritten_by_another_run_blocks += o.overwritten_by_another_run_blocks;
    }

    /// Whether every completed flush was honoured and no block landed elsewhere.
    pub fn honoured(&self) -> bool {
        self.lost_after_flush_blocks == 0 && self.misdirected_blocks == 0
    }
}

/// One power-cut cycle's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleCheck {
    pub cycle: u64,
    pub rounds_started: u64,
    pub flushes_completed: u64,
    #[serde(flatten)]
    pub counts: Counts,
    /// The first blocks not durable, by offset (at most 20).
    pub mismatches: Vec<Mismatch>,
    /// Why this cycle tested nothing (the write phase ended before the cut, or no flush
    /// completed before it); null when the cut fell inside the write phase.
    #[serde(default)]
    pub inconclusive: Option<String>,
    /// On a simulated drive, what its model says the cut lost (the check's counts must
    /// equal it); null on a real one.
    #[serde(default)]
    pub simulator_truth: Option<PowerCutTruth>,
    /// Whether the power was cut at all (a bundle from before: unknown).
    #[serde(default)]
    pub cut_evidence: CutEvidence,
    /// Why, in a sentence.
    #[serde(default)]
    pub cut_evidence_note: Option<String>,
    /// What the journal recorded before the write phase, and what the check read.
    #[serde(default)]
    pub power_at_write: Option<PowerState>,
    #[serde(default)]
    pub power_at_check: Option<PowerState>,
    /// How the cycle's write phase ended, as its journal says (null when the journal
    /// does not: the process died with the host's power, or an older journal).
    #[serde(default)]
    pub write_end: Option<WriteEnd>,
    /// Whether the target was rewritten since the write phase (a filesystem made on it
    /// after the run began): the counts say nothing of the drive, the verdict is
    /// inconclusive.
    #[serde(default)]
    pub target_rewritten: bool,
    /// What the target's start holds that was not there before the run (found by
    /// `blkid -p`), when that made the cycle inconclusive; null otherwise.
    #[serde(default)]
    pub new_signature: Option<Signature>,
    /// On a simulated drive, whether the counts equal its truth (false: drivelab's check
    /// is wrong, and the verdict is inconclusive); null on a real one.
    #[serde(default)]
    pub agrees_with_truth: Option<bool>,
}

impl CycleCheck {
    /// Add the cut's evidence: a cycle that shows no cut tested nothing (inconclusive,
    /// for that reason first).
    pub fn set_evidence(
        &mut self,
        e: Evidence,
        before: Option<PowerState>,
        now: Option<PowerState>,
    ) {
        if e.evidence == CutEvidence::NoCut {
            self.inconclusive = Some(e.note.clone());
        }
        self.cut_evidence = e.evidence;
        self.cut_evidence_note = Some(e.note);
        self.power_at_write = before;
        self.power_at_check = now;
    }

    /// Keep a simulated drive's truth of its cut beside the counts (of blocks of
    /// `block_bytes`): a check that disagrees with it concludes nothing.
    pub fn set_truth(&mut self, truth: PowerCutTruth, block_bytes: u64) {
        let agrees = truth.agrees(&self.counts, block_bytes);
        if !agrees {
            self.inconclusive = Some(format!(
                "the check disagrees with the simulator's truth (lost after a completed flush: {} found, {} in truth; never acknowledged, lost: {} found, {} in truth): drivelab's defect, nothing concluded",
                self.counts.lost_after_flush_blocks,
                opt(truth.lost_after_flush_blocks),
                self.counts.unacknowledged_lost_blocks,
                opt(truth.lost_unflushed_blocks.zip(truth.lost_unacknowledged_blocks).map(|(a, b)| a + b)),
            ));
        }
        self.agrees_with_truth = Some(agrees);
        self.simulator_truth = Some(truth);
    }
}

impl CycleCheck {
    /// Mark the cycle inconclusive when `target` holds an ext2/3/4 filesystem made or
    /// written after `since` (when the run's journal was made): formatted since the
    /// write phase, so its blocks say nothing of what the drive kept. Sound: a drive
    /// that lost writes shows older content, never a filesystem newer than the run (an
    /// older one, there before the run, is not taken for this).
    pub fn note_rewritten(
        &mut self,
        target: &mut Target,
        since: std::time::SystemTime,
    ) -> Result<(), String> {
        let mut buf = AlignedBuf::new(4096);
        let mut m = Medium {
            target,
            now_ns: 0,
            fua: false,
        };
        m.read(0, buf.as_mut_slice())
            .map_err(|e| format!("reading back 4096 bytes at byte 0: {e}"))?;
        let since = since
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // The superblock's times are whole seconds: one in the run's first second counts
        // (a filesystem made before the run would have been written over by it).
        if let Some(t) = ext_written_at(buf.as_slice()).filter(|&t| t >= since) {
            self.target_rewritten = true;
            let at = humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(t),
            );
            self.inconclusive = Some(format!(
                "the target holds an ext2/3/4 filesystem made or written at {at}, after this run began: it was formatted since the write phase, so its blocks say nothing of the drive"
            ));
        }
        Ok(())
    }
}

impl CycleCheck {
    /// Mark the cycle inconclusive when the target's start holds a signature (any
    /// filesystem, swap space, a partition table) that the probe before the run's rounds
    /// (`before`; None in older journals) did not see: see [`signature`].
    pub fn note_signature(&mut self, before: Option<&Probe>, now: &Probe) {
        let Some(what) = now.new_since(before) else {
            return;
        };
        self.target_rewritten = true;
        if let Probe::Found(s) = now {
            self.new_signature = Some(s.clone());
        }
        self.inconclusive = Some(format!(
            "the target holds {what}, which was not on it when this run began: it was formatted since the write phase, so its blocks say nothing of the drive"
        ));
    }
}

/// The later of an ext2/3/4 superblock's creation and last write time (Unix seconds),
/// when the first 4 KiB of a device hold one (its magic at byte 1080).
fn ext_written_at(first: &[u8]) -> Option<u64> {
    let sb = first.get(1024..2048)?;
    let le32 = |at: usize| u32::from_le_bytes([sb[at], sb[at + 1], sb[at + 2], sb[at + 3]]);
    let magic = u16::from_le_bytes([sb[56], sb[57]]);
    // s_wtime at 48, s_mkfs_time at 264.
    (magic == 0xEF53).then(|| u64::from(le32(48).max(le32(264))))
}

fn opt(n: Option<u64>) -> String {
    n.map_or("none".into(), |n| n.to_string())
}

/// A simulated drive's ground truth of its power cut, in blocks of `block_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCutTruth {
    /// The cut's virtual time; null when it never came.
    pub power_cut_at_ns: Option<u64>,
    pub block_bytes: Option<u64>,
    /// Blocks a completed flush covered that the cut lost.
    pub lost_after_flush_blocks: Option<u64>,
    /// Blocks written, not yet flushed, lost.
    pub lost_unflushed_blocks: Option<u64>,
    /// Blocks whose write was not yet acknowledged, lost.
    pub lost_unacknowledged_blocks: Option<u64>,
}

impl PowerCutTruth {
    /// Whether `c` (blocks of `block_bytes`) counts what the truth lists: the blocks
    /// lost after a completed flush, and the never-acknowledged lost ones as its
    /// unflushed and unacknowledged ones (with blocks of another size than the truth's,
    /// only whether any was lost after a flush). A cut that never came lost nothing.
    pub fn agrees(&self, c: &Counts, block_bytes: u64) -> bool {
        let lost_after = self.lost_after_flush_blocks.unwrap_or(0);
        let unack =
            self.lost_unflushed_blocks.unwrap_or(0) + self.lost_unacknowledged_blocks.unwrap_or(0);
        if self.block_bytes.is_some_and(|b| b != block_bytes) {
            return (lost_after == 0) == (c.lost_after_flush_blocks == 0);
        }
        c.lost_after_flush_blocks == lost_after && c.unacknowledged_lost_blocks == unack
    }

    /// The power-cut fields of a model's ground truth (`DeviceModel::ground_truth`).
    pub fn of(truth: &serde_json::Value) -> PowerCutTruth {
        let n = |key: &str| truth.get(key).and_then(serde_json::Value::as_u64);
        PowerCutTruth {
            power_cut_at_ns: n("power_cut_at_ns"),
            block_bytes: n("power_cut_block_bytes"),
            lost_after_flush_blocks: n("power_cut_lost_after_flush_blocks"),
            lost_unflushed_blocks: n("power_cut_lost_unflushed_blocks"),
            lost_unacknowledged_blocks: n("power_cut_lost_unacknowledged_blocks"),
        }
    }
}

/// The suite's analysis (`summary.analysis` in run.json): every cycle and the totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Whether the drive kept every write a completed flush covered, in every cycle (and
    /// every cycle tested something: false when one is inconclusive).
    pub flushes_honoured: bool,
    /// The verdict: honoured, not honoured (a block lost or misdirected), or
    /// inconclusive (a cycle whose cut tested nothing, and nothing lost).
    #[serde(default)]
    pub verdict: Verdict,
    pub cycles_checked: u64,
    pub flushes_completed: u64,
    /// The weakest evidence of a power cut over the cycles (`none`: one cycle cut
    /// nothing; `unknown`: one could not be confirmed).
    #[serde(default)]
    pub cut_evidence: CutEvidence,
    #[serde(flatten)]
    pub totals: Counts,
    pub cycles: Vec<CycleCheck>,
}

/// What the checks show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Honoured,
    NotHonoured,
    /// A cut that tested nothing: after the write phase ended, or before any flush.
    #[default]
    Inconclusive,
}

/// What a powerloss bundle says of its flushes: the check's verdict, or not checked yet
/// (the write phase saves no analysis; the check does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Checked(Verdict),
    NotChecked,
}

impl Outcome {
    /// The outcome a bundle's summary holds.
    pub fn of(summary: Option<&crate::bundle::Summary>) -> Outcome {
        match summary.and_then(|s| s.analysis_as::<Analysis>()) {
            Some(a) => Outcome::Checked(a.verdict),
            None => Outcome::NotChecked,
        }
    }

    /// In words, for tables: honoured, not honoured, inconclusive, not checked.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Checked(Verdict::Honoured) => "honoured",
            Outcome::Checked(Verdict::NotHonoured) => "not honoured",
            Outcome::Checked(Verdict::Inconclusive) => "inconclusive",
            Outcome::NotChecked => "not checked",
        }
    }
}

impl Analysis {
    /// The analysis of `cycles`.
    pub fn of(cycles: Vec<CycleCheck>) -> Analysis {
        let mut totals = Counts::default();
        cycles.iter().for_each(|c| totals.add(&c.counts));
        // A cycle that cut nothing blames nothing on the drive.
        let mut tested = Counts::default();
        cycles
            .iter()
            .filter(|c| c.cut_evidence != CutEvidence::NoCut)
            .for_each(|c| tested.add(&c.counts));
        // Whatever was found: a check against the wrong truth, a target rewritten since,
        // or a write phase no power cut ended tested nothing of the drive.
        let untested = |c: &CycleCheck| {
            c.agrees_with_truth == Some(false)
                || c.target_rewritten
                || c.write_end == Some(WriteEnd::Interrupted)
        };
        let verdict = if cycles.iter().any(untested) {
            Verdict::Inconclusive
        } else if !tested.honoured() {
            Verdict::NotHonoured
        } else if cycles.is_empty() || cycles.iter().any(|c| c.inconclusive.is_some()) {
            Verdict::Inconclusive
        } else {
            Verdict::Honoured
        };
        Analysis {
            flushes_honoured: verdict == Verdict::Honoured,
            verdict,
            cycles_checked: cycles.len() as u64,
            flushes_completed: cycles.iter().map(|c| c.flushes_completed).sum(),
            cut_evidence: CutEvidence::weakest(cycles.iter().map(|c| c.cut_evidence)),
            totals,
            cycles,
        }
    }
}

/// Every block of the journal's last cycle with its state, in block order.
pub fn check_blocks(
    records: &[Record],
    target: &mut Target,
) -> Result<Vec<(u64, BlockState, Option<Mismatch>)>, String> {
    let (k, blocks) = expectations(records)?;
    let pool = k.pool();
    let mut buf = AlignedBuf::new(k.block_bytes as usize);
    let now_ns = target.model().map_or(0, |m| m.now_ns());
    let mut m = Medium {
        target,
        now_ns,
        fua: false,
    };
    let mut out = Vec::with_capacity(blocks.len());
    // Where the last write of another run whose header was read ends.
    let mut other_write_end = 0;
    for (block, e) in blocks {
        let offset = block * k.block_bytes as u64;
        m.read(offset, buf.as_mut_slice())
            .map_err(|e| format!("reading back {} bytes at byte {offset}: {e}", k.block_bytes))?;
        let found = buf.as_slice();
        let (state, mis) = classify(&k, &pool, block, e, (found, offset < other_write_end));
        if let Some(h) =
            block_header::header(found).filter(|h| h.seed != k.seed && h.offset == offset)
        {
            other_write_end = offset.saturating_add(u64::from(h.len));
        }
        out.push((offset, state, mis));
    }
    Ok(out)
}

/// Check the journal's last cycle on `target` (cycle number `cycle`, see [`last_cycle`]).
pub fn check(records: &[Record], target: &mut Target, cycle: u64) -> Result<CycleCheck, String> {
    let blocks = check_blocks(records, target)?;
    let tail = &records[cycle_start(records)..];
    let mut c = CycleCheck {
        cycle,
        rounds_started: tail
            .iter()
            .filter(|r| matches!(r, Record::Begin { .. }))
            .count() as u64,
        flushes_completed: tail
            .iter()
            .filter(|r| matches!(r, Record::Flushed { .. }))
            .count() as u64,
        counts: Counts::default(),
        mismatches: Vec::new(),
        inconclusive: None,
        simulator_truth: None,
        cut_evidence: CutEvidence::Unknown,
        cut_evidence_note: None,
        power_at_write: None,
        power_at_check: None,
        write_end: tail.iter().rev().find_map(|r| match r {
            Record::Ended { end, .. } => Some(end.clone()),
            _ => None,
        }),
        agrees_with_truth: None,
        target_rewritten: false,
        new_signature: None,
    };
    c.inconclusive = inconclusive(records, &c);
    for (_, state, mis) in blocks {
        c.counts.add_state(state);
        if let (false, Some(m)) = (state == BlockState::Durable, mis) {
            if c.mismatches.len() < verify::LISTED_MISMATCHES {
                c.mismatches.push(m);
            }
        }
    }
    let other = c.counts.overwritten_by_another_run_blocks;
    if c.inconclusive.is_none() && other > 0 {
        c.inconclusive = Some(format!(
            "{other} blocks hold another run's writes (a later run over the same target?): not the drive's fault, but not tested"
        ));
    }
    Ok(c)
}

/// Why cycle `c` tested nothing, if it did: a signal stopped its write phase (no power
/// cut), nothing was made durable before the cut, or every round of the write phase was
/// written and flushed (the cut came after it ended, or never came).
fn inconclusive(records: &[Record], c: &CycleCheck) -> Option<String> {
    let planned = match records.first() {
        Some(Record::Start { knobs, .. }) => knobs.rounds,
        _ => return None,
    };
    if c.write_end == Some(WriteEnd::Interrupted) {
        return Some("the write phase was interrupted by a signal, not ended by a power cut: nothing was tested".into());
    }
    let tail = &records[cycle_start(records)..];
    let acknowledged = tail
        .iter()
        .any(|r| matches!(r, Record::Acknowledged { .. }));
    let (rounds, flushes) = (c.rounds_started, c.flushes_completed);
    if flushes == 0 && !acknowledged {
        return Some("no flush completed before the cut: nothing was tested".into());
    }
    (rounds >= planned && flushes >= rounds).then(|| {
        format!("the write phase ended (all {rounds} rounds written and flushed) before the power was cut: the cut tested nothing")
    })
}

/// The sentence on the power cut's evidence (of the cycle that shows it least).
pub fn cut_sentence(a: &Analysis) -> String {
    let weakest = a.cycles.iter().find(|c| c.cut_evidence == a.cut_evidence);
    let note = weakest
        .and_then(|c| c.cut_evidence_note.as_deref())
        .unwrap_or("no evidence was recorded (a check by an older drivelab)");
    match a.cut_evidence {
        CutEvidence::NoCut => format!("Power cut: none ({note})."),
        CutEvidence::Unknown => format!(
            "Power cut: could not be confirmed ({note}); the verdict assumes the power was cut."
        ),
        e => format!("Power cut: shown ({}: {note}).", e.words()),
    }
}

/// The printed summary: the verdict in words, then the counts.
pub fn table(a: &Analysis) -> String {
    let t = &a.totals;
    let why = a.cycles.iter().find_map(|c| c.inconclusive.as_deref());
    let verdict = if a.verdict == Verdict::Inconclusive {
        format!("Inconclusive: {}.", why.unwrap_or("no cycle was checked"))
    } else if a.flushes_honoured {
        format!(
            "The drive honoured every flush: all {} completed flushes kept their data over {} power cut{}.",
            a.flushes_completed,
            a.cycles_checked,
            if a.cycles_checked == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "The drive did NOT honour its flushes: {} blocks lost after a completed flush, {} misdirected.",
            t.lost_after_flush_blocks, t.misdirected_blocks
        )
    };
    let f = &t.lost_after_flush_found;
    let cut = cut_sentence(a);
    format!(
        "{verdict}\n{cut}\n\
         blocks checked               {}\n\
         durable as acknowledged      {}\n\
         lost after a completed flush {} (zeros {}, older {}, torn {}, corrupt {}, foreign {})\n\
         never acknowledged, lost     {} (allowed)\n\
         torn by a write in flight    {}\n\
         misdirected                  {}\n\
         overwritten by another run   {} (not the drive's fault)\n",
        t.checked_blocks,
        t.durable_blocks,
        t.lost_after_flush_blocks,
        f.zeros,
        f.older,
        f.torn,
        f.corrupt,
        f.foreign,
        t.unacknowledged_lost_blocks,
        t.torn_blocks,
        t.misdirected_blocks,
        t.overwritten_by_another_run_blocks
    )
}

impl crate::suite::Suite for PowerLoss {
    fn kind(&self) -> crate::suite::SuiteKind {
        crate::suite::SuiteKind::Powerloss
    }
    fn test_file_bytes(&self) -> Option<u64> {
        Some(self.ring_bytes())
    }
    /// No engine steps: the write phase and the check are this module's own.
    fn plan(
        &self,
        _target: &drivelab_engine::target::TargetInfo,
    ) -> Result<Vec<crate::plan::PlannedStep>, String> {
        self.validate().map(|_| Vec::new())
    }
    /// The analysis comes from the check, not from steps: until then, none.
    fn report(&self, _steps: &[crate::bundle::StepRecord]) -> crate::suite::Report {
        crate::suite::Report {
            summary: crate::bundle::Summary {
                analysis: serde_json::Value::Null,
                metrics: Vec::new(),
            },
            table: "not checked yet: run drivelab run powerloss --check JOURNAL TARGET\n".into(),
        }
    }
}

impl Analysis {
    /// The summary saved in the bundle: the analysis and its headline counts.
    pub fn summary(&self) -> crate::bundle::Summary {
        use crate::bundle::Metric;
        let t = &self.totals;
        let m = |name: &str, v: u64| Metric::new(name, Some(v as f64), "blocks");
        crate::bundle::Summary {
            analysis: serde_json::to_value(self).unwrap_or_default(),
            metrics: [
                m("lost after a completed flush", t.lost_after_flush_blocks),
                m("torn", t.torn_blocks),
                m("misdirected", t.misdirected_blocks),
                m("unacknowledged lost", t.unacknowledged_lost_blocks),
                m("checked", t.checked_blocks),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(k: &PowerLoss) -> Record {
        Record::Start {
            knobs: k.clone(),
            target: "t".into(),
            bundle: None,
        }
    }

    /// With FUA writes the blocks of the round in flight whose writes returned are
    /// durable, the one in flight is pending, and those never issued hold their last
    /// flushed write (or are not checked, having none).
    #[test]
    fn fua_acknowledgements_and_the_end_record_set_what_each_block_must_hold() {
        let k = PowerLoss {
            rounds: 10,
            round_blocks: 4,
            ring_rounds: 2,
            fua: true,
            ..PowerLoss::new(1)
        };
        let begin = |round: u64, first: u64| Record::Begin {
            round,
            generation: round,
            ranges: vec![[first, 4]],
        };
        let records = vec![
            start(&k),
            begin(0, 0),
            Record::Flushed { round: 0 },
            begin(1, 4),
            Record::Flushed { round: 1 },
            begin(2, 0),
            Record::Acknowledged {
                round: 2,
                blocks: 1,
            },
            Record::Acknowledged {
                round: 2,
                blocks: 2,
            },
            Record::Ended {
                round: 2,
                issued_blocks: 3,
                end: WriteEnd::PowerCut,
            },
        ];
        let (_, e) = expectations(&records).unwrap();
        let x = |flushed, pending| Expect { flushed, pending };
        assert_eq!(e[&0], x(Some(2), None));
        assert_eq!(e[&1], x(Some(2), None));
        assert_eq!(e[&2], x(Some(0), Some(2)), "in flight at the cut");
        assert_eq!(e[&3], x(Some(0), None), "never issued: its flushed write");
        // Round 3 begun, nothing issued: its blocks, never written before, not checked.
        let mut more = records[..records.len() - 1].to_vec();
        more.push(Record::Flushed { round: 2 });
        more[0] = start(&PowerLoss {
            ring_rounds: 4,
            ..k.clone()
        });
        more.push(Record::Begin {
            round: 3,
            generation: 3,
            ranges: vec![[8, 4]],
        });
        more.push(Record::Ended {
            round: 3,
            issued_blocks: 0,
            end: WriteEnd::Interrupted,
        });
        let (_, e) = expectations(&more).unwrap();
        assert!((8..12).all(|b| !e.contains_key(&b)), "{e:?}");
    }

    /// Another run's write is told by its header for this offset, by a header of it at
    /// an earlier block covering this one, or by sectors stamped throughout by one write
    /// with no header of this run; this run's own damaged block never is.
    #[test]
    fn another_runs_write_is_told_by_its_header_or_its_stamps() {
        let k = PowerLoss::new(1);
        let other = DataPool::new(DataPattern::Random, 128 << 10, 2, true);
        let mut w = AlignedBuf::new(128 << 10);
        let wr = Written {
            job: 0,
            generation: 5,
            pick: 9,
        };
        verify::expected(&other, 2, 0, wr, w.as_mut_slice());
        let w = w.as_slice();
        assert!(another_runs(1, 0, &w[..4096], false), "its header");
        assert!(another_runs(1, 8192, &w[8192..12288], false), "its stamps");
        let mut own = vec![0u8; 4096];
        k.block_content(&k.pool(), 2, 3, &mut own);
        assert!(!another_runs(1, 8192, &own, true));
        own[100] ^= 1;
        assert!(!another_runs(1, 8192, &own, false), "a byte changed");
        own[9] ^= 1;
        assert!(!another_runs(1, 8192, &own, false), "its magic damaged too");
        let zeros = [0u8; 4096];
        assert!(!another_runs(1, 8192, &zeros, false));
        assert!(
            another_runs(1, 8192, &zeros, true),
            "inside a covering write"
        );
    }

    /// An ext2/3/4 superblock gives the later of its creation and last write times.
    #[test]
    fn an_ext_superblock_gives_its_latest_time() {
        let mut b = vec![0u8; 4096];
        assert_eq!(ext_written_at(&b), None);
        b[1080..1082].copy_from_slice(&0xEF53u16.to_le_bytes());
        b[1024 + 48..1024 + 52].copy_from_slice(&1_700_000_100u32.to_le_bytes());
        b[1024 + 264..1024 + 268].copy_from_slice(&1_700_000_000u32.to_le_bytes());
        assert_eq!(ext_written_at(&b), Some(1_700_000_100));
    }
}
