//! Every finished suite run is recorded in the results database.

mod common;

use common::*;

#[test]
fn a_finished_run_is_recorded_unless_no_db() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let dbs = db.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--db",
            dbs,
            "--out",
            "a",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Recorded in the results database as run"),
        "{}",
        stdout(&o)
    );
    let o = run_in(
        dir.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--no-db",
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("Recorded"));
    let o = run_in(dir.path(), &["db", "list", "--db", dbs]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = stdout(&o);
    assert_eq!(list.matches("quick").count(), 1, "{list}");
    // An unreachable database does not fail the run; it says so.
    let o = run_in(
        dir.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--db",
            "postgres://u@127.0.0.1:1/x",
            "--out",
            "c",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("not recorded"), "{}", stderr(&o));
}
