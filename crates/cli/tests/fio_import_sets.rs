//! `drivelab import fio FILES_OR_DIRS…`: sets of real fio results (made here by fio's
//! null engine, whose results have fio's exact shape in a fraction of a second) as one
//! drive's bundle: a grid as queue-depth sweeps with a peak run's knee and charts, and
//! many jobs' per-job logs in one shared directory as series. Needs Debian's fio.

mod common;

use std::path::Path;
use std::process::Command;

use common::{run_in, stderr};
use serde_json::Value;

/// Runs a job file in `dir` (one JSON document, `out`).
fn fio(dir: &Path, job: &str, out: &str) {
    common::fio_job(dir, job, "json", out)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

const QDS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The lowest QD whose IOPS (fio's own) reach 95 % of the best of `pts` (qd, iops).
fn knee_by_hand(pts: &[(u32, f64)]) -> u32 {
    let best = pts.iter().map(|p| p.1).fold(0.0, f64::max);
    pts.iter()
        .filter(|p| p.1 >= 0.95 * best)
        .map(|p| p.0)
        .min()
        .unwrap()
}

/// One fio run of the 7 × 7 grid's 49 sections one after another (stonewall), each
/// 100 ms, its jobs written out into `p/grid` as 49 result files, as a grid run one job
/// file at a time leaves them; returns the whole document and fio's IOPS by (iodepth,
/// numjobs).
fn grid(p: &Path) -> (Value, std::collections::BTreeMap<(u32, u32), f64>) {
    let mut job = String::from(
        "[global]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\ntime_based=1\nruntime=100ms\n\
         group_reporting=1\nstonewall\n",
    );
    for d in QDS {
        for j in QDS {
            job += &format!("[d{d}j{j}]\niodepth={d}\nnumjobs={j}\n");
        }
    }
    fio(p, &job, "all.json");
    let all = read_json(&p.join("all.json"));
    let jobs = all["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 49);
    std::fs::create_dir(p.join("grid")).unwrap();
    let mut iops = std::collections::BTreeMap::new();
    for j in jobs {
        let mut one = all.clone();
        one["jobs"] = Value::Array(vec![j.clone()]);
        let name = j["jobname"].as_str().unwrap();
        let text = serde_json::to_string_pretty(&one).unwrap();
        std::fs::write(p.join("grid").join(format!("{name}.json")), text).unwrap();
        let o = &j["job options"];
        let dj: (u32, u32) = (
            o["iodepth"].as_str().unwrap().parse().unwrap(),
            o["numjobs"].as_str().unwrap().parse().unwrap(),
        );
        iops.insert(dj, j["read"]["iops"].as_f64().unwrap());
    }
    (all, iops)
}

#[test]
fn a_7x7_grid_imported_at_once_is_swept_with_the_knee_at_95_percent_of_fios_peak() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let (all, iops) = grid(p);
    let o = run_in(
        p,
        &["import", "fio", "grid", "--drive", "Null 7x7", "--out", "b"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&p.join("b/run.json"));
    assert_eq!(doc["steps"].as_array().unwrap().len(), 49);
    let sweeps = doc["summary"]["analysis"]["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 2, "the depth and the threads method");
    for sw in sweeps {
        let (by_depth, unit) = (sw["method"] == "depth", sw["unit"].as_str().unwrap());
        assert_eq!(unit, "IOPS");
        let fios: Vec<(u32, f64)> = QDS
            .iter()
            .map(|&q| {
                let key = if by_depth { (q, 1) } else { (1, q) };
                (q, iops[&key])
            })
            .collect();
        let curve = sw["sweep"]["curve"].as_array().unwrap();
        let qds: Vec<u64> = curve.iter().map(|c| c["qd"].as_u64().unwrap()).collect();
        assert_eq!(qds, vec![1, 2, 4, 8, 16, 32, 64], "{}", sw["label"]);
        for (c, (_, f)) in curve.iter().zip(&fios) {
            let mine = c["iops"].as_f64().unwrap();
            assert!((mine / f - 1.0).abs() < 1e-9, "{mine} against fio's {f}");
            assert!(c["stderr"].is_null(), "no logs: no noise known, not 0");
        }
        let knee = &sw["sweep"]["knee"];
        assert_eq!(
            knee["qd"].as_u64().unwrap() as u32,
            knee_by_hand(&fios),
            "{}: {fios:?}",
            sw["label"]
        );
        // QoS at the knee.
        let k = &curve[knee["index"].as_u64().unwrap() as usize];
        assert!(k["lat_mean_us"].as_f64().is_some() && k["lat_p99_us"].as_f64().is_some());
    }
    let grid = &doc["summary"]["analysis"]["grids"][0];
    assert_eq!(grid["points"].as_array().unwrap().len(), 49);
    assert!(grid["points"][0]["stderr"].is_null());
    // Files named d1j1, d1j16, d1j2, …: the steps by numjobs, then iodepth, rising.
    let order: Vec<(u64, u64)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let p = &s["params"];
            (
                p["numjobs"].as_u64().unwrap(),
                p["iodepth"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(order, sorted);
    // The metrics and the report: the peak section's curves, knees and the grid chart.
    let metrics = doc["summary"]["metrics"].to_string();
    assert!(metrics.contains("4K random read, iodepth rising at 1 job knee QD"));
    let r = run_in(p, &["report", "b", "-o", "r.html"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let html = std::fs::read_to_string(p.join("r.html")).unwrap();
    for id in [
        "peak-4k-random-read-iodepth-throughput",
        "peak-4k-random-read-jobs-throughput",
        "peak-4k-random-read-iodepth-latency",
        "fio-grid-null-7x7-4k-random-read-grid",
    ] {
        assert!(html.contains(id), "{id}");
    }
    assert!(html.contains("Null 7x7"));
    // The run's time is fio's (its timestamp), not the import's.
    let end_ms = all["timestamp_ms"].as_u64().unwrap();
    let created = doc["created_at"].as_str().unwrap();
    let t = humantime::parse_rfc3339(created).unwrap();
    let ms = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert!(
        ms <= end_ms && end_ms - ms < 60_000,
        "{created} against {end_ms}"
    );
}

/// Per-window I/Os of fio's own logs: the sum over the job's files of each row's value
/// scaled to the window (rate × window).
fn logged_windows(dir: &Path, prefix: &str, jobs: u32) -> usize {
    (1..=jobs)
        .map(|n| {
            let t = std::fs::read_to_string(dir.join(format!("{prefix}_iops.{n}.log"))).unwrap();
            t.lines()
                .filter(|l| l.split(',').nth(1).unwrap().trim() != "0")
                .count()
        })
        .max()
        .unwrap()
}

#[test]
fn logs_of_16_and_64_jobs_in_one_directory_import_without_refusal_or_invented_zero_windows() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir_all(p.join("logs")).unwrap();
    std::fs::create_dir_all(p.join("res")).unwrap();
    // All runs' logs in one directory, each run its own prefix (as a grid script does).
    // Each job is held to 2 000 IOPS (rate_iops): unbounded null-engine jobs starved of
    // CPU on a loaded machine log too few windows to be any drive's logs.
    let runs = [(16, 250, true), (64, 250, true), (16, 1000, false)];
    for (jobs, ms, grouped) in runs {
        let name = format!("j{jobs}-{ms}ms");
        fio(
            p,
            &format!(
                "[global]\nioengine=null\nsize=1g\nrw=randwrite\nbs=4k\nrate_iops=2000\ntime_based=1\nruntime=2\n\
                 numjobs={jobs}\n{}log_avg_msec={ms}\nwrite_iops_log=logs/{name}\n\
                 write_bw_log=logs/{name}\nwrite_lat_log=logs/{name}\n[w]\n",
                if grouped { "group_reporting=1\n" } else { "" }
            ),
            &format!("res/{name}.json"),
        );
    }
    let o = run_in(
        p,
        &[
            "import", "fio", "res", "--logs", "logs", "--drive", "n", "--out", "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&p.join("b/run.json"));
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "one result per run, group_reporting or not");
    for st in steps {
        let run = &st["run"];
        let recs = run["series"]["records"].as_array().unwrap();
        let total = run["totals"]["write"]["ops"].as_u64().unwrap();
        let ops: Vec<u64> = recs
            .iter()
            .map(|r| r["write"]["ops"].as_u64().unwrap())
            .collect();
        assert_eq!(ops.iter().sum::<u64>(), total, "{}", st["name"]);
        // The null engine does I/O in every window fio logged: none is zero here.
        let jobs = st["params"]["numjobs"].as_u64().unwrap() as u32;
        let ms = st["config"]["log_interval_ns"].as_u64().unwrap() / 1_000_000;
        let name = format!("j{jobs}-{ms}ms");
        let logged = logged_windows(&p.join("logs"), &name, jobs);
        assert!(recs.len() >= logged, "{}: {ops:?}", st["name"]);
        assert!(ops.iter().all(|&o| o > 0), "{}: {ops:?}", st["name"]);
        // Latency of one kind: the series' is the totals' (both from fio's logs of it).
        let notes = run["notes"].to_string();
        assert!(notes.contains("logs), as the totals are"), "{notes}");
        assert!(recs.iter().any(|r| r["write"]["lat_mean_ns"].is_number()));
    }
    // Each series is analysed: no stall where the null engine always did I/O.
    let series = doc["summary"]["analysis"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 3);
    assert!(series.iter().all(|s| s["stall_windows"] == 0), "{series:?}");
    // Another job's logs (a prefix fio wrote for another run) are refused, not taken.
    let other = p.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut r = read_json(&p.join("res/j16-250ms.json"));
    r["jobs"][0]["read"]["total_ios"] = Value::from(0);
    r["jobs"][0]["write"]["total_ios"] = Value::from(10);
    std::fs::write(other.join("x.json"), r.to_string()).unwrap();
    let o = run_in(
        p,
        &["import", "fio", "other", "--logs", "logs", "--out", "c"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not this job's logs"), "{}", stderr(&o));
    assert!(!p.join("c").exists());
}

/// A result of `grid`'s with its drive `k` times as fast: every count and rate of the
/// reads scaled alike (time and latency kept), as another drive's run of the same grid.
fn scaled(text: &str, k: f64) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let r = &mut v["jobs"][0]["read"];
    for key in [
        "io_bytes",
        "io_kbytes",
        "bw_bytes",
        "bw",
        "total_ios",
        "short_ios",
    ] {
        if let Some(x) = r[key].as_u64() {
            r[key] = Value::from((x as f64 * k).round() as u64);
        }
    }
    for key in ["iops", "bw_mean", "iops_mean"] {
        if let Some(x) = r[key].as_f64() {
            r[key] = Value::from(x * k);
        }
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// Four drives' 7 × 7 grids (one real fio grid, and three drives as fast as it times 0.5,
/// 2 and 3): one report draws four named curves in each sweep chart, each marked at
/// its seven QDs, and one `compare` shows four named columns.
#[test]
fn four_drives_grids_are_four_named_curves_in_one_report_and_four_columns_in_compare() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    grid(p);
    let drives = [
        ("SSD A", 1.0),
        ("SSD B", 0.5),
        ("SSD C", 2.0),
        ("SSD D", 3.0),
    ];
    let mut bundles = Vec::new();
    for (i, (name, k)) in drives.iter().enumerate() {
        let dir = p.join(format!("grid{i}"));
        std::fs::create_dir(&dir).unwrap();
        for f in std::fs::read_dir(p.join("grid")).unwrap() {
            let f = f.unwrap().path();
            let text = std::fs::read_to_string(&f).unwrap();
            std::fs::write(dir.join(f.file_name().unwrap()), scaled(&text, *k)).unwrap();
        }
        let out = format!("b{i}");
        let dir = dir.to_str().unwrap().to_string();
        let o = run_in(p, &["import", "fio", &dir, "--drive", name, "--out", &out]);
        assert!(o.status.success(), "{}", stderr(&o));
        bundles.push(out);
    }
    let b: Vec<&str> = bundles.iter().map(String::as_str).collect();
    let mut args = vec!["report"];
    args.extend(&b);
    args.extend(["-o", "r.html"]);
    let o = run_in(p, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        common::stdout(&o).contains("4 drive(s), 4 bundle(s)"),
        "{}",
        common::stdout(&o)
    );
    let html = std::fs::read_to_string(p.join("r.html")).unwrap();
    for id in [
        "peak-4k-random-read-iodepth-throughput",
        "peak-4k-random-read-jobs-throughput",
    ] {
        let at = html.find(&format!(r#"id="fig-{id}""#)).expect(id);
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        for (name, _) in drives {
            let curve = format!(r#"data-series="{name}" data-kind="line" data-n="7""#);
            assert!(svg.contains(&curve), "{id}: no curve of {name}");
            let marks = format!(r#"data-series="{name}" data-kind="markers" data-n="7""#);
            assert!(svg.contains(&marks), "{id}: {name}'s QDs not marked");
        }
    }
    // One compare of the four, each column under its drive's name; and under the
    // names the reader gives.
    let mut args = vec!["compare"];
    args.extend(&b);
    let o = run_in(p, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    for (col, (name, _)) in ["A", "B", "C", "D"].iter().zip(drives) {
        assert!(out.contains(&format!("{col} = {name} [fio]")), "{out}");
    }
    let header = out
        .lines()
        .find(|l| l.starts_with("METRIC"))
        .unwrap_or_else(|| panic!("no column header: {out}"));
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        cols,
        ["METRIC", "UNIT", "A", "B", "B/A", "C", "C/A", "D", "D/A"],
        "{out}"
    );
    // The drives' peaks against the first: as fast as each was made.
    let ratios = |l: &str| -> Vec<String> {
        l.split_whitespace()
            .filter(|t| t.ends_with('x') && t.contains('.'))
            .map(str::to_string)
            .collect()
    };
    assert!(
        out.lines()
            .any(|l| l.contains(" peak") && ratios(l) == ["0.50x", "2.00x", "3.00x"]),
        "{out}"
    );
    args.extend([
        "--label", "w", "--label", "x", "--label", "y", "--label", "z",
    ]);
    let o = run_in(p, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    for (col, name) in ["A", "B", "C", "D"].iter().zip(["w", "x", "y", "z"]) {
        assert!(out.contains(&format!("{col} = {name} [fio]")), "{out}");
    }
}

/// Runs `drivelab args` in `dir`, killed if it has not ended after 300 s (a hang fails
/// the test instead of stalling the suite; no assertion depends on the time).
fn run_or_kill(dir: &Path, args: &[&str]) -> std::process::Output {
    let child = common::drivelab()
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, ended) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if ended
            .recv_timeout(std::time::Duration::from_secs(300))
            .is_err()
        {
            common::signal(pid, "KILL");
        }
    });
    let o = child.wait_with_output().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    o
}

#[test]
fn a_fifo_is_refused_at_once_and_one_in_a_directory_is_skipped_aloud() {
    let d = tempfile::tempdir().unwrap();
    let mkfifo = |p: &Path| assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    mkfifo(&d.path().join("f.json"));
    let o = run_or_kill(d.path(), &["import", "fio", "f.json", "--drive", "X"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("f.json is a FIFO, not a regular file"), "{e}");
    std::fs::create_dir(d.path().join("set")).unwrap();
    mkfifo(&d.path().join("set/g.json"));
    let o = run_or_kill(d.path(), &["import", "fio", "set", "--drive", "X"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("g.json is a FIFO, not a regular file: skipped"),
        "{e}"
    );
    assert!(e.contains("a directory without fio results"), "{e}");
    assert!(!d.path().join("drivelab-results").exists());
}

/// One fio job file run on two hosts (its result's `hostname` says which, as fio's
/// client mode writes it), imported as two drives: the host is the run's identity, not
/// the test's, so `compare` takes the two and names both.
#[test]
fn two_hosts_imports_of_one_job_file_compare_under_their_drives() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fio(
        p,
        "[global]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\ntime_based=1\nruntime=100ms\n\
         group_reporting=1\nstonewall\n[q1]\niodepth=1\n[q8]\niodepth=8\n",
        "one.json",
    );
    let one = read_json(&p.join("one.json"));
    for (host, drive) in [("host-a", "A"), ("host-b", "B")] {
        let mut doc = one.clone();
        for j in doc["jobs"].as_array_mut().unwrap() {
            j["hostname"] = host.into();
        }
        std::fs::write(
            p.join(format!("{host}.json")),
            serde_json::to_string(&doc).unwrap(),
        )
        .unwrap();
        let o = run_in(
            p,
            &[
                "import",
                "fio",
                &format!("{host}.json"),
                "--drive",
                drive,
                "--out",
                drive,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let run = read_json(&p.join(drive).join("run.json"));
        assert_eq!(run["host"]["hostname"], host);
        for s in run["steps"].as_array().unwrap() {
            let name = s["name"].as_str().unwrap();
            assert!(!name.contains("host-"), "the host names the step: {name}");
        }
    }
    let o = run_in(p, &["compare", "A", "B"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    assert!(
        out.contains("A = A [fio]") && out.contains("B = B [fio]"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("QD8") && l.contains("1.00x")),
        "{out}"
    );
}

/// Runs one psync job of `secs` seconds on a 16 MiB file in `dir` with `logs` (fio's
/// log options), json+ into `a.json`.
fn fio_logged(dir: &Path, secs: u32, logs: &str) -> Value {
    std::fs::create_dir_all(dir).unwrap();
    let job = format!(
        "[global]\nioengine=psync\nfilename=data\nsize=16m\nrw=randread\nbs=4k\n\
         time_based=1\nruntime={secs}s\n[a]\n{logs}"
    );
    common::fio_job(dir, &job, "json+", "a.json");
    read_json(&dir.join("a.json"))
}

/// The rows of fio's histogram log `p`: (stamp ms, the 1856 counts).
fn hist_rows(p: &Path) -> Vec<(u64, Vec<u64>)> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            (f[0], f[3..].to_vec())
        })
        .collect()
}

/// One window of a series: read I/Os, p50 and p99 (ns).
type Window = (u64, Option<u64>, Option<u64>);

/// The step's series: (window length ms, its windows).
fn windows(run: &Value) -> (u64, Vec<Window>) {
    let s = &run["steps"][0]["run"]["series"];
    let recs = s["records"].as_array().unwrap();
    let w = recs
        .iter()
        .map(|r| {
            let d = &r["read"];
            (
                d["ops"].as_u64().unwrap(),
                d["lat_p50_ns"].as_u64(),
                d["lat_p99_ns"].as_u64(),
            )
        })
        .collect();
    (s["interval_ns"].as_u64().unwrap() / 1_000_000, w)
}

/// Each histogram row's counts added into the window of `iv` ms its span (from the
/// previous row's stamp, `h` ms for the first and after a gap) mostly lies in, from
/// `t0`; and whether each window's rows lie wholly in it (no row's span, drifted on a
/// loaded host, reaches into another window).
fn rows_per_window(
    rows: &[(u64, Vec<u64>)],
    h: u64,
    t0: u64,
    iv: u64,
    n: usize,
) -> (Vec<Vec<u64>>, Vec<bool>) {
    let mut out = vec![vec![0u64; rows[0].1.len()]; n];
    let mut whole = vec![true; n];
    let mut prev = None;
    for (t, c) in rows {
        let from = match prev {
            Some(p) if t - p <= h + h / 2 => p,
            _ => t.saturating_sub(h),
        };
        prev = Some(*t);
        // The window with the most of the span (the earlier on a tie); time before
        // the grid counts in the first window, after it in the last.
        let overlap = |k: u64| {
            let lo = if k == 0 { 0 } else { t0 + k * iv };
            let hi = if k + 1 == n as u64 {
                u64::MAX
            } else {
                t0 + (k + 1) * iv
            };
            t.min(&hi).saturating_sub(from.max(lo))
        };
        let k = (0..n as u64)
            .max_by_key(|&k| (overlap(k), std::cmp::Reverse(k)))
            .unwrap() as usize;
        for (o, v) in out[k].iter_mut().zip(c) {
            *o += v;
        }
        let touched: Vec<usize> = (0..n).filter(|&w| overlap(w as u64) > 0).collect();
        if touched.len() > 1 {
            touched.iter().for_each(|&w| whole[w] = false);
        }
    }
    (out, whole)
}

/// fio's histogram logs at their own interval (`log_hist_msec`), not the series'
/// (`log_avg_msec`), real fio 3.33 runs: rows every 250 ms under 1 s windows are each
/// window's exact histogram; rows every 1 s under 250 ms windows are no window's (no
/// window gets a second's percentiles: a note names the log); a job with histogram
/// logs alone has their series.
#[test]
fn histogram_logs_are_placed_by_their_own_interval() {
    use drivelab_suites::fio::bins;
    let d = tempfile::tempdir().unwrap();
    // Histograms finer than the series: 4 rows per window.
    let p = d.path().join("fine");
    fio_logged(
        &p,
        3,
        "write_iops_log=a\nwrite_bw_log=a\nlog_avg_msec=1000\nwrite_hist_log=a\nlog_hist_msec=250\n",
    );
    let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&p.join("b/run.json"));
    let (iv, w) = windows(&run);
    assert_eq!(iv, 1000);
    let first_iops: u64 = std::fs::read_to_string(p.join("a_iops.1.log"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let rows = hist_rows(&p.join("a_clat_hist.1.log"));
    let (want, _) = rows_per_window(&rows, 250, first_iops.saturating_sub(1000), 1000, w.len());
    // Every window but the last (which also takes the unlogged tail) holds its rows.
    for k in 0..w.len() - 1 {
        assert_eq!(w[k].1, bins::percentile(&want[k], 50.0), "window {k}");
        assert_eq!(w[k].2, bins::percentile(&want[k], 99.0), "window {k}");
        assert!(w[k].2.is_some(), "window {k} has no p99");
    }
    // Histograms coarser than the series: no window has a second's percentiles.
    let p = d.path().join("coarse");
    fio_logged(
        &p,
        3,
        "write_iops_log=a\nwrite_bw_log=a\nlog_avg_msec=250\nwrite_hist_log=a\nlog_hist_msec=1000\n",
    );
    let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&p.join("b/run.json"));
    let (iv, w) = windows(&run);
    assert_eq!(iv, 250);
    assert!(w.len() >= 10, "{w:?}");
    assert!(w.iter().all(|x| x.1.is_none() && x.2.is_none()), "{w:?}");
    assert!(w.iter().all(|x| x.0 > 0), "{w:?}");
    let notes = run["steps"][0]["run"]["notes"].to_string();
    assert!(
        notes.contains("a_clat_hist.1.log: fio's histogram rows cover 1000 ms each (log_hist_msec) and the series' windows 250 ms"),
        "{notes}"
    );
    // Histogram logs alone: the series is theirs, on their interval, each window's
    // I/Os its row's counts.
    let p = d.path().join("alone");
    let fio_doc = fio_logged(&p, 3, "write_hist_log=a\nlog_hist_msec=500\n");
    let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&p.join("b/run.json"));
    let (iv, w) = windows(&run);
    assert_eq!(iv, 500);
    assert_eq!(run["steps"][0]["config"]["log_interval_ns"], 500_000_000);
    let rows = hist_rows(&p.join("a_clat_hist.1.log"));
    let (want, whole) = rows_per_window(&rows, 500, rows[0].0.saturating_sub(500), 500, w.len());
    for k in 0..w.len() - 1 {
        // A row's I/Os are spread over the windows its span overlaps, as a rate log's.
        if whole[k] {
            assert_eq!(w[k].0, want[k].iter().sum::<u64>(), "window {k}: {w:?}");
        }
        assert_eq!(w[k].2, bins::percentile(&want[k], 99.0), "window {k}");
    }
    let total = fio_doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(w.iter().map(|x| x.0).sum::<u64>(), total);
    // Rows of another run (twice the I/Os) are refused in one line naming the log,
    // beside rate logs and alone.
    for case in ["fine", "alone"] {
        let p = d.path().join(case);
        let log = p.join("a_clat_hist.1.log");
        let doubled = std::fs::read_to_string(&log).unwrap().repeat(2);
        std::fs::write(&log, doubled).unwrap();
        let o = run_in(&p, &["import", "fio", "a.json", "--out", "c"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("a_clat_hist.1.log: "), "{case}: {e}");
        assert!(!p.join("c").exists());
    }
}

/// One fio run of `section` (options, one a line) on the null engine for 100 ms, its
/// result written to `dir/out`.
fn fio_null(dir: &Path, section: &str, out: &str) {
    fio(
        dir,
        &format!(
            "[global]\nioengine=null\nsize=64m\ntime_based=1\nruntime=100ms\n[j]\n{section}\n"
        ),
        out,
    );
}

fn imported(p: &Path, what: &str, out: &str) -> Value {
    let o = run_in(p, &["import", "fio", what, "--out", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    read_json(&p.join(out).join("run.json"))
}

fn notes_of(doc: &Value) -> String {
    doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// fio's `bsrange` and per-direction `bs`/`bssplit` (its own grammar, options.c) are
/// what the config states — never fio's default 4K — and a range's result is never
/// pooled with a fixed-4K one into a sweep.
#[test]
fn size_ranges_and_per_direction_sizes_are_stated_and_never_pooled_with_fixed_4k() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir(p.join("set")).unwrap();
    fio_null(p, "rw=randread\nbsrange=4k-64k", "set/e_bsr.json");
    fio_null(p, "rw=randread\nbs=4k\niodepth=8", "set/e_qd8.json");
    let doc = imported(p, "set", "b");
    assert_eq!(doc["summary"]["analysis"]["sweeps"], serde_json::json!([]));
    let steps = doc["steps"].as_array().unwrap();
    let bsr = steps.iter().find(|s| s["params"]["iodepth"] == 1).unwrap();
    assert_eq!(bsr["config"]["bs"], serde_json::json!([]));
    assert_eq!(
        bsr["config"]["bs_mix"],
        serde_json::json!({"read": {"range": {"min_bytes": 4096, "max_bytes": 65536}}, "write": null})
    );
    assert!(
        bsr["name"].as_str().unwrap().contains("4K-64K"),
        "{}",
        bsr["name"]
    );
    let notes = notes_of(&doc);
    assert!(notes.contains("from 4K to 64K (bsrange)"), "{notes}");

    // Reads 4K, writes 64K; and a bssplit per direction fio takes.
    fio_null(p, "rw=randrw\nbs=4k,64k", "e_bsd.json");
    fio_null(p, "rw=randrw\nbssplit=4k/50:64k/50,8k/100", "e_bss.json");
    let doc = imported(p, "e_bsd.json", "bsd");
    let s = &doc["steps"][0];
    assert!(
        s["name"].as_str().unwrap().contains("R 4K / W 64K"),
        "{}",
        s["name"]
    );
    let v: Value = read_json(&p.join("e_bsd.json"));
    let w = &v["jobs"][0]["write"];
    assert_eq!(
        w["io_bytes"].as_u64().unwrap(),
        65536 * w["total_ios"].as_u64().unwrap(),
        "fio's writes were 64K"
    );
    assert_eq!(s["config"]["bs_mix"]["write"]["shares"][0]["bytes"], 65536);
    let doc = imported(p, "e_bss.json", "bss");
    let mix = &doc["steps"][0]["config"]["bs_mix"];
    assert_eq!(
        mix["read"]["shares"],
        serde_json::json!([{"bytes": 4096, "percent": 50}, {"bytes": 65536, "percent": 50}])
    );
    assert_eq!(
        mix["write"]["shares"],
        serde_json::json!([{"bytes": 8192, "percent": 100}])
    );
}

/// A throttled job (`rate_iops`) is said to be one, named by its option, and kept out
/// of sweeps; `[global]`'s ioengine is the steps' `fio_ioengine`.
#[test]
fn throttled_results_get_a_note_and_stay_out_of_sweeps() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir(p.join("set")).unwrap();
    fio_null(p, "rw=randread\nbs=4k\nrate_iops=500", "set/e_rate.json");
    fio_null(p, "rw=randread\nbs=4k\niodepth=8", "set/e_qd8.json");
    let doc = imported(p, "set", "b");
    assert_eq!(doc["summary"]["analysis"]["sweeps"], serde_json::json!([]));
    let notes = notes_of(&doc);
    assert!(notes.contains("rate_iops=500"), "{notes}");
    let steps = doc["steps"].as_array().unwrap();
    let rated = steps.iter().find(|s| s["params"]["iodepth"] == 1).unwrap();
    assert_eq!(rated["params"]["fio_throttle"]["rate_iops"], "500");
    for s in steps {
        assert_eq!(s["params"]["fio_ioengine"], "null", "[global]'s engine");
        assert_eq!(s["config"]["rwmixread"], 100, "a pure read is all reads");
    }
    // A synchronous engine runs one I/O at a time whatever iodepth says: taken as 1,
    // with a note; a rw job at 100 % reads says its share.
    fio(
        p,
        "[j]
ioengine=psync
filename=f
size=1m
time_based=1
runtime=100ms
rw=rw
rwmixread=100
iodepth=16
",
        "e_ps.json",
    );
    let doc = imported(p, "e_ps.json", "ps");
    let s = &doc["steps"][0];
    assert_eq!(s["config"]["iodepth"], 1);
    assert!(
        s["name"]
            .as_str()
            .unwrap()
            .starts_with("rw (100 % reads) 4K QD1"),
        "{}",
        s["name"]
    );
    let notes = notes_of(&doc);
    assert!(notes.contains("iodepth=16 is taken as 1"), "{notes}");
}

/// A fio job file with `verify=crc32c` and `verify_backlog=16` (fio's read-back during
/// the writes) imports as drivelab's `--verify --verify-backlog 16`, said in a note;
/// one with a `verify_backlog_batch` drivelab's option cannot state is refused in one
/// line naming it (exit 2, no bundle), never imported as if it were not there.
#[test]
fn fio_verify_backlog_imports_as_drivelabs_option_and_another_batch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let job = "[global]\nfilename=t.bin\nsize=1M\nbs=4k\nrw=write\nioengine=psync\n\
               verify=crc32c\n[vb]\nverify_backlog=16\n";
    fio(p, job, "vb.json");
    let o = run_in(p, &["import", "fio", "vb.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&p.join("b/run.json"));
    let c = &doc["steps"][0]["config"];
    assert_eq!(
        (&c["verify"], &c["verify_backlog"]),
        (&Value::Bool(true), &16.into())
    );
    let notes = doc["notes"].to_string();
    assert!(notes.contains("verify_backlog=16"), "{notes}");
    // fio read back every block it wrote: its reads are the step's.
    let s = &doc["steps"][0]["run"]["totals"];
    assert_eq!(s["write"]["ops"], 256, "{s}");
    assert_eq!(s["read"]["ops"], 256, "{s}");

    // Without a verify method fio reads nothing back: no backlog either.
    fio(p, &job.replace("verify=crc32c\n", ""), "plain.json");
    let o = run_in(p, &["import", "fio", "plain.json", "--out", "plain"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = &read_json(&p.join("plain/run.json"))["steps"][0]["config"];
    assert_eq!(c["verify"], false);
    assert!(c.get("verify_backlog").is_none(), "{c}");

    // A batch of 4 per check of 16: not drivelab's option, refused in one line.
    fio(p, &format!("{job}verify_backlog_batch=4\n"), "batch.json");
    let o = run_in(p, &["import", "fio", "batch.json", "--out", "batch"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("verify_backlog_batch=4"), "{e}");
    assert!(!p.join("batch").exists(), "nothing written");
    // The batch equal to verify_backlog is fio's default: imported.
    fio(p, &format!("{job}verify_backlog_batch=16\n"), "same.json");
    let o = run_in(p, &["import", "fio", "same.json", "--out", "same"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// fio's own percentile `p` (ns) of the first job's read latency in a json+ result.
fn fio_percentile(doc: &Value, p: &str) -> u64 {
    doc["jobs"][0]["read"]["clat_ns"]["percentile"][p]
        .as_u64()
        .unwrap()
}

/// Histogram logs at `log_hist_coarseness` 2 and 6 (real fio 3.33 runs: 1856 >> c
/// columns, each 2^c of fio's bins summed): they import; a run that is one window
/// (its rows and the unlogged tail) has fio's own p50, p99 and p99.99 within the
/// column that holds them; a longer run's windows have their rows' percentiles, and
/// its rows add up within the json+ histogram summed as fio sums columns (a column
/// read one bin off would exceed it).
#[test]
fn coarse_histogram_logs_import_with_fios_percentiles_within_a_column() {
    use drivelab_suites::fio::bins;
    let d = tempfile::tempdir().unwrap();
    for c in [2u32, 6] {
        // One window of 2 s; the run 2.5 s.
        let p = d.path().join(format!("one{c}"));
        let doc = fio_logged(
            &p,
            0,
            &format!(
                "runtime=2500ms\nwrite_iops_log=a\nwrite_bw_log=a\nlog_avg_msec=2000\n\
                 write_hist_log=a\nlog_hist_msec=2000\nlog_hist_coarseness={c}\n"
            ),
        );
        let rows = hist_rows(&p.join("a_clat_hist.1.log"));
        assert_eq!(rows[0].1.len(), 1856 >> c);
        let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let run = read_json(&p.join("b/run.json"));
        let rec = &run["steps"][0]["run"]["series"]["records"];
        assert_eq!(rec.as_array().unwrap().len(), 1, "{rec}");
        for (field, pct) in [
            ("lat_p50_ns", "50.000000"),
            ("lat_p99_ns", "99.000000"),
            ("lat_p9999_ns", "99.990000"),
        ] {
            let ours = rec[0]["read"][field].as_u64().unwrap();
            let fios = fio_percentile(&doc, pct);
            assert_eq!(
                bins::idx(ours) >> c,
                bins::idx(fios) >> c,
                "coarseness {c} {pct}: {ours} ns against fio's {fios} ns"
            );
        }
        // Several windows, each of two rows.
        let p = d.path().join(format!("many{c}"));
        fio_logged(
            &p,
            3,
            &format!(
                "write_iops_log=a\nwrite_bw_log=a\nlog_avg_msec=1000\n\
                 write_hist_log=a\nlog_hist_msec=500\nlog_hist_coarseness={c}\n"
            ),
        );
        let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let run = read_json(&p.join("b/run.json"));
        let (iv, w) = windows(&run);
        assert_eq!(iv, 1000);
        let first_iops: u64 = std::fs::read_to_string(p.join("a_iops.1.log")).unwrap()[..]
            .split(',')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let rows = hist_rows(&p.join("a_clat_hist.1.log"));
        let (want, _) = rows_per_window(&rows, 500, first_iops.saturating_sub(1000), 1000, w.len());
        for k in 0..w.len() - 1 {
            assert_eq!(w[k].1, bins::percentile_at(&want[k], 50.0, c), "window {k}");
            assert_eq!(w[k].2, bins::percentile_at(&want[k], 99.0, c), "window {k}");
            assert!(w[k].2.is_some(), "window {k} has no p99");
        }
    }
    // Logs of another coarseness than the job names are another job's: refused in one
    // line naming the log.
    let (two, six) = (d.path().join("many2"), d.path().join("many6"));
    std::fs::copy(six.join("a_clat_hist.1.log"), two.join("a_clat_hist.1.log")).unwrap();
    let o = run_in(&two, &["import", "fio", "a.json", "--out", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("a_clat_hist.1.log: its rows have 29 columns (log_hist_coarseness=6) but the job names log_hist_coarseness=2"),
        "{e}"
    );
    assert!(!two.join("c").exists());
}

/// The rows of fio's per-I/O log `p`: (time ms, value, ddir).
fn per_io_rows(p: &Path) -> Vec<(u64, u64, u64)> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            (f[0], f[1], f[2])
        })
        .collect()
}

/// A job with latency logs alone (real fio 3.33 runs) has its series from them: logged
/// for every I/O (no `log_avg_msec`), each second's I/Os are its rows and its latency
/// their mean; averaged (`log_avg_msec=500`), each window's mean latency is its row's
/// and its I/Os are estimated by Little's law (in proportion to 1 / latency), adding
/// up to the job's. The notes say where the series came from.
#[test]
fn latency_logs_alone_give_the_series() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("per-io");
    let doc = fio_logged(&p, 3, "write_lat_log=a\n");
    let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&p.join("b/run.json"));
    let (iv, w) = windows(&run);
    assert_eq!(iv, 1000);
    let recs = &run["steps"][0]["run"]["series"]["records"];
    let rows = per_io_rows(&p.join("a_lat.1.log"));
    let clat = per_io_rows(&p.join("a_clat.1.log"));
    let total = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(rows.len() as u64, total);
    for k in 0..w.len() - 1 {
        let in_k = |r: &&(u64, u64, u64)| r.0 / 1000 == k as u64;
        assert_eq!(
            w[k].0,
            rows.iter().filter(in_k).count() as u64,
            "window {k}"
        );
        let c: Vec<u64> = clat.iter().filter(in_k).map(|r| r.1).collect();
        let mean = c.iter().sum::<u64>() as f64 / c.len() as f64;
        let got = recs[k]["read"]["lat_mean_ns"].as_f64().unwrap();
        assert!(
            (got - mean).abs() <= 1.0,
            "window {k}: {got} against {mean}"
        );
    }
    assert_eq!(w.iter().map(|x| x.0).sum::<u64>(), total);
    let notes = run["steps"][0]["run"]["notes"].to_string();
    assert!(notes.contains("per-I/O latency logs' ("), "{notes}");
    assert!(notes.contains("a_lat.1.log"), "{notes}");

    let p = d.path().join("averaged");
    let doc = fio_logged(&p, 3, "write_lat_log=a\nlog_avg_msec=500\n");
    let o = run_in(&p, &["import", "fio", "a.json", "--out", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&p.join("b/run.json"));
    let (iv, w) = windows(&run);
    assert_eq!(iv, 500);
    let total = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(w.iter().map(|x| x.0).sum::<u64>(), total);
    assert!(w.iter().all(|x| x.0 > 0), "{w:?}");
    let recs = &run["steps"][0]["run"]["series"]["records"];
    let lat: Vec<f64> = (0..w.len())
        .map(|k| recs[k]["read"]["lat_mean_ns"].as_f64().unwrap())
        .collect();
    // I/Os × latency is the same in every whole window (the in-flight I/Os), to
    // rounding; the last window also takes the unlogged rest.
    let inflight: Vec<f64> = (0..w.len() - 1).map(|k| w[k].0 as f64 * lat[k]).collect();
    let (lo, hi) = inflight
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(hi / lo < 1.01, "{inflight:?}");
    let notes = run["steps"][0]["run"]["notes"].to_string();
    assert!(
        notes.contains("I/Os are estimated from fio's averaged latency logs"),
        "{notes}"
    );
}

/// Rate logs that cannot be this job's are refused in one line naming the log and why
/// (exit 2, nothing written): averaged iops rows past the job's end, or holding far
/// more I/Os than it did; a per-I/O log with an I/O long after its first.
#[test]
fn unusable_rate_logs_are_refused_naming_the_file_and_why() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("avg");
    fio_logged(
        &p,
        2,
        "write_iops_log=a\nwrite_bw_log=a\nlog_avg_msec=500\n",
    );
    let log = p.join("a_iops.1.log");
    let good = std::fs::read_to_string(&log).unwrap();
    let refused = |p: &Path, want: &[&str]| {
        let o = run_in(p, &["import", "fio", "a.json", "--out", "c"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        for w in want {
            assert!(e.contains(w), "{w}: {e}");
        }
        assert!(!p.join("c").exists());
    };
    // Rows past the job's end.
    std::fs::write(&log, format!("{good}9500, 100, 0, 0, 0\n")).unwrap();
    refused(
        &p,
        &["a_iops.1.log: the logs run for", "not this job's logs"],
    );
    // Three times the I/Os.
    let tripled: String = good
        .lines()
        .map(|l| {
            let mut f: Vec<String> = l.split(',').map(|x| x.trim().to_string()).collect();
            f[1] = (f[1].parse::<u64>().unwrap() * 3).to_string();
            f.join(", ") + "\n"
        })
        .collect();
    std::fs::write(&log, tripled).unwrap();
    refused(&p, &["a_iops.1.log: the logs hold", "not this job's logs"]);
    // A per-I/O log with an I/O an hour after its first.
    let p = d.path().join("per-io");
    fio_logged(&p, 2, "write_lat_log=a\n");
    let log = p.join("a_lat.1.log");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, format!("{text}3600000, 5000, 0, 4096, 0\n")).unwrap();
    refused(&p, &["a_lat.1.log: line ", "an I/O at 3600000 ms"]);
}
