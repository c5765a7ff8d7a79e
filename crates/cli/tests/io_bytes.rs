//! Bytes land where the engine says: every written sector carries its own offset.

mod common;

use common::*;

const SECTOR: usize = 512;

/// A user's file of `len` bytes filled with 0xEE (drivelab did not create it).
fn user_file(dir: &std::path::Path, len: usize) -> std::path::PathBuf {
    let p = dir.join("user.bin");
    std::fs::write(&p, vec![0xEEu8; len]).unwrap();
    p
}

fn check_span(path: &std::path::Path, span: (u64, u64), bs: u64, expect_all: bool) -> usize {
    let data = std::fs::read(path).unwrap();
    let mut stamped = 0;
    for (i, s) in data.chunks(SECTOR).enumerate() {
        let off = (i * SECTOR) as u64;
        let inside = off >= span.0 && off < span.0 + span.1;
        if s.iter().all(|&b| b == 0xEE) {
            assert!(
                !(inside && expect_all),
                "sector at {off} inside the span was not written"
            );
            continue;
        }
        assert!(
            inside,
            "sector at {off} outside the span {span:?} was touched"
        );
        let (at, _) = stamp(s);
        assert_eq!(at, off, "sector at {off} carries offset {at}");
        stamped += 1;
        // Blocks are aligned: the whole aligned block around this sector was written by one I/O.
        let block = (off - span.0) / bs * bs + span.0;
        let first = (block as usize) / SECTOR;
        let tag = stamp(&data[first * SECTOR..first * SECTOR + SECTOR]).1;
        for j in 0..(bs as usize / SECTOR) {
            let t = &data[(first + j) * SECTOR..(first + j + 1) * SECTOR];
            assert_eq!(
                stamp(t),
                ((first + j) as u64 * SECTOR as u64, tag),
                "block at {block} written whole by one I/O"
            );
        }
    }
    stamped
}

#[test]
fn every_mode_writes_sectors_that_carry_their_offset_inside_the_span_only() {
    let dir = tempfile::tempdir().unwrap();
    let len = 16 << 20;
    let span = (4u64 << 20, 8u64 << 20);
    for (rw, engine, expect_all) in [
        ("write", "sync", true),
        ("write", "io_uring", true),
        ("randwrite", "io_uring", false),
        ("randwrite", "sync", false),
        ("rw", "sync", false),
        ("randrw", "io_uring", false),
    ] {
        let p = user_file(dir.path(), len);
        let path = p.to_str().unwrap();
        let mut args = vec![
            "io",
            path,
            "--overwrite",
            "--rw",
            rw,
            "--bs",
            "4k",
            "--ioengine",
            engine,
            "--offset",
            "4M",
            "--size",
            "8M",
            "--data",
            "random",
            "--randseed",
            "42",
        ];
        if engine == "io_uring" {
            args.extend(["--iodepth", "16"]);
        }
        if expect_all {
            args.extend(["--io_size", "8M"]);
        } else {
            args.extend(["--io_size", "6M"]);
        }
        let r = run_json(dir.path(), &args);
        let written = r["totals"]["write"]["bytes"].as_u64().unwrap();
        assert!(written > 0, "{rw}: wrote nothing");
        let stamped = check_span(&p, span, 4096, expect_all);
        assert!(stamped > 0, "{rw}/{engine}: no stamped sectors");
        if rw == "write" {
            assert_eq!(written, 8 << 20);
            assert_eq!(stamped as u64 * 512, 8 << 20);
        }
        assert!(p.exists(), "a user's file is never removed");
    }
}

#[test]
fn a_users_file_is_only_read_without_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let p = user_file(dir.path(), 1 << 20);
    let o = run_in(
        dir.path(),
        &["io", p.to_str().unwrap(), "--rw", "write", "--runtime", "1"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0xEE));
    // Reading it is fine, and it stays.
    let r = run_json(
        dir.path(),
        &[
            "io",
            p.to_str().unwrap(),
            "--rw",
            "randread",
            "--runtime",
            "1",
        ],
    );
    assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0);
    assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0xEE));
}

#[test]
fn default_test_file_is_created_filled_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--rw",
            "randread",
            "--size",
            "16M",
            "--runtime",
            "1",
            "--keep",
        ],
    );
    let f = dir.path().join("drivelab.test");
    assert!(f.exists(), "--keep keeps the test file");
    assert_eq!(r["target"]["created_by_drivelab"], true);
    // Filled before reads: every sector carries its offset.
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 16 << 20);
    for (i, s) in data.chunks(SECTOR).enumerate() {
        assert_eq!(stamp(s).0, (i * SECTOR) as u64);
    }
    // Without --keep, the file it created is removed.
    std::fs::remove_file(&f).unwrap();
    run_json(
        dir.path(),
        &["io", "--rw", "randwrite", "--size", "16M", "--runtime", "1"],
    );
    assert!(!f.exists());
}
