//! `drivelab trace import` and `drivelab trace info`: files in, traces out, bad inputs
//! refused in one line with exit 2 and nothing written.

mod common;

use common::{run_in, stderr, stdout};
use drivelab_trace::native::Reader;
use drivelab_trace::{Op, Record};

const MSR: &str = "\
128166372003061629,hm,0,Read,7014609920,24576,41286
128166372016382155,hm,0,Write,1317441536,8192,1963
128166372016382155,hm,0,Flush,0,0,1
";

fn read_trace(p: &std::path::Path) -> (drivelab_trace::Header, Vec<Record>) {
    let mut r = Reader::new(std::io::BufReader::new(std::fs::File::open(p).unwrap())).unwrap();
    let recs = r.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    (r.header().clone(), recs)
}

#[test]
fn import_writes_a_trace_and_info_summarises_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("hm_0.csv"), MSR).unwrap();
    let o = run_in(
        d.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "hm.dltrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("imported 2 I/Os"), "{}", stderr(&o));
    let (h, recs) = read_trace(&d.path().join("hm.dltrace"));
    assert_eq!(h.source_format, "msr");
    assert!(
        h.notes.iter().any(|n| n.contains("unknown Type")),
        "{:?}",
        h.notes
    );
    assert_eq!(recs[0].op, Op::Read);
    assert_eq!(recs[1].issue_ns, 1_332_052_600);

    let o = run_in(d.path(), &["trace", "info", "--json", "hm.dltrace"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("strict JSON on stdout");
    assert_eq!(v["records"], 2);
    assert_eq!(v["duration_ns"], 1_332_052_600u64);
    assert_eq!(v["read"]["bytes"], 24576);
    assert_eq!(v["max_outstanding"], 1);
    assert_eq!(v["read_share_of_ios_percent"], 50.0);
    let o = run_in(d.path(), &["trace", "info", "hm.dltrace"]);
    assert!(
        stdout(&o).contains("outstanding  at most 1 at once"),
        "{}",
        stdout(&o)
    );

    // Its own output may be replaced; anything else needs --force.
    let o = run_in(
        d.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "hm.dltrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_in(
        d.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "hm_0.csv"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(d.path().join("hm_0.csv")).unwrap(),
        MSR
    );
}

/// Exit 2, one line on stderr naming the problem, nothing written.
fn refused(dir: &std::path::Path, args: &[&str], says: &str) {
    let o = run_in(dir, args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains(says), "{args:?}: {e}");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".csv") && !n.ends_with(".txt"))
        .collect();
    assert!(left.is_empty(), "{args:?} left {left:?}");
}

#[test]
fn bad_inputs_are_refused_in_one_line_with_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("bad.csv"), format!("{MSR}1,hm,0,Read,x,4096,1\n")).unwrap();
    std::fs::write(p.join("two.csv"), format!("{MSR}1,hm,3,Read,0,4096,1\n")).unwrap();
    std::fs::write(p.join("notes.txt"), "hello\n").unwrap();
    refused(
        p,
        &["trace", "import", "msr", "bad.csv", "-o", "o.dltrace"],
        "FILE bad.csv: line 4: the Offset (field 5) `x` is not a whole number",
    );
    refused(
        p,
        &["trace", "import", "msr", "two.csv", "-o", "o.dltrace"],
        "holds 2 volumes (0, 3); choose one with --volume",
    );
    refused(
        p,
        &[
            "trace",
            "import",
            "msr",
            "two.csv",
            "-o",
            "o.dltrace",
            "--volume",
            "9",
        ],
        "--volume 9",
    );
    refused(
        p,
        &["trace", "import", "csv", "two.csv", "-o", "o.dltrace"],
        "is not a trace format: fio, blkparse",
    );
    refused(
        p,
        &["trace", "import", "msr", "missing.csv", "-o", "o.dltrace"],
        "FILE missing.csv",
    );
    refused(
        p,
        &["trace", "import", "fio", "two.csv", "-o", "o.dltrace"],
        "line 1: not a fio iolog",
    );
    refused(
        p,
        &["trace", "import", "msr", "two.csv", "-o", "nodir/o.dltrace"],
        "-o/--output nodir/o.dltrace: directory nodir does not exist",
    );
    refused(p, &["trace", "info", "notes.txt"], "not a drivelab trace");
    refused(
        p,
        &["trace", "info", "missing.dltrace"],
        "TRACE missing.dltrace",
    );
    refused(
        p,
        &[
            "trace",
            "record",
            "notes.txt",
            "-o",
            "o.dltrace",
            "--duration",
            "1s",
        ],
        "not a block device",
    );
    refused(
        p,
        &["trace", "record", "/dev/null", "-o", "o.dltrace"],
        "give --duration D",
    );

    let o = run_in(
        p,
        &[
            "trace",
            "import",
            "msr",
            "two.csv",
            "-o",
            "o.dltrace",
            "--volume",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, recs) = read_trace(&p.join("o.dltrace"));
    assert_eq!(recs.len(), 1);
    assert!(
        h.notes
            .iter()
            .any(|n| n == "kept volume 3 of 2 volumes; skipped 2 records of the others"),
        "{:?}",
        h.notes
    );
}

#[test]
fn impossible_extents_and_traces_without_io_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("over.csv"),
        "1,hm,0,Read,18446744073709551000,4096,1\n",
    )
    .unwrap();
    std::fs::write(p.join("huge.csv"), "1,hm,0,Read,0,18446744073709551615,1\n").unwrap();
    std::fs::write(p.join("empty.csv"), "").unwrap();
    std::fs::write(p.join("type5.csv"), "1538323199,0,8,5,1\n").unwrap();
    std::fs::write(
        p.join("bp.txt"),
        "8,0 0 1 0.1 1 Q R 0 + 8 [a] and more text to fill 48 bytes\n",
    )
    .unwrap();
    let imp = |fmt: &'static str, f: &'static str| ["trace", "import", fmt, f, "-o", "o.dltrace"];
    refused(
        p,
        &imp("msr", "over.csv"),
        "FILE over.csv: line 1: a read of 4096 bytes at byte offset 18446744073709551000: it would end past 2^64 bytes",
    );
    refused(
        p,
        &imp("msr", "huge.csv"),
        "FILE huge.csv: line 1: a read of 18446744073709551615 bytes: longer than one request can be",
    );
    refused(
        p,
        &imp("msr", "empty.csv"),
        "FILE empty.csv: no I/O to import as msr (it is empty)",
    );
    refused(
        p,
        &imp("tencent", "type5.csv"),
        "FILE type5.csv: no I/O to import as tencent (skipped 1 lines: an unknown IOType",
    );
    refused(
        p,
        &imp("blktrace", "bp.txt"),
        "FILE bp.txt: event 1 (byte offset 0): not a blktrace file",
    );
    // Paths: a trace's own words, not a result's.
    for cmd in [
        &["trace", "import", "msr", "over.csv", "-o", "/dev/null"][..],
        &[
            "trace",
            "record",
            "/dev/null",
            "-o",
            "/dev/null",
            "--duration",
            "1s",
        ][..],
    ] {
        let o = run_in(p, cmd);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("-o/--output /dev/null: is a character device; a trace is written to a regular file only"),
            "{e}"
        );
        assert!(!e.contains("--output-format"), "{e}");
    }

    // A zero-length write is skipped, and every skip is counted on the terminal.
    std::fs::write(p.join("z.spc"), "0,20941264,0,W,0.551706\n0,0,512,r,0.6\n").unwrap();
    let o = run_in(p, &["trace", "import", "spc", "z.spc", "-o", "z.dltrace"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.starts_with("imported 1 I/Os (512 B read, 0 B written"),
        "{e}"
    );
    assert!(
        e.contains("skipped 1 lines: a read, write or discard of 0 bytes (the first at line 1)"),
        "{e}"
    );
    let (_, recs) = read_trace(&p.join("z.dltrace"));
    assert_eq!(recs, [Record::new(0, Op::Read, 0, 512)]);
}

#[test]
fn a_truncated_trace_is_refused_by_info() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("hm_0.csv"), MSR).unwrap();
    let o = run_in(
        d.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "t.dltrace"],
    );
    assert!(o.status.success());
    let bytes = std::fs::read(d.path().join("t.dltrace")).unwrap();
    std::fs::write(d.path().join("cut.dltrace"), &bytes[..bytes.len() - 5]).unwrap();
    let o = run_in(d.path(), &["trace", "info", "cut.dltrace"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cut.dltrace"), "{}", stderr(&o));
}

/// fio's own iolog (fio ≥ 3.31 writes version 3) imports I/O by I/O.
#[test]
fn an_iolog_written_by_fio_imports_io_by_io() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let log = d.path().join("fio.log");
    let o = std::process::Command::new("fio")
        .args([
            "--name=x",
            "--size=1M",
            "--rw=randwrite",
            "--bs=4k",
            "--ioengine=sync",
            "--randseed=3",
            "--output=/dev/null",
        ])
        .arg(format!("--filename={}", f.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .output()
        .expect("fio is installed (scripts/test installs it)");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    let want: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.get(2) == Some(&"write")).then(|| (w[3].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect();
    assert_eq!(want.len(), 256);
    let o = run_in(
        d.path(),
        &["trace", "import", "fio", "fio.log", "-o", "fio.dltrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, recs) = read_trace(&d.path().join("fio.dltrace"));
    assert!(
        h.source_format.starts_with("fio-iolog-v"),
        "{}",
        h.source_format
    );
    let got: Vec<(u64, u64)> = recs.iter().map(|r| (r.offset_bytes, r.len_bytes)).collect();
    assert_eq!(got, want);
    assert!(recs.iter().all(|r| r.op == Op::Write));
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("a file action (add, open, close)")),
        "{:?}",
        h.notes
    );
}

#[test]
fn info_stops_quietly_at_a_closed_pipe() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("hm_0.csv"), MSR).unwrap();
    let o = run_in(
        d.path(),
        &["trace", "import", "msr", "hm_0.csv", "-o", "t.dltrace"],
    );
    assert!(o.status.success());
    for json in [false, true] {
        let mut args = vec!["trace", "info", "t.dltrace"];
        if json {
            args.push("--json");
        }
        let mut child = common::drivelab()
            .args(&args)
            .current_dir(d.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            (o.status.code(), stderr(&o)),
            (Some(0), String::new()),
            "{args:?}"
        );
    }
}

/// `drivelab run replay TRACE x.bin --size 64M`: the I/Os it issued and their offsets.
fn replay_on_a_small_file(dir: &std::path::Path, trace: &str) -> Vec<u64> {
    let o = run_in(
        dir,
        &[
            "run",
            "--no-db",
            "--progress",
            "never",
            "replay",
            trace,
            "x.bin",
            "--size",
            "64M",
            "--issue-log",
            "--out",
            "b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = std::fs::read_to_string(dir.join("b/replay-1.issue-log.csv")).unwrap();
    let offsets = log
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap())
        .collect();
    std::fs::remove_dir_all(dir.join("b")).unwrap();
    let _ = std::fs::remove_file(dir.join("x.bin"));
    offsets
}

#[test]
fn volume_all_maps_every_volume_and_the_trace_replays() {
    const MIB: u64 = 1 << 20;
    let d = tempfile::tempdir().unwrap();
    // As the UMass Financial1 set is: ASU 0, 1 and 2 interleaved.
    let spc = "0,20941264,8192,W,0.551706\n2,3436288,15872,r,0.555365\n1,20939840,8192,w,0.554041\n0,1000,512,r,0.56\n";
    std::fs::write(d.path().join("Financial1.spc"), spc).unwrap();
    let o = run_in(
        d.path(),
        &[
            "trace",
            "import",
            "spc",
            "Financial1.spc",
            "-o",
            "f.dltrace",
            "--volume",
            "all",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, recs) = read_trace(&d.path().join("f.dltrace"));
    let spans: Vec<(&str, u64)> = h
        .volumes
        .iter()
        .map(|v| (v.volume.as_str(), v.offset_bytes))
        .collect();
    assert_eq!(spans, [("0", 0), ("1", 10_226 * MIB), ("2", 20_451 * MIB)]);
    assert_eq!(
        recs.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(),
        [
            20_941_264 * 512,
            10_226 * MIB + 20_939_840 * 512,
            20_451 * MIB + 3_436_288 * 512,
            1000 * 512
        ]
    );
    let info = stdout(&run_in(d.path(), &["trace", "info", "f.dltrace"]));
    assert!(
        info.contains(&format!("volume       2 at byte {}", 20_451 * MIB)),
        "{info}"
    );
    let o = run_in(d.path(), &["trace", "info", "--json", "f.dltrace"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("strict JSON on stdout");
    assert_eq!(v["header"]["volumes"][1]["offset_bytes"], 10_226 * MIB);
    assert_eq!(v["header"]["volumes"][1]["extent_bytes"], 10_225 * MIB);
    let replayed = replay_on_a_small_file(d.path(), "f.dltrace");
    assert_eq!(replayed.len(), 4);
    assert!(replayed.iter().all(|o| *o < 64 * MIB), "{replayed:?}");

    // MSR with two disk numbers.
    std::fs::write(
        d.path().join("hm.csv"),
        format!("{MSR}128166372026382300,hm,1,Read,0,512,10\n"),
    )
    .unwrap();
    let o = run_in(
        d.path(),
        &[
            "trace",
            "import",
            "msr",
            "hm.csv",
            "-o",
            "hm.dltrace",
            "--volume",
            "all",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, recs) = read_trace(&d.path().join("hm.dltrace"));
    assert_eq!(h.volumes.len(), 2);
    assert_eq!(recs[2].offset_bytes, h.volumes[1].offset_bytes);
    assert_eq!(h.volumes[1].offset_bytes, 6690 * MIB);
    assert_eq!(replay_on_a_small_file(d.path(), "hm.dltrace").len(), 3);

    // blkparse keeps one device at a time.
    std::fs::write(
        d.path().join("b.txt"),
        "  8,0    0        1     0.000000000  1  Q   R 0 + 8 [x]\n",
    )
    .unwrap();
    for f in ["f.dltrace", "hm.dltrace", "Financial1.spc", "hm.csv"] {
        std::fs::remove_file(d.path().join(f)).unwrap();
    }
    refused(
        d.path(),
        &[
            "trace",
            "import",
            "blkparse",
            "b.txt",
            "-o",
            "o.dltrace",
            "--volume",
            "all",
        ],
        "--volume all is not for blkparse traces",
    );
}

/// DiskSim's own ASCII traces (times in ms with fractions) and MQSim's (whole ns) both
/// import as `disksim`; `trace info` says which unit was taken; `--time-unit` overrides
/// it and is refused for other formats.
#[test]
fn disksim_and_mqsim_ascii_traces_import_in_their_units() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("ds.txt"),
        "0.000000 0 24536 8 1\n2.500000 0 1024 16 0\n",
    )
    .unwrap();
    std::fs::write(
        p.join("mq.txt"),
        "0\t0\t24536\t8\t1\n2500\t0\t1024\t16\t0\n",
    )
    .unwrap();
    let o = run_in(
        p,
        &["trace", "import", "disksim", "ds.txt", "-o", "ds.dltrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, recs) = read_trace(&p.join("ds.dltrace"));
    assert_eq!(recs[1].issue_ns, 2_500_000);
    assert_eq!((recs[1].op, recs[1].len_bytes), (Op::Write, 16 * 512));
    let o = run_in(p, &["trace", "info", "ds.dltrace"]);
    assert!(
        stdout(&o).contains("DiskSim ASCII: arrival time in ms"),
        "{}",
        stdout(&o)
    );

    let o = run_in(
        p,
        &["trace", "import", "disksim", "mq.txt", "-o", "mq.dltrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_trace(&p.join("mq.dltrace")).1[1].issue_ns, 2500);
    let o = run_in(p, &["trace", "info", "mq.dltrace"]);
    assert!(
        stdout(&o).contains("MQSim ASCII: arrival time in ns"),
        "{}",
        stdout(&o)
    );
    let o = run_in(
        p,
        &[
            "trace",
            "import",
            "disksim",
            "mq.txt",
            "-o",
            "mq.dltrace",
            "--time-unit",
            "us",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_trace(&p.join("mq.dltrace")).1[1].issue_ns, 2_500_000);

    std::fs::remove_file(p.join("ds.dltrace")).unwrap();
    std::fs::remove_file(p.join("mq.dltrace")).unwrap();
    refused(
        p,
        &[
            "trace",
            "import",
            "msr",
            "mq.txt",
            "-o",
            "x.dltrace",
            "--time-unit",
            "ms",
        ],
        "--time-unit: only for disksim traces",
    );
    refused(
        p,
        &[
            "trace",
            "import",
            "disksim",
            "mq.txt",
            "-o",
            "x.dltrace",
            "--time-unit",
            "s",
        ],
        "is not a time unit: ns, us or ms",
    );
}
