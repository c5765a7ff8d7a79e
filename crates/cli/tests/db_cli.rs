//! The results database from the command line: `db record` (the bundle → record path
//! `drivelab run` uses), `db list | show | export | import`, `compare` by run id, on
//! SQLite and on a real PostgreSQL server (started by scripts/pg-test-server.sh; the
//! test fails when it cannot be had). SQLite and PostgreSQL give the same rows.

mod report_db_common;

use report_db_common::*;
use serde_json::Value;

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

/// Records the quick bundles of two drives and a consistency bundle into `db`; their ids.
fn record_three(dir: &std::path::Path, db: &str) -> Vec<String> {
    let bundles = [
        bundle("quick", NVME),
        bundle("quick", SATA),
        bundle("consistency", DRAMLESS),
    ];
    let mut args = vec!["db", "record", "--db", db];
    let paths: Vec<String> = bundles.iter().map(|b| b.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let out = ok(&run_in(dir, &args));
    let ids: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3, "{out}");
    for id in &ids {
        assert_eq!(id.len(), 16);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    ids
}

fn listing(dir: &std::path::Path, db: &str) -> Value {
    serde_json::from_str(&ok(&run_in(dir, &["db", "list", "--db", db, "--json"]))).unwrap()
}

fn shown(dir: &std::path::Path, db: &str, id: &str) -> Value {
    let mut v: Value =
        serde_json::from_str(&ok(&run_in(dir, &["db", "show", id, "--db", db, "--json"]))).unwrap();
    v.as_object_mut().unwrap().remove("bundle_json");
    v
}

fn exercise(db: &str) -> (Vec<String>, Value, Vec<Value>) {
    let d = tempfile::tempdir().unwrap();
    let ids = record_three(d.path(), db);
    // Recording again finds the same runs: nothing stored twice.
    let again = record_three(d.path(), db);
    assert_eq!(ids, again);
    let list = listing(d.path(), db);
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 3, "{list}");
    let quick = bundle("quick", NVME);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(quick.join("run.json")).unwrap()).unwrap();
    let row = runs
        .iter()
        .find(|r| r["run_id"] == ids[0].as_str())
        .unwrap();
    assert_eq!(row["suite"], "quick");
    assert_eq!(row["device_kind"], "sim");
    assert_eq!(row["device_model"], "drivelab-sim nvme-tlc");
    assert_eq!(row["config_hash"], doc["config_hash"]);
    assert_eq!(row["started_at"], doc["created_at"]);
    assert_eq!(row["tool_version"], doc["tool"]["version"]);
    assert_eq!(row["host_name"], doc["host"]["hostname"]);
    assert_eq!(row["status"], "complete");
    // Headline metrics are the bundle's, in its order.
    let want: Vec<(Value, Value)> = doc["summary"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].clone(), m["value"].clone()))
        .collect();
    let got: Vec<(Value, Value)> = row["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].clone(), m["value"].clone()))
        .collect();
    assert_eq!(got, want);
    // show by a unique prefix: the whole record with the run.json stored.
    let full: Value = serde_json::from_str(&ok(&run_in(
        d.path(),
        &["db", "show", &ids[0][..6], "--db", db, "--json"],
    )))
    .unwrap();
    assert_eq!(full["bundle_json"]["config_hash"], doc["config_hash"]);
    assert_eq!(
        full["bundle_path"].as_str().unwrap(),
        std::fs::canonicalize(&quick).unwrap().to_str().unwrap()
    );
    let text = ok(&run_in(d.path(), &["db", "show", &ids[0], "--db", db]));
    assert!(
        text.contains("SEQ1M Q8T1 read") && text.contains("config hash"),
        "{text}"
    );
    let table = ok(&run_in(d.path(), &["db", "list", "--db", db]));
    assert_eq!(table.lines().count(), 4, "{table}");
    // compare by run ids gives the same table as by bundles (apart from the sources).
    let by_id = ok(&run_in(
        d.path(),
        &["compare", &ids[0], &ids[1], "--db", db],
    ));
    let by_dir = ok(&run_in(
        d.path(),
        &[
            "compare",
            quick.to_str().unwrap(),
            bundle("quick", SATA).to_str().unwrap(),
        ],
    ));
    let body = |t: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("METRIC"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&by_id), body(&by_dir));
    assert_usage(
        &run_in(d.path(), &["compare", &ids[0], &ids[2], "--db", db]),
        "config hash",
    );
    let shows = ids.iter().map(|id| shown(d.path(), db, id)).collect();
    (ids, list, shows)
}

#[test]
fn sqlite_database_records_lists_shows_exports_and_imports() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.sqlite");
    let db = db.to_str().unwrap();
    let (ids, list, _) = exercise(db);
    // Export to a file, import into a fresh database: the same rows; again: skipped.
    let exp = d.path().join("export.json");
    ok(&run_in(
        d.path(),
        &["db", "export", "--db", db, "-o", exp.to_str().unwrap()],
    ));
    let db2 = d.path().join("copy.sqlite");
    let db2 = db2.to_str().unwrap();
    let out = ok(&run_in(
        d.path(),
        &["db", "import", exp.to_str().unwrap(), "--db", db2],
    ));
    assert!(out.starts_with("imported 3 run(s), skipped 0"), "{out}");
    let out = ok(&run_in(
        d.path(),
        &["db", "import", exp.to_str().unwrap(), "--db", db2],
    ));
    assert!(out.starts_with("imported 0 run(s), skipped 3"), "{out}");
    assert_eq!(listing(d.path(), db2), list);
    // Export to stdout is the same document.
    let stdout_doc: Value =
        serde_json::from_str(&ok(&run_in(d.path(), &["db", "export", "--db", db]))).unwrap();
    let file_doc: Value = serde_json::from_str(&std::fs::read_to_string(&exp).unwrap()).unwrap();
    assert_eq!(stdout_doc, file_doc);
    assert_eq!(file_doc["runs"].as_array().unwrap().len(), ids.len());
}

#[test]
fn default_database_is_under_the_data_directory() {
    let d = tempfile::tempdir().unwrap();
    // run_in points XDG_DATA_HOME at <dir>/xdg.
    let out = ok(&run_in(
        d.path(),
        &["db", "record", bundle("quick", NVME).to_str().unwrap()],
    ));
    assert!(
        d.path().join("xdg/drivelab/results.sqlite").exists(),
        "{out}"
    );
    let list = ok(&run_in(d.path(), &["db", "list"]));
    assert!(
        list.contains(out.split_whitespace().next().unwrap()),
        "{list}"
    );
}

#[test]
fn postgres_and_sqlite_give_the_same_rows() {
    let pg = fresh_pg("same_rows");
    let d = tempfile::tempdir().unwrap();
    let lite = d.path().join("results.sqlite");
    let (ids_pg, list_pg, shows_pg) = exercise(&pg);
    let (ids_lite, list_lite, shows_lite) = exercise(lite.to_str().unwrap());
    assert_eq!(ids_pg, ids_lite);
    assert_eq!(list_pg, list_lite);
    assert_eq!(shows_pg, shows_lite);
    // An export from PostgreSQL imports into SQLite and back unchanged.
    let exp = d.path().join("pg.json");
    ok(&run_in(
        d.path(),
        &["db", "export", "--db", &pg, "-o", exp.to_str().unwrap()],
    ));
    let lite2 = d.path().join("from-pg.sqlite");
    ok(&run_in(
        d.path(),
        &[
            "db",
            "import",
            exp.to_str().unwrap(),
            "--db",
            lite2.to_str().unwrap(),
        ],
    ));
    assert_eq!(listing(d.path(), lite2.to_str().unwrap()), list_pg);
    let pg2 = fresh_pg("from_export");
    ok(&run_in(
        d.path(),
        &["db", "import", exp.to_str().unwrap(), "--db", &pg2],
    ));
    assert_eq!(listing(d.path(), &pg2), list_pg);
}

#[test]
fn bad_database_input_is_one_line_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    std::fs::write(d.path().join("junk.json"), "not json").unwrap();
    std::fs::write(d.path().join("other.json"), "{\"format\":\"x\"}").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["db", "show", "--db", db], "ID"),
        // Commands that only read do not make a database that is not there.
        (
            vec!["db", "show", "feedface", "--db", db],
            "no database there",
        ),
        (vec!["db", "export", "--db", db], "no database there"),
        (
            vec!["compare", "feedface", "cafe", "--db", db],
            "RUN feedface",
        ),
        (vec!["db", "list", "--db", "mysql://x"], "--db 'mysql://x'"),
        (vec!["db", "import", "--db", db], "FILE"),
        (
            vec!["db", "import", "missing.json", "--db", db],
            "FILE missing.json",
        ),
        (
            vec!["db", "import", "junk.json", "--db", db],
            "FILE junk.json: not a JSON",
        ),
        (
            vec!["db", "import", "other.json", "--db", db],
            "FILE other.json",
        ),
        (
            vec!["db", "export", "--db", db, "-o", "no/dir/x.json"],
            "-o/--output",
        ),
        (vec!["db", "record", "--db", db], "BUNDLE"),
        (vec!["db", "record", "nope", "--db", db], "BUNDLE nope"),
        (vec!["db", "list", "--db", ""], "--db"),
        (vec!["db", "list", "--limit", "0", "--db", db], "--limit"),
        (vec!["db", "frobnicate"], "frobnicate"),
    ];
    for (args, want) in cases {
        assert_usage(&run_in(d.path(), &args), want);
    }
    assert!(!d.path().join("no").exists());
    assert!(!d.path().join("r.sqlite").exists());
    assert!(!d.path().join("mysql:").exists());
    // A database in a directory that is not there is refused alike by every command,
    // and no directory is made for it.
    for args in [
        vec!["db", "list", "--db", "no/dir/r.sqlite"],
        vec!["db", "record", "nope", "--db", "no/dir/r.sqlite"],
        vec!["run", "quick", "--short", "null", "--db", "no/dir/r.sqlite"],
        vec!["db", "list", "--db", "postgres://u:secret@h:notaport/x"],
        vec![
            "run",
            "quick",
            "--short",
            "null",
            "--db",
            "postgres://u:secret@h:notaport/x",
        ],
    ] {
        let o = run_in(d.path(), &args);
        assert_usage(&o, "--db");
        assert!(!stderr(&o).contains("secret"), "{}", stderr(&o));
    }
    assert!(!d.path().join("no").exists());
    assert!(!d.path().join("drivelab-results").exists());
}

/// Another program's SQLite file is left as it was by every command, read-only or not:
/// one line says it is not drivelab's.
#[test]
fn another_programs_database_is_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let app = d.path().join("app.sqlite");
    foreign_sqlite(&app);
    let before = std::fs::read(&app).unwrap();
    let b = bundle("quick", NVME);
    let b = b.to_str().unwrap();
    for args in [
        vec!["db", "list", "--db", "app.sqlite"],
        vec!["db", "export", "--db", "app.sqlite"],
        vec!["db", "record", b, "--db", "app.sqlite"],
    ] {
        let o = run_in(d.path(), &args);
        assert_usage(&o, "not a drivelab results database");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&app).unwrap(), before);
}

/// A SQLite file with one table of another program (made through python's sqlite3).
fn foreign_sqlite(p: &std::path::Path) {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table users(id)'); c.commit()")
        .arg(p)
        .status()
        .unwrap();
    assert!(ok.success());
}

/// An imported record whose text would drive the terminal (an escape sequence, a
/// newline forging a row) is refused; nothing of the document is stored.
#[test]
fn imported_text_cannot_forge_the_listing() {
    let d = tempfile::tempdir().unwrap();
    let b = bundle("quick", NVME);
    ok(&run_in(
        d.path(),
        &["db", "record", b.to_str().unwrap(), "--db", "a.sqlite"],
    ));
    let text = ok(&run_in(d.path(), &["db", "export", "--db", "a.sqlite"]));
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    for (field, forged) in [
        ("device_model", "x\u{1b}[2J"),
        ("suite", "quick\n0123456789abcdef  forged"),
    ] {
        let mut bad = doc.clone();
        bad["runs"][0][field] = Value::from(forged);
        std::fs::write(d.path().join("bad.json"), bad.to_string()).unwrap();
        let o = run_in(d.path(), &["db", "import", "bad.json", "--db", "b.sqlite"]);
        assert_usage(&o, "control character");
    }
    doc["runs"][0]["device_model"] = Value::from("plain");
    std::fs::write(d.path().join("good.json"), doc.to_string()).unwrap();
    ok(&run_in(
        d.path(),
        &["db", "import", "good.json", "--db", "b.sqlite"],
    ));
}

#[test]
fn a_database_that_keeps_nothing_or_has_no_place_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let quick = ["run", "quick", "--short", "sim:nvme-tlc,capacity=4G"];
    for db in [":memory:", "file::memory:?cache=shared"] {
        let mut a = quick.to_vec();
        a.extend(["--db", db]);
        assert_usage(&run_in(d.path(), &a), "kept in a file");
        assert_usage(
            &run_in(d.path(), &["db", "list", "--db", db]),
            "kept in a file",
        );
    }
    // Without XDG_DATA_HOME and HOME there is no default: not ./drivelab/results.sqlite.
    let o = drivelab()
        .args(quick)
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME")
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_usage(&o, "neither XDG_DATA_HOME nor HOME is set");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
