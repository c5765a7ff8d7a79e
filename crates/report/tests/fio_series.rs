//! Imported fio results with per-window logs are drawn as native runs are: each series
//! over time with its stalls, long 4K random writes in the consistency section (logs at
//! 250 ms scored per second), a sequential write in the fill section. The results are
//! hand-made in fio 3.1's form (no bins, padded percentiles, option values as strings,
//! no `job_start`), their logs as fio writes them (one row per window, none for a
//! window without I/O).

use std::path::Path;

use drivelab_report::bundles::{bundle_report, DriveRun};
use drivelab_report::Mark;
use drivelab_suites::fio::import::{import_set, Body, FioAnalysis, Input, Options};

/// One job's result in fio 3.1's form: `rw` at `bs_k` KiB, `ios` I/Os in `runtime_ms`,
/// its logs under `prefix` every `log_ms`.
fn fio31(rw: &str, bs_k: u64, ios: u64, runtime_ms: u64, prefix: &str, log_ms: u64) -> String {
    let secs = runtime_ms as f64 / 1000.0;
    format!(
        r#"{{
  "fio version" : "fio-3.1",
  "timestamp" : 1600000400,
  "time" : "Sun Sep 13 12:33:20 2020",
  "global options" : {{ "filename" : "/srv/fio/test.bin", "ioengine" : "libaio", "direct" : "1",
    "rw" : "{rw}", "bs" : "{bs_k}k", "runtime" : "{rt}", "time_based" : "", "group_reporting" : "",
    "log_avg_msec" : "{log_ms}", "write_iops_log" : "{prefix}", "write_bw_log" : "{prefix}",
    "write_lat_log" : "{prefix}" }},
  "jobs" : [ {{
      "jobname" : "iotest", "groupid" : 0, "error" : 0, "eta" : 0, "elapsed" : {el},
      "job options" : {{ "iodepth" : "32", "numjobs" : "1" }},
      "read" : {{ "io_bytes" : 0, "io_kbytes" : 0, "bw" : 0, "iops" : 0.0, "runtime" : 0,
        "total_ios" : 0, "short_ios" : 0, "drop_ios" : 0,
        "slat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0 }},
        "clat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0,
          "percentile" : {{ "1.000000" : 0, "0.00" : 0 }} }},
        "lat_ns" : {{ "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0 }} }},
      "write" : {{
        "io_bytes" : {bytes}, "io_kbytes" : {kib}, "bw" : {kibs}, "iops" : {iops},
        "runtime" : {runtime_ms}, "total_ios" : {ios}, "short_ios" : 0, "drop_ios" : 0,
        "slat_ns" : {{ "min" : 1000, "max" : 9000, "mean" : 2000.0, "stddev" : 10.0 }},
        "clat_ns" : {{ "min" : 50000, "max" : 900000, "mean" : 95500.0, "stddev" : 100.0,
          "percentile" : {{ "1.000000" : 60000, "5.000000" : 70000, "10.000000" : 75000,
            "20.000000" : 80000, "30.000000" : 85000, "40.000000" : 90000,
            "50.000000" : 92000, "60.000000" : 95000, "70.000000" : 98000,
            "80.000000" : 101000, "90.000000" : 110000, "95.000000" : 120000,
            "99.000000" : 150000, "99.500000" : 170000, "99.900000" : 250000,
            "99.950000" : 300000, "99.990000" : 600000,
            "0.00" : 0, "0.00" : 0, "0.00" : 0 }} }},
        "lat_ns" : {{ "min" : 52000, "max" : 910000, "mean" : 97500.0, "stddev" : 100.0 }},
        "bw_min" : 1, "bw_max" : 2, "bw_agg" : 100.0, "bw_mean" : 1.0, "bw_dev" : 0.0,
        "bw_samples" : 120, "iops_min" : 1, "iops_max" : 2, "iops_mean" : 1.0,
        "iops_stddev" : 0.0, "iops_samples" : 120 }},
      "usr_cpu" : 5.0, "sys_cpu" : 10.0, "ctx" : 100, "majf" : 0, "minf" : 10
  }} ]
}}"#,
        rt = runtime_ms / 1000,
        el = runtime_ms / 1000 + 1,
        bytes = ios * bs_k * 1024,
        kib = ios * bs_k,
        kibs = (ios as f64 * bs_k as f64 / secs) as u64,
        iops = ios as f64 / secs,
    )
}

/// fio's logs of one job: a row at the end of each window with I/O (`rate(window)`
/// IOPS, 0 for none: no row), its bandwidth and the window's mean latency.
fn logs(dir: &Path, prefix: &str, bs_k: u64, log_ms: u64, windows: u64, rate: impl Fn(u64) -> u64) {
    let (mut iops, mut bw, mut lat) = (String::new(), String::new(), String::new());
    for w in 0..windows {
        let r = rate(w);
        if r == 0 {
            continue;
        }
        let t = (w + 1) * log_ms + 2;
        let b = bs_k * 1024;
        iops += &format!("{t}, {r}, 1, {b}, 0\n");
        bw += &format!("{t}, {}, 1, {b}, 0\n", r * bs_k);
        lat += &format!("{t}, {}, 1, {b}, 0\n", 90_000 + (w % 7) * 1000);
    }
    std::fs::write(dir.join(format!("{prefix}_iops.1.log")), iops).unwrap();
    std::fs::write(dir.join(format!("{prefix}_bw.1.log")), bw).unwrap();
    std::fs::write(dir.join(format!("{prefix}_clat.1.log")), lat).unwrap();
}

#[test]
fn imported_series_get_the_series_consistency_and_fill_charts() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // 320 s of 4K random writes at 250 ms: a 12 000 IOPS burst for 60 s, then 3 000,
    // and 3 s without a completed I/O at 200 s.
    let rate = |w: u64| match w * 250 {
        ms if ms < 60_000 => 12_000,
        ms if (200_000..203_000).contains(&ms) => 0,
        _ => 3_000,
    };
    let ios: u64 = (0..1280).map(|w| rate(w) / 4).sum();
    logs(p, "rw4k", 4, 250, 1280, rate);
    // 20 s of 128K sequential writes each second: 2 000 MB/s-ish, then a third of it.
    let fill = |w: u64| if w < 8 { 16_000 } else { 5_000 };
    let fill_ios: u64 = (0..20).map(fill).sum();
    logs(p, "seq", 128, 1000, 20, fill);
    let inputs = [
        (
            "rw4k.json",
            fio31("randwrite", 4, ios, 320_000, "/results/rw4k", 250),
        ),
        (
            "seq.json",
            fio31("write", 128, fill_ios, 20_000, "/results/seq", 1000),
        ),
    ]
    .map(|(name, text)| Input {
        body: Body::Text(text),
        source: name.into(),
        dir: Some(p.to_path_buf()),
    });
    let o = Options {
        drive: Some("SATA A"),
        ..Options::default()
    };
    let doc = import_set(&inputs, &o).unwrap();
    let a: FioAnalysis = doc.summary.as_ref().unwrap().analysis_as().unwrap();
    assert_eq!(a.series.len(), 2);
    let report = bundle_report(&[DriveRun::new(Some("SATA A".into()), doc)]);
    let ids: Vec<&str> = report.charts().iter().map(|c| c.id.as_str()).collect();
    for id in [
        "fio-series-iops",
        "fio-series-mbps",
        "fio-series-latency",
        "fio-consistency-log",
        "fio-consistency-linear",
        "fio-consistency-zoom",
        "fio-consistency-latency",
        "fio-consistency-histogram",
        "fio-seqfill",
    ] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    let chart = |id: &str| *report.charts().iter().find(|c| c.id == id).unwrap();
    // The series at fio's grain: 1280 quarter seconds, the stall's 12 windows ticked.
    let iops = chart("fio-series-iops");
    assert_eq!(iops.series.len(), 1);
    assert_eq!(iops.series[0].points.len(), 1280);
    assert!(iops.series[0]
        .name
        .starts_with("SATA A · randwrite 4K QD32"));
    let ticks: Vec<&Vec<f64>> = iops
        .marks
        .iter()
        .filter_map(|m| match m {
            Mark::Ticks { xs, .. } => Some(xs),
            _ => None,
        })
        .collect();
    assert_eq!(ticks.len(), 1);
    assert_eq!(ticks[0].len(), 12);
    assert_eq!(ticks[0][0], 200.0);
    // The consistency section scores seconds: 320 points, 3 000 IOPS after the burst,
    // the stall's three seconds ticked.
    let log = chart("fio-consistency-linear");
    assert_eq!(log.series[0].points.len(), 320);
    assert_eq!(log.series[0].points[100].1, 3_000.0);
    assert_eq!(log.series[0].points[10].1, 12_000.0);
    assert!(log
        .marks
        .iter()
        .any(|m| matches!(m, Mark::Ticks { xs, .. } if xs == &vec![200.0, 201.0, 202.0])));
    // fio's logs have each window's mean latency, not percentiles: drawn as the mean.
    let lat = chart("fio-consistency-latency");
    assert_eq!(lat.series.len(), 1);
    assert!(
        lat.series[0].name.ends_with(" mean"),
        "{}",
        lat.series[0].name
    );
    assert!(lat.subtitle.as_deref().unwrap().contains("mean latency"));
    // (Seconds without a completed I/O have no latency.)
    assert_eq!(lat.series[0].points.len(), 317);
    // The fill: MB/s against data written, one point per second.
    let fill_chart = chart("fio-seqfill");
    assert_eq!(fill_chart.series[0].points.len(), 20);
    assert!(fill_chart.series[0].name.contains("write 128K"));
    // Each section says its results are imported.
    let titles: Vec<&str> = report.sections.iter().map(|s| s.title.as_str()).collect();
    assert!(
        titles.contains(&"Imported fio results over time"),
        "{titles:?}"
    );
    assert!(titles
        .iter()
        .any(|t| t.starts_with("Consistency") && t.ends_with("imported fio results")));
    assert!(titles
        .iter()
        .any(|t| t.starts_with("Sequential fill") && t.ends_with("imported fio results")));
    report.render().unwrap();
}

/// Two sets of one drive, imported into two bundles with the same `--drive` (a random
/// read set and a sequential write set): one drive with two test sets, named by their
/// tests, never "SSD A #2", no "Not the same test" warning; the same with the reader's
/// `--label "SSD A"` twice.
#[test]
fn two_imported_sets_of_one_drive_are_one_drive() {
    let import = |name: &str, rw: &str, bs_k: u64| {
        let input = Input {
            body: Body::Text(fio31(rw, bs_k, 100_000, 20_000, "/nowhere/x", 1000)),
            source: name.into(),
            dir: None,
        };
        let o = Options {
            drive: Some("SSD A"),
            ..Options::default()
        };
        import_set(&[input], &o).unwrap()
    };
    let (a, b) = (
        import("randwrite.json", "randwrite", 4),
        import("seqwrite.json", "write", 128),
    );
    for labels in [(None, None), (Some("SSD A"), Some("SSD A"))] {
        let runs = [
            DriveRun::new(labels.0.map(String::from), a.clone()),
            DriveRun::new(labels.1.map(String::from), b.clone()),
        ];
        let report = bundle_report(&runs);
        let meta = |k: &str| report.meta.iter().find(|m| m.0 == k).unwrap().1.clone();
        assert_eq!(meta("Drives"), "1", "{labels:?}");
        assert_eq!(report.groups, ["SSD A"], "{labels:?}");
        let html = report.render().unwrap();
        assert!(!html.contains("SSD A #2"), "{labels:?}");
        assert!(!html.contains("Not the same test"), "{labels:?}");
        assert!(html.contains("SSD A · 4K random writes"), "{labels:?}");
        assert!(
            html.contains("SSD A · 128K sequential writes"),
            "{labels:?}"
        );
    }
}
