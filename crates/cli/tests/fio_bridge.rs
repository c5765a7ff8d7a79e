//! The fio bridge: suites as fio job files, fio results imported as bundles, suites run
//! through fio locally. Needs Debian's fio (installed by scripts/test).

mod common;

use std::path::Path;
use std::process::Command;

use common::{run_in, stderr};

/// Lines `key=value` of a job file.
fn option<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn fio() -> Command {
    Command::new("fio")
}

#[test]
fn emitted_jobs_parse_in_fio_and_match_the_steps() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t.bin");
    let o = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            "--no-db",
            target.to_str().unwrap(),
            "--emit-fio",
            "jobs",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!target.exists(), "emitting jobs made no test file");
    let mut names: Vec<String> = std::fs::read_dir(d.path().join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    // quick's standard preset, read then write, one run each.
    let want = [
        ("seq1m-q8t1-read", "read", "1048576", "8"),
        ("seq1m-q8t1-write", "write", "1048576", "8"),
        ("seq1m-q1t1-read", "read", "1048576", "1"),
        ("seq1m-q1t1-write", "write", "1048576", "1"),
        ("rnd4k-q32t1-read", "randread", "4096", "32"),
        ("rnd4k-q32t1-write", "randwrite", "4096", "32"),
        ("rnd4k-q1t1-read", "randread", "4096", "1"),
        ("rnd4k-q1t1-write", "randwrite", "4096", "1"),
    ];
    assert_eq!(names.len(), want.len(), "{names:?}");
    for (name, (id, rw, bs, qd)) in names.iter().zip(want) {
        assert!(name.contains(id), "{name} is not {id}");
        let p = d.path().join("jobs").join(name);
        let text = std::fs::read_to_string(&p).unwrap();
        let parsed = fio().arg("--parse-only").arg(&p).output().unwrap();
        assert!(
            parsed.status.success(),
            "fio --parse-only {name}: {}",
            stderr(&parsed)
        );
        assert_eq!(option(&text, "rw"), Some(rw), "{name}");
        assert_eq!(option(&text, "bs"), Some(bs), "{name}");
        assert_eq!(option(&text, "iodepth"), Some(qd), "{name}");
        assert_eq!(option(&text, "size"), Some("67108864"), "{name}");
        assert_eq!(option(&text, "runtime"), Some("300ms"), "{name}");
        assert_eq!(option(&text, "filename"), Some(target.to_str().unwrap()));
        assert_eq!(option(&text, "direct"), Some("1"));
    }
    // A second emit into the same directory replaces drivelab's own job files.
    let again = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            target.to_str().unwrap(),
            "--emit-fio",
            "jobs",
        ],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    // fio cannot run a simulated drive.
    let sim = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "--short",
            "sim:nvme-tlc,capacity=4G",
            "--emit-fio",
            "jobs2",
        ],
    );
    assert_eq!(sim.status.code(), Some(2), "{}", stderr(&sim));
    assert!(stderr(&sim).contains("fio needs a file or a block device"));
    assert!(!Path::new(&d.path().join("jobs2")).exists());
}

fn refused_alone(o: &std::process::Output, want: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(want), "{}", stderr(o));
    assert_eq!(stderr(o).trim().lines().count(), 1, "{}", stderr(o));
}

#[test]
fn emitting_jobs_needs_the_consent_a_run_needs_and_a_directory_of_its_own() {
    let d = tempfile::tempdir().unwrap();
    let quick = |extra: &[&str]| {
        let mut a = vec!["run", "quick", "--short", "--runs", "1", "--no-db"];
        a.extend(extra);
        run_in(d.path(), &a)
    };
    // A file of the user's: its jobs would overwrite it.
    let victim = d.path().join("victim.bin");
    std::fs::write(&victim, vec![7u8; 1 << 20]).unwrap();
    refused_alone(
        &quick(&["victim.bin", "--emit-fio", "ef"]),
        "pass --overwrite",
    );
    assert!(!d.path().join("ef").exists(), "nothing written");
    // A block device: --destructive naming it.
    let lo = common::Loop::new(64 << 20, false);
    refused_alone(
        &quick(&[&lo.dev, "--emit-fio", "ef"]),
        &format!("--destructive={}", lo.dev),
    );
    assert!(!d.path().join("ef").exists(), "nothing written");
    // With consent: the filename is absolute, and each writing job opens with a warning.
    let o = quick(&["victim.bin", "--overwrite", "--emit-fio", "ef"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let abs = victim.to_str().unwrap();
    for e in std::fs::read_dir(d.path().join("ef")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert_eq!(option(&text, "filename"), Some(abs));
        let writes = option(&text, "rw").unwrap().contains("write");
        assert_eq!(
            text.lines()
                .next()
                .unwrap()
                .starts_with("; WARNING: this job WRITES"),
            writes,
            "{text}"
        );
    }
    assert_eq!(std::fs::read(&victim).unwrap(), vec![7u8; 1 << 20]);
    // Only a new or empty directory, or one of earlier job files: never a bundle's or
    // a database's folder.
    let bundle = d.path().join("bundle");
    std::fs::create_dir(&bundle).unwrap();
    std::fs::write(bundle.join("run.json"), "{}").unwrap();
    std::fs::write(d.path().join("r.sqlite"), b"SQLite format 3\0").unwrap();
    for dir in ["bundle", "."] {
        refused_alone(
            &quick(&["t.bin", "--emit-fio", dir]),
            "give a new or empty directory",
        );
    }
    assert_eq!(std::fs::read_dir(&bundle).unwrap().count(), 1);
    std::fs::create_dir(d.path().join("empty")).unwrap();
    assert!(quick(&["t.bin", "--emit-fio", "empty"]).status.success());
    assert!(quick(&["t.bin", "--emit-fio", "empty"]).status.success());
}

#[test]
fn a_replay_through_fio_is_refused_before_anything_is_made() {
    let d = tempfile::tempdir().unwrap();
    for (extra, flag) in [
        (vec!["--host", "127.0.0.2"], "--host"),
        (vec!["--hosts", "h.txt"], "--hosts"),
        (vec!["--emit-fio", "ef"], "--emit-fio"),
        (vec!["--engine", "fio"], "--engine fio"),
    ] {
        let mut a = vec!["run", "replay", "t.trace", "x.bin", "--no-db", "--out", "o"];
        a.extend(extra);
        let o = run_in(d.path(), &a);
        refused_alone(&o, &format!("{flag}: the replay suite"));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "{a:?}");
    }
    // Options replay always refuses are not offered in its help (the other suites'
    // help has them).
    let help = common::stdout(&run_in(d.path(), &["run", "replay", "--help"]));
    assert!(help.contains("--max-idle"), "{help}");
    for flag in ["--engine", "--emit-fio", "--hosts", "--host "] {
        assert!(!help.contains(flag), "{flag} in {help}");
    }
    let quick = common::stdout(&run_in(d.path(), &["run", "quick", "--help"]));
    for flag in ["--engine", "--emit-fio", "--hosts", "--host "] {
        assert!(quick.contains(flag), "{flag} not in {quick}");
    }
}

/// A suite's `--verify` never goes into fio's job files silently dropped: seqfill's and
/// consistency's are refused with every fio option, before anything is made.
#[test]
fn a_verifying_suite_through_fio_is_refused_before_anything_is_made() {
    let d = tempfile::tempdir().unwrap();
    for suite in ["seqfill", "consistency"] {
        for (extra, flag) in [
            (vec!["--host", "127.0.0.2"], "--host"),
            (vec!["--hosts", "h.txt"], "--hosts"),
            (vec!["--emit-fio", "ef"], "--emit-fio"),
            (vec!["--engine", "fio"], "--engine fio"),
        ] {
            let mut a = vec!["run", suite, "x.bin", "--short", "--verify", "--no-db"];
            a.extend(["--out", "o"]);
            a.extend(extra);
            let o = run_in(d.path(), &a);
            refused_alone(&o, "--verify: ");
            assert!(
                stderr(&o).contains(&format!("drop --verify or {flag}")),
                "{a:?}"
            );
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "{a:?}");
        }
    }
}

/// Run fio on a job file in `dir`; its json+ output is `out.json`, logs under `logs/`.
fn run_fio(dir: &Path, job: &str) {
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let o = fio()
        .args(["--output-format=json+", "--output=out.json", "job.fio"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "fio: {}", stderr(&o));
}

#[test]
fn an_imported_json_plus_result_reproduces_fios_percentiles_and_series() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // Two jobs as one group, paced so that the run is device-independent and short.
    run_fio(
        p,
        &format!(
            "[global]\nfilename={}\nsize=16m\nioengine=psync\ndirect=0\nrw=randrw\nrwmixread=70\n\
             bs=4k\nnumjobs=2\ngroup_reporting=1\ntime_based=1\nruntime=2\nrate_iops=400,200\n\
             lat_percentiles=1\nclat_percentiles=1\nlog_avg_msec=1000\nlog_hist_msec=1000\n\
             log_unix_epoch=1\nwrite_iops_log=logs/s\nwrite_bw_log=logs/s\nwrite_lat_log=logs/s\n\
             write_hist_log=logs/s\n[mix]\n",
            p.join("data").display()
        ),
    );
    let o = run_in(
        p,
        &["import", "fio", "out.json", "--logs", "logs", "--out", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("out.json")).unwrap()).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    assert_eq!(doc["suite"], "fio");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "one group");
    let run = &steps[0]["run"];
    let job = &fio["jobs"][0];
    for dir in ["read", "write"] {
        let f = &job[dir];
        let total = f["total_ios"].as_u64().unwrap();
        assert!(total > 0);
        let t = &run["totals"][dir];
        assert_eq!(t["ops"].as_u64(), Some(total));
        assert_eq!(t["bytes"], f["io_bytes"]);
        // Every percentile fio reported, worked out again from its bins.
        let mine = t["latency"]["percentiles"].as_array().unwrap();
        let mut checked = 0;
        for (k, v) in f["lat_ns"]["percentile"].as_object().unwrap() {
            let pct: f64 = k.parse().unwrap();
            if let Some(m) = mine
                .iter()
                .find(|m| (m["percentile"].as_f64().unwrap() - pct).abs() < 1e-9)
            {
                assert_eq!(m["value_ns"], *v, "{dir} p{pct}");
                checked += 1;
            }
        }
        assert!(checked >= 15, "{checked} percentiles compared");
        let bins: u64 = f["lat_ns"]["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(run["histogram"][dir]["count"].as_u64(), Some(bins));
        assert_eq!(bins, total);
        // The series: whole seconds, every I/O in it once.
        let recs = run["series"]["records"].as_array().unwrap();
        assert_eq!(recs.len(), 2, "2 s on a 1 s grid");
        let ops: u64 = recs.iter().map(|r| r[dir]["ops"].as_u64().unwrap()).sum();
        assert_eq!(ops, total, "{dir}");
        let bytes: u64 = recs.iter().map(|r| r[dir]["bytes"].as_u64().unwrap()).sum();
        assert_eq!(bytes, f["io_bytes"].as_u64().unwrap());
        // The first, logged second: fio's bw log is in KiB/s (1024 bytes), its iops log
        // in I/Os per second, so 4 KiB I/Os make bytes = 4096 x I/Os (within fio's
        // per-window rounding; kB of 1000 would be 2.4 % off).
        let o0 = recs[0][dir]["ops"].as_f64().unwrap();
        let b0 = recs[0][dir]["bytes"].as_f64().unwrap();
        assert!(
            o0 > 0.0 && (b0 / (o0 * 4096.0) - 1.0).abs() < 0.01,
            "{dir}: {b0} bytes, {o0} I/Os"
        );
    }
    // Local histogram logs are not "repaired".
    let notes = run["notes"].to_string();
    assert!(!notes.contains("repaired"), "{notes}");
    // report, compare and db take it like drivelab's own.
    let r = run_in(p, &["report", "b", "-o", "r.html"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let html = std::fs::read_to_string(p.join("r.html")).unwrap();
    // Its test is named by what it did, beside fio's job name.
    assert!(html.contains("fio results") && html.contains("<td>mix</td>"));
    assert!(
        html.contains("randrw (70 % reads) 4K QD1 ×2 jobs"),
        "{html}"
    );
    let c = run_in(p, &["compare", "b", "b"]);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(
        common::stdout(&c).contains("(mix) read IOPS"),
        "{}",
        common::stdout(&c)
    );
    let db = p.join("r.sqlite");
    let rec = run_in(p, &["db", "record", "b", "--db", db.to_str().unwrap()]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    // Bad input: one line, exit 2, nothing written.
    std::fs::write(p.join("junk.json"), "not fio").unwrap();
    let bad = run_in(p, &["import", "fio", "junk.json", "--out", "c"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("no JSON document"),
        "{}",
        stderr(&bad)
    );
    assert!(!p.join("c").exists());
}

/// A paced job of `secs` seconds with per-second logs.
fn paced_job(data: &Path, secs: u32) -> String {
    format!(
        "[global]\nfilename={}\nsize=4m\nioengine=psync\nrw=randread\nbs=4k\n\
         time_based=1\nruntime={secs}\nrate_iops=200\nlat_percentiles=1\nlog_avg_msec=1000\n\
         log_hist_msec=1000\nlog_unix_epoch=1\nwrite_iops_log=logs/s\nwrite_bw_log=logs/s\n\
         write_lat_log=logs/s\nwrite_hist_log=logs/s\n[r]\n",
        data.display()
    )
}

#[test]
fn results_that_do_not_add_up_are_refused_and_a_failed_job_is_said() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    run_fio(p, &paced_job(&p.join("data"), 4));
    // Logs of a longer and of a shorter run.
    for (dir, secs) in [("longer", 6), ("shorter", 2)] {
        let other = p.join(dir);
        std::fs::create_dir(&other).unwrap();
        run_fio(&other, &paced_job(&p.join("data"), secs));
    }
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("out.json")).unwrap()).unwrap();
    let variant = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = result.clone();
        f(&mut v);
        // Compact, one line (as `jq -c` writes it).
        std::fs::write(p.join(name), serde_json::to_string(&v).unwrap()).unwrap();
    };
    // Compact JSON imports, with µs and one step said once.
    variant("compact.json", &|_| {});
    let o = run_in(
        p,
        &[
            "import",
            "fio",
            "compact.json",
            "--logs",
            "logs",
            "--out",
            "ok",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let said = common::stdout(&o);
    assert!(said.contains("(1 step)") && said.contains("µs"), "{said}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("ok/run.json")).unwrap()).unwrap();
    let notes = run["steps"][0]["run"]["notes"].to_string();
    assert!(!notes.contains("repaired"), "{notes}");
    // Refused: one line naming the problem, exit 2, nothing written.
    variant("rt0.json", &|v| {
        v["jobs"][0]["read"]["runtime"] = 0.into();
    });
    variant("bins.json", &|v| {
        v["jobs"][0]["read"]["lat_ns"]["bins"]["1000"] = 1_000_000_000_000_000_000u64.into();
    });
    for (args, want) in [
        (vec!["rt0.json"], "runtime of 0 ms"),
        (vec!["bins.json"], "json+ latency bins"),
        (
            vec!["compact.json", "--logs", "longer/logs"],
            "not this job's logs",
        ),
        (
            vec!["compact.json", "--logs", "shorter/logs"],
            "not this job's logs",
        ),
        (
            vec!["compact.json", "--out", "ok"],
            "already holds a result bundle",
        ),
        (
            vec!["compact.json", "--out", "ok/sub"],
            "is inside the result bundle",
        ),
    ] {
        let mut a = vec!["import", "fio"];
        a.extend(args.iter().copied());
        if !a.contains(&"--out") {
            a.extend(["--out", "no"]);
        }
        let o = run_in(p, &a);
        refused_alone(&o, want);
        assert!(!stderr(&o).contains("--resume"), "{}", stderr(&o));
        assert!(!p.join("no").exists(), "{a:?}");
    }
    // A job fio stopped with an error: a failed bundle, said on the terminal, exit 1.
    variant("err.json", &|v| {
        v["jobs"][0]["error"] = 5.into();
    });
    let o = run_in(p, &["import", "fio", "err.json", "--out", "failed"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error 5"), "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("failed/run.json")).unwrap()).unwrap();
    assert_eq!(run["status"], "failed");
}

#[test]
fn a_suite_runs_through_fio_into_an_ordinary_bundle() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let target = p.join("t.bin");
    let o = run_in(
        p,
        &[
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            "--size",
            "16M",
            "--tests",
            "SEQ1M Q1T1,RND4K Q4T1",
            "--no-db",
            "--out",
            "b",
            "--engine",
            "fio",
            target.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        common::stdout(&o).contains("RND4K Q4T1"),
        "{}",
        common::stdout(&o)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    assert_eq!(doc["status"], "complete");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    for s in steps {
        let run = &s["run"];
        assert!(
            run["notes"].to_string().contains("Measured by fio"),
            "{}",
            run["notes"]
        );
        let dir = p.join("b/fio").join(s["id"].as_str().unwrap());
        assert!(dir.join("job.fio").is_file() && dir.join("out.json").is_file());
        let recs = run["series"]["records"].as_array().unwrap();
        assert!(!recs.is_empty());
        let sum: u64 = recs.iter().map(|r| r["all"]["ops"].as_u64().unwrap()).sum();
        assert_eq!(sum, run["totals"]["all"]["ops"].as_u64().unwrap());
        assert!(sum > 0);
    }
    // A bundle fio ran goes on with fio when resumed: drop its last step and resume.
    let mut cut = doc.clone();
    cut["steps"].as_array_mut().unwrap().pop();
    cut["status"] = "interrupted".into();
    std::fs::write(p.join("b/run.json"), serde_json::to_vec(&cut).unwrap()).unwrap();
    std::fs::remove_dir_all(p.join("b/fio").join(steps[3]["id"].as_str().unwrap())).unwrap();
    let r = run_in(p, &["run", "--resume", "b", "--no-db"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    assert_eq!(again["status"], "complete");
    assert!(again["steps"][3]["run"]["notes"]
        .to_string()
        .contains("Measured by fio"));
    // fio cannot run a simulated drive.
    let sim = run_in(
        p,
        &[
            "run",
            "quick",
            "--short",
            "--no-db",
            "--out",
            "c",
            "--engine",
            "fio",
            "sim:nvme-tlc,capacity=4G",
        ],
    );
    assert_eq!(sim.status.code(), Some(2), "{}", stderr(&sim));
    assert!(stderr(&sim).contains("--engine fio"), "{}", stderr(&sim));
    assert!(!p.join("c").exists());
}

#[test]
fn seconds_fio_did_not_log_are_zero_io_seconds() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // 200 I/Os at 200 IOPS, then 2.2 s of think time: fio writes no row for the
    // windows without I/O (from 2 s to 3 s at least), then I/O again until 4 s.
    run_fio(
        p,
        &format!(
            "[global]\nfilename={}\nsize=4m\nioengine=psync\nrw=randread\nbs=4k\n\
             time_based=1\nruntime=4\nrate_iops=200\nthinktime=2200000\nthinktime_blocks=200\n\
             lat_percentiles=1\nlog_avg_msec=1000\nlog_unix_epoch=1\nwrite_iops_log=logs/s\n\
             write_bw_log=logs/s\n[stall]\n",
            p.join("data").display()
        ),
    );
    let o = run_in(
        p,
        &["import", "fio", "out.json", "--logs", "logs", "--out", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    let recs = doc["steps"][0]["run"]["series"]["records"]
        .as_array()
        .unwrap();
    let ops: Vec<u64> = recs
        .iter()
        .map(|r| r["read"]["ops"].as_u64().unwrap())
        .collect();
    // 4 s and fio's last think: at least 4 windows.
    assert!(ops.len() >= 4 && ops[0] > 0, "{ops:?}");
    assert_eq!(
        ops[2], 0,
        "the stalled second is a zero-I/O second: {ops:?}"
    );
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("out.json")).unwrap()).unwrap();
    assert_eq!(
        ops.iter().sum::<u64>(),
        fio["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
    );
    // fio logged fewer rows than seconds: the gap was filled, not shifted.
    let rows = std::fs::read_to_string(p.join("logs/s_iops.1.log"))
        .unwrap()
        .lines()
        .count();
    assert!(rows < ops.len() - 1, "{rows} rows for {ops:?}");
}

#[test]
fn a_plain_json_result_keeps_fios_percentiles() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("job.fio"),
        format!(
            "[global]\nfilename={}\nsize=4m\nioengine=psync\nrw=randread\nbs=4k\n\
             time_based=1\nruntime=1\nrate_iops=300\n[plain]\n",
            p.join("data").display()
        ),
    )
    .unwrap();
    let f = fio()
        .args(["--output-format=json", "--output=out.json", "job.fio"])
        .current_dir(p)
        .output()
        .unwrap();
    assert!(f.status.success(), "{}", stderr(&f));
    let o = run_in(p, &["import", "fio", "out.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    let run = &doc["steps"][0]["run"];
    assert!(
        run["notes"].to_string().contains("completion latency"),
        "{}",
        run["notes"]
    );
    assert!(run["notes"].to_string().contains("no latency histogram"));
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("out.json")).unwrap()).unwrap();
    let want = &fio["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"];
    let got = run["totals"]["read"]["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["percentile"] == 99.0)
        .unwrap();
    assert_eq!(&got["value_ns"], want);
}

#[test]
fn ctrl_c_on_a_suite_run_by_fio_interrupts_it_and_resume_finishes_it() {
    // The SIGINT comes as fio starts a step: in its first tenths of a second fio does
    // not catch SIGINT yet, and a SIGINT then used to kill it without a result, which
    // was reported as the step failing. It is an interruption, as on drivelab's engine.
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let child = common::drivelab()
        .args([
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            "--size",
            "16M",
            "--tests",
            "SEQ1M Q1T1,RND4K Q4T1",
            "--no-db",
            "--out",
            "b",
            "--engine",
            "fio",
            "t.bin",
        ])
        .current_dir(p)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let job = p.join("b/fio/seq1m-q1t1-read-run1/job.fio");
    common::wait_until("the first step's fio job", || job.exists());
    common::signal(child.id(), "INT");
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("continue with: drivelab run --resume b"),
        "{err}"
    );
    for leak in ["Some(", "None"] {
        assert!(!err.contains(leak), "{err}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted", "{err}");
    for s in doc["steps"].as_array().unwrap() {
        assert_ne!(s["status"], "failed", "{s}");
    }
    // Sensors are not sampled beside fio: refused on resume too.
    let r = run_in(
        p,
        &[
            "run",
            "--resume",
            "b",
            "--no-db",
            "--sensor-cmd",
            "echo 1 W",
        ],
    );
    refused_alone(&r, "--sensor-cmd: the bundle's steps are run by fio");
    let r = run_in(p, &["run", "--resume", "b", "--no-db"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/run.json")).unwrap()).unwrap();
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 4);
}

#[test]
fn sensor_options_are_refused_where_their_readings_would_go_nowhere() {
    // drivelab samples sensors beside its own engine only, and this machine's sensors
    // say nothing of other hosts: refused before anything is made, not silently dropped.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("h.txt"), "127.0.0.2\n").unwrap();
    let hwmon = "/sys/class/hwmon/hwmon0";
    let cases: [(&[&str], &str); 6] = [
        (
            &["--engine", "fio", "--sensor-cmd", "echo 1 W"],
            "--sensor-cmd: not sampled with --engine fio",
        ),
        (
            &["--engine", "fio", "--sensor-hwmon", hwmon],
            "--sensor-hwmon: not sampled with --engine fio",
        ),
        (
            &["--engine", "fio", "--sensors", "nvme"],
            "--sensors: not sampled with --engine fio",
        ),
        (
            &["--host", "127.0.0.2", "--sensor-cmd", "echo 1 W"],
            "--sensor-cmd: the sensors are this machine's, and --host runs",
        ),
        (
            &["--hosts", "h.txt", "--sensors", "hwmon"],
            "--sensors: the sensors are this machine's, and --hosts runs",
        ),
        (
            &[
                "--host",
                "127.0.0.2",
                "--sensor-cmd",
                "x",
                "--sensor-hwmon",
                hwmon,
            ],
            "--sensor-cmd, --sensor-hwmon: the sensors",
        ),
    ];
    for (extra, want) in cases {
        let mut a = vec![
            "run",
            "quick",
            "--short",
            "--size",
            "16M",
            "--overwrite",
            "t.bin",
            "--no-db",
            "--out",
            "o",
        ];
        a.extend(extra);
        let o = run_in(d.path(), &a);
        refused_alone(&o, want);
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["h.txt"], "{a:?}");
    }
}

#[test]
fn emitting_again_into_a_directory_where_fio_ran_keeps_its_results() {
    // docs/fio.md and every job file say: run fio in DIR. That DIR then holds fio's
    // results beside the job files, and the suite may still be emitted into it again.
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let emit = |size: &str| {
        let a = [
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            "--size",
            size,
            "--tests",
            "SEQ1M Q1T1",
            "--emit-fio",
            "jobs",
            "t.bin",
            "--overwrite",
        ];
        run_in(p, &a)
    };
    let o = emit("16M");
    assert!(o.status.success(), "{}", stderr(&o));
    let job = p.join("jobs/01-seq1m-q1t1-read-run1.fio");
    let text = std::fs::read_to_string(&job).unwrap();
    // The job's own run line, run in DIR.
    let run = text
        .lines()
        .find_map(|l| l.strip_prefix("; run: fio "))
        .unwrap();
    let f = fio()
        .args(run.split(' '))
        .current_dir(p.join("jobs"))
        .output()
        .unwrap();
    assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
    let result = p.join("jobs/01-seq1m-q1t1-read-run1.json");
    let before = std::fs::read(&result).unwrap();
    assert!(!before.is_empty());
    let o = emit("8M");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("01-seq1m-q1t1-read-run1.json) left as it is"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&result).unwrap(),
        before,
        "fio's result is left alone"
    );
    assert_eq!(
        option(&std::fs::read_to_string(&job).unwrap(), "size"),
        Some("8388608")
    );
    // It still imports.
    let i = run_in(
        p,
        &[
            "import",
            "fio",
            "jobs/01-seq1m-q1t1-read-run1.json",
            "--out",
            "imp",
        ],
    );
    assert!(i.status.success(), "{}", stderr(&i));
    // Anything else in DIR is still refused.
    std::fs::write(p.join("jobs/notes.json"), "{}").unwrap();
    refused_alone(&emit("8M"), "holds notes.json");
}

/// The red team's injection (issue #22): a target whose newline would start a fio option
/// of its own (`exec_prerun`, a command fio runs) is refused before any job file is
/// written or fio started, locally and as emitted job files; so is every other character
/// fio's parser reads as something else.
#[test]
fn a_target_or_directory_fio_would_read_as_options_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let pwned = d.path().join("PWNED");
    let evil = format!(
        "{}/a\nexec_prerun=touch {}",
        d.path().display(),
        pwned.display()
    );
    for extra in [
        &["--engine", "fio"][..],
        &["--emit-fio", "jobs"][..],
        &["--engine", "fio", "--out", "b;x"][..],
    ] {
        let target = if extra.contains(&"b;x") {
            "t.bin"
        } else {
            evil.as_str()
        };
        let mut a = vec!["run", "quick", "--short", "--runs", "1", "--no-db", target];
        a.extend_from_slice(extra);
        let o = run_in(d.path(), &a);
        let want = if target == "t.bin" { "--out" } else { "TARGET" };
        refused_alone(&o, want);
        assert!(!pwned.exists(), "{extra:?}: fio ran the injected command");
    }
    for bad in [
        "a;b",
        "a#b",
        "a${HOME}",
        "a$pagesize",
        "a[x]",
        "a\rb",
        " a",
        "a\u{1b}b",
    ] {
        let o = run_in(
            d.path(),
            &[
                "run",
                "quick",
                "--short",
                "--no-db",
                bad,
                "--emit-fio",
                "jobs",
            ],
        );
        refused_alone(&o, "TARGET");
        assert!(!stderr(&o).contains('\u{1b}'), "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing made"
    );
}

/// Issue #22: a json+ result whose direction did no I/O (total_ios 0) while its
/// latency bins hold millions is refused, not imported as an empty direction.
#[test]
fn bins_holding_ios_of_a_direction_that_did_none_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-jsonplus.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    doc["jobs"][0]["read"]["total_ios"] = 0.into();
    std::fs::write(d.path().join("r.json"), doc.to_string()).unwrap();
    let o = run_in(d.path(), &["import", "fio", "r.json", "--out", "b"]);
    refused_alone(&o, "total_ios 0");
    assert!(!d.path().join("b").exists());
}

/// The red team's imports (issue #23): values fio would not have run with were cast
/// down or misread (numjobs 2^32 became 0 jobs, an iodepth past 32 bits became 1,
/// `rw=trim` was shown as reads). Each is refused in one line naming the file and the
/// field, exit 2, nothing written.
#[test]
fn values_fio_would_not_have_are_refused_naming_the_file_and_the_field() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-jsonplus.json"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit, &str); 7] = [
        (
            "numjobs",
            |v| v["jobs"][0]["job options"]["numjobs"] = "4294967296".into(),
            "numjobs=4294967296",
        ),
        (
            "iodepth",
            |v| v["jobs"][0]["job options"]["iodepth"] = "4294967297".into(),
            "iodepth=4294967297",
        ),
        (
            "bs",
            |v| v["jobs"][0]["job options"]["bs"] = "0".into(),
            "bs=0",
        ),
        (
            "mean",
            |v| v["jobs"][0]["read"]["clat_ns"]["mean"] = (-5.5).into(),
            "read clat_ns mean -5.5",
        ),
        (
            "trim",
            |v| v["jobs"][0]["job options"]["rw"] = "trim".into(),
            "rw=trim",
        ),
        (
            "trimdata",
            |v| {
                let r = v["jobs"][0]["read"].clone();
                v["jobs"][0]["trim"] = r;
            },
            "trim total_ios",
        ),
        (
            "rwmix",
            |v| v["jobs"][0]["job options"]["rwmixread"] = "101".into(),
            "rwmixread=101",
        ),
    ];
    for (name, edit, field) in cases {
        let mut v = doc.clone();
        edit(&mut v);
        let file = format!("{name}.json");
        std::fs::write(d.path().join(&file), v.to_string()).unwrap();
        let out = format!("b-{name}");
        let o = run_in(d.path(), &["import", "fio", &file, "--out", &out]);
        refused_alone(&o, field);
        assert!(stderr(&o).contains(&file), "{}", stderr(&o));
        assert!(!d.path().join(&out).exists(), "{name}");
    }
}

/// One result given twice (the same path twice, inside a directory also given, or a
/// copy under another name) is imported once, and said once per repeat.
#[test]
fn a_result_given_twice_is_imported_once_and_said_once() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-jsonplus.json"
    );
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    std::fs::copy(src, set.join("a.json")).unwrap();
    std::fs::copy(src, d.path().join("copy.json")).unwrap();
    let o = run_in(
        d.path(),
        &[
            "import",
            "fio",
            "set",
            "set/a.json",
            "copy.json",
            "--out",
            "b",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("given twice: imported once").count(),
        1,
        "{err}"
    );
    assert_eq!(err.matches("identical content").count(), 1, "{err}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("b/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["steps"].as_array().unwrap().len(), 1, "{run}");
}

/// `/dev/sdb` of two hosts is two drives (issue #23): two imported client results
/// naming one device path on two hosts keep `kind: block` with an unknown (null)
/// capacity, the database keeps each run's host, and the report neither merges them
/// into one drive nor numbers the second as a rerun ("#2"): each label says its host.
#[test]
fn one_device_path_on_two_hosts_is_two_drives() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-jsonplus.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let mut job = doc["jobs"][0].take();
    doc.as_object_mut().unwrap().remove("jobs");
    job["job options"]["filename"] = "/dev/sdb".into();
    for h in ["host-a", "host-b"] {
        job["hostname"] = h.into();
        job["port"] = 8765.into();
        doc["client_stats"] = serde_json::json!([job.clone()]);
        std::fs::write(d.path().join(format!("{h}.json")), doc.to_string()).unwrap();
        let o = run_in(
            d.path(),
            &["import", "fio", &format!("{h}.json"), "--out", h],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let run: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.path().join(h).join("run.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(run["target"]["kind"], "block_device");
        assert!(
            run["target"]["capacity_bytes"].is_null(),
            "{}",
            run["target"]
        );
        assert_eq!(run["host"]["hostname"], h);
    }
    let o = run_in(
        d.path(),
        &["db", "record", "--db", "x.sqlite", "host-a", "host-b"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_in(d.path(), &["db", "list", "--db", "x.sqlite", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut hosts: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["device_capacity_bytes"].is_null(), "{r}");
            // The run's time is fio's (the result's timestamp), not the import's.
            assert_eq!(r["started_at"], "2026-11-24T20:28:02.289Z", "{r}");
            assert_eq!(r["device_kind"], "block");
            (
                r["host_name"].as_str().unwrap(),
                r["device_path"].as_str().unwrap(),
            )
        })
        .collect();
    hosts.sort();
    assert_eq!(hosts, [("host-a", "/dev/sdb"), ("host-b", "/dev/sdb")]);
    let o = run_in(d.path(), &["report", "host-a", "host-b", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 drive(s)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.contains("/dev/sdb on host-a"));
    assert!(html.contains("/dev/sdb on host-b"));
    assert!(!html.contains("/dev/sdb #2"));
}

/// `compare`'s rows for imported tests say what each test did (rw, block size, QD and
/// jobs), not fio's job name alone (every job of a grid often has one name).
#[test]
fn compare_rows_of_imports_say_what_the_tests_did() {
    let d = tempfile::tempdir().unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/fio_result/null-jsonplus.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let o = &mut doc["jobs"][0]["job options"];
    o["iodepth"] = "16".into();
    o["numjobs"] = "4".into();
    std::fs::write(d.path().join("r.json"), doc.to_string()).unwrap();
    for (b, name) in [("a", "SSD A"), ("b", "SSD B")] {
        let o = run_in(
            d.path(),
            &["import", "fio", "r.json", "--drive", name, "--out", b],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = run_in(d.path(), &["compare", "a", "b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("randread 4K QD16 ×4 jobs (x) read IOPS"),
        "{out}"
    );
}
