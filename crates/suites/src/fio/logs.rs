//! fio's per-second logs (`write_iops_log`, `write_bw_log`, `write_lat_log` with
//! `log_avg_msec`, and `write_hist_log` with `log_hist_msec`), read and put on
//! drivelab's fixed grid.
//!
//! Rows are `time, value, ddir, bs, prio[, …]`; `time` is ms since the job's start, or
//! epoch ms with `log_unix_epoch=1`; iops values are I/Os per second, bw KiB/s, lat ns
//! (the window's mean). A window without I/O has no row (drivelab counts it as a
//! zero-I/O second) and the last, partial window is never logged (its I/Os are the
//! JSON totals less the logged ones). Histogram rows are `time, ddir, bs, 1856 counts`,
//! or 1856 >> c with `log_hist_coarseness=c` (each column 2^c adjacent bins summed);
//! in client/server mode fio sends them corrupted (each row `C_k − s_{k−1}` instead of
//! `C_k − C_{k−1}`), repaired here as `s_k − s_{k−2}` when the naive sums exceed the
//! job's final histogram.

use std::path::{Path, PathBuf};

use super::bins;

/// One row of an iops / bw / lat log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub t_ms: u64,
    pub value: u64,
    pub ddir: u8,
}

/// One row of a histogram log.
#[derive(Debug, Clone, PartialEq)]
pub struct HistRow {
    pub t_ms: u64,
    pub ddir: u8,
    /// The row's columns: fio's 1856 bins at coarseness 0, 1856 >> c at `c`
    /// ([`bins::columns`]); every row of a log has as many.
    pub counts: Vec<u64>,
}

fn num(s: &str, what: &str, line: usize) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("line {line}: {what} '{}' is not a whole number", s.trim()))
}

/// Parse a windowed log.
pub fn parse_rows(text: &str) -> Result<Vec<Row>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 {
            return Err(format!("line {}: not 'time, value, ddir, bs, …'", i + 1));
        }
        out.push(Row {
            t_ms: time_ms(f[0], i + 1)?,
            value: num(f[1], "value", i + 1)?,
            ddir: num(f[2], "ddir", i + 1)? as u8,
        });
    }
    Ok(out)
}

/// A row's time (ms): refused beyond 2^64 ns (584 years), which no log of a run holds
/// (Unix-epoch times are about 1.7e12 ms).
fn time_ms(s: &str, line: usize) -> Result<u64, String> {
    let t = num(s, "time", line)?;
    if t > u64::MAX / 1_000_000 {
        return Err(format!(
            "line {line}: the time {t} ms is beyond 2^64 ns (584 years): not a time of a run"
        ));
    }
    Ok(t)
}

/// Parse a histogram log at any `log_hist_coarseness` (0…6: 1856 >> c columns of
/// counts after time, ddir and bs, as the first row has them; every row alike).
pub fn parse_hist(text: &str) -> Result<Vec<HistRow>, String> {
    let mut out = Vec::new();
    let mut width: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let n = f.len().saturating_sub(3);
        match width {
            Some(w) if w != n => {
                return Err(format!(
                    "line {}: {} columns where the log's first row has {}: rows of two coarsenesses",
                    i + 1,
                    f.len(),
                    w + 3
                ))
            }
            None if bins::coarseness_of(n).is_none() => {
                return Err(format!(
                    "line {}: {} columns, not time, ddir, bs and fio's 1856 bins or 1856 >> c of them (log_hist_coarseness=c, 0…6: 928, 464, 232, 116, 58, 29)",
                    i + 1,
                    f.len(),
                ))
            }
            _ => width = Some(n),
        }
        let counts = f[3..]
            .iter()
            .map(|c| num(c, "count", i + 1))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(HistRow {
            t_ms: time_ms(f[0], i + 1)?,
            ddir: num(f[1], "ddir", i + 1)? as u8,
            counts,
        });
    }
    Ok(out)
}

/// Undo client/server mode's histogram corruption in one chain (one file, one
/// direction) when it is there: `buggy` says so (see [`is_corrupted`]). Returns the
/// per-window counts; a negative difference (which a correct repair never gives) is
/// reported as an error.
pub fn repair_chain(rows: &[HistRow], buggy: bool) -> Result<Vec<HistRow>, String> {
    if !buggy {
        return Ok(rows.to_vec());
    }
    let zero = vec![0u64; rows.first().map_or(0, |r| r.counts.len())];
    let (mut prev1, mut prev2) = (&zero, &zero);
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut d = Vec::with_capacity(r.counts.len());
        for (i, &s) in r.counts.iter().enumerate() {
            d.push(s.checked_sub(prev2[i]).ok_or_else(|| {
                format!(
                    "the histogram log at {} ms does not repair (bin {i}: {s} < {})",
                    r.t_ms, prev2[i]
                )
            })?);
        }
        out.push(HistRow {
            t_ms: r.t_ms,
            ddir: r.ddir,
            counts: d,
        });
        prev2 = prev1;
        prev1 = &r.counts;
    }
    Ok(out)
}

/// Whether histogram rows summed naively exceed the job's final histogram in any bin:
/// then they are in client/server mode's corrupted encoding. `final_counts` at the
/// rows' coarseness ([`bins::coarsen`]).
pub fn is_corrupted(chains: &[&[HistRow]], final_counts: &[u64]) -> bool {
    let mut naive = vec![0u64; final_counts.len()];
    for c in chains {
        for r in c.iter() {
            for (a, b) in naive.iter_mut().zip(&r.counts) {
                *a = a.saturating_add(*b);
            }
        }
    }
    naive.iter().zip(final_counts).any(|(a, b)| a > b)
}

/// The window a row closes, on a grid of `interval_ms` from `t0_ms`: rows come at the
/// end of their window (a few ms late), the last flush of a lat log at the run's end.
pub fn window(t_ms: u64, t0_ms: u64, interval_ms: u64) -> Option<usize> {
    let rel = t_ms.checked_sub(t0_ms)?;
    ((rel + interval_ms / 2) / interval_ms)
        .checked_sub(1)
        .map(|k| k as usize)
}

/// The span (ms, `[from, to)`) each row of one direction averages: from the previous
/// row's stamp to its own. fio's stamps drift later on a loaded host (250, 527, 803, …
/// ms at 250 ms): a row is placed by the time it covers, not by its stamp alone. The
/// first row, and a row after a gap (more than one and a half windows `iv` since the
/// previous: windows without I/O have no row), covers one window up to its stamp.
pub fn spans<'a>(rows: impl IntoIterator<Item = &'a Row>, iv: u64) -> Vec<(u64, u64, &'a Row)> {
    let mut prev: Option<u64> = None;
    rows.into_iter()
        .map(|r| {
            let from = span_from(prev, r.t_ms, iv);
            prev = Some(r.t_ms);
            (from, r.t_ms, r)
        })
        .collect()
}

/// Where the span of a row stamped `t_ms` starts (see [`spans`]), after a row stamped
/// `prev`.
pub fn span_from(prev: Option<u64>, t_ms: u64, iv: u64) -> u64 {
    let one = t_ms.saturating_sub(iv);
    match prev {
        Some(p) if p <= t_ms && t_ms - p <= iv + iv / 2 => p,
        _ => one,
    }
}

/// The windows of a grid (`n` windows of `iv` ms from `t0`; time before `t0` counts in
/// the first, time after the grid in the last, which takes the rest of the run) that
/// the span `[from, to)` overlaps, with the overlap in ms.
pub fn overlaps(from: u64, to: u64, t0: u64, iv: u64, n: usize) -> Vec<(usize, u64)> {
    if n == 0 || to <= from {
        return Vec::new();
    }
    let last = n - 1;
    let k = |t: u64| ((t.saturating_sub(t0) / iv.max(1)) as usize).min(last);
    (k(from)..=k(to - 1))
        .filter_map(|w| {
            let lo = if w == 0 { 0 } else { t0 + w as u64 * iv };
            let hi = if w == last {
                u64::MAX
            } else {
                t0 + (w as u64 + 1) * iv
            };
            let o = to.min(hi).saturating_sub(from.max(lo));
            (o > 0).then_some((w, o))
        })
        .collect()
}

/// Where a run's logs start (epoch ms or ms since start, as the logs have it): the
/// first row less one window, moved back by whole windows when the first row came later
/// than `est_start_ms` (leading windows without I/O have no row).
pub fn start_of(first_row_ms: u64, interval_ms: u64, est_start_ms: Option<u64>) -> u64 {
    let t0 = first_row_ms.saturating_sub(interval_ms);
    let lead = est_start_ms
        .filter(|&e| e < t0)
        .map_or(0, |e| (t0 - e + interval_ms / 2) / interval_ms);
    t0.saturating_sub(lead * interval_ms)
}

/// The log files of one job's run: `<prefix>_<kind>.<n>.log[<suffix>]` for n = 1…jobs.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub iops: Vec<PathBuf>,
    pub bw: Vec<PathBuf>,
    /// Total latency (`_lat`: submission to completion).
    pub lat: Vec<PathBuf>,
    /// Completion latency (`_clat`), which `write_lat_log` writes beside `_lat`.
    pub clat: Vec<PathBuf>,
    pub hist: Vec<PathBuf>,
}

/// The log prefixes a job's own options name (`write_iops_log`, `write_bw_log`,
/// `write_lat_log`, `write_hist_log`), as paths on the host that ran it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prefixes {
    pub iops: Option<String>,
    pub bw: Option<String>,
    pub lat: Option<String>,
    pub hist: Option<String>,
}

impl Prefixes {
    pub fn is_empty(&self) -> bool {
        self.iops.is_none() && self.bw.is_none() && self.lat.is_none() && self.hist.is_none()
    }
}

/// Where one kind's files of `prefix` are: in the first of `dirs` holding
/// `<name>_<kind>.1.log<suffix>` (`name`: the prefix's last part; fio's output
/// directory may have moved since), else at the prefix's own path; numbered 1…`jobs`,
/// every one there. `suffix`: `.<host>` for a client's result (fio's client names its
/// servers' logs so), else empty.
fn kind_files(
    prefix: &str,
    kind: &str,
    jobs: u32,
    dirs: &[&Path],
    suffix: &str,
) -> Result<Vec<PathBuf>, String> {
    let base = Path::new(prefix)
        .file_name()
        .map_or_else(|| prefix.to_string(), |n| n.to_string_lossy().into_owned());
    let first = |at: &Path| at.join(format!("{base}_{kind}.1.log{suffix}")).is_file();
    let dir = dirs
        .iter()
        .find(|d| first(d))
        .map(|d| d.to_path_buf())
        .or_else(|| {
            let own = Path::new(prefix).parent().unwrap_or(Path::new(""));
            first(own).then(|| own.to_path_buf())
        });
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let files: Vec<PathBuf> = (1..=jobs)
        .map(|n| dir.join(format!("{base}_{kind}.{n}.log{suffix}")))
        .collect();
    if let Some(m) = files.iter().find(|p| !p.is_file()) {
        return Err(format!(
            "{} is missing: the job ran {jobs} jobs and fio writes one {kind} log for each",
            m.display()
        ));
    }
    Ok(files)
}

impl Files {
    /// The files fio writes for `prefix` with `jobs` jobs, with `suffix` (client mode:
    /// `.<host>`) appended; only those that exist.
    pub fn expected(prefix: &str, jobs: u32, suffix: &str) -> Files {
        let f = |kind: &str| -> Vec<PathBuf> {
            (1..=jobs)
                .map(|n| PathBuf::from(format!("{prefix}_{kind}.{n}.log{suffix}")))
                .collect()
        };
        Files {
            iops: f("iops"),
            bw: f("bw"),
            lat: f("lat"),
            clat: f("clat"),
            hist: f("clat_hist"),
        }
    }

    /// The files of the `prefixes` a job named, `jobs` of each kind (see
    /// [`kind_files`]; `host`: a client's result's server); None when none is found (a
    /// job with latency logs alone has no series; one with histogram logs alone has
    /// theirs).
    pub fn named(
        prefixes: &Prefixes,
        jobs: u32,
        dirs: &[&Path],
        host: Option<&str>,
    ) -> Result<Option<Files>, String> {
        let suffix = host.map_or(String::new(), |h| format!(".{h}"));
        let of = |p: &Option<String>, kind: &str| match p {
            Some(p) => kind_files(p, kind, jobs, dirs, &suffix),
            None => Ok(Vec::new()),
        };
        let f = Files {
            iops: of(&prefixes.iops, "iops")?,
            bw: of(&prefixes.bw, "bw")?,
            lat: of(&prefixes.lat, "lat")?,
            clat: of(&prefixes.lat, "clat")?,
            hist: of(&prefixes.hist, "clat_hist")?,
        };
        Ok((!f.iops.is_empty() || !f.bw.is_empty() || !f.hist.is_empty()).then_some(f))
    }

    /// Files found in `dir` (the first prefix with an iops log), for `drivelab import`.
    pub fn find(dir: &Path) -> Result<Files, String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        let pick = |kind: &str| -> Vec<PathBuf> {
            let mut v: Vec<(u64, &String)> = names
                .iter()
                .filter_map(|n| {
                    let (_, rest) = n.split_once(&format!("_{kind}."))?;
                    let (num, _) = rest.split_once(".log")?;
                    Some((num.parse().ok()?, n))
                })
                .collect();
            // By job number (fio's `.N.`), not by name: job 10 after job 2.
            v.sort();
            v.into_iter().map(|(_, n)| dir.join(n)).collect()
        };
        let f = Files {
            iops: pick("iops"),
            bw: pick("bw"),
            lat: pick("lat"),
            clat: pick("clat"),
            hist: pick("clat_hist"),
        };
        if f.iops.is_empty() && f.bw.is_empty() {
            return Err(format!(
                "{}: no fio iops or bw logs (NAME_iops.N.log, NAME_bw.N.log) in it",
                dir.display()
            ));
        }
        Ok(f)
    }

    /// The files of job `i` of `n` (one job of several, without group_reporting).
    pub fn job(&self, i: usize, n: usize) -> Files {
        let one = |v: &Vec<PathBuf>| -> Vec<PathBuf> {
            if v.len() == n {
                v[i..=i].to_vec()
            } else {
                Vec::new()
            }
        };
        Files {
            iops: one(&self.iops),
            bw: one(&self.bw),
            lat: one(&self.lat),
            clat: one(&self.clat),
            hist: one(&self.hist),
        }
    }

    /// Every file that should be there and is not.
    pub fn missing(&self) -> Vec<&Path> {
        self.iops
            .iter()
            .chain(&self.bw)
            .chain(&self.lat)
            .chain(&self.clat)
            .chain(&self.hist)
            .filter(|p| !p.is_file())
            .map(|p| p.as_path())
            .collect()
    }
}

/// The most bytes of one fio log read: a week of 1 s rows is about 30 MB.
const MAX_LOG_BYTES: u64 = 1 << 30;

/// One log's text: a regular file only (a FIFO or a symlink to /dev/zero is refused at
/// once), bounded.
fn read_log(p: &Path) -> Result<String, String> {
    drivelab_trace::input::read_text(p, MAX_LOG_BYTES).map_err(|e| e.to_string())
}

/// Read and parse windowed logs.
pub fn read_rows(paths: &[PathBuf]) -> Result<Vec<Vec<Row>>, String> {
    paths
        .iter()
        .map(|p| {
            let t = read_log(p)?;
            parse_rows(&t).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// Read and parse histogram logs.
pub fn read_hist(paths: &[PathBuf]) -> Result<Vec<Vec<HistRow>>, String> {
    paths
        .iter()
        .map(|p| {
            let t = read_log(p)?;
            parse_hist(&t).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_beyond_2_64_ns_is_refused() {
        let e = parse_rows("1000, 5, 0, 4096\n18446744073709551615, 5, 0, 4096\n").unwrap_err();
        assert!(
            e.starts_with("line 2: the time 18446744073709551615 ms is beyond"),
            "{e}"
        );
        assert!(parse_rows("1764000000000, 5, 0, 4096\n").is_ok());
    }

    fn row(t: u64, c: &[(usize, u64)]) -> HistRow {
        let mut counts = vec![0; bins::NR];
        for &(i, n) in c {
            counts[i] = n;
        }
        HistRow {
            t_ms: t,
            ddir: 1,
            counts,
        }
    }

    #[test]
    fn client_mode_histograms_are_repaired() {
        // True per-window counts 5, 7, 4, 6 in one bin; the server sends C_k − s_{k−1}.
        let truth = [5u64, 7, 4, 6];
        let mut sent = Vec::new();
        let (mut cum, mut prev) = (0u64, 0u64);
        for (k, &t) in truth.iter().enumerate() {
            cum += t;
            let s = cum - prev;
            sent.push(row(1000 * (k as u64 + 1), &[(300, s)]));
            prev = s;
        }
        let mut final_counts = vec![0; bins::NR];
        final_counts[300] = 22 + 3; // plus an unlogged tail
        assert!(is_corrupted(&[&sent], &final_counts));
        let fixed = repair_chain(&sent, true).unwrap();
        let got: Vec<u64> = fixed.iter().map(|r| r.counts[300]).collect();
        assert_eq!(got, truth);
        let local: Vec<HistRow> = truth
            .iter()
            .enumerate()
            .map(|(k, &t)| row(1000 * (k as u64 + 1), &[(300, t)]))
            .collect();
        assert!(!is_corrupted(&[&local], &final_counts));
    }

    #[test]
    fn coarse_rows_parse_and_other_widths_are_refused_by_line() {
        let row = |n: usize| {
            let mut s = "1000, 0, 4096".to_string();
            for k in 0..n {
                s.push_str(&format!(", {}", k % 3));
            }
            s + "\n"
        };
        let r = parse_hist(&(row(464) + &row(464))).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].counts.len(), 464);
        let e = parse_hist(&row(1216)).unwrap_err();
        assert!(e.starts_with("line 1: 1219 columns, not time"), "{e}");
        let e = parse_hist(&(row(464) + &row(232))).unwrap_err();
        assert!(
            e.starts_with("line 2: 235 columns where the log's first row has 467"),
            "{e}"
        );
    }

    #[test]
    fn rows_land_in_the_window_they_close() {
        assert_eq!(window(1003, 0, 1000), Some(0));
        assert_eq!(window(2001, 0, 1000), Some(1));
        assert_eq!(window(3500, 0, 1000), Some(3));
        assert_eq!(window(400, 0, 1000), None);
        assert_eq!(start_of(3007, 1000, Some(5)), 7);
        assert_eq!(start_of(1005, 1000, None), 5);
        let r = parse_rows("1000, 300, 0, 0, 0\n1000, 100, 1, 0, 0\n").unwrap();
        assert_eq!(
            r[1],
            Row {
                t_ms: 1000,
                value: 100,
                ddir: 1
            }
        );
    }

    #[test]
    fn a_row_spans_from_the_previous_stamp_unless_after_a_gap() {
        let rows = parse_rows("250, 1, 0, 0\n527, 1, 0, 0\n1909, 1, 0, 0\n").unwrap();
        let s: Vec<(u64, u64)> = spans(&rows, 250).iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(s, [(0, 250), (250, 527), (1659, 1909)]);
        // The overlap with each window; the last window takes what lies past the grid.
        assert_eq!(overlaps(250, 527, 0, 250, 8), [(1, 250), (2, 27)]);
        assert_eq!(overlaps(1900, 2100, 0, 250, 8), [(7, 200)]);
        assert_eq!(overlaps(5, 5, 0, 250, 8), []);
    }
}
