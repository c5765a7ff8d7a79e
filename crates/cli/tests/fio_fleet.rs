//! Many hosts through fio's client/server mode: fio servers on 127.0.0.2 and 127.0.0.3,
//! started and stopped by each test (and killed, with every process they forked, when a
//! test fails). Needs Debian's fio and, for the version test, a fio of another version
//! (Debian 11's, made by scripts/fio-alt.sh; scripts/test sets DRIVELAB_TEST_FIO_ALT).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{run_in, stderr, stdout, wait_until};

/// Every process below `pid` (children, their children, …).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = rest.split(' ').nth(1).unwrap().parse().unwrap();
        parent_of.push((p, ppid));
    }
    let mut out = vec![];
    let mut frontier = vec![pid];
    while let Some(x) = frontier.pop() {
        for &(p, pp) in &parent_of {
            if pp == x {
                out.push(p);
                frontier.push(p);
            }
        }
    }
    out
}

fn kill(pid: u32) {
    // (Gone already is fine: a job may end between listing and killing.)
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// A fio server listening on `addr:port`, in a directory of its own (its "disk"), in a
/// PID namespace of its own: a fio server forks a handler per connection, a backend
/// and the jobs (each in a session of its own), and a handler outlives its listener,
/// so only the namespace going away (its first process killed) takes them all down.
struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Server {
    fn start(prog: &str, addr: &str, port: u16) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("unshare")
            .args(["--pid", "--fork", "--kill-child", prog])
            .arg(format!("--server=ip:{addr},{port}"))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("unshare {prog}: {e}"));
        let want = listen_entry(addr, port);
        let mut s = Server { child, dir };
        wait_until(&format!("fio server on {addr}:{port} listening"), || {
            if let Some(st) = s.child.try_wait().unwrap() {
                panic!("the fio server on {addr}:{port} ended at once ({st}): is the port taken?");
            }
            std::fs::read_to_string("/proc/net/tcp")
                .unwrap()
                .lines()
                .any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3 && f[1] == want && f[3] == "0A"
                })
        });
        s
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The host fails: its namespace killed, with the server and everything it forked
    /// (connection handler, backend, jobs).
    fn kill_all(&mut self) {
        let all = descendants(self.pid());
        kill(self.pid());
        let _ = self.child.wait();
        wait_until("the fio server's processes gone", || {
            all.iter().all(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .map_or(true, |st| st[st.rfind(')').unwrap() + 2..].starts_with('Z'))
            })
        });
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// A child process killed when the test ends, however it ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `/proc/net/tcp`'s local address of `addr:port` (`0200007F:4965`).
fn listen_entry(addr: &str, port: u16) -> String {
    let o: Vec<u8> = addr.split('.').map(|x| x.parse().unwrap()).collect();
    format!(
        "{:02X}{:02X}{:02X}{:02X}:{port:04X}",
        o[3], o[2], o[1], o[0]
    )
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn quick(port: u16, runtime: &str, out: &str) -> Vec<String> {
    [
        "run",
        "quick",
        "--short",
        "--runs",
        "1",
        "--size",
        "16M",
        "--tests",
        "RND4K Q1T1",
        "--runtime",
        runtime,
        "--no-db",
        "fleet.bin",
        "--overwrite",
        "--out",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--host=127.0.0.2,{port}"),
        format!("--host=127.0.0.3,{port}"),
    ])
    .collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_quick_suite_over_two_hosts_gives_two_bundles_and_a_fleet_view() {
    let port = 18771;
    let a_ = Server::start("fio", "127.0.0.2", port);
    let b_ = Server::start("fio", "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    // Recorded in a results database of its own, like any finished run.
    let db = format!("--db={}", d.path().join("r.sqlite").display());
    let a: Vec<String> = quick(port, "2s", "out")
        .into_iter()
        .map(|x| if x == "--no-db" { db.clone() } else { x })
        .collect();
    let o = run_in(d.path(), &args(&a));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    // The test file is gone from every host, as a local run's is.
    for s in [&a_, &b_] {
        assert!(!s.dir.path().join("fleet.bin").exists(), "{}", stderr(&o));
    }
    let said = stdout(&o);
    let ids = said
        .lines()
        .find_map(|l| l.strip_prefix("Recorded in the results database as runs "))
        .unwrap_or_else(|| panic!("{said}"));
    assert_eq!(ids.split(", ").count(), 3, "two hosts and the fleet");
    let out = d.path().join("out");
    let hosts: Vec<serde_json::Value> = [format!("127.0.0.2-{port}"), format!("127.0.0.3-{port}")]
        .iter()
        .map(|h| json(&out.join(h).join("run.json")))
        .collect();
    let fleet = json(&out.join("fleet/run.json"));
    for doc in hosts.iter().chain([&fleet]) {
        assert_eq!(doc["status"], "complete", "{}", doc["notes"]);
        assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    }
    for i in 0..2 {
        for dir in ["read", "write"] {
            let h = |doc: &serde_json::Value| doc["steps"][i]["run"]["histogram"][dir].clone();
            let (a, b, f) = (h(&hosts[0]), h(&hosts[1]), h(&fleet));
            let count = |x: &serde_json::Value| x["count"].as_u64().unwrap();
            assert_eq!(count(&f), count(&a) + count(&b), "step {i} {dir}");
            // Bucket by bucket.
            let mut sum = std::collections::BTreeMap::<u64, u64>::new();
            for x in [&a, &b] {
                for bk in x["buckets"].as_array().unwrap() {
                    *sum.entry(bk[0].as_u64().unwrap()).or_default() += bk[1].as_u64().unwrap();
                }
            }
            let merged: std::collections::BTreeMap<u64, u64> = f["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|bk| (bk[0].as_u64().unwrap(), bk[1].as_u64().unwrap()))
                .collect();
            assert_eq!(merged, sum, "step {i} {dir}");
        }
        // The fleet's series holds every host's I/Os once.
        let ops = |doc: &serde_json::Value| -> u64 {
            doc["steps"][i]["run"]["series"]["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["all"]["ops"].as_u64().unwrap())
                .sum()
        };
        assert_eq!(ops(&fleet), ops(&hosts[0]) + ops(&hosts[1]));
        assert!(ops(&hosts[0]) > 0 && ops(&hosts[1]) > 0);
    }
    let fj = json(&out.join("fleet/fleet.json"));
    assert_eq!(fj["hosts"].as_array().unwrap().len(), 2);
    assert!(fj["failed_hosts"].as_array().unwrap().is_empty());
    assert!(!fj["spread"].as_array().unwrap().is_empty());
    // Each value field names its unit; for a latency the slowest host is the higher.
    for sp in fj["spread"].as_array().unwrap() {
        let o = sp.as_object().unwrap();
        assert!(
            !o.contains_key("slowest") && !o.contains_key("mean"),
            "{sp}"
        );
        match sp["unit"].as_str().unwrap() {
            "µs" => assert!(
                sp["slowest_us"].as_f64() >= sp["fastest_us"].as_f64(),
                "{sp}"
            ),
            "MB/s" => assert!(
                sp["slowest_mb_per_s"].as_f64() <= sp["fastest_mb_per_s"].as_f64(),
                "{sp}"
            ),
            "IOPS" => assert!(sp["mean_ios_per_s"].is_f64(), "{sp}"),
            _ => {}
        }
    }
    assert!(
        fj["spread"]
            .as_array()
            .unwrap()
            .iter()
            .any(|sp| sp["unit"] == "µs"),
        "{fj}"
    );
    let summary = std::fs::read_to_string(out.join("fleet/summary.txt")).unwrap();
    assert!(
        summary.contains("slowest") && summary.contains("coefficient of variation"),
        "{summary}"
    );
    // The fleet view is a bundle the report takes, with the spread among its notes.
    let r = run_in(d.path(), &["report", "out/fleet", "-o", "r.html"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.contains("coefficient of variation"));
}

#[test]
fn keep_leaves_the_test_file_on_the_hosts() {
    let port = 18774;
    let a_ = Server::start("fio", "127.0.0.2", port);
    let b_ = Server::start("fio", "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    let mut a = quick(port, "1s", "out");
    a.push("--keep".into());
    let o = run_in(d.path(), &args(&a));
    assert!(o.status.success(), "{}", stderr(&o));
    for s in [&a_, &b_] {
        let m = std::fs::metadata(s.dir.path().join("fleet.bin")).unwrap();
        assert_eq!(m.len(), 16 << 20);
    }
}

#[test]
fn a_host_killed_mid_step_fails_alone() {
    let port = 18772;
    let _a = Server::start("fio", "127.0.0.2", port);
    let mut b = Server::start("fio", "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    let mut run = Reaped(
        common::drivelab()
            .args(args(&quick(port, "4s", "out")))
            .current_dir(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let run = &mut run.0;
    // The second step is running on host b (the first finished on both hosts): its
    // job process is up (server → connection handler → backend → job) and has laid out
    // its 16 MiB file.
    let file = b.dir.path().join("fleet.bin");
    let b_steps = d.path().join(format!("out/127.0.0.3-{port}/fio"));
    wait_until("host 127.0.0.3's second job running", || {
        if let Some(st) = run.try_wait().unwrap() {
            panic!("drivelab ended before the kill: {st}");
        }
        std::fs::read_dir(&b_steps).is_ok_and(|r| r.count() == 2)
            && descendants(b.pid()).len() >= 2
            && std::fs::metadata(&file).is_ok_and(|m| m.len() == 16 << 20)
    });
    b.kill_all();
    // The other host finishes the suite; drivelab ends (the test does not hang on it).
    wait_until("drivelab to finish", || run.try_wait().unwrap().is_some());
    let mut err = String::new();
    std::io::Read::read_to_string(run.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(1), "{err}");
    assert!(err.contains("host failed: host 127.0.0.3"), "{err}");
    let o = d.path().join("out");
    let good = json(&o.join(format!("127.0.0.2-{port}/run.json")));
    let bad = json(&o.join(format!("127.0.0.3-{port}/run.json")));
    assert_eq!(good["status"], "complete", "{}", good["notes"]);
    assert_eq!(good["steps"].as_array().unwrap().len(), 2);
    for s in good["steps"].as_array().unwrap() {
        let run = &s["run"];
        let sum: u64 = run["series"]["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["all"]["ops"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, run["totals"]["all"]["ops"].as_u64().unwrap());
        // 4 s: fio's client/server histogram logs are corrupted from the third row on,
        // and drivelab repaired them.
        assert!(
            run["notes"].to_string().contains("repaired"),
            "{}",
            run["notes"]
        );
    }
    assert_eq!(bad["status"], "failed");
    let why = bad["notes"].to_string();
    assert!(
        why.contains("127.0.0.3") && why.contains("Failed at step"),
        "{why}"
    );
    assert_eq!(bad["steps"][0]["status"], "complete");
    let fj = json(&o.join("fleet/fleet.json"));
    assert_eq!(fj["failed_hosts"].as_array().unwrap().len(), 1);
    assert!(fj["failed_hosts"][0][0]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.3"));
    // The fleet view says it is partial and which steps lack which host: step 1 adds
    // up both hosts, step 2 the one left.
    let (ha, hb) = (format!("127.0.0.2:{port}"), format!("127.0.0.3:{port}"));
    assert_eq!(fj["status"], "partial");
    assert_eq!(fj["steps"][0]["hosts"], serde_json::json!([ha, hb]));
    assert_eq!(fj["steps"][1]["hosts"], serde_json::json!([ha]));
    assert_eq!(fj["steps"][1]["missing_hosts"], serde_json::json!([hb]));
    assert_eq!(fj["summary_hosts"], serde_json::json!([ha]));
    let fleet = json(&o.join("fleet/run.json"));
    assert_eq!(fleet["status"], "partial");
    let ops = |r: &serde_json::Value, i: usize| {
        r["steps"][i]["run"]["totals"]["all"]["ops"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(ops(&fleet, 0), ops(&good, 0) + ops(&bad, 0));
    assert_eq!(ops(&fleet, 1), ops(&good, 1));
    assert!(
        fleet["steps"][1]["run"]["notes"]
            .to_string()
            .contains(&format!("Without {hb}, which failed at step 2")),
        "{}",
        fleet["steps"][1]["run"]["notes"]
    );
    // Its summary compares like with like: over the host that finished every step, it
    // is that host's own.
    let metrics = |r: &serde_json::Value| -> Vec<(String, f64)> {
        r["summary"]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().unwrap().to_string(),
                    m["value"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (mf, mg) = (metrics(&fleet), metrics(&good));
    assert!(!mg.is_empty());
    assert_eq!(mf.len(), mg.len(), "{mf:?} {mg:?}");
    for ((nf, vf), (ng, vg)) in mf.iter().zip(&mg) {
        // (A mean latency is worked out again from the merged histogram: equal but
        // for rounding.)
        assert!(
            nf == ng && (vf - vg).abs() <= vg.abs() * 1e-6,
            "{mf:?} {mg:?}"
        );
    }
    let summary = std::fs::read_to_string(o.join("fleet/summary.txt")).unwrap();
    assert!(summary.contains("PARTIAL"), "{summary}");
    assert!(
        summary.contains(&format!("Step 2 of 2 lacks {hb}, which failed at step 2")),
        "{summary}"
    );
    assert!(!summary.contains("(0 failed)"), "{summary}");
    // A fleet run's bundles are not resumed: one clear line.
    for dir in ["out/fleet", &format!("out/127.0.0.3-{port}")] {
        let r = run_in(d.path(), &["run", "--resume", dir, "--no-db"]);
        assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
        assert!(
            stderr(&r).contains("a fleet run (--host, --hosts) cannot be resumed; run it again"),
            "{}",
            stderr(&r)
        );
    }
}

#[test]
fn ctrl_c_on_a_fleet_run_says_it_was_interrupted_and_cannot_be_resumed() {
    let port = 18776;
    let _a = Server::start("fio", "127.0.0.2", port);
    let _b = Server::start("fio", "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    let mut run = Reaped(
        common::drivelab()
            .args(args(&quick(port, "4s", "out")))
            .current_dir(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let job = d.path().join(format!(
        "out/127.0.0.3-{port}/fio/rnd4k-q1t1-read-run1/job.fio"
    ));
    wait_until("the first step started on both hosts", || job.exists());
    common::signal(run.0.id(), "INT");
    let mut out = String::new();
    std::io::Read::read_to_string(run.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(run.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(run.0.wait().unwrap().code(), Some(130), "{err}");
    assert!(
        out.contains("fleet of 2 hosts: interrupted at step 1 of 2"),
        "{out}"
    );
    assert!(!out.contains("0 failed"), "{out}");
    assert!(
        err.contains("a fleet run cannot be resumed: run it again"),
        "{err}"
    );
    for b in [
        "fleet",
        &format!("127.0.0.2-{port}"),
        &format!("127.0.0.3-{port}"),
    ] {
        let doc = json(&d.path().join("out").join(b).join("run.json"));
        assert_eq!(doc["status"], "interrupted", "{b}: {}", doc["notes"]);
    }
    let r = run_in(d.path(), &["run", "--resume", "out/fleet", "--no-db"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("cannot be resumed; run it again"));
}

/// The fio of another version (see the module documentation).
fn other_fio() -> PathBuf {
    let p = std::env::var("DRIVELAB_TEST_FIO_ALT")
        .unwrap_or_else(|_| "/var/cache/drivelab-fio-alt/root/usr/bin/fio".into());
    let p = PathBuf::from(p);
    assert!(
        p.is_file(),
        "{}: no fio of another version; run scripts/fio-alt.sh (scripts/test does)",
        p.display()
    );
    p
}

#[test]
fn a_server_of_another_fio_version_is_refused_before_the_run() {
    let port = 18773;
    let alt = other_fio();
    let _a = Server::start("fio", "127.0.0.2", port);
    let b = Server::start(alt.to_str().unwrap(), "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    let o = run_in(d.path(), &args(&quick(port, "1s", "out")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("127.0.0.3:{port}"))
            && e.contains("fio-3.25")
            && e.contains("fio-3.33"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!d.path().join("out").exists(), "nothing was run or written");
    assert!(!b.dir.path().join("fleet.bin").exists());
    // A host where no server listens is refused the same way.
    let a: Vec<String> = quick(port, "1s", "out")
        .into_iter()
        .map(|x| x.replace(&format!("127.0.0.3,{port}"), "127.0.0.3,18779"))
        .collect();
    let o = run_in(d.path(), &args(&a));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("127.0.0.3:18779 did not answer"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("out").exists());
    // Without --out neither: no drivelab-results/ is left behind.
    let a: Vec<String> = a
        .into_iter()
        .filter(|x| x != "--out" && x != "out")
        .collect();
    let o = run_in(d.path(), &args(&a));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn fleet_inputs_are_checked_before_any_host_is_asked() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        "run",
        "quick",
        "--short",
        "--size",
        "16M",
        "--no-db",
        "fleet.bin",
    ];
    for (extra, want) in [
        (vec!["--host", "127.0.0.2"], "--overwrite"),
        (vec!["--host", "127.0.0.2,0", "--overwrite"], "--host"),
        (
            vec![
                "--host",
                "127.0.0.2",
                "--host",
                "127.0.0.2,9",
                "--overwrite",
            ],
            "given twice",
        ),
        (
            vec!["--hosts", "missing.txt", "--overwrite"],
            "--hosts missing.txt",
        ),
    ] {
        let a: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let o = run_in(d.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{a:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    // A file of the user's named by its absolute path, the size in bytes: no
    // --overwrite, no run (a local run refuses it the same way).
    let victim = d.path().join("victim.bin");
    std::fs::write(&victim, vec![9u8; 1 << 20]).unwrap();
    let o = run_in(
        d.path(),
        &[
            "run",
            "quick",
            victim.to_str().unwrap(),
            "--short",
            "--size",
            "8388608",
            "--host",
            "127.0.0.2",
            "--no-db",
            "--out",
            "q-host",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), vec![9u8; 1 << 20]);
    std::fs::remove_file(&victim).unwrap();
    // A suite that only reads too: fio rewrites a file shorter than the span, and the
    // file is removed at the end.
    let o = run_in(
        d.path(),
        &[
            "run",
            "peak",
            "fleet.bin",
            "--workloads",
            "4k-randread",
            "--size",
            "16M",
            "--host",
            "127.0.0.2",
            "--no-db",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    // The span must be an amount (with a unit or in bytes), not a share of the
    // target: the hosts' targets are not measured from here.
    for size in ["8M", "8388608"] {
        let o = run_in(
            d.path(),
            &[
                "run",
                "quick",
                "--short",
                "x.bin",
                "--size",
                size,
                "--host",
                "127.0.0.2,0",
            ],
        );
        assert!(stderr(&o).contains("--host: "), "{size}: {}", stderr(&o));
    }
    let o = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "--short",
            "x.bin",
            "--size",
            "50%",
            "--overwrite",
            "--host",
            "127.0.0.2",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--size: give the span on the hosts as an amount"),
        "{}",
        stderr(&o)
    );
    let dev = run_in(
        d.path(),
        &[
            "run",
            "quick",
            "--short",
            "--size",
            "16M",
            "--no-db",
            "/dev/sdz",
            "--host",
            "127.0.0.2",
        ],
    );
    assert_eq!(dev.status.code(), Some(2));
    assert!(
        stderr(&dev).contains("--destructive=/dev/sdz"),
        "{}",
        stderr(&dev)
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn a_peak_sweep_over_two_hosts_skips_its_re_measurements() {
    // Which point a sweep measures again is chosen from each drive's own results, and
    // the hosts take every step together: a fleet records them as skipped, and says why.
    let port = 18785;
    let _a = Server::start("fio", "127.0.0.2", port);
    let _b = Server::start("fio", "127.0.0.3", port);
    let d = tempfile::tempdir().unwrap();
    let a: Vec<String> = [
        "run",
        "peak",
        "--short",
        "--workloads",
        "4k-randread",
        "--max-qd",
        "2",
        "--size",
        "16M",
        "--no-db",
        "fleet.bin",
        "--overwrite",
        "--out",
        "out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--host=127.0.0.2,{port}"),
        format!("--host=127.0.0.3,{port}"),
    ])
    .collect();
    let o = run_in(d.path(), &args(&a));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let fleet = json(&d.path().join("out/fleet/run.json"));
    assert_eq!(fleet["status"], "complete", "{}", fleet["notes"]);
    let steps = fleet["steps"].as_array().unwrap();
    let rechecks: Vec<_> = steps
        .iter()
        .filter(|s| s["id"].as_str().unwrap().contains("recheck"))
        .collect();
    assert_eq!(rechecks.len(), 2, "--short plans two");
    for r in rechecks {
        assert_eq!(r["status"], "skipped");
        assert!(r["skip_reason"].as_str().unwrap().contains("fleet"), "{r}");
    }
    assert!(!stderr(&o).contains("re-measurement"), "{}", stderr(&o));
}

/// The red team's injection (issue #22) through a fio server: a target whose newline
/// would start an `exec_prerun` option (a command the server's host runs) is refused
/// before any host is asked, and the server's host never runs it.
#[test]
fn a_target_fio_would_read_as_options_never_reaches_a_host() {
    let port = 18791;
    let server = Server::start("fio", "127.0.0.2", port);
    let d = tempfile::tempdir().unwrap();
    let pwned = server.dir.path().join("PWNED");
    let evil = format!(
        "{}/a\nexec_prerun=touch {}",
        server.dir.path().display(),
        pwned.display()
    );
    let host = format!("--host=127.0.0.2,{port}");
    for target in [evil.as_str(), "a;b", "${HOME}/a"] {
        let o = run_in(
            d.path(),
            &[
                "run",
                "quick",
                "--short",
                "--size",
                "16M",
                "--no-db",
                "--overwrite",
                target,
                &host,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).starts_with("drivelab: TARGET"), "{}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    assert!(!pwned.exists(), "the fio server ran the injected command");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing made"
    );
}
