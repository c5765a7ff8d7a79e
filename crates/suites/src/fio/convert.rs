//! One fio job's result (JSON totals, json+ bins, per-second logs) as drivelab's step
//! result ([`Measured`]): totals and the step histogram from the json+ bins (latency
//! from submission, `lat_ns`, when the job had `lat_percentiles=1`, as drivelab measures
//! it; else fio's completion latency `clat_ns`), and the series on drivelab's 1-s grid.

use drivelab_engine::hist::{Histogram, HistogramJson};
use drivelab_engine::result::{
    CpuUsage, DataGeneration, DirTotals, Histograms, LatencyStats, Measured, Percentile, RunStatus,
    Series, Totals,
};
use drivelab_engine::series::{IntervalDir, IntervalRecord};
use drivelab_engine::spec::Workload;

use super::bins::{self, Scalars};
use super::json::{Dir, Job, Lat};
use super::logs::{self, Files, HistRow, Row};

/// One direction's latency as fio gave it: dense bins (json+) and scalars.
struct DirLat {
    counts: Option<Vec<u64>>,
    /// Completion-latency bins (what fio's histogram logs hold), for checking them.
    clat_counts: Option<Vec<u64>>,
    scalars: Scalars,
    /// Plain JSON: fio's own percentiles (no bins), in numeric order.
    percentiles: Vec<(f64, u64)>,
    /// Whether this is completion latency (clat), not total latency (lat).
    clat: bool,
}

/// The latency of `d` drivelab reports: `lat_ns` when it has a distribution, else
/// `clat_ns` (else `lat_ns`); the flag says whether it is completion latency only.
fn dir_lat(d: &Dir) -> Result<(DirLat, bool), String> {
    // Without any distribution (jobs reported one by one, added up), clat still: fio's
    // default kind, so a set's results are all of one kind.
    let (l, clat): (Option<&Lat>, bool) = match (&d.lat_ns, &d.clat_ns) {
        (Some(l), _) if l.has_distribution() => (Some(l), false),
        (_, Some(c)) => (Some(c), true),
        (l, None) => (l.as_ref(), false),
    };
    if d.total_ios == 0 {
        // No I/O: its bins must be empty too (else the result was edited or mixed up).
        let held = [d.lat_ns.as_ref(), d.clat_ns.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|l| l.bins.as_ref())
            .map(bins::from_json_bins)
            .collect::<Vec<_>>()
            .iter()
            .map(|c| c.iter().fold(0u64, |a, &b| a.saturating_add(b)))
            .max()
            .unwrap_or(0);
        if held > 0 {
            return Err(format!(
                "its json+ latency bins hold {} where the job did none (total_ios 0): they do not belong to this result",
                ios(held)
            ));
        }
    }
    let Some(l) = l.filter(|_| d.total_ios > 0) else {
        return Ok((
            DirLat {
                counts: Some(vec![0; bins::NR]),
                clat_counts: Some(vec![0; bins::NR]),
                scalars: Scalars::default(),
                percentiles: Vec::new(),
                clat,
            },
            clat,
        ));
    };
    let counts = l.bins.as_ref().map(bins::from_json_bins);
    let clat_counts = d
        .clat_ns
        .as_ref()
        .and_then(|c| c.bins.as_ref())
        .map(bins::from_json_bins);
    for c in counts.iter().chain(&clat_counts) {
        let n = c.iter().fold(0u64, |a, &b| a.saturating_add(b));
        if n > d.total_ios {
            return Err(format!(
                "its json+ latency bins hold {} where the job did {}: they do not belong to this result",
                ios(n),
                ios(d.total_ios)
            ));
        }
    }
    let percentiles = fio_percentiles(l);
    Ok((
        DirLat {
            counts,
            clat_counts,
            scalars: Scalars {
                n: l.n.max(d.total_ios),
                min_ns: l.min,
                max_ns: l.max,
                mean_ns: l.mean,
                stddev_ns: l.stddev,
            },
            percentiles,
            clat,
        },
        clat,
    ))
}

/// fio's percentile list in numeric order (its keys sort as strings: 1, 10, 20, …, 5),
/// without fio 3.1's padding (`"0.00" : 0` entries after the real ones: fio reports no
/// 0th percentile).
fn fio_percentiles(l: &Lat) -> Vec<(f64, u64)> {
    let mut v: Vec<(f64, u64)> = l
        .percentile
        .iter()
        .flat_map(|p| p.0.iter().copied())
        .filter(|&(p, _)| p > 0.0 && p <= 100.0)
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

fn stats(l: &DirLat) -> LatencyStats {
    match &l.counts {
        Some(c) => bins::latency_stats(c, &l.scalars),
        None => LatencyStats {
            min_ns: (l.scalars.n > 0).then_some(l.scalars.min_ns),
            max_ns: (l.scalars.n > 0).then_some(l.scalars.max_ns),
            mean_ns: (l.scalars.n > 0).then_some(l.scalars.mean_ns),
            stddev_ns: (l.scalars.n > 0).then_some(l.scalars.stddev_ns),
            percentiles: l
                .percentiles
                .iter()
                .map(|&(p, v)| Percentile {
                    percentile: p,
                    value_ns: v,
                    samples_above: l.scalars.n
                        - ((p / 100.0 * l.scalars.n as f64).ceil() as u64).min(l.scalars.n),
                })
                .collect(),
        },
    }
}

fn hist(l: &DirLat) -> HistogramJson {
    match &l.counts {
        Some(c) => bins::to_histogram(c, &l.scalars),
        None => Histogram::new().to_json(),
    }
}

/// Scalars of two directions together.
fn combine(a: &Scalars, b: &Scalars) -> Scalars {
    let n = a.n + b.n;
    if a.n == 0 || b.n == 0 {
        return if a.n == 0 { *b } else { *a };
    }
    let mean = (a.mean_ns * a.n as f64 + b.mean_ns * b.n as f64) / n as f64;
    let sq = |s: &Scalars| (s.stddev_ns.powi(2) + s.mean_ns.powi(2)) * s.n as f64;
    Scalars {
        n,
        min_ns: a.min_ns.min(b.min_ns),
        max_ns: a.max_ns.max(b.max_ns),
        mean_ns: mean,
        stddev_ns: ((sq(a) + sq(b)) / n as f64 - mean * mean).max(0.0).sqrt(),
    }
}

fn totals_of(d: &Dir, l: &DirLat, elapsed_ns: u64) -> DirTotals {
    let s = elapsed_ns.max(1) as f64 / 1e9;
    DirTotals {
        ops: d.total_ios,
        bytes: d.io_bytes,
        ops_per_s: d.total_ios as f64 / s,
        bytes_per_s: d.io_bytes as f64 / s,
        mbps: d.io_bytes as f64 / s / 1e6,
        mibps: d.io_bytes as f64 / s / (1u64 << 20) as f64,
        latency: stats(l),
    }
}

/// The per-second logs of a job, read.
#[derive(Debug, Clone, Default)]
pub struct JobLogs {
    pub iops: Vec<Vec<Row>>,
    pub bw: Vec<Vec<Row>>,
    pub lat: Vec<Vec<Row>>,
    /// Completion-latency logs (`_clat`).
    pub clat: Vec<Vec<Row>>,
    pub hist: Vec<Vec<HistRow>>,
    /// The histogram logs' files (one per job), to name them.
    pub hist_files: Vec<std::path::PathBuf>,
}

impl JobLogs {
    pub fn read(f: &Files) -> Result<JobLogs, String> {
        Ok(JobLogs {
            iops: logs::read_rows(&f.iops)?,
            bw: logs::read_rows(&f.bw)?,
            lat: logs::read_rows(&f.lat)?,
            clat: logs::read_rows(&f.clat)?,
            hist: logs::read_hist(&f.hist)?,
            hist_files: f.hist.clone(),
        })
    }
    /// The histogram logs' `log_hist_coarseness` (0 without rows): every file's rows
    /// have one width, else the logs are not one job's.
    pub fn hist_coarseness(&self) -> Result<u32, String> {
        let mut widths = self
            .hist
            .iter()
            .zip(&self.hist_files)
            .filter_map(|(rows, p)| Some((rows.first()?.counts.len(), p)));
        let Some((w, first)) = widths.next() else {
            return Ok(0);
        };
        if let Some((_, p)) = widths.find(|&(x, _)| x != w) {
            return Err(format!(
                "{}: its rows have another number of columns than {}'s (another log_hist_coarseness): not one job's logs",
                p.display(),
                first.display()
            ));
        }
        bins::coarseness_of(w).ok_or_else(|| format!("{}: {w} histogram columns", first.display()))
    }

    /// Only histogram logs (no iops or bw logs): the series is theirs.
    pub fn hist_only(&self) -> bool {
        self.iops.is_empty() && self.bw.is_empty() && self.hist.iter().any(|f| !f.is_empty())
    }

    /// The logs of a job that wrote only histogram logs, with each histogram row's
    /// I/Os (its counts added up: the I/Os completed in its `hist_ms`) as an iops row
    /// (I/Os per second, as fio's iops log has it) and, with one block size `bs`, a bw
    /// row (KiB/s): the series is then made as from fio's own rate logs, on the rows'
    /// interval. None with several block sizes (the bytes of a row are not known).
    fn rates_from_hist(&self, hist_ms: u64, bs: Option<u32>) -> Option<JobLogs> {
        let bs = u64::from(bs?);
        let h = hist_ms.max(1) as f64;
        let rows = |per_io: f64| -> Vec<Vec<Row>> {
            self.hist
                .iter()
                .map(|f| {
                    f.iter()
                        .map(|r| Row {
                            t_ms: r.t_ms,
                            value: (r.counts.iter().sum::<u64>() as f64 * per_io * 1000.0 / h)
                                .round() as u64,
                            ddir: r.ddir,
                        })
                        .collect()
                })
                .collect()
        };
        Some(JobLogs {
            iops: rows(1.0),
            bw: rows(bs as f64 / 1024.0),
            ..self.clone()
        })
    }

    fn first_row_ms(&self) -> Option<u64> {
        self.iops
            .iter()
            .chain(&self.bw)
            .flatten()
            .map(|r| r.t_ms)
            .min()
    }
}

/// What the conversion needs beside the job.
pub struct Context<'a> {
    /// The workload the job ran (drivelab's, or one rebuilt from fio's options).
    pub workload: &'a Workload,
    /// Per-second logs, when there are.
    pub logs: Option<&'a JobLogs>,
    /// When the run started, epoch ms (estimated; used to place leading windows without
    /// I/O, which have no log row).
    pub est_start_ms: Option<u64>,
    /// fio's version, for the note.
    pub fio_version: &'a str,
    /// The logs are known to be this job's: drivelab ran it with a prefix of its own
    /// (the local bridge, a fleet host). Logged I/Os that fall short of the totals are
    /// then fio's (a fio thread that got no CPU before the job ended never logs that
    /// window), said in a note, not a sign of another run's logs.
    pub own_logs: bool,
    /// fio's `log_hist_msec`: the interval of the histogram logs' rows, which need not
    /// be the series' (`log_avg_msec`); None when the job names none (fio then writes
    /// its histogram logs empty).
    pub hist_interval_ms: Option<u64>,
}

/// When a job's measured time began, epoch ms: fio's own `job_start` (3.36+), else the
/// end of the run (the output's `timestamp_ms`, or fio 3.1's `timestamp` in seconds)
/// less the job's runtime, else `fallback`.
/// (The time fio was started is too early: it sets up, and lays out files, first.)
pub fn start_estimate(out: &super::json::Output, job: &Job, fallback: u64) -> u64 {
    job.job_start
        .or_else(|| {
            out.end_ms()
                .map(|t| t.saturating_sub(job.read.runtime.max(job.write.runtime)))
        })
        .unwrap_or(fallback)
}

/// 9999-12-31T23:59:59.999Z in ms since 1970: the last time an RFC 3339 date can show.
const LAST_DATE_MS: u64 = 253_402_300_799_999;

/// Both directions together: counts added, scalars combined.
fn both(job: &Job, rl: &DirLat, wl: &DirLat, elapsed_ms: u64) -> (Dir, DirLat) {
    let counts = match (&rl.counts, &wl.counts) {
        (Some(a), Some(b)) => Some(a.iter().zip(b).map(|(x, y)| x + y).collect()),
        _ => None,
    };
    let lat = DirLat {
        counts,
        clat_counts: None,
        scalars: combine(&rl.scalars, &wl.scalars),
        // Plain JSON's percentiles do not combine; one direction's are all I/Os' when
        // the other did none.
        percentiles: match (job.read.total_ios, job.write.total_ios) {
            (_, 0) => rl.percentiles.clone(),
            (0, _) => wl.percentiles.clone(),
            _ => Vec::new(),
        },
        clat: rl.clat || wl.clat,
    };
    let dir = Dir {
        io_bytes: job.read.io_bytes + job.write.io_bytes,
        bw: 0,
        bw_bytes: 0,
        iops: 0.0,
        runtime: elapsed_ms,
        total_ios: job.read.total_ios + job.write.total_ios,
        slat_ns: None,
        clat_ns: None,
        lat_ns: None,
    };
    (dir, lat)
}

/// The step's totals: counts and bytes as fio gave them, rates over the job's runtime,
/// CPU from fio's percentages of it.
fn totals(job: &Job, rl: &DirLat, wl: &DirLat, w: &Workload) -> Totals {
    let elapsed_ms = job.read.runtime.max(job.write.runtime);
    let elapsed_ns = elapsed_ms * 1_000_000;
    let (all_dir, all) = both(job, rl, wl, elapsed_ms);
    let lat_sum =
        rl.scalars.mean_ns * rl.scalars.n as f64 + wl.scalars.mean_ns * wl.scalars.n as f64;
    let cpu_s = |pct: f64| pct / 100.0 * elapsed_ms as f64 / 1000.0;
    let ops = all_dir.total_ios;
    Totals {
        elapsed_ns,
        read: totals_of(&job.read, rl, elapsed_ns),
        write: totals_of(&job.write, wl, elapsed_ns),
        all: totals_of(&all_dir, &all, elapsed_ns),
        avg_inflight: lat_sum / elapsed_ns.max(1) as f64,
        kernel_workers_busy_avg: None,
        queue_depth: w.queue_depth(),
        cpu: CpuUsage {
            user_s: cpu_s(job.usr_cpu),
            sys_s: cpu_s(job.sys_cpu),
            cpu_s_per_million_io: (ops > 0)
                .then(|| (cpu_s(job.usr_cpu) + cpu_s(job.sys_cpu)) / ops as f64 * 1e6),
        },
        data: DataGeneration {
            pattern: w.data.name(),
            bytes_prepared: 0,
            bytes_per_s_per_core: None,
            busiest_job_fraction: 0.0,
            held_fraction: 0.0,
            limited_by_generator: false,
        },
        error_count: u64::from(job.error != 0),
    }
}

/// What the step's record says about where its numbers come from.
fn origin_notes(job: &Job, version: &str, clat: (bool, bool), bins: bool) -> Vec<String> {
    let mut notes = vec![format!(
        "Measured by fio {} (job '{}'), not by drivelab's engine.",
        super::json::version_number(version),
        job.jobname
    )];
    if (clat.0 && job.read.total_ios > 0) || (clat.1 && job.write.total_ios > 0) {
        notes.push("Latency is fio's completion latency (clat, from submission to the device to completion; the job had no lat_percentiles=1), not drivelab's from submission.".into());
    }
    if !bins && job.read.total_ios + job.write.total_ios > 0 {
        notes.push("fio's plain JSON carries no latency histogram (json+ does): percentiles are fio's own and the histograms are empty.".into());
    }
    notes
}

/// The longest runtime taken from a result (a year): beyond it the series and its
/// arithmetic would not fit, and no fio run lasts so long.
const MAX_RUNTIME_MS: u64 = 366 * 24 * 3600 * 1000;

/// Convert one job.
pub fn measured(job: &Job, cx: &Context<'_>) -> Result<Measured, String> {
    let elapsed_ms = job.read.runtime.max(job.write.runtime);
    let ios = job.read.total_ios.saturating_add(job.write.total_ios);
    if elapsed_ms == 0 && ios > 0 {
        return Err(format!(
            "job '{}' did {} in a runtime of 0 ms: no rate can be worked out from it (a result edited by hand?)",
            job.jobname,
            self::ios(ios)
        ));
    }
    if elapsed_ms > MAX_RUNTIME_MS {
        return Err(format!(
            "job '{}': a runtime of {elapsed_ms} ms is over a year: not a run fio made (a result edited by hand?)",
            job.jobname
        ));
    }
    let elapsed_ns = elapsed_ms * 1_000_000;
    let (rl, rclat) = dir_lat(&job.read)?;
    let (wl, wclat) = dir_lat(&job.write)?;
    let bins = rl.counts.is_some();
    let mut notes = origin_notes(job, cx.fio_version, (rclat, wclat), bins);
    let (series, t0) = match cx.logs {
        Some(l) => series(job, l, elapsed_ms, cx, &rl, &wl, &mut notes)?,
        None => (
            Series {
                interval_ns: elapsed_ns.max(1),
                records: Default::default(),
                head: None,
            },
            None,
        ),
    };
    // The logs' own clock when they have one (epoch ms with log_unix_epoch=1).
    let started = t0
        .filter(|&t| t > 1_000_000_000_000)
        .or(cx.est_start_ms)
        .unwrap_or(0);
    if started > LAST_DATE_MS {
        return Err(format!(
            "the fio result's start time ({started} ms since 1970) is after the year 9999: not a date fio writes (timestamp_ms and the logs' times are milliseconds)"
        ));
    }
    let failed = job.error != 0;
    Ok(Measured {
        status: if failed {
            RunStatus::Failed
        } else {
            RunStatus::Complete
        },
        failure: failed.then(|| {
            format!(
                "fio stopped the job with error {} ({})",
                job.error,
                errno_text(job.error)
            )
        }),
        started_at: humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(started),
        )
        .to_string(),
        duration_ns: cx.workload.ramp_ns + elapsed_ns,
        drain_ns: 0,
        virtual_start_ns: None,
        totals: totals(job, &rl, &wl, cx.workload),
        series,
        histogram: Histograms {
            read: hist(&rl),
            write: hist(&wl),
        },
        errors: Vec::new(),
        notes,
        simulator_ground_truth: None,
        replay: None,
        verify: None,
    })
}

/// "1 I/O", "2 I/Os".
pub fn ios(n: u64) -> String {
    if n == 1 {
        "1 I/O".into()
    } else {
        format!("{n} I/Os")
    }
}

fn errno_text(e: i64) -> String {
    std::io::Error::from_raw_os_error(e as i32).to_string()
}

/// One direction's rows per window, over the job files: each row's rate spread over
/// the windows its span overlaps ([`logs::spans`]) in proportion to the overlap, so a
/// window's value times its length is the I/Os (or KiB) the rows put in it. fio's
/// stamps drift later on a loaded host: placed by stamp alone, a row would skip a
/// window and double the next (an invented stall).
fn per_window(files: &[Vec<Row>], ddir: u8, t0: u64, iv: u64, n: usize) -> Vec<u64> {
    let mut out = vec![0f64; n];
    for f in files {
        for (from, to, r) in logs::spans(f.iter().filter(|r| r.ddir == ddir), iv) {
            for (k, o) in logs::overlaps(from, to, t0, iv, n) {
                out[k] += r.value as f64 * o as f64 / iv.max(1) as f64;
            }
        }
    }
    out.into_iter().map(|v| v.round() as u64).collect()
}

/// Mean latency per window: each row's mean over the windows its span overlaps,
/// weighted by the overlap and by the job's I/Os in the window.
fn lat_per_window(
    l: &JobLogs,
    lat: &[Vec<Row>],
    ddir: u8,
    t0: u64,
    iv: u64,
    n: usize,
) -> Vec<Option<f64>> {
    let mut sum = vec![0f64; n];
    let mut w = vec![0f64; n];
    for (f, iops) in lat
        .iter()
        .zip(l.iops.iter().map(Some).chain(std::iter::repeat(None)))
    {
        let ops = iops.map(|i| per_window(std::slice::from_ref(i), ddir, t0, iv, n));
        for (from, to, r) in logs::spans(f.iter().filter(|r| r.ddir == ddir), iv) {
            for (k, o) in logs::overlaps(from, to, t0, iv, n) {
                let weight = ops.as_ref().map_or(1.0, |o| o[k].max(1) as f64) * o as f64;
                sum[k] += r.value as f64 * weight;
                w[k] += weight;
            }
        }
    }
    sum.iter()
        .zip(&w)
        .map(|(s, w)| (*w > 0.0).then(|| s / w))
        .collect()
}

/// The histogram logs' files, named in a message: the one, or the first … the last.
fn hist_files(l: &JobLogs) -> String {
    match l.hist_files.as_slice() {
        [] => "the histogram logs".into(),
        [one] => one.display().to_string(),
        [first, .., last] => format!("{} … {}", first.display(), last.display()),
    }
}

/// Whether histogram rows every `hist_ms` sit each inside one of the series' windows of
/// `iv` ms: the series' interval is a whole number of the rows' (a window's
/// percentiles are then exact). Else a row spans several windows or straddles two, and
/// no window's percentiles are known.
fn hist_fits(hist_ms: u64, iv: u64) -> bool {
    hist_ms > 0 && hist_ms <= iv && iv.is_multiple_of(hist_ms)
}

/// The job's per-window histograms of one direction (repaired when corrupted), plus the
/// unlogged tail in the last window; None without histogram rows, or when the rows'
/// interval (`hist_ms`, fio's `log_hist_msec`) does not divide the series' windows
/// (`iv`, `log_avg_msec`; [`hist_fits`]): a note says so, and the rows are checked
/// against the job's histogram all the same. Each row covers its own interval (from
/// the previous row's stamp, as [`logs::span_from`] places rows, with `hist_ms` as the
/// window), not the series'.
#[allow(clippy::too_many_arguments)]
fn hist_per_window(
    l: &JobLogs,
    ddir: u8,
    final_counts: Option<&Vec<u64>>,
    hist_ms: Option<u64>,
    t0: u64,
    iv: u64,
    n: usize,
    notes: &mut Vec<String>,
) -> Result<Option<Vec<Vec<u64>>>, String> {
    let Some(fin) = final_counts else {
        return Ok(None);
    };
    let chains: Vec<Vec<HistRow>> = l
        .hist
        .iter()
        .map(|f| f.iter().filter(|r| r.ddir == ddir).cloned().collect())
        .collect();
    if chains.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    let Some(h) = hist_ms.filter(|&h| h > 0) else {
        return Err(format!(
            "{}: histogram rows, but the job names no log_hist_msec: their interval is not known",
            hist_files(l)
        ));
    };
    // The job's histogram summed as the rows' columns are (log_hist_coarseness).
    let fin = &bins::coarsen(fin, l.hist_coarseness()?);
    let cols = fin.len();
    let refs: Vec<&[HistRow]> = chains.iter().map(|c| c.as_slice()).collect();
    let buggy = logs::is_corrupted(&refs, fin);
    let fits = hist_fits(h, iv);
    let mut out = vec![vec![0u64; cols]; if fits { n } else { 0 }];
    let mut logged = vec![0u64; cols];
    let mut repaired = false;
    for c in &chains {
        let rows = logs::repair_chain(c, buggy).map_err(|e| format!("{}: {e}", hist_files(l)))?;
        repaired |= rows.iter().zip(c).any(|(a, b)| a.counts != b.counts);
        // Each row's counts (whole I/Os) go to the window most of its span lies in.
        let mut prev: Option<u64> = None;
        for r in rows {
            let from = logs::span_from(prev, r.t_ms, h);
            prev = Some(r.t_ms);
            for (a, v) in logged.iter_mut().zip(&r.counts) {
                *a = a.saturating_add(*v);
            }
            let most = logs::overlaps(from, r.t_ms, t0, iv, n)
                .into_iter()
                .max_by_key(|&(k, o)| (o, std::cmp::Reverse(k)));
            if let Some((k, _)) = most.filter(|_| fits) {
                for (o, v) in out[k].iter_mut().zip(&r.counts) {
                    *o = o.saturating_add(*v);
                }
            }
        }
    }
    // The logged windows (repaired) can hold no more than the job's whole histogram;
    // what they lack is the last, unlogged window.
    if let Some(i) = (0..cols).find(|&i| logged[i] > fin[i]) {
        return Err(format!(
            "{}: fio's histogram logs hold {} of {} ns where its result holds {}: they do not add up",
            hist_files(l),
            ios(logged[i]),
            bins::coarse_val(i, l.hist_coarseness()?),
            fin[i]
        ));
    }
    if repaired && !notes.iter().any(|n| n.contains("repaired")) {
        notes.push("fio's client/server histogram logs were repaired (each row held C_k − s_{k−1}; see docs/fio.md).".into());
    }
    if !fits {
        let note = format!(
            "{}: fio's histogram rows cover {h} ms each (log_hist_msec) and the series' windows {iv} ms (log_avg_msec), {}: the windows have no percentiles (the step's come from its json+ bins); the rows were checked against them.",
            hist_files(l),
            if h > iv {
                "each row spanning several windows"
            } else {
                "rows straddling two windows"
            }
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
        return Ok(None);
    }
    if let Some(last) = out.last_mut() {
        for i in 0..cols {
            last[i] += fin[i] - logged[i];
        }
    }
    Ok(Some(out))
}

/// One direction's window; `h`: its histogram and the histogram's coarseness.
fn interval_dir(
    ops: u64,
    bytes: u64,
    dur_ns: u64,
    lat: Option<f64>,
    h: Option<(&Vec<u64>, u32)>,
) -> IntervalDir {
    let s = dur_ns.max(1) as f64 / 1e9;
    let p = |q: f64| h.and_then(|(counts, c)| bins::percentile_at(counts, q, c));
    IntervalDir {
        ops,
        bytes,
        ops_per_s: ops as f64 / s,
        bytes_per_s: bytes as f64 / s,
        lat_mean_ns: lat.filter(|_| ops > 0),
        lat_p50_ns: p(50.0),
        lat_p99_ns: p(99.0),
        lat_p9999_ns: p(99.99),
        lat_max_ns: None,
        errors: None,
    }
}

/// The series on the grid of the workload's interval (fio's `log_avg_msec`; for a job
/// that wrote histogram logs alone, their `log_hist_msec`: the series is made from
/// their rows, [`JobLogs::rates_from_hist`]).
fn series(
    job: &Job,
    l: &JobLogs,
    elapsed_ms: u64,
    cx: &Context<'_>,
    rl: &DirLat,
    wl: &DirLat,
    notes: &mut Vec<String>,
) -> Result<(Series, Option<u64>), String> {
    let iv = (cx.workload.log_interval_ns / 1_000_000).max(1);
    if !l.hist_only() {
        return series_on(job, l, iv, elapsed_ms, cx, (rl, wl), notes);
    }
    let bs = match cx.workload.bs.as_slice() {
        [one] => Some(one.bytes),
        _ => None,
    };
    let h = cx.hist_interval_ms.filter(|&h| h == iv).ok_or_else(|| {
        format!(
            "{}: the job logged only histograms, every {} ms, but its series is on {iv} ms windows",
            hist_files(l),
            cx.hist_interval_ms.unwrap_or(0)
        )
    })?;
    let from_hist = l.rates_from_hist(h, bs).ok_or_else(|| {
        format!(
            "{}: the job logged only histograms (no iops or bw logs) and ran several block sizes: the bytes of its windows are not known",
            hist_files(l)
        )
    })?;
    notes.push(format!(
        "The series is fio's histogram logs' ({h} ms windows; the job wrote no iops or bw logs): each window's I/Os are its rows' counts, its bytes those times the block size."
    ));
    // A refusal names the logs it is about.
    series_on(job, &from_hist, iv, elapsed_ms, cx, (rl, wl), notes).map_err(|e| {
        let e = e.trim_start_matches("--logs: ");
        let files = hist_files(l);
        if e.starts_with(&files) {
            e.to_string()
        } else {
            format!("{files}: {e}")
        }
    })
}

/// [`series`] from logs with rates (fio's, or made from its histogram rows), on
/// windows of `iv` ms.
fn series_on(
    job: &Job,
    l: &JobLogs,
    iv: u64,
    elapsed_ms: u64,
    cx: &Context<'_>,
    (rl, wl): (&DirLat, &DirLat),
    notes: &mut Vec<String>,
) -> Result<(Series, Option<u64>), String> {
    // Whole windows, the last one taking the rest (fio never logs the last, partial
    // window: a run of 3001 ms has windows [0,1), [1,2) and [2,3.001) s).
    let n = ((elapsed_ms + iv / 2) / iv).max(1) as usize;
    let Some(first) = l.first_row_ms() else {
        // Not one window logged: the whole run is the tail.
        return Ok((
            Series {
                interval_ns: iv * 1_000_000,
                records: build(job, cx, iv, elapsed_ms, n, &Grid::empty(n)).into(),
                head: None,
            },
            None,
        ));
    };
    let t0 = logs::start_of(first, iv, cx.est_start_ms);
    let mut g = Grid::empty(n);
    let mut lat_kinds = Vec::new();
    for (d, dir) in [(0u8, &job.read), (1u8, &job.write)] {
        let d_ix = d as usize;
        check_span(l, d, t0, iv, n, elapsed_ms)?;
        let mut ops = per_window(&l.iops, d, t0, iv, n);
        if let Err(e) = check_logged_ops(&ops, iv, dir.total_ios, cx.workload.numjobs) {
            if !cx.own_logs {
                return Err(e);
            }
            notes.push(format!(
                "fio's {} logs hold fewer I/Os than its totals (a loaded host: windows fio had no CPU to log before the job ended are missing); the unlogged I/Os are counted in the last window.",
                if d == 0 { "read" } else { "write" },
            ));
        }
        let mut bytes: Vec<u64> = per_window(&l.bw, d, t0, iv, n)
            .into_iter()
            .map(|kib| kib * 1024 * iv / 1000)
            .collect();
        ops.iter_mut().for_each(|o| *o = *o * iv / 1000);
        let over = [
            settle(&mut ops, dir.total_ios),
            settle(&mut bytes, dir.io_bytes),
        ];
        if let Some(f) = over.into_iter().flatten().reduce(f64::max) {
            notes.push(format!(
                "fio's per-window {} logs add up to {:.2} % more than its {} totals (each job's rate is rounded up over its windows): every window was scaled to the totals, keeping its shape.",
                if d == 0 { "read" } else { "write" },
                (f - 1.0) * 100.0,
                if d == 0 { "read" } else { "write" },
            ));
        }
        g.ops[d_ix] = ops;
        g.bytes[d_ix] = bytes;
        let clat = if d == 0 { rl.clat } else { wl.clat };
        let mut kinds = Vec::new();
        g.lat[d_ix] = lat_per_window(l, lat_logs(l, clat, &mut kinds), d, t0, iv, n);
        if dir.total_ios > 0 {
            lat_kinds.extend(kinds);
        }
        let fin = if d == 0 {
            &rl.clat_counts
        } else {
            &wl.clat_counts
        };
        let fin = fin.as_ref();
        g.hist[d_ix] = hist_per_window(l, d, fin, cx.hist_interval_ms, t0, iv, n, notes)?;
        g.hist_coarseness = l.hist_coarseness()?;
    }
    lat_kinds.dedup();
    notes.extend(lat_kinds.into_iter().map(LatKind::note));
    Ok((
        Series {
            interval_ns: iv * 1_000_000,
            records: build(job, cx, iv, elapsed_ms, n, &g).into(),
            head: None,
        },
        Some(t0),
    ))
}

/// Which latency the series carries, against the totals'.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LatKind {
    /// The same kind as the totals (clat from `_clat` logs, or lat from `_lat`).
    Same { clat: bool },
    /// The totals are clat but only `_lat` logs exist (or the other way round).
    Other { totals_clat: bool },
}

impl LatKind {
    fn note(self) -> String {
        match self {
            LatKind::Same { clat: true } => "The series' latency is fio's completion latency (clat, its _clat logs), as the totals are.".into(),
            LatKind::Same { clat: false } => "The series' latency is fio's total latency (lat, its _lat logs), as the totals are.".into(),
            LatKind::Other { totals_clat: true } => "The series' latency is fio's total latency (lat, its _lat logs; no _clat logs were found) while the totals are completion latency (clat): the series reads higher by the submission time.".into(),
            LatKind::Other { totals_clat: false } => "The series' latency is fio's completion latency (clat; no _lat logs were found) while the totals are total latency (lat): the series reads lower by the submission time.".into(),
        }
    }
}

/// The latency logs of the kind the totals are (`clat`: completion latency), else the
/// other kind, with which it was.
fn lat_logs<'a>(l: &'a JobLogs, clat: bool, kinds: &mut Vec<LatKind>) -> &'a [Vec<Row>] {
    let (same, other) = if clat {
        (&l.clat, &l.lat)
    } else {
        (&l.lat, &l.clat)
    };
    if !same.is_empty() {
        kinds.push(LatKind::Same { clat });
        same
    } else if !other.is_empty() {
        kinds.push(LatKind::Other { totals_clat: clat });
        other
    } else {
        same
    }
}

/// The logs must span the job's runtime, not more: rows past its end are another run's.
fn check_span(
    l: &JobLogs,
    ddir: u8,
    t0: u64,
    iv: u64,
    n: usize,
    elapsed_ms: u64,
) -> Result<(), String> {
    let last = l
        .iops
        .iter()
        .chain(&l.bw)
        .flatten()
        .filter(|r| r.ddir == ddir)
        .filter_map(|r| logs::window(r.t_ms, t0, iv))
        .max();
    match last {
        // (The last, partial window may be closed by a final row.)
        Some(k) if k > n => Err(format!(
            "--logs: the logs run for {} s but the job ran {:.1} s: they are not this job's logs",
            (k as u64 + 1) * iv / 1000,
            elapsed_ms as f64 / 1000.0
        )),
        _ => Ok(()),
    }
}

/// The logged I/Os (fio's per-window rates, rounded) can differ from the job's total
/// only by rounding and the unlogged last window (summed over 16–64 jobs at 250 ms,
/// fio's windows add up to 1–2 % more than the total; up to [`EXCESS_OK`] is taken for
/// that): far more, or logs that stop windows before the end while most I/Os are still
/// missing, mean the logs are another run's.
fn check_logged_ops(ops: &[u64], iv: u64, total: u64, jobs: u32) -> Result<(), String> {
    let per: Vec<u64> = ops.iter().map(|o| o.saturating_mul(iv) / 1000).collect();
    let logged: u64 = per.iter().fold(0, |a, &b| a.saturating_add(b));
    let slack = (ops.len() as u64 * u64::from(jobs.max(1))).saturating_mul(iv / 1000 + 1);
    let refuse = |what: &str| {
        Err(format!(
            "--logs: the logs hold {} where the job did {}{what}: they are not this job's logs",
            ios(logged),
            ios(total)
        ))
    };
    if logged as f64 > total as f64 * EXCESS_OK + slack as f64 {
        return refuse("");
    }
    // The unlogged last window holds at most 1.5 windows of I/O.
    let n = per.len();
    let last = per.iter().rposition(|&o| o > 0);
    let widest = per.iter().copied().max().unwrap_or(0);
    let missing = total.saturating_sub(logged);
    if n >= 4
        && last.is_some_and(|k| k + 3 < n)
        && missing > widest.saturating_mul(2).saturating_add(slack)
    {
        return refuse(" and they end before it did");
    }
    Ok(())
}

/// Most the logged I/Os may exceed the job's total by (a factor) and still be its logs.
const EXCESS_OK: f64 = 1.10;

/// Make per-window counts add up to the job's total: the unlogged last window takes
/// what is left. When fio's per-window rates add up to more than the total (summed over
/// many jobs they do, by 1–2 % at 250 ms), every window is scaled down alike, so the
/// series keeps its shape and no window that had I/O becomes zero; returns the factor
/// (sum ÷ total) then.
fn settle(v: &mut [u64], total: u64) -> Option<f64> {
    let sum: u64 = v.iter().fold(0, |a, &b| a.saturating_add(b));
    if sum <= total {
        if let Some(last) = v.last_mut() {
            *last += total - sum;
        }
        return None;
    }
    let f = total as f64 / sum as f64;
    // Largest remainders: floor every window, then give the rest to those that lost
    // most; a window with I/O keeps at least one.
    let exact: Vec<f64> = v.iter().map(|&x| x as f64 * f).collect();
    let mut out: Vec<u64> = v
        .iter()
        .zip(&exact)
        .map(|(&x, &e)| if x > 0 { (e.floor() as u64).max(1) } else { 0 })
        .collect();
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - out[b] as f64).total_cmp(&(exact[a] - out[a] as f64)));
    let mut got: u64 = out.iter().sum();
    for &i in order.iter().cycle().take(v.len() * 2) {
        if got == total {
            break;
        }
        if got < total {
            out[i] += 1;
            got += 1;
        } else if out[i] > 1 {
            out[i] -= 1;
            got -= 1;
        }
    }
    v.copy_from_slice(&out);
    Some(sum as f64 / total.max(1) as f64)
}

/// Per-window values of both directions.
struct Grid {
    ops: [Vec<u64>; 2],
    bytes: [Vec<u64>; 2],
    lat: [Vec<Option<f64>>; 2],
    hist: [Option<Vec<Vec<u64>>>; 2],
    /// The histograms' `log_hist_coarseness` (their columns: [`bins::columns`]).
    hist_coarseness: u32,
}

impl Grid {
    fn empty(n: usize) -> Grid {
        Grid {
            ops: [vec![0; n], vec![0; n]],
            bytes: [vec![0; n], vec![0; n]],
            lat: [vec![None; n], vec![None; n]],
            hist: [None, None],
            hist_coarseness: 0,
        }
    }
}

fn build(
    job: &Job,
    cx: &Context<'_>,
    iv: u64,
    elapsed_ms: u64,
    n: usize,
    g: &Grid,
) -> Vec<IntervalRecord> {
    let mut g_ops = g.ops.clone();
    let mut g_bytes = g.bytes.clone();
    if g_ops[0].iter().chain(&g_ops[1]).all(|&o| o == 0) {
        // No logs: the totals in the one (last) window.
        g_ops[0][n - 1] = job.read.total_ios;
        g_ops[1][n - 1] = job.write.total_ios;
        g_bytes[0][n - 1] = job.read.io_bytes;
        g_bytes[1][n - 1] = job.write.io_bytes;
    }
    let mut cum = 0u64;
    (0..n)
        .map(|k| {
            let dur_ms = if k + 1 == n {
                elapsed_ms - iv * (n as u64 - 1)
            } else {
                iv
            };
            let dur = dur_ms.max(1) * 1_000_000;
            let h = |d: usize| g.hist[d].as_ref().map(|h| (&h[k], g.hist_coarseness));
            let r = interval_dir(g_ops[0][k], g_bytes[0][k], dur, g.lat[0][k], h(0));
            let w = interval_dir(g_ops[1][k], g_bytes[1][k], dur, g.lat[1][k], h(1));
            let both: Option<Vec<u64>> = match (h(0), h(1)) {
                (Some((a, _)), Some((b, _))) => Some(a.iter().zip(b).map(|(x, y)| x + y).collect()),
                _ => None,
            };
            let ops = r.ops + w.ops;
            let lat = match (r.lat_mean_ns, w.lat_mean_ns) {
                (Some(a), Some(b)) => {
                    Some((a * r.ops as f64 + b * w.ops as f64) / ops.max(1) as f64)
                }
                (a, b) => a.or(b),
            };
            let all = interval_dir(
                ops,
                r.bytes + w.bytes,
                dur,
                lat,
                both.as_ref().map(|b| (b, g.hist_coarseness)),
            );
            cum += w.bytes;
            IntervalRecord {
                index: k as u64,
                start_ns: cx.workload.ramp_ns + k as u64 * iv * 1_000_000,
                duration_ns: dur,
                ramp: false,
                read: r,
                write: w,
                all,
                cum_write_bytes: cum,
                sensors: Vec::new(),
                over_link_ceiling: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_of_another_run_do_not_add_up() {
        // 4 windows of 200 I/Os, a job of 800 (+ a partial window): fine.
        assert!(check_logged_ops(&[200, 200, 200, 200], 1000, 900, 1).is_ok());
        // Far more I/Os logged than the job did.
        let e = check_logged_ops(&[200, 200, 200, 200], 1000, 400, 1).unwrap_err();
        assert!(e.contains("800 I/Os where the job did 400 I/Os"), "{e}");
        // Logs that end three windows early while most I/Os are missing.
        let e = check_logged_ops(&[200, 0, 0, 0, 0], 1000, 1000, 1).unwrap_err();
        assert!(e.contains("they end before it did"), "{e}");
        // A device that stalled at the end: nothing is missing.
        assert!(check_logged_ops(&[200, 0, 0, 0, 0], 1000, 250, 1).is_ok());
        assert_eq!(ios(1), "1 I/O");
        // 64 jobs' windows 1.7 % over the total are this job's logs.
        assert!(check_logged_ops(&[10_170, 10_170, 10_170, 10_170], 1000, 40_000, 64).is_ok());
    }

    /// fio's per-window rates of many jobs add up to 1–2 % more than the total: the
    /// windows are scaled alike, none that had I/O becomes zero, the sum is the total.
    #[test]
    fn windows_over_the_total_are_scaled_keeping_their_shape() {
        let mut v = vec![10_904, 11_020, 5_912, 10_870, 1, 10_950];
        let sum: u64 = v.iter().sum();
        let total = (sum as f64 / 1.0171) as u64;
        let f = settle(&mut v, total).unwrap();
        assert!((f - 1.0171).abs() < 1e-3, "{f}");
        assert_eq!(v.iter().sum::<u64>(), total);
        assert!(v.iter().all(|&x| x > 0), "{v:?}");
        assert!(
            v[5] > 10_700 && v[2] > 5_800,
            "the last windows keep their I/O: {v:?}"
        );
        // Below the total, the unlogged last window takes the rest.
        let mut w = vec![100, 100];
        assert_eq!(settle(&mut w, 250), None);
        assert_eq!(w, vec![100, 150]);
    }

    /// fio's stamps drift on a loaded host (250, 527, … 1909 ms at log_avg_msec=250):
    /// by stamp alone window 6 was empty and window 7 doubled (an invented stall);
    /// by span every window has I/O and the I/Os add up.
    #[test]
    fn drifting_stamps_leave_no_empty_window() {
        let stamps = [250u64, 527, 803, 1072, 1322, 1582, 1909];
        let job = |vals: [u64; 7]| -> Vec<Row> {
            stamps
                .iter()
                .zip(vals)
                .map(|(&t_ms, value)| Row {
                    t_ms,
                    value,
                    ddir: 0,
                })
                .collect()
        };
        let jobs = [
            job([2147, 2104, 1979, 2004, 2191, 1924, 4474]),
            job([2147, 2103, 1979, 2004, 2191, 1923, 4474]),
        ];
        let (t0, iv, n) = (logs::start_of(250, 250, None), 250, 8);
        let by_stamp = {
            let mut v = vec![0u64; n];
            for r in jobs.iter().flatten() {
                v[logs::window(r.t_ms, t0, iv).unwrap()] += r.value;
            }
            v
        };
        assert_eq!(by_stamp, [4294, 4207, 3958, 4008, 4382, 3847, 0, 8948]);
        let got = per_window(&jobs, 0, t0, iv, n);
        assert!(got.iter().all(|&v| v > 0), "{got:?}");
        // The last row's span (1582–1909 ms) is shared by windows 6 and 7.
        assert!(got[6] > 3000 && got[7] < 8948, "{got:?}");
        // The I/Os (rate × span) are kept.
        let ios = |w: &[u64]| {
            w.iter()
                .map(|&v| v as f64 * iv as f64 / 1000.0)
                .sum::<f64>()
        };
        let mut want = 0.0;
        for f in &jobs {
            for (from, to, r) in logs::spans(f, iv) {
                want += r.value as f64 * (to - from) as f64 / 1000.0;
            }
        }
        assert!((ios(&got) - want).abs() < 5.0, "{} vs {want}", ios(&got));
    }
}
