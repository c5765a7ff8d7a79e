//! Reads of holes are zeros the filesystem makes up, not a drive: `io` refuses them
//! (exit 2, one line naming the fix) unless `--read-holes`, and then flags the result.

mod common;
use common::*;

#[test]
fn reading_a_sparse_file_is_refused_and_with_read_holes_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("sparse.bin")).unwrap();
    f.set_len(8 << 20).unwrap();
    drop(f);
    let args = ["io", "sparse.bin", "--runtime", "0.2", "--direct=0"];
    let o = run_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("holes") && err.contains("--read-holes"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());

    let mut flagged = args.to_vec();
    flagged.push("--read-holes");
    let r = run_json(dir.path(), &flagged);
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("Not a drive: 8 MiB of the 8 MiB span")),
        "{notes:?}"
    );
}

#[test]
fn a_written_file_is_read_without_a_word_about_holes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("full.bin"), vec![7u8; 4 << 20]).unwrap();
    let r = run_json(
        dir.path(),
        &["io", "full.bin", "--runtime", "0.2", "--direct=0"],
    );
    let notes = r["notes"].as_array().unwrap();
    assert!(
        !notes.iter().any(|n| n.as_str().unwrap().contains("holes")),
        "{notes:?}"
    );
}

/// Issue #22: a loop device over a file never written (sparse, as `truncate` leaves it)
/// reads holes too: measured as the device it is, with the note a sparse file target
/// gets. Root only (loop devices).
#[test]
fn a_loop_device_over_an_unwritten_file_carries_the_holes_note() {
    let lo = Loop::new(16 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(
        dir.path(),
        &["io", &lo.dev, "--runtime", "0.2", "--sensors", "none"],
    );
    let notes = v.to_string();
    assert!(
        notes.contains("holes or unwritten (fallocated) extents of the loop device's backing file"),
        "{notes}"
    );
}
