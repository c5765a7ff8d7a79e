//! Result bundles made by the real suites (`--short` knobs) on simulated drives, for
//! the report tests: made once per test binary, in a directory kept for the process.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use drivelab_engine::target::{OpenOptions, Target, TargetSpec};
use drivelab_suites::bundle::{Bundle, RunDoc};
use drivelab_suites::runner::{execute, new_doc, Outcome, Runner};
use drivelab_suites::{consistency, iometer, mixed, peak, quick, replay, seqfill, Suite};

/// The short form of a suite by name (what `drivelab run NAME --short` runs).
pub fn short_suite(name: &str) -> Box<dyn Suite> {
    match name {
        "quick" => Box::new(quick::Quick::new(true)),
        "peak" => Box::new(peak::Peak::new(true)),
        "consistency" => Box::new(consistency::Consistency::new(true)),
        "seqfill" => Box::new(seqfill::SeqFill::new(true)),
        "iometer" => Box::new(iometer::IoMeter::new(true)),
        "mixed" => Box::new(mixed::Mixed::new(true)),
        "replay" => {
            let mut r = replay::Replay::new(test_trace());
            r.short = true;
            Box::new(r)
        }
        _ => panic!("no suite {name}"),
    }
}

/// A small trace for the replay suite, written once per test binary: 3 s of mixed I/O
/// with original service times, a flush and a discard now and then.
pub fn test_trace() -> PathBuf {
    use drivelab_trace::{native::Writer, Header, Op, Record};
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let p = tempfile::tempdir().unwrap().keep().join("test.dltrace");
        let f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        let h = Header {
            source_format: "test".into(),
            ..Header::default()
        };
        let mut w = Writer::new(f, &h).unwrap();
        for i in 0..3000u64 {
            let op = match i % 50 {
                49 => Op::Flush,
                48 => Op::Discard,
                x if x % 3 == 0 => Op::Write,
                _ => Op::Read,
            };
            let (off, len) = match op {
                Op::Flush => (0, 0),
                _ => ((i * 7919 % 4096) * 65536, 4096 << (i % 5)),
            };
            w.write(&Record {
                service_ns: Some(100_000 + i % 7 * 300_000),
                ..Record::new(i * 1_000_000, op, off, len)
            })
            .unwrap();
        }
        w.finish().unwrap();
        p
    })
    .clone()
}

/// Runs `suite` (short) on the simulated drive `spec` into the bundle `out`.
pub fn make_bundle(suite: &str, spec: &str, out: &Path) -> RunDoc {
    let d = drivelab_sim::parse(spec).unwrap();
    let mut target = Target::open(TargetSpec::Model(Box::new(d)), &OpenOptions::default()).unwrap();
    let s = short_suite(suite);
    let plan = s.plan(&target.info).unwrap();
    let doc = new_doc(s.as_ref(), &plan, &target, Some(spec.to_string()));
    let mut b = Bundle::create(out, doc).unwrap();
    let stop = AtomicBool::new(false);
    let o = execute(
        s.as_ref(),
        &plan,
        &mut target,
        &mut b,
        &Runner {
            stop: &stop,
            observer: None,
        },
    )
    .unwrap();
    assert!(
        matches!(o, Outcome::Complete(_)),
        "{suite} on {spec}: {o:?}"
    );
    b.doc
}

/// The drives of the multi-drive report.
pub const DRIVES: [&str; 3] = [
    "sim:nvme-tlc,capacity=4G",
    "sim:sata-mlc,capacity=4G",
    "sim:dramless,capacity=4G",
];

/// Every suite on the first drive, and quick, peak, consistency and seqfill on the
/// other two: `(bundle dir, suite, drive spec)`, made once.
pub fn all_bundles() -> &'static Vec<(PathBuf, String, String)> {
    static B: OnceLock<Vec<(PathBuf, String, String)>> = OnceLock::new();
    B.get_or_init(|| {
        let root = tempfile::tempdir().unwrap().keep();
        let mut out = Vec::new();
        for (i, drive) in DRIVES.iter().enumerate() {
            let names = drivelab_suites::SUITES.map(|k| k.name());
            let suites: &[&str] = if i == 0 {
                &names
            } else {
                &["quick", "peak", "consistency", "seqfill"]
            };
            for suite in suites {
                let dir = root.join(format!("{suite}-{i}"));
                make_bundle(suite, drive, &dir);
                out.push((dir, suite.to_string(), drive.to_string()));
            }
        }
        out
    })
}
