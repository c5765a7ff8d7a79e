//! drivelab's analyses recover the simulated SSD's ground truth: the simulator knows the
//! true steady state, burst end, SLC cache size, die count and stalls; the suites measure
//! them through the engine like on any drive.

mod common;

use common::*;
use serde_json::Value;

fn suite(args: &[&str]) -> Value {
    suite_and_table(args).0
}

/// The bundle's document and the table the run printed.
fn suite_and_table(args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    suite_in(dir.path(), args)
}

/// [`suite_and_table`] with the bundle left in `dir/bundle`.
fn suite_in(dir: &std::path::Path, args: &[&str]) -> (Value, String) {
    let out = dir.join("bundle");
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.extend(["--out", out.to_str().unwrap()]);
    let o = run_in(dir, &a);
    assert!(o.status.success(), "drivelab {a:?}: {}", stderr(&o));
    let doc =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    (doc, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn within(measured: f64, truth: f64, rel: f64, what: &str) {
    assert!(
        (measured - truth).abs() <= rel * truth.abs(),
        "{what}: measured {measured:.3}, truth {truth:.3} (±{:.0} %)",
        rel * 100.0
    );
}

/// Steps whose name starts with `prefix`, in order.
fn steps<'a>(doc: &'a Value, prefix: &str) -> Vec<&'a Value> {
    doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with(prefix))
        .collect()
}

/// The run of the last step that ran (a peak sweep's last steps may be re-measurements
/// it skipped).
fn last_run(doc: &Value) -> &Value {
    steps(doc, "")
        .into_iter()
        .rev()
        .map(|s| &s["run"])
        .find(|r| !r.is_null())
        .unwrap()
}

/// Virtual time at which a step's engine run began.
fn step_origin_ns(step: &Value) -> f64 {
    f(&step["run"]["virtual_start_ns"])
}

#[test]
fn consistency_recovers_the_steady_state() {
    // Small enough to write the drive many times over in the test, so it is really in
    // steady state; the scoring window is the reference's last 400 s.
    for spec in [
        "sim:nvme-tlc,capacity=4G,op=25%,seed=3",
        "sim:sata-mlc,capacity=4G,seed=3",
    ] {
        let doc = suite(&["consistency", spec, "--duration", "900s", "--round", "60s"]);
        let a = &doc["summary"]["analysis"];
        let rounds = steps(&doc, "4K random write");
        let gt = &rounds.last().unwrap()["run"]["simulator_ground_truth"];
        within(
            f(&a["scores"]["avg_iops"]),
            f(&gt["steady_state_random_write_4k_qd32_iops_per_s"]),
            0.05,
            &format!("{spec}: steady-state IOPS"),
        );
        // Tighter against what the dies sustain at the drive's own write amplification
        // over its last drive write (the closed form's WA is a large-block limit).
        within(
            f(&a["scores"]["avg_iops"]),
            f(&gt["random_write_4k_qd32_iops_at_recent_wa_per_s"]),
            0.04,
            &format!("{spec}: IOPS at the drive's own WA"),
        );
        assert_eq!(a["steady"]["reached"], true);
    }
}

#[test]
fn the_steady_state_truth_is_exact_or_absent() {
    // Issue 14: the dies' budget at the drive's own WA read 26-40 % above the
    // measurement on a SATA drive tested over 75 % of its span (the link, 85 % busy,
    // and the dies held each other back) and under batch GC. Where the closed form is
    // not exact it is null now; the drive's own completed rate is there everywhere.
    for (spec, op, budget) in [
        ("sim:sata-mlc,capacity=4G,seed=3", "25%", false),
        ("sim:sata-mlc,capacity=4G,seed=3,gc=batch", "0%", false),
        ("sim:nvme-tlc,capacity=4G,seed=3", "25%", true),
    ] {
        let doc = suite(&[
            "consistency",
            spec,
            "--op",
            op,
            "--duration",
            "600s",
            "--round",
            "60s",
        ]);
        let a = &doc["summary"]["analysis"];
        let run = steps(&doc, "4K random write");
        let gt = &run.last().unwrap()["run"]["simulator_ground_truth"];
        let avg = f(&a["scores"]["avg_iops"]);
        within(
            avg,
            f(&gt["recent_host_write_iops_per_s"]),
            0.02,
            &format!("{spec} --op {op}: the drive's own rate"),
        );
        let at_wa = &gt["random_write_4k_qd32_iops_at_recent_wa_per_s"];
        if budget {
            within(
                avg,
                f(at_wa),
                0.02,
                &format!("{spec} --op {op}: dies' budget"),
            );
        } else {
            assert!(
                at_wa.is_null(),
                "{spec} --op {op}: {at_wa} for {avg:.0} measured"
            );
        }
    }
}

#[test]
fn a_drive_that_throttles_in_random_writes_shows_two_levels_in_their_shares() {
    // Not an extreme drive: an ordinary M.2 drive in a warm case (50 °C ambient, 30 °C
    // per W to it, time constant 30 s) heats past 75 °C under steady random writes,
    // throttles to a third of its speed, cools to 70 °C and resumes, over and over.
    // The first throttle is no end of an initial burst; the two levels' shares are the
    // model's throttled and unthrottled time.
    let doc = suite(&[
        "consistency",
        "sim:nvme-tlc,capacity=4G,ambient=50,start_temp=56,thermal_r=30,thermal_tau=30s",
        "--duration",
        "600s",
    ]);
    let a = &doc["summary"]["analysis"];
    let run = steps(&doc, "4K random write")[0];
    let gt = &run["run"]["simulator_ground_truth"];
    let origin = step_origin_ns(run) / 1e9;
    let n = a["iops_per_s"].as_array().unwrap().len() as f64;
    let throttled: f64 = gt["throttle_intervals_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let (s, e) = (f(&p[0]) / 1e9 - origin, f(&p[1]) / 1e9 - origin);
            (e.min(n) - s.max(0.0)).max(0.0)
        })
        .sum();
    assert!(
        throttled > 0.3 * n,
        "the drive throttles: {throttled} s of {n}"
    );
    assert!(a["burst"].is_null(), "no burst: {}", a["burst"]);
    let levels = a["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{levels:?}");
    within(
        f(&levels[0]["share"]),
        throttled / n,
        0.05,
        "share of the throttled level",
    );
    within(
        f(&levels[0]["centre_iops"]) * 3.0,
        f(&levels[1]["centre_iops"]),
        0.05,
        "throttled to a third",
    );
    assert_eq!(f(&gt["thermal_ambient_celsius"]), 50.0);
    assert!(f(&gt["max_temperature_celsius"]) >= f(&gt["throttle_celsius"]));
}

/// Host writes a second over the scoring window from the model's record of its phases,
/// (start s, host pages written before it): from the first phase that starts in the
/// window to the last one (4K writes, one page each).
fn window_rate(phases: &[(f64, f64)], from_s: f64) -> f64 {
    let first = phases.iter().find(|p| p.0 >= from_s).unwrap();
    let last = phases.last().unwrap();
    assert!(
        last.0 - first.0 > 300.0,
        "most of the window: {first:?} to {last:?}"
    );
    (last.1 - first.1) / (last.0 - first.0)
}

#[test]
fn a_drive_with_tiered_gc_shows_its_phases_as_levels_and_stalls() {
    // The NVMe review's steady states that shift between levels, with phases of whole
    // seconds without I/O, from the mechanism: with gc=tiered the drive writes with every
    // die while its free pool is above half of its GC reserve (fast), then collects one
    // victim every 512 host pages beside the host (background), which does not keep up,
    // and once out of reserve refills it while the host waits (foreground: a stall of
    // tens of seconds). The analyses find the burst end where background GC first
    // started, the two levels and their shares of the time, and the stalls.
    let doc = suite(&[
        "consistency",
        "sim:nvme-tlc,capacity=32G,op=25%,dies=4,channels=4,gc=tiered,gc_batch=1000,gc_bg_every=512,thermal=off,slc=0",
        "--duration",
        "1200s",
    ]);
    let a = &doc["summary"]["analysis"];
    let run = steps(&doc, "4K random write")[0];
    let gt = &run["run"]["simulator_ground_truth"];
    let origin = step_origin_ns(run) / 1e9;
    let n = a["iops_per_s"].as_array().unwrap().len() as f64;
    let phases: Vec<(f64, String)> = gt["gc_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p[0]) / 1e9 - origin, p[1].as_str().unwrap().to_string()))
        .collect();
    // The burst ends where background GC first ran.
    let first_bg = phases.iter().find(|p| p.1 == "background").unwrap().0;
    let burst_end = f(&a["burst"]["at_s"]);
    assert!(
        (burst_end - first_bg).abs() <= 1.0,
        "burst end {burst_end} vs {first_bg}"
    );
    // Whole seconds inside each phase from the burst's end on (a second that straddles
    // two phases belongs to neither: a per-second series cannot split it).
    let mut time = std::collections::HashMap::<String, f64>::new();
    for (i, (start, kind)) in phases.iter().enumerate() {
        let end = phases.get(i + 1).map_or(n, |p| p.0).min(n);
        let whole = end.floor() - start.max(burst_end).ceil();
        if whole > 0.0 {
            *time.entry(kind.clone()).or_default() += whole;
        }
    }
    let (fast, bg, fg) = (time["fast"], time["background"], time["foreground"]);
    let levels = a["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{levels:?}");
    // The fast level: every die writing, no GC.
    let fast_iops = f(&gt["native_write_bytes_per_s"]) / 4096.0;
    within(f(&levels[1]["centre_iops"]), fast_iops, 0.05, "fast level");
    within(
        f(&levels[1]["share"]),
        fast / (fast + bg),
        0.05,
        "share of the fast level",
    );
    within(
        f(&levels[0]["share"]),
        bg / (fast + bg),
        0.05,
        "share of the background level",
    );
    // The foreground refills are the seconds without I/O.
    let zero = a["iops_per_s"]
        .as_array()
        .unwrap()
        .iter()
        .skip(burst_end as usize)
        .filter(|v| f(v) == 0.0)
        .count() as f64;
    within(zero, fg, 0.05, "seconds without I/O");
    // The phases end on the scored window's own level: the host writes the model
    // completed in the last 400 s (its phases write at constant rates, foreground none).
    let pages: Vec<(f64, f64)> = gt["gc_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p[0]) / 1e9 - origin, f(&p[2])))
        .collect();
    let window_truth = window_rate(&pages, f(&a["scores"]["window_start_s"]));
    let got = a["phases"].as_array().unwrap();
    within(
        f(&got.last().unwrap()["level_iops"]),
        window_truth,
        0.05,
        "final level",
    );
}

/// A QLC drive with a dynamic SLC cache on a slow link (the parameter set documented
/// in docs/sim.md, "Dynamic SLC cache").
const DYNAMIC_SLC: &str = "sim:capacity=64G,cell=qlc,dies=2,channels=2,iface=pcie1x1,slc=dynamic,slc_min=1G,fold_every=1.5,slc_bypass=128K,thermal=off";

#[test]
fn a_dynamic_slc_cache_with_25_percent_op_gives_an_intermediate_phase_and_a_second_burst() {
    // The NVMe review's 25 % over-provisioning run (burst, an intermediate phase, a second
    // burst, then the steady state), from the mechanism: the cache is carved out of the
    // free space, folded beside the host's writes once full, and created again from the
    // space folding won back. The phases analysis recovers the simulator's own record of
    // what host writes went to (SLC, native beside folding, native alone, native with GC):
    // every boundary and every level within 5 %.
    let dir = tempfile::tempdir().unwrap();
    let (doc, _) = suite_in(
        dir.path(),
        &[
            "consistency",
            DYNAMIC_SLC,
            "--op",
            "25%",
            "--duration",
            "600s",
        ],
    );
    let a = &doc["summary"]["analysis"];
    let fill = steps(&doc, "precondition")[0];
    let run = steps(&doc, "4K random write")[0];
    let gt = &run["run"]["simulator_ground_truth"];
    let origin_ns = step_origin_ns(run);
    // Truth: (start s, mode, host write commands before it), from the test's start on.
    let mut truth: Vec<(f64, String, f64)> = Vec::new();
    for p in gt["slc_write_phases"].as_array().unwrap() {
        let (t, mode, ops) = (
            (f(&p[0]) - origin_ns) / 1e9,
            p[1].as_str().unwrap(),
            f(&p[2]),
        );
        if t <= 0.0 {
            let at_start = f(&fill["run"]["simulator_ground_truth"]["host_write_commands"]);
            truth = vec![(0.0, mode.to_string(), at_start)];
        } else {
            truth.push((t, mode.to_string(), ops));
        }
    }
    let modes: Vec<&str> = truth.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(modes, ["slc", "fold", "slc", "fold", "native", "gc"]);
    let end = (
        (f(&gt["now_ns"]) - origin_ns) / 1e9,
        f(&gt["host_write_commands"]),
    );
    let got = a["phases"].as_array().unwrap();
    assert_eq!(got.len(), truth.len(), "{got:#?}");
    for (i, (start, mode, ops)) in truth.iter().enumerate() {
        let (next_t, next_ops) = truth.get(i + 1).map_or(end, |p| (p.0, p.2));
        let level = (next_ops - ops) / (next_t - start);
        let g = &got[i];
        let what = format!("phase {i} ({mode})");
        within(f(&g["level_iops"]), level, 0.05, &format!("{what}: level"));
        if i > 0 {
            let at = f(&g["start_s"]);
            assert!(
                (at - start).abs() <= (0.05 * start).max(1.0),
                "{what}: starts at {at} s, truth {start:.2} s"
            );
        }
        let kind = match (mode.as_str(), i + 1 == truth.len()) {
            (_, true) => "steady",
            ("slc", _) => "burst",
            _ => "intermediate",
        };
        assert_eq!(g["kind"], kind, "{what}");
    }
    // The bursts and the intermediate phase are apart by far more than the noise.
    let level = |i: usize| f(&got[i]["level_iops"]);
    assert!(level(0) > 2.0 * level(1) && level(2) > 2.0 * level(1) && level(1) > 1.5 * level(5));
    // The summary and the HTML report say it in the reviews' terms.
    let summary = std::fs::read_to_string(dir.path().join("bundle/summary.txt")).unwrap();
    assert!(
        summary.contains(
            "phases: burst 50970 IOPS to 26 s, intermediate 18461 to 122 s, second burst"
        ),
        "{summary}"
    );
    let html = dir.path().join("r.html");
    let bundle = dir.path().join("bundle");
    let o = run_in(
        dir.path(),
        &[
            "report",
            bundle.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("Phases of") && text.contains("second burst"));
}

#[test]
fn a_drive_with_tiers_of_gc_urgency_shows_four_levels_and_stuttering_phases() {
    // The NVMe review's SM2260: a steady state that shifts between four levels, with
    // phases of whole seconds without I/O. From the mechanism: background GC in three
    // tiers of urgency (a victim every 2048, 1024, 512 host pages as the free pool
    // sinks), none of which keeps up, then a foreground refill while the host waits.
    // The levels analysis finds each tier's level (within 5 % of the rate the model
    // wrote at in that phase) and its share of the time (within 2 points of the
    // seconds the phase held most of), and the stalls are the seconds without I/O.
    let doc = suite(&[
        "consistency",
        "sim:nvme-tlc,capacity=32G,op=25%,dies=4,channels=4,gc=tiered,gc_batch=1000,gc_bg_every=2048,gc_tiers=3,thermal=off,slc=0",
        "--duration",
        "1200s",
    ]);
    let a = &doc["summary"]["analysis"];
    let run = steps(&doc, "4K random write")[0];
    let gt = &run["run"]["simulator_ground_truth"];
    let origin = step_origin_ns(run);
    let n = a["iops_per_s"].as_array().unwrap().len();
    let burst_end = f(&a["burst"]["at_s"]).ceil() as usize;
    // (start s, kind, host pages before it), from the run's start.
    let phases: Vec<(f64, String, f64)> = gt["gc_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                (f(&p[0]) - origin) / 1e9,
                p[1].as_str().unwrap().into(),
                f(&p[2]),
            )
        })
        .collect();
    let mut rate = std::collections::HashMap::<String, (f64, f64)>::new();
    let mut held = vec![std::collections::HashMap::<String, f64>::new(); n];
    for (i, (start, kind, pages)) in phases.iter().enumerate() {
        let Some((end, _, end_pages)) = phases.get(i + 1) else {
            break;
        };
        let (s, e) = (start.max(burst_end as f64), end.min(n as f64));
        if e <= s {
            continue;
        }
        let r = rate.entry(kind.clone()).or_default();
        (r.0, r.1) = (r.0 + (end_pages - pages), r.1 + (end - start));
        for (sec, h) in held
            .iter_mut()
            .enumerate()
            .take(e.ceil() as usize)
            .skip(s as usize)
        {
            let part = e.min(sec as f64 + 1.0) - s.max(sec as f64);
            *h.entry(kind.clone()).or_default() += part.max(0.0);
        }
    }
    let mostly = |kind: &str| {
        held[burst_end..]
            .iter()
            .filter(|h| {
                h.iter()
                    .max_by(|x, y| x.1.total_cmp(y.1))
                    .is_some_and(|(k, _)| k == kind)
            })
            .count() as f64
    };
    let kinds = ["background-3", "background-2", "background", "fast"];
    let levels = a["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 4, "{levels:?}");
    let all: f64 = kinds.iter().map(|k| mostly(k)).sum();
    for (level, kind) in levels.iter().zip(kinds) {
        let (pages, secs) = rate[kind];
        within(f(&level["centre_iops"]), pages / secs, 0.05, kind);
        let share = f(&level["share"]);
        let truth = mostly(kind) / all;
        assert!(
            (share - truth).abs() <= 0.02,
            "{kind}: share {share:.3}, truth {truth:.3}"
        );
    }
    let zero = a["iops_per_s"].as_array().unwrap()[burst_end..]
        .iter()
        .filter(|v| f(v) == 0.0)
        .count() as f64;
    within(zero, mostly("foreground"), 0.05, "seconds without I/O");
}

/// The end of the burst against the simulator's first GC copy; and the levels line
/// says the seconds its shares are of: those after that burst, not every second with
/// I/O (the burst, a phase of its own, is not among them).
#[test]
fn consistency_finds_the_end_of_the_burst_and_counts_the_levels_after_it() {
    let (doc, table) = suite_and_table(&[
        "consistency",
        "sim:nvme-tlc,capacity=64G,op=25%,seed=3",
        "--duration",
        "120s",
        "--round",
        "60s",
        "--window",
        "60s",
    ]);
    let a = &doc["summary"]["analysis"];
    let rounds = steps(&doc, "4K random write");
    let gt = &rounds.last().unwrap()["run"]["simulator_ground_truth"];
    let first_copy = f(&gt["gc_first_copy_at_ns"]);
    let burst_end_truth_s = (first_copy - step_origin_ns(rounds[0])) / 1e9;
    assert!(
        burst_end_truth_s > 10.0,
        "a burst long enough to measure: {burst_end_truth_s} s"
    );
    let at = f(&a["burst"]["at_s"]);
    assert!(
        (at - burst_end_truth_s).abs() <= (0.05 * burst_end_truth_s).max(1.0),
        "burst end: measured {at} s, truth {burst_end_truth_s:.2} s"
    );

    let scope = &a["levels_scope"];
    assert_eq!(f(&scope["from_s"]), at, "{scope}");
    assert_eq!(f(&scope["stall_iops"]), 32.0, "the queue depth: {scope}");
    let after: Vec<f64> = a["iops_per_s"].as_array().unwrap()[at as usize..]
        .iter()
        .map(f)
        .collect();
    let counted = after.iter().filter(|&&x| x > 32.0).count();
    assert_eq!(f(&scope["seconds"]) as usize, counted, "{scope}");
    let levels = a["levels"].as_array().unwrap();
    let in_levels: f64 = levels.iter().map(|l| f(&l["seconds"])).sum();
    assert_eq!(in_levels as usize, counted);
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("performance levels:"))
        .unwrap_or_else(|| panic!("a levels line in:\n{table}"));
    let shares: Vec<String> = levels
        .iter()
        .map(|l| {
            format!(
                "{:.0} ({:.0} %)",
                f(&l["centre_iops"]),
                100.0 * f(&l["share"])
            )
        })
        .collect();
    assert_eq!(
        line.trim(),
        format!(
            "performance levels: {} IOPS (% of the {counted} s after the initial burst, from {at} s on, with more than 32 I/Os)",
            shares.join(", ")
        ),
        "{table}"
    );
}

#[test]
fn seqfill_finds_the_slc_cache_size() {
    let doc = suite(&[
        "seqfill",
        "sim:nvme-tlc,capacity=64G,slc=16G,dies=4,channels=2,thermal=off",
    ]);
    let fill = &doc["summary"]["analysis"]["fill"];
    let gt = &steps(&doc, "")[0]["run"]["simulator_ground_truth"];
    within(
        f(&fill["cache_bytes"]),
        f(&gt["slc_cache_bytes"]),
        0.05,
        "SLC cache size",
    );
    within(
        f(&fill["initial_mbps"]),
        f(&gt["slc_write_bytes_per_s"]) / 1e6,
        0.05,
        "cache speed",
    );
    within(
        f(&fill["post_cache_avg_mbps"]),
        f(&gt["native_write_bytes_per_s"]) / 1e6,
        0.05,
        "post-cache speed",
    );
}

#[test]
fn seqfill_sees_a_cache_of_a_second_and_a_half() {
    // The preset at 64 GiB: a 6.9 GB SLC cache written at PCIe 4.0 speed runs out in
    // about 1.3 s, which per-second logging cannot see (issue 14).
    let doc = suite(&["seqfill", "sim:nvme-tlc,capacity=64G"]);
    let fill = &doc["summary"]["analysis"]["fill"];
    let gt = &steps(&doc, "")[0]["run"]["simulator_ground_truth"];
    let cache_s = f(&gt["slc_cache_bytes"]) / f(&gt["slc_write_bytes_per_s"]);
    assert!(cache_s < 2.0, "a short cache: {cache_s} s");
    within(
        f(&fill["cache_bytes"]),
        f(&gt["slc_cache_bytes"]),
        0.05,
        "SLC cache size",
    );
    within(
        f(&fill["initial_mbps"]),
        f(&gt["slc_write_bytes_per_s"]) / 1e6,
        0.05,
        "cache speed",
    );
    assert_eq!(fill["cache_too_short_to_see"], false);
}

#[test]
fn seqfill_finds_the_deep_drops_of_a_drive_folding_under_load() {
    // The review's USB drive: after hundreds of GB the rate drops under 50 MB/s for
    // 3-5 s at a time, recovering for 10-15 s. The mechanism: host writes keep going to
    // a large SLC cache; once it is full the drive folds 12 GB of it into TLC on its 48
    // dies while the host waits (3.7 s), then takes 12 GB more at the USB link's speed
    // (12.5 s), and so on. The analysis finds every drop where the model held the host.
    let doc = suite(&[
        "seqfill",
        "sim:nvme-tlc,capacity=512G,iface=usb10,dies=48,slc=300G,fold=load,fold_batch=12G,thermal=off",
    ]);
    let fill = &doc["summary"]["analysis"]["fill"];
    let step = steps(&doc, "")[0];
    let gt = &step["run"]["simulator_ground_truth"];
    let origin = step_origin_ns(step) / 1e9;
    let model: Vec<(f64, f64)> = gt["slc_fold_stall_intervals_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p[0]) / 1e9 - origin, (f(&p[1]) - f(&p[0])) / 1e9))
        .collect();
    let drops = fill["drops"].as_array().unwrap();
    assert!(model.len() >= 10, "the drive folds under load: {model:?}");
    assert_eq!(drops.len(), model.len(), "{drops:?} vs {model:?}");
    for (d, &(start, len)) in drops.iter().zip(&model) {
        assert!((3.0..=5.0).contains(&len), "a drop of 3-5 s: {len}");
        assert!((f(&d["start_s"]) - start).abs() <= 0.15, "{d} vs {start}");
        within(f(&d["len_s"]), len, 0.05, "drop length");
        assert!(f(&d["min_mbps"]) < 50.0);
        assert!(f(&d["at_bytes"]) > 200e9, "after hundreds of GB: {d}");
    }
    let gaps: Vec<f64> = model.windows(2).map(|w| w[1].0 - w[0].0 - w[0].1).collect();
    assert!(gaps.iter().all(|g| (10.0..=15.0).contains(g)), "{gaps:?}");
    // Issue 24: no lower level follows the cache, the drops mark its end: the cache is
    // what the drive took before it first held the host, and the average after it holds
    // the stalls.
    assert_eq!(fill["cache_ended_by_stalls"], true, "{fill}");
    within(
        f(&fill["cache_bytes"]),
        f(&gt["slc_cache_bytes"]),
        0.05,
        "cache size",
    );
    let end_s = f(&gt["now_ns"]) / 1e9 - origin;
    let written = f(&step["params"]["fill_bytes"]);
    let after_truth = (written - f(&gt["slc_cache_bytes"])) / (end_s - model[0].0) / 1e6;
    within(
        f(&fill["post_cache_avg_mbps"]),
        after_truth,
        0.05,
        "post-cache average",
    );
}

#[test]
fn seqfill_reads_the_simulated_temperature() {
    let doc = suite(&["seqfill", "sim:nvme-tlc,capacity=16G", "--fill", "50%"]);
    let a = &doc["summary"]["analysis"];
    assert_eq!(a["temperature_available"], true);
    let (t0, t1) = (
        f(&a["temperature_start_celsius"]),
        f(&a["temperature_end_celsius"]),
    );
    assert!(t1 > t0, "writing heats the drive: {t0} → {t1}");
}

#[test]
fn peak_saturates_where_the_dies_run_out() {
    let doc = suite(&[
        "peak",
        "sim:nvme-tlc,capacity=16G,dies=8,thermal=off",
        "--workloads",
        "4k-randread",
        "--point-time",
        "2s",
        "--max-qd",
        "256",
        "--no-early-stop",
        "--precondition",
    ]);
    let steps = steps(&doc, "");
    assert!(steps[0]["name"]
        .as_str()
        .unwrap()
        .starts_with("precondition"));
    let gt = &last_run(&doc)["simulator_ground_truth"];
    let sweep = &doc["summary"]["analysis"]["sweeps"][0]["sweep"];
    let knee = &sweep["knee"];
    // Random reads land on random dies, so the dies saturate only gradually: the QD
    // that reaches 95 % of the die limit follows from the closed queueing network of D
    // dies (service S each) behind a fixed delay Z, by mean value analysis. MVA assumes
    // exponential service; the model's fixed NAND times saturate no later, so the knee
    // is that QD's power of two or the one below.
    let dies = f(&gt["die_count"]);
    let max_iops = f(&gt["random_read_4k_max_iops_per_s"]);
    let s_die = dies / max_iops;
    let z = (f(&gt["random_read_qd1_latency_ns"]) / 1e9 - s_die).max(0.0);
    let (mut q_len, mut mva_knee) = (0.0f64, 0u32);
    for n in 1..=4096u32 {
        // Each read visits one die in D: per-die queue length X·R/D.
        let r = s_die * (1.0 + q_len);
        let x = n as f64 / (z + r);
        q_len = x * r / dies;
        if x >= 0.95 * max_iops {
            mva_knee = n.next_power_of_two();
            break;
        }
    }
    let knee_qd = f(&knee["qd"]) as u32;
    assert!(
        knee_qd == mva_knee || knee_qd == mva_knee / 2,
        "knee at QD{knee_qd}; {dies} dies reach 95 % by QD{mva_knee} (MVA)"
    );
    within(
        f(&knee["peak_throughput"]),
        f(&gt["random_read_4k_max_iops_per_s"]),
        0.05,
        "peak random-read IOPS",
    );
}

#[test]
fn peak_measures_sequential_sweeps_in_a_sequential_state() {
    // After the random writes, the 128K sweeps ran on the fragmented drive (issue 14:
    // 1 023 MB/s read, 148 MB/s write on a drive that gives 4 628 and 1 227 written
    // sequentially). They follow a sequential precondition now, and say so.
    let sweep = |seq: &str| {
        let doc = suite(&[
            "peak",
            "sim:nvme-tlc,capacity=4G,thermal=off",
            "--workloads",
            "4k-randwrite,128k-read,128k-write",
            "--point-time",
            "1s",
            "--max-qd",
            "16",
            "--steady-writes",
            "60s",
            "--seq-precondition",
            seq,
        ]);
        let ids: Vec<String> = steps(&doc, "")
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        let sweeps = doc["summary"]["analysis"]["sweeps"]
            .as_array()
            .unwrap()
            .clone();
        let peak = |i: usize| f(&sweeps[i]["sweep"]["knee"]["peak_throughput"]);
        let state = |i: usize| sweeps[i]["sweep"]["state"].as_str().unwrap().to_string();
        (ids, [peak(1), peak(2)], [state(0), state(1), state(2)])
    };
    let (ids, with, states) = sweep("1");
    let pos = |id: &str| ids.iter().position(|s| s == id).unwrap();
    assert!(pos("4k-randwrite-qd16") < pos("seq-precondition-pass1"));
    assert!(pos("seq-precondition-pass2") < pos("128k-read-qd1"));
    assert_eq!(
        states,
        ["random-steady", "sequential-steady", "sequential-steady"]
    );
    let (ids, without, states) = sweep("0");
    assert!(!ids.iter().any(|s| s.starts_with("seq-precondition")));
    assert_eq!(states, ["random-steady", "random-steady", "random-steady"]);
    assert!(with[0] > 1.5 * without[0], "read: {with:?} vs {without:?}");
    assert!(with[1] > 3.0 * without[1], "write: {with:?} vs {without:?}");
}

#[test]
fn peak_random_write_knee_is_where_the_steady_rate_is_reached() {
    // Steady-state 4K random writes are noisy (GC); the knee is the lowest QD whose
    // rate is not below 95 % of what the dies sustain at the drive's own write
    // amplification, and the level the knee is measured against is that rate.
    for seed in [1, 2, 3] {
        let doc = suite(&[
            "peak",
            &format!("sim:sata-mlc,capacity=4G,seed={seed}"),
            "--workloads",
            "4k-randwrite",
            "--point-time",
            "20s",
            "--max-qd",
            "128",
            "--no-early-stop",
            "--steady-writes",
            "300s",
        ]);
        // The model keeps the budget only over a drive write whose WA was steady; the
        // sweep's last re-measurements at low depth may not be one: its latest value.
        let truth = steps(&doc, "")
            .into_iter()
            .rev()
            .map(|s| {
                &s["run"]["simulator_ground_truth"]["random_write_4k_qd32_iops_at_recent_wa_per_s"]
            })
            .find(|v| v.is_number())
            .map(f)
            .expect("the budget at the recent WA, in some step of the sweep");
        let sweep = &doc["summary"]["analysis"]["sweeps"][0]["sweep"];
        let knee = &sweep["knee"];
        within(
            f(&knee["plateau_throughput"]),
            truth,
            0.05,
            "sustained level",
        );
        let curve = sweep["curve"].as_array().unwrap();
        let i = curve.iter().position(|p| p["qd"] == knee["qd"]).unwrap();
        let iops = |j: usize| f(&curve[j]["iops"]);
        assert!(iops(i) >= 0.9 * truth, "seed {seed}: knee {knee}");
        assert!(
            i > 0 && iops(i - 1) < 0.95 * truth,
            "seed {seed}: knee {knee}"
        );
    }
}

#[test]
fn stalls_are_found_where_the_model_stalled() {
    let doc = suite(&[
        "consistency",
        "sim:dramless,capacity=8G,seed=5",
        "--duration",
        "120s",
        "--round",
        "30s",
        "--window",
        "60s",
    ]);
    let rounds = steps(&doc, "4K random write");
    // The test is one continuous run (issue 14: no drains between rounds).
    assert_eq!(rounds.len(), 1);
    // Series time → virtual time. Each run (the continuous one; rounds under
    // --until-steady) started where the last one drained; the series holds each run's
    // seconds and then, as seconds without completions, a drain that took whole seconds
    // (rounded: a drain of 0.8 s is one series second).
    let mut segments = Vec::new(); // (first series second, seconds, virtual start, scale)
    let mut pos = 0.0;
    for (i, r) in rounds.iter().enumerate() {
        let origin = step_origin_ns(r) / 1e9;
        let n = r["run"]["series"]["records"].as_array().unwrap().len() as f64;
        segments.push((pos, n, origin, 1.0));
        pos += n;
        let drain_s = f(&r["run"]["drain_ns"]) / 1e9;
        if i + 1 < rounds.len() && drain_s.round() > 0.0 {
            segments.push((pos, drain_s.round(), origin + n, drain_s / drain_s.round()));
            pos += drain_s.round();
        }
    }
    let to_virtual = |s: f64, end: bool| {
        let &(p0, _, v0, scale) = segments
            .iter()
            .find(|&&(p0, n, _, _)| {
                if end {
                    s > p0 && s <= p0 + n
                } else {
                    s >= p0 && s < p0 + n
                }
            })
            .unwrap();
        v0 + (s - p0) * scale
    };
    let gt = &rounds.last().unwrap()["run"]["simulator_ground_truth"];
    let model: Vec<(f64, f64)> = gt["gc_stall_intervals_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p[0]) / 1e9, f(&p[1]) / 1e9))
        .collect();
    let measured = doc["summary"]["analysis"]["stalls"].as_array().unwrap();
    assert!(!measured.is_empty(), "the DRAM-less drive stalls");
    const SLACK_S: f64 = 0.05;
    for s in measured {
        let (start, len) = (f(&s["start_s"]), f(&s["len_s"]));
        let (v0, v1) = (to_virtual(start, false), to_virtual(start + len, true));
        // Whole seconds without completions lie inside one of the model's stalls.
        assert!(
            model
                .iter()
                .any(|&(a, b)| a <= v0 + SLACK_S && v1 <= b + SLACK_S),
            "measured stall {start}+{len} s (virtual {v0:.3}–{v1:.3}) matches no model stall"
        );
    }
    // And every model stall that covers a whole second of the series is found, except
    // across the end of a run: I/Os drained after its deadline count in its last second.
    let inside_a_round = |a: f64, b: f64| {
        rounds.iter().any(|r| {
            let o = step_origin_ns(r) / 1e9;
            let n = r["run"]["series"]["records"].as_array().unwrap().len() as f64;
            a >= o && b <= o + n - 1.0
        })
    };
    // I/Os queued before a stall may still complete early in it, so a stall of two
    // seconds or more leaves a whole second empty nearly always, not always: at least
    // 80 % of them are found.
    let long: Vec<(f64, f64)> = model
        .iter()
        .copied()
        .filter(|&(a, b)| b - a >= 2.0 && inside_a_round(a, b))
        .collect();
    assert!(
        long.len() >= 3,
        "the DRAM-less drive stalls for seconds: {model:?}"
    );
    let found = long
        .iter()
        .filter(|&&(a, b)| {
            measured.iter().any(|s| {
                let start = f(&s["start_s"]);
                let v0 = to_virtual(start, false);
                let v1 = to_virtual(start + f(&s["len_s"]), true);
                v0 < b && v1 > a
            })
        })
        .count();
    assert!(
        found * 5 >= long.len() * 4,
        "{found} of {} model stalls of 2 s or more were found",
        long.len()
    );
}

#[test]
fn over_provisioning_by_25_percent_scores_higher() {
    let base = [
        "consistency",
        "sim:nvme-tlc,capacity=16G",
        "--duration",
        "120s",
        "--round",
        "30s",
        "--window",
        "60s",
    ];
    let plain = suite(&base);
    let mut with_op = base.to_vec();
    with_op.extend(["--op", "25%"]);
    let op = suite(&with_op);
    let (a, b) = (
        f(&plain["summary"]["analysis"]["scores"]["avg_iops"]),
        f(&op["summary"]["analysis"]["scores"]["avg_iops"]),
    );
    assert!(b > 1.5 * a, "25 % spare: {b:.0} IOPS against {a:.0}");
}

/// What a run measured, without what depends on the host (CPU time, wall-clock dates).
fn measured(run: &Value) -> Value {
    let mut r = run.clone();
    for k in ["started_at", "host", "notes"] {
        r.as_object_mut().unwrap().remove(k);
    }
    r["totals"].as_object_mut().unwrap().remove("cpu");
    r["totals"]["data"]
        .as_object_mut()
        .unwrap()
        .remove("bytes_per_s_per_core");
    r
}

#[test]
fn the_same_simulated_drive_gives_the_same_result_bit_for_bit() {
    let args = [
        "consistency",
        "sim:dramless,capacity=4G,seed=9",
        "--duration",
        "60s",
        "--round",
        "20s",
        "--window",
        "30s",
    ];
    let a = suite(&args);
    let b = suite(&args);
    let steps = |d: &Value| -> Vec<Value> {
        d["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| measured(&s["run"]))
            .collect()
    };
    assert_eq!(steps(&a), steps(&b));
    assert_eq!(a["summary"], b["summary"]);
    // A different device seed gives a different run.
    let c = suite(&[
        "consistency",
        "sim:dramless,capacity=4G,seed=10",
        "--duration",
        "60s",
        "--round",
        "20s",
        "--window",
        "30s",
    ]);
    assert_ne!(steps(&a), steps(&c));
    // `drivelab io` with the same --randseed, likewise.
    let dir = tempfile::tempdir().unwrap();
    let io = [
        "io",
        "sim:nvme-tlc,capacity=4G",
        "--rw",
        "randrw",
        "--iodepth",
        "16",
        "--runtime",
        "5s",
        "--randseed",
        "7",
    ];
    let x = run_json(dir.path(), &io);
    let y = run_json(dir.path(), &io);
    let (mx, my) = (measured(&x), measured(&y));
    assert_eq!(mx["series"], my["series"]);
    assert_eq!(mx["totals"], my["totals"]);
    assert_eq!(mx["histogram"], my["histogram"]);
}

#[test]
fn peak_measures_again_the_points_within_noise_of_the_knee_threshold() {
    // Issue 14: the knee landed on noise. With 5 s points on this drive (in its steady
    // state), seeds 2, 4, 5 and 6 read QD4 high enough to be the knee; 60 s points give QD4 at
    // 86.5 % of the level and QD8 at 96.8 % (docs/performance.md): the knee is QD8. The
    // points within noise of the threshold, and the best one that sets it, are measured
    // again (at most 4 extra points a sweep, 3 passes a point), pooled, and the knee
    // recomputed.
    for seed in [2, 4, 5, 6] {
        let (doc, table) = suite_and_table(&[
            "peak",
            &format!("sim:sata-mlc,capacity=4G,seed={seed}"),
            "--workloads",
            "4k-randwrite",
            "--point-time",
            "5s",
            "--max-qd",
            "128",
            "--no-early-stop",
            "--steady-writes",
            "300s",
        ]);
        let sweep = &doc["summary"]["analysis"]["sweeps"][0]["sweep"];
        assert_eq!(sweep["first_pass_knee_qd"], 4, "seed {seed}: {sweep}");
        assert_eq!(sweep["knee"]["qd"], 8, "seed {seed}: {sweep}");
        let curve = sweep["curve"].as_array().unwrap();
        let qd4 = curve.iter().find(|p| p["qd"] == 4).unwrap();
        assert!(f(&qd4["passes"]) >= 2.0, "seed {seed}: {qd4}");
        assert_eq!(qd4["uncertain"], false, "seed {seed}: {qd4}");
        let extra: f64 = curve
            .iter()
            .map(|p| {
                let passes = f(&p["passes"]);
                assert!((1.0..=3.0).contains(&passes), "{p}");
                within(f(&p["measured_s"]), 5.0 * passes, 0.05, "seconds measured");
                passes - 1.0
            })
            .sum();
        assert!(
            (1.0..=4.0).contains(&extra),
            "seed {seed}: {extra} extra passes"
        );
        let rechecks = steps(&doc, "4K random write, ")
            .into_iter()
            .filter(|s| s["id"].as_str().unwrap().contains("recheck"))
            .count();
        assert_eq!(rechecks, 4, "the four planned re-measurement steps");
        assert!(
            table.contains("measured again") && table.contains("knee QD4 → QD8"),
            "{table}"
        );
    }
}

/// Issue 24: the DAS review's UAS-versus-BOT contrast in `run iometer`: behind a
/// bulk-only bridge (one command at a time) 4K random reads and writes are flat across
/// queue depths; the same drive behind UAS scales to QD 4 and beyond.
#[test]
fn iometer_shows_a_bulk_only_bridge_flat_across_queue_depths_and_uas_scaling() {
    let mut by_iface = Vec::new();
    for iface in ["usb-bot", "usb10"] {
        let spec = format!("sim:nvme-tlc,capacity=4G,iface={iface},link=850MB/s,thermal=off");
        let doc = suite(&[
            "iometer",
            &spec,
            "--size",
            "1G",
            "--test-time",
            "1s",
            "--qds",
            "1,2,4",
            "--seq-qds",
            "1",
        ]);
        let iops = |prefix: &str| -> Vec<f64> {
            steps(&doc, prefix)
                .iter()
                .map(|s| f(&s["run"]["totals"]["all"]["ops_per_s"]))
                .collect()
        };
        by_iface.push((iops("4K random read"), iops("4K random write")));
    }
    let (bot, uas) = (&by_iface[0], &by_iface[1]);
    for curve in [&bot.0, &bot.1] {
        for r in curve.iter() {
            within(
                *r,
                curve[0],
                0.02,
                &format!("BOT flat across QD: {curve:?}"),
            );
        }
    }
    for curve in [&uas.0, &uas.1] {
        assert!(
            curve[1] > 1.8 * curve[0] && curve[2] > 3.2 * curve[0],
            "UAS scales to QD4: {curve:?}"
        );
    }
}

/// Issue 27: `--end_fsync` sends the simulated drive a FLUSH at the end; with a volatile
/// write cache and an honest flush the run lasts until the cache is on NAND, and the
/// truth of a power cut lists the blocks it lost. `drivelab io sim:help` lists the keys.
#[test]
fn end_fsync_waits_for_a_volatile_cache_and_a_power_cut_lists_its_losses() {
    let dir = tempfile::tempdir().unwrap();
    let elapsed = |spec: &str, fsync: &str| {
        let doc = run_json(
            dir.path(),
            &[
                "io",
                spec,
                "--rw",
                "write",
                "--bs",
                "1M",
                "--iodepth",
                "8",
                "--size",
                "256M",
                "--runtime",
                "1s",
                "--end_fsync",
                fsync,
            ],
        );
        (f(&doc["totals"]["elapsed_ns"]), doc)
    };
    let cached = "sim:capacity=1G,block=1M,write_cache=volatile,write_cache_size=64M,flush=honest";
    let (plain, _) = elapsed(cached, "0");
    let (synced, _) = elapsed(cached, "1");
    // 64 MiB drained at the drive's native rate (about 1 GB/s): tens of milliseconds.
    assert!(synced > plain + 20e6, "end_fsync {synced} ns vs {plain} ns");
    let ignored =
        "sim:capacity=1G,block=1M,write_cache=volatile,write_cache_size=64M,flush=ignored";
    let (a, _) = elapsed(ignored, "0");
    let (b, doc) = elapsed(&format!("{ignored},power_cut=500ms"), "1");
    assert!(b - a < 1e6, "an ignored flush returns at once: {b} vs {a}");
    let gt = &doc["simulator_ground_truth"];
    assert_eq!(gt["power_cut_at_ns"], 500_000_000);
    let blocks = gt["power_cut_lost_unflushed_blocks"].as_u64().unwrap();
    let ranges = gt["power_cut_lost_unflushed_ranges_bytes"]
        .as_array()
        .unwrap();
    let sum: u64 = ranges.iter().map(|r| r[1].as_u64().unwrap()).sum();
    assert_eq!(sum, blocks * 4096);
    assert!(blocks > 0 && blocks <= 64 << 8, "{blocks} blocks lost");
    let o = run_in(dir.path(), &["io", "sim:help"]);
    assert!(o.status.success());
    for key in [
        "iface",
        "usb-bot",
        "write_cache",
        "flush",
        "power_cut",
        "tprog_slc",
    ] {
        assert!(stdout(&o).contains(key), "sim:help lacks {key}");
    }
}

/// The random-write sweep of `seed`'s SATA drive in its steady state, points of `point`.
fn steady_randwrite_sweep(seed: u32, point: &str) -> (Value, String) {
    suite_and_table(&[
        "peak",
        &format!("sim:sata-mlc,capacity=4G,seed={seed}"),
        "--workloads",
        "4k-randwrite",
        "--point-time",
        point,
        "--max-qd",
        "64",
        "--no-early-stop",
        "--steady-writes",
        "300s",
    ])
}

#[test]
fn a_knee_from_10_s_points_is_the_knee_from_60_s_points() {
    // Issue 24: with 10 s points the best point of a steady-state random-write sweep
    // read high by luck and set a threshold no lower point was near: the knee was
    // QD32, where 60 s points put it at QD8-16. The best point is measured again too
    // now, and the level and the knee agree with the long points' (and the drive's).
    for seed in [1, 7] {
        let (short, _) = steady_randwrite_sweep(seed, "10s");
        let (long, _) = steady_randwrite_sweep(seed, "60s");
        let knee = |d: &Value| d["summary"]["analysis"]["sweeps"][0]["sweep"]["knee"].clone();
        let (ks, kl) = (knee(&short), knee(&long));
        let truth = f(&last_run(&long)["simulator_ground_truth"]
            ["random_write_4k_qd32_iops_at_recent_wa_per_s"]);
        within(
            f(&ks["plateau_throughput"]),
            truth,
            0.05,
            "level from 10 s points",
        );
        within(
            f(&kl["plateau_throughput"]),
            truth,
            0.05,
            "level from 60 s points",
        );
        within(f(&ks["qd"]), f(&kl["qd"]), 0.05, "knee QD");
    }
}

#[test]
fn a_knee_at_the_last_queue_depth_says_the_curve_may_still_rise() {
    // Issue 24: a read sweep stopped at QD4 on a drive whose eight dies take far more:
    // the knee is the last point, and the table says the curve may still be rising.
    let (doc, table) = suite_and_table(&[
        "peak",
        "sim:nvme-tlc,capacity=16G,dies=8,thermal=off",
        "--workloads",
        "4k-randread",
        "--point-time",
        "1s",
        "--max-qd",
        "4",
        "--no-early-stop",
        "--precondition",
    ]);
    let knee = &doc["summary"]["analysis"]["sweeps"][0]["sweep"]["knee"];
    assert_eq!(
        (knee["qd"].as_u64(), &knee["at_last_qd"]),
        (Some(4), &Value::Bool(true)),
        "{knee}"
    );
    assert!(
        table.contains("knee at the sweep's highest queue depth") && table.contains("QD4"),
        "{table}"
    );
    // With room to level off, the knee is no longer the last point.
    let doc = suite(&[
        "peak",
        "sim:nvme-tlc,capacity=16G,dies=8,thermal=off",
        "--workloads",
        "4k-randread",
        "--point-time",
        "1s",
        "--max-qd",
        "256",
        "--no-early-stop",
        "--precondition",
    ]);
    let knee = &doc["summary"]["analysis"]["sweeps"][0]["sweep"]["knee"];
    assert_eq!(knee["at_last_qd"], false, "{knee}");
}

/// The burst the simulator wrote at the start of the random-write test: its length in
/// seconds and its level in IOPS, from the commands the model took before `end_ns`
/// (`commands_at_end`) and those the precondition left.
fn burst_truth(doc: &Value, end_ns: f64, commands_at_end: f64) -> (f64, f64) {
    let pre = steps(doc, "precondition");
    let at_start = f(&pre.last().unwrap()["run"]["simulator_ground_truth"]["host_write_commands"]);
    let run = steps(doc, "4K random write")[0];
    let len_s = (end_ns - step_origin_ns(run)) / 1e9;
    (len_s, (commands_at_end - at_start) / len_s)
}

/// The burst line, the phases and the metric say one thing: the burst's length and
/// level within 5 % of the truth.
fn assert_one_burst(doc: &Value, table: &str, truth: (f64, f64), what: &str) {
    let a = &doc["summary"]["analysis"];
    let b = &a["burst"];
    within(
        f(&b["length_s"]),
        truth.0,
        0.05,
        &format!("{what}: burst length"),
    );
    within(
        f(&b["burst_iops"]),
        truth.1,
        0.05,
        &format!("{what}: burst level"),
    );
    let first = &a["phases"][0];
    assert_eq!(first["kind"], "burst", "{what}: {first}");
    assert_eq!(first["end_s"], b["at_s"], "{what}");
    assert_eq!(first["level_iops"], b["burst_iops"], "{what}");
    let line = format!(
        "initial burst: {:.0} IOPS until {:.1} s",
        f(&b["burst_iops"]),
        f(&b["length_s"])
    );
    assert!(table.contains(&line), "{what}: {line}\n{table}");
    assert!(
        table.contains(&format!("phases: burst {:.0} IOPS to", f(&b["burst_iops"]))),
        "{table}"
    );
}

#[test]
fn a_burst_of_two_seconds_is_found_on_the_first_seconds_logged_at_100_ms() {
    // Issue 24: a drive at 120 k IOPS for 2 s, then about 6 k. The fresh drive writes
    // into its spare area until garbage collection first has to copy a page.
    let (doc, table) = suite_and_table(&[
        "consistency",
        "sim:capacity=24G,op=4%,dies=6,channels=6,thermal=off",
        "--duration",
        "120s",
        "--window",
        "60s",
    ]);
    let gt = &steps(&doc, "4K random write")[0]["run"]["simulator_ground_truth"];
    let truth = burst_truth(
        &doc,
        f(&gt["gc_first_copy_at_ns"]),
        f(&gt["gc_first_copy_host_write_commands"]),
    );
    assert!(
        truth.0 < 2.5 && truth.1 > 100e3,
        "the drive of the issue: {truth:?}"
    );
    assert_one_burst(&doc, &table, truth, "120 k for 2 s");
    let a = &doc["summary"]["analysis"];
    within(
        f(&a["burst"]["steady_iops"]),
        6e3,
        0.2,
        "the level after it",
    );
    // The run's first 30 s are in the series again at 100 ms.
    let head = &steps(&doc, "4K random write")[0]["run"]["series"]["head"];
    assert_eq!(head["interval_ns"], 100_000_000);
    assert_eq!(head["records"].as_array().unwrap().len(), 300);
}

#[test]
fn a_cache_burst_of_three_seconds_then_folding_is_a_burst_of_three_seconds() {
    // Issue 24: 97 k IOPS for 3 s out of a dynamic SLC cache, then 38 k while it is
    // folded (then native writes, then the steady state): the burst is the first level.
    let (doc, table) = suite_and_table(&[
        "consistency",
        "sim:capacity=64G,cell=qlc,dies=4,channels=4,link=440MB/s,slc=dynamic,slc_min=1G,fold_every=1.5,slc_bypass=128K,thermal=off",
        "--duration",
        "120s",
        "--window",
        "60s",
    ]);
    let gt = &steps(&doc, "4K random write")[0]["run"]["simulator_ground_truth"];
    let phases = gt["slc_write_phases"].as_array().unwrap();
    let fold = phases.iter().find(|p| p[1] == "fold").unwrap();
    let truth = burst_truth(&doc, f(&fold[0]), f(&fold[2]));
    assert!(
        (2.5..3.5).contains(&truth.0) && truth.1 > 90e3,
        "the drive of the issue: {truth:?}"
    );
    assert_one_burst(&doc, &table, truth, "97 k for 3 s");
    // The folding phase follows it at its own level.
    let next = phases.iter().skip_while(|p| p[1] != "fold").nth(1).unwrap();
    let fold_truth = (f(&next[2]) - f(&fold[2])) / ((f(&next[0]) - f(&fold[0])) / 1e9);
    let second = &doc["summary"]["analysis"]["phases"][1];
    within(
        f(&second["level_iops"]),
        fold_truth,
        0.05,
        "the folding phase",
    );
}

#[test]
fn fast_gc_phases_of_a_drive_without_a_cache_are_gc_levels_not_bursts() {
    // Issue 24: tiered GC and no SLC cache. After each foreground refill the drive writes
    // with every die again, at its fresh burst's level: those phases were called "second
    // burst" and "burst 3". Only the first phase (the fresh drive's spare area) is a
    // burst; the later fast phases are GC levels, where the model ran its "fast" phase.
    let (doc, table) = suite_and_table(&[
        "consistency",
        "sim:nvme-tlc,capacity=32G,op=25%,dies=4,channels=4,gc=tiered,gc_batch=3000,gc_bg_every=512,thermal=off,slc=0",
        "--duration",
        "900s",
    ]);
    let a = &doc["summary"]["analysis"];
    let run = steps(&doc, "4K random write")[0];
    let gt = &run["run"]["simulator_ground_truth"];
    let origin = step_origin_ns(run);
    // The model's "fast" phases after its first: (start s, end s).
    let gc: Vec<(f64, String)> = gt["gc_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                (f(&p[0]) - origin) / 1e9,
                p[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let fast: Vec<(f64, f64)> = gc
        .windows(2)
        .filter(|w| w[0].1 == "fast" && w[0].0 > 30.0)
        .map(|w| (w[0].0, w[1].0))
        .collect();
    let got = a["phases"].as_array().unwrap();
    let kinds: Vec<&str> = got.iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[0], "burst");
    assert!(!kinds[1..].contains(&"burst"), "{kinds:?}");
    let gc_levels: Vec<&Value> = got.iter().filter(|p| p["kind"] == "gc_level").collect();
    assert!(gc_levels.len() >= 2, "{kinds:?}");
    // Each is one of the model's fast phases, at the first burst's level.
    for p in gc_levels {
        let (s, e) = (f(&p["start_s"]), f(&p["end_s"]));
        assert!(
            fast.iter().any(|&(a, b)| s >= a - 1.0 && e <= b + 1.0),
            "{p} in {fast:?}"
        );
        within(
            f(&p["level_iops"]),
            f(&got[0]["level_iops"]),
            0.05,
            "fast level",
        );
    }
    assert!(
        table.contains(", GC level ") && !table.contains("second burst"),
        "{table}"
    );
}
