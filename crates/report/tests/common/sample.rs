//! Synthetic, deterministic data shaped like drivelab results, expressed with
//! every chart kind the suites need. Shared by tests and examples.
#![allow(dead_code)]

use drivelab_report::{
    Axis, Chart, Column, Mark, Report, Row, Section, Series, Table, Tile, TileRow, TileTable,
};

/// Small deterministic PRNG (xorshift64*), uniform in [0, 1).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Drive names; the third has markup characters to exercise escaping.
pub fn drive_names(n: usize) -> Vec<String> {
    let base = [
        "Alpha 1TB NVMe",
        "Bravo 2TB SATA",
        "Charlie <QLC> & \"cache\"",
        "Delta 4TB",
        "Echo 512GB",
        "Foxtrot 8TB",
        "Golf 1TB",
        "Hotel 2TB",
        "India 960GB",
        "Juliet 3.84TB",
    ];
    (0..n)
        .map(|i| {
            if i < base.len() {
                base[i].to_string()
            } else {
                format!("Drive {i}")
            }
        })
        .collect()
}

/// Per-second IOPS of one drive: a burst, a drop to steady state, noise and stalls.
pub fn iops_trace(drive: usize, seconds: usize) -> (Vec<(f64, f64)>, Vec<f64>) {
    let mut rng = Rng::new(drive as u64 + 7);
    let burst = 300.0 + 120.0 * drive as f64;
    let steady = 40_000.0 + 15_000.0 * (drive % 4) as f64;
    let mut pts = Vec::with_capacity(seconds);
    let mut stalls = Vec::new();
    for t in 0..seconds {
        let ts = t as f64 + 1.0;
        let base = if ts < burst {
            380_000.0 - 20.0 * ts
        } else {
            steady
        };
        let mut v = base * (0.85 + 0.3 * rng.next());
        if rng.next() < 0.004 {
            v = 200.0 + 800.0 * rng.next();
            stalls.push(ts);
        }
        pts.push((ts, v));
    }
    (pts, stalls)
}

/// The four consistency charts (log, linear, zoom, histogram) for `groups` drives.
pub fn consistency_charts(names: &[String], seconds: usize) -> Vec<Chart> {
    let time = || Axis::linear("Time", "s");
    let iops = || Axis::log10("Throughput", "IOPS");
    let mut log = Chart::new(
        "consistency-log",
        "4K random write consistency",
        time(),
        iops(),
    )
    .subtitle("1 point per second, QD32, full-drive span")
    .note("Ticks along the bottom mark seconds with a stall (fewer than 1000 IOPS).");
    let mut lin = Chart::new(
        "consistency-linear",
        "4K random write consistency (linear scale)",
        time(),
        Axis::linear("Throughput", "IOPS"),
    );
    let window = (seconds as f64 * 0.5, seconds as f64);
    let mut zoom = Chart::new(
        "consistency-zoom",
        "Scoring window",
        time().range(Some(window.0 - seconds as f64 * 0.1), Some(window.1)),
        Axis::linear("Throughput", "IOPS").tight(),
    )
    .with_mark(Mark::XRange {
        x0: window.0,
        x1: window.1,
        label: Some("scoring window".into()),
        group: None,
    })
    .callout("Consistency score: 87.4 %")
    .callout("Steady-state mean: 52 310 IOPS");
    let mut hist = Chart::new(
        "consistency-hist",
        "Distribution of per-second IOPS in the scoring window",
        Axis::linear("Throughput", "IOPS"),
        Axis::linear("Seconds", "s"),
    );
    let bins = 40usize;
    let bin_w = 100_000.0 / bins as f64;
    for (i, name) in names.iter().enumerate() {
        let (pts, stalls) = iops_trace(i, seconds);
        log.series
            .push(Series::scatter(name.clone(), name.clone(), pts.clone()));
        log.marks.push(Mark::Ticks {
            xs: stalls,
            label: format!("{name}: stalls"),
            group: Some(name.clone()),
        });
        lin.series
            .push(Series::scatter(name.clone(), name.clone(), pts.clone()));
        let in_window: Vec<(f64, f64)> = pts
            .iter()
            .copied()
            .filter(|p| p.0 >= window.0 - seconds as f64 * 0.1)
            .collect();
        zoom.series
            .push(Series::scatter(name.clone(), name.clone(), in_window));
        let mut counts = vec![0.0; bins];
        for p in pts.iter().filter(|p| p.0 >= window.0) {
            let b = ((p.1 / bin_w) as usize).min(bins - 1);
            counts[b] += 1.0;
        }
        let bars = counts
            .iter()
            .enumerate()
            .map(|(b, c)| ((b as f64 + 0.5) * bin_w, *c))
            .collect();
        hist.series
            .push(Series::bars(name.clone(), name.clone(), bars).with_bar_width(bin_w));
    }
    vec![log, lin, zoom, hist]
}

/// A per-second latency band chart (p50 to p99) with the p99 line on a log axis.
pub fn latency_band(names: &[String], seconds: usize) -> Chart {
    let mut c = Chart::new(
        "consistency-latency",
        "Per-second latency: median to p99 band, p99 line",
        Axis::linear("Time", "s"),
        Axis::log10("Latency", "µs"),
    );
    for (i, name) in names.iter().enumerate() {
        let mut rng = Rng::new(100 + i as u64);
        let mut band = Vec::new();
        let mut p99 = Vec::new();
        for t in 0..seconds {
            let base = 80.0 * (1.0 + i as f64) * if t > 400 { 4.0 } else { 1.0 };
            let p50 = base * (0.9 + 0.2 * rng.next());
            let hi = p50 * (3.0 + 4.0 * rng.next());
            band.push((t as f64, p50, hi));
            p99.push((t as f64, hi));
        }
        c.series
            .push(Series::band(format!("{name} p50–p99"), name.clone(), band));
        c.series
            .push(Series::line(format!("{name} p99"), name.clone(), p99));
    }
    c
}

/// Throughput and tail latency against queue depth, the chosen point marked.
pub fn peak(names: &[String]) -> Chart {
    let mut c = Chart::new(
        "peak",
        "Random read: throughput and tail latency vs queue depth",
        Axis::log2("Queue depth", "outstanding I/Os"),
        Axis::linear("Throughput", "IOPS"),
    )
    .with_y2(Axis::log10("Latency", "µs"));
    for (i, name) in names.iter().enumerate() {
        let cap = 500_000.0 + 150_000.0 * i as f64;
        let mut thr = Vec::new();
        let mut p99 = Vec::new();
        let mut p9999 = Vec::new();
        for k in 0..=9 {
            let qd = 2f64.powi(k);
            let iops = cap * qd / (qd + 24.0);
            thr.push((qd, iops));
            let lat = qd / iops * 1e6;
            p99.push((qd, lat * 2.5));
            p9999.push((qd, lat * 9.0));
        }
        let sel = thr[5];
        c.series
            .push(Series::line(format!("{name} IOPS"), name.clone(), thr));
        c.series
            .push(Series::line(format!("{name} p99"), name.clone(), p99).on_y2());
        c.series
            .push(Series::line(format!("{name} p99.99"), name.clone(), p9999).on_y2());
        c.marks.push(Mark::Point {
            x: sel.0,
            y: sel.1,
            label: format!("QD{}: {:.0}k IOPS", sel.0, sel.1 / 1000.0),
            group: Some(name.clone()),
            on_y2: false,
        });
    }
    c
}

/// Sequential fill: MB/s against GB written, cache size marked, drops shaded, temperature on y2.
pub fn seqfill(names: &[String]) -> Chart {
    let mut c = Chart::new(
        "seqfill",
        "Sequential fill: write throughput vs data written",
        Axis::linear("Data written", "GB"),
        Axis::linear("Write throughput", "MB/s"),
    )
    .with_y2(Axis::linear("Temperature", "°C").tight());
    for (i, name) in names.iter().enumerate() {
        let mut rng = Rng::new(200 + i as u64);
        let cache = 80.0 + 60.0 * i as f64;
        let mut pts = Vec::new();
        let mut temp = Vec::new();
        for g in 0..=1000 {
            let gb = g as f64;
            let v = if gb < cache {
                5200.0 - 300.0 * i as f64
            } else {
                1500.0 + 300.0 * i as f64
            };
            let dip = if (600.0..640.0).contains(&gb) {
                0.3
            } else {
                1.0
            };
            pts.push((gb, v * dip * (0.95 + 0.1 * rng.next())));
            temp.push((gb, 38.0 + 25.0 * (1.0 - (-gb / 300.0).exp()) + i as f64));
        }
        c.series.push(Series::line(name.clone(), name.clone(), pts));
        c.series.push(
            Series::line(format!("{name} temperature"), name.clone(), temp)
                .on_y2()
                .dashed(drivelab_report::Dash::Dotted),
        );
        c.marks.push(Mark::Point {
            x: cache,
            y: 5200.0 - 300.0 * i as f64,
            label: format!("cache ≈ {cache:.0} GB"),
            group: Some(name.clone()),
            on_y2: false,
        });
    }
    c.marks.push(Mark::XRange {
        x0: 600.0,
        x1: 640.0,
        label: Some("drop".into()),
        group: None,
    });
    c
}

/// QD-profile lines per drive.
pub fn qd_profile(names: &[String]) -> Chart {
    let mut c = Chart::new(
        "qd-profile",
        "4K random read/write vs queue depth",
        Axis::log2("Queue depth", "outstanding I/Os"),
        Axis::linear("Throughput", "MB/s"),
    );
    for (i, name) in names.iter().enumerate() {
        let r: Vec<(f64, f64)> = (0..=7)
            .map(|k| {
                let qd = 2f64.powi(k);
                (qd, (2000.0 + 400.0 * i as f64) * qd / (qd + 8.0))
            })
            .collect();
        let w: Vec<(f64, f64)> = r.iter().map(|p| (p.0, p.1 * 0.7)).collect();
        c.series
            .push(Series::line(format!("{name} read"), name.clone(), r));
        c.series
            .push(Series::line(format!("{name} write"), name.clone(), w));
    }
    c
}

/// Mixed read/write ratio curves.
pub fn mixed(names: &[String]) -> Chart {
    let mut c = Chart::new(
        "mixed",
        "Mixed random I/O vs read share",
        Axis::linear("Read share", "%"),
        Axis::linear("Throughput", "MB/s"),
    );
    for (i, name) in names.iter().enumerate() {
        let pts = (0..=10)
            .map(|k| {
                let r = k as f64 * 10.0;
                (
                    r,
                    600.0 + 300.0 * i as f64 + 12.0 * (r - 50.0).powi(2) / 25.0,
                )
            })
            .collect();
        c.series.push(Series::line(name.clone(), name.clone(), pts));
    }
    c
}

/// Grouped bars on a category axis.
pub fn grouped_bars(names: &[String]) -> Chart {
    let cats: Vec<String> = ["4K RR QD1", "4K RW QD1", "4K RR QD32", "4K RW QD32"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut c = Chart::new(
        "workload-bars",
        "Throughput by workload",
        Axis::categories("Workload", cats.clone()),
        Axis::linear("Throughput", "MB/s"),
    );
    for (i, name) in names.iter().enumerate() {
        let pts = (0..cats.len())
            .map(|k| (k as f64, 80.0 + 50.0 * k as f64 * (1.0 + i as f64 * 0.4)))
            .collect();
        c.series.push(Series::bars(name.clone(), name.clone(), pts));
    }
    c
}

/// Latency exceedance (1 − CDF) curves from a log-spaced histogram.
pub fn exceedance(names: &[String]) -> Chart {
    let mut c = Chart::new(
        "exceedance",
        "Latency exceedance: share of I/Os slower than x",
        Axis::log10("Latency", "µs"),
        Axis::log10("Share of I/Os exceeding", "fraction").range(Some(1e-6), Some(1.0)),
    );
    for (i, name) in names.iter().enumerate() {
        let scale = 60.0 * (1.0 + i as f64);
        let pts = (0..60)
            .map(|k| {
                let lat = 10f64.powf(1.0 + k as f64 / 15.0);
                (lat, (-(lat / scale).powf(0.8)).exp().max(1e-7))
            })
            .collect();
        c.series.push(Series::line(name.clone(), name.clone(), pts));
    }
    c
}

/// A report with every chart kind, tiles and a table, for `n` drives.
pub fn full_report(n: usize, seconds: usize) -> Report {
    let names = drive_names(n);
    let mut quick =
        Section::new("Quick test").text("CrystalDiskMark-style summary, one table per drive.");
    for (i, name) in names.iter().enumerate() {
        let f = 1.0 + i as f64 * 0.25;
        let tile = |mbps: f64, bs: f64| Tile {
            mbps,
            iops: mbps * 1e6 / bs,
            latency_us: bs / mbps,
        };
        quick = quick.tiles(TileTable {
            title: name.clone(),
            group: Some(name.clone()),
            rows: vec![
                TileRow {
                    label: "SEQ1M Q8T1".into(),
                    read: tile(7012.4 / f, 1_048_576.0),
                    write: tile(5321.9 / f, 1_048_576.0),
                },
                TileRow {
                    label: "SEQ1M Q1T1".into(),
                    read: tile(4120.7 / f, 1_048_576.0),
                    write: tile(3880.2 / f, 1_048_576.0),
                },
                TileRow {
                    label: "RND4K Q32T16".into(),
                    read: tile(2950.3 / f, 4096.0),
                    write: tile(2610.8 / f, 4096.0),
                },
                TileRow {
                    label: "RND4K Q1T1".into(),
                    read: tile(78.45 / f, 4096.0),
                    write: tile(241.36 / f, 4096.0),
                },
            ],
        });
    }
    let mut consistency = Section::new("Consistency");
    for c in consistency_charts(&names, seconds) {
        consistency = consistency.chart(c);
    }
    consistency = consistency.chart(latency_band(&names, seconds));
    let table = Table {
        caption: "Scores".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Steady state", "IOPS"),
            Column::number("Consistency", "%"),
        ],
        rows: names
            .iter()
            .enumerate()
            .map(|(i, n)| Row {
                group: Some(n.clone()),
                cells: vec![
                    n.clone(),
                    drivelab_report::fmt_number(40_000.0 + 15_000.0 * (i % 4) as f64, 0),
                    format!("{:.1}", 80.0 + i as f64),
                ],
            })
            .collect(),
    };
    Report::new("drivelab sample report")
        .meta("Generated", "2026-01-01 12:00 UTC")
        .meta("Host", "test-host <lab>")
        .meta("drivelab", "0.1.0")
        .section(quick)
        .section(
            Section::new("Peak performance")
                .chart(peak(&names))
                .chart(qd_profile(&names))
                .chart(mixed(&names))
                .chart(grouped_bars(&names)),
        )
        .section(consistency.table(table))
        .section(Section::new("Sequential fill").chart(seqfill(&names)))
        .section(Section::new("Latency").chart(exceedance(&names)))
}
