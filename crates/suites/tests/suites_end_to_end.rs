//! Every suite end to end with `--short` knobs on a simulated drive and on a test file,
//! through the shared runner into a bundle; and a resumed bundle does not redo steps.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use drivelab_engine::target::{OpenOptions, Target, TargetKind, TargetSpec};
use drivelab_suites::bundle::{Bundle, BundleStatus, RunDoc, StepStatus, RUN_JSON};
use drivelab_suites::runner::{check_resume, execute, new_doc, Observer, Outcome, Runner};
use drivelab_suites::{consistency, iometer, mixed, peak, quick, seqfill, Knobs, Suite};

fn sim(spec: &str) -> Target {
    let d = drivelab_sim::parse(spec).unwrap();
    Target::open(TargetSpec::Model(Box::new(d)), &OpenOptions::default()).unwrap()
}

fn test_file(dir: &Path, bytes: u64) -> Target {
    Target::open(
        TargetSpec::Path(Some(dir.join("drivelab.test"))),
        &OpenOptions {
            write: true,
            direct: true,
            create_size: bytes,
            ..OpenOptions::default()
        },
    )
    .unwrap()
}

fn run(suite: &dyn Suite, target: &mut Target, out: &Path) -> (RunDoc, Outcome) {
    let plan = suite.plan(&target.info).unwrap();
    let doc = new_doc(suite, &plan, target, None);
    let mut b = Bundle::create(out, doc).unwrap();
    let stop = AtomicBool::new(false);
    let o = execute(
        suite,
        &plan,
        target,
        &mut b,
        &Runner {
            stop: &stop,
            observer: None,
        },
    )
    .unwrap();
    // What is on disk is what the runner holds.
    let saved = Bundle::open(out).unwrap().doc;
    assert_eq!(saved.status, b.doc.status);
    let ids = |d: &RunDoc| {
        d.steps
            .iter()
            .map(|s| (s.id.clone(), s.status, s.started_at.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&saved), ids(&b.doc));
    (saved, o)
}

fn metric(doc: &RunDoc, name: &str) -> f64 {
    doc.summary
        .as_ref()
        .unwrap()
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric '{name}'"))
        .value
}

fn check_complete(doc: &RunDoc, o: &Outcome) {
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    assert_eq!(doc.status, BundleStatus::Complete);
    assert_eq!(doc.steps.len(), doc.planned_steps);
    assert_eq!(doc.config_hash.len(), 64);
    for s in &doc.steps {
        assert!(s.status.finished(), "{} is {:?}", s.id, s.status);
        if s.status == StepStatus::Complete {
            let r = s.run.as_ref().unwrap();
            assert!(!r.series.records.is_empty(), "{} has a series", s.id);
            assert!(r.totals.all.ops > 0, "{} did I/O", s.id);
        }
    }
}

#[test]
fn quick_on_a_simulated_nvme_drive_gives_the_four_row_table() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let q = quick::Quick::new(true);
    let (doc, o) = run(&q, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    // A simulated drive gets its span written once before the tests read it.
    assert_eq!(doc.steps.len(), 1 + 4 * 2 * 2);
    assert_eq!(doc.steps[0].id, "fill");
    let Outcome::Complete(r) = o else {
        unreachable!()
    };
    for test in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        assert!(r.table.contains(test), "{}", r.table);
        assert!(metric(&doc, &format!("{test} read")) > 0.0);
        assert!(metric(&doc, &format!("{test} write")) > 0.0);
    }
    assert!(r.table.contains("best of 2 runs"));
    // Deep sequential reads beat QD1 4K random reads by far on any SSD model.
    assert!(metric(&doc, "SEQ1M Q8T1 read") > 5.0 * metric(&doc, "RND4K Q1T1 read"));
    // Best is the highest of the runs.
    let a = &doc.summary.as_ref().unwrap().analysis["tests"][0]["read"];
    let best = a["best_mbps"].as_f64().unwrap();
    for v in a["mbps"].as_array().unwrap() {
        assert!(v.as_f64().unwrap() <= best);
    }
    assert!(d.path().join("b").join("summary.txt").exists());
}

#[test]
fn quick_on_a_test_file() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut q = quick::Quick::new(true);
    q.size = drivelab_engine::size::SizeOrPercent::Bytes(16 << 20);
    q.runs = 1;
    let mut t = test_file(d.path(), 16 << 20);
    let (doc, o) = run(&q, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    assert!(t.is_filled(), "reads ran on a filled file");
    assert_eq!(doc.target.kind, TargetKind::File);
    assert!(doc.test_file_created);
    t.close(false).unwrap();
}

#[test]
fn peak_sweeps_each_workload_and_finds_a_knee() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let mut p = peak::Peak::new(true);
    p.max_qd = 16;
    p.early_stop = false;
    let (doc, o) = run(&p, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    // The sweep writes, so it first writes the span once: reads hit written data; the
    // random-write sweep follows a spell of random writes (its steady state), and the
    // 128K sweeps two sequential passes (the sequential steady state). Each sweep of 5
    // points is followed by its 2 re-measurement steps (--short).
    assert_eq!(doc.steps.len(), 1 + 4 * (5 + 2) + 1 + 2);
    assert_eq!(doc.steps[0].id, "precondition");
    assert_eq!(doc.steps[1 + 5].id, "4k-randread-recheck1");
    assert_eq!(doc.steps[1 + 7].id, "steady-writes");
    assert_eq!(doc.steps[1 + 7 + 1 + 7].id, "seq-precondition-pass1");
    assert_eq!(doc.steps[1 + 7 + 1 + 7 + 1].id, "seq-precondition-pass2");
    let knee = metric(&doc, "4K random read knee QD");
    assert!([1.0, 2.0, 4.0, 8.0, 16.0].contains(&knee));
    // The knee reaches 95 % of the best point of the sweep.
    assert!(
        metric(&doc, "4K random read at knee")
            >= 0.95 * metric(&doc, "4K random read peak") * (1.0 - 1e-9)
    );
    // Random reads scale with depth on a 16-die drive.
    let sweeps = &doc.summary.as_ref().unwrap().analysis["sweeps"];
    let curve = sweeps[0]["sweep"]["curve"].as_array().unwrap();
    let iops = |i: usize| curve[i]["iops"].as_f64().unwrap();
    assert!(
        iops(4) > 4.0 * iops(0),
        "QD16 {} vs QD1 {}",
        iops(4),
        iops(0)
    );
}

#[test]
fn a_read_only_peak_sweep_writes_a_simulated_drive_first() {
    // A simulated drive has no data to keep, and unwritten blocks read without flash.
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let mut p = peak::Peak::new(true);
    p.max_qd = 4;
    p.workloads = vec!["4k-randread".into()];
    let (doc, o) = run(&p, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    assert_eq!(doc.steps[0].id, "precondition");
    assert!(doc.steps.len() > 1);
    let table = p.report(&doc.steps).table;
    assert!(!table.contains("was not written first"), "{table}");
    // Without the precondition the report says what the reads found.
    let unwritten: Vec<_> = doc.steps[1..].to_vec();
    assert!(p.report(&unwritten).table.contains("was not written first"));
}

#[test]
fn consistency_preconditions_then_scores_rounds() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:dramless,capacity=2G");
    let mut c = consistency::Consistency::new(true);
    c.size = drivelab_engine::size::SizeOrPercent::Bytes(256 << 20);
    c.duration_ns = 12_000_000_000;
    c.op_percent = 25.0;
    let (doc, o) = run(&c, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    assert_eq!(doc.steps[0].id, "precondition-pass1");
    // The precondition wrote the tested 75 % once, sequentially.
    let pre = doc.steps[0].run.as_ref().unwrap();
    assert_eq!(pre.totals.write.bytes, 192 << 20);
    assert_eq!(doc.steps[1].config.size_bytes, 192 << 20);
    let a = &doc.summary.as_ref().unwrap().analysis;
    assert_eq!(a["iops_per_s"].as_array().unwrap().len(), 12);
    assert_eq!(a["rounds"].as_array().unwrap().len(), 6);
    assert_eq!(a["scores"]["window_len_s"], 6);
    assert!(metric(&doc, "average IOPS (last 6 s)") > 0.0);
}

#[test]
fn the_consistency_hour_is_one_continuous_run() {
    // Issue 14: 60 rounds with drains between them inserted seconds without I/O the
    // drive never had, and made each drive's hour a different length. The test is one
    // run of exactly --duration; rounds are cut from its seconds for the PTS rule only.
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:dramless,capacity=4G");
    let mut c = consistency::Consistency::new(false);
    c.duration_ns = 300_000_000_000;
    let (doc, o) = run(&c, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let measure: Vec<_> = doc
        .steps
        .iter()
        .filter(|s| s.kind == drivelab_suites::plan::StepKind::Measure)
        .collect();
    assert_eq!(measure.len(), 1);
    assert_eq!(measure[0].id, "randwrite");
    let a = &doc.summary.as_ref().unwrap().analysis;
    assert_eq!(a["iops_per_s"].as_array().unwrap().len(), 300);
    assert_eq!(a["rounds"].as_array().unwrap().len(), 5);
    let table = c.report(&doc.steps).table;
    assert!(table.contains("300 s measured continuously"), "{table}");
}

#[test]
fn consistency_puts_a_stalled_drain_between_rounds_into_the_series() {
    // A DRAM-less drive stalls in garbage collection; when a round's deadline falls in
    // a stall, the I/Os in flight take seconds to come back. Those seconds are device
    // time without completions, and the series must show them.
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:dramless,capacity=4G");
    let mut c = consistency::Consistency::new(false);
    c.duration_ns = 600_000_000_000;
    // Rounds are separate runs only under --until-steady (the test is continuous
    // otherwise).
    c.until_steady = true;
    let (doc, o) = run(&c, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let rounds: Vec<_> = doc
        .steps
        .iter()
        .filter(|s| s.params.get("round").is_some() && s.run.is_some())
        .collect();
    let drains: Vec<usize> = rounds[..rounds.len() - 1]
        .iter()
        .map(|s| (s.run.as_ref().unwrap().drain_ns as f64 / 1e9).round() as usize)
        .collect();
    assert!(
        drains.iter().any(|&s| s > 0),
        "no stalled drain: {drains:?}"
    );
    let secs: usize = rounds
        .iter()
        .map(|s| s.run.as_ref().unwrap().series.records.len())
        .sum();
    let a = &doc.summary.as_ref().unwrap().analysis;
    let x = a["iops_per_s"].as_array().unwrap();
    assert_eq!(x.len(), secs + drains.iter().sum::<usize>());
    // Each round is still judged on its own 60 s.
    assert_eq!(a["rounds"].as_array().unwrap().len(), rounds.len());
}

#[test]
fn consistency_until_steady_skips_the_remaining_rounds() {
    let d = tempfile::tempdir().unwrap();
    // A fast drive with lots of spare area writes at one steady rate from the start.
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let mut c = consistency::Consistency::new(true);
    c.size = drivelab_engine::size::SizeOrPercent::Bytes(256 << 20);
    c.duration_ns = 20_000_000_000;
    c.round_ns = 1_000_000_000;
    c.until_steady = true;
    let (doc, o) = run(&c, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let skipped = doc
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Skipped)
        .count();
    let ran = doc
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Complete)
        .count()
        - 1;
    assert!(skipped > 0, "steady state should end the test early");
    assert_eq!(ran + skipped, 20);
    assert_eq!(
        doc.summary.as_ref().unwrap().analysis["steady"]["reached"],
        true
    );
}

#[test]
fn seqfill_finds_the_slc_cache_and_records_temperature() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=8G");
    let mut s = seqfill::SeqFill::new(true);
    s.size = drivelab_engine::size::SizeOrPercent::Percent(100.0);
    let (doc, o) = run(&s, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let a = &doc.summary.as_ref().unwrap().analysis;
    let cum = a["cum_write_bytes"].as_array().unwrap();
    let last = cum.last().unwrap().as_u64().unwrap();
    assert_eq!(last, (8u64 << 30) * 9 / 10 / (128 << 10) * (128 << 10));
    // The simulated drive has a thermal model: its temperature is readable.
    assert_eq!(a["temperature_available"], true);
    assert!(a["temperature_start_celsius"].as_f64().unwrap() > 0.0);
}

#[test]
fn seqfill_without_sensors_records_temperature_as_null() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut t = test_file(d.path(), 16 << 20);
    let mut s = seqfill::SeqFill::new(true);
    s.size = drivelab_engine::size::SizeOrPercent::Bytes(16 << 20);
    let (doc, o) = run(&s, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let a = &doc.summary.as_ref().unwrap().analysis;
    assert!(a["temperature_start_celsius"].is_null());
    assert!(a["temperature_end_celsius"].is_null());
    assert_eq!(a["temperature_available"], false);
    // 90 % of 16 MiB in whole 128 KiB blocks: 115 blocks.
    assert_eq!(
        doc.steps[0].run.as_ref().unwrap().totals.write.bytes,
        115 << 17
    );
    t.close(false).unwrap();
}

#[test]
fn iometer_prepares_the_span_and_runs_profiles_and_specs() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:sata-mlc,capacity=4G");
    let mut m = iometer::IoMeter::new(true);
    m.qds = vec![1, 4];
    m.seq_qds = vec![1];
    m.specs = vec!["workstation".into(), "database".into()];
    let (doc, o) = run(&m, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let ids: Vec<&str> = doc.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "prepare-span",
            "4k-randwrite-qd1",
            "4k-randwrite-qd4",
            "4k-randread-qd1",
            "4k-randread-qd4",
            "512k-write-qd1",
            "512k-read-qd1",
            "spec-workstation",
            "spec-database"
        ]
    );
    let ws = &doc.steps[7].config;
    assert_eq!(
        (ws.rwmixread, ws.percentage_random, ws.iodepth),
        (80, 80, 64)
    );
    assert_eq!(
        doc.steps[1].config.data,
        drivelab_engine::spec::DataPattern::Repeat
    );
    assert_eq!(doc.steps[5].config.numjobs, 2);
}

#[test]
fn mixed_sweeps_the_read_share() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let m = mixed::Mixed::new(true);
    let (doc, o) = run(&m, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    assert!(!doc.notes.iter().any(|n| n.contains("--size")));
    // A span asked for beyond the target is cut to it, and the bundle says so.
    let mut big = mixed::Mixed::new(true);
    big.size = drivelab_engine::size::SizeOrPercent::Bytes(8 << 30);
    let mut t2 = sim("sim:nvme-tlc,capacity=4G");
    let (cut, _) = run(&big, &mut t2, &d.path().join("cut"));
    assert!(
        cut.notes
            .iter()
            .any(|n| n.contains("--size 8 GiB is more than the target holds")),
        "{:?}",
        cut.notes
    );
    // The span is written once first, so that reads find data.
    assert_eq!(doc.steps.len(), 12);
    assert_eq!(doc.steps[0].id, "fill");
    let fill = doc.steps[0].run.as_ref().unwrap();
    assert_eq!(fill.totals.write.bytes, doc.steps[1].config.size_bytes);
    let first = doc.steps[1].run.as_ref().unwrap();
    let last = doc.steps[11].run.as_ref().unwrap();
    assert_eq!(first.totals.read.ops, 0);
    assert_eq!(last.totals.write.ops, 0);
    let mid = doc.steps[6].run.as_ref().unwrap();
    let share = mid.totals.read.ops as f64 / mid.totals.all.ops as f64;
    assert!((share - 0.5).abs() < 0.05, "{share}");
}

/// Stops the run once `n` steps are saved.
struct StopAfter<'a>(&'a AtomicBool, std::sync::atomic::AtomicUsize, usize);

impl Observer for StopAfter<'_> {
    fn step_finished(&self, _rec: &drivelab_suites::StepRecord) {
        if self.1.fetch_add(1, Ordering::Relaxed) + 1 >= self.2 {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Carry out `plan` into `b`, stopping when `stop` is set.
fn go(
    suite: &dyn Suite,
    plan: &[drivelab_suites::plan::PlannedStep],
    t: &mut Target,
    b: &mut Bundle,
    stop: &AtomicBool,
    observer: Option<&dyn Observer>,
) -> Outcome {
    execute(suite, plan, t, b, &Runner { stop, observer }).unwrap()
}

#[test]
fn resume_continues_without_redoing_finished_steps() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("b");
    let mut q = quick::Quick::new(true);
    q.runs = 1;
    let stop = AtomicBool::new(false);
    let mut t = sim("sim:sata-mlc,capacity=4G");
    let plan = q.plan(&t.info).unwrap();
    let mut b = Bundle::create(
        &out,
        new_doc(&q, &plan, &t, Some("sim:sata-mlc,capacity=4G".into())),
    )
    .unwrap();
    let o = go(
        &q,
        &plan,
        &mut t,
        &mut b,
        &stop,
        Some(&StopAfter(&stop, Default::default(), 1)),
    );
    assert_eq!(o, Outcome::Interrupted);
    let first = Bundle::open(&out).unwrap().doc;
    assert_eq!(first.status, BundleStatus::Interrupted);
    assert_eq!(first.steps.len(), 1);
    assert!(std::fs::read_to_string(out.join(RUN_JSON))
        .unwrap()
        .ends_with("}\n"));

    // A new process: rebuild the suite from the bundle, reopen the target, continue.
    let mut b = Bundle::open(&out).unwrap();
    let suite = drivelab_suites::from_saved(b.doc.suite, &b.doc.knobs).unwrap();
    let mut t = sim(b.doc.target_arg.as_deref().unwrap());
    let plan = suite.plan(&t.info).unwrap();
    check_resume(&b.doc, suite.as_ref(), &plan, &t).unwrap();
    let stop = AtomicBool::new(false);
    let o = go(suite.as_ref(), &plan, &mut t, &mut b, &stop, None);
    assert!(matches!(o, Outcome::Complete(_)));
    assert_eq!(b.doc.steps.len(), 1 + 8);
    let key = |s: &drivelab_suites::StepRecord| {
        (
            s.id.clone(),
            s.started_at.clone(),
            s.finished_at.clone(),
            s.config.randseed,
        )
    };
    assert_eq!(
        key(&b.doc.steps[0]),
        key(&first.steps[0]),
        "the finished step was kept as it was"
    );
    assert_eq!(b.doc.config_hash, first.config_hash);

    // Another target or other knobs do not resume this bundle.
    let other = sim("sim:sata-mlc,capacity=8G");
    let plan2 = suite.plan(&other.info).unwrap();
    assert!(check_resume(&b.doc, suite.as_ref(), &plan2, &other).is_err());
    let mut q2 = q.clone();
    q2.runs = 2;
    let plan3 = q2.plan(&t.info).unwrap();
    assert!(check_resume(&b.doc, &q2, &plan3, &t).is_err());
}

#[test]
fn same_settings_share_a_config_hash_and_seeds_do_not_matter() {
    let a = sim("sim:nvme-tlc,capacity=4G");
    let q = quick::Quick::new(true);
    let p1 = q.plan(&a.info).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let p2 = q.plan(&a.info).unwrap();
    assert_ne!(p1[0].workload.randseed, p2[0].workload.randseed);
    let h = |p: &[drivelab_suites::plan::PlannedStep]| {
        drivelab_suites::hash::config_hash("quick", &q.knobs(), p)
    };
    assert_eq!(h(&p1), h(&p2));
    let mut q2 = q.clone();
    q2.runtime_ns *= 2;
    assert_ne!(h(&p1), h(&q2.plan(&a.info).unwrap()));
    // A whole-drive test on a drive twice the size is the same test: its numbers compare.
    let c = consistency::Consistency::new(false);
    let hc = |spec: &str| {
        let t = sim(spec);
        let p = c.plan(&t.info).unwrap();
        drivelab_suites::hash::config_hash("consistency", &c.knobs(), &p)
    };
    assert_eq!(
        hc("sim:nvme-tlc,capacity=4G"),
        hc("sim:sata-mlc,capacity=8G")
    );
}

#[test]
fn preparation_steps_are_not_in_the_config_hash_but_resume_still_checks_them() {
    let t = sim("sim:nvme-tlc,capacity=4G");
    let q = quick::Quick::new(true);
    let plan = q.plan(&t.info).unwrap();
    let measured: Vec<_> = plan
        .iter()
        .filter(|s| s.kind == drivelab_suites::plan::StepKind::Measure)
        .cloned()
        .collect();
    assert!(measured.len() < plan.len(), "the plan fills before reading");
    let h = |p: &[drivelab_suites::plan::PlannedStep]| {
        drivelab_suites::hash::config_hash("quick", &q.knobs(), p)
    };
    assert_eq!(h(&plan), h(&measured));
    // A bundle of the full plan is not continued by the plan without its fill.
    let doc = new_doc(&q, &plan, &t, None);
    assert!(check_resume(&doc, &q, &plan, &t).is_ok());
    let e = check_resume(&doc, &q, &measured, &t).unwrap_err();
    assert!(e.contains("other steps"), "{e}");
    // A bundle made when the hash still covered the preparation resumes as before.
    let mut old = doc.clone();
    old.config_hash =
        drivelab_suites::hash::config_hash_with_preparation("quick", &q.knobs(), &plan);
    assert_ne!(old.config_hash, doc.config_hash);
    assert!(check_resume(&old, &q, &plan, &t).is_ok());
}

#[test]
fn steps_held_back_by_the_generator_are_named_in_one_bundle_note_with_advice() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:nvme-tlc,capacity=4G");
    let (mut doc, _) = run(&quick::Quick::new(true), &mut t, &d.path().join("b"));
    assert_eq!(drivelab_suites::records::generator_note(&doc.steps), None);
    let i = doc
        .steps
        .iter()
        .position(|s| s.name.contains("write"))
        .unwrap();
    if let Some(r) = doc.steps[i].run.as_mut() {
        r.totals.data.limited_by_generator = true;
    }
    let n = drivelab_suites::records::generator_note(&doc.steps).unwrap();
    assert!(
        n.contains(&format!("1 step(s) ({})", doc.steps[i].name)),
        "{n}"
    );
    assert!(n.contains("--data repeat"), "{n}");
}

#[test]
fn seqfill_measures_the_simulated_slc_cache_size() {
    let d = tempfile::tempdir().unwrap();
    let mut t = sim("sim:dramless,capacity=16G,slc=30%");
    let mut s = seqfill::SeqFill::new(false);
    s.short = true;
    let (doc, o) = run(&s, &mut t, &d.path().join("b"));
    check_complete(&doc, &o);
    let truth = doc.steps[0]
        .run
        .as_ref()
        .unwrap()
        .simulator_ground_truth
        .as_ref()
        .unwrap()["slc_cache_bytes"]
        .as_f64()
        .unwrap();
    let measured = metric(&doc, "estimated cache size") * 1e9;
    assert!(
        (measured - truth).abs() < 0.05 * truth,
        "cache {measured} bytes measured, {truth} true"
    );
    // Without a thermal model the temperature is unavailable: null, not 0.
    let a = &doc.summary.as_ref().unwrap().analysis;
    assert!(a["temperature_start_celsius"].is_null());
    assert!(metric(&doc, "post-cache average") < 0.5 * metric(&doc, "initial (cache) write speed"));
}

#[test]
fn a_resumed_consistency_test_continues_on_the_drive_as_it_was() {
    // A simulated drive keeps no state between processes: resuming replays every
    // finished step, so the rounds after the break measure the same drive, and (with
    // the same seeds) give exactly what an unbroken run gives.
    let spec = "sim:dramless,capacity=2G";
    let mut c = consistency::Consistency::new(true);
    c.size = drivelab_engine::size::SizeOrPercent::Bytes(256 << 20);
    c.duration_ns = 12_000_000_000;
    // In rounds (--until-steady), so that the break falls between two of them.
    c.until_steady = true;
    let d = tempfile::tempdir().unwrap();
    let mut t = sim(spec);
    let (whole, o) = run(&c, &mut t, &d.path().join("whole"));
    check_complete(&whole, &o);

    let out = d.path().join("broken");
    let mut t = sim(spec);
    let plan = c.plan(&t.info).unwrap();
    let mut b = Bundle::create(&out, new_doc(&c, &plan, &t, Some(spec.into()))).unwrap();
    let stop = AtomicBool::new(false);
    let o = go(
        &c,
        &plan,
        &mut t,
        &mut b,
        &stop,
        Some(&StopAfter(&stop, Default::default(), 3)),
    );
    assert_eq!(o, Outcome::Interrupted);
    let mut b = Bundle::open(&out).unwrap();
    let mut t = sim(spec);
    let plan = c.plan(&t.info).unwrap();
    let stop = AtomicBool::new(false);
    let o = go(&c, &plan, &mut t, &mut b, &stop, None);
    assert!(matches!(o, Outcome::Complete(_)));
    let ops = |doc: &drivelab_suites::bundle::RunDoc| -> Vec<u64> {
        doc.steps
            .iter()
            .filter_map(|s| s.run.as_ref().map(|r| r.totals.all.ops))
            .collect()
    };
    assert_eq!(ops(&b.doc), ops(&whole));
}

/// Peak knobs whose 4K random-write points (1 s on a 4 GB MLC drive in its steady
/// state) are noisy enough that the knee needs its re-measurements.
fn noisy_peak() -> peak::Peak {
    let mut p = peak::Peak::new(true);
    p.size = drivelab_engine::size::SizeOrPercent::Percent(100.0);
    p.steady_writes_ns = 60_000_000_000;
    p.point_time_ns = 1_000_000_000;
    p.max_qd = 16;
    p.early_stop = false;
    p.workloads = vec!["4k-randwrite".into()];
    p
}

#[test]
fn a_resumed_peak_sweep_keeps_its_re_measurements_and_makes_the_rest() {
    // Issue 14: the points within noise of the knee threshold are measured again in
    // the planned re-measurement steps. Broken after the first of them, the resumed
    // run checks and replays what it measured (the same point, the same seed), does not
    // measure it again, and ends exactly where an unbroken run ends.
    let spec = "sim:sata-mlc,capacity=4G,seed=1";
    let p = noisy_peak();
    let d = tempfile::tempdir().unwrap();
    let mut t = sim(spec);
    let (whole, o) = run(&p, &mut t, &d.path().join("whole"));
    check_complete(&whole, &o);
    let rechecks: Vec<_> = whole
        .steps
        .iter()
        .filter(|s| s.id.starts_with("4k-randwrite-recheck"))
        .collect();
    assert_eq!(rechecks.len(), 2);
    for r in &rechecks {
        assert_eq!(r.status, StepStatus::Complete, "{}", r.id);
        assert!(
            r.params["qd"].as_u64().is_some() && r.params["pass"] == 2,
            "{}",
            r.params
        );
        assert!(r.name.contains("again"), "{}", r.name);
    }
    let sweep = &whole.summary.as_ref().unwrap().analysis["sweeps"][0]["sweep"];
    let passes: u64 = sweep["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["passes"].as_u64().unwrap())
        .sum();
    assert_eq!(passes, 5 + 2, "{sweep}");
    assert!(sweep["first_pass_knee_qd"].as_u64().is_some());

    let out = d.path().join("broken");
    let mut t = sim(spec);
    let plan = p.plan(&t.info).unwrap();
    let mut b = Bundle::create(&out, new_doc(&p, &plan, &t, Some(spec.into()))).unwrap();
    let stop = AtomicBool::new(false);
    // precondition, steady writes, 5 points, the first re-measurement.
    let ran = 2 + 5 + 1;
    let o = go(
        &p,
        &plan,
        &mut t,
        &mut b,
        &stop,
        Some(&StopAfter(&stop, Default::default(), ran)),
    );
    assert_eq!(o, Outcome::Interrupted);
    let mut b = Bundle::open(&out).unwrap();
    let first = b.doc.steps.last().unwrap().clone();
    assert_eq!(first.id, "4k-randwrite-recheck1");
    let suite = drivelab_suites::from_saved(b.doc.suite, &b.doc.knobs).unwrap();
    let mut t = sim(spec);
    let plan = suite.plan(&t.info).unwrap();
    check_resume(&b.doc, suite.as_ref(), &plan, &t).unwrap();
    let stop = AtomicBool::new(false);
    let o = go(suite.as_ref(), &plan, &mut t, &mut b, &stop, None);
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    let kept = b.doc.steps.iter().find(|s| s.id == first.id).unwrap();
    assert_eq!(kept.started_at, first.started_at, "not measured again");
    let key = |doc: &RunDoc| -> Vec<(String, serde_json::Value, Option<u64>)> {
        doc.steps
            .iter()
            .map(|s| {
                (
                    s.id.clone(),
                    s.params.clone(),
                    s.run.as_ref().map(|r| r.totals.all.ops),
                )
            })
            .collect()
    };
    assert_eq!(key(&b.doc), key(&whole));
    assert_eq!(
        b.doc.summary.as_ref().unwrap().analysis,
        whole.summary.as_ref().unwrap().analysis
    );
}

/// Records which step each observer message came in.
struct Messages(std::sync::Mutex<(usize, Vec<(usize, String)>)>);

impl Observer for Messages {
    fn step_started(&self, index: usize, _total: usize, _name: &str) {
        self.0.lock().unwrap().0 = index;
    }
    fn message(&self, text: &str) {
        let mut g = self.0.lock().unwrap();
        let at = g.0;
        g.1.push((at, text.to_string()));
    }
    fn filling(&self, bytes: u64) {
        self.message(&format!("filling {bytes}"));
    }
}

#[test]
fn a_test_file_is_written_before_mixed_writes_to_it() {
    // mixed starts with all writes (0 % reads): the fresh file is filled before that
    // step, not before the first that reads, so no step measures allocating writes.
    let d = tempfile::tempdir().unwrap();
    let mut t = test_file(d.path(), 32 << 20);
    let m = mixed::Mixed::new(true);
    let plan = m.plan(&t.info).unwrap();
    assert_eq!(plan[0].workload.read_percent(), 0);
    let doc = new_doc(&m, &plan, &t, None);
    let mut b = Bundle::create(&d.path().join("b"), doc).unwrap();
    let seen = Messages(std::sync::Mutex::new((0, Vec::new())));
    let stop = AtomicBool::new(false);
    let o = go(&m, &plan, &mut t, &mut b, &stop, Some(&seen));
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    let msgs = seen.0.into_inner().unwrap().1;
    let fills: Vec<&(usize, String)> = msgs.iter().filter(|m| m.1.contains("once")).collect();
    assert_eq!(fills.len(), 1, "{msgs:?}");
    assert_eq!(fills[0].0, 0, "filled before the first step: {msgs:?}");
    // The fill's progress is announced with its size, for bytes done and an ETA.
    assert!(
        msgs.contains(&(0, format!("filling {}", 32 << 20))),
        "{msgs:?}"
    );
}

#[test]
fn the_random_write_sweep_follows_an_hour_of_random_writes() {
    let t = sim("sim:nvme-tlc,capacity=8G").info;
    let p = peak::Peak::new(false);
    let plan = p.plan(&t).unwrap();
    let at = plan.iter().position(|s| s.id == "steady-writes").unwrap();
    assert_eq!(plan[at + 1].id, "4k-randwrite-qd1");
    let w = &plan[at].workload;
    assert_eq!(
        (w.rw, w.queue_depth(), w.bs[0].bytes),
        (drivelab_engine::spec::RwMode::RandWrite, 32, 4096)
    );
    assert_eq!(w.runtime_ns, Some(3_600_000_000_000));
    assert_eq!((w.offset_bytes, w.size_bytes), (0, 8 << 30));
    assert_eq!(plan[at].kind, drivelab_suites::plan::StepKind::Prepare);
    // None when asked for none, or when the sweep does not write randomly.
    let none = peak::Peak {
        steady_writes_ns: 0,
        ..p.clone()
    };
    assert!(!none
        .plan(&t)
        .unwrap()
        .iter()
        .any(|s| s.id == "steady-writes"));
    let reads = peak::Peak {
        workloads: vec!["4k-randread".into(), "128k-write".into()],
        ..p
    };
    assert!(!reads
        .plan(&t)
        .unwrap()
        .iter()
        .any(|s| s.id == "steady-writes"));
}

#[test]
fn a_peak_sweep_on_a_new_test_file_writes_it_once() {
    // The precondition writes the whole file: no fill before it, none before the reads.
    let d = tempfile::tempdir().unwrap();
    let mut t = test_file(d.path(), 32 << 20);
    let mut p = peak::Peak::new(true);
    p.size = drivelab_engine::size::SizeOrPercent::Percent(100.0);
    p.max_qd = 2;
    let plan = p.plan(&t.info).unwrap();
    assert_eq!(plan[0].id, "precondition");
    let doc = new_doc(&p, &plan, &t, None);
    let mut b = Bundle::create(&d.path().join("b"), doc).unwrap();
    let seen = Messages(std::sync::Mutex::new((0, Vec::new())));
    let stop = AtomicBool::new(false);
    let o = go(&p, &plan, &mut t, &mut b, &stop, Some(&seen));
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    let msgs = seen.0.into_inner().unwrap().1;
    assert!(!msgs.iter().any(|m| m.1.contains("once")), "{msgs:?}");
    assert!(t.is_filled());
}

/// A bundle whose last step `id` ran but is marked interrupted (what an interrupt in
/// the middle of it leaves), without depending on when a stop lands.
fn interrupted_at(out: &Path, id: &str) -> (Bundle, drivelab_suites::StepRecord) {
    let mut b = Bundle::open(out).unwrap();
    let i = b.doc.steps.iter().position(|s| s.id == id).unwrap();
    let mut rec = b.doc.steps[i].clone();
    rec.status = StepStatus::Interrupted;
    b.put_step(rec.clone()).unwrap();
    b.set_status(BundleStatus::Interrupted).unwrap();
    (Bundle::open(out).unwrap(), rec)
}

#[test]
fn a_resumed_continuous_test_preconditions_again_and_says_so() {
    // Issue 24: the interrupted part's random writes are on the drive (a test file that
    // stays): resuming measures the continuous test again only after the precondition
    // ran again, and the bundle's notes say so.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("b");
    let mut c = consistency::Consistency::new(true);
    c.size = drivelab_engine::size::SizeOrPercent::Bytes(16 << 20);
    c.duration_ns = 2_000_000_000;
    c.round_ns = 1_000_000_000;
    c.window_s = 2;
    c.passes = 2;
    let mut t = test_file(d.path(), 16 << 20);
    let (_, o) = run(&c, &mut t, &out);
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    drop(t);
    let (mut b, last) = interrupted_at(&out, "randwrite");
    let fills: Vec<_> = b.doc.steps[..2]
        .iter()
        .map(|s| s.started_at.clone())
        .collect();

    let mut t = test_file(d.path(), 16 << 20);
    assert!(
        !t.created_now(),
        "the file stays with what was written to it"
    );
    let suite = drivelab_suites::from_saved(b.doc.suite, &b.doc.knobs).unwrap();
    let plan = suite.plan(&t.info).unwrap();
    check_resume(&b.doc, suite.as_ref(), &plan, &t).unwrap();
    let stop = AtomicBool::new(false);
    let obs = Messages(Default::default());
    let o = go(suite.as_ref(), &plan, &mut t, &mut b, &stop, Some(&obs));
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    let messages = obs.0.lock().unwrap().1.clone();
    assert!(
        messages.iter().any(|m| m
            .1
            .starts_with("preconditioning again before '4K random write")),
        "{messages:?}"
    );
    let saved = Bundle::open(&out).unwrap().doc;
    let note = saved
        .notes
        .iter()
        .find(|n| n.starts_with("Resumed:"))
        .expect("a note");
    assert!(
        note.contains("sequential fill pass 1") && note.contains("sequential fill pass 2"),
        "{note}"
    );
    // The fills' records are the first run's; the test is measured anew and whole.
    let again: Vec<_> = saved.steps[..2]
        .iter()
        .map(|s| s.started_at.clone())
        .collect();
    assert_eq!(again, fills);
    let test = saved.steps.iter().find(|s| s.id == "randwrite").unwrap();
    assert_eq!(test.status, StepStatus::Complete);
    assert_ne!(test.started_at, last.started_at);
}

#[test]
fn a_resumed_fill_on_a_drive_that_kept_it_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("b");
    let mut s = seqfill::SeqFill::new(true);
    s.size = drivelab_engine::size::SizeOrPercent::Bytes(16 << 20);
    let mut t = test_file(d.path(), 16 << 20);
    let (_, o) = run(&s, &mut t, &out);
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    drop(t);
    let (b, _) = interrupted_at(&out, "seqfill");
    let t = test_file(d.path(), 16 << 20);
    let suite = drivelab_suites::from_saved(b.doc.suite, &b.doc.knobs).unwrap();
    let plan = suite.plan(&t.info).unwrap();
    let e = check_resume(&b.doc, suite.as_ref(), &plan, &t).unwrap_err();
    assert!(
        e.starts_with("--resume: the sequential fill was interrupted"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    // A simulated drive keeps nothing between processes: its fill is measured again.
    let out = d.path().join("sim");
    let mut t = sim("sim:dramless,capacity=4G");
    let (_, o) = run(&s, &mut t, &out);
    assert!(matches!(o, Outcome::Complete(_)), "{o:?}");
    let (b, _) = interrupted_at(&out, "seqfill");
    let t = sim("sim:dramless,capacity=4G");
    let plan = suite.plan(&t.info).unwrap();
    check_resume(&b.doc, suite.as_ref(), &plan, &t).unwrap();
}
