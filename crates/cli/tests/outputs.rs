//! drivelab's own outputs never destroy data: `--json`, `--csv`, `-o`, `--png` and
//! `--out` refuse a results database, a bundle's file, the other output of the same
//! command and a file drivelab did not write (unless `--force`), and replace only
//! their own earlier outputs, whole or not at all.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

fn refused(o: &Output, want: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "not one line: {e}");
    assert!(e.contains(want), "{e:?} lacks {want:?}");
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// A short simulated quick suite's bundle in `dir/name`.
fn bundle(dir: &Path, name: &str) {
    ok(&run_in(
        dir,
        &[
            "run",
            "quick",
            "--short",
            "--no-db",
            "sim:nvme-tlc,capacity=4G",
            "--out",
            name,
        ],
    ));
}

const NULL_RUN: &[&str] = &["io", "null", "--runtime", "50ms"];

fn io_with(dir: &Path, extra: &[&str]) -> Output {
    let mut a = NULL_RUN.to_vec();
    a.extend_from_slice(extra);
    run_in(dir, &a)
}

#[test]
fn result_files_replace_only_drivelab_outputs() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("hostname"), "my-host\n").unwrap();
    refused(
        &io_with(p, &["--json", "hostname"]),
        "not written by drivelab",
    );
    refused(&io_with(p, &["--csv", "hostname"]), "--force");
    assert_eq!(
        std::fs::read_to_string(p.join("hostname")).unwrap(),
        "my-host\n"
    );
    // The same file for both outputs would lose one of them.
    refused(
        &io_with(p, &["--json", "a", "--csv", "a"]),
        "also the file of --json",
    );
    assert!(!p.join("a").exists());
    // drivelab's own earlier outputs are replaced: a second run of the same command.
    for _ in 0..2 {
        ok(&io_with(p, &["--json", "r.json", "--csv", "s.csv"]));
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.join("r.json")).unwrap()).unwrap();
    assert_eq!(doc["tool"]["name"], "drivelab");
    // With --force the user's file is replaced.
    ok(&io_with(p, &["--json", "hostname", "--force"]));
    assert!(std::fs::read_to_string(p.join("hostname"))
        .unwrap()
        .contains("drivelab"));
    // No temporary file is left beside the outputs.
    let names = names_in(p);
    assert_eq!(names, ["hostname", "r.json", "s.csv"]);
}

#[test]
fn a_fifo_or_a_device_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // No reader: opening it for writing would block for ever.
    refused(
        &io_with(d.path(), &["--json", "fifo", "--force"]),
        "is a FIFO",
    );
    refused(
        &io_with(d.path(), &["--csv", "/dev/null"]),
        "character device",
    );
}

#[test]
fn a_report_or_export_never_replaces_a_bundle_or_a_database() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    let run_json = std::fs::read(p.join("b/run.json")).unwrap();
    refused(
        &run_in(p, &["report", "b", "-o", "b/run.json"]),
        "result bundle",
    );
    refused(
        &run_in(p, &["report", "b", "-o", "b/summary.txt"]),
        "result bundle",
    );
    assert_eq!(std::fs::read(p.join("b/run.json")).unwrap(), run_json);
    ok(&run_in(p, &["db", "record", "b", "--db", "res.sqlite"]));
    let db = std::fs::read(p.join("res.sqlite")).unwrap();
    refused(
        &run_in(
            p,
            &["db", "export", "--db", "res.sqlite", "-o", "res.sqlite"],
        ),
        "SQLite database",
    );
    refused(
        &run_in(p, &["report", "b", "-o", "res.sqlite"]),
        "SQLite database",
    );
    assert_eq!(std::fs::read(p.join("res.sqlite")).unwrap(), db);
    // Their own earlier files are replaced, charts included.
    for _ in 0..2 {
        ok(&run_in(
            p,
            &["db", "export", "--db", "res.sqlite", "-o", "runs.json"],
        ));
        ok(&run_in(
            p,
            &[
                "report", "b", "-o", "r.html", "--png", "charts", "--svg", "charts",
            ],
        ));
    }
    // A user's file that has a chart's name is not.
    let png = std::fs::read_dir(p.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| f.extension().is_some_and(|x| x == "png"))
        .unwrap();
    std::fs::write(&png, "mine").unwrap();
    refused(
        &run_in(p, &["report", "b", "-o", "r.html", "--png", "charts"]),
        "not written by drivelab",
    );
    assert_eq!(std::fs::read_to_string(&png).unwrap(), "mine");
}

#[test]
fn a_bundle_takes_only_a_new_or_empty_directory() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir(p.join("mine")).unwrap();
    std::fs::write(p.join("mine/summary.txt"), "my summary").unwrap();
    for out in ["mine", "."] {
        let o = run_in(
            p,
            &["run", "quick", "--short", "--no-db", "null", "--out", out],
        );
        refused(&o, "not empty");
    }
    assert_eq!(
        std::fs::read_to_string(p.join("mine/summary.txt")).unwrap(),
        "my summary"
    );
    std::fs::create_dir(p.join("empty")).unwrap();
    bundle(p, "empty");
    assert!(p.join("empty/run.json").exists());
}

/// Every file under `dir` (path relative to it) with its bytes: what "nothing was
/// changed on disk" is checked against.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
            if t.is_dir() {
                todo.push(e.path());
                files.insert(rel, b"<dir>".to_vec());
            } else if t.is_symlink() {
                let to = std::fs::read_link(e.path()).unwrap();
                files.insert(rel, to.to_string_lossy().as_bytes().to_vec());
            } else if t.is_file() {
                files.insert(rel, std::fs::read(e.path()).unwrap());
            } else {
                files.insert(rel, b"<special>".to_vec());
            }
        }
    }
    files
}

/// `args` run in `dir` are refused in one line naming `want`, with nothing on disk
/// changed (nothing written, nothing replaced, no directory made).
fn refused_untouched(dir: &Path, args: &[&str], want: &str) -> String {
    let before = snapshot(dir);
    let o = run_in(dir, args);
    refused(&o, want);
    assert!(o.stdout.is_empty(), "{args:?} wrote to stdout");
    assert!(snapshot(dir) == before, "{args:?} changed the directory");
    stderr(&o)
}

const MSR_LINES: &str = "\
128166372003061629,hm,0,Read,7014609920,24576,41286
128166372016382155,hm,0,Write,1317441536,8192,1963
";

#[test]
fn force_never_replaces_a_results_database_or_a_bundle_s_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    ok(&run_in(p, &["db", "record", "b", "--db", "x.sqlite"]));
    std::fs::write(p.join("hm_0.csv"), MSR_LINES).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["io", "null", "--runtime", "50ms", "--json", "x.sqlite"],
            "SQLite database",
        ),
        (
            &["io", "null", "--runtime", "50ms", "--csv", "x.sqlite"],
            "SQLite database",
        ),
        (&["report", "b", "-o", "x.sqlite"], "SQLite database"),
        (
            &["report", "b", "-o", "x.sqlite-wal"],
            "part of the SQLite database",
        ),
        (
            &["report", "b", "-o", "x.sqlite-journal"],
            "part of the SQLite database",
        ),
        (
            &["trace", "import", "msr", "hm_0.csv", "-o", "x.sqlite"],
            "SQLite database",
        ),
        (
            &["db", "export", "--db", "x.sqlite", "-o", "x.sqlite"],
            "SQLite database",
        ),
        (
            &["io", "null", "--runtime", "50ms", "--json", "b/run.json"],
            "result bundle",
        ),
        (
            &["io", "null", "--runtime", "50ms", "--csv", "b/summary.txt"],
            "result bundle",
        ),
        (
            &["io", "null", "--runtime", "50ms", "--json", "b/new.json"],
            "result bundle",
        ),
        (&["report", "b", "-o", "b/run.json"], "result bundle"),
        (
            &["trace", "import", "msr", "hm_0.csv", "-o", "b/run.json"],
            "result bundle",
        ),
    ];
    for (args, want) in cases {
        for force in [false, true] {
            let mut a = args.to_vec();
            if force {
                a.push("--force");
            }
            let e = refused_untouched(p, &a, want);
            assert!(!e.contains("--force"), "{a:?} advises --force: {e}");
        }
    }
    // The database and the bundle still read.
    ok(&run_in(p, &["db", "list", "--db", "x.sqlite"]));
    ok(&run_in(p, &["report", "b", "-o", "r.html"]));
}

#[test]
fn a_report_never_writes_a_chart_over_itself_nor_into_a_bundle() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    std::fs::create_dir(p.join("c")).unwrap();
    for (flag, name) in [("--png", "c/quick-read.png"), ("--svg", "c/quick-read.svg")] {
        for force in [false, true] {
            let mut a = vec!["report", "b", "-o", name, flag, "c"];
            if force {
                a.push("--force");
            }
            refused_untouched(p, &a, "the command's other output");
        }
    }
    // Also when the charts' directory is still to be made.
    refused_untouched(
        p,
        &["report", "b", "-o", "c/quick-write.png", "--png", "c"],
        "the command's other output",
    );
    for flag in ["--png", "--svg"] {
        refused_untouched(
            p,
            &["report", "b", "-o", "r.html", flag, "b"],
            "is a result bundle",
        );
        refused_untouched(
            p,
            &["report", "b", "-o", "r.html", flag, "b/charts"],
            "is inside the result bundle",
        );
    }
}

#[test]
fn trace_import_never_replaces_the_trace_it_reads() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("cp.csv"), MSR_LINES).unwrap();
    std::os::unix::fs::symlink("cp.csv", p.join("link.csv")).unwrap();
    std::fs::hard_link(p.join("cp.csv"), p.join("hard.csv")).unwrap();
    for (input, output) in [
        ("cp.csv", "cp.csv"),
        ("cp.csv", "link.csv"),
        ("link.csv", "cp.csv"),
        ("hard.csv", "cp.csv"),
        ("cp.csv", "./cp.csv"),
    ] {
        refused_untouched(
            p,
            &["trace", "import", "msr", input, "-o", output, "--force"],
            "is the trace being imported",
        );
    }
}

#[test]
fn a_dash_is_standard_output_for_a_document_and_refused_elsewhere() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    ok(&run_in(p, &["db", "record", "b", "--db", "x.sqlite"]));
    std::fs::write(p.join("hm_0.csv"), MSR_LINES).unwrap();
    let before = snapshot(p);
    // The document alone on stdout: no summary, no progress.
    for args in [
        &["--json", "-"][..],
        &["--json", "-", "--output-format", "json"],
        &["--json", "-", "--csv", "s.csv"],
    ] {
        let o = io_with(p, args);
        ok(&o);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e})"));
        assert_eq!(doc["tool"]["name"], "drivelab");
    }
    std::fs::remove_file(p.join("s.csv")).unwrap();
    let o = io_with(p, &["--csv", "-"]);
    ok(&o);
    let csv = stdout(&o);
    assert!(csv.starts_with("index,start_s,duration_s,"), "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with(char::is_numeric)),
        "{csv}"
    );
    let o = run_in(p, &["report", "b", "-o", "-"]);
    ok(&o);
    assert!(stdout(&o).starts_with("<!DOCTYPE html>"));
    assert!(stdout(&o).trim_end().ends_with("</html>"));
    assert!(stderr(&o).contains("wrote the report to standard output"));
    let o = run_in(p, &["db", "export", "--db", "x.sqlite", "-o", "-"]);
    ok(&o);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["format"], "drivelab-db-export");
    // No file named "-" (or any other) was made.
    assert!(snapshot(p) == before);
    // Where standard output cannot take it: one line, exit 2, nothing written.
    let cases: &[(&[&str], &str)] = &[
        (
            &["trace", "import", "msr", "hm_0.csv", "-o", "-"],
            "-o/--output -: standard output cannot take it",
        ),
        (
            &["report", "b", "-o", "r.html", "--png", "-"],
            "--png -: names a directory",
        ),
        (
            &["report", "b", "-o", "r.html", "--svg", "-"],
            "--svg -: names a directory",
        ),
        (
            &[
                "io",
                "null",
                "--runtime",
                "50ms",
                "--json",
                "-",
                "--csv",
                "-",
            ],
            "--csv -: standard output already carries",
        ),
        (
            &[
                "io",
                "null",
                "--runtime",
                "50ms",
                "--csv",
                "-",
                "--output-format",
                "json",
            ],
            "--csv -: standard output carries the JSON result",
        ),
        (
            &["run", "quick", "--short", "--no-db", "null", "--out", "-"],
            "--out -: a bundle is a directory",
        ),
        (
            &["run", "quick", "--short", "null", "--db", "-"],
            "--db '-': a results database is not standard output",
        ),
        (
            &["db", "--db", "-", "list"],
            "--db '-': a results database is not standard output",
        ),
    ];
    for (args, want) in cases {
        refused_untouched(p, args, want);
    }
}

#[test]
fn an_interrupted_trace_import_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    huge_msr(p);
    // The output and the scratch file: both unnamed, in the output's directory.
    let temp = |pid: u32, p: &Path| unnamed_files_in(pid, p) == 2;
    // One signal, or two (the second ends the process at once, without the main
    // thread's cleanup: the temporary file must go all the same).
    for sigs in [&["INT"][..], &["TERM"], &["INT", "TERM"]] {
        let child = drivelab()
            .args(["trace", "import", "msr", "huge.csv", "-o", "huge.dltrace"])
            .current_dir(p)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the temporary output", || temp(child.id(), p));
        for sig in sigs {
            signal(child.id(), sig);
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{sigs:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with("drivelab: interrupted"), "{e}");
        if sigs.len() == 1 {
            assert_eq!(e.trim_end().lines().count(), 1, "{e}");
            assert!(
                e.contains("interrupted: nothing was written to huge.dltrace"),
                "{e}"
            );
        }
        let names = names_in(p);
        assert_eq!(names, ["huge.csv"], "{sigs:?}");
    }
}

#[test]
fn a_span_of_nothing_and_a_fifo_output_are_refused_in_the_command_s_own_terms() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("hm_0.csv"), MSR_LINES).unwrap();
    ok(&run_in(
        p,
        &["trace", "import", "msr", "hm_0.csv", "-o", "t.dltrace"],
    ));
    for size in ["0", "0%", "0B"] {
        for args in [
            &["run", "quick", "--short", "--no-db", "--size", size, "tf"][..],
            &[
                "run",
                "replay",
                "t.dltrace",
                "--no-db",
                "--size",
                size,
                "tf",
            ],
        ] {
            let e = refused_untouched(p, args, "--size");
            assert!(e.contains("must be more than 0"), "{e}");
        }
    }
    bundle(p, "b");
    assert!(std::process::Command::new("mkfifo")
        .arg(p.join("fifo"))
        .status()
        .unwrap()
        .success());
    let e = refused_untouched(p, &["report", "b", "-o", "fifo"], "is a FIFO");
    assert!(!e.contains("--output-format"), "{e}");
    assert!(e.contains("- puts it on standard output"), "{e}");
    // Nor does db export, which has no --output-format either.
    ok(&run_in(p, &["db", "record", "b", "--db", "x.sqlite"]));
    let export = ["db", "export", "--db", "x.sqlite", "-o", "fifo"];
    let e = refused_untouched(p, &export, "is a FIFO");
    assert!(!e.contains("--output-format"), "{e}");
    assert!(e.contains("with -o -, it goes to standard output"), "{e}");
}

/// What is planted at an output's path while drivelab runs.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// A symbolic link to the victim.
    Symlink,
    /// A hard link to the victim.
    HardLink,
    /// The output's directory moved away, a link to the victim's directory put in its place.
    DirectorySwapped,
    /// The victim itself renamed to the output's name.
    Renamed,
}

/// `io null --json out/r.json` runs until interrupted; once it has claimed its output
/// (its unnamed temporary file is open in out/), `plant` is done, then the run is
/// interrupted, which writes the result. The victim must be untouched.
fn plant_during_a_run(plant: Plant) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let (out, safe) = (p.join("out"), p.join("safe"));
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&safe).unwrap();
    let victim = safe.join("r.json");
    std::fs::write(&victim, "precious = 1\n").unwrap();
    let child = drivelab()
        .args(["io", "null", "--runtime", "1h", "--json", "out/r.json"])
        .current_dir(p)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the claimed output", || {
        unnamed_files_in(child.id(), &out) == 1
    });
    let at = out.join("r.json");
    match plant {
        Plant::Symlink => std::os::unix::fs::symlink(&victim, &at).unwrap(),
        Plant::HardLink => std::fs::hard_link(&victim, &at).unwrap(),
        Plant::DirectorySwapped => {
            std::fs::rename(&out, p.join("moved")).unwrap();
            std::os::unix::fs::symlink(&safe, &out).unwrap();
        }
        Plant::Renamed => std::fs::rename(&victim, &at).unwrap(),
    }
    signal(child.id(), "INT");
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    match plant {
        Plant::Renamed => {
            assert_eq!(o.status.code(), Some(1), "{e}");
            assert!(e.contains("took its place"), "{e}");
            assert_eq!(std::fs::read_to_string(&at).unwrap(), "precious = 1\n");
        }
        _ => {
            assert_eq!(o.status.code(), Some(130), "{plant:?}: {e}");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious = 1\n");
            let written = match plant {
                Plant::DirectorySwapped => p.join("moved/r.json"),
                _ => at.clone(),
            };
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
            assert_eq!(doc["tool"]["name"], "drivelab", "{plant:?}");
        }
    }
    let left = names_in(&safe);
    let want: &[&str] = match plant {
        Plant::Renamed => &[],
        _ => &["r.json"],
    };
    assert_eq!(left, want, "{plant:?}");
}

#[test]
fn a_symbolic_link_planted_at_an_output_during_the_run_is_not_followed() {
    plant_during_a_run(Plant::Symlink);
}

#[test]
fn a_hard_link_planted_at_an_output_during_the_run_keeps_its_file() {
    plant_during_a_run(Plant::HardLink);
}

#[test]
fn an_output_directory_swapped_for_a_link_during_the_run_is_not_followed() {
    plant_during_a_run(Plant::DirectorySwapped);
}

#[test]
fn a_user_s_file_renamed_onto_an_output_during_the_run_stays() {
    plant_during_a_run(Plant::Renamed);
}

#[test]
fn a_mark_inside_a_file_does_not_make_it_drivelab_s() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let pkg = "{\n  \"name\": \"drivelab\",\n  \"version\": \"1.0.0\"\n}\n";
    std::fs::write(p.join("package.json"), pkg).unwrap();
    bundle(p, "b");
    std::fs::write(p.join("t.csv"), "1,hm,0,Write,0,4096,1\n").unwrap();
    let cmds: [&[&str]; 5] = [
        &["io", "null", "--runtime", "50ms", "--json", "package.json"],
        &["io", "null", "--runtime", "50ms", "--csv", "package.json"],
        &["report", "b", "-o", "package.json"],
        &["db", "export", "-o", "package.json"],
        &["trace", "import", "msr", "t.csv", "-o", "package.json"],
    ];
    for args in cmds {
        refused(&run_in(p, args), "not written by drivelab");
        assert_eq!(
            std::fs::read_to_string(p.join("package.json")).unwrap(),
            pkg
        );
    }
}

#[test]
fn the_run_s_own_marker_file_is_no_output() {
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &[
            "io",
            "--size",
            "1M",
            "--runtime",
            "50ms",
            "--json",
            ".drivelab.test.drivelab",
        ],
    );
    refused(&o, "the marker file of the target under test");
    assert!(!d.path().join("drivelab.test").exists());
}

#[test]
fn a_bundle_inside_a_bundle_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    let run_json = std::fs::read(p.join("b/run.json")).unwrap();
    let args = [
        "run",
        "quick",
        "--short",
        "--no-db",
        "sim:nvme-tlc,capacity=4G",
    ];
    for out in ["b/sub", "b/sub/deeper"] {
        let mut a = args.to_vec();
        a.extend(["--out", out]);
        refused(&run_in(p, &a), "is inside the result bundle");
    }
    assert!(!p.join("b/sub").exists());
    assert_eq!(std::fs::read(p.join("b/run.json")).unwrap(), run_json);
}

#[test]
fn a_full_disk_is_a_failure_not_a_bad_input_and_leaves_nothing() {
    let fs = Tmpfs::new("size=256k");
    let d = fs.dir.path();
    // A trace large enough not to fit.
    let src = tempfile::tempdir().unwrap();
    let csv: String = (0..20_000u64)
        .map(|i| {
            format!(
                "{},hm,0,Write,{},4096,1\n",
                128_166_372_003_061_629u64 + i * 1000,
                i * 4096
            )
        })
        .collect();
    std::fs::write(src.path().join("t.csv"), csv).unwrap();
    fs.fill();
    let out = d.join("t.dltrace");
    let o = run_in(
        src.path(),
        &[
            "trace",
            "import",
            "msr",
            "t.csv",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("-o/--output") && !e.contains("FILE"),
        "blamed on the input: {e}"
    );
    // A bundle that cannot be written: exit 1, no directory left.
    let b = d.join("b");
    let run = [
        "run",
        "quick",
        "--short",
        "--no-db",
        "sim:nvme-tlc,capacity=4G",
        "--out",
    ];
    let mut a = run.to_vec();
    a.push(b.to_str().unwrap());
    let o = run_in(src.path(), &a);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A results database that cannot be made: exit 1, no empty file left.
    bundle(src.path(), "good");
    let db = d.join("r.sqlite");
    let o = run_in(
        src.path(),
        &["db", "record", "good", "--db", db.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let left = names_in(d);
    assert_eq!(left, ["fill"]);
}

#[test]
fn a_read_only_file_system_is_said_without_an_internal_path() {
    let fs = Tmpfs::new("ro,size=64k");
    let out = fs.dir.path().join("r.json");
    let o = run_in(
        fs.dir.path(),
        &[
            "io",
            "null",
            "--runtime",
            "50ms",
            "--json",
            out.to_str().unwrap(),
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains("Read-only file system"), "{e}");
    assert!(
        !e.contains(".drivelab-check") && !e.contains(".r.json."),
        "{e}"
    );
}

/// `huge.csv` in `p`: an MSR trace large enough that its import is still running when
/// a signal comes.
fn huge_msr(p: &Path) {
    use std::fmt::Write as _;
    let mut csv = String::new();
    for i in 0..400_000u64 {
        let _ = writeln!(
            csv,
            "{},hm,0,Write,{},4096,1",
            128_166_372_003_061_629u64 + i * 1000,
            (i * 4096) % (1 << 32)
        );
    }
    std::fs::write(p.join("huge.csv"), csv).unwrap();
}

#[test]
fn a_killed_trace_import_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    huge_msr(p);
    let mut child = drivelab()
        .args(["trace", "import", "msr", "huge.csv", "-o", "huge.dltrace"])
        .current_dir(p)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the import to write", || {
        unnamed_files_in(child.id(), p) == 2
    });
    child.kill().unwrap(); // SIGKILL: no clean-up at all
    child.wait().unwrap();
    let names = names_in(p);
    assert_eq!(names, ["huge.csv"]);
}

#[test]
fn a_link_planted_in_a_bundle_during_the_run_is_replaced_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let victim = p.join("victim.conf");
    std::fs::write(&victim, "precious = 1\n").unwrap();
    let child = drivelab()
        .args(["run", "mixed", "null", "--step-time", "1h", "--size", "64M"])
        .args(["--no-db", "--progress", "never", "--out", "b"])
        .current_dir(p)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run_json = p.join("b/run.json");
    wait_until("the bundle's first document", || run_json.is_file());
    // Put in place at once (a link renamed over the document), as an attacker would.
    std::os::unix::fs::symlink(&victim, p.join("b/planted")).unwrap();
    std::fs::rename(p.join("b/planted"), &run_json).unwrap();
    signal(child.id(), "INT");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious = 1\n");
    assert!(std::fs::symlink_metadata(&run_json).unwrap().is_file());
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted");
}

/// The names in the directory `d`, sorted.
fn names_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_trace_is_never_replayed_onto_itself() {
    use std::fmt::Write as _;
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // Small writes, and enough of them that the trace file could take them all.
    let mut csv = String::new();
    for i in 0..3000u64 {
        let t = 128_166_372_003_061_629u64 + i * 1000;
        let _ = writeln!(csv, "{t},hm,0,Write,{},512,1", (i * 512) % 8192);
    }
    std::fs::write(p.join("in.csv"), csv).unwrap();
    ok(&run_in(
        p,
        &["trace", "import", "msr", "in.csv", "-o", "s.dltrace"],
    ));
    std::os::unix::fs::symlink("s.dltrace", p.join("link.dltrace")).unwrap();
    std::fs::hard_link(p.join("s.dltrace"), p.join("hard.dltrace")).unwrap();
    for (trace, target) in [
        ("s.dltrace", "s.dltrace"),
        ("s.dltrace", "./s.dltrace"),
        ("s.dltrace", "link.dltrace"),
        ("link.dltrace", "s.dltrace"),
        ("hard.dltrace", "s.dltrace"),
    ] {
        let m = refused_untouched(
            p,
            &["run", "replay", trace, target, "--overwrite", "--no-db"],
            "is the trace being replayed",
        );
        assert!(m.starts_with("drivelab: TARGET "), "{m}");
    }
}

#[test]
fn an_output_never_replaces_a_drivelab_file_of_another_kind_without_force() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "b");
    ok(&run_in(p, &["db", "record", "b", "--db", "x.sqlite"]));
    std::fs::write(p.join("in.csv"), MSR_LINES).unwrap();
    ok(&run_in(
        p,
        &["trace", "import", "msr", "in.csv", "-o", "app.dltrace"],
    ));
    ok(&io_with(p, &["--json", "r.json"]));
    let trace = "app.dltrace";
    let over_trace: [&[&str]; 4] = [
        &["report", "b", "-o", trace],
        &["io", "null", "--runtime", "50ms", "--json", trace],
        &["io", "null", "--runtime", "50ms", "--csv", trace],
        &["db", "export", "--db", "x.sqlite", "-o", trace],
    ];
    for args in over_trace {
        let m = refused_untouched(p, args, "app.dltrace: holds a drivelab trace");
        assert!(m.contains("--force"), "{m}");
    }
    let over_result: [&[&str]; 3] = [
        &["report", "b", "-o", "r.json"],
        &["trace", "import", "msr", "in.csv", "-o", "r.json"],
        &["io", "null", "--runtime", "50ms", "--csv", "r.json"],
    ];
    for args in over_result {
        refused_untouched(p, args, "r.json: holds a drivelab result document");
    }
    // Its own kind is replaced as before; another kind with --force.
    ok(&io_with(p, &["--json", "r.json"]));
    ok(&run_in(
        p,
        &["trace", "import", "msr", "in.csv", "-o", trace],
    ));
    ok(&run_in(p, &["report", "b", "-o", "r.json", "--force"]));
    assert!(std::fs::read_to_string(p.join("r.json"))
        .unwrap()
        .starts_with("<!"));
}

#[test]
fn a_journal_or_a_database_is_never_made_inside_a_result_bundle() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    bundle(p, "bsf");
    let sim = "sim:capacity=1G,block=1M,dies=4,channels=4,thermal=off,write_cache=volatile,write_cache_size=2M,power_cut=20ms";
    let small = ["--rounds", "4", "--round-blocks", "64"];
    let mut pl = vec!["run", "powerloss", sim, "--journal", "bsf/j", "--out", "n"];
    pl.extend(small);
    refused_untouched(p, &pl, "--journal bsf/j: is inside the result bundle bsf");
    // Nor in the bundle the run itself is about to make.
    let mut pl = vec!["run", "powerloss", sim, "--journal", "n/j", "--out", "n"];
    pl.extend(small);
    refused_untouched(
        p,
        &pl,
        "--journal n/j: is inside the result bundle --out makes",
    );
    let quick = [
        "run",
        "quick",
        "--short",
        "sim:nvme-tlc,capacity=4G",
        "--out",
        "c",
        "--db",
        "bsf/x.sqlite",
    ];
    refused_untouched(
        p,
        &quick,
        "--db bsf/x.sqlite: is inside the result bundle bsf",
    );
    refused_untouched(
        p,
        &["db", "record", "bsf", "--db", "bsf/x.sqlite"],
        "--db bsf/x.sqlite: is inside the result bundle bsf",
    );
}
