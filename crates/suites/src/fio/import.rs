//! `drivelab import fio RESULT.json [--logs DIR]`: any fio JSON or json+ result as a
//! result bundle (suite `fio`, one step per job, summary metrics written at import) that
//! `report`, `compare` and `db` read like drivelab's own.
//!
//! The workload is rebuilt from fio's options as far as drivelab's vocabulary reaches
//! (sizes read with fio's default `kb_base=1024`: `4k` and `4KB` are 4096 bytes, `4KiB`
//! is 4000, as fio's HOWTO documents); the measured numbers come from fio's totals,
//! bins and logs, never from the options.

use std::path::Path;

use serde_json::{json, Value};

use drivelab_engine::result::{HostInfo, Tool};
use drivelab_engine::spec::{BsShare, DataPattern, Distribution, IoEngine, RwMode, Workload};
use drivelab_engine::target::{TargetInfo, TargetKind};

use super::convert::{self, Context, JobLogs};
use super::json::{self, Job, Output};
use super::logs::Files;
use crate::bundle::{
    now_rfc3339, BundleStatus, Metric, RunDoc, StepRecord, StepStatus, Summary,
    BUNDLE_SCHEMA_VERSION,
};
use crate::plan::StepKind;

/// The suite kind of imported fio results.
pub const SUITE: crate::suite::SuiteKind = crate::suite::SuiteKind::Fio;

/// A size as fio reads it with its default `kb_base=1024`.
pub fn fio_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let u = unit.to_ascii_lowercase();
    let mut chars = u.chars();
    let (p, rest) = match chars.next() {
        None => return Some(n),
        Some(c) => (c, chars.as_str()),
    };
    let exp = match p {
        'b' if rest.is_empty() => return Some(n),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return None,
    };
    // fio's compatibility rule: with kb_base=1024, "KiB" is the decimal one.
    let base: u64 = if rest == "ib" { 1000 } else { 1024 };
    n.checked_mul(base.checked_pow(exp)?)
}

/// A time as fio reads it (bare numbers are seconds), in ns.
fn fio_time_ns(s: &str) -> Option<u64> {
    drivelab_engine::size::parse_duration_ns(s).ok()
}

/// Option `k` of the job, else of the global section.
fn opt<'a>(job: &'a Job, global: &'a Value, k: &str) -> Option<&'a str> {
    let from = |v: &'a Value| v.get(k).and_then(Value::as_str);
    job.job_options
        .as_ref()
        .and_then(from)
        .or_else(|| match global {
            Value::Array(a) => a.iter().find_map(from),
            v => from(v),
        })
}

/// The workload as drivelab would state it, from fio's options.
pub fn workload_of(job: &Job, global: &Value, notes: &mut Vec<String>) -> Workload {
    let o = |k: &str| opt(job, global, k);
    let rw = o("rw")
        .or(o("readwrite"))
        .and_then(|s| RwMode::parse(s).ok())
        .unwrap_or(RwMode::Read);
    let bs: Vec<BsShare> = match o("bssplit") {
        Some(s) => s
            .split(':')
            .filter_map(|p| {
                let (b, pct) = p.split_once('/')?;
                Some(BsShare {
                    bytes: fio_size(b)? as u32,
                    percent: pct.trim().parse().ok()?,
                })
            })
            .collect(),
        None => vec![BsShare {
            bytes: o("bs")
                .or(o("blocksize"))
                .and_then(|s| fio_size(s.split(',').next().unwrap_or(s)))
                .unwrap_or(4096) as u32,
            percent: 100,
        }],
    };
    let engine_name = o("ioengine").unwrap_or("psync");
    let ioengine = match engine_name {
        "io_uring" => IoEngine::IoUring,
        "null" => IoEngine::Null,
        "psync" | "sync" | "pvsync" | "pvsync2" => IoEngine::Sync,
        other => {
            notes.push(format!(
                "fio's ioengine was {other}, which drivelab does not have; the config says io_uring."
            ));
            IoEngine::IoUring
        }
    };
    let num = |k: &str, d: u64| o(k).and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or(d);
    let time_based = o("time_based").is_some_and(|v| v != "0");
    let runtime_ns = o("runtime").and_then(fio_time_ns);
    Workload {
        rw,
        rwmixread: num("rwmixread", 50) as u32,
        bs: if bs.is_empty() {
            vec![BsShare {
                bytes: 4096,
                percent: 100,
            }]
        } else {
            bs
        },
        iodepth: num("iodepth", 1) as u32,
        numjobs: num("numjobs", 1) as u32,
        ioengine,
        direct: o("direct").is_some_and(|v| v != "0"),
        offset_bytes: o("offset").and_then(fio_size).unwrap_or(0),
        size_bytes: o("size").and_then(fio_size).unwrap_or(0),
        runtime_ns: if time_based || runtime_ns.is_some() {
            runtime_ns
        } else {
            None
        },
        io_size_bytes: o("io_size").and_then(fio_size),
        ramp_ns: o("ramp_time").and_then(fio_time_ns).unwrap_or(0),
        percentage_random: num("percentage_random", 100) as u32,
        random_distribution: o("random_distribution")
            .and_then(|s| Distribution::parse(s).ok())
            .unwrap_or(Distribution::Uniform),
        randseed: num("randseed", 0),
        data: if o("zero_buffers").is_some_and(|v| v != "0") {
            DataPattern::Zero
        } else {
            DataPattern::Random
        },
        log_interval_ns: num("log_avg_msec", 1000).max(1) * 1_000_000,
        align_bytes: 512,
        continue_on_error: o("continue_on_error").is_some_and(|v| v != "none" && v != "0"),
        fixedbufs: o("fixedbufs").is_some_and(|v| v != "0"),
        registerfiles: o("registerfiles").is_some_and(|v| v != "0"),
        iodepth_batch_submit: num("iodepth_batch_submit", 0) as u32,
        invalidate: o("invalidate").is_none_or(|v| v != "0"),
        end_fsync: o("end_fsync").is_some_and(|v| v != "0"),
    }
}

/// The target as fio's options name it (a block device when it is one here).
fn target_of(filename: Option<&str>, w: &Workload) -> TargetInfo {
    let path = filename.unwrap_or("").to_string();
    let kind = if std::fs::metadata(&path)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
    {
        TargetKind::BlockDevice
    } else if w.ioengine == IoEngine::Null {
        TargetKind::Null
    } else {
        TargetKind::File
    };
    serde_json::from_value(json!({
        "kind": kind, "path": path, "capacity_bytes": w.offset_bytes + w.size_bytes,
        "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
        "scheduler": null, "model": null, "serial": null, "firmware": null,
        "filesystem": null, "in_memory": null, "created_by_drivelab": false,
        "simulated": null
    }))
    .expect("a complete TargetInfo")
}

/// Headline metrics of one step.
pub fn step_metrics(name: &str, m: &drivelab_engine::result::Measured) -> Vec<Metric> {
    let mut out = Vec::new();
    for (d, t) in [("read", &m.totals.read), ("write", &m.totals.write)] {
        if t.ops == 0 {
            continue;
        }
        out.extend(Metric::new(
            format!("{name} {d} IOPS"),
            Some(t.ops_per_s),
            "IOPS",
        ));
        out.extend(Metric::new(
            format!("{name} {d} MB/s"),
            Some(t.mbps),
            "MB/s",
        ));
        out.extend(Metric::new(
            format!("{name} {d} mean latency"),
            t.latency.mean_ns.map(|v| v / 1e3),
            "µs",
        ));
        out.extend(Metric::new(
            format!("{name} {d} p99 latency"),
            t.latency.at(99.0).map(|v| v as f64 / 1e3),
            "µs",
        ));
    }
    out
}

/// The per-second logs of each job: one group (group_reporting=1) has all log files,
/// else job i has the i-th of each kind.
fn logs_of(logs: Option<&Path>, jobs: usize) -> Result<Vec<Option<JobLogs>>, String> {
    let Some(d) = logs else {
        return Ok(vec![None; jobs]);
    };
    let f = Files::find(d)?;
    let per_job = jobs > 1;
    if per_job && f.iops.len() != jobs {
        return Err(format!(
            "--logs: the result holds {jobs} jobs but {} has {} {}; give the logs of this run (one per job, or group_reporting=1)",
            d.display(),
            f.iops.len(),
            if f.iops.len() == 1 { "iops log" } else { "iops logs" }
        ));
    }
    (0..jobs)
        .map(|i| {
            let files = if per_job { f.job(i, jobs) } else { f.clone() };
            JobLogs::read(&files).map(Some)
        })
        .collect()
}

/// A step's name: the job's (on its host), numbered when several share it.
fn step_name(jobs: &[&Job], i: usize) -> String {
    let job = jobs[i];
    let name = match &job.hostname {
        Some(h) => format!("{} on {h}", job.jobname),
        None => job.jobname.clone(),
    };
    let same = jobs
        .iter()
        .filter(|j| j.jobname == job.jobname && j.hostname == job.hostname)
        .count();
    if same > 1 {
        format!("{name} (job {})", i + 1)
    } else {
        name
    }
}

/// The bundle document of a fio result (`text`: the output file; `logs`: a directory of
/// its per-second logs; `source`: the file's name for the record).
pub fn import(text: &str, logs: Option<&Path>, source: &str) -> Result<RunDoc, String> {
    let parsed = json::parse(text)?;
    let out: &Output = &parsed.output;
    let jobs: Vec<&Job> = out.all_jobs().collect();
    if jobs.is_empty() {
        return Err("the fio result holds no jobs".into());
    }
    let job_logs = logs_of(logs, jobs.len())?;
    let global = out.global_options.clone().unwrap_or(Value::Null);
    let mut notes = vec![format!("Imported from fio's result {source}.")];
    let mut steps = Vec::new();
    let mut metrics = Vec::new();
    let mut target = None;
    for (i, job) in jobs.iter().enumerate() {
        let w = workload_of(job, &global, &mut notes);
        let est = Some(convert::start_estimate(out, job, 0)).filter(|&t| t > 0);
        let m = convert::measured(
            job,
            &Context {
                workload: &w,
                logs: job_logs[i].as_ref(),
                est_start_ms: est,
                fio_version: &out.fio_version,
            },
        )?;
        target.get_or_insert_with(|| target_of(opt(job, &global, "filename"), &w));
        let name = step_name(&jobs, i);
        metrics.extend(step_metrics(&name, &m));
        steps.push(StepRecord {
            index: i,
            id: crate::plan::slug(&name),
            name,
            kind: StepKind::Measure,
            params: json!({ "fio_job": job.jobname, "host": job.hostname }),
            status: StepStatus::from(m.status),
            skip_reason: None,
            started_at: Some(m.started_at.clone()),
            finished_at: None,
            config: w,
            sensors_start: Vec::new(),
            sensors_end: Vec::new(),
            idle_before_ns: 0,
            idle_sensors: Vec::new(),
            telemetry: Some(crate::records::telemetry_of(&m)),
            run: Some(m),
        });
    }
    notes.dedup();
    let failed = steps.iter().any(|s| s.status != StepStatus::Complete);
    let knobs = json!({ "source": source, "fio_version": out.fio_version });
    let now = now_rfc3339();
    let hash_input: Vec<_> = steps.iter().map(|s| (&s.name, &s.config)).collect();
    Ok(RunDoc {
        schema_version: BUNDLE_SCHEMA_VERSION,
        tool: Tool::current(),
        suite: SUITE,
        config_hash: crate::hash::sha256_hex(&crate::hash::canonical_json(
            &json!({"suite": SUITE, "steps": hash_input}),
        )),
        knobs,
        host: HostInfo {
            hostname: jobs[0]
                .hostname
                .clone()
                .unwrap_or_else(|| "unknown (imported from fio)".into()),
            kernel: String::new(),
            cpu_model: String::new(),
            logical_cpus: 0,
            memory_bytes: 0,
        },
        target_arg: None,
        target: target.expect("at least one job"),
        test_file_created: false,
        status: if failed {
            BundleStatus::Failed
        } else {
            BundleStatus::Complete
        },
        created_at: now.clone(),
        updated_at: now,
        planned_steps: steps.len(),
        steps,
        summary: Some(Summary {
            analysis: json!({ "fio_version": out.fio_version }),
            metrics,
        }),
        notes,
        fleet: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real json+ result of Debian's fio 3.33 (the fuzzer's seed).
    const RESULT: &str = include_str!("../../../../fuzz/corpus/fio_result/null-jsonplus.json");

    #[test]
    fn a_real_result_imports() {
        let doc = import(RESULT, None, "r.json").unwrap();
        assert_eq!(doc.steps.len(), 1);
    }

    /// Found by fuzzing: a size whose unit is not ASCII (`1В`, a Cyrillic letter) was
    /// cut inside the letter and panicked; it is no size.
    #[test]
    fn a_size_with_a_unit_that_is_not_ascii_is_no_size_not_a_panic() {
        assert_eq!(fio_size("1В"), None);
        assert_eq!(fio_size("4k"), Some(4096));
        assert_eq!(fio_size("4KiB"), Some(4000));
    }

    /// Found by fuzzing (fuzz/fuzz_targets/fio_result.rs): a start time past the year
    /// 9999 made the date formatter panic.
    #[test]
    fn a_start_time_past_year_9999_is_refused_not_a_panic() {
        let text = RESULT.replace(
            "\"timestamp_ms\" : 1795552083295,",
            "\"timestamp_ms\" : 1795552088560643295,",
        );
        assert_ne!(text, RESULT);
        let e = import(&text, None, "r.json").err().unwrap();
        assert!(e.contains("after the year 9999"), "{e}");
    }
}
