//! Command-line grammar. Workload options use fio's names so users' habits carry over;
//! every value is checked here or in the engine's resolver, and a bad one gives a single
//! line naming the option and the accepted form, with exit code 2.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use drivelab_engine::size::{self, SizeOrPercent};
use drivelab_engine::spec::{CdmSpec, DataPattern, Distribution, IoEngine, RwMode};

use crate::target_arg::TargetArgs;
use crate::values::{bs, bssplit, duration, pct, positive, seed, switch, BsSplit};

#[derive(Parser, Debug)]
#[command(
    name = "drivelab",
    version,
    about = "Characterise a drive, a volume or a file the way the best SSD reviews do",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload (fio-style options) and report IOPS, bandwidth and latency.
    Io(IoArgs),
    /// Run a review methodology (quick, peak, consistency, seqfill, iometer, mixed, replay,
    /// powerloss) into a result bundle, or continue one with --resume.
    Run(crate::run_args::RunArgs),
    /// Write one self-contained HTML report (and optionally PNG/SVG charts) from result bundles.
    Report(crate::cmd::report::ReportArgs),
    /// Compare the headline numbers of runs (bundles or database run ids) side by side.
    Compare(crate::cmd::compare::CompareArgs),
    /// The results database: list, show, export, import and record runs.
    Db(crate::cmd::db::DbArgs),
    /// Serve the results database to web browsers, and take uploads from test machines.
    Serve(crate::cmd::serve::ServeArgs),
    /// Bring another tool's result in as a result bundle (`drivelab import fio RESULT.json`).
    Import(crate::cmd::fio::ImportArgs),
    /// Read back the blocks an `io --verify` run wrote (its --json document) and check each
    /// is as written: `drivelab verify TARGET --from RESULT.json`.
    Verify(crate::cmd::verify::VerifyArgs),
    /// Block I/O traces: import other tools' traces, record a device's I/O, summarise.
    Trace(crate::cmd::trace::TraceArgs),
    /// Print a shell completion script for bash, zsh or fish (e.g. `drivelab completions
    /// bash > /etc/bash_completion.d/drivelab`).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) on stdout, e.g. `drivelab man > drivelab.1`.
    Man,
    /// The device lab's tool (docs/lab.md): replay a dm-log-writes log onto a fresh
    /// device up to a mark or a flush.
    #[command(hide = true)]
    LabReplayLog(crate::cmd::lab_replay::LabReplayArgs),
}

/// The shells a completion script is generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug, Clone)]
pub struct IoArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Read a file whose span has holes or unwritten (fallocated) extents anyway; the
    /// result is flagged (such reads are zeros made up by the filesystem, not I/O).
    #[arg(long = "read-holes", alias = "read_holes")]
    pub read_holes: bool,
    /// I/O pattern [default: randread; fio's is read].
    #[arg(long, value_name = "read|write|randread|randwrite|rw|randrw", value_parser = RwMode::parse, allow_hyphen_values = true)]
    pub rw: Option<RwMode>,
    /// Share of reads in mixed modes, percent [default: 50].
    #[arg(long, value_parser = pct, allow_hyphen_values = true)]
    pub rwmixread: Option<u32>,
    /// Block size [default: 4k].
    #[arg(long, value_parser = bs, conflicts_with_all = ["bssplit", "spec"], allow_hyphen_values = true)]
    pub bs: Option<u32>,
    /// Block-size mix, e.g. 4k/60:64k/40 (shares add up to 100).
    #[arg(long, value_parser = bssplit, conflicts_with = "spec", allow_hyphen_values = true)]
    pub bssplit: Option<BsSplit>,
    /// I/Os outstanding per job (io_uring) [default: 1].
    #[arg(long, value_parser = positive, conflicts_with = "spec", allow_hyphen_values = true)]
    pub iodepth: Option<u32>,
    /// Jobs (threads) [default: 1].
    #[arg(long, value_parser = positive, conflicts_with = "spec", allow_hyphen_values = true)]
    pub numjobs: Option<u32>,
    /// sync (one I/O per thread), io_uring or null [default: io_uring when iodepth > 1, else sync].
    #[arg(long, value_parser = IoEngine::parse, allow_hyphen_values = true)]
    pub ioengine: Option<IoEngine>,
    /// O_DIRECT, bypassing the page cache [default: 1 for files and block devices].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub direct: Option<bool>,
    /// Buffered I/O: write back and drop the span's cached pages before the run, so that
    /// it starts from the target (fio's invalidate) [default: 1].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub invalidate: Option<bool>,
    /// Buffered I/O: at the end, wait until the writes are on the target (fsync); the
    /// wait counts in the elapsed time and the rates (fio's end_fsync) [default: 0].
    #[arg(long = "end_fsync", alias = "end-fsync", value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub end_fsync: Option<bool>,
    /// Length of the span (LBA range) to use, bytes or % of the target [default: all after
    /// --offset]; a span past the target's end is refused (the suites cut theirs to the
    /// target and say so). A new test file is made --offset + --size long (1 GiB when
    /// either is a percentage).
    #[arg(long, value_parser = size::parse_size_or_percent, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Start of the span, bytes or % of the target [default: 0].
    #[arg(long, value_parser = size::parse_size_or_percent, allow_hyphen_values = true)]
    pub offset: Option<SizeOrPercent>,
    /// Time bound after the ramp, e.g. 30s, 5m [default: 10s unless --io_size is given].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub runtime: Option<u64>,
    /// Byte bound over all jobs, bytes or % of the span (e.g. 90%).
    #[arg(long = "io_size", alias = "io-size", value_parser = size::parse_size_or_percent, allow_hyphen_values = true)]
    pub io_size: Option<SizeOrPercent>,
    /// Time before measuring starts: excluded from totals, tagged in the series; rounded
    /// up to whole --log-interval intervals [default: 0].
    #[arg(long = "ramp_time", alias = "ramp-time", value_parser = duration, allow_hyphen_values = true)]
    pub ramp_time: Option<u64>,
    /// For random modes: share of I/Os at random offsets, the rest sequential [default: 100].
    #[arg(long = "percentage_random", alias = "percentage-random", value_parser = pct, allow_hyphen_values = true)]
    pub percentage_random: Option<u32>,
    /// uniform or zoned:IO%/SPAN%:… [default: uniform].
    #[arg(long = "random_distribution", alias = "random-distribution", value_parser = Distribution::parse, allow_hyphen_values = true)]
    pub random_distribution: Option<Distribution>,
    /// Seed of every random choice (always recorded) [default: from the clock]. Offsets,
    /// directions, block sizes and write content each draw from their own stream of it, so
    /// one seed gives the same offsets whatever the data pattern or read/write mix.
    #[arg(long, value_parser = seed, allow_hyphen_values = true)]
    pub randseed: Option<u64>,
    /// CrystalDiskMark shorthand, e.g. "RND4K Q32T16" or "SEQ1M Q8T1" (Q per thread, T threads).
    /// SEQ or RND comes from the spec, the direction from --rw (read, write or the rw/randrw
    /// mix, spelt with or without "rand"; read by default).
    #[arg(long, value_parser = CdmSpec::parse, allow_hyphen_values = true)]
    pub spec: Option<CdmSpec>,
    /// Content of writes: random, zero, repeat or compress=N [default: random].
    #[arg(long, value_parser = DataPattern::parse, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
    /// Width of one interval of the series, at least 10ms [default: 1s].
    #[arg(long = "log-interval", alias = "log_interval", value_parser = duration, allow_hyphen_values = true)]
    pub log_interval: Option<u64>,
    /// Write the result document (JSON) to this file (`-`: alone on stdout, as with
    /// --output-format json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// normal (human summary) or json (the result document alone on stdout).
    #[arg(long = "output-format", value_parser = ["normal", "json"], default_value = "normal")]
    pub output_format: String,
    /// Progress on stderr: auto (a line redrawn in place, only on a terminal and not
    /// with --output-format json), always (also into a log file: then one plain line per
    /// interval, for runs under nohup or over ssh) or never.
    #[arg(long, value_enum, default_value_t)]
    pub progress: crate::output::progress::ProgressMode,
    /// Write the interval series as CSV to this file (`-`: alone on stdout, the summary
    /// left out).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Let --json and --csv replace a file drivelab did not write, or one of another
    /// kind (a trace, a report…; a result document, or series CSV, drivelab wrote is
    /// replaced anyway; a results database or a bundle's file never is).
    #[arg(long)]
    pub force: bool,
    /// Keep going after I/O errors (counted and recorded) instead of stopping.
    #[arg(long = "continue-on-error", alias = "continue_on_error")]
    pub continue_on_error: bool,
    /// Check every block written: each carries a header (offset, generation, the run's
    /// seed, CRC-32C) and a pass after the writes reads each block back (on the run's
    /// engine, at its queue depth); a block not as
    /// written fails the run (exit 1) and is listed in the result's `verify`. Needs one
    /// --bs and --data random or compress=N; `drivelab verify` checks again later.
    #[arg(long)]
    pub verify: bool,
    /// With --verify: also check during the run (fio's verify_backlog). After every N
    /// writes each job reads back the blocks it wrote since its last check, before it
    /// writes on, and the last ones once its writes are done (not when --runtime ends
    /// it: those are left to the pass); those reads count in the series and totals like
    /// any read, and a block not as written stops the run (exit 1). Random writes need
    /// --numjobs 1.
    #[arg(long = "verify-backlog", alias = "verify_backlog", value_name = "N", value_parser = positive, allow_hyphen_values = true)]
    pub verify_backlog: Option<u32>,
    /// io_uring: register the I/O buffers with the ring, sparing the kernel a page
    /// lookup per I/O; `--fixedbufs=0` turns it off [default: true; falls back to
    /// plain buffers, with a note, where registration is refused].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub fixedbufs: Option<bool>,
    /// io_uring: register the target's file descriptor with the ring; `=0` turns it
    /// off [default: true].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub registerfiles: Option<bool>,
    /// io_uring: submit once this many I/Os are ready; 1 submits each I/O at once
    /// [default: automatic — the whole refill with the wait for the next completion,
    /// so that the iodepth asked is the iodepth held].
    #[arg(long = "iodepth_batch_submit", alias = "iodepth-batch-submit", value_parser = positive, allow_hyphen_values = true)]
    pub iodepth_batch_submit: Option<u32>,
}
