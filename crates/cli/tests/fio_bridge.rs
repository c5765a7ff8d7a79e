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
            "run", "quick", "--short", "--runs", "1", "--no-db",
            target.to_str().unwrap(), "--emit-fio", "jobs",
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
        assert!(parsed.status.success(), "fio --parse-only {name}: {}", stderr(&parsed));
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
        &["run", "quick", "--short", "--runs", "1", target.to_str().unwrap(), "--emit-fio", "jobs"],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    // fio cannot run a simulated drive.
    let sim = run_in(
        d.path(),
        &["run", "quick", "--short", "sim:nvme-tlc,capacity=4G", "--emit-fio", "jobs2"],
    );
    assert_eq!(sim.status.code(), Some(2), "{}", stderr(&sim));
    assert!(stderr(&sim).contains("fio needs a file or a block device"));
    assert!(!Path::new(&d.path().join("jobs2")).exists());
}
