//! Grammar of `drivelab run`: one subcommand per suite, every knob a flag whose default
//! is the reference's value (shrunk by `--short`), and `--resume BUNDLE`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use drivelab_engine::size::{self, SizeOrPercent};
use drivelab_engine::spec::{CdmSpec, DataPattern, IoEngine};
use drivelab_suites::{consistency, iometer, mixed, peak, quick, replay, seqfill, Suite};

use crate::target_arg::TargetArgs;
use crate::values::{bs, duration, pct, positive, switch};

/// Runs per test: CrystalDiskMark offers 1 to 9; a hundred is far beyond any review,
/// and the plan of a mistyped count must not exhaust memory.
pub const MAX_RUNS: u32 = 100;

fn runs(s: &str) -> Result<u32, String> {
    at_most(s, MAX_RUNS, "runs per test")
}

/// A count from 1 to `max`: a mistyped count must not plan a run of days or more
/// outstanding I/O than the engine takes.
fn at_most(s: &str, max: u32, what: &str) -> Result<u32, String> {
    positive(s).and_then(|n| {
        if n > max {
            Err(format!("'{s}' is more than {max} {what}"))
        } else {
            Ok(n)
        }
    })
}

/// Precondition passes, 1 to [`consistency::MAX_PASSES`].
fn passes(s: &str) -> Result<u32, String> {
    at_most(s, consistency::MAX_PASSES, "fill passes")
}

/// A queue depth, 1 to the deepest io_uring queue the engine sets up.
fn qd(s: &str) -> Result<u32, String> {
    at_most(
        s,
        drivelab_engine::run::MAX_URING_DEPTH,
        "outstanding I/Os (the engine's deepest queue)",
    )
}

/// Workers (threads), 1 to the engine's most.
fn workers(s: &str) -> Result<u32, String> {
    at_most(
        s,
        drivelab_engine::run::MAX_JOBS,
        "workers (the engine's most threads)",
    )
}

/// Queue depths, each 1 to the engine's deepest queue.
fn qd_list(s: &str) -> Result<List<u32>, String> {
    let max = drivelab_engine::run::MAX_URING_DEPTH;
    u32_list(s).and_then(|l| {
        if l.0.iter().any(|&q| q > max) {
            Err(format!(
                "'{s}' holds a queue depth above {max}, the engine's deepest queue"
            ))
        } else {
            Ok(l)
        }
    })
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Continue the suite saved in this bundle directory from its next unfinished step.
    #[arg(long, value_name = "BUNDLE")]
    pub resume: Option<PathBuf>,
    /// With --resume: keep a test file drivelab created instead of removing it at the end.
    #[arg(long, requires = "resume")]
    pub keep: bool,
    /// With --resume: allow writes to the bundle's target file drivelab did not create.
    #[arg(long, requires = "resume")]
    pub overwrite: bool,
    /// With --resume: allow writes to this block device (must be the bundle's target).
    #[arg(long, value_name = "DEVICE", requires = "resume")]
    pub destructive: Option<PathBuf>,
    /// With --resume: the drive's sensors to sample, as a suite takes them [default: auto].
    #[arg(long, value_name = "auto|none|hwmon,nvme,smartctl", requires = "resume", value_parser = crate::values::sensor_choice)]
    pub sensors: Option<String>,
    /// With --resume: the external meter, as a suite takes it (not saved in the bundle).
    #[arg(long = "sensor-cmd", value_name = "COMMAND", requires = "resume", value_parser = crate::values::nonblank)]
    pub sensor_cmd: Option<String>,
    /// With --resume: an hwmon device to sample, as a suite takes it. Repeatable.
    #[arg(long = "sensor-hwmon", value_name = "DIR", requires = "resume")]
    pub sensor_hwmon: Vec<PathBuf>,
    /// Record the finished run in this results database: a SQLite file or a
    /// postgres://… URL [default: results.sqlite under the user's data directory].
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// Do not record the finished run in the results database.
    #[arg(long = "no-db", global = true, conflicts_with = "db")]
    pub no_db: bool,
    /// Upload the finished run's bundle to this drivelab serve (http://HOST:PORT) with the
    /// uploader's token in $DRIVELAB_TOKEN (as drivelab db push does).
    #[arg(long, global = true, value_name = "URL")]
    pub upload: Option<String>,
    /// Progress on stderr: auto (a line redrawn in place, only on a terminal), always
    /// (also into a log file: then one plain line per interval, for runs under nohup or
    /// over ssh) or never. The suite's planned duration and its ETA come with it.
    #[arg(long, global = true, value_enum, default_value_t)]
    pub progress: crate::output::progress::ProgressMode,
    #[command(subcommand)]
    pub suite: Option<SuiteCmd>,
}

/// Options every suite takes.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Bundle directory [default: a new drivelab-results/<suite>-<UTC time>/ here].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Shrink durations and sizes so the suite runs in seconds (the values used are recorded).
    #[arg(long)]
    pub short: bool,
    #[command(flatten)]
    pub fio: FioArgs,
}

/// The fio options of `drivelab run SUITE`.
#[derive(Args, Debug, Clone, Default)]
pub struct FioArgs {
    /// Write the suite's steps as fio job files into DIR (made if missing) instead of
    /// running them; run each with `fio --output-format=json+ --output=X.json X.fio` and
    /// bring it back with `drivelab import fio X.json`.
    #[arg(long = "emit-fio", value_name = "DIR", conflicts_with_all = ["engine", "hosts", "host"])]
    pub emit_fio: Option<PathBuf>,
    /// Who does the I/O: drivelab (its own engine) or fio (each step as a fio job,
    /// read back into the bundle) [default: drivelab].
    #[arg(long, value_name = "drivelab|fio", value_parser = ["drivelab", "fio"])]
    pub engine: Option<String>,
    /// Run every step on the fio servers listed in FILE (one `HOST[,PORT]` a line, `#`
    /// comments) at the same time through `fio --client`; the TARGET is the path on
    /// every host. One bundle per host and a fleet view go into --out.
    #[arg(long, value_name = "FILE", conflicts_with = "host")]
    pub hosts: Option<PathBuf>,
    /// A fio server to run on (`HOST[,PORT]`, port 8765 by default); repeat for more.
    #[arg(long, value_name = "HOST[,PORT]")]
    pub host: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum SuiteCmd {
    /// CrystalDiskMark's presets: read then write per test, 3 runs of 5 s, 1 GiB.
    Quick(QuickArgs),
    /// Queue-depth sweep 1…512 of 4K random and 128K sequential I/O; the 95 % knee.
    Peak(PeakArgs),
    /// Precondition, then an hour of 4K random writes at QD32; consistency scores.
    Consistency(ConsistencyArgs),
    /// 128K sequential writes at QD32 over 90 % of the target: cache and drops.
    Seqfill(SeqFillArgs),
    /// IOMeter-style profiles (QD 1…16, 2 workers × QD 1…4) and access specs.
    Iometer(IoMeterArgs),
    /// 4K random I/O at one QD with the read share swept 0…100 %.
    Mixed(MixedArgs),
    /// Replay a block I/O trace (drivelab's format) and score the target on it.
    // The fio options are refused with replay (fio cannot replay a drivelab trace):
    // not offered in its help.
    #[command(
        mut_arg("emit_fio", |a| a.hide(true)),
        mut_arg("engine", |a| a.hide(true)),
        mut_arg("hosts", |a| a.hide(true)),
        mut_arg("host", |a| a.hide(true))
    )]
    Replay(ReplayArgs),
    /// Flush honesty: write numbered blocks in flushed rounds, journalled on another
    /// drive; cut the power; then check every journalled block (--check JOURNAL).
    #[command(
        mut_arg("emit_fio", |a| a.hide(true)),
        mut_arg("engine", |a| a.hide(true)),
        mut_arg("hosts", |a| a.hide(true)),
        mut_arg("host", |a| a.hide(true)),
        mut_arg("target", |a| a.help(POWERLOSS_TARGET)),
        mut_arg("keep", |a| a.hide(true)),
        after_help = "--db, --no-db and --upload do not apply: the verdict exists only after the check; record or upload a checked bundle with drivelab db record BUNDLE and drivelab db push URL BUNDLE."
    )]
    Powerloss(PowerlossArgs),
}

/// The TARGET of `run powerloss` (no `null`: it keeps no data; a file made is kept).
const POWERLOSS_TARGET: &str = "A block device, a file or `sim:…` (a simulated SSD cut by its model: sim:…,power_cut=T). Default: ./drivelab.test, a test file created and kept for the check (remove it yourself afterwards)";

/// A count of power-cut cycles, 1 to 10 000.
fn cycles(s: &str) -> Result<u32, String> {
    at_most(s, 10_000, "power-cut cycles")
}

#[derive(Args, Debug)]
pub struct PowerlossArgs {
    /// Where each round is recorded, fsynced, once its flush completed: a new file on
    /// another drive (refused on the target's own disk, never overwritten).
    #[arg(long, value_name = "FILE", conflicts_with = "check")]
    pub journal: Option<PathBuf>,
    /// After the power cut: read back every block this journal recorded on TARGET and
    /// say whether the drive honoured every flush (exit 1 when it did not), and whether
    /// a cut is shown (the drive's power-cycle count rose, or the host's boot id
    /// changed); a check that shows none is inconclusive (exit 1); another drive than
    /// the journal's is refused.
    #[arg(long, value_name = "JOURNAL")]
    pub check: Option<PathBuf>,
    /// Rounds to write; the write phase ends sooner when the drive goes away
    /// [default: 1000; 8 with --short].
    #[arg(long, value_name = "N", value_parser = positive_u64)]
    pub rounds: Option<u64>,
    /// Blocks of 4 KiB per round [default: 256; 64 with --short].
    #[arg(long = "round-blocks", value_name = "N", value_parser = positive_u64)]
    pub round_blocks: Option<u64>,
    /// Make each round of FUA writes (RWF_DSYNC) instead of writes and a flush.
    #[arg(long)]
    pub fua: bool,
    /// Power-cut cycles in this one run (write, cut, check, again), accumulated in one
    /// bundle: the power is cut by --power-cmd, or by hand at a prompt (on a terminal).
    #[arg(long, value_name = "N", value_parser = cycles)]
    pub cycles: Option<u32>,
    /// With --cycles: the command that cuts the drive's power and brings it back (a
    /// smart plug's or a USB hub's switch, e.g. 'sleep 5; uhubctl -l 1-1 -p 2 -a cycle'),
    /// started with each write phase and run by sh as given (drivelab adds nothing to it).
    #[arg(long = "power-cmd", value_name = "COMMAND", requires = "cycles", value_parser = crate::values::nonblank)]
    pub power_cmd: Option<String>,
    /// `run`'s --db, --no-db and --upload, taken here so that the help does not offer
    /// them: --db and --upload are refused (the verdict exists only after the check).
    #[arg(long, hide = true, value_name = "PATH|URL")]
    pub db: Option<String>,
    #[arg(long = "no-db", hide = true)]
    pub no_db: bool,
    #[arg(long, hide = true, value_name = "URL")]
    pub upload: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

fn positive_u64(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("'{s}' is not a positive whole number")),
    }
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace, in drivelab's format (docs/trace-format.md; `drivelab trace import`
    /// converts others).
    pub trace: PathBuf,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Open loop at this multiple of the recorded pace [default: 1].
    #[arg(long, value_parser = speed, allow_hyphen_values = true)]
    pub speed: Option<f64>,
    /// Cut idle gaps longer than this (of trace time) to it, like 1s [default: keep all idle].
    #[arg(long = "max-idle", value_parser = duration, allow_hyphen_values = true)]
    pub max_idle: Option<u64>,
    /// As fast as possible, never more I/Os outstanding than the trace had at that point.
    #[arg(long)]
    pub afap: bool,
    /// Do not replay the trace's discards (TRIM).
    #[arg(long = "skip-discards")]
    pub skip_discards: bool,
    /// Span the trace's offsets are mapped into, bytes or % of the target [default: 100%].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Most I/Os in flight at once [default: 1024].
    #[arg(long = "max-outstanding", value_parser = positive, allow_hyphen_values = true)]
    pub max_outstanding: Option<u32>,
    /// io_uring (up to --max-outstanding I/Os in flight) or sync (one at a time, a
    /// thread blocking in each) on a file or block device [default: io_uring].
    #[arg(long, value_parser = peak_engine, allow_hyphen_values = true)]
    pub ioengine: Option<IoEngine>,
    /// Interval of the series [default: 1s].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub interval: Option<u64>,
    /// Do not write the span once before a trace that reads (done by default on a
    /// simulated drive, and on a block device given with --destructive: unwritten blocks
    /// read without touching flash).
    #[arg(long = "no-fill")]
    pub no_fill: bool,
    /// Trace time per step: an interrupted replay resumes at a step [default: 10m].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub segment: Option<u64>,
    /// Also write each step's <step>.issue-log.csv into the bundle: each I/O's due,
    /// issue and completion time.
    #[arg(long = "issue-log")]
    pub issue_log: bool,
}

fn speed(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && (1e-6..=1e6).contains(v))
        .ok_or_else(|| format!("'{s}' is not a factor from 0.000001 to 1000000, like 2 or 0.5"))
}

fn size_or_pct(s: &str) -> Result<SizeOrPercent, String> {
    size::parse_size_or_percent(s)
}

/// A span (`--size`): more than nothing, found out before a test file of 0 bytes is
/// asked for.
fn span(s: &str) -> Result<SizeOrPercent, String> {
    match size::parse_size_or_percent(s)? {
        SizeOrPercent::Bytes(0) => Err("must be more than 0, like 1G or 50%".into()),
        SizeOrPercent::Percent(p) if p <= 0.0 => Err("must be more than 0, like 1G or 50%".into()),
        v => Ok(v),
    }
}

/// A comma-separated list (a newtype so clap takes it as one value).
#[derive(Debug, Clone)]
pub struct List<T>(pub Vec<T>);

/// The most items of a list option (`--qds`, `--specs`, `--tests`, …): a plan holds a
/// step or more per item, and a mistyped list must not build a plan that exhausts
/// memory before its size is checked.
pub const MAX_LIST_ITEMS: usize = 256;

fn list_len(s: &str) -> Result<(), String> {
    let n = s.split(',').count();
    if n > MAX_LIST_ITEMS {
        return Err(format!(
            "a list of {n} items, more than the {MAX_LIST_ITEMS} a list option takes"
        ));
    }
    Ok(())
}

fn u32_list(s: &str) -> Result<List<u32>, String> {
    list_len(s)?;
    s.split(',')
        .map(|x| positive(x.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map(List)
        .map_err(|_| {
            format!("'{s}' is not a comma-separated list of whole numbers ≥ 1, like 1,2,4")
        })
}

fn names(s: &str) -> Result<List<String>, String> {
    list_len(s)?;
    let v: Vec<String> = s
        .split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect();
    if v.is_empty() {
        return Err("give at least one name".into());
    }
    Ok(List(v))
}

fn cdm_tests(s: &str) -> Result<List<String>, String> {
    list_len(s)?;
    s.split(',')
        .map(|t| CdmSpec::parse(t.trim()).map(|c| c.label()))
        .collect::<Result<Vec<_>, _>>()
        .map(List)
}

fn percent_f(s: &str) -> Result<f64, String> {
    s.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| (0.0..100.0).contains(v))
        .ok_or_else(|| format!("'{s}' is not a percentage from 0 to below 100, like 25%"))
}

fn fraction(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 1.0)
        .ok_or_else(|| format!("'{s}' is not a fraction between 0 and 1, like 0.5"))
}

fn seconds(s: &str) -> Result<usize, String> {
    let ns = duration(s)?;
    if ns < 1_000_000_000 || ns % 1_000_000_000 != 0 {
        return Err(format!(
            "'{s}' is not a whole number of seconds ≥ 1, like 400 or 400s"
        ));
    }
    Ok((ns / 1_000_000_000) as usize)
}

fn repeat_or_random(s: &str) -> Result<DataPattern, String> {
    match s {
        "repeat" => Ok(DataPattern::Repeat),
        "random" => Ok(DataPattern::Random),
        _ => Err(format!("'{s}' is not repeat or random")),
    }
}

fn peak_engine(s: &str) -> Result<IoEngine, String> {
    match IoEngine::parse(s)? {
        e @ (IoEngine::Sync | IoEngine::IoUring) => Ok(e),
        _ => Err(format!("'{s}' is not sync or io_uring")),
    }
}

#[derive(Args, Debug)]
pub struct QuickArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// standard, nvme, peak or realworld [default: standard].
    #[arg(long, value_parser = quick::parse_preset, allow_hyphen_values = true)]
    pub preset: Option<String>,
    /// Own list of tests instead of a preset, e.g. "SEQ1M Q8T1,RND4K Q32T16".
    #[arg(long, value_parser = cdm_tests, allow_hyphen_values = true)]
    pub tests: Option<List<String>>,
    /// Test-file size / span [default: 1G; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Length of one run [default: 5s; --short 300ms].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub runtime: Option<u64>,
    /// Idle between tests [default: 5s; --short 0]; the drive's sensors are read every
    /// second of it, so idle power shows between workloads (the external-SSD review
    /// idles 30s).
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub interval: Option<u64>,
    /// The same as --interval (an argument of its own, so that an error names it).
    #[arg(long, value_parser = duration, allow_hyphen_values = true, conflicts_with = "interval")]
    pub idle: Option<u64>,
    /// Runs per test and direction, 1 to 100 [default: 3; --short 2].
    #[arg(long, value_parser = runs, allow_hyphen_values = true)]
    pub runs: Option<u32>,
    /// Which of the runs the table shows: best (CrystalDiskMark's) or mean [default: best].
    #[arg(long, value_parser = ["best", "mean"], allow_hyphen_values = true)]
    pub show: Option<String>,
    /// Content of writes [default: random].
    #[arg(long, value_parser = DataPattern::parse, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
}

#[derive(Args, Debug)]
pub struct PeakArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Highest queue depth of the sweep [default: 512; --short 4].
    #[arg(long = "max-qd", value_parser = qd, allow_hyphen_values = true)]
    pub max_qd: Option<u32>,
    /// sync (threads, one synchronous I/O each: the reference's method) or io_uring [default: sync].
    #[arg(long, value_parser = peak_engine, allow_hyphen_values = true)]
    pub ioengine: Option<IoEngine>,
    /// Length of one sweep point [default: 30s; --short 250ms].
    #[arg(long = "point-time", value_parser = duration, allow_hyphen_values = true)]
    pub point_time: Option<u64>,
    /// Span, bytes or % of the target [default: 100%; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Run every QD even after throughput fell twice past the peak.
    #[arg(long = "no-early-stop")]
    pub no_early_stop: bool,
    /// Workloads to sweep [default: 4k-randread,4k-randwrite,128k-read,128k-write].
    #[arg(long, value_parser = names, allow_hyphen_values = true)]
    pub workloads: Option<List<String>>,
    /// Write the span once sequentially before the sweep, so reads hit written data
    /// (an SSD answers reads of unwritten or trimmed blocks without touching flash)
    /// [default: 1 when the sweep writes anyway, else 0].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub precondition: Option<bool>,
    /// 4K random writes at QD32 over the span before the random-write sweep, so that it
    /// measures the drive's steady state, as the reference review does; 0 for none
    /// [default: 1h; --short 1s].
    #[arg(long = "steady-writes", value_parser = duration_or_zero, allow_hyphen_values = true)]
    pub steady_writes: Option<u64>,
    /// Discard and write the span sequentially twice before the 128K sequential sweeps
    /// when random writes came before them (sequential steady state) [default: 1].
    #[arg(long = "seq-precondition", value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = switch, allow_negative_numbers = true)]
    pub seq_precondition: Option<bool>,
    /// Re-measurement steps after each sweep, each one point long: a point within its
    /// measured noise of the knee threshold gets another pass (up to 3 a point), pooled
    /// with the first; 0 for none [default: 4; --short 2].
    #[arg(long = "recheck-passes", value_parser = recheck_passes, allow_hyphen_values = true)]
    pub recheck_passes: Option<u32>,
}

fn recheck_passes(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n <= peak::MAX_RECHECK_PASSES)
        .ok_or_else(|| {
            format!(
                "'{s}' is not a whole number from 0 to {}",
                peak::MAX_RECHECK_PASSES
            )
        })
}

/// A duration, or 0 for none.
fn duration_or_zero(s: &str) -> Result<u64, String> {
    if s.trim() == "0" {
        return Ok(0);
    }
    duration(s)
}

#[derive(Args, Debug)]
pub struct ConsistencyArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Span, bytes or % of the target [default: 100%; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Length of the random-write test [default: 3600s; --short 10s].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub duration: Option<u64>,
    /// Length of one steady-state round, whole seconds [default: 60s; --short 2s].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub round: Option<u64>,
    /// Scoring window at the end of the test [default: 400s; --short 6s].
    #[arg(long, value_parser = seconds, allow_hyphen_values = true)]
    pub window: Option<usize>,
    /// Queue depth of the random writes [default: 32].
    #[arg(long, alias = "iodepth", value_parser = qd, allow_hyphen_values = true)]
    pub qd: Option<u32>,
    /// Sequential fill passes of the precondition, 1 to 10 (2 for the SNIA variant)
    /// [default: 1].
    #[arg(long, value_parser = passes, allow_hyphen_values = true)]
    pub passes: Option<u32>,
    /// Over-provisioning to simulate: test (100 − N) % of the span, discard the rest [default: 0%].
    #[arg(long, value_parser = percent_f, allow_hyphen_values = true)]
    pub op: Option<f64>,
    /// Stop once the SNIA PTS steady state is reached.
    #[arg(long = "until-steady")]
    pub until_steady: bool,
    /// Content of writes [default: random, incompressible].
    #[arg(long, value_parser = DataPattern::parse, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
    /// The continuous random writes carry a checked header and are read back after the
    /// measured time; a block not as written fails the run (exit 1). `drivelab verify
    /// TARGET --from BUNDLE` checks again later.
    #[arg(long)]
    pub verify: bool,
}

#[derive(Args, Debug)]
pub struct SeqFillArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Span, bytes or % of the target [default: 100%; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// How much of the span to write, bytes or % [default: 90%].
    #[arg(long, value_parser = size_or_pct, allow_hyphen_values = true)]
    pub fill: Option<SizeOrPercent>,
    /// Block size [default: 128k].
    #[arg(long, value_parser = bs, allow_hyphen_values = true)]
    pub bs: Option<u32>,
    /// Queue depth [default: 32].
    #[arg(long, alias = "iodepth", value_parser = qd, allow_hyphen_values = true)]
    pub qd: Option<u32>,
    /// Drop episodes: a second or more below this fraction of the post-cache median [default: 0.5].
    #[arg(long = "drop-fraction", value_parser = fraction, allow_hyphen_values = true)]
    pub drop_fraction: Option<f64>,
    /// Logging interval, dividing a second evenly [default: 100ms].
    #[arg(long, value_parser = duration, allow_hyphen_values = true)]
    pub interval: Option<u64>,
    /// Content of writes [default: random].
    #[arg(long, value_parser = DataPattern::parse, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
    /// Each block written carries a checked header and is read back after the fill; a
    /// block not as written fails the run (exit 1). `drivelab verify TARGET --from BUNDLE`
    /// checks again later.
    #[arg(long)]
    pub verify: bool,
}

#[derive(Args, Debug)]
pub struct IoMeterArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Span [default: 10GB, or the whole target when smaller; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Length of one test [default: 3m; --short 250ms].
    #[arg(long = "test-time", value_parser = duration, allow_hyphen_values = true)]
    pub test_time: Option<u64>,
    /// Queue depths of the 4K random profiles [default: 1,2,4,8,16].
    #[arg(long, value_parser = qd_list, allow_hyphen_values = true)]
    pub qds: Option<List<u32>>,
    /// Outstanding I/Os per worker of the 512K sequential profiles [default: 1,2,4].
    #[arg(long = "seq-qds", value_parser = qd_list, allow_hyphen_values = true)]
    pub seq_qds: Option<List<u32>>,
    /// Workers of the sequential profiles [default: 2].
    #[arg(long = "seq-workers", value_parser = workers, allow_hyphen_values = true)]
    pub seq_workers: Option<u32>,
    /// Access specs to run: workstation, database, fileserver, webserver, streaming-read,
    /// streaming-write [default: workstation].
    #[arg(long, value_parser = names, allow_hyphen_values = true)]
    pub specs: Option<List<String>>,
    /// Outstanding I/Os of the access-spec tests [default: 64].
    #[arg(long = "spec-qd", value_parser = qd, allow_hyphen_values = true)]
    pub spec_qd: Option<u32>,
    /// repeat (IOMeter's repeating bytes) or random [default: repeat].
    #[arg(long, value_parser = repeat_or_random, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
}

#[derive(Args, Debug)]
pub struct MixedArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Span, bytes or % of the target [default: 100%; --short 64M].
    #[arg(long, value_parser = span, allow_hyphen_values = true)]
    pub size: Option<SizeOrPercent>,
    /// Block size [default: 4k].
    #[arg(long, value_parser = bs, allow_hyphen_values = true)]
    pub bs: Option<u32>,
    /// Outstanding I/Os [default: 32].
    #[arg(long, alias = "iodepth", value_parser = qd, allow_hyphen_values = true)]
    pub qd: Option<u32>,
    /// Step of the read share, percent [default: 10].
    #[arg(long, value_parser = pct, allow_hyphen_values = true)]
    pub step: Option<u32>,
    /// Length of one step [default: 60s; --short 250ms].
    #[arg(long = "step-time", value_parser = duration, allow_hyphen_values = true)]
    pub step_time: Option<u64>,
    /// Content of writes [default: random].
    #[arg(long, value_parser = DataPattern::parse, allow_hyphen_values = true)]
    pub data: Option<DataPattern>,
}

fn set<T>(slot: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *slot = v;
    }
}

impl SuiteCmd {
    pub fn common(&self) -> &CommonArgs {
        match self {
            SuiteCmd::Quick(a) => &a.common,
            SuiteCmd::Peak(a) => &a.common,
            SuiteCmd::Consistency(a) => &a.common,
            SuiteCmd::Seqfill(a) => &a.common,
            SuiteCmd::Iometer(a) => &a.common,
            SuiteCmd::Mixed(a) => &a.common,
            SuiteCmd::Replay(a) => &a.common,
            SuiteCmd::Powerloss(a) => &a.common,
        }
    }

    /// The `--ioengine` given that picks the backend alone: replay's (on a file or block
    /// device). Peak's also sets the sweep's shape (threads or depth), which applies on
    /// every target.
    pub fn backend_engine(&self) -> Option<IoEngine> {
        match self {
            SuiteCmd::Replay(a) => a.ioengine,
            _ => None,
        }
    }

    /// The suite with its knobs: defaults (or `--short` ones), then the flags given.
    /// Errors name the flag.
    pub fn build(&self) -> Result<Box<dyn Suite>, String> {
        let short = self.common().short;
        Ok(match self {
            SuiteCmd::Quick(a) => {
                let mut k = quick::Quick::new(short);
                if let Some(p) = &a.preset {
                    k.preset = p.clone();
                    k.tests = quick::preset_tests(p).unwrap_or_default();
                }
                if let Some(t) = &a.tests {
                    k.preset = "custom".into();
                    k.tests = t.0.clone();
                }
                set(&mut k.size, a.size);
                set(&mut k.runtime_ns, a.runtime);
                set(&mut k.interval_ns, a.interval.or(a.idle));
                set(&mut k.runs, a.runs);
                set(&mut k.data, a.data);
                if let Some(s) = &a.show {
                    k.show = if s == "mean" {
                        quick::Show::Mean
                    } else {
                        quick::Show::Best
                    };
                }
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Peak(a) => {
                let mut k = peak::Peak::new(short);
                set(&mut k.max_qd, a.max_qd);
                set(&mut k.ioengine, a.ioengine);
                set(&mut k.point_time_ns, a.point_time);
                set(&mut k.size, a.size);
                set(&mut k.workloads, a.workloads.as_ref().map(|l| l.0.clone()));
                k.early_stop = !a.no_early_stop;
                k.precondition = a.precondition;
                set(&mut k.steady_writes_ns, a.steady_writes);
                set(&mut k.seq_precondition, a.seq_precondition);
                set(&mut k.recheck_passes, a.recheck_passes);
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Consistency(a) => {
                let mut k = consistency::Consistency::new(short);
                set(&mut k.size, a.size);
                set(&mut k.duration_ns, a.duration);
                set(&mut k.round_ns, a.round);
                set(&mut k.window_s, a.window);
                set(&mut k.qd, a.qd);
                set(&mut k.passes, a.passes);
                set(&mut k.op_percent, a.op);
                set(&mut k.data, a.data);
                k.until_steady = a.until_steady;
                k.verify = a.verify;
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Seqfill(a) => {
                let mut k = seqfill::SeqFill::new(short);
                set(&mut k.size, a.size);
                set(&mut k.fill, a.fill);
                set(&mut k.bs_bytes, a.bs);
                set(&mut k.qd, a.qd);
                set(&mut k.drop_fraction, a.drop_fraction);
                set(&mut k.data, a.data);
                set(&mut k.interval_ns, a.interval);
                k.verify = a.verify;
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Iometer(a) => {
                let mut k = iometer::IoMeter::new(short);
                set(&mut k.size, a.size);
                set(&mut k.test_time_ns, a.test_time);
                set(&mut k.qds, a.qds.as_ref().map(|l| l.0.clone()));
                set(&mut k.seq_qds, a.seq_qds.as_ref().map(|l| l.0.clone()));
                set(&mut k.seq_workers, a.seq_workers);
                set(&mut k.specs, a.specs.as_ref().map(|l| l.0.clone()));
                set(&mut k.spec_qd, a.spec_qd);
                set(&mut k.data, a.data);
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Mixed(a) => {
                let mut k = mixed::Mixed::new(short);
                set(&mut k.size, a.size);
                set(&mut k.bs_bytes, a.bs);
                set(&mut k.qd, a.qd);
                set(&mut k.step_percent, a.step);
                set(&mut k.step_time_ns, a.step_time);
                set(&mut k.data, a.data);
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Replay(a) => {
                let trace = std::path::absolute(&a.trace)
                    .map_err(|e| format!("TRACE {}: {e}", a.trace.display()))?;
                // A file that is not a trace is found out before any target is opened,
                // and whether it writes (a block device needs --destructive then).
                replay::read_header(&trace)?;
                // The scan reads every entry, extent and the trailer before anything is opened.
                let found = replay::scan(&trace, None, u64::MAX)?;
                let mut k = replay::Replay::new(trace);
                // (With --destructive, a block device is written to fill the span before a
                // trace that only reads.)
                let fills = a.common.target.destructive.is_some() && !a.no_fill && found.reads > 0;
                k.writes = found.modifies(!a.skip_discards) || fills;
                if short {
                    k.size = SizeOrPercent::Bytes(64 << 20);
                    k.short = true;
                }
                set(&mut k.speed, a.speed);
                k.max_idle_ns = a.max_idle;
                k.afap = a.afap;
                k.skip_discards = a.skip_discards;
                set(&mut k.size, a.size);
                set(&mut k.max_outstanding, a.max_outstanding);
                set(&mut k.ioengine, a.ioengine);
                set(&mut k.interval_ns, a.interval);
                set(&mut k.segment_ns, a.segment);
                k.issue_log = a.issue_log;
                if !k.afap {
                    let traced_ns = match k.max_idle_ns {
                        Some(_) => replay::scan(&k.trace, k.max_idle_ns, u64::MAX)?.last_eff_ns,
                        None => found.last_issue_ns,
                    };
                    let days = traced_ns as f64 / k.speed / 86_400e9;
                    if days > 366.0 {
                        return Err(format!(
                            "--speed {}: replaying the trace at that pace would take {days:.0} days, more than 366; cut its idle time with --max-idle (e.g. 1s), raise --speed, or use --afap",
                            k.speed
                        ));
                    }
                }
                k.fill = !a.no_fill;
                k.validate()?;
                Box::new(k)
            }
            SuiteCmd::Powerloss(a) => Box::new(a.knobs()?),
        })
    }
}

impl PowerlossArgs {
    /// The suite's knobs: defaults (or `--short` ones), then the flags given, with a new
    /// seed so that another run's blocks are told from this one's.
    pub fn knobs(&self) -> Result<drivelab_suites::powerloss::PowerLoss, String> {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()) << 40;
        let mut k = drivelab_suites::powerloss::PowerLoss::new(seed);
        if self.common.short {
            (k.rounds, k.round_blocks) = (8, 64);
        }
        set(&mut k.rounds, self.rounds);
        set(&mut k.round_blocks, self.round_blocks);
        k.fua = self.fua;
        k.validate()?;
        Ok(k)
    }
}
