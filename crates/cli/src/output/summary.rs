//! The short human summary of one run.

use std::fmt::Write as _;

use drivelab_engine::result::{DirTotals, RunResult, RunStatus};
use drivelab_engine::size::human_bytes;
use drivelab_engine::spec::Workload;
use drivelab_engine::target::TargetKind;

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

/// Render the summary (several lines, ending in a newline).
pub fn render(r: &RunResult) -> String {
    let m = &r.measured;
    let w = &r.config;
    let t = &r.target;
    let mut out = String::new();
    let bound = match (w.runtime_ns, w.io_size_bytes) {
        (Some(ns), _) => format!("{:.0} s", ns as f64 / 1e9),
        (None, Some(b)) => human_bytes(b),
        (None, None) => String::new(),
    };
    let what = match t.kind {
        TargetKind::File => format!(
            "file on {}, {}",
            t.filesystem.as_deref().unwrap_or("?"),
            human_bytes(t.capacity_bytes)
        ),
        TargetKind::BlockDevice => format!(
            "block device{}, {}",
            t.model
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default(),
            human_bytes(t.capacity_bytes)
        ),
        TargetKind::Null => "no I/O".into(),
        TargetKind::Simulated => format!("simulated, {}", human_bytes(t.capacity_bytes)),
    };
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
    dir_line("read", &m.totals.read, &mut out);
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
    for n in &m.notes {
        let _ = writeln!(out, "  note  {n}");
    }
    out
}
