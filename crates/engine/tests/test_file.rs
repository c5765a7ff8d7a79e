//! drivelab's test files: recognised only while their marker still describes them,
//! removed only while the path still names them.

use drivelab_engine::target::{OpenOptions, Target, TargetSpec};

fn create(path: &std::path::Path) -> Target {
    let opts = OpenOptions {
        write: true,
        direct: false,
        create_size: 1 << 20,
        ..OpenOptions::default()
    };
    Target::open(TargetSpec::Path(Some(path.to_path_buf())), &opts).unwrap()
}

fn open_for_write(path: &std::path::Path) -> Result<Target, String> {
    let opts = OpenOptions {
        write: true,
        ..OpenOptions::default()
    };
    Target::open(TargetSpec::Path(Some(path.to_path_buf())), &opts).map_err(|e| e.0)
}

#[test]
fn a_kept_test_file_stays_drivelabs_until_someone_else_writes_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    create(&p).close(true).unwrap();
    // Kept and untouched: still drivelab's, writable without --overwrite.
    let t = open_for_write(&p).unwrap();
    assert!(t.info.created_by_drivelab);
    t.close(true).unwrap();
    // A user's data written over it (same inode, xattr and all): no longer drivelab's.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&p, vec![0xEEu8; 1 << 20]).unwrap();
    let err = open_for_write(&p).err().expect("refused");
    assert!(err.contains("--overwrite"), "{err}");
    assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0xEE));
}

#[test]
fn a_file_moved_into_the_test_files_place_is_not_removed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let t = create(&p);
    let mine = d.path().join("mine.bin");
    std::fs::write(&mine, b"precious").unwrap();
    std::fs::rename(&mine, &p).unwrap();
    let err = t.close(false).expect_err("refuses to remove another file");
    assert!(err.to_string().contains("left alone"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), b"precious");
}

#[test]
fn a_test_file_is_removed_at_close_unless_kept() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    create(&p).close(false).unwrap();
    assert!(!p.exists());
}

#[test]
fn a_run_killed_while_writing_leaves_a_file_that_can_be_resumed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let t = create(&p);
    // A run starts writing (the marker says so), writes, and the process dies without
    // closing the target.
    t.refresh_marker(true);
    std::thread::sleep(std::time::Duration::from_millis(20));
    // drivelab's random data: each sector stamped with its own offset (here 4096).
    let mut sector = [0x3Cu8; 512];
    sector[..8].copy_from_slice(&(4096u64 / 512).to_le_bytes());
    std::os::unix::fs::FileExt::write_at(t.file().unwrap(), &sector, 4096).unwrap();
    // Dropped without close: the file stays, as after a kill (which also ends the lock).
    drop(t);
    let mut again = open_for_write(&p).expect("still drivelab's: same device and inode");
    assert!(again.info.created_by_drivelab);
    // Opened, not created, by this process: kept at close unless taken over (as a
    // resumed suite does), then removed.
    again.adopt_test_file();
    again.close(false).unwrap();
    assert!(!p.exists());
}

#[test]
fn a_discard_makes_a_filled_test_file_need_filling_again() {
    // Punched holes read as zeros without the disk: a later read run must fill again,
    // and a later process must see the same from the marker.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let mut t = create(&p);
    t.mark_filled();
    assert!(t.is_filled());
    t.discard(0, 1 << 19).unwrap();
    assert!(!t.is_filled());
    t.close(true).unwrap();
    let t = open_for_write(&p).unwrap();
    assert!(!t.is_filled());
    t.close(false).unwrap();
}

#[test]
fn a_target_without_discard_is_told_apart_from_a_failing_one() {
    use drivelab_engine::prepare::discard_unsupported;
    let e = |n| std::io::Error::from_raw_os_error(n);
    assert!(discard_unsupported(&e(libc::EOPNOTSUPP)));
    assert!(discard_unsupported(&e(libc::ENOTTY)));
    assert!(!discard_unsupported(&e(libc::EIO)));
}

#[test]
fn a_test_file_deleted_during_the_run_is_no_error_at_close() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let t = create(&p);
    std::fs::remove_file(&p).unwrap();
    t.close(false)
        .expect("nothing left to remove is not a failure");
}
