//! Telemetry beside the I/O: power and temperature from a fake hwmon device, a scripted
//! meter and the simulator give known figures, and the efficiency computed from them is
//! exact; a meter that prints garbage or dies leaves nulls and a note, and the run goes on.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use common::*;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn exact(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12),
        "{what}: {a} vs {b}"
    );
}

/// The `name` reading of `source` in each interval of a result's series.
fn readings(doc: &Value, source: &str, name: &str) -> Vec<Option<f64>> {
    doc["series"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["sensors"].as_array().and_then(|v| {
                v.iter()
                    .find(|s| s["source"] == source && s["name"] == name)
                    .and_then(|s| s["value"].as_f64())
            })
        })
        .collect()
}

#[test]
fn the_simulators_power_adds_up_to_its_own_energy_accounting() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc,capacity=4G,seed=2",
            "--rw",
            "randwrite",
            "--runtime",
            "5s",
            "--json",
            "-",
        ],
    );
    let recs = doc["series"]["records"].as_array().unwrap();
    let power = readings(&doc, "model", "power");
    assert!(power.iter().all(|p| p.is_some()), "{power:?}");
    let reported: f64 = recs
        .iter()
        .zip(&power)
        .map(|(r, p)| p.unwrap() * f(&r["duration_ns"]) / 1e9)
        .sum();
    // A fresh drive did no work before the run: all it used before was idle power.
    let gt = &doc["simulator_ground_truth"];
    let before = f(&gt["idle_power_w"]) * f(&doc["virtual_start_ns"]) / 1e9;
    let truth = f(&gt["energy_j"]) - before;
    assert!(
        (reported - truth).abs() <= 1e-5 * truth,
        "power × time {reported} J, the model used {truth} J"
    );
    // Writing takes more than idling.
    assert!(power.iter().all(|p| p.unwrap() > f(&gt["idle_power_w"])));
}

/// A fake hwmon device: a power-measuring riser at a constant `watts`, with a
/// temperature and its warning threshold.
fn fake_hwmon(dir: &Path, watts: u64) -> std::path::PathBuf {
    let hw = dir.join("hwmon7");
    std::fs::create_dir_all(&hw).unwrap();
    for (file, v) in [
        ("name", "ina226".to_string()),
        ("power1_input", (watts * 1_000_000).to_string()),
        ("temp1_input", "41500".into()),
        ("temp1_max", "70000".into()),
    ] {
        std::fs::write(hw.join(file), format!("{v}\n")).unwrap();
    }
    hw
}

#[test]
fn a_fake_hwmon_device_gives_exact_power_and_efficiency_in_the_steps_and_the_headline() {
    let dir = tempfile::tempdir().unwrap();
    let hw = fake_hwmon(dir.path(), 5);
    let out = dir.path().join("bundle");
    let o = run_in(
        dir.path(),
        &[
            "run",
            "peak",
            "--short",
            "--workloads",
            "4k-randread",
            "--size",
            "16M",
            "--sensor-hwmon",
            hw.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-db",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("drivelab: sensors: hwmon:ina226 (temperature, power, temperature_warning)"),
        "{}",
        stderr(&o)
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let mut knee_points = 0;
    let mut every_interval_read = true;
    // (Re-measurement slots with nothing to settle are skipped: no run, no telemetry.)
    for s in doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["run"].is_null())
    {
        let t = &s["telemetry"];
        let totals = &s["run"]["totals"]["all"];
        assert_eq!(t["power_source"], "hwmon:ina226");
        assert_eq!(
            (
                f(&t["power_min_w"]),
                f(&t["power_mean_w"]),
                f(&t["power_max_w"])
            ),
            (5.0, 5.0, 5.0)
        );
        // On a loaded machine a read of the sensor can miss its interval (left behind,
        // said in a note): then the efficiency is over the intervals with a reading and
        // the energy unknown; with a reading in every one, the run's own totals per watt.
        let measured: Vec<&Value> = s["run"]["series"]["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["ramp"] == false)
            .collect();
        let has_power = |r: &&&Value| {
            r["sensors"].as_array().is_some_and(|v| {
                v.iter().any(|x| {
                    x["source"] == "hwmon:ina226" && x["name"] == "power" && x["value"].is_number()
                })
            })
        };
        let secs_of = |rs: &[&&Value]| rs.iter().map(|r| f(&r["duration_ns"]) / 1e9).sum::<f64>();
        let all: Vec<&&Value> = measured.iter().collect();
        let covered: Vec<&&Value> = measured.iter().filter(has_power).collect();
        every_interval_read &= covered.len() == measured.len();
        if covered.len() == measured.len() {
            exact(
                f(&t["kiops_per_w"]),
                f(&totals["ops_per_s"]) / 1e3 / 5.0,
                "kIOPS/W",
            );
            exact(f(&t["mbps_per_w"]), f(&totals["mbps"]) / 5.0, "MB/s/W");
            exact(f(&t["energy_j"]), 5.0 * secs_of(&all), "energy");
        } else {
            let ops: f64 = covered.iter().map(|r| f(&r["all"]["ops"])).sum();
            exact(
                f(&t["kiops_per_w"]),
                ops / secs_of(&covered) / 1e3 / 5.0,
                "kIOPS/W over the intervals with a reading",
            );
            assert!(t["energy_j"].is_null(), "{t}");
        }
        assert_eq!(f(&t["temperature_max_celsius"]), 41.5);
        assert_eq!(f(&t["throttled_s"]), 0.0, "below the 70 °C warning");
        knee_points += 1;
    }
    assert!(knee_points >= 1);
    // The headline row carries the knee's power and efficiency.
    let sweep = &doc["summary"]["analysis"]["sweeps"][0]["sweep"];
    let knee = &sweep["curve"][sweep["knee"]["index"].as_u64().unwrap() as usize];
    assert_eq!(f(&knee["power_mean_w"]), 5.0);
    // (Over the intervals with a reading when one was missed: checked per step above.)
    if every_interval_read {
        exact(
            f(&knee["kiops_per_w"]),
            f(&knee["iops"]) / 1e3 / 5.0,
            "knee kIOPS/W",
        );
    } else {
        assert!(f(&knee["kiops_per_w"]) > 0.0);
    }
    let metrics = doc["summary"]["metrics"].as_array().unwrap();
    let m = metrics
        .iter()
        .find(|m| m["name"] == "4K random read efficiency at knee")
        .expect("efficiency metric");
    assert_eq!(m["unit"], "kIOPS/W");
    let tele = doc["summary"]["analysis"]["telemetry"].as_array().unwrap();
    assert!(!tele.is_empty());
}

/// Start `drivelab io` with a scripted meter in `dir`; the meter writes its pid to
/// `meter.pid`, prints 5 W every 50 ms until the file `go` exists, then prints a line of
/// garbage and runs `then`.
fn meter_run(
    dir: &Path,
    then: &str,
) -> (std::process::Child, BufReader<std::process::ChildStderr>) {
    let script = format!(
        "echo $$ > meter.pid; while [ ! -e go ]; do echo 5 W; sleep 0.05; done; echo 'garbage!'; {then}"
    );
    let mut child = drivelab()
        .current_dir(dir)
        .args([
            "io",
            "t.bin",
            "--size",
            "8M",
            "--rw",
            "randread",
            "--runtime",
            "600s",
            "--progress",
            "always",
            "--sensor-cmd",
            &script,
            "--json",
            "r.json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    (child, err)
}

/// Read stderr until `n` more progress lines (one per finished interval) have come.
fn intervals(err: &mut BufReader<std::process::ChildStderr>, n: usize) {
    let mut seen = 0;
    let mut line = String::new();
    while seen < n {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "drivelab ended early"
        );
        if line.starts_with('[') && line.contains("s]") {
            seen += 1;
        }
    }
}

fn meter_gone(dir: &Path) {
    let pid = std::fs::read_to_string(dir.join("meter.pid")).unwrap();
    let proc = format!("/proc/{}", pid.trim());
    wait_until("the meter to be killed and reaped", || {
        !Path::new(&proc).exists()
    });
}

#[test]
fn a_meter_that_prints_garbage_leaves_nulls_and_a_note_and_the_run_goes_on() {
    for (then, note) in [
        ("exec sleep 1000", "not readings (the first: 'garbage!')"),
        ("exit 3", "exited with status 3 "),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, mut err) = meter_run(dir.path(), then);
        // An interval with the meter printing, then garbage (and silence or its end),
        // then two whole intervals more before the run is stopped.
        intervals(&mut err, 2);
        std::fs::write(dir.path().join("go"), "").unwrap();
        intervals(&mut err, 3);
        signal(child.id(), "INT");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(130), "{rest}");
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap())
                .unwrap();
        let power = readings(&doc, "meter", "power");
        assert_eq!(power[0], Some(5.0), "{power:?}");
        assert_eq!(*power.last().unwrap(), None, "{power:?}");
        let notes = doc["notes"].to_string();
        assert!(notes.contains(note), "{notes}");
        meter_gone(dir.path());
    }
}

#[test]
fn bad_sensor_options_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.bin.notexec"), "echo 5\n").unwrap();
    for (args, want) in [
        (
            vec!["--sensor-hwmon", "/nonexistent"],
            "--sensor-hwmon /nonexistent: does not exist",
        ),
        (
            vec!["--sensor-cmd", "echo hello"],
            "--sensor-cmd: 'echo hello' exited with status 0 before printing a reading",
        ),
        (
            vec!["--sensor-cmd", "false"],
            "--sensor-cmd: 'false' exited with status 1 before printing a reading",
        ),
        (
            vec!["--sensor-cmd", "/nonexistent/meter"],
            "--sensor-cmd: '/nonexistent/meter' was not found (sh: exit status 127) before printing a reading",
        ),
        (
            vec!["--sensor-cmd", "./t.bin.notexec"],
            "is not executable (sh: exit status 126) before printing a reading",
        ),
        (vec!["--sensor-cmd", " "], "--sensor-cmd"),
    ] {
        let mut a = vec!["io", "t.bin", "--size", "1M", "--runtime", "1s"];
        a.extend(args);
        let o = run_in(dir.path(), &a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(want), "{e}");
        assert!(!dir.path().join("t.bin").exists(), "nothing written");
    }
    let o = run_in(
        dir.path(),
        &["io", "sim:nvme-tlc,capacity=4G", "--sensor-cmd", "echo 5"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Refused from the TARGET's text, before any simulator is built: a sim: spec that
    // could not even be built gets the same answer.
    for cmd in ["io", "run quick"] {
        let mut a: Vec<&str> = cmd.split(' ').collect();
        a.extend(["sim:no-such-model", "--sensor-cmd", "echo 5"]);
        let o = run_in(dir.path(), &a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains("--sensor-cmd, --sensor-hwmon: a simulated device"),
            "{e}"
        );
    }
}

#[test]
fn an_hwmon_device_with_a_file_that_is_not_regular_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hw = fake_hwmon(dir.path(), 5);
    let fifo = hw.join("in0_input");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(hw.join("curr0_input"), "100\n").unwrap();
    let hw_arg = hw.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "io",
            "t.bin",
            "--size",
            "1M",
            "--runtime",
            "1s",
            "--sensor-hwmon",
            hw_arg,
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("in0_input is not a regular file"), "{e}");
    assert!(!dir.path().join("t.bin").exists(), "nothing written");
}

#[test]
fn a_meter_that_exits_early_keeps_its_reading_and_the_run_says_when_it_exited() {
    // A test file drivelab makes (filled before the run) and one it did not (no fill).
    for made in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        if !made {
            std::fs::write(dir.path().join("t.bin"), vec![7u8; 1 << 20]).unwrap();
        }
        let mut a = vec![
            "io",
            "t.bin",
            "--rw",
            "randread",
            "--runtime",
            "300ms",
            "--sensors",
            "none",
            "--sensor-cmd",
            "echo 5",
        ];
        if made {
            a.extend(["--size", "1M"]);
        }
        let doc = run_json(dir.path(), &a);
        let power = readings(&doc, "meter", "power");
        assert_eq!(power[0], Some(5.0), "made {made}: {power:?}");
        let notes = doc["notes"].to_string();
        assert!(
            notes.contains("The meter command (--sensor-cmd) exited with status 0"),
            "made {made}: {notes}"
        );
    }
}

#[test]
fn quick_names_idle_when_its_value_is_bad() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["run", "quick", "null", "--idle", "abc"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--idle") && !e.contains("--interval"), "{e}");
}

#[test]
fn the_report_draws_power_and_temperature_over_the_suites_time_and_reads_old_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let o = run_in(
        dir.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G,seed=1",
            "--short",
            "--tests",
            "SEQ1M Q8T1,RND4K Q1T1",
            "--idle",
            "2s",
            "--no-db",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.join("run.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema_version"], 3);
    // The idle between tests is read every second: idle power shows between workloads.
    let idle_step = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["idle_before_ns"] == 2_000_000_000u64)
        .expect("a step after an idle");
    let idle_power: Vec<f64> = idle_step["idle_sensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == "power")
        .map(|r| f(&r["value"]))
        .collect();
    assert_eq!(idle_power.len(), 2, "{idle_step}");
    let idle_w = f(&idle_step["run"]["simulator_ground_truth"]["idle_power_w"]);
    assert!((idle_power[1] - idle_w).abs() < 1e-9, "{idle_power:?}");
    let charts = |bundle: &Path, name: &str| -> String {
        let svg = dir.path().join(name);
        let o = run_in(
            dir.path(),
            &[
                "report",
                bundle.to_str().unwrap(),
                "-o",
                dir.path().join(format!("{name}.html")).to_str().unwrap(),
                "--svg",
                svg.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(svg.join("quick-telemetry.svg")).unwrap()
    };
    let svg = charts(&out, "svg");
    for want in ["min 0.40 W", "max ", "SEQ1M Q8T1 read", "temperature"] {
        assert!(svg.contains(want), "{want} not in the chart");
    }
    // A bundle of layout 1 (before telemetry) still reads: its telemetry comes from the
    // readings in its series.
    let mut old = doc.clone();
    old["schema_version"] = 1.into();
    for s in old["steps"].as_array_mut().unwrap() {
        let s = s.as_object_mut().unwrap();
        for k in ["telemetry", "idle_before_ns", "idle_sensors"] {
            s.remove(k);
        }
    }
    old["summary"]["analysis"]
        .as_object_mut()
        .unwrap()
        .remove("telemetry");
    let old_dir = dir.path().join("old");
    std::fs::create_dir(&old_dir).unwrap();
    std::fs::write(old_dir.join("run.json"), old.to_string()).unwrap();
    assert!(charts(&old_dir, "svg-old").contains("min "));
    let mut future = doc.clone();
    future["schema_version"] = 4.into();
    std::fs::write(old_dir.join("run.json"), future.to_string()).unwrap();
    let o = run_in(
        dir.path(),
        &["report", old_dir.to_str().unwrap(), "-o", "x.html"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bundle schema 4 is not one of the supported 1 to 3"));
}

#[test]
fn a_resumed_suite_takes_the_sensor_options_again() {
    let dir = tempfile::tempdir().unwrap();
    let hw = fake_hwmon(dir.path(), 3);
    let args = [
        "run",
        "peak",
        "--short",
        "--workloads",
        "4k-randread",
        "--size",
        "16M",
        "--keep",
        "--out",
        "b",
        "--no-db",
    ];
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // As if it had been killed before its last step that measured (the steps after it
    // are re-measurement slots the sweep may have skipped).
    let p = dir.path().join("b/run.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let steps = doc["steps"].as_array_mut().unwrap();
    while steps.pop().is_some_and(|s| s["run"].is_null()) {}
    doc["status"] = "running".into();
    doc["summary"] = Value::Null;
    std::fs::write(&p, doc.to_string()).unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "--resume",
            "b",
            "--sensor-hwmon",
            hw.to_str().unwrap(),
            "--no-db",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("drivelab: sensors: hwmon:ina226"),
        "{}",
        stderr(&o)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let last = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|s| !s["run"].is_null())
        .unwrap()
        .clone();
    assert_eq!(f(&last["telemetry"]["power_mean_w"]), 3.0);
    // Without --resume the option is refused (a suite takes its own).
    let o = run_in(dir.path(), &["run", "--sensor-cmd", "echo 5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `doc` as if measured on the drive `serial` through a USB bridge in `driver` mode.
fn over_usb(doc: &Value, serial: &str, transport: &str, path: &str) -> Value {
    let mut d = doc.clone();
    let t = &mut d["target"];
    t["model"] = "Portable SSD T7".into();
    t["serial"] = serial.into();
    t["path"] = path.into();
    t["device"] = serde_json::json!({
        "disk": path.trim_start_matches("/dev/"),
        "transport": transport,
        "nvme_transport": null,
        "chain": [],
        "link": {
            "kind": "usb", "pcie_current_gt_per_s": null, "pcie_current_width_lanes": null,
            "pcie_max_gt_per_s": null, "pcie_max_width_lanes": null, "sata_gbit_per_s": null,
            "usb_mbit_per_s": 10000.0, "full_duplex": transport == "usb-uas",
            "ceiling_bytes_per_s": 1.2e9
        },
        "device_queue_depth": if transport == "usb-uas" { 32 } else { 1 },
        "block_nr_requests": 64,
        "loop_direct_io": null
    });
    d["target_arg"] = path.into();
    d
}

#[test]
fn one_drive_over_two_connections_is_one_drive_with_variants_by_link() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "quick",
            "sim:nvme-tlc,capacity=4G",
            "--short",
            "--preset",
            "peak",
            "--no-db",
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("b/run.json")).unwrap())
            .unwrap();
    for (name, d) in [
        ("uas", over_usb(&doc, "S1", "usb-uas", "/dev/sdb")),
        ("bot", over_usb(&doc, "S1", "usb-bot", "/dev/sdc")),
    ] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("run.json"), d.to_string()).unwrap();
    }
    // Compared side by side, named by the link, not refused.
    let o = run_in(dir.path(), &["compare", "uas", "bot"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("One drive (Portable SSD T7, serial S1) over several connections"),
        "{out}"
    );
    assert!(
        out.contains("A = Portable SSD T7 (USB 3.2 Gen 2, UAS) [quick]"),
        "{out}"
    );
    assert!(
        out.contains("B = Portable SSD T7 (USB 3.2 Gen 2, BOT) [quick]"),
        "{out}"
    );
    assert!(!out.contains("CONFIG DIFFERS"), "{out}");
    // In a report: two groups, one per connection, each named by it.
    let o = run_in(dir.path(), &["report", "uas", "bot", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    for want in [
        "Portable SSD T7 (USB 3.2 Gen 2, UAS)",
        "Portable SSD T7 (USB 3.2 Gen 2, BOT)",
    ] {
        assert!(html.contains(want), "{want} not in the report");
    }
    assert!(!html.contains("Not the same test"));
}

#[test]
fn seconds_throttled_match_the_simulators_own_and_are_shaded_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    // A long enough fill at link speed heats the simulated M.2 drive past its throttle
    // temperature, more than once.
    let o = run_in(
        dir.path(),
        &[
            "run",
            "seqfill",
            "sim:nvme-tlc,capacity=64G,slc=100%",
            "--no-db",
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("b/run.json")).unwrap())
            .unwrap();
    let step = doc["steps"].as_array().unwrap().last().unwrap();
    let gt = &step["run"]["simulator_ground_truth"];
    let truth: f64 = gt["throttle_intervals_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|iv| f(&iv[1]) - f(&iv[0]))
        .sum::<f64>()
        / 1e9;
    assert!(truth > 0.0, "the drive did not throttle: {gt}");
    let t = &step["telemetry"];
    assert_eq!(t["throttle_basis"], "thermal management time");
    assert!(
        (f(&t["throttled_s"]) - truth).abs() < 1e-6,
        "{} vs {truth}",
        t["throttled_s"]
    );
    // The temperature at both ends of the fill comes from the drive's sensor.
    let a = &doc["summary"]["analysis"];
    assert_eq!(
        f(&a["temperature_start_celsius"]),
        f(&t["temperature_start_celsius"])
    );
    let o = run_in(dir.path(), &["report", "b", "-o", "r.html", "--svg", "svg"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(dir.path().join("svg/seqfill-telemetry.svg")).unwrap();
    assert!(svg.contains("throttled"), "no throttled range in the chart");
}

#[test]
fn a_deep_queue_of_large_writes_heats_the_model_as_the_work_is_done_not_when_queued() {
    // 512 writes of 64 MiB queued at once are 40 s of NAND work: charged when queued, the
    // model read 123 °C after 1 s while its own truth said 57 °C. The readings follow the
    // heat of the work carried out, and the last one is the state the run left.
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        dir.path(),
        &[
            "io",
            "sim:nvme-tlc,capacity=128G",
            "--rw",
            "write",
            "--bs",
            "64M",
            "--iodepth",
            "512",
            "--runtime",
            "2s",
        ],
    );
    let gt = &doc["simulator_ground_truth"];
    let temps: Vec<f64> = readings(&doc, "model", "temperature")
        .into_iter()
        .flatten()
        .collect();
    let max_truth = gt["max_temperature_celsius"].as_f64().unwrap();
    let now_truth = gt["temperature_now_celsius"].as_f64().unwrap();
    assert!(temps.len() >= 2, "{temps:?}");
    for t in &temps {
        assert!(
            *t <= max_truth + 0.5,
            "a reading of {t} °C above the model's {max_truth}"
        );
    }
    let last = *temps.last().unwrap();
    assert!(
        (last - now_truth).abs() < 0.5,
        "last reading {last} vs {now_truth}"
    );
    // The drive heated over the 25 s of work it did, as a drive dissipating a few watts.
    assert!(last > temps[0] + 5.0 && last < 80.0, "{temps:?}");
}
