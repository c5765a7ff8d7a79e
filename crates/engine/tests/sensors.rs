//! Sensors attached to a real target land in the interval series beside the I/O.

use std::sync::atomic::AtomicBool;

use drivelab_engine::run::{self, RunOptions};
use drivelab_engine::sensor::{SensorReading, SensorSource};
use drivelab_engine::spec::{RwMode, WorkloadRequest};
use drivelab_engine::target::{OpenOptions, Target, TargetSpec};

/// A pretend power meter: 5.0 W, 5.1 W, 5.2 W, … one step per sample.
struct Meter(u32);

impl SensorSource for Meter {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        self.0 += 1;
        vec![SensorReading::new(
            "power",
            "watt",
            Some(5.0 + 0.1 * (self.0 - 1) as f64),
            at_ns,
            "meter",
        )]
    }
}

#[test]
fn attached_sensors_are_sampled_every_interval() {
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    t.add_sensor(Box::new(Meter(0)));
    let req = WorkloadRequest {
        rw: RwMode::RandRead,
        runtime_ns: Some(1_000_000_000),
        log_interval_ns: 100_000_000,
        ..WorkloadRequest::default()
    };
    let r = run_on(&mut t, &req);
    let recs = &r.measured.series.records;
    assert_eq!(recs.len(), 10);
    let (mut prev, mut prev_at) = (0.0, 0u64);
    for (i, rec) in recs.iter().enumerate() {
        let p = rec
            .sensors
            .iter()
            .find(|s| s.name == "power")
            .unwrap_or_else(|| panic!("interval {i} has no power reading"));
        assert_eq!(p.unit, "watt");
        let v = p.value.expect("a value");
        assert!(v > prev, "a fresh sample each interval");
        // The last interval, stretched by the drain past the deadline, ends with the
        // run's final sample (taken when the run ends, after the one at its start).
        let most = if i + 1 == recs.len() {
            u64::MAX
        } else {
            150_000_000
        };
        if i > 0 {
            let gap = p.at_ns - prev_at;
            assert!(
                (50_000_000..=most).contains(&gap),
                "one sample per 100 ms interval: {gap} ns"
            );
        }
        (prev, prev_at) = (v, p.at_ns);
    }
    // The sources are given back to the target after the run.
    assert_eq!(t.sensors().len(), 1);
}

/// A hwmon source whose temperature file disappears at its `break_at`-th sample (by
/// count, not time: the test does not depend on the machine's speed).
struct Breaking {
    inner: drivelab_engine::sensor::hwmon::HwmonSource,
    samples: u32,
    break_at: u32,
    file: std::path::PathBuf,
}

impl SensorSource for Breaking {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        self.samples += 1;
        if self.samples == self.break_at {
            std::fs::remove_file(&self.file).unwrap();
        }
        self.inner.sample(at_ns)
    }
}

/// `req` run to its end on `t`.
fn run_on(t: &mut Target, req: &WorkloadRequest) -> drivelab_engine::result::RunResult {
    let w = run::resolve(req, &t.info).unwrap();
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        stop: &stop,
        progress: None,
    };
    run::run(&w, t, &opts).unwrap()
}

fn value(rec: &drivelab_engine::series::IntervalRecord, name: &str) -> Option<f64> {
    let r = rec.sensors.iter().find(|s| s.name == name).expect(name);
    assert_eq!(r.source, "hwmon:drivetemp");
    r.value
}

#[test]
fn hwmon_values_land_in_the_series_and_a_channel_lost_mid_run_is_null() {
    let d = tempfile::tempdir().unwrap();
    let hw = d.path().join("hwmon7");
    std::fs::create_dir(&hw).unwrap();
    std::fs::write(hw.join("name"), "drivetemp\n").unwrap();
    std::fs::write(hw.join("temp1_input"), "41000\n").unwrap();
    std::fs::write(hw.join("power1_input"), "3500000\n").unwrap();
    let inner = drivelab_engine::sensor::hwmon::HwmonSource::open(&hw).unwrap();
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    t.add_sensor(Box::new(Breaking {
        inner,
        samples: 0,
        break_at: 4,
        file: hw.join("temp1_input"),
    }));
    let req = WorkloadRequest {
        rw: RwMode::RandRead,
        runtime_ns: Some(2_000_000_000),
        log_interval_ns: 100_000_000,
        ..WorkloadRequest::default()
    };
    let r = run_on(&mut t, &req);
    assert_eq!(
        r.measured.status,
        drivelab_engine::result::RunStatus::Complete
    );
    let recs: Vec<_> = r
        .measured
        .series
        .records
        .iter()
        .filter(|rec| !rec.sensors.is_empty())
        .collect();
    assert!(recs.len() >= 5, "{} intervals with samples", recs.len());
    let temps: Vec<Option<f64>> = recs.iter().map(|rec| value(rec, "temperature")).collect();
    // 41.0 °C until the file went, null after, never a 0 in its place.
    let lost = temps
        .iter()
        .position(Option::is_none)
        .expect("lost mid-run");
    assert!(lost >= 1, "{temps:?}");
    assert!(temps[..lost].iter().all(|&v| v == Some(41.0)), "{temps:?}");
    assert!(temps[lost..].iter().all(Option::is_none), "{temps:?}");
    // The other channel goes on.
    assert!(recs.iter().all(|rec| value(rec, "power") == Some(3.5)));
    let js = serde_json::to_value(recs.last().unwrap()).unwrap();
    let t = js["sensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "temperature")
        .unwrap()
        .clone();
    assert!(t["value"].is_null() && t["unit"] == "celsius", "{t}");
}

/// A null target as if it sat behind a USB 2 link (60 MB/s at most).
fn behind_usb2() -> Target {
    use drivelab_engine::target::identity::{DeviceIdentity, Link};
    let mut t = Target::open(
        TargetSpec::Null { capacity: 1 << 30 },
        &OpenOptions::default(),
    )
    .unwrap();
    let mut id = DeviceIdentity::default();
    id.disk = "sdz".into();
    id.transport = "usb-bot".into();
    id.link = Some(Link {
        kind: "usb".into(),
        pcie_current_gt_per_s: None,
        pcie_current_width_lanes: None,
        pcie_max_gt_per_s: None,
        pcie_max_width_lanes: None,
        sata_gbit_per_s: None,
        sas_gbit_per_s: None,
        usb_mbit_per_s: Some(480.0),
        full_duplex: false,
        ceiling_bytes_per_s: Some(60e6),
    });
    t.info.device = Some(id);
    t
}

#[test]
fn a_run_faster_than_its_link_says_so() {
    let mut t = behind_usb2();
    let req = WorkloadRequest {
        rw: RwMode::Read,
        bs: vec![drivelab_engine::spec::BsShare {
            bytes: 1 << 20,
            percent: 100,
        }],
        runtime_ns: Some(300_000_000),
        ..WorkloadRequest::default()
    };
    let r = run_on(&mut t, &req);
    // The null target answers at memory speed: far above 60 MB/s.
    assert!(r.measured.totals.read.bytes_per_s > 60e6);
    let n = r.measured.notes.join(" ");
    assert!(
        n.contains("Faster than the link allows") && n.contains("USB 480 Mb/s"),
        "{n}"
    );
    // Every second above the ceiling is flagged in the series, and said so.
    let recs = &r.measured.series.records;
    assert!(recs
        .iter()
        .all(|x| x.over_link_ceiling == (x.read.bytes_per_s > 60e6)));
    assert!(recs.iter().any(|x| x.over_link_ceiling));
    assert!(
        n.contains("intervals ran faster than the link carries"),
        "{n}"
    );
    let js = serde_json::to_value(recs.first().unwrap()).unwrap();
    assert_eq!(js["over_link_ceiling"], true);
    // Below the ceiling nothing is flagged.
    let link = t.info.device.as_mut().unwrap().link.as_mut().unwrap();
    link.ceiling_bytes_per_s = Some(1e18);
    let r = run_on(&mut t, &req);
    assert!(r
        .measured
        .series
        .records
        .iter()
        .all(|x| !x.over_link_ceiling));
    let n = r.measured.notes.join(" ");
    assert!(!n.contains("faster than the link"), "{n}");
    let js = serde_json::to_value(r.measured.series.records.first().unwrap()).unwrap();
    assert!(js.get("over_link_ceiling").is_none(), "absent when false");
    // Without a known link there is nothing to compare with.
    t.info.device = None;
    let r = run_on(&mut t, &req);
    assert!(!r.measured.notes.join(" ").contains("Faster than the link"));
}
