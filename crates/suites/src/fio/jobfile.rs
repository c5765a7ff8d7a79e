//! A drivelab step as a fio job file: the resolved workload in fio's own option names, so
//! that a user can run a suite's steps with plain fio, and so that drivelab can run them
//! through fio (`--engine fio`, fleet runs over `fio --client`).
//!
//! What fio cannot do exactly the way drivelab does is said in a comment of the file:
//! IOMeter's repeating bytes (fio repeats one pattern), drivelab's discard before a
//! preconditioning pass (fio's files have no TRIM), a 64-bit seed (fio takes 63 bits).

use std::fmt::Write as _;

use drivelab_engine::spec::{DataPattern, Distribution, IoEngine, RwMode, Workload};

use crate::plan::{Action, PlannedStep};

/// Where fio's per-second logs go and which are written.
#[derive(Debug, Clone)]
pub struct Logs {
    /// Log file prefix (fio appends `_iops.N.log`, …); absolute for client/server runs,
    /// where it is a path on the controller.
    pub prefix: String,
    /// Also the clat histogram log (`write_hist_log`, 1 s).
    pub hist: bool,
}

/// Everything a job file needs beside the step.
#[derive(Debug, Clone)]
pub struct JobOptions<'a> {
    /// The file or block device fio opens.
    pub filename: &'a str,
    /// Per-second logs, if wanted.
    pub logs: Option<Logs>,
    /// First comment lines (what made the file and how to run it).
    pub header: Vec<String>,
}

/// fio's `rw` for a drivelab mode.
fn rw_name(rw: RwMode) -> &'static str {
    match rw {
        RwMode::Read => "read",
        RwMode::Write => "write",
        RwMode::RandRead => "randread",
        RwMode::RandWrite => "randwrite",
        RwMode::Rw => "rw",
        RwMode::RandRw => "randrw",
    }
}

/// fio's `ioengine` for a drivelab engine; None for the simulator (fio has no such
/// device).
pub fn engine_name(e: IoEngine) -> Option<&'static str> {
    match e {
        IoEngine::Sync => Some("psync"),
        IoEngine::IoUring => Some("io_uring"),
        IoEngine::Null => Some("null"),
        IoEngine::Libaio => Some("libaio"),
        IoEngine::Sim => None,
    }
}

/// A fio job name from a step id: letters, digits, `-` and `_` only.
pub fn job_name(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        "step".into()
    } else {
        s
    }
}

/// The longest value drivelab writes into a job file: fio reads a line of at most 8 192
/// bytes (`OPT_LEN_MAX`), option name included.
const MAX_VALUE_BYTES: usize = 4096;

/// Whether fio's job file parser reads `value` back exactly as drivelab wrote it, as
/// fio's `init.c`, `parse.c` and `options.c` treat a line: a newline or carriage return
/// ends it (and may start an option or a `[section]` of its own), `;` and `#` anywhere
/// cut the rest off as a comment, `${NAME}` is replaced by an environment variable and
/// `$pagesize`, `$mb_memory`, `$ncpus` by numbers (then handed to arithmetic), other
/// control bytes and blanks at either end are stripped, and a line is at most 8 192
/// bytes. `what` names the option the value came from (`TARGET`, `--out`); the error is
/// one line. `[` and `]` are refused too: fio's sections are named with them.
pub fn check_value(what: &str, value: &str) -> Result<(), String> {
    let bad = value
        .chars()
        .find(|&c| c.is_control() || matches!(c, ';' | '#' | '$' | '[' | ']' | '\\'));
    let why = if let Some(c) = bad {
        let shown = match c {
            '\n' => "a newline".to_string(),
            '\r' => "a carriage return".to_string(),
            c if c.is_control() => format!("the control byte {:?}", c),
            c => format!("'{c}'"),
        };
        format!("holds {shown}, which fio's job file parser does not read as part of a value")
    } else if value.trim() != value {
        "begins or ends with a blank, which fio strips".to_string()
    } else if value.len() > MAX_VALUE_BYTES {
        format!(
            "is {} bytes long, more than the {MAX_VALUE_BYTES} drivelab writes into a fio job file",
            value.len()
        )
    } else {
        return Ok(());
    };
    Err(format!(
        "{what}: {} {why}; name a path of letters, digits and / . _ - : , + = @ % ~ and spaces inside it for fio",
        drivelab_engine::text::quoted(value)
    ))
}

/// A comment line for the job file: one line, whatever it quotes.
fn check_comment(text: &str) -> Result<(), String> {
    match text.chars().find(|c| c.is_control()) {
        Some(_) => Err(format!(
            "a fio job file comment cannot hold a control byte: {}",
            drivelab_engine::text::quoted(text)
        )),
        None => Ok(()),
    }
}

/// Milliseconds for a fio time option (`300ms`); fio's finest unit that every time
/// option takes. Rounded up so that a step never runs shorter than drivelab's.
fn ms(ns: u64) -> String {
    format!("{}ms", ns.div_ceil(1_000_000).max(1))
}

/// Render one step as a fio job file (a `[global]` section and one job).
pub fn render(step: &PlannedStep, o: &JobOptions<'_>) -> Result<String, String> {
    let w = &step.workload;
    let engine = engine_name(w.ioengine).ok_or_else(|| {
        format!(
            "step '{}' runs on a simulated device, which fio cannot run",
            step.name
        )
    })?;
    if w.verify {
        // Refused before anything is made (the cli); never dropped from a job file.
        return Err(format!(
            "step '{}' checks every block it writes (--verify), which runs on drivelab's own engine only",
            step.name
        ));
    }
    check_value("TARGET", o.filename)?;
    if let Some(l) = &o.logs {
        check_value("the fio log directory", &l.prefix)?;
    }
    for c in o.header.iter().chain([&step.id, &step.name]) {
        check_comment(c)?;
    }
    let mut f = String::new();
    for h in &o.header {
        let _ = writeln!(f, "; {h}");
    }
    let _ = writeln!(f, "; step: {} ({})", step.id, step.name);
    notes(&mut f, step);
    f.push_str("[global]\n");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(f, "{k}={v}");
    };
    // fio splits a filename list at ':'; one in a path is escaped.
    kv("filename", o.filename.replace(':', "\\:"));
    kv("ioengine", engine.into());
    kv("direct", u8::from(w.direct).to_string());
    kv("rw", rw_name(w.rw).into());
    if matches!(w.rw, RwMode::Rw | RwMode::RandRw) {
        kv("rwmixread", w.rwmixread.to_string());
    }
    block_sizes(&mut kv, w);
    kv("iodepth", w.iodepth.to_string());
    kv("numjobs", w.numjobs.to_string());
    span(&mut kv, w);
    bound(&mut kv, w);
    randomness(&mut kv, w);
    content(&mut kv, w.data);
    kv("invalidate", u8::from(w.invalidate).to_string());
    if w.end_fsync {
        kv("end_fsync", "1".into());
    }
    if w.continue_on_error {
        kv("continue_on_error", "io".into());
    }
    if step.idle_before_ns > 0 {
        kv("startdelay", ms(step.idle_before_ns));
    }
    // Latency from submission, as drivelab measures it, and completion latency beside it.
    kv("lat_percentiles", "1".into());
    kv("clat_percentiles", "1".into());
    kv("group_reporting", "1".into());
    if let Some(l) = &o.logs {
        kv("log_avg_msec", log_msec(w).to_string());
        kv("log_unix_epoch", "1".into());
        kv("per_job_logs", "1".into());
        for k in ["write_iops_log", "write_bw_log", "write_lat_log"] {
            kv(k, l.prefix.clone());
        }
        if l.hist {
            // On the series' own windows: each histogram row is then one window's.
            kv("log_hist_msec", log_msec(w).to_string());
            kv("write_hist_log", l.prefix.clone());
        }
    }
    if w.ioengine == IoEngine::IoUring {
        // Engine options: only valid after ioengine=io_uring.
        kv("fixedbufs", u8::from(w.fixedbufs).to_string());
        kv("registerfiles", u8::from(w.registerfiles).to_string());
        if w.iodepth_batch_submit > 0 {
            kv("iodepth_batch_submit", w.iodepth_batch_submit.to_string());
        }
    }
    let _ = writeln!(f, "[{}]", job_name(&step.id));
    Ok(f)
}

/// Comments on what fio will do differently.
fn notes(f: &mut String, step: &PlannedStep) {
    let w = &step.workload;
    if let Action::Precondition {
        also_discard: Some((off, len)),
    } = step.action
    {
        let _ = writeln!(
            f,
            "; drivelab first discards {len} bytes at offset {off} (over-provisioning); with fio run `blkdiscard -o {off} -l {len} DEVICE` before this job"
        );
    }
    if w.data == DataPattern::Repeat {
        f.push_str("; drivelab writes IOMeter's repeating bytes (one byte value per write, a new one each write); fio repeats one pattern (buffer_pattern) instead\n");
    }
    if w.randseed > i64::MAX as u64 {
        f.push_str("; drivelab's 64-bit seed is cut to the 63 bits fio takes: the offsets differ from drivelab's own run\n");
    }
}

fn block_sizes(kv: &mut impl FnMut(&str, String), w: &Workload) {
    match w.bs.as_slice() {
        [one] => kv("bs", one.bytes.to_string()),
        many => kv(
            "bssplit",
            many.iter()
                .map(|b| format!("{}/{}", b.bytes, b.percent))
                .collect::<Vec<_>>()
                .join(":"),
        ),
    }
    if w.rw.is_random() {
        kv("blockalign", w.align_bytes.to_string());
    }
}

/// The span: each job covers all of it for random I/O; sequential jobs each take an
/// equal part one after the other (as drivelab's sequential jobs do).
fn span(kv: &mut impl FnMut(&str, String), w: &Workload) {
    let seq_split = !w.rw.is_random() && w.numjobs > 1;
    if seq_split {
        let part = w.size_bytes / w.numjobs as u64 / w.min_bs() as u64 * w.min_bs() as u64;
        kv("offset", w.offset_bytes.to_string());
        kv("size", part.to_string());
        kv("offset_increment", part.to_string());
    } else {
        kv("offset", w.offset_bytes.to_string());
        kv("size", w.size_bytes.to_string());
    }
}

/// Time or byte bound, and the ramp.
fn bound(kv: &mut impl FnMut(&str, String), w: &Workload) {
    if let Some(rt) = w.runtime_ns {
        kv("time_based", "1".into());
        kv("runtime", ms(rt));
    }
    if let Some(b) = w.io_size_bytes {
        // drivelab's bound is over all jobs, fio's io_size per job.
        let per_job = b / w.numjobs as u64 / w.min_bs() as u64 * w.min_bs() as u64;
        kv("io_size", per_job.max(w.min_bs() as u64).to_string());
    }
    if w.ramp_ns > 0 {
        kv("ramp_time", ms(w.ramp_ns));
    }
}

fn randomness(kv: &mut impl FnMut(&str, String), w: &Workload) {
    kv("randseed", (w.randseed & i64::MAX as u64).to_string());
    kv("randrepeat", "0".into());
    if w.rw.is_random() {
        kv("norandommap", "1".into());
        if w.percentage_random < 100 {
            kv("percentage_random", w.percentage_random.to_string());
        }
        if let Distribution::Zoned { zones } = &w.random_distribution {
            let z: Vec<String> = zones
                .iter()
                .map(|z| format!("{}/{}", z.io_percent, z.span_percent))
                .collect();
            kv("random_distribution", format!("zoned:{}", z.join(":")));
        }
    }
}

fn content(kv: &mut impl FnMut(&str, String), d: DataPattern) {
    match d {
        DataPattern::Random => kv("refill_buffers", "1".into()),
        DataPattern::Zero => kv("zero_buffers", "1".into()),
        DataPattern::Repeat => kv("buffer_pattern", "0x41".into()),
        DataPattern::Compress(n) => {
            kv("refill_buffers", "1".into());
            kv("buffer_compress_percentage", n.to_string());
            kv("buffer_compress_chunk", "512".into());
        }
    }
}

/// A file name for step `index` of a plan: `03-seq1m-q8t1-read-run1.fio`.
pub fn file_name(index: usize, step: &PlannedStep) -> String {
    format!("{:02}-{}.fio", index + 1, job_name(&step.id))
}

/// The interval of the logs drivelab asks fio for (`log_avg_msec`, and
/// `log_hist_msec` alike), ms: the workload's.
pub fn log_msec(w: &Workload) -> u64 {
    (w.log_interval_ns / 1_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Shape, StepKind};
    use drivelab_engine::target::{TargetInfo, TargetKind};

    fn info() -> TargetInfo {
        serde_json::from_value(serde_json::json!({
            "kind": "file", "path": "/tmp/x", "capacity_bytes": 1u64 << 30,
            "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
            "scheduler": null, "model": null, "serial": null, "firmware": null,
            "filesystem": null, "in_memory": null, "created_by_drivelab": false,
            "simulated": null
        }))
        .unwrap()
    }

    #[test]
    fn values_fio_would_read_otherwise_are_refused() {
        for ok in [
            "/tmp/x",
            "/mnt/a b/c:d",
            "/dev/nvme0n1",
            "rel/x.bin",
            "/a/é,+=@%~",
        ] {
            assert_eq!(check_value("TARGET", ok), Ok(()), "{ok}");
        }
        for bad in [
            "/p/a\nexec_prerun=touch /p/PWNED",
            "/p/a\r",
            "/p/a;b",
            "/p/a#b",
            "/p/${HOME}",
            "/p/$pagesize",
            "/p/[x]",
            "/p/a\\b",
            " /p/a",
            "/p/a ",
            "/p/\u{1b}[2J",
        ] {
            let e = check_value("TARGET", bad).unwrap_err();
            assert!(e.starts_with("TARGET: '"), "{e}");
            assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e}");
        }
        assert!(check_value("--out", &"a".repeat(5000))
            .unwrap_err()
            .contains("5000 bytes"));
    }

    #[test]
    fn a_mixed_random_step_names_every_knob() {
        let t = info();
        assert_eq!(t.kind, TargetKind::File);
        let shape = Shape::new(RwMode::RandRw, 4096, 32, 2).mix(70);
        let w = crate::plan::workload(
            &shape,
            (1 << 20, 64 << 20),
            crate::plan::for_time(2_000_000_000),
            &t,
        )
        .unwrap();
        let step = PlannedStep {
            id: "rnd4k q32".into(),
            name: "RND4K".into(),
            kind: StepKind::Measure,
            params: serde_json::json!({}),
            action: Action::Run,
            idle_before_ns: 0,
            workload: w,
        };
        let text = render(
            &step,
            &JobOptions {
                filename: "/tmp/x",
                logs: None,
                header: vec![],
            },
        )
        .unwrap();
        for line in [
            "rw=randrw",
            "rwmixread=70",
            "bs=4096",
            "iodepth=32",
            "numjobs=2",
            "offset=1048576",
            "size=67108864",
            "runtime=2000ms",
            "direct=1",
            "[rnd4k-q32]",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
