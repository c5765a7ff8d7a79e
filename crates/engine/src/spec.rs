//! The workload specification: what to do, fully resolved.
//!
//! Option names follow fio's so users' habits carry over. A [`Workload`] is what the engine
//! runs and what a result records as its config: every default is filled in, sizes are
//! resolved against the target, and the random seed is always present.

use serde::{Deserialize, Serialize};

use crate::size::SizeOrPercent;

/// The largest block size (also the largest any `--bssplit` or `--spec` may name).
pub const MAX_BS: u32 = 1 << 30;

/// fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed read/write.
    Rw,
    /// Random mixed read/write.
    RandRw,
}

impl RwMode {
    pub const FORM: &'static str = "read, write, randread, randwrite, rw or randrw";

    pub fn parse(s: &str) -> Result<RwMode, String> {
        Ok(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Rw,
            "randrw" => RwMode::RandRw,
            _ => return Err(format!("'{s}' is not one of {}", Self::FORM)),
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::Rw => "rw",
            RwMode::RandRw => "randrw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }
    /// Share of reads in percent implied by the mode (mixed modes use `rwmixread`).
    pub fn read_percent(self, rwmixread: u32) -> u32 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite => 0,
            RwMode::Rw | RwMode::RandRw => rwmixread,
        }
    }
    pub fn writes(self, rwmixread: u32) -> bool {
        self.read_percent(rwmixread) < 100
    }
}

/// One entry of a block-size mix: `bytes` chosen for `percent` of I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BsShare {
    pub bytes: u32,
    pub percent: u32,
}

/// Block sizes per direction ([`Workload::bs_mix`]); a direction the workload does not
/// do is None.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BsMix {
    pub read: Option<BsDir>,
    pub write: Option<BsDir>,
}

/// One direction's block sizes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BsDir {
    /// Sizes with their shares (one of 100 %: a fixed size).
    Shares(Vec<BsShare>),
    /// Each I/O's size chosen from `min_bytes` to `max_bytes` (fio's `bsrange`): the
    /// shares of the sizes are not known.
    Range { min_bytes: u32, max_bytes: u32 },
}

impl BsDir {
    /// "4K", "4K-64K", "4K/50:64K/50".
    pub fn label(&self) -> String {
        match self {
            BsDir::Shares(v) => match v.as_slice() {
                [one] => block_size_label(one.bytes),
                _ => v
                    .iter()
                    .map(|b| format!("{}/{}", block_size_label(b.bytes), b.percent))
                    .collect::<Vec<_>>()
                    .join(":"),
            },
            BsDir::Range {
                min_bytes,
                max_bytes,
            } => format!(
                "{}-{}",
                block_size_label(*min_bytes),
                block_size_label(*max_bytes)
            ),
        }
    }
}

impl BsMix {
    /// "R 4K / W 64K", or one direction's label when the workload does only that one.
    pub fn label(&self) -> String {
        match (&self.read, &self.write) {
            (Some(r), Some(w)) => format!("R {} / W {}", r.label(), w.label()),
            (Some(d), None) | (None, Some(d)) => d.label(),
            (None, None) => "sizes unknown".into(),
        }
    }
}

/// Parse fio's `bssplit` form `4k/60:64k/40` (shares must add up to 100).
pub fn parse_bssplit(s: &str) -> Result<Vec<BsShare>, String> {
    const FORM: &str = "size/percent pairs joined by ':' adding up to 100, like 4k/60:64k/40";
    let mut out = Vec::new();
    for part in s.split(':') {
        let (size, pct) = part
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not {FORM}"))?;
        let bytes = crate::size::parse_size(size).map_err(|e| format!("{e} (in '{s}')"))?;
        if bytes == 0 || bytes > MAX_BS as u64 {
            return Err(format!(
                "block size '{size}' is not from 1 byte to 1G (in '{s}')"
            ));
        }
        let percent: u32 = pct
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not {FORM}"))?;
        if percent > 100 {
            return Err(format!(
                "share '{pct}' of {size} is more than 100 (in '{s}'; {FORM})"
            ));
        }
        out.push(BsShare {
            bytes: bytes as u32,
            percent,
        });
    }
    // Each share is at most 100, so the sum cannot wrap.
    let total: u32 = out.iter().map(|b| b.percent).sum();
    if total != 100 {
        return Err(format!(
            "shares in '{s}' add up to {total}, not 100 ({FORM})"
        ));
    }
    Ok(out)
}

/// How random offsets are spread over the span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Distribution {
    Uniform,
    /// fio's `zoned:` — each zone gets `io_percent` of random I/Os spread over
    /// `span_percent` of the span, zones laid out from the start of the span.
    Zoned {
        zones: Vec<Zone>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub io_percent: f64,
    pub span_percent: f64,
}

impl Distribution {
    pub const FORM: &'static str =
        "uniform or zoned:IO%/SPAN%:IO%/SPAN%… with both columns adding up to 100, like zoned:50/5:30/15:20/80";

    pub fn parse(s: &str) -> Result<Distribution, String> {
        if s == "uniform" || s == "random" {
            return Ok(Distribution::Uniform);
        }
        let Some(rest) = s.strip_prefix("zoned:") else {
            return Err(format!("'{s}' is not {}", Self::FORM));
        };
        let mut zones = Vec::new();
        for part in rest.split(':') {
            let (a, b) = part
                .split_once('/')
                .ok_or_else(|| format!("'{s}' is not {}", Self::FORM))?;
            let io: f64 = a
                .parse()
                .map_err(|_| format!("'{s}' is not {}", Self::FORM))?;
            let span: f64 = b
                .parse()
                .map_err(|_| format!("'{s}' is not {}", Self::FORM))?;
            // Finite numbers only (NaN would pass every comparison below).
            if !io.is_finite() || !span.is_finite() || io < 0.0 || span <= 0.0 {
                return Err(format!("'{s}' is not {}", Self::FORM));
            }
            zones.push(Zone {
                io_percent: io,
                span_percent: span,
            });
        }
        let io: f64 = zones.iter().map(|z| z.io_percent).sum();
        let span: f64 = zones.iter().map(|z| z.span_percent).sum();
        if (io - 100.0).abs() > 1e-9 || (span - 100.0).abs() > 1e-9 {
            return Err(format!("'{s}' is not {}", Self::FORM));
        }
        Ok(Distribution::Zoned { zones })
    }
}

/// Content of written blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "percent")]
pub enum DataPattern {
    /// Incompressible and never repeated: a large random pool copied at a random place
    /// and stamped per 512-byte sector with its offset and a write sequence number.
    Random,
    /// All zero bytes.
    Zero,
    /// IOMeter's repeating bytes: each write one byte value throughout, a new value per
    /// write ("first IO all A's, second all B's").
    Repeat,
    /// Compressible by about N %: N % of each 512-byte sector is zeros, the rest random.
    Compress(u8),
}

impl DataPattern {
    pub const FORM: &'static str = "random, zero, repeat or compress=N (N from 0 to 99)";

    pub fn parse(s: &str) -> Result<DataPattern, String> {
        Ok(match s {
            "random" => DataPattern::Random,
            "zero" | "zeros" => DataPattern::Zero,
            "repeat" => DataPattern::Repeat,
            _ => {
                let n = s
                    .strip_prefix("compress=")
                    .and_then(|n| n.trim_end_matches('%').parse::<u8>().ok())
                    .filter(|&n| n < 100)
                    .ok_or_else(|| format!("'{s}' is not {}", Self::FORM))?;
                DataPattern::Compress(n)
            }
        })
    }
    pub fn name(self) -> String {
        match self {
            DataPattern::Random => "random".into(),
            DataPattern::Zero => "zero".into(),
            DataPattern::Repeat => "repeat".into(),
            DataPattern::Compress(n) => format!("compress={n}"),
        }
    }
}

/// fio's `ioengine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// Threads each doing one pread/pwrite at a time: queue depth = threads.
    Sync,
    /// One io_uring per thread with `iodepth` I/Os outstanding.
    IoUring,
    /// No I/O at all: the engine's own cost.
    Null,
    /// A simulated device completes I/Os in virtual time.
    Sim,
    /// Linux native AIO: only in results imported from fio (drivelab's own engine does
    /// not run it and `parse` does not take it).
    Libaio,
}

impl IoEngine {
    pub const FORM: &'static str = "sync, io_uring or null";

    pub fn parse(s: &str) -> Result<IoEngine, String> {
        Ok(match s {
            "sync" | "psync" | "pvsync" => IoEngine::Sync,
            "io_uring" | "iouring" | "uring" => IoEngine::IoUring,
            "null" => IoEngine::Null,
            _ => return Err(format!("'{s}' is not one of {}", Self::FORM)),
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::Sync => "sync",
            IoEngine::IoUring => "io_uring",
            IoEngine::Null => "null",
            IoEngine::Sim => "sim",
            IoEngine::Libaio => "libaio",
        }
    }
}

/// A fully resolved workload: what the engine runs and what a result records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub rw: RwMode,
    /// Share of reads in percent for mixed modes (fio's default: 50).
    pub rwmixread: u32,
    /// Block sizes with their shares; a single entry of 100 % for a fixed `bs`. Empty
    /// when `bs_mix` states the sizes (a result measured elsewhere).
    pub bs: Vec<BsShare>,
    /// Sizes `bs` cannot state, of a result measured elsewhere (an imported fio job):
    /// reads and writes of different sizes, or a size range whose shares are not known.
    /// drivelab's engine never runs such a workload. Absent: `bs` says it all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_mix: Option<BsMix>,
    /// I/Os outstanding per job (io_uring ring depth; 1 for sync).
    pub iodepth: u32,
    pub numjobs: u32,
    pub ioengine: IoEngine,
    /// O_DIRECT.
    pub direct: bool,
    /// Start of the span in bytes.
    pub offset_bytes: u64,
    /// Length of the span in bytes.
    pub size_bytes: u64,
    /// Time bound (ns), after the ramp; None for byte-bounded runs.
    pub runtime_ns: Option<u64>,
    /// Byte bound over all jobs, ramp included; None for time-bounded runs.
    pub io_size_bytes: Option<u64>,
    /// Ramp before measuring, rounded up to whole intervals: excluded from totals and
    /// tagged in the series.
    pub ramp_ns: u64,
    /// For random modes: share of I/Os at random offsets, the rest sequential.
    pub percentage_random: u32,
    pub random_distribution: Distribution,
    pub randseed: u64,
    pub data: DataPattern,
    /// Width of one interval of the series.
    pub log_interval_ns: u64,
    /// The run's first seconds logged again at a finer interval (a second series beside
    /// the main one): what changes faster than `log_interval_ns` at the start, like a
    /// burst of two seconds. Absent: no such series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_head: Option<LogHead>,
    /// Offsets of random I/O are multiples of this (the block size, never less than the
    /// logical sector).
    pub align_bytes: u32,
    /// Keep going after I/O errors (counted and recorded).
    pub continue_on_error: bool,
    /// io_uring: register buffers and files with the ring (false for other engines).
    pub fixedbufs: bool,
    pub registerfiles: bool,
    /// io_uring: submit once this many I/Os are ready (fio's `iodepth_batch_submit`);
    /// 1 submits each I/O the moment it is prepared; 0 chooses by itself (see
    /// `backend::uring`).
    #[serde(default)]
    pub iodepth_batch_submit: u32,
    /// Buffered I/O: write back and drop the span's cached pages before the run (fio's
    /// `invalidate`, on by default as there).
    #[serde(default = "yes")]
    pub invalidate: bool,
    /// Wait, at the end, for the writes to reach the target (fsync); the wait counts in
    /// the elapsed time (fio's `end_fsync`).
    #[serde(default)]
    pub end_fsync: bool,
    /// Each block written carries a checked header; a pass after the writes reads every
    /// block back (`verify`).
    #[serde(default)]
    pub verify: bool,
    /// With `verify`: after every this many writes, each job reads back and checks the
    /// blocks it wrote since the last check, during the run (fio's `verify_backlog`).
    /// Absent: no checks during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<u64>,
}

fn yes() -> bool {
    true
}

/// A finer series over the start of a run, see [`Workload::log_head`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogHead {
    /// Width of one interval of the head: a whole divisor of `len_ns`.
    pub interval_ns: u64,
    /// How long from the run's start the head lasts.
    pub len_ns: u64,
}

impl Workload {
    pub fn max_bs(&self) -> u32 {
        self.bs.iter().map(|b| b.bytes).max().unwrap_or(4096)
    }
    pub fn min_bs(&self) -> u32 {
        self.bs.iter().map(|b| b.bytes).min().unwrap_or(4096)
    }
    pub fn read_percent(&self) -> u32 {
        self.rw.read_percent(self.rwmixread)
    }
    pub fn writes(&self) -> bool {
        self.rw.writes(self.rwmixread)
    }
    /// Total I/Os outstanding.
    pub fn queue_depth(&self) -> u32 {
        self.iodepth * self.numjobs
    }
}

/// A workload as the user states it, before it is resolved against a target.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRequest {
    pub rw: RwMode,
    pub rwmixread: u32,
    pub bs: Vec<BsShare>,
    pub iodepth: u32,
    pub numjobs: u32,
    /// None: io_uring when iodepth > 1, else sync.
    pub ioengine: Option<IoEngine>,
    /// None: O_DIRECT for files and block devices.
    pub direct: Option<bool>,
    pub offset: SizeOrPercent,
    /// None: the rest of the target after `offset`.
    pub size: Option<SizeOrPercent>,
    pub runtime_ns: Option<u64>,
    pub io_size: Option<SizeOrPercent>,
    pub ramp_ns: u64,
    pub percentage_random: u32,
    pub random_distribution: Distribution,
    /// None: drawn from the clock and recorded.
    pub randseed: Option<u64>,
    pub data: DataPattern,
    pub log_interval_ns: u64,
    pub continue_on_error: bool,
    /// io_uring: register buffers and the file with each ring (default on; a ring that
    /// cannot register them falls back to plain ones and the result notes it).
    pub fixedbufs: bool,
    pub registerfiles: bool,
    /// 0: automatic.
    pub iodepth_batch_submit: u32,
    pub invalidate: bool,
    pub end_fsync: bool,
    pub verify: bool,
    /// `--verify-backlog N` (needs `verify`).
    pub verify_backlog: Option<u64>,
}

impl Default for WorkloadRequest {
    fn default() -> Self {
        WorkloadRequest {
            rw: RwMode::RandRead,
            rwmixread: 50,
            bs: vec![BsShare {
                bytes: 4096,
                percent: 100,
            }],
            iodepth: 1,
            numjobs: 1,
            ioengine: None,
            direct: None,
            offset: SizeOrPercent::Bytes(0),
            size: None,
            runtime_ns: Some(10_000_000_000),
            io_size: None,
            ramp_ns: 0,
            percentage_random: 100,
            random_distribution: Distribution::Uniform,
            randseed: None,
            data: DataPattern::Random,
            log_interval_ns: 1_000_000_000,
            continue_on_error: false,
            fixedbufs: true,
            registerfiles: true,
            iodepth_batch_submit: 0,
            invalidate: true,
            end_fsync: false,
            verify: false,
            verify_backlog: None,
        }
    }
}

/// CrystalDiskMark's test names: `SEQ1M Q8T1`, `RND4K Q32T16`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CdmSpec {
    pub random: bool,
    pub bs: u32,
    /// Outstanding I/Os per thread.
    pub q: u32,
    /// Threads.
    pub t: u32,
}

impl CdmSpec {
    pub const FORM: &'static str =
        "SEQ|RND<size> Q<depth>T<threads>, like \"SEQ1M Q8T1\" or \"RND4K Q32T16\"";

    pub fn parse(s: &str) -> Result<CdmSpec, String> {
        let err = || format!("'{s}' is not {}", Self::FORM);
        let up = s.trim().to_ascii_uppercase();
        let mut words = up.split_whitespace();
        let (w1, w2) = (words.next().ok_or_else(err)?, words.next().ok_or_else(err)?);
        if words.next().is_some() {
            return Err(err());
        }
        let (random, size) = if let Some(r) = w1.strip_prefix("SEQ") {
            (false, r)
        } else if let Some(r) = w1.strip_prefix("RND") {
            (true, r)
        } else {
            return Err(err());
        };
        let bs = crate::size::parse_size(size).map_err(|_| err())?;
        let qt = w2.strip_prefix('Q').ok_or_else(err)?;
        let (q, t) = qt.split_once('T').ok_or_else(err)?;
        let q: u32 = q.parse().map_err(|_| err())?;
        let t: u32 = t.parse().map_err(|_| err())?;
        if bs == 0 || bs > MAX_BS as u64 || q == 0 || t == 0 {
            return Err(err());
        }
        Ok(CdmSpec {
            random,
            bs: bs as u32,
            q,
            t,
        })
    }

    /// The label as CrystalDiskMark prints it.
    pub fn label(&self) -> String {
        let size = block_size_label(self.bs);
        format!(
            "{}{size} Q{}T{}",
            if self.random { "RND" } else { "SEQ" },
            self.q,
            self.t
        )
    }
}

/// A block size as CrystalDiskMark and the reviews write it: 512B, 4K, 1.5K, 128K, 1M.
pub fn block_size_label(bytes: u32) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}K", bytes >> 10)
    } else if bytes >= 1024 {
        format!("{:.1}K", bytes as f64 / 1024.0)
    } else {
        format!("{bytes}B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_bssplit("4k/60:64k/40").unwrap().len(), 2);
        assert!(parse_bssplit("4k/60:64k/30").is_err());
        assert!(parse_bssplit("4k").is_err());
        // Shares that would wrap a 32-bit sum to 100.
        let e = parse_bssplit("4k/4294967295:8k/101").unwrap_err();
        assert!(e.contains("more than 100"), "{e}");
        assert_eq!(
            CdmSpec::parse("RND4K Q32T16").unwrap(),
            CdmSpec {
                random: true,
                bs: 4096,
                q: 32,
                t: 16
            }
        );
        assert_eq!(CdmSpec::parse("SEQ1M Q8T1").unwrap().label(), "SEQ1M Q8T1");
        assert!(CdmSpec::parse("SEQ1M").is_err());
        assert!(CdmSpec::parse("XYZ1M Q1T1").is_err());
        assert!(Distribution::parse("zoned:50/5:30/15:20/80").is_ok());
        assert!(Distribution::parse("zoned:50/5:30/15").is_err());
        assert!(Distribution::parse("zoned:NaN/NaN").is_err());
        assert!(Distribution::parse("zoned:100/NaN").is_err());
        assert!(Distribution::parse("zoned:100/inf").is_err());
        assert_eq!(
            DataPattern::parse("compress=50").unwrap(),
            DataPattern::Compress(50)
        );
        assert!(DataPattern::parse("compress=100").is_err());
        assert!(RwMode::parse("randwrite").is_ok());
        assert!(RwMode::parse("bogus").is_err());
    }
}
