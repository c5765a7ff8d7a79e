//! The interval series as CSV, one row per interval, units in the column names.

use std::fmt::Write as _;

use drivelab_engine::result::Series;
use drivelab_engine::series::IntervalDir;

const DIR_COLS: [&str; 9] = [
    "ops",
    "bytes",
    "ops_per_s",
    "mbps",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p9999_ns",
    "lat_max_ns",
];

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn dir_cells(d: &IntervalDir, out: &mut String) {
    let _ = write!(
        out,
        ",{},{},{:.3},{:.6},{},{},{},{},{}",
        d.ops,
        d.bytes,
        d.ops_per_s,
        d.bytes_per_s / 1e6,
        opt(d.lat_mean_ns.map(|v| format!("{v:.1}"))),
        opt(d.lat_p50_ns),
        opt(d.lat_p99_ns),
        opt(d.lat_p9999_ns),
        opt(d.lat_max_ns)
    );
}

/// Nanoseconds as seconds with all nine decimals: every row's times exactly as in the
/// JSON series (ops / duration_s gives the row's ops_per_s for any interval width).
fn exact_s(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// How every series CSV drivelab writes starts (its first columns, then a comma).
pub const HEADER_START: &str = "index,start_s,duration_s,ramp";

/// Render the series.
pub fn render(series: &Series) -> String {
    let mut out = String::from(HEADER_START);
    for dir in ["read", "write", "all"] {
        for c in DIR_COLS {
            let _ = write!(out, ",{dir}_{c}");
        }
    }
    out.push_str(",cum_write_bytes\n");
    for r in &series.records {
        let _ = write!(
            out,
            "{},{},{},{}",
            r.index,
            exact_s(r.start_ns),
            exact_s(r.duration_ns),
            r.ramp as u8
        );
        dir_cells(&r.read, &mut out);
        dir_cells(&r.write, &mut out);
        dir_cells(&r.all, &mut out);
        let _ = writeln!(out, ",{}", r.cum_write_bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_keep_every_nanosecond() {
        assert_eq!(super::exact_s(15_500_000), "0.015500000");
        assert_eq!(super::exact_s(3_000_000_230), "3.000000230");
        assert_eq!(super::exact_s(0), "0.000000000");
    }
}
