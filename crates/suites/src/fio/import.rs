//! `drivelab import fio RESULT.json [--logs DIR]`: any fio JSON or json+ result as a
//! result bundle (suite `fio`, one step per job, summary metrics written at import) that
//! `report`, `compare` and `db` read like drivelab's own.
//!
//! The workload is rebuilt from fio's options as far as drivelab's vocabulary reaches
//! (sizes read with fio's default `kb_base=1024`: `4k` and `4KB` are 4096 bytes, `4KiB`
//! is 4000, as fio's HOWTO documents); the measured numbers come from fio's totals,
//! bins and logs, never from the options.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use drivelab_engine::result::{HostInfo, Tool};
use drivelab_engine::spec::{DataPattern, Distribution, IoEngine, RwMode, Workload};
use drivelab_engine::target::{TargetInfo, TargetKind};

use super::convert::{self, Context, JobLogs};
use super::json::{self, FioOptions, Job, Output, FIO_MAX_JOBS};
use super::logs::{Files, Prefixes};
use super::per_io;
use crate::bundle::{
    now_rfc3339, BundleStatus, Metric, RunDoc, StepRecord, StepStatus, Summary,
    BUNDLE_SCHEMA_VERSION,
};
use crate::plan::StepKind;

pub use super::sizes::fio_size;

/// The suite kind of imported fio results.
pub const SUITE: crate::suite::SuiteKind = crate::suite::SuiteKind::Fio;

/// A size option (`size`, `offset`, `io_size`) as fio took it: None when the result
/// names none or gives a share of the file (`50%`: its bytes are not in the result);
/// one past 2^64 - 1 bytes (`16E`) or not a size is refused, never read as 0.
fn size_opt(v: Option<&str>, k: &str) -> Result<Option<u64>, String> {
    match v.map(str::trim) {
        None => Ok(None),
        Some(s) if s.ends_with('%') => Ok(None),
        Some(s) => fio_size(s).map(Some).ok_or_else(|| {
            format!("{k}={s}: not a size drivelab can hold (bytes with an optional k/m/g/t/p/e unit, below 16E)")
        }),
    }
}

/// A time as fio reads it (bare numbers are seconds), in ns.
fn fio_time_ns(s: &str) -> Option<u64> {
    drivelab_engine::size::parse_duration_ns(s).ok()
}

/// Option `k` of the job, else of the global section.
fn opt<'a>(job: &'a Job, global: &'a FioOptions, k: &str) -> Option<&'a str> {
    job.option(global, k)
}

/// Most I/Os in flight per job drivelab takes from an asynchronous engine (more than
/// io_uring's 32768-entry ring or libaio's default `aio-max-nr` of 65536 holds).
const MAX_IMPORT_IODEPTH: u64 = 65_536;

/// A whole-number option of fio's as fio reads it (`"16"`, or a number), `d` when the
/// result does not name it; a value fio would refuse, or one past `max`, is refused
/// with the option's name (never cast down: 2^32 jobs are not 0 jobs).
fn whole(v: Option<&str>, k: &str, d: u64, (min, max): (u64, u64)) -> Result<u64, String> {
    let Some(s) = v else { return Ok(d) };
    match s.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{k}={s}: fio takes a whole number from {min} to {max} here (a result edited by hand?)"
        )),
    }
}

/// The direction fio's `rw` names; trims are refused (drivelab's results hold reads
/// and writes only, so a trim could only be shown as something it was not).
fn rw_of(s: Option<&str>) -> Result<RwMode, String> {
    let Some(s) = s else { return Ok(RwMode::Read) };
    // fio's `rw=randread:8` (an offset modifier) is still randread.
    let mode = s.split(':').next().unwrap_or(s).trim();
    if mode.contains("trim") {
        return Err(format!(
            "rw={s}: drivelab's results have reads and writes only, so trims cannot be shown as trims; import the jobs that read or write"
        ));
    }
    RwMode::parse(mode).map_err(|e| format!("rw={s}: {e}"))
}

/// The workload as drivelab would state it, from fio's options; a value fio would not
/// have run with is refused (`Err` names the option).
pub fn workload_of(
    job: &Job,
    global: &FioOptions,
    notes: &mut Vec<String>,
) -> Result<Workload, String> {
    let o = |k: &str| opt(job, global, k);
    let rw = rw_of(o("rw").or(o("readwrite")))?;
    let engine_name = o("ioengine").unwrap_or("psync");
    let ioengine = match engine_name {
        "io_uring" => IoEngine::IoUring,
        "libaio" => IoEngine::Libaio,
        "null" => IoEngine::Null,
        "psync" | "sync" | "pvsync" | "pvsync2" => IoEngine::Sync,
        other => {
            notes.push(format!(
                "fio's ioengine was {other}, which drivelab has no name for: the config says io_uring (drivelab's asynchronous engine) and each step's params fio_ioengine says {other}."
            ));
            IoEngine::IoUring
        }
    };
    let num = |k: &str, d: u64, range: (u64, u64)| whole(o(k), k, d, range);
    let pct = |k: &str, d: u64| num(k, d, (0, 100)).map(|v| v as u32);
    // fio's synchronous engines have one I/O in flight per job whatever iodepth says
    // (fio runs any depth there: a note, not a refusal).
    let iodepth = if ioengine == IoEngine::Sync {
        let d = num("iodepth", 1, (1, u64::MAX))?;
        if d > 1 {
            notes.push(format!(
                "fio's {engine_name} does one I/O at a time per job: iodepth={d} is taken as 1 (as fio runs it)."
            ));
        }
        1
    } else {
        num("iodepth", 1, (1, MAX_IMPORT_IODEPTH))? as u32
    };
    let time_based = o("time_based").is_some_and(|v| v != "0");
    let runtime_ns = o("runtime").and_then(fio_time_ns);
    // The real share of reads: all for reads, none for writes; a mix's from rwmixread,
    // else rwmixwrite, else fio's 50.
    // (Both options checked whatever the mode: fio refuses 101 in any job.)
    let (mixread, mixwrite) = (pct("rwmixread", 50)?, pct("rwmixwrite", 50)?);
    let rwmixread = match rw {
        RwMode::Read | RwMode::RandRead => 100,
        RwMode::Write | RwMode::RandWrite => 0,
        RwMode::Rw | RwMode::RandRw => match (o("rwmixread"), o("rwmixwrite")) {
            (None, Some(_)) => 100 - mixwrite,
            _ => mixread,
        },
    };
    let sizes = super::sizes::of(job, global, rw.read_percent(rwmixread))?;
    notes.extend(sizes.notes);
    let (verify, verify_backlog) = verify_of(&o, notes)?;
    Ok(Workload {
        rw,
        rwmixread,
        bs: sizes.bs,
        bs_mix: sizes.mix,
        iodepth,
        numjobs: num("numjobs", 1, (1, FIO_MAX_JOBS))? as u32,
        ioengine,
        direct: o("direct").is_some_and(|v| v != "0"),
        offset_bytes: size_opt(o("offset"), "offset")?.unwrap_or(0),
        size_bytes: size_opt(o("size"), "size")?.unwrap_or(0),
        runtime_ns: if time_based || runtime_ns.is_some() {
            runtime_ns
        } else {
            None
        },
        io_size_bytes: size_opt(o("io_size"), "io_size")?,
        ramp_ns: o("ramp_time").and_then(fio_time_ns).unwrap_or(0),
        percentage_random: pct("percentage_random", 100)?,
        random_distribution: o("random_distribution")
            .and_then(|s| Distribution::parse(s).ok())
            .unwrap_or(Distribution::Uniform),
        randseed: o("randseed")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
        data: if o("zero_buffers").is_some_and(|v| v != "0") {
            DataPattern::Zero
        } else {
            DataPattern::Random
        },
        // fio's default, 0, logs every I/O: those logs go on windows of a second.
        log_interval_ns: match num("log_avg_msec", 0, (0, 86_400_000))? {
            0 => PER_IO_WINDOW_MS,
            ms => ms,
        } * 1_000_000,
        log_head: None,
        align_bytes: 512,
        continue_on_error: o("continue_on_error").is_some_and(|v| v != "none" && v != "0"),
        fixedbufs: o("fixedbufs").is_some_and(|v| v != "0"),
        registerfiles: o("registerfiles").is_some_and(|v| v != "0"),
        iodepth_batch_submit: num("iodepth_batch_submit", 0, (0, MAX_IMPORT_IODEPTH))? as u32,
        invalidate: o("invalidate").is_none_or(|v| v != "0"),
        end_fsync: o("end_fsync").is_some_and(|v| v != "0"),
        verify,
        verify_backlog,
    })
}

/// fio's `verify` and `verify_backlog` as drivelab's `verify` and `--verify-backlog N`:
/// fio checked its writes (a `verify` method and `do_verify` not 0), after every N
/// writes too with `verify_backlog=N` (fio reads nothing back without both). fio's
/// `verify_backlog_batch` other than N (or 0, its default: N) reads back another number
/// of blocks per check than were written, which drivelab's option cannot state: refused.
fn verify_of<'a>(
    o: &impl Fn(&str) -> Option<&'a str>,
    notes: &mut Vec<String>,
) -> Result<(bool, Option<u64>), String> {
    let method = o("verify").map(str::trim).filter(|v| !v.is_empty());
    let checked = method.is_some_and(|v| v != "0" && v != "none")
        && o("do_verify").is_none_or(|v| v.trim() != "0");
    let count = |k: &str| match o(k) {
        None => Ok(0),
        Some(s) => fio_size(s).ok_or_else(|| format!("{k}={s}: not a count of blocks fio takes")),
    };
    let backlog = count("verify_backlog")?;
    let batch = count("verify_backlog_batch")?;
    if !checked {
        return Ok((false, None));
    }
    if backlog > 0 && batch != 0 && batch != backlog {
        return Err(format!(
            "verify_backlog_batch={batch}: fio read back {batch} blocks per check of verify_backlog={backlog} writes, which drivelab's --verify-backlog N (every block written since the last check: fio's batch equal to verify_backlog, its default) cannot state; import results of jobs with verify_backlog_batch unset or equal to verify_backlog"
        ));
    }
    notes.push(format!(
        "fio checked its writes (verify={}{}) with its own block header: its read-back reads are this step's reads; drivelab verify cannot check the target against this result.",
        method.unwrap_or_default(),
        if backlog > 0 {
            format!(", verify_backlog={backlog}")
        } else {
            String::new()
        }
    ));
    Ok((true, (backlog > 0).then_some(backlog)))
}

/// The target as fio's options name it: a block device when it is one here or its
/// path is under `/dev/` (fio ran elsewhere), its capacity unknown then (null: the
/// options' span is the file's size only for a file).
fn target_of(filename: Option<&str>, w: &Workload, drive: Option<&str>) -> TargetInfo {
    let path = filename.unwrap_or("").to_string();
    let device = path.starts_with("/dev/")
        || std::fs::metadata(&path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    let kind = if device {
        TargetKind::BlockDevice
    } else if w.ioengine == IoEngine::Null {
        TargetKind::Null
    } else {
        TargetKind::File
    };
    // Unknown (null) for a device; a file's span when the options give one.
    let capacity = (!device)
        .then(|| w.offset_bytes.saturating_add(w.size_bytes))
        .filter(|&c| c > 0);
    serde_json::from_value(json!({
        "kind": kind, "path": path, "capacity_bytes": capacity,
        "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
        "scheduler": null, "model": drive, "serial": null, "firmware": null,
        "filesystem": null, "in_memory": null, "created_by_drivelab": false,
        "simulated": null
    }))
    .expect("a complete TargetInfo")
}

/// Headline metrics of one step.
pub fn step_metrics(name: &str, m: &drivelab_engine::result::Measured) -> Vec<Metric> {
    let mut out = Vec::new();
    for (d, t) in [("read", &m.totals.read), ("write", &m.totals.write)] {
        if t.ops == 0 {
            continue;
        }
        out.extend(Metric::new(
            format!("{name} {d} IOPS"),
            Some(t.ops_per_s),
            "IOPS",
        ));
        out.extend(Metric::new(
            format!("{name} {d} MB/s"),
            Some(t.mbps),
            "MB/s",
        ));
        out.extend(Metric::new(
            format!("{name} {d} mean latency"),
            t.latency.mean_ns.map(|v| v / 1e3),
            "µs",
        ));
        out.extend(Metric::new(
            format!("{name} {d} p99 latency"),
            t.latency.at(99.0).map(|v| v as f64 / 1e3),
            "µs",
        ));
    }
    out
}

/// Where a fio output is.
#[derive(Debug, Clone)]
pub enum Body {
    /// Its text.
    Text(String),
    /// A file, read as a stream when it is imported (at most
    /// [`json::MAX_FILE_BYTES`]).
    File(PathBuf),
}

/// One fio output file to import.
#[derive(Debug, Clone)]
pub struct Input {
    /// The output.
    pub body: Body,
    /// Its name, for the record and messages.
    pub source: String,
    /// The directory it is in (fio's logs may be beside it).
    pub dir: Option<PathBuf>,
}

/// What the user says about the results.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// `--drive NAME`: the drive's name (its label in reports).
    pub drive: Option<&'a str>,
    /// `--connection TEXT`: how it was connected (e.g. "SAS HBA", "USB UAS").
    pub connection: Option<&'a str>,
    /// `--logs DIR`: where fio's logs are (all runs' logs may share it).
    pub logs: Option<&'a Path>,
    /// One result file is imported: its jobs may take `--logs DIR`'s logs without
    /// naming them (set by [`import_set`]).
    pub single: bool,
}

/// One result: a job (group, with `group_reporting`) or a job section's jobs reported
/// one by one, added up.
struct Result1 {
    job: Job,
    /// Entries of fio's document it adds up (1 with group_reporting).
    entries: usize,
    logs: Option<JobLogs>,
    workload: Workload,
    /// fio's ioengine as the options name it (the job's, else `[global]`'s).
    engine: Option<String>,
    /// The options that held the job below the drive's pace ([`throttle_of`]).
    throttle: Vec<(String, String)>,
}

/// fio's options that cap a job's pace (`rate`, `rate_iops`: a rate; `thinktime`: a
/// pause between I/Os), and those that only set a floor (`rate_min`,
/// `rate_iops_min`), named beside a cap.
const CAPS: [&str; 3] = ["rate", "rate_iops", "thinktime"];
const FLOORS: [&str; 2] = ["rate_min", "rate_iops_min"];

/// The options that held the job below what the drive could do, as set (not 0) in
/// its result: none when it ran free. Its floors are named with a cap only.
fn throttle_of(job: &Job, global: &FioOptions) -> Vec<(String, String)> {
    let set = |keys: &[&str]| -> Vec<(String, String)> {
        keys.iter()
            .filter_map(|k| {
                let v = opt(job, global, k)?;
                v.chars()
                    .any(|c| matches!(c, '1'..='9'))
                    .then(|| (k.to_string(), v.trim().to_string()))
            })
            .collect()
    };
    let mut v = set(&CAPS);
    if !v.is_empty() {
        v.extend(set(&FLOORS));
    }
    v
}

/// The note of a throttled job.
fn throttle_note(job: &Job, t: &[(String, String)]) -> String {
    let named: Vec<String> = t.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "job '{}': fio held it to a pace ({}): its numbers are the limit's, not the drive's, so it is kept out of sweeps and grids.",
        job.jobname,
        named.join(", ")
    )
}

/// The log prefixes the job's options name (`write_iops_log` given without a value
/// names the job).
fn prefixes(job: &Job, global: &FioOptions) -> Prefixes {
    let o = |k: &str| {
        opt(job, global, k).map(|v| {
            if v.trim().is_empty() {
                job.jobname.clone()
            } else {
                v.trim().to_string()
            }
        })
    };
    Prefixes {
        iops: o("write_iops_log"),
        bw: o("write_bw_log"),
        lat: o("write_lat_log"),
        hist: o("write_hist_log"),
    }
}

/// The job's `numjobs` (checked by [`workload_of`] before a result is put together).
fn numjobs(job: &Job, global: &FioOptions) -> u32 {
    json::numjobs(job, global) as u32
}

/// The windows of a series made from per-I/O logs (a job whose `log_avg_msec` is 0,
/// fio's default), ms.
const PER_IO_WINDOW_MS: u64 = 1000;

/// The windows a job's logs go on when fio logged every I/O (its `log_avg_msec` is 0 or
/// unset), None when fio averaged them.
fn per_io_grid(job: &Job, global: &FioOptions) -> Option<per_io::Grid> {
    let avg = opt(job, global, "log_avg_msec").map_or(Some(0), |v| v.trim().parse::<u64>().ok());
    let runtime_ms = job.read.runtime.max(job.write.runtime);
    (avg == Some(0)).then(|| per_io::Grid {
        iv_ms: PER_IO_WINDOW_MS,
        max_windows: (runtime_ms / PER_IO_WINDOW_MS + 3) as usize,
    })
}

/// The file's results: its entries, those of one job section reported one by one
/// added up as the file was read ([`json::Grouper`]), each with the number of entries
/// it adds up.
fn results_of(out: &mut Output, notes: &mut Vec<String>) -> Vec<(Job, usize)> {
    let v: Vec<(Job, usize)> = out
        .take_jobs()
        .into_iter()
        .map(|j| {
            let n = j.entries.max(1);
            (j, n)
        })
        .collect();
    if v.iter().any(|r| r.1 > 1) {
        notes.push("fio reported jobs one by one (no group_reporting): drivelab added each job section's jobs up into one result, as group_reporting does (plain JSON's percentiles do not add up: those results have none; json+ bins do).".into());
    }
    v
}

/// The logs of each result: by the prefixes its own options name, in `--logs DIR` or
/// beside the file (or where the options say); else, for a file whose jobs name none,
/// every log in `--logs DIR` (one result, or one log per result).
fn logs_of(
    results: &[(Job, usize)],
    global: &FioOptions,
    input: &Input,
    o: &Options,
    notes: &mut Vec<String>,
) -> Result<Vec<Option<JobLogs>>, String> {
    let named: Vec<Prefixes> = results.iter().map(|r| prefixes(&r.0, global)).collect();
    if named.iter().all(Prefixes::is_empty) {
        return match o.logs {
            Some(d) if o.single => unnamed_logs(d, results, global),
            Some(d) => {
                // Logs named by no result are no one result's among several.
                notes.push(format!(
                    "{}: its jobs name no logs (write_iops_log …): the logs in {} are not read for it (with one result file they are).",
                    input.source,
                    d.display()
                ));
                Ok(vec![None; results.len()])
            }
            None => Ok(vec![None; results.len()]),
        };
    }
    let dirs: Vec<&Path> = o.logs.into_iter().chain(input.dir.as_deref()).collect();
    let mut out = Vec::new();
    // A section's jobs reported one by one were added up: each result takes all its
    // jobs' files, as with group_reporting.
    for (i, (job, _)) in results.iter().enumerate() {
        let p = &named[i];
        let jobs = numjobs(job, global);
        let files = match Files::named(p, jobs, &dirs, job.hostname.as_deref()) {
            Ok(Some(f)) => f,
            Ok(None) if p.is_empty() => {
                out.push(None);
                continue;
            }
            Ok(None) => {
                notes.push(format!(
                    "{}: job '{}' wrote fio logs ({}) that are not in {}: it has no series.",
                    input.source,
                    job.jobname,
                    p.iops
                        .as_ref()
                        .or(p.bw.as_ref())
                        .or(p.lat.as_ref())
                        .or(p.hist.as_ref())
                        .map_or("", |s| s),
                    if dirs.is_empty() {
                        "its own path".to_string()
                    } else {
                        dirs.iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    }
                ));
                out.push(None);
                continue;
            }
            Err(e) => return Err(format!("job '{}': {e}", job.jobname)),
        };
        out.push(Some(JobLogs::read(&files, per_io_grid(job, global))?));
    }
    Ok(out)
}

/// Logs in `dir` found without a prefix (a result whose options name none): one set
/// for one result, else one file per result.
fn unnamed_logs(
    dir: &Path,
    results: &[(Job, usize)],
    global: &FioOptions,
) -> Result<Vec<Option<JobLogs>>, String> {
    let f = Files::find(dir)?;
    let per = results.len() > 1;
    if per && f.iops.len() != results.len() {
        return Err(format!(
            "--logs: the result holds {} jobs but {} has {} {}; give the logs of this run (one per job, or group_reporting=1)",
            results.len(),
            dir.display(),
            f.iops.len(),
            if f.iops.len() == 1 { "iops log" } else { "iops logs" }
        ));
    }
    (0..results.len())
        .map(|i| {
            let files = if per {
                f.job(i, results.len())
            } else {
                f.clone()
            };
            JobLogs::read(&files, per_io_grid(&results[i].0, global)).map(Some)
        })
        .collect()
}

/// A result's name: what it ran ([`test_name`]) and fio's job name. Not its host: the
/// host is the run's (and the drive's) identity, not the test's, so one job file run on
/// two hosts gives the same steps and the two imports compare.
fn result_name(job: &Job, w: &Workload) -> String {
    format!("{} ({})", test_name(w), job.jobname)
}

/// Names that several results of different hosts share (one client/server result of
/// many hosts) say each one's host: `hosts[i]` is result `i`'s.
fn by_host(names: &mut [String], hosts: &[Option<String>]) {
    let shared: Vec<bool> = names
        .iter()
        .zip(hosts)
        .map(|(n, h)| names.iter().zip(hosts).any(|(m, g)| m == n && g != h))
        .collect();
    for ((n, h), shared) in names.iter_mut().zip(hosts).zip(shared) {
        if let (true, Some(h)) = (shared, h) {
            *n = format!("{n} on {h}");
        }
    }
}

/// What a job did, in the words of its settings: "randread 4K QD16 ×4 jobs", "randrw
/// (70 % reads) 4K QD8", "write 128K QD1" (every job of a grid often has one name, so
/// its settings name it).
pub fn test_name(w: &Workload) -> String {
    let bs = match (w.bs.as_slice(), &w.bs_mix) {
        (_, Some(mix)) => mix.label(),
        ([one], None) => drivelab_engine::spec::block_size_label(one.bytes),
        _ => "mixed-size".to_string(),
    };
    // A mixed mode says its share whatever it is (rw at 100 % reads is not `read`).
    let mode = match w.rw {
        RwMode::Rw | RwMode::RandRw => format!("{} ({} % reads)", w.rw.name(), w.rwmixread),
        _ => w.rw.name().to_string(),
    };
    let jobs = match w.numjobs {
        1 => String::new(),
        n => format!(" ×{n} jobs"),
    };
    format!("{mode} {bs} QD{}{jobs}", w.iodepth)
}

/// Results in the order a sweep has them: each workload (on its host) where it first
/// came, its results by numjobs then iodepth rising (files named QD1, QD16, QD2 come as
/// QD1, QD2, QD16), results of one depth in the order given.
fn in_swept_order<T>(all: &mut Vec<T>, key: impl Fn(&T) -> (&Workload, Option<&str>)) {
    let group = |t: &T| {
        let (w, host) = key(t);
        let bare = Workload {
            iodepth: 0,
            numjobs: 0,
            ..w.clone()
        };
        (test_name(&bare), host.map(str::to_string))
    };
    let groups: Vec<_> = all.iter().map(group).collect();
    let first = |g: &(String, Option<String>)| groups.iter().position(|h| h == g);
    let mut order: Vec<(Option<usize>, u32, u32, usize)> = all
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let w = key(t).0;
            (first(&groups[i]), w.numjobs, w.iodepth, i)
        })
        .collect();
    order.sort_unstable();
    let mut slots: Vec<Option<T>> = std::mem::take(all).into_iter().map(Some).collect();
    all.extend(order.into_iter().filter_map(|o| slots[o.3].take()));
}

/// Names made unique: a name several results share says each one's file (`sources[i]`,
/// its file name), and one still repeated gets " #2", " #3", … in order.
fn unique(names: &mut [String], sources: &[&str]) {
    let count = |names: &[String], n: &String| names.iter().filter(|m| *m == n).count();
    let shared: Vec<bool> = names.iter().map(|n| count(names, n) > 1).collect();
    for (i, n) in names.iter_mut().enumerate() {
        if shared[i] {
            let file = Path::new(sources[i])
                .file_name()
                .map_or(sources[i].into(), |f| f.to_string_lossy());
            *n = format!("{n} [{file}]");
        }
    }
    let mut seen: std::collections::HashMap<String, u32> = Default::default();
    for n in names.iter_mut() {
        let k = seen.entry(n.clone()).or_insert(0);
        *k += 1;
        if *k > 1 {
            *n = format!("{n} #{k}");
        }
    }
}

/// The results of one file, converted.
fn read_input(
    input: &Input,
    o: &Options,
    notes: &mut Vec<String>,
    versions: &mut Vec<String>,
) -> Result<Vec<(Result1, drivelab_engine::result::Measured, Option<String>)>, String> {
    let mut parsed = match &input.body {
        Body::Text(t) => json::parse(t)?,
        Body::File(p) => json::parse_file(p)?,
    };
    let results = results_of(&mut parsed.output, notes);
    let out: &Output = &parsed.output;
    let global = &out.global_options;
    // Every result's options (its entries share them) and every entry's numbers as fio
    // would have them, before any is used.
    for (job, _) in &results {
        workload_of(job, global, &mut Vec::new())
            .map_err(|e| format!("job '{}': {e}", job.jobname))?;
    }
    if let Some(e) = &out.invalid {
        return Err(e.clone());
    }

    if results.is_empty() {
        return Err("the fio result holds no jobs".into());
    }
    if !versions.contains(&out.fio_version) {
        versions.push(out.fio_version.clone());
    }
    let logs = logs_of(&results, global, input, o, notes)?;
    let mut v = Vec::new();
    for ((job, entries), mut logs) in results.into_iter().zip(logs) {
        let named = |e: String| format!("job '{}': {e}", job.jobname);
        let mut w = workload_of(&job, global, notes).map_err(named)?;
        let hist_ms = Some(
            whole(
                opt(&job, global, "log_hist_msec"),
                "log_hist_msec",
                0,
                (0, 86_400_000),
            )
            .map_err(named)?,
        )
        .filter(|&h| h > 0);
        check_coarseness(&job, global, logs.as_ref()).map_err(named)?;
        if logs.as_ref().is_some_and(JobLogs::hist_only) {
            match (hist_ms, w.bs.len()) {
                // The series is the histogram logs', on their windows.
                (Some(h), 1) => w.log_interval_ns = h * 1_000_000,
                _ => {
                    notes.push(format!(
                        "{}: job '{}' wrote only histogram logs (no iops or bw logs) {}: it has no series.",
                        input.source,
                        job.jobname,
                        if hist_ms.is_none() {
                            "and names no log_hist_msec (their interval)"
                        } else {
                            "and ran several block sizes (the bytes of a window are not known)"
                        }
                    ));
                    logs = None;
                }
            }
        }
        let est = Some(convert::start_estimate(out, &job, 0)).filter(|&t| t > 0);
        let m = convert::measured(
            &job,
            &Context {
                workload: &w,
                logs: logs.as_ref(),
                est_start_ms: est,
                fio_version: &out.fio_version,
                own_logs: false,
                hist_interval_ms: hist_ms,
            },
        )
        .map_err(|e| format!("job '{}': {e}", job.jobname))?;
        let filename = opt(&job, global, "filename").map(str::to_string);
        let throttle = throttle_of(&job, global);
        if !throttle.is_empty() {
            notes.push(throttle_note(&job, &throttle));
        }
        v.push((
            Result1 {
                engine: opt_engine(&job, global),
                throttle,
                job,
                entries,
                logs,
                workload: w,
            },
            m,
            filename,
        ));
    }
    Ok(v)
}

/// The job's `log_hist_coarseness` (0…6, as fio takes it) must be its histogram logs'
/// (read from their rows' width): logs of another coarseness are another job's.
fn check_coarseness(job: &Job, global: &FioOptions, logs: Option<&JobLogs>) -> Result<(), String> {
    let named = whole(
        opt(job, global, "log_hist_coarseness"),
        "log_hist_coarseness",
        0,
        (0, u64::from(super::bins::MAX_COARSENESS)),
    )?;
    let Some(l) = logs.filter(|l| l.hist.iter().any(|f| !f.is_empty())) else {
        return Ok(());
    };
    let rows = l.hist_coarseness()?;
    if u64::from(rows) != named {
        let p = l
            .hist_files
            .first()
            .map_or(String::new(), |p| p.display().to_string());
        return Err(format!(
            "{p}: its rows have {} columns (log_hist_coarseness={rows}) but the job names log_hist_coarseness={named}: they are not this job's logs",
            super::bins::columns(rows)
        ));
    }
    Ok(())
}

/// The bundle document of one fio result (`text`: the output file; `logs`: a directory
/// of its per-second logs; `source`: the file's name for the record).
pub fn import(text: &str, logs: Option<&Path>, source: &str) -> Result<RunDoc, String> {
    let input = Input {
        body: Body::Text(text.to_string()),
        source: source.to_string(),
        dir: None,
    };
    import_set(
        &[input],
        &Options {
            logs,
            ..Options::default()
        },
    )
    .map_err(|e| e.trim_start_matches(&format!("{source}: ")).to_string())
}

/// The bundle document of a set of fio results of one drive: one step per result,
/// the results that differ only in iodepth and/or numjobs as sweeps
/// (`summary.analysis.sweeps`, as a `run peak` bundle has them, and `grids`).
pub fn import_set(inputs: &[Input], o: &Options) -> Result<RunDoc, String> {
    let (inputs, mut notes) = distinct(inputs)?;
    let inputs = inputs.as_slice();
    let o = &Options {
        single: inputs.len() == 1,
        ..o.clone()
    };
    let mut versions = Vec::new();
    let mut all = Vec::new();
    for &input in inputs {
        let v = read_input(input, o, &mut notes, &mut versions)
            .map_err(|e| format!("{}: {e}", input.source))?;
        all.extend(v.into_iter().map(|r| (r, input.source.clone())));
    }
    in_swept_order(&mut all, |((r, _, _), _)| {
        (&r.workload, r.job.hostname.as_deref())
    });
    let mut names: Vec<String> = all
        .iter()
        .map(|((r, _, _), _)| result_name(&r.job, &r.workload))
        .collect();
    let result_hosts: Vec<Option<String>> = all
        .iter()
        .map(|((r, _, _), _)| r.job.hostname.clone())
        .collect();
    by_host(&mut names, &result_hosts);
    let sources: Vec<&str> = all.iter().map(|(_, s)| s.as_str()).collect();
    unique(&mut names, &sources);
    let mut target = None;
    let mut steps = Vec::new();
    let mut hosts = Vec::new();
    let mut logged = Vec::new();
    let mut throttled = Vec::new();
    for (i, (((r, m, filename), source), name)) in all.into_iter().zip(names).enumerate() {
        target.get_or_insert_with(|| target_of(filename.as_deref(), &r.workload, o.drive));
        hosts.push(r.job.hostname.clone());
        logged.push(r.logs.is_some());
        let w = &r.workload;
        let engine = &r.engine;
        throttled.push(!r.throttle.is_empty());
        let throttle: serde_json::Map<String, Value> = r
            .throttle
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        steps.push(StepRecord {
            index: i,
            id: crate::plan::slug(&name),
            name,
            kind: StepKind::Measure,
            params: json!({
                "fio_job": r.job.jobname, "host": r.job.hostname, "source": source,
                "rw": w.rw.name(), "iodepth": w.iodepth, "numjobs": w.numjobs,
                "qd": w.queue_depth(), "fio_ioengine": engine,
                "fio_entries": r.entries, "logs": r.logs.is_some(),
                "fio_throttle": (!throttle.is_empty()).then_some(throttle),
            }),
            status: StepStatus::from(m.status),
            skip_reason: None,
            started_at: fio_time(&m.started_at, 0),
            finished_at: fio_time(&m.started_at, m.duration_ns),
            config: r.workload,
            sensors_start: Vec::new(),
            sensors_end: Vec::new(),
            idle_before_ns: 0,
            idle_sensors: Vec::new(),
            telemetry: Some(crate::records::telemetry_of(&m)),
            run: Some(m),
        });
    }
    let sets = super::sweeps::find(&steps, &hosts, &throttled);
    for (i, ids) in &sets.member_of {
        let p = &mut steps[*i].params;
        p["workload"] = json!(ids[0]);
        p["sweeps"] = json!(ids);
    }
    if let Some(t) = target
        .as_ref()
        .filter(|t| t.kind == TargetKind::BlockDevice)
    {
        notes.push(format!(
            "fio ran on the block device {}; its capacity is not in fio's result (capacity_bytes null: unknown).",
            t.path
        ));
    }
    let series = super::series::analyse(&steps, &logged);
    finish(steps, (sets, series), notes, versions, inputs, o, target)
}

/// A job's time from fio's result: its start (`started_at`, RFC 3339) plus `after_ns`
/// (its runtime, for its end); None when the result does not say when it ran (its start
/// was read as 1970, the converter's "unknown").
fn fio_time(started_at: &str, after_ns: u64) -> Option<String> {
    let t = humantime::parse_rfc3339_weak(started_at).ok()?;
    (t > std::time::UNIX_EPOCH).then(|| {
        humantime::format_rfc3339_millis(t + std::time::Duration::from_nanos(after_ns)).to_string()
    })
}

/// The inputs without repeats: a file given twice (by two paths, or inside a directory
/// also given) or two files of the same content are one result, imported once, with a
/// note naming both.
pub fn distinct(inputs: &[Input]) -> Result<(Vec<&Input>, Vec<String>), String> {
    let mut seen: std::collections::HashMap<String, (&str, Option<PathBuf>)> = Default::default();
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for input in inputs {
        let (key, path) = match &input.body {
            Body::Text(t) => (crate::hash::sha256_hex(t), None),
            Body::File(p) => (
                file_sha256(p).map_err(|e| format!("{}: {e}", input.source))?,
                std::fs::canonicalize(p).ok(),
            ),
        };
        match seen.get(&key) {
            Some((first, first_path)) => notes.push(if path.is_some() && *first_path == path {
                format!(
                    "{}: the same file as {first}, given twice: imported once.",
                    input.source
                )
            } else {
                format!(
                    "{}: the same result as {first} (identical content): imported once.",
                    input.source
                )
            }),
            None => {
                seen.insert(key, (&input.source, path));
                out.push(input);
            }
        }
    }
    Ok((out, notes))
}

/// The SHA-256 of a file's bytes, read as a stream.
fn file_sha256(p: &Path) -> Result<String, String> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut json::open_file(p)?, &mut h).map_err(|e| format!("cannot read it: {e}"))?;
    Ok(format!("{:x}", h.finalize()))
}

/// fio's ioengine as the result's options name it (the job's, else `[global]`'s).
fn opt_engine(job: &Job, global: &FioOptions) -> Option<String> {
    opt(job, global, "ioengine").map(str::to_string)
}

/// The analysis of an imported set (`summary.analysis` of a `fio` bundle): the sweeps
/// (a peak run's `sweeps`, each with its method), the iodepth × numjobs grids, and the
/// analysis of each result with per-window logs. Bundles imported before a part was
/// made read it as empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FioAnalysis {
    /// The first result's fio version ("fio-3.33"), null when it says none.
    pub fio_version: Option<String>,
    #[serde(default)]
    pub fio_versions: Vec<String>,
    #[serde(default)]
    pub sweeps: Vec<super::sweeps::SweepEntry>,
    #[serde(default)]
    pub grids: Vec<super::sweeps::Grid>,
    #[serde(default)]
    pub series: Vec<super::series::SeriesEntry>,
}

/// The document around the steps: summary (each result's metrics, the sweeps' knee
/// metrics, the analysis), notes, and fio's time as the run's.
fn finish(
    steps: Vec<StepRecord>,
    (sets, series): (super::sweeps::Sets, Vec<super::series::SeriesEntry>),
    mut notes: Vec<String>,
    versions: Vec<String>,
    inputs: &[&Input],
    o: &Options,
    target: Option<TargetInfo>,
) -> Result<RunDoc, String> {
    let mut metrics = sets.metrics();
    metrics.extend(super::series::metrics(&series, &steps));
    for s in &steps {
        if let Some(m) = &s.run {
            metrics.extend(step_metrics(&s.name, m));
        }
    }
    let sources: Vec<&str> = inputs.iter().map(|i| i.source.as_str()).collect();
    let now = now_rfc3339();
    notes.insert(
        0,
        match sources.as_slice() {
            [one] => format!("Imported from fio's result {one} at {now}."),
            _ => format!("Imported from {} fio results at {now}.", sources.len()),
        },
    );
    if let Some(c) = o.connection {
        notes.push(format!("Connection: {c}."));
    }
    notes.dedup();
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    let failed = steps.iter().any(|s| s.status != StepStatus::Complete);
    let knobs = serde_json::to_value(ImportKnobs {
        source: match sources.as_slice() {
            [one] => Sources::One(one.to_string()),
            _ => Sources::Many(sources.iter().map(|s| s.to_string()).collect()),
        },
        fio_version: versions.first().cloned(),
        drive: o.drive.map(str::to_string),
        connection: o.connection.map(str::to_string),
        logs: o.logs.map(|l| l.display().to_string()),
    })
    .map_err(|e| format!("the settings cannot be saved: {e}"))?;
    // The run's time is fio's: its earliest start (the import's time when fio's results
    // do not say when they ran); the bundle was last written now.
    let when = steps
        .iter()
        .filter_map(|s| s.started_at.clone())
        .min()
        .unwrap_or_else(|| now.clone());
    let hash_input: Vec<_> = steps.iter().map(|s| (&s.name, &s.config)).collect();
    let host = steps
        .iter()
        .find_map(|s| s.params["host"].as_str().map(str::to_string));
    Ok(RunDoc {
        schema_version: BUNDLE_SCHEMA_VERSION,
        tool: Tool::current(),
        suite: SUITE,
        config_hash: crate::hash::sha256_hex(&crate::hash::canonical_json(
            &json!({"suite": SUITE, "steps": hash_input}),
        )),
        knobs,
        host: HostInfo {
            hostname: host.unwrap_or_else(|| "unknown (imported from fio)".into()),
            kernel: String::new(),
            cpu_model: String::new(),
            logical_cpus: 0,
            memory_bytes: 0,
        },
        target_arg: None,
        target: target.ok_or("the fio results hold no jobs")?,
        test_file_created: false,
        status: if failed {
            BundleStatus::Failed
        } else {
            BundleStatus::Complete
        },
        created_at: when,
        updated_at: now,
        planned_steps: steps.len(),
        steps,
        summary: Some(Summary {
            analysis: serde_json::to_value(FioAnalysis {
                fio_version: versions.first().cloned(),
                fio_versions: versions,
                sweeps: sets.sweeps,
                grids: sets.grids,
                series,
            })
            .map_err(|e| format!("the analysis cannot be saved: {e}"))?,
            metrics,
        }),
        notes,
        fleet: false,
    })
}

/// What an import records as its bundle's `knobs`: what was imported and the options
/// given, all that `drivelab import fio` needs to import the same results again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportKnobs {
    /// The result files, as given (one, or several).
    pub source: Sources,
    /// The first result's fio version.
    pub fio_version: Option<String>,
    /// `--drive NAME`.
    pub drive: Option<String>,
    /// `--connection TEXT`.
    pub connection: Option<String>,
    /// `--logs DIR`, as given (None: each result's logs were looked for beside it; bundles
    /// imported before it was recorded read None too).
    #[serde(default)]
    pub logs: Option<String>,
}

/// The result files an import read: one is recorded as a string, several as a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Sources {
    One(String),
    Many(Vec<String>),
}

impl ImportKnobs {
    /// The knobs of an imported bundle; None for any other bundle (a run of fio by
    /// drivelab, whose knobs are its suite's).
    pub fn of(doc: &RunDoc) -> Option<ImportKnobs> {
        if doc.suite != SUITE {
            return None;
        }
        serde_json::from_value(doc.knobs.clone()).ok()
    }

    /// The result files, in the order imported.
    pub fn sources(&self) -> Vec<&str> {
        match &self.source {
            Sources::One(s) => vec![s.as_str()],
            Sources::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }

    /// The options of `drivelab import fio` that made the bundle, as (flag, value), in
    /// the order `--help` lists them.
    pub fn options(&self) -> Vec<(&'static str, &str)> {
        [
            ("--drive", &self.drive),
            ("--connection", &self.connection),
            ("--logs", &self.logs),
        ]
        .into_iter()
        .filter_map(|(flag, v)| Some((flag, v.as_deref()?)))
        .collect()
    }
}

/// Whether a bundle is an import of fio results (its knobs name their `source`, as
/// [`finish`] writes them).
pub fn is_import(doc: &RunDoc) -> bool {
    doc.suite == SUITE && doc.knobs.get("source").is_some()
}

/// The drive an imported bundle measured, as `--drive` named it at import: bundles of
/// one name are one drive (its test sets), whatever their files or tests.
pub fn imported_drive(doc: &RunDoc) -> Option<&str> {
    is_import(doc)
        .then(|| doc.knobs.get("drive")?.as_str())
        .flatten()
        .filter(|d| !d.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real json+ result of Debian's fio 3.33 (the fuzzer's seed).
    const RESULT: &str = include_str!("../../../../fuzz/corpus/fio_result/null-jsonplus.json");

    #[test]
    fn a_real_result_imports() {
        let doc = import(RESULT, None, "r.json").unwrap();
        assert_eq!(doc.steps.len(), 1);
    }

    /// A result in fio 3.1's form (as published fio 3.1 results are): no bins, the
    /// percentile list padded with `"0.00" : 0` (duplicate keys), option values as
    /// strings, `timestamp` (the end of the run, s) and no `job_start`, both clat and lat.
    fn fio31(iodepth: u32, iops: u64) -> String {
        let ios = iops * 60;
        format!(
            r#"{{
  "fio version" : "fio-3.1",
  "timestamp" : 1600000060,
  "time" : "Sun Sep 13 12:27:40 2020",
  "global options" : {{ "filename" : "/dev/sdb", "ioengine" : "libaio", "direct" : "1",
    "rw" : "randread", "bs" : "4k", "runtime" : "60", "time_based" : "", "group_reporting" : "" }},
  "jobs" : [ {{
      "jobname" : "iotest", "groupid" : 0, "error" : 0, "eta" : 0, "elapsed" : 61,
      "job options" : {{ "iodepth" : "{iodepth}", "numjobs" : "1" }},
      "read" : {{
        "io_bytes" : {bytes}, "io_kbytes" : {kib}, "bw" : {kibs}, "iops" : {iops}.0,
        "runtime" : 60000, "total_ios" : {ios}, "short_ios" : 0, "drop_ios" : 0,
        "slat_ns" : {{ "min" : 1000, "max" : 9000, "mean" : 2000.0, "stddev" : 10.0 }},
        "clat_ns" : {{ "min" : 50000, "max" : 900000, "mean" : 95500.0, "stddev" : 100.0,
          "percentile" : {{ "1.000000" : 60000, "5.000000" : 70000, "10.000000" : 75000,
            "20.000000" : 80000, "30.000000" : 85000, "40.000000" : 90000,
            "50.000000" : 92000, "60.000000" : 95000, "70.000000" : 98000,
            "80.000000" : 101000, "90.000000" : 110000, "95.000000" : 120000,
            "99.000000" : 150000, "99.500000" : 170000, "99.900000" : 250000,
            "99.950000" : 300000, "99.990000" : 600000,
            "0.00" : 0, "0.00" : 0, "0.00" : 0 }} }},
        "lat_ns" : {{ "min" : 52000, "max" : 910000, "mean" : 106000.0, "stddev" : 100.0 }},
        "bw_min" : 1, "bw_max" : 2, "bw_agg" : 100.0, "bw_mean" : 1.0, "bw_dev" : 0.0,
        "bw_samples" : 120, "iops_min" : 1, "iops_max" : 2, "iops_mean" : 1.0,
        "iops_stddev" : 0.0, "iops_samples" : 120 }},
      "write" : {{ "io_bytes" : 0, "io_kbytes" : 0, "bw" : 0, "iops" : 0.0, "runtime" : 0,
        "total_ios" : 0, "short_ios" : 0, "drop_ios" : 0,
        "slat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0 }},
        "clat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0,
          "percentile" : {{ "1.000000" : 0, "0.00" : 0 }} }},
        "lat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0 }} }},
      "usr_cpu" : 5.0, "sys_cpu" : 10.0, "ctx" : 100, "majf" : 0, "minf" : 10
  }} ]
}}"#,
            bytes = ios * 4096,
            kib = ios * 4,
            kibs = iops * 4,
        )
    }

    #[test]
    fn fio_3_1_results_import_as_fio_measured_them() {
        let logs = tempfile::tempdir().unwrap();
        std::fs::write(logs.path().join("x_iops.1.log"), "1000, 5, 0, 4096, 0\n").unwrap();
        let inputs: Vec<Input> = [(1, 10_000), (2, 19_200), (4, 20_000), (8, 20_100)]
            .into_iter()
            .map(|(d, iops)| Input {
                body: Body::Text(fio31(d, iops)),
                source: format!("qd{d}.json"),
                dir: None,
            })
            .collect();
        let o = Options {
            drive: Some("SSD A"),
            connection: Some("SAS HBA"),
            logs: Some(logs.path()),
            ..Options::default()
        };
        let doc = import_set(&inputs, &o).unwrap();
        // Logs no result names are no one result's among several: not read.
        assert!(doc.steps.iter().all(|s| s.params["logs"] == false));
        assert!(doc.notes.iter().any(|n| n.contains("name no logs")));
        assert_eq!(doc.steps.len(), 4);
        // No padded p0; percentiles in numeric order (1, 5, 10, …, not 1, 10, …, 5).
        let lat = &doc.steps[0].run.as_ref().unwrap().totals.read.latency;
        let ps: Vec<f64> = lat.percentiles.iter().map(|p| p.percentile).collect();
        assert_eq!(ps.len(), 17, "{ps:?}");
        assert!(ps.windows(2).all(|w| w[0] < w[1]), "{ps:?}");
        assert_eq!(ps[0], 1.0);
        let all = &doc.steps[0].run.as_ref().unwrap().totals.all.latency;
        assert_eq!(all.percentiles.len(), 17, "all I/Os are reads");
        // A block device stays one; the engine is fio's; the time is fio's.
        assert_eq!(doc.target.kind, TargetKind::BlockDevice);
        assert_eq!(doc.target.model.as_deref(), Some("SSD A"));
        // Its capacity is unknown: null, never 0; an old bundle's 0 reads as unknown.
        assert_eq!(doc.target.capacity_bytes, None);
        let mut v = serde_json::to_value(&doc).unwrap();
        assert!(v["target"]["capacity_bytes"].is_null(), "{}", v["target"]);
        v["target"]["capacity_bytes"] = json!(0);
        let old: RunDoc = serde_json::from_value(v).unwrap();
        assert_eq!(old.target.capacity_bytes, None);
        assert_eq!(old.target.kind, TargetKind::BlockDevice);
        assert_eq!(doc.steps[0].config.ioengine, IoEngine::Libaio);
        assert_eq!(doc.created_at, "2020-09-13T12:26:40.000Z");
        assert!(doc.notes.iter().any(|n| n.contains("SAS HBA")));
        assert!(doc
            .notes
            .iter()
            .any(|n| n.contains("capacity is not in fio's result")));
        // The four results are one sweep: knee at QD2 (19 200 ≥ 95 % of 20 100).
        let sweeps = &doc.summary.as_ref().unwrap().analysis["sweeps"];
        assert_eq!(sweeps.as_array().unwrap().len(), 1, "{sweeps}");
        assert_eq!(sweeps[0]["sweep"]["knee"]["qd"], 2);
        assert_eq!(sweeps[0]["unit"], "IOPS");
        assert_eq!(doc.steps[1].params["workload"], sweeps[0]["workload"]);
    }

    /// 320 s of 4K random writes (1000 IOPS) logged by fio every `log_ms` in fio 3.1's
    /// form (a 3 s stall without rows, as fio logs windows without I/O), all in one
    /// directory with another run's logs: the imported bundle.
    fn long_random_writes(log_ms: u64) -> RunDoc {
        let d = tempfile::tempdir().unwrap();
        let mut v: Value = serde_json::from_str(&fio31(1, 1000)).unwrap();
        let job = &mut v["jobs"][0];
        let (r, w) = (job["read"].clone(), job["write"].clone());
        job["read"] = w;
        job["write"] = r;
        let ios = 317 * 1000;
        job["write"]["total_ios"] = json!(ios);
        job["write"]["io_bytes"] = json!(ios * 4096);
        job["write"]["runtime"] = json!(320_000);
        let g = &mut v["global options"];
        g["rw"] = json!("randwrite");
        g["filename"] = json!("/srv/fio/test.bin");
        g["log_avg_msec"] = json!(log_ms.to_string());
        g["write_iops_log"] = json!("/home/someone/results/rw4k");
        g["write_bw_log"] = json!("/home/someone/results/rw4k");
        let mut iops = String::new();
        let mut bw = String::new();
        // Each row at the end of its window: the windows of seconds 100–102 have none.
        for t in 1..=320_000 / log_ms {
            if (100_000..103_000).contains(&((t - 1) * log_ms)) {
                continue;
            }
            iops += &format!("{}, 1000, 1, 4096, 0\n", t * log_ms + 2);
            bw += &format!("{}, 4000, 1, 4096, 0\n", t * log_ms + 2);
        }
        std::fs::write(d.path().join("rw4k_iops.1.log"), &iops).unwrap();
        std::fs::write(d.path().join("rw4k_bw.1.log"), &bw).unwrap();
        // Another run's logs beside them (its own prefix) are not read.
        std::fs::write(
            d.path().join("other_iops.1.log"),
            "1000, 99999999, 1, 4096, 0\n",
        )
        .unwrap();
        let input = Input {
            body: Body::Text(v.to_string()),
            source: "rw4k.json".into(),
            dir: Some(d.path().to_path_buf()),
        };
        import_set(&[input], &Options::default()).unwrap()
    }

    #[test]
    fn long_random_writes_with_logs_get_stalls_and_the_consistency_analysis() {
        let doc = long_random_writes(1000);
        let a = &doc.summary.as_ref().unwrap().analysis;
        let s = &a["series"][0];
        assert_eq!(s["windows"], 320, "{s}");
        assert_eq!(
            (s["stalls"].as_u64(), s["stall_windows"].as_u64()),
            (Some(1), Some(3))
        );
        assert!(s["consistency"]["stalls"].is_array(), "{s}");
        assert!(s["fill"].is_null());
        assert_eq!(doc.target.kind, TargetKind::File);
        // The analysis' headline metrics are the import's, by the consistency suite's
        // names (one series analysed: no step name before them).
        let a: FioAnalysis = doc.summary.as_ref().unwrap().analysis_as().unwrap();
        let want = crate::consistency::headline_metrics(a.series[0].consistency.as_ref().unwrap());
        let names: Vec<&str> = doc
            .summary
            .as_ref()
            .unwrap()
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert!(want.len() >= 5, "{want:?}");
        for m in &want {
            assert!(
                names.contains(&m.name.as_str()),
                "{} not in {names:?}",
                m.name
            );
        }
        assert!(names.contains(&"PTS steady state reached"), "{names:?}");
    }

    /// The same run logged at 250 ms (as the published grids are): the series keeps its
    /// quarter seconds, the consistency analysis scores whole seconds.
    #[test]
    fn quarter_second_logs_are_scored_per_second_by_the_consistency_analysis() {
        let doc = long_random_writes(250);
        let a: FioAnalysis = doc.summary.as_ref().unwrap().analysis_as().unwrap();
        let s = &a.series[0];
        assert_eq!((s.windows, s.interval_s), (1280, 0.25));
        assert_eq!((s.stalls, s.stall_windows), (1, 12));
        assert_eq!(s.longest_stall_s, 3.0);
        let c = s.consistency.as_ref().expect("analysed per second");
        assert_eq!(c.iops_per_s.len(), 320);
        // Every second with I/O is 1000 IOPS, as fio logged it (not 250 or 4000).
        let with_io: Vec<f64> = c.iops_per_s.iter().copied().filter(|&v| v > 0.0).collect();
        assert_eq!(with_io.len(), 317);
        assert!(
            with_io.iter().all(|v| (v - 1000.0).abs() < 1.0),
            "{with_io:?}"
        );
        assert_eq!(c.stalls.len(), 1);
        assert_eq!((c.stalls[0].start_s, c.stalls[0].len_s), (100, 3));
        assert_eq!(c.scores.series_len_s, 320);
        // The regrouped step is what the report draws: seconds, the I/Os all there.
        let step = &doc.steps[0];
        let sec = super::super::series::per_second(step);
        let m = sec.run.as_ref().unwrap();
        assert_eq!(m.series.interval_ns, 1_000_000_000);
        assert_eq!(m.series.records.len(), 320);
        let ops: u64 = m.series.records.iter().map(|r| r.write.ops).sum();
        assert_eq!(ops, 317 * 1000);
    }

    /// Found by fuzzing: a size whose unit is not ASCII (`1В`, a Cyrillic letter) was
    /// cut inside the letter and panicked; it is no size.
    /// The host names a step only where one import holds the same test from several
    /// hosts; one host's steps are named by their tests alone.
    #[test]
    fn the_host_names_a_step_only_among_several_hosts() {
        let h = |s: &str| Some(s.to_string());
        let mut names = vec!["randread 4K QD1 (a)".to_string(); 3];
        names.push("randread 4K QD8 (b)".into());
        by_host(&mut names, &[h("x"), h("y"), h("x"), h("y")]);
        assert_eq!(
            names,
            [
                "randread 4K QD1 (a) on x",
                "randread 4K QD1 (a) on y",
                "randread 4K QD1 (a) on x",
                "randread 4K QD8 (b)",
            ]
        );
        let mut one = vec!["randread 4K QD1 (a)".to_string(); 2];
        by_host(&mut one, &[h("x"), h("x")]);
        assert_eq!(one, ["randread 4K QD1 (a)"; 2]);
    }

    #[test]
    fn a_size_with_a_unit_that_is_not_ascii_is_no_size_not_a_panic() {
        assert_eq!(fio_size("1В"), None);
        assert_eq!(fio_size("4k"), Some(4096));
        assert_eq!(fio_size("4KiB"), Some(4000));
    }

    /// `size=16E` is past what 64 bits hold: refused by name, never a size of 0; a
    /// share of the file (`50%`) is not known in bytes.
    #[test]
    fn a_size_past_64_bits_is_refused_not_zero() {
        assert_eq!(fio_size("1E"), Some(1 << 60));
        assert_eq!(fio_size("16E"), None);
        let e = size_opt(Some("16E"), "size").unwrap_err();
        assert!(e.starts_with("size=16E: "), "{e}");
        assert_eq!(size_opt(Some("50%"), "size"), Ok(None));
        assert_eq!(size_opt(Some("64M"), "size"), Ok(Some(64 << 20)));
        let mut v: Value = serde_json::from_str(RESULT).unwrap();
        v["jobs"][0]["job options"]["size"] = "16E".into();
        let e = import(&v.to_string(), None, "r.json").unwrap_err();
        assert!(e.contains("size=16E"), "{e}");
    }

    /// Found by fuzzing (fuzz/fuzz_targets/fio_result.rs): a start time past the year
    /// 9999 made the date formatter panic.
    #[test]
    fn a_start_time_past_year_9999_is_refused_not_a_panic() {
        let text = RESULT.replace(
            "\"timestamp_ms\" : 1795552083295,",
            "\"timestamp_ms\" : 1795552088560643295,",
        );
        assert_ne!(text, RESULT);
        let e = import(&text, None, "r.json").err().unwrap();
        assert!(e.contains("after the year 9999"), "{e}");
    }
}
