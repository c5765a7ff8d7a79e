//! A verifying run's read-back pass (`io --verify`) as part of the run: each block read
//! is timed and counted like any read. The pass's intervals follow the run's in the
//! series (on its grid, from the interval after the run's last), its reads join the read
//! totals, its time the totals' elapsed time and its CPU the run's.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::assemble::Facts;
use crate::clock::{Clock, MonotonicClock};
use crate::hist::Histogram;
use crate::op::Dir;
use crate::series::{Aggregator, IntervalRecord, Recorder};
use crate::spec::Workload;
use crate::verify::{check_reading, VerifyResult};

/// What the pass found and what its reads measured.
pub struct Pass {
    pub result: VerifyResult,
    records: Vec<IntervalRecord>,
    hist: Histogram,
    bytes: u64,
    elapsed_ns: u64,
    cpu_s: (f64, f64),
}

/// Read back and check every block the run wrote, timing each read.
pub fn run(w: &Workload, file: &File, writes_per_job: Vec<u64>) -> Pass {
    let clock = MonotonicClock::new();
    let cpu0 = crate::sys::process_cpu_s();
    let origin = clock.now_ns();
    let agg = Aggregator::new(origin, w.log_interval_ns, 0, 1);
    let mut rec = Recorder::new(&agg, 0, u64::MAX);
    let result = check_reading(w, writes_per_job, &mut |buf, offset| {
        let t0 = clock.now_ns();
        let r = file.read_exact_at(buf, offset);
        match r {
            Ok(()) => rec.record(Dir::Read, buf.len() as u32, t0, clock.now_ns()),
            Err(_) => rec.record_error(Dir::Read, clock.now_ns()),
        }
        r
    });
    rec.finish();
    let end = clock.now_ns();
    let (records, [hist, _], [bytes, _]) = agg.finish(end, end);
    let cpu1 = crate::sys::process_cpu_s();
    Pass {
        result,
        records: records.iter().collect(),
        hist,
        bytes,
        elapsed_ns: end - origin,
        cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
    }
}

impl Pass {
    /// Count the pass in the run's facts (before they are assembled): its intervals
    /// after the run's, its reads in the read totals, its time and CPU in the run's.
    pub fn count_in(&mut self, f: &mut Facts, interval_ns: u64) {
        let next = f.records.last().map_or(0, |r| r.index + 1);
        let cum_write = f.records.last().map_or(0, |r| r.cum_write_bytes);
        for mut r in self.records.drain(..) {
            r.index += next;
            r.start_ns += next * interval_ns;
            r.cum_write_bytes = cum_write;
            f.records.push(r);
        }
        f.hists[0].merge(&self.hist);
        f.bytes[0] += self.bytes;
        f.completed_ios += self.hist.count();
        f.cpu_s = (f.cpu_s.0 + self.cpu_s.0, f.cpu_s.1 + self.cpu_s.1);
        let drain = f.end_ns - f.grid_end_ns;
        f.end_ns = f.origin_ns + next * interval_ns + self.elapsed_ns;
        f.grid_end_ns = f.end_ns - drain;
        f.verify_pass_ns = self.elapsed_ns;
        self.result.pass_ns = Some(self.elapsed_ns);
        self.result.pass_first_index = Some(next);
    }
}
