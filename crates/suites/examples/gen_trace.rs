//! Writes a synthetic trace in drivelab's format, for `bench/replay` and trying `drivelab
//! run replay`: desktop-like mixed I/O with original service times.
//!
//! Usage: gen_trace OUT.dltrace IOS [SPAN_BYTES] [GAP_NS]
//! 70 % reads; sizes 4K (60 %), 16K, 64K, 128K; a quarter of the I/Os sequential after
//! the one before; one I/O every GAP_NS (default 10 µs) with up to 8 issued together;
//! service times 50 µs–2 ms; one flush in 500 I/Os (FUA on the write after it), one
//! 1 MiB discard in 1000. Seeded: the same arguments give the same file.

use drivelab_trace::{native::Writer, Header, Op, Record};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_trace OUT.dltrace IOS [SPAN_BYTES] [GAP_NS]");
        std::process::exit(2);
    }
    let ios: u64 = args[2].parse()?;
    let span: u64 = args.get(3).map_or(Ok(1 << 30), |s| s.parse())?;
    let gap: u64 = args.get(4).map_or(Ok(10_000), |s| s.parse())?;
    let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&args[1])?);
    let header = Header {
        source_format: "synthetic".into(),
        device_size_bytes: Some(span),
        notes: vec![format!("gen_trace {ios} I/Os over {span} bytes")],
        ..Header::default()
    };
    let mut w = Writer::new(out, &header)?;
    let mut rng = fastrand::Rng::with_seed(42);
    let (mut t, mut next_off) = (0u64, 0u64);
    for i in 0..ios {
        if rng.u32(0..8) != 0 {
            t += rng.u64(0..2 * gap);
        }
        let svc = Some(rng.u64(50_000..2_000_000));
        let r = if i % 1000 == 998 {
            let off = rng.u64(0..span / (1 << 20)) << 20;
            Record::new(t, Op::Discard, off, 1 << 20)
        } else if i % 500 == 499 {
            Record {
                service_ns: svc,
                ..Record::new(t, Op::Flush, 0, 0)
            }
        } else {
            let len = [4096u64, 4096, 4096, 16384, 65536, 131072][rng.usize(0..6)];
            let off = if rng.u32(0..4) == 0 && next_off + len <= span {
                next_off
            } else {
                rng.u64(0..(span - len) / 4096) * 4096
            };
            next_off = off + len;
            let op = if rng.u32(0..10) < 7 {
                Op::Read
            } else {
                Op::Write
            };
            Record {
                fua: op == Op::Write && i % 500 == 0,
                service_ns: svc,
                ..Record::new(t, op, off, len)
            }
        };
        w.write(&r)?;
    }
    let (totals, _) = w.finish()?;
    eprintln!(
        "{}: {} records, {:.3} s of trace",
        args[1],
        totals.records,
        totals.last_issue_ns as f64 / 1e9
    );
    Ok(())
}
