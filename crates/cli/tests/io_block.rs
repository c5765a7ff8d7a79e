//! Block devices: writes need --destructive naming the device, and are refused while the
//! device or a partition of it is mounted. Reads are always allowed.

mod common;

use common::*;

#[test]
fn block_device_refusals_and_a_confirmed_write() {
    let lo = Loop::new(64 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    // Reads are fine, with identity recorded.
    let r = run_json(
        dir.path(),
        &["io", &lo.dev, "--rw", "randread", "--runtime", "1"],
    );
    assert_eq!(r["target"]["kind"], "block_device");
    assert_eq!(r["target"]["capacity_bytes"], 64 << 20);
    assert_eq!(r["target"]["logical_sector_bytes"], 512);
    assert_eq!(r["config"]["direct"], true);
    // A confirmation naming another device is refused even for reads.
    let other = Loop::new(1 << 20, false);
    let o = run_in(
        dir.path(),
        &["io", &lo.dev, "--runtime", "1", "--destructive", &other.dev],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not name the target"),
        "{}",
        stderr(&o)
    );
    drop(other);
    // Writes without --destructive: refused.
    let o = run_in(
        dir.path(),
        &["io", &lo.dev, "--rw", "randwrite", "--runtime", "1"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("--destructive={}", lo.dev)),
        "{}",
        stderr(&o)
    );
    // --destructive naming another device: refused.
    let other = Loop::new(16 << 20, false);
    let o = run_in(
        dir.path(),
        &[
            "io",
            &lo.dev,
            "--rw",
            "write",
            "--destructive",
            &other.dev,
            "--runtime",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does not name the target"),
        "{}",
        stderr(&o)
    );
    // Confirmed: sequential write over the whole device, bytes land where they should.
    let r = run_json(
        dir.path(),
        &[
            "io",
            &lo.dev,
            "--rw",
            "write",
            "--bs",
            "128k",
            "--iodepth",
            "8",
            "--io_size",
            "100%",
            "--destructive",
            &lo.dev,
        ],
    );
    assert_eq!(r["totals"]["write"]["bytes"], 64 << 20);
    let data = std::fs::read(&lo.dev).unwrap();
    for (i, s) in data.chunks(512).enumerate() {
        assert_eq!(stamp(s).0, i as u64 * 512, "sector {i}");
    }
    // Mounted: refused even with --destructive, naming the mount point.
    let m = Mount::new(&lo.dev);
    let o = run_in(dir.path(), &confirmed_write(&lo.dev, "1"));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("is mounted on") && err.contains(m.dir.path().to_str().unwrap()),
        "{err}"
    );
    drop(m);
}

#[test]
fn a_mounted_partition_protects_the_whole_device() {
    let lo = Loop::new(64 << 20, true);
    let o = std::process::Command::new("sfdisk")
        .arg(&lo.dev)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"label: dos\n,32M\n,\n")?;
            c.wait()
        })
        .expect("sfdisk (fdisk package) is available");
    assert!(o.success());
    let _ = std::process::Command::new("partx")
        .args(["-u", &lo.dev])
        .status();
    let part = format!("{}p1", lo.dev);
    for _ in 0..50 {
        if std::path::Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let m = Mount::new(&part);
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "io",
            &lo.dev,
            "--rw",
            "randwrite",
            "--destructive",
            &lo.dev,
            "--runtime",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("p1 is mounted on"), "{err}");
    drop(m);
}

#[test]
fn a_file_takes_the_direct_io_alignment_of_its_filesystem() {
    // ext4 on a disk with 4 KiB logical sectors: direct I/O on its files needs 4 KiB.
    let lo = Loop::with_sector(64 << 20, false, 4096);
    let m = Mount::new(&lo.dev);
    let file = m.dir.path().join("t.bin");
    let f = file.to_str().unwrap();
    let o = run_in(
        m.dir.path(),
        &["io", f, "--size", "8M", "--bs", "512", "--runtime", "1"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("drivelab: --bs:") && err.contains("4096-byte logical sector"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!file.exists(), "the test file is not left behind");
    let r = run_json(
        m.dir.path(),
        &["io", f, "--size", "8M", "--bs", "4k", "--runtime", "0.5"],
    );
    assert_eq!(r["target"]["logical_sector_bytes"], 4096);
    assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0);
    assert!(
        r["target"]["in_memory"].is_null(),
        "a disk-backed loop device"
    );
    drop(m);
}

#[test]
fn a_filesystem_on_a_disk_in_memory_is_memory() {
    // ext4 on a loop device over a tmpfs file: the file's filesystem is not tmpfs, the
    // disk under it is.
    let lo = Loop::in_memory(64 << 20);
    let m = Mount::new(&lo.dev);
    let f = m.dir.path().join("t.bin");
    let r = run_json(
        m.dir.path(),
        &[
            "io",
            f.to_str().unwrap(),
            "--size",
            "8M",
            "--runtime",
            "0.2",
        ],
    );
    let why = r["target"]["in_memory"].as_str().unwrap_or_default();
    assert!(why.contains("on ext4") && why.contains("tmpfs"), "{why}");
    assert!(r["notes"].to_string().contains("Memory, not a drive"));
    drop(m);
}

#[test]
fn a_device_under_a_loop_device_is_in_use() {
    // The loop driver registers no holder and claims nothing: only its backing file
    // tells that /dev/loopA is under /dev/loopB (which may be mounted).
    let lower = Loop::new(16 << 20, false);
    let o = std::process::Command::new("losetup")
        .args(["-f", "--show", &lower.dev])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let upper = String::from_utf8(o.stdout).unwrap().trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        &[
            "io",
            &lower.dev,
            "--rw",
            "write",
            "--destructive",
            &lower.dev,
            "--runtime",
            "0.2",
        ],
    );
    let _ = std::process::Command::new("losetup")
        .args(["-d", &upper])
        .status();
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains(&format!("backs the loop device {upper}")),
        "{}",
        stderr(&r)
    );
}

#[test]
fn a_read_only_peak_sweep_needs_no_destructive_even_when_mounted() {
    let lo = Loop::new(64 << 20, false);
    let m = Mount::new(&lo.dev);
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "peak",
            &lo.dev,
            "--short",
            "--no-db",
            "--workloads",
            "4k-randread",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("4K random read"), "{}", stdout(&o));
    // Writing sweeps still need the confirmation.
    let o = run_in(dir.path(), &["run", "peak", &lo.dev, "--short", "--no-db"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--destructive"), "{}", stderr(&o));
    drop(m);
}

#[test]
fn a_loop_device_records_its_backing_file_and_without_direct_io_is_memory() {
    let lo = Loop::new(16 << 20, false);
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(dir.path(), &["io", &lo.dev, "--runtime", "0.3"]);
    let d = &r["target"]["device"];
    assert_eq!(d["transport"], "loop", "{d}");
    assert_eq!(d["loop_direct_io"], true, "{d}");
    assert_eq!(d["chain"][0]["kind"], "loop");
    assert_eq!(d["chain"][0]["name"], lo.dev.trim_start_matches("/dev/"));
    assert_eq!(d["chain"][1]["kind"], "backing_file");
    let backing = d["chain"][1]["name"].as_str().unwrap().to_string();
    assert!(backing.ends_with("disk.img"), "{backing}");
    // The device under the backing file's filesystem follows (this machine's disk).
    assert!(d["chain"].as_array().unwrap().len() > 2, "{d}");
    assert!(r["target"]["in_memory"].is_null());
    // The same file through a loop device without direct I/O: the page cache answers.
    let o = std::process::Command::new("losetup")
        .args(["-f", "--show", "--direct-io=off", &backing])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let cached = String::from_utf8(o.stdout).unwrap().trim().to_string();
    let r = run_json(dir.path(), &["io", &cached, "--runtime", "0.3"]);
    let _ = std::process::Command::new("losetup")
        .args(["-d", &cached])
        .status();
    assert_eq!(r["target"]["device"]["loop_direct_io"], false);
    let why = r["target"]["in_memory"].as_str().unwrap_or_default();
    assert!(why.contains("through the page cache"), "{why}");
    assert!(r["notes"].to_string().contains("Memory, not a drive"));
}

#[test]
fn sensors_are_chosen_with_a_known_word_or_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &["io", "t.bin", "--size", "1M", "--sensors", "hwmon,smart"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("'smart' is not auto, none or a list of hwmon, nvme"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("t.bin").exists());
    for choice in ["none", "hwmon,nvme", "auto"] {
        let r = run_json(
            dir.path(),
            &[
                "io",
                "t.bin",
                "--size",
                "1M",
                "--runtime",
                "0.2",
                "--sensors",
                choice,
            ],
        );
        assert_eq!(r["status"], "complete", "{choice}");
    }
}

#[test]
fn a_file_behind_a_mounted_loop_device_is_not_written_even_with_overwrite() {
    let lo = Loop::new(16 << 20, false);
    let m = Mount::new(&lo.dev);
    let img = lo.image();
    let dir = tempfile::tempdir().unwrap();
    let img_s = img.to_str().unwrap();
    for rw in ["write", "randwrite", "randrw"] {
        let o = run_in(
            dir.path(),
            &["io", img_s, "--rw", rw, "--overwrite", "--runtime", "50ms"],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{rw}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(
            e.contains(&format!("backs the loop device {}", lo.dev)),
            "{e}"
        );
        assert!(e.contains("mounted on"), "{e}");
    }
    // Reading it is harmless.
    let read = [
        "io",
        img_s,
        "--rw",
        "read",
        "--runtime",
        "50ms",
        "--read-holes",
    ];
    let o = run_in(dir.path(), &read);
    assert!(o.status.success(), "{}", stderr(&o));
    // Nor through a second loop device over the same file (the red team's way round).
    let out = std::process::Command::new("losetup")
        .args(["-f", "--show", img_s])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let o = run_in(
        dir.path(),
        &[
            "io",
            &second,
            "--destructive",
            &second,
            "--rw",
            "write",
            "--runtime",
            "50ms",
        ],
    );
    let _ = std::process::Command::new("losetup")
        .args(["-d", &second])
        .status();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("also backs the loop device {}", lo.dev)) && e.contains("mounted on"),
        "{e}"
    );
    drop(m);
    // No sector carries drivelab's stamp of its own offset (what its writes leave).
    let data = std::fs::read(&img).unwrap();
    let stamped = data
        .chunks(512)
        .enumerate()
        .filter(|(i, s)| *i > 0 && stamp(s).0 == *i as u64 * 512)
        .count();
    assert_eq!(stamped, 0, "the image was written");
}

/// `drivelab io` writing to the device `dev` for `runtime`, confirmed.
fn confirmed_write<'a>(dev: &'a str, runtime: &'a str) -> [&'a str; 8] {
    let w = "write";
    [
        "io",
        dev,
        "--rw",
        w,
        "--destructive",
        dev,
        "--runtime",
        runtime,
    ]
}

/// A child process that holds `dev` open for reading and writing (as `exec 3<>DEV` in
/// a shell does) until killed; returned once it holds it.
fn hold_open(dev: &str) -> std::process::Child {
    use std::io::BufRead;
    let mut child = std::process::Command::new("sh")
        .args([
            "-c",
            "exec 3<>\"$1\" && echo held && exec sleep 3600",
            "sh",
            dev,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let out = child.stdout.take().unwrap();
    std::io::BufReader::new(out).read_line(&mut line).unwrap();
    assert_eq!(line, "held\n");
    child
}

#[test]
fn a_device_held_open_by_another_process_is_not_written() {
    // Over a file in memory: the journal (in the test's directory) is on another drive.
    let lo = Loop::in_memory(16 << 20);
    let pattern: Vec<u8> = (0..16u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(lo.image(), &pattern).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut holder = hold_open(&lo.dev);
    let io = confirmed_write(&lo.dev, "0.2");
    let powerloss = [
        "run",
        "powerloss",
        &lo.dev,
        "--destructive",
        &lo.dev,
        "--journal",
        "j",
        "--out",
        "b",
        "--rounds",
        "4",
        "--round-blocks",
        "64",
    ];
    let refusals = [run_in(dir.path(), &io), run_in(dir.path(), &powerloss)];
    let _ = holder.kill();
    let _ = holder.wait();
    for o in &refusals {
        let e = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        let want = format!("is in use by process {} (sleep 3600)", holder.id());
        assert!(e.contains(&want), "{e}");
    }
    assert!(std::fs::read(lo.image()).unwrap() == pattern, "written");
    assert!(!dir.path().join("j").exists() && !dir.path().join("b").exists());
    // Once the other process let go, the same write goes ahead.
    let o = run_in(dir.path(), &io);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_log_is_never_replayed_onto_itself() {
    let lo = Loop::in_memory(1 << 20);
    let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(lo.image(), &pattern).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("log-link");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    let link = link.to_str().unwrap();
    for log in [lo.dev.as_str(), link] {
        let args = ["lab-replay-log", log, &lo.dev, "--destructive", &lo.dev];
        let o = run_in(dir.path(), &args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("is the log being replayed (LOG "), "{e}");
    }
    assert!(std::fs::read(lo.image()).unwrap() == pattern, "written");
}

/// Whether the process `pid` has the device node `dev` open.
fn holds(pid: u32, dev: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == std::path::Path::new(dev)))
    })
}

#[test]
fn a_device_another_drivelab_run_writes_is_said_to_be_in_its_use() {
    let lo = Loop::in_memory(16 << 20);
    let dir = tempfile::tempdir().unwrap();
    let write = confirmed_write(&lo.dev, "600");
    let mut first = drivelab()
        .args(write)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the first run to open the device", || {
        holds(first.id(), &lo.dev)
    });
    let o = run_in(dir.path(), &write);
    signal(first.id(), "INT");
    let _ = first.wait();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    let want = format!("is in use by process {} (", first.id());
    assert!(e.contains(&want) && e.contains("drivelab io "), "{e}");
    assert!(!e.contains("by the kernel"), "{e}");
}
