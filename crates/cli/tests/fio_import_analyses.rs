//! `drivelab import fio` of logged runs: the consistency and fill analyses an import
//! computes become its headline metrics, by the names the consistency and seqfill
//! suites give theirs, so `compare`, `db` and `serve` see them. fio (Debian's) makes a
//! short real run with its logs; the long run is made from it by repeating its log rows
//! with shifted times (and its totals scaled to the longer run). Needs fio.

mod common;

use std::path::Path;

use common::{run_in, stderr};
use serde_json::Value;

/// Runs `job` (a job file) in `dir` with json+ output into `out`.
fn fio(dir: &Path, job: &str, out: &str) {
    common::fio_job(dir, job, "json+", out)
}

/// fio's log `p` made `n` rows long, a row each `step_ms` (fio's rows repeated in turn,
/// each stamped at the end of its window); `scale(i, value)` sets row i's value.
fn lengthen(p: &Path, n: u64, step_ms: u64, scale: impl Fn(u64, f64) -> f64) {
    let text = std::fs::read_to_string(p).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(", ").collect())
        .collect();
    if rows.is_empty() {
        return;
    }
    let mut out = String::new();
    for i in 0..n {
        let mut r = rows[(i as usize) % rows.len()].clone();
        let t = ((i + 1) * step_ms + 2).to_string();
        let v = scale(i, r[1].parse::<f64>().unwrap()).round().to_string();
        r[0] = &t;
        r[1] = &v;
        out += &r.join(", ");
        out.push('\n');
    }
    std::fs::write(p, out).unwrap();
}

/// The sum of the values of fio's log `p` (after [`lengthen`]).
fn log_sum(p: &Path) -> f64 {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter_map(|l| l.split(", ").nth(1)?.parse::<f64>().ok())
        .sum()
}

/// fio's result `p` as if its one job ran `ms` milliseconds and did `ios` I/Os of `bs`
/// bytes in direction `dir` (the totals its lengthened logs add up to: scaling the short
/// run's totals by time alone differs from the repeated rows by the short run's own
/// partial windows, and the import rightly refuses logs that are not the job's).
fn lengthen_result(p: &Path, dir: &str, ms: u64, ios: u64, bs: u64) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let job = &mut v["jobs"][0];
    job[dir]["total_ios"] = ios.into();
    job[dir]["io_bytes"] = (ios * bs).into();
    job[dir]["io_kbytes"] = (ios * bs / 1024).into();
    job[dir]["runtime"] = ms.into();
    job["job_runtime"] = ms.into();
    job["elapsed"] = (ms / 1000).into();
    std::fs::write(p, v.to_string()).unwrap();
}

fn imported(dir: &Path) -> Value {
    let o = run_in(dir, &["import", "fio", "res", "--out", "b"]);
    assert!(o.status.success(), "import: {}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(dir.join("b/run.json")).unwrap()).unwrap()
}

fn metric(doc: &Value, name: &str) -> Option<f64> {
    doc["summary"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .map(|m| m["value"].as_f64().unwrap())
}

/// A 600-s 4K random write with iops, bw and latency logs each second: the consistency
/// suite's headline metrics, valued from the analysis the bundle holds.
#[test]
fn a_long_logged_random_write_has_the_consistency_suites_metrics() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("res");
    std::fs::create_dir(&res).unwrap();
    fio(
        &res,
        "[global]\nioengine=psync\nfilename=data\nsize=16m\nbs=4k\ntime_based=1\n\
         runtime=2s\nlog_avg_msec=1000\n[rw]\nrw=randwrite\nwrite_iops_log=rw\n\
         write_bw_log=rw\nwrite_lat_log=rw\n",
        "rw.json",
    );
    for log in [
        "rw_iops.1.log",
        "rw_bw.1.log",
        "rw_lat.1.log",
        "rw_clat.1.log",
    ] {
        lengthen(&res.join(log), 600, 1000, |_, v| v);
    }
    // One-second windows of IOPS: each row's value is its window's I/Os.
    let ios = log_sum(&res.join("rw_iops.1.log")).round() as u64;
    lengthen_result(&res.join("rw.json"), "write", 600_000, ios, 4096);
    let doc = imported(d.path());
    let c = &doc["summary"]["analysis"]["series"][0]["consistency"];
    let w = c["scores"]["window_len_s"].as_u64().unwrap();
    assert_eq!(w, 400, "{c}");
    for (name, want) in [
        (
            format!("average IOPS (last {w} s)"),
            &c["scores"]["avg_iops"],
        ),
        (
            format!("average / standard deviation (last {w} s)"),
            &c["scores"]["avg_over_stddev"],
        ),
        (
            format!("minimum IOPS (last {w} s)"),
            &c["scores"]["min_iops"],
        ),
    ] {
        assert_eq!(metric(&doc, &name), want.as_f64(), "{name}");
    }
    let levels = c["levels"].as_array().unwrap().len() as f64;
    assert_eq!(metric(&doc, "performance levels"), Some(levels));
    let steady = c["steady"]["reached"].as_bool().unwrap();
    assert_eq!(
        metric(&doc, "PTS steady state reached"),
        Some(if steady { 1.0 } else { 0.0 })
    );
    assert_eq!(metric(&doc, "seconds with no completed I/O"), Some(0.0));
}

/// A sequential 128K write logged each 100 ms, its rate a quarter for 1.5 s in the
/// middle (a drop episode is a second or longer): the seqfill suite's metrics, one drop episode among them.
#[test]
fn a_logged_sequential_write_has_the_fill_suites_metrics() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("res");
    std::fs::create_dir(&res).unwrap();
    fio(
        &res,
        "[global]\nioengine=psync\nfilename=data\nsize=16m\nbs=128k\n[fill]\nrw=write\n\
         write_bw_log=fill\nlog_avg_msec=100\nrate=64m\n",
        "fill.json",
    );
    let drop = |i: u64, v: f64| if (20..35).contains(&i) { v / 4.0 } else { v };
    lengthen(&res.join("fill_bw.1.log"), 40, 100, drop);
    // 100 ms windows of KiB/s: a tenth of each row's value is its window's KiB.
    let kib = log_sum(&res.join("fill_bw.1.log")) / 10.0;
    let ios = (kib * 1024.0 / 131072.0).round() as u64;
    lengthen_result(&res.join("fill.json"), "write", 4000, ios, 131072);
    let doc = imported(d.path());
    let f = &doc["summary"]["analysis"]["series"][0]["fill"]["fill"];
    assert!(f["overall_avg_mbps"].as_f64().unwrap() > 0.0, "{f}");
    assert_eq!(
        metric(&doc, "overall average"),
        f["overall_avg_mbps"].as_f64()
    );
    assert_eq!(metric(&doc, "drop episodes"), Some(1.0), "{f}");
    assert_eq!(f["drop_count"], 1);
}

/// fio's iodepth sweep of 4K random reads (the null engine, one job, iodepth 1 to 32)
/// has the metric names a `run peak` of that workload has, so `compare --force` puts
/// the two knees on one row each (a fio import is not a peak run: without --force the
/// refusal says so).
#[test]
fn a_fio_iodepth_sweep_lines_up_with_a_peak_run_in_compare() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("res");
    std::fs::create_dir(&res).unwrap();
    for q in [1, 2, 4, 8, 16, 32] {
        fio(
            &res,
            &format!(
                "[global]\nioengine=null\nsize=16m\nrw=randread\nbs=4k\ntime_based=1\n\
                 runtime=1s\n[q{q}]\niodepth={q}\n"
            ),
            &format!("q{q}.json"),
        );
    }
    std::fs::remove_file(res.join("job.fio")).unwrap();
    let doc = imported(d.path());
    assert!(
        metric(&doc, "4K random read knee QD").is_some(),
        "{}",
        doc["summary"]
    );
    let p = d.path();
    let o = run_in(
        p,
        &[
            "run",
            "peak",
            "null",
            "--short",
            "--workloads",
            "4k-randread",
            "--max-qd",
            "32",
            "--no-db",
            "--out",
            "p",
        ],
    );
    assert!(o.status.success(), "peak: {}", stderr(&o));
    let o = run_in(p, &["compare", "p", "b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("another suite: fio vs peak"),
        "{}",
        stderr(&o)
    );
    let o = run_in(p, &["compare", "p", "b", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = common::stdout(&o);
    for name in ["4K random read knee QD", "4K random read at knee"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {table}"));
        assert!(!row.trim_end().ends_with(" -"), "a ratio: {row}");
    }
}
