//! fio's per-I/O logs (`log_avg_msec=0`, fio's default: a row for every I/O, `time,
//! value, ddir, bs, prio`), put on windows while read as a stream: memory follows the
//! windows, never the rows (a per-I/O log of a fast drive runs to gigabytes). Each
//! window's I/Os are its rows, its bytes their `bs`, its mean the rows' values averaged;
//! the windows then become rows as fio's averaged logs have them (a row per window
//! with I/O, stamped at the window's end), so the rest of the import reads them alike.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::logs::{self, Row};

/// The most bytes of one per-I/O log read (a million I/Os a second for ten minutes is
/// about 15 GB): beyond it the log is refused, naming it.
const MAX_PER_IO_BYTES: u64 = 64 << 30;

/// The windows a per-I/O log is put on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// A window's length, ms.
    pub iv_ms: u64,
    /// The most windows the job's run can hold (its runtime's, and two): a log with
    /// rows in more is another run's, refused as soon as it is seen.
    pub max_windows: usize,
}

/// One direction's I/Os in one window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Acc {
    ios: u64,
    bytes: u64,
    sum: f64,
}

/// A per-I/O log on its windows: per direction (read, write), window → its I/Os.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Windows {
    dirs: [BTreeMap<u64, Acc>; 2],
    iv_ms: u64,
}

impl Windows {
    fn rows(&self, f: impl Fn(&Acc) -> f64) -> Vec<Row> {
        let mut out: Vec<Row> = self
            .dirs
            .iter()
            .enumerate()
            .flat_map(|(d, m)| m.iter().map(move |(&k, a)| (k, d, a)).collect::<Vec<_>>())
            .map(|(k, d, a)| Row {
                t_ms: (k + 1) * self.iv_ms,
                value: f(a).round() as u64,
                ddir: d as u8,
            })
            .collect();
        out.sort_by_key(|r| (r.t_ms, r.ddir));
        out
    }

    /// Each window's I/Os per second, as fio's iops log has them.
    pub fn iops(&self) -> Vec<Row> {
        let iv = self.iv_ms.max(1) as f64;
        self.rows(|a| a.ios as f64 * 1000.0 / iv)
    }

    /// Each window's KiB per second, as fio's bw log has them.
    pub fn bw(&self) -> Vec<Row> {
        let iv = self.iv_ms.max(1) as f64;
        self.rows(|a| a.bytes as f64 / 1024.0 * 1000.0 / iv)
    }

    /// Each window's mean value (a latency log's: ns), as fio's averaged logs have it.
    pub fn mean(&self) -> Vec<Row> {
        self.rows(|a| a.sum / a.ios.max(1) as f64)
    }
}

/// Read the per-I/O log at `p` onto `grid`'s windows (time ms since the job's start, or
/// since 1970 with `log_unix_epoch=1`: window k holds `[k·iv, (k+1)·iv)`). Errors name
/// the file and the line.
pub fn read(p: &Path, grid: Grid) -> Result<Windows, String> {
    let f = drivelab_trace::input::open_regular(p).map_err(|e| e.to_string())?;
    aggregate(f.take(MAX_PER_IO_BYTES + 1), grid).map_err(|e| format!("{}: {e}", p.display()))
}

fn aggregate(r: impl Read, grid: Grid) -> Result<Windows, String> {
    let iv = grid.iv_ms.max(1);
    let mut w = Windows {
        dirs: Default::default(),
        iv_ms: iv,
    };
    let mut r = BufReader::new(r);
    let mut line = String::new();
    let (mut no, mut read) = (0usize, 0u64);
    let mut first: Option<u64> = None;
    loop {
        line.clear();
        let n = r.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        no += 1;
        read += n as u64;
        if read > MAX_PER_IO_BYTES {
            return Err(format!(
                "holds more than {MAX_PER_IO_BYTES} bytes: not one fio job's per-I/O log"
            ));
        }
        if line.trim().is_empty() {
            continue;
        }
        let (t, value, ddir, bs) = fields(&line, no)?;
        let d = match ddir {
            0 | 1 => ddir as usize,
            // Trims and syncs are not reads or writes (drivelab refuses trim results).
            _ => continue,
        };
        let k = t / iv;
        let lo = *first.get_or_insert(k);
        if k.abs_diff(lo) >= grid.max_windows as u64 {
            return Err(format!(
                "line {no}: an I/O at {t} ms, {} s from the log's first: the job ran less, these are not its logs",
                k.abs_diff(lo) * iv / 1000
            ));
        }
        let a = w.dirs[d].entry(k).or_default();
        a.ios += 1;
        a.bytes = a.bytes.saturating_add(bs);
        a.sum += value as f64;
    }
    Ok(w)
}

/// A row's time (ms), value, ddir and block size (read as [`logs::parse_rows`] reads
/// them).
fn fields(line: &str, no: usize) -> Result<(u64, u64, u64, u64), String> {
    let f: Vec<&str> = line.splitn(5, ',').collect();
    if f.len() < 4 {
        return Err(format!("line {no}: not 'time, value, ddir, bs, …'"));
    }
    Ok((
        logs::time_ms(f[0], no)?,
        logs::num(f[1], "value", no)?,
        logs::num(f[2], "ddir", no)?,
        logs::num(f[3], "bs", no)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: Grid = Grid {
        iv_ms: 1000,
        max_windows: 10,
    };

    #[test]
    fn rows_become_windows_of_ios_bytes_and_means() {
        let log = "0, 100, 0, 4096, 0\n999, 300, 0, 4096, 0\n1000, 50, 1, 8192, 0\n\
                   2500, 10, 0, 4096, 0\n2600, 5, 2, 4096, 0\n";
        let w = aggregate(log.as_bytes(), GRID).unwrap();
        let t = |v: Vec<Row>| -> Vec<(u64, u64, u8)> {
            v.iter().map(|r| (r.t_ms, r.value, r.ddir)).collect()
        };
        assert_eq!(t(w.iops()), [(1000, 2, 0), (2000, 1, 1), (3000, 1, 0)]);
        assert_eq!(t(w.bw()), [(1000, 8, 0), (2000, 8, 1), (3000, 4, 0)]);
        assert_eq!(t(w.mean()), [(1000, 200, 0), (2000, 50, 1), (3000, 10, 0)]);
    }

    #[test]
    fn a_row_far_past_the_run_or_a_bad_field_is_refused_by_line() {
        let e = aggregate("0, 1, 0, 4096\n20000, 1, 0, 4096\n".as_bytes(), GRID).unwrap_err();
        assert!(
            e.starts_with("line 2: an I/O at 20000 ms, 20 s from"),
            "{e}"
        );
        let e = aggregate("0, 1, 0\n".as_bytes(), GRID).unwrap_err();
        assert_eq!(e, "line 1: not 'time, value, ddir, bs, …'");
        let e = aggregate("0, x, 0, 1\n".as_bytes(), GRID).unwrap_err();
        assert_eq!(e, "line 1: value 'x' is not a whole number");
    }
}
