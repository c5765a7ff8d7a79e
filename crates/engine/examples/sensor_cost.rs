//! What one sample of each sensor source costs the sampling thread (it runs once per
//! interval, beside the I/O, never on it): an hwmon device of 4 channels (files in a
//! temporary folder, as the kernel's sysfs attributes are read: open, read, close), an
//! external meter with 10 lines waiting, and smartctl (a stand-in that prints a SATA
//! disk's JSON: the process start, which dominates the real one too).
//!
//! `cargo run -p drivelab-engine --example sensor_cost` (the engine is built with
//! opt-level 2 in every profile)

use std::path::Path;
use std::time::Instant;

use drivelab_engine::sensor::hwmon::HwmonSource;
use drivelab_engine::sensor::meter::CommandMeter;
use drivelab_engine::sensor::smartctl::SmartctlSource;
use drivelab_engine::sensor::SensorSource;

/// Median and 90th percentile of `n` timed calls of `f`, in microseconds.
fn time(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    (v[n / 2], v[n * 9 / 10])
}

fn write(dir: &Path, name: &str, v: &str) {
    std::fs::write(dir.join(name), format!("{v}\n")).unwrap();
}

fn main() {
    let d = tempfile::tempdir().unwrap();
    let hw = d.path().join("hwmon0");
    std::fs::create_dir(&hw).unwrap();
    for (f, v) in [
        ("name", "nvme"),
        ("temp1_input", "41850"),
        ("temp1_max", "84850"),
        ("temp2_input", "38850"),
        ("power1_input", "5250000"),
    ] {
        write(&hw, f, v);
    }
    let mut h = HwmonSource::open(&hw).unwrap();
    let (m, p90) = time(2000, || {
        std::hint::black_box(h.sample(0));
    });
    println!("hwmon, 4 channels: median {m:.1} µs, p90 {p90:.1} µs per sample");

    let mut meter =
        CommandMeter::spawn("while :; do echo 'vbus=5.02V ibus=1.2A'; sleep 0.01; done").unwrap();
    meter
        .wait_first(std::time::Duration::from_secs(10))
        .unwrap();
    let mut meter: Box<dyn SensorSource> = Box::new(meter);
    // Lines arrive while it sleeps; only the sample is the sampling thread's cost.
    let mut costs: Vec<f64> = (0..100)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let t = Instant::now();
            std::hint::black_box(meter.sample(0));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    costs.sort_by(f64::total_cmp);
    println!(
        "meter, ~10 lines of 3 values waiting: median {:.1} µs, p90 {:.1} µs per sample",
        costs[50], costs[90]
    );

    let prog = d.path().join("smartctl");
    std::fs::write(
        &prog,
        "#!/bin/sh\ncat <<'EOF'\n{\"temperature\":{\"current\":38},\"logical_block_size\":512,\"ata_smart_attributes\":{\"table\":[{\"id\":241,\"raw\":{\"value\":2000}}]}}\nEOF\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = SmartctlSource::open(&prog, Path::new("/dev/sdz"), false).unwrap();
    // Every call reads (no least period between reads here).
    s.period_ns = 0;
    let (m, p90) = time(50, || {
        std::hint::black_box(s.sample(0));
    });
    println!("smartctl stand-in (process start + JSON parse): median {m:.0} µs, p90 {p90:.0} µs per read");
}
