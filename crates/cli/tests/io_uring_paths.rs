//! How the io_uring backend adapts to its target: targets that take no non-blocking I/O
//! (zram) go straight to the kernel's workers, registered buffers fall back when refused.
//! Either way bytes land where the engine says and the result says what was done.

mod common;
use common::*;

const WORKERS_NOTE: &str = "handed every I/O to its kernel workers";

fn notes(r: &serde_json::Value) -> Vec<String> {
    r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_target_without_non_blocking_io_goes_to_the_kernels_workers_and_bytes_still_land() {
    let z = Zram::new(32 << 20);
    let dir = tempfile::tempdir().unwrap();
    let dest = format!("--destructive={}", z.dev);
    // Every block written once, out of order, many in flight: each sector must carry
    // its own offset.
    let r = run_json(
        dir.path(),
        &[
            "io",
            &z.dev,
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--iodepth",
            "32",
            "--ioengine",
            "io_uring",
            "--io_size",
            "100%",
            "--percentage_random",
            "0",
            &dest,
        ],
    );
    assert!(
        notes(&r).iter().any(|n| n.contains(WORKERS_NOTE)),
        "{:?}",
        notes(&r)
    );
    assert_eq!(r["totals"]["write"]["bytes"], 32 << 20);
    let data = std::fs::read(&z.dev).unwrap();
    for (i, s) in data.chunks(512).enumerate() {
        assert_eq!(stamp(s).0, i as u64 * 512, "sector {i}");
    }
    // Random reads: the queue stays deep and the intervals add up to the totals.
    let r = run_json(
        dir.path(),
        &[
            "io",
            &z.dev,
            "--rw",
            "randread",
            "--iodepth",
            "32",
            "--ioengine",
            "io_uring",
            "--runtime",
            "1",
        ],
    );
    assert!(notes(&r).iter().any(|n| n.contains(WORKERS_NOTE)));
    let t = &r["totals"];
    assert!(t["avg_inflight"].as_f64().unwrap() > 20.0, "{t}");
    // The concurrency the workers gave is a number in the result, not only a sentence.
    let busy = t["kernel_workers_busy_avg"]
        .as_f64()
        .expect("busy workers sampled");
    assert!((0.0..=32.0).contains(&busy), "{t}");
    let series_ops: u64 = r["series"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !x["ramp"].as_bool().unwrap_or(false))
        .map(|x| x["read"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(series_ops, t["read"]["ops"].as_u64().unwrap());
}

#[test]
fn a_file_on_a_disk_is_submitted_inline() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = run_json(
        dir.path(),
        &[
            "io",
            "--rw",
            "randread",
            "--iodepth",
            "8",
            "--ioengine",
            "io_uring",
            "--runtime",
            "0.5",
            "--size",
            "64m",
        ],
    );
    assert!(
        !notes(&r).iter().any(|n| n.contains(WORKERS_NOTE)),
        "{:?}",
        notes(&r)
    );
    assert!(r["totals"]["kernel_workers_busy_avg"].is_null());
    assert_eq!(r["config"]["fixedbufs"], true);
    assert_eq!(r["config"]["registerfiles"], true);
    assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn refused_buffer_registration_falls_back_with_a_note() {
    // Root may lock any amount of memory, so drop to nobody with a small RLIMIT_MEMLOCK:
    // enough for a ring, not for 4 × 64 KiB of registered buffers.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = dir.path().join("user.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let chown = std::process::Command::new("chown")
        .args([
            "65534:65534",
            f.to_str().unwrap(),
            dir.path().to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(chown.success());
    // 64 KiB random reads, QD4, as nobody with 64 KiB of lockable memory.
    let run = |extra: &[&str]| -> serde_json::Value {
        let o = std::process::Command::new("prlimit")
            .args(["--memlock=65536:65536", "setpriv", "--reuid=65534"])
            .args(["--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_drivelab"))
            .args(["io", f.to_str().unwrap(), "--rw", "randread", "--bs", "64k"])
            .args([
                "--iodepth",
                "4",
                "--ioengine",
                "io_uring",
                "--runtime",
                "0.5",
            ])
            .args(["--output-format", "json"])
            .args(extra)
            .env("XDG_DATA_HOME", dir.path())
            .output()
            .expect("prlimit and setpriv (util-linux) are available");
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let r = run(&[]);
    assert!(
        notes(&r)
            .iter()
            .any(|n| n.contains("refused to register") && n.contains("plain buffers were used")),
        "{:?}",
        notes(&r)
    );
    assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0);
    // Turned off, nothing is registered and nothing needs saying.
    let r = run(&["--fixedbufs=0"]);
    assert_eq!(r["config"]["fixedbufs"], false);
    assert!(!notes(&r).iter().any(|n| n.contains("refused to register")));
}

/// major:minor of the whole disk holding `path` (blkio throttling takes disks, not
/// partitions).
fn disk_of(path: &std::path::Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).unwrap().dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    if sys.join("partition").exists() {
        std::fs::read_to_string(sys.parent().unwrap().join("dev"))
            .unwrap()
            .trim()
            .to_string()
    } else {
        format!("{major}:{minor}")
    }
}

/// A blkio cgroup (v1, as on this machine kind) that lets through only `iops` writes per
/// second to one disk; removed on drop.
struct WriteThrottle {
    dir: std::path::PathBuf,
}

impl WriteThrottle {
    fn new(disk: &str, iops: u32) -> WriteThrottle {
        let dir = std::path::PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/drivelab-test-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("the blkio cgroup controller is mounted");
        std::fs::write(
            dir.join("blkio.throttle.write_iops_device"),
            format!("{disk} {iops}"),
        )
        .unwrap();
        WriteThrottle { dir }
    }
}

impl Drop for WriteThrottle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_still_removes_the_test_file() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    // Writes throttled to 2 per second: the 16 in flight take 8 s to drain after the
    // first Ctrl-C, so a second one arrives meanwhile even on a busy machine.
    let throttle = WriteThrottle::new(&disk_of(dir.path()), 2);
    let join = format!(
        "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
        throttle.dir.display()
    );
    let child = std::process::Command::new("sh")
        .args(["-c", &join, env!("CARGO_BIN_EXE_drivelab")])
        .args([
            "io",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--iodepth",
            "16",
            "--ioengine",
            "io_uring",
            "--runtime",
            "60",
        ])
        .env("XDG_DATA_HOME", dir.path())
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let test_file = dir.path().join("drivelab.test");
    wait_until("the run to start writing", || {
        locked_by_a_run(&test_file)
            && marker_text(&test_file).is_some_and(|m| m.contains("writing=1"))
    });
    // The first Ctrl-C starts a drain of 16 writes at 2 per second; Ctrl-C again until
    // the process ends (two signals sent together may arrive as one), which only a
    // second Ctrl-C handled during the drain does so soon.
    let pid = child.id();
    while std::path::Path::new(&format!("/proc/{pid}/task")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status();
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!test_file.exists(), "the test file was left behind");
    assert!(stderr(&o).contains("interrupted again"), "{}", stderr(&o));
}
