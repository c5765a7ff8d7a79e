//! Every bad input: one line naming the option, exit 2, nothing written.

mod common;

use common::*;

fn bad(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line, got {err:?}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: {err:?} should mention {needle}"
    );
    assert!(stdout(&o).is_empty(), "{args:?}: nothing on stdout");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "{args:?}: nothing written"
    );
}

#[test]
fn bad_inputs_are_one_line_exit_2_nothing_written() {
    bad(&["io", "--bs", "1000"], "--bs");
    bad(&["io", "--rw", "sideways"], "--rw");
    bad(&["io", "--iodepth", "0"], "--iodepth");
    bad(&["io", "--numjobs", "0"], "--numjobs");
    bad(&["io", "null", "--size", "2T"], "--size");
    bad(&["io", "--offset", "2T", "null"], "--size/--offset");
    bad(&["io", "/nonexistent-dir/file"], "no such file");
    bad(&["io", "/tmp"], "is a directory");
    bad(&["io", "--bssplit", "4k/50:64k/40"], "--bssplit");
    bad(&["io", "--rwmixread", "101"], "--rwmixread");
    bad(&["io", "--bs", "4kk"], "--bs");
    bad(&["io", "--size", "-1"], "--size");
    bad(&["io", "--runtime", "0"], "--runtime");
    bad(&["io", "--spec", "RND4K"], "--spec");
    bad(&["io", "--data", "compress=120"], "--data");
    bad(
        &["io", "--random_distribution", "zoned:50/5"],
        "--random_distribution",
    );
    bad(&["io", "--ioengine", "sync", "--iodepth", "8"], "--iodepth");
    bad(&["io", "--log-interval", "1ms", "null"], "--log-interval");
    bad(&["io", "--bogus"], "--bogus");
}

#[test]
fn no_permission_is_a_clear_error() {
    // As root every file is readable, so drop to nobody for this check.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("secret.bin");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_drivelab"))
        .args(["io", f.to_str().unwrap(), "--runtime", "1"])
        .output()
        .expect("setpriv (util-linux) is available");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("permission denied"), "{}", stderr(&o));
}
