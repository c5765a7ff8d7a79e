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
    let w = run::resolve(&req, &t.info).unwrap();
    let stop = AtomicBool::new(false);
    let r = run::run(
        &w,
        &mut t,
        &RunOptions {
            stop: &stop,
            progress: None,
        },
    )
    .unwrap();
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
        if i > 0 {
            let gap = p.at_ns - prev_at;
            assert!(
                (50_000_000..=150_000_000).contains(&gap),
                "one sample per 100 ms interval: {gap} ns"
            );
        }
        (prev, prev_at) = (v, p.at_ns);
    }
    // The sources are given back to the target after the run.
    assert_eq!(t.sensors().len(), 1);
}
