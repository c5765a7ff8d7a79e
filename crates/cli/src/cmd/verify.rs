//! `drivelab verify TARGET --from RESULT`: read back what an `io --verify` run (or a
//! `run seqfill --verify` bundle's step) wrote and check every block, later (after a
//! reboot, a power cut, a move of the drive).
//!
//! The run's document holds its resolved workload (seed included) and the writes each
//! job made: the engine's `verify` replays the generators from those, so no block map is
//! stored. The blocks are read as the run's own pass reads them (`verify_pass`: on the
//! run's engine, at its queue depth).

use std::path::PathBuf;

use clap::Args;
use drivelab_engine::result::RunResult;
use drivelab_engine::target::{OpenOptions, Target, TargetSpec};
use drivelab_engine::verify::VerifyResult;

use crate::fail::{Fail, FAILED};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The file or block device the run wrote.
    pub target: PathBuf,
    /// The run's result document (`drivelab io --verify --json FILE`), or the bundle (its
    /// directory or run.json) of `drivelab run seqfill|consistency --verify`.
    #[arg(long, value_name = "RESULT.json|BUNDLE")]
    pub from: PathBuf,
    /// Print the verify result as JSON on standard output (instead of a summary).
    #[arg(long)]
    pub json: bool,
}

/// The run's record: its workload and its writes per job, from an `io --json` document,
/// or from a suite's bundle (its directory or its run.json) whose step verified.
fn load(from: &std::path::Path) -> Result<(drivelab_engine::spec::Workload, Vec<u64>), Fail> {
    let shown = from.display();
    let not_verified = || {
        Fail::usage(format!(
            "--from {shown}: the run did not verify; give the result of a drivelab io --verify run or the bundle of a suite run with --verify"
        ))
    };
    let file = if from.is_dir() {
        from.join(drivelab_suites::bundle::RUN_JSON)
    } else {
        from.to_path_buf()
    };
    let text = drivelab_trace::input::read_text(&file, drivelab_suites::bundle::MAX_RUN_JSON_BYTES)
        .map_err(|e| Fail::usage(format!("--from {shown}: cannot be read ({e})")))?;
    let io_doc = serde_json::from_str::<RunResult>(&text);
    if let Ok(doc) = io_doc {
        return match doc.measured.verify {
            Some(v) if doc.config.verify => Ok((doc.config, v.writes_per_job)),
            _ => Err(not_verified()),
        };
    }
    let bundle = drivelab_suites::bundle::parse_run_doc(&text).map_err(|e| {
        Fail::usage(format!(
            "--from {shown}: neither a drivelab io --json result nor a suite's bundle ({e})"
        ))
    })?;
    let mut verified = bundle.steps.into_iter().filter_map(|s| {
        let v = s.run?.verify?;
        s.config.verify.then_some((s.config, v.writes_per_job))
    });
    match (verified.next(), verified.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(not_verified()),
        (Some(_), Some(_)) => Err(Fail::usage(format!(
            "--from {shown}: more than one step of the bundle verified; drivelab verify checks a bundle with one (seqfill's fill, consistency's continuous writes)"
        ))),
    }
}

/// Refuse write counts no run of `w` could make (an edited document made verify replay
/// 10^18 writes).
fn check_writes(
    shown: &str,
    w: &drivelab_engine::spec::Workload,
    writes: &[u64],
) -> Result<(), Fail> {
    let most = most_writes(w);
    if writes.is_empty() || writes.len() != w.numjobs as usize || writes.iter().any(|&n| n > most) {
        return Err(Fail::usage(format!(
            "--from {shown}: its write counts ({} jobs, up to {} writes) are not what a run of {} jobs could make (at most {most} writes each): an edited document?",
            writes.len(),
            writes.iter().max().copied().unwrap_or(0),
            w.numjobs
        )));
    }
    Ok(())
}

/// The most writes one job of `w` can have made: its byte budget in its smallest
/// blocks, else one write per 100 ns of its runtime (10 M IOPS a job, beyond any
/// drive), else its span once over.
fn most_writes(w: &drivelab_engine::spec::Workload) -> u64 {
    let bs =
        w.bs.iter()
            .map(|b| b.bytes as u64)
            .min()
            .unwrap_or(512)
            .max(1);
    match (w.io_size_bytes, w.runtime_ns) {
        (Some(bytes), _) => bytes / bs + 1,
        (None, Some(ns)) => ns / 100 + 1,
        (None, None) => w.size_bytes / bs + 1,
    }
}

pub fn run(a: VerifyArgs) -> Result<i32, Fail> {
    let (w, writes) = load(&a.from)?;
    if !a.target.exists() {
        return Err(Fail::usage(format!(
            "verify {}: no such file or device; give the target the run wrote",
            a.target.display()
        )));
    }
    let open = OpenOptions {
        write: false,
        direct: w.direct,
        overwrite: false,
        destructive: None,
        create_size: 0,
    };
    let target = Target::open(TargetSpec::Path(Some(a.target.clone())), &open)
        .map_err(|e| Fail::usage(e.0))?;
    let file = target
        .file()
        .ok_or_else(|| Fail::usage("verify: the target is not a file or a block device"))?;
    let shown = a.from.display().to_string();
    drivelab_engine::run::check_document(&w, &target.info)
        .map_err(|e| Fail::usage(format!("--from {shown}: {e}")))?;
    check_writes(&shown, &w, &writes)?;
    let block = target.info.kind == drivelab_engine::target::TargetKind::BlockDevice;
    let r = drivelab_engine::verify_pass::check(&w, file, block, writes);
    if a.json {
        crate::output::json::write_stdout(&r).map_err(Fail::failed)?;
    } else {
        crate::output::stdout::say(&summary(&r, &w))?;
    }
    Ok(if r.passed() { 0 } else { FAILED })
}

/// A few lines for the terminal.
fn summary(r: &VerifyResult, w: &drivelab_engine::spec::Workload) -> String {
    let mut s = match (r.failure(), crate::output::summary::verified_line(r, w)) {
        (None, Some(line)) => format!("{line}\n"),
        (Some(f), _) => format!("{f}\n"),
        (None, None) => "verify: no pass ran.\n".into(),
    };
    let c = &r.classes;
    if r.blocks_bad.unwrap_or(0) > 0 {
        s += &format!(
            "  zeros {}  older {}  misdirected {}  torn {}  corrupt {}  foreign {}\n",
            c.zeros, c.older, c.misdirected, c.torn, c.corrupt, c.foreign
        );
        for m in &r.mismatches {
            // A misdirected block says where its data was meant to go.
            let from = m
                .found_offset_bytes
                .map_or(String::new(), |o| format!(", written for byte {o}"));
            s += &format!(
                "  block at byte {}: {}{from}, generation expected {} found {}, first bad byte {}\n",
                m.offset_bytes,
                m.class,
                m.expected_generation,
                m.found_generation
                    .map_or("none".to_string(), |g| g.to_string()),
                m.first_bad_byte_offset_bytes
            );
        }
    }
    s
}
