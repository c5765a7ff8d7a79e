//! Speed benchmark: sequential fill, then one hour (virtual) of 4 KiB random writes at
//! QD32, driven straight through the `DeviceModel` trait by a tiny event loop.
//!
//! `cargo run --release -p drivelab-sim --example consistency_bench -- [SPEC] [SECONDS]`
//! (default `sim:nvme-tlc,capacity=64G` and 3600). Prints wall time, ns per submit, IOPS
//! over the last 400 s and the model's ground truth.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use drivelab_engine::model::DeviceModel;
use drivelab_engine::op::{Dir, IoOp};
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const QD: usize = 32;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("sim:nvme-tlc,capacity=64G");
    let seconds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3600);
    let mut dev = drivelab_sim::parse(spec).unwrap_or_else(|e| panic!("{e}"));
    let cap = dev.info().capacity_bytes;
    println!("{}", dev.info().spec);

    // Sequential fill, 128 KiB at QD32.
    let wall = Instant::now();
    let mut heap: BinaryHeap<Reverse<u64>> = (0..QD).map(|_| Reverse(0)).collect();
    let mut offset = 0u64;
    let mut fills = 0u64;
    while offset < cap {
        let Reverse(t) = heap.pop().unwrap_or(Reverse(0));
        let len = (128u64 << 10).min(cap - offset) as u32;
        let done = dev.submit(
            IoOp {
                dir: Dir::Write,
                offset,
                len,
            },
            t,
        );
        heap.push(Reverse(done));
        offset += len as u64;
        fills += 1;
    }
    let fill_end = heap.iter().map(|r| r.0).max().unwrap_or(0);
    println!(
        "fill: {fills} submits, {:.2} s wall, {:.1} s virtual",
        wall.elapsed().as_secs_f64(),
        fill_end as f64 * 1e-9
    );

    // One hour of 4 KiB random writes at QD32.
    let start = fill_end;
    let end = start + seconds * 1_000_000_000;
    let pages = cap / 4096;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let mut heap: BinaryHeap<Reverse<u64>> = (0..QD).map(|_| Reverse(start)).collect();
    let mut per_s = vec![0u64; seconds as usize + 1];
    let mut submits = 0u64;
    let wall = Instant::now();
    loop {
        let Reverse(t) = heap.pop().unwrap_or(Reverse(end));
        if t >= end {
            break;
        }
        if t > start {
            per_s[((t - start) / 1_000_000_000) as usize] += 1;
        }
        let lpn = ((rng.next_u64() >> 32) * pages) >> 32;
        let done = dev.submit(
            IoOp {
                dir: Dir::Write,
                offset: lpn * 4096,
                len: 4096,
            },
            t,
        );
        heap.push(Reverse(done));
        submits += 1;
    }
    let secs = wall.elapsed().as_secs_f64();
    println!(
        "random writes: {submits} submits in {secs:.2} s wall = {:.0} ns per submit (incl. event loop)",
        secs * 1e9 / submits as f64
    );
    let tail: Vec<f64> = per_s[(seconds.saturating_sub(400)) as usize..seconds as usize]
        .iter()
        .map(|&n| n as f64)
        .collect();
    let mean = tail.iter().sum::<f64>() / tail.len() as f64;
    let sd = (tail.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / tail.len() as f64).sqrt();
    let zero = per_s[..seconds as usize]
        .iter()
        .filter(|&&n| n == 0)
        .count();
    println!("last 400 s: mean {mean:.0} IOPS, sd {sd:.0}; seconds with zero I/O: {zero}");
    let first: Vec<u64> = per_s.iter().take(10).copied().collect();
    println!("first 10 s: {first:?}");
    println!(
        "{}",
        serde_json::to_string_pretty(&dev.ground_truth()).unwrap_or_default()
    );
}
