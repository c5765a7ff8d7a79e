//! `drivelab trace info TRACE [--json]`.

use std::path::PathBuf;

use clap::Args;
use drivelab_trace::native::Reader;
use drivelab_trace::stats::{Stats, StatsBuilder};
use drivelab_trace::{Header, Totals};
use serde::Serialize;

use super::{bytes_text, trace_fail};
use crate::fail::Fail;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A drivelab trace (from `drivelab trace import` or `drivelab trace record`).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Info<'a> {
    trace: String,
    header: &'a Header,
    totals: &'a Totals,
    #[serde(flatten)]
    stats: &'a Stats,
}

pub fn run(a: InfoArgs) -> Result<i32, Fail> {
    let what = format!("TRACE {}", a.trace.display());
    let f = drivelab_trace::input::open_regular(&a.trace)
        .map_err(|e| Fail::usage(format!("TRACE {e}")))?;
    let mut reader = Reader::new(std::io::BufReader::with_capacity(1 << 16, f))
        .map_err(|e| trace_fail(&what, e))?;
    let mut b = StatsBuilder::default();
    for r in reader.by_ref() {
        b.add(&r.map_err(|e| trace_fail(&what, e))?);
    }
    let totals = *reader
        .trailer()
        .expect("a reader that ended cleanly has its trailer");
    let stats = b.finish(|pid| reader.process_name(pid).map(str::to_string));
    let info = Info {
        trace: a.trace.display().to_string(),
        header: reader.header(),
        totals: &totals,
        stats: &stats,
    };
    if a.json {
        let text = serde_json::to_string_pretty(&info).map_err(|e| Fail::failed(e.to_string()))?;
        crate::output::stdout::say_line(&text)?;
    } else {
        crate::output::stdout::say(&text(&info))?;
    }
    Ok(0)
}

fn text(i: &Info) -> String {
    let s = i.stats;
    let h = i.header;
    let mut t = format!("trace        {}\n", i.trace);
    t += &format!(
        "source       {}{}\n",
        h.source_format,
        h.source_path
            .as_ref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default()
    );
    if let Some(b) = h.device_size_bytes {
        t += &format!("device size  {} ({b} bytes)\n", bytes_text(b));
    }
    for v in &h.volumes {
        t += &format!(
            "volume       {} at byte {} ({} long)\n",
            drivelab_engine::text::printable(&v.volume),
            v.offset_bytes,
            bytes_text(v.extent_bytes)
        );
    }
    if let Some(ns) = h.start_unix_ns {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
        t += &format!(
            "started      {} UTC\n",
            humantime::format_rfc3339_seconds(at)
                .to_string()
                .trim_end_matches('Z')
                .replace('T', " ")
        );
    }
    let secs = s.duration_ns as f64 / 1e9;
    t += &format!("records      {} over {secs:.3} s", s.records);
    if secs > 0.0 {
        t += &format!(" ({:.0} I/Os per second)", s.records as f64 / secs);
    }
    t += "\n";
    for (name, c) in [
        ("reads", s.read),
        ("writes", s.write),
        ("discards", s.discard),
    ] {
        t += &format!("{name:<12} {} ({})\n", c.count, bytes_text(c.bytes));
    }
    t += &format!(
        "flushes      {}\nFUA writes   {}\n",
        s.flush.count, s.fua_writes
    );
    if let (Some(c), Some(b)) = (s.read_share_of_ios_percent, s.read_share_of_bytes_percent) {
        t += &format!("read share   {c:.1}% of reads and writes, {b:.1}% of their bytes\n");
    }
    if let (Some(lo), Some(hi)) = (s.lowest_offset_bytes, s.highest_end_bytes) {
        t += &format!("span         {} to {}\n", bytes_text(lo), bytes_text(hi));
    }
    t += "sizes       ";
    for c in &s.size_distribution {
        t += &format!(" ≤{}: {}", bytes_text(c.max_bytes), c.count);
    }
    t += "\n";
    t += &match s.max_outstanding {
        Some(n) => format!("outstanding  at most {n} at once\n"),
        None => format!(
            "outstanding  unknown ({} of {} records have a service time)\n",
            s.with_service_time, s.records
        ),
    };
    if !s.top_processes.is_empty() {
        t += "processes   ";
        for p in &s.top_processes {
            t += &format!(
                " {}[{}]: {}",
                drivelab_engine::text::shortened(p.name.as_deref().unwrap_or("?")),
                p.pid,
                p.ios
            );
        }
        t += "\n";
    }
    for n in &h.notes {
        // A trace's own text: one line each, whatever bytes it holds.
        let n = drivelab_engine::text::printable(n);
        t += &format!("note         {n}\n");
    }
    t
}
