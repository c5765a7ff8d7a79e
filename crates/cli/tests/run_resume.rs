//! `drivelab run --resume BUNDLE` after the suite was killed (SIGKILL) mid-way continues
//! with the next unfinished step and never redoes a finished one.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn read_doc(dir: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).ok()?).ok()
}

/// Each step of run.json as the text it was written as (numbers digit for digit).
fn step_texts(dir: &Path) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Steps {
        steps: Vec<Box<serde_json::value::RawValue>>,
    }
    let text = std::fs::read_to_string(dir.join("run.json")).unwrap();
    let doc: Steps = serde_json::from_str(&text).unwrap();
    doc.steps.iter().map(|r| r.get().to_string()).collect()
}

fn finished_steps(doc: &Value) -> Vec<Value> {
    doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "complete")
        .cloned()
        .collect()
}

#[test]
fn resume_after_a_kill_continues_without_redoing_finished_steps() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let bundle = d.path().join("b");
    let mut child = drivelab()
        .args([
            "run",
            "quick",
            "--short",
            "--runs",
            "1",
            "--runtime",
            "400ms",
            "--out",
            "b",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it hard as soon as its first step is saved.
    let t0 = Instant::now();
    let before = loop {
        if let Some(doc) = read_doc(&bundle) {
            if !finished_steps(&doc).is_empty() {
                child.kill().unwrap(); // SIGKILL
                break doc;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no step was saved");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.wait().unwrap();
    // Whatever the moment of the kill, run.json is whole and names finished steps.
    let killed = read_doc(&bundle).expect("run.json is never torn");
    let killed_texts = step_texts(&bundle);
    assert_eq!(killed["status"], "running");
    let done = finished_steps(&killed);
    assert!(done.len() >= finished_steps(&before).len());
    assert!(done.len() < 8, "killed before the end");
    assert!(
        d.path().join("drivelab.test").exists(),
        "a killed run leaves its test file"
    );

    let o = run_in(d.path(), &["run", "--resume", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("resuming b at step {}", done.len() + 1)));
    assert!(stdout(&o).contains("SEQ1M Q8T1"));
    let after = read_doc(&bundle).unwrap();
    assert_eq!(after["status"], "complete");
    assert_eq!(after["config_hash"], killed["config_hash"]);
    let steps = after["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 8);
    for (old, new) in done.iter().zip(steps) {
        // The same step, untouched: same id, times and random seed, and every number
        // exactly as it was (read back and written again without a digit lost).
        assert_eq!(old["id"], new["id"]);
        assert_eq!(old["started_at"], new["started_at"]);
        assert_eq!(old["config"]["randseed"], new["config"]["randseed"]);
        assert_eq!(old, new, "step {} changed on resume", old["id"]);
    }
    for (old, new) in killed_texts
        .iter()
        .zip(step_texts(&bundle))
        .take(done.len())
    {
        assert_eq!(
            old, &new,
            "a finished step was rewritten differently on resume"
        );
    }
    let last_old = done.last().unwrap()["finished_at"].as_str().unwrap();
    for s in &steps[done.len()..] {
        assert!(
            s["started_at"].as_str().unwrap() > last_old,
            "{} ran after the kill",
            s["id"]
        );
    }
    assert!(
        !d.path().join("drivelab.test").exists(),
        "the resumed run removes the test file its first run created"
    );

    // A finished bundle just shows its table again.
    let o = run_in(d.path(), &["run", "--resume", "b"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("RND4K Q1T1"));
}

#[test]
fn resume_refuses_another_target() {
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &[
            "run",
            "mixed",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Pretend it was cut short and aimed at another drive.
    let p = d.path().join("b/run.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    doc["status"] = "interrupted".into();
    doc["target_arg"] = "sim:nvme-tlc,capacity=8G".into();
    std::fs::write(&p, doc.to_string()).unwrap();
    let o = run_in(d.path(), &["run", "--resume", "b"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the bundle was made on"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_bundle_in_use_by_another_process_is_not_resumed() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let o = run_in(
        d.path(),
        &[
            "run", "quick", "--short", "--no-db", "--runs", "1", "--out", "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Hold its lock as a process running (or resuming) it would.
    let lock = std::fs::File::create(d.path().join("b/.lock")).unwrap();
    lock.try_lock().unwrap();
    let o = run_in(d.path(), &["run", "--resume", "b"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another drivelab process"),
        "{}",
        stderr(&o)
    );
    drop(lock);
}

#[test]
fn a_resumed_peak_sweep_chooses_its_re_measurement_again_and_keeps_the_earlier_ones() {
    // The peak sweep's re-measurements are chosen from the points before them (issue
    // 14). A bundle cut before its last one resumes: the finished one is checked as the
    // suite chooses it again and kept word for word, and the last one measures the same
    // point as an unbroken run (a simulated drive: the same seeds, the same numbers).
    let d = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "peak",
        "sim:sata-mlc,capacity=4G,seed=1",
        "--short",
        "--size",
        "100%",
        "--steady-writes",
        "60s",
        "--point-time",
        "1s",
        "--max-qd",
        "16",
        "--no-early-stop",
        "--workloads",
        "4k-randwrite",
        "--out",
        "b",
        "--no-db",
        "--progress",
        "never",
    ];
    let o = run_in(d.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = d.path().join("b");
    let whole = read_doc(&b).unwrap();
    let texts = step_texts(&b);
    let last = whole["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["id"], "4k-randwrite-recheck2");
    assert_eq!(last["status"], "complete", "{}", last["skip_reason"]);
    let mut cut = whole.clone();
    cut["steps"].as_array_mut().unwrap().pop();
    cut["status"] = "interrupted".into();
    cut["summary"] = Value::Null;
    std::fs::write(b.join("run.json"), cut.to_string()).unwrap();
    let o = run_in(
        d.path(),
        &["run", "--resume", "b", "--no-db", "--progress", "never"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let now = read_doc(&b).unwrap();
    let again = step_texts(&b);
    assert_eq!(again[..texts.len() - 1], texts[..texts.len() - 1]);
    let redone = now["steps"].as_array().unwrap().last().unwrap();
    assert_eq!(redone["params"], last["params"]);
    assert_eq!(
        redone["run"]["totals"]["all"]["ops"],
        last["run"]["totals"]["all"]["ops"]
    );
    assert_eq!(
        now["summary"]["analysis"]["sweeps"],
        whole["summary"]["analysis"]["sweeps"]
    );
}
