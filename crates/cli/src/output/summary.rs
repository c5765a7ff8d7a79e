//! The short human summary of one run.

use std::fmt::Write as _;

use drivelab_engine::result::{DirTotals, Measured, RunResult, RunStatus};
use drivelab_engine::size::human_bytes;
use drivelab_engine::spec::Workload;
use drivelab_engine::target::TargetKind;
use drivelab_engine::verify::VerifyResult;

/// A latency in the unit that reads best.
pub fn lat(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn bs_text(w: &Workload) -> String {
    if w.bs.len() == 1 {
        human_bytes(w.bs[0].bytes as u64)
    } else {
        w.bs.iter()
            .map(|b| format!("{}/{}%", human_bytes(b.bytes as u64), b.percent))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn dir_line(name: &str, d: &DirTotals, out: &mut String) {
    if d.ops == 0 {
        return;
    }
    let l = &d.latency;
    let p = |x: f64| l.at(x).map_or("-".into(), |v| lat(v as f64));
    let _ = writeln!(
        out,
        "  {name:<5} {:>11.0} IOPS  {:>9.1} MB/s ({:.1} MiB/s)  lat mean {}  p50 {}  p99 {}  p99.99 {}  max {}",
        d.ops_per_s,
        d.mbps,
        d.mibps,
        l.mean_ns.map_or("-".into(), lat),
        p(50.0),
        p(99.0),
        p(99.99),
        l.max_ns.map_or("-".into(), |v| lat(v as f64)),
    );
}

/// Seconds as a person reads them: "1.23 ms", "0.3 s", "2.5 s", "30 s", "3600 s".
fn seconds(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 0.01 {
        let t = format!("{:.2}", s * 1e3);
        format!("{} ms", t.trim_end_matches('0').trim_end_matches('.'))
    } else if s < 10.0 {
        let t = format!("{s:.2}");
        format!("{} s", t.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{s:.0} s")
    }
}

/// Render the summary (several lines, ending in a newline).
pub fn render(r: &RunResult) -> String {
    let m = &r.measured;
    let w = &r.config;
    let t = &r.target;
    let mut out = String::new();
    let mut bound = match (w.runtime_ns, w.io_size_bytes) {
        (Some(ns), _) => seconds(ns),
        (None, Some(b)) => human_bytes(b),
        (None, None) => String::new(),
    };
    // A run that stopped early says how much of it was measured.
    if m.status != RunStatus::Complete {
        bound = format!("{bound} (stopped after {})", seconds(m.totals.elapsed_ns));
    }
    let what = target_description(t);
    let _ = writeln!(
        out,
        "{} {}, QD{} ({} job{} × iodepth {}, {}){}, {bound} on {} ({what})",
        w.rw.name(),
        bs_text(w),
        w.queue_depth(),
        w.numjobs,
        if w.numjobs == 1 { "" } else { "s" },
        w.iodepth,
        w.ioengine.name(),
        if w.direct { ", direct" } else { ", buffered" },
        t.path,
    );
    read_lines(m, &mut out);
    dir_line("write", &m.totals.write, &mut out);
    let c = &m.totals.cpu;
    let _ = writeln!(
        out,
        "  cpu   {:.2} s user, {:.2} s sys{}; {:.2} in flight on average",
        c.user_s,
        c.sys_s,
        c.cpu_s_per_million_io
            .map(|v| format!(" = {v:.2} s per million I/Os"))
            .unwrap_or_default(),
        m.totals.avg_inflight
    );
    telemetry_lines(m, &mut out);
    if m.totals.error_count > 0 {
        let _ = writeln!(out, "  errors {}", m.totals.error_count);
    }
    match m.status {
        RunStatus::Complete => {}
        RunStatus::Interrupted => out.push_str("  status interrupted: partial result\n"),
        RunStatus::Failed => {
            let _ = writeln!(
                out,
                "  status failed: {}",
                m.failure.as_deref().unwrap_or("see errors")
            );
        }
    }
    if let Some(line) = m.verify.as_ref().and_then(|v| verified_line(v, w)) {
        let _ = writeln!(out, "  {line}");
    }
    for n in &m.notes {
        let _ = writeln!(out, "  note  {n}");
    }
    out
}

/// "verified N blocks (X MiB): all as written" for a verify pass that found every block
/// as written (a failed one is the run's failure line).
pub fn verified_line(v: &VerifyResult, w: &Workload) -> Option<String> {
    let blocks = v.blocks_checked.filter(|_| v.passed())?;
    let bs = w.bs.first().map_or(0, |b| b.bytes as u64);
    Some(format!(
        "verified {blocks} blocks ({}): all as written",
        human_bytes(blocks * bs)
    ))
}

/// Reads summed over some of a run's intervals (the series keeps a mean and a maximum
/// latency per interval, so those two are exact; percentiles are not kept per part).
#[derive(Default)]
struct Reads {
    ops: u64,
    bytes: u64,
    lat_ns_sum: f64,
    lat_max_ns: Option<u64>,
}

impl Reads {
    fn of(m: &Measured, part: impl Fn(u64) -> bool) -> Reads {
        let mut r = Reads::default();
        for rec in m.series.records.iter().filter(|x| !x.ramp && part(x.index)) {
            let d = &rec.read;
            r.ops += d.ops;
            r.bytes += d.bytes;
            r.lat_ns_sum += d.lat_mean_ns.unwrap_or(0.0) * d.ops as f64;
            r.lat_max_ns = r.lat_max_ns.max(d.lat_max_ns);
        }
        r
    }

    fn line(&self, name: &str, ns: u64, out: &mut String) {
        if self.ops == 0 {
            return;
        }
        let s = ns.max(1) as f64 / 1e9;
        let _ = writeln!(
            out,
            "  {name:<5} {:>11.0} IOPS  {:>9.1} MB/s ({:.1} MiB/s)  lat mean {}  max {}",
            self.ops as f64 / s,
            self.bytes as f64 / s / 1e6,
            self.bytes as f64 / s / (1u64 << 20) as f64,
            lat(self.lat_ns_sum / self.ops as f64),
            self.lat_max_ns.map_or("-".into(), |v| lat(v as f64)),
        );
    }
}

/// The read line, the workload's alone; a verify pass's reads (which the totals count
/// with the workload's) on their own line, "verify read".
fn read_lines(m: &Measured, out: &mut String) {
    let pass = m
        .verify
        .as_ref()
        .and_then(|v| Some((v.pass_first_index?, v.pass_ns?)));
    let Some((first, pass_ns)) = pass else {
        dir_line("read", &m.totals.read, out);
        return;
    };
    let verify = Reads::of(m, |i| i >= first);
    if verify.ops == m.totals.read.ops {
        // The workload did not read: the read totals are the pass's (over its time),
        // histogram and all.
        dir_line("verify read", &m.totals.read, out);
    } else {
        Reads::of(m, |i| i < first).line("read", m.totals.elapsed_ns, out);
        verify.line("verify read", pass_ns, out);
    }
}

/// The drive's temperature and power over the run, when a sensor read them.
fn telemetry_lines(m: &drivelab_engine::result::Measured, out: &mut String) {
    let t = drivelab_suites::records::telemetry_of(m);
    let f = |v: Option<f64>, d: usize| v.map_or("-".into(), |x| format!("{x:.d$}"));
    if let Some(src) = &t.temperature_source {
        let throttled = t
            .throttled_s
            .map(|s| format!(", throttled {s:.0} s"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  temp  {} → {} °C, max {}{throttled} ({src})",
            f(t.temperature_start_celsius, 1),
            f(t.temperature_end_celsius, 1),
            f(t.temperature_max_celsius, 1),
        );
    }
    if let (Some(src), Some(mean)) = (&t.power_source, t.power_mean_w) {
        let _ = writeln!(
            out,
            "  power {mean:.2} W mean ({}–{} W), {} kIOPS/W, {} MB/s/W ({src})",
            f(t.power_min_w, 2),
            f(t.power_max_w, 2),
            f(t.kiops_per_w, 2),
            f(t.mbps_per_w, 1),
        );
    }
}

/// What a target is, in a few words: "file on ext4, 1 GiB", "block device Samsung
/// SSD 980, 1 TB", "simulated, 512 GiB", "no I/O".
pub fn target_description(t: &drivelab_engine::target::TargetInfo) -> String {
    let size = || {
        t.capacity_bytes
            .map_or_else(|| "capacity unknown".to_string(), human_bytes)
    };
    match t.kind {
        TargetKind::File => format!(
            "file on {}, {}",
            t.filesystem.as_deref().unwrap_or("?"),
            size()
        ),
        TargetKind::BlockDevice => format!(
            "block device{}, {}",
            t.model
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default(),
            size()
        ),
        TargetKind::Null => "no I/O".into(),
        TargetKind::Simulated => format!("simulated, {}", size()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_keep_their_fractions() {
        assert_eq!(super::seconds(300_000_000), "0.3 s");
        assert_eq!(super::seconds(2_500_000_000), "2.5 s");
        assert_eq!(super::seconds(5_000_000_000), "5 s");
        assert_eq!(super::seconds(30_000_000_000), "30 s");
        assert_eq!(super::seconds(1_234_567), "1.23 ms");
    }
}
