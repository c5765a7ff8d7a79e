//! The interval series: a fixed clock grid, summed across jobs.
//!
//! Each job's [`Recorder`] counts completions into dense per-direction histograms for the
//! interval it is in; when a completion falls past the interval's end it hands that
//! interval to the shared [`Aggregator`] as sparse histograms (one lock per job per
//! interval, nothing per I/O). The aggregator merges the jobs' parts and finalises an
//! interval into an [`IntervalRecord`] once every job has moved past it, so memory stays
//! bounded however long the run. Intervals in which nothing completed are records too.
//! The post-ramp intervals also add up into the run's total histograms, so the totals
//! and the series come from the same counts and always agree. Finalised records are kept
//! compact ([`Records`]: about 200 bytes each and 24 per sensor reading).

mod records;

pub use records::{Iter, Records};

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::hist::{Histogram, SparseHistogram};
use crate::op::Dir;
use crate::sensor::SensorReading;

/// One direction in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalDir {
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    pub lat_mean_ns: Option<f64>,
    pub lat_p50_ns: Option<u64>,
    pub lat_p99_ns: Option<u64>,
    pub lat_p9999_ns: Option<u64>,
    pub lat_max_ns: Option<u64>,
    /// I/Os that failed in the interval (an error or a short transfer), counted where
    /// they came back; the run's `error_count` is the sum over its intervals. Null
    /// where it is not known (another tool's series, bundles made before it was kept).
    #[serde(default)]
    pub errors: Option<u64>,
}

impl IntervalDir {
    /// An interval in which nothing completed and nothing failed.
    fn none() -> IntervalDir {
        IntervalDir {
            errors: Some(0),
            ..IntervalDir::default()
        }
    }

    fn from_hist(h: &Histogram, bytes: u64, dur_ns: u64) -> IntervalDir {
        IntervalDir {
            ops: h.count(),
            bytes,
            ops_per_s: per_s(h.count(), dur_ns),
            bytes_per_s: per_s(bytes, dur_ns),
            lat_mean_ns: h.mean(),
            lat_p50_ns: h.percentile(50.0),
            lat_p99_ns: h.percentile(99.0),
            lat_p9999_ns: h.percentile(99.99),
            lat_max_ns: h.max(),
            errors: Some(0),
        }
    }
}

/// `n` over an interval of `dur_ns`, per second: the one formula of the records' rates
/// (the compact records work them out again by it).
fn per_s(n: u64, dur_ns: u64) -> f64 {
    n as f64 / (dur_ns.max(1) as f64 / 1e9)
}

/// One interval of the series, all jobs summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    pub index: u64,
    /// Start relative to the start of the run (ramp included).
    pub start_ns: u64,
    pub duration_ns: u64,
    /// Inside the ramp: excluded from the totals.
    pub ramp: bool,
    pub read: IntervalDir,
    pub write: IntervalDir,
    /// Both directions together.
    pub all: IntervalDir,
    /// Bytes written since the start of the run, up to the end of this interval.
    pub cum_write_bytes: u64,
    /// Sensor values sampled during the interval (the last sample of each name from
    /// each source).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensors: Vec<SensorReading>,
    /// More bytes per second than the device's link carries: a cache, compression or
    /// memory answered in this interval, not the drive (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_link_ceiling: bool,
}

/// Parts of one interval merged across jobs so far.
struct OpenInterval {
    hist: [Histogram; 2],
    bytes: [u64; 2],
    /// Failed I/Os by direction.
    errors: [u64; 2],
}

struct AggInner {
    open: BTreeMap<u64, OpenInterval>,
    /// Per job: every interval below this index is complete for that job.
    progress: Vec<u64>,
    /// Next interval to finalise.
    next_final: u64,
    /// One past the highest interval any job has handed over.
    seen_end: u64,
    records: Records,
    totals: [Histogram; 2],
    total_bytes: [u64; 2],
    cum_write: u64,
    sensors: Vec<SensorReading>,
}

/// Shared collector of the jobs' interval parts.
pub struct Aggregator {
    origin_ns: u64,
    interval_ns: u64,
    ramp_intervals: u64,
    inner: Mutex<AggInner>,
    /// The finer series over the run's start (`Workload::log_head`) and where it ends.
    head: Option<(Box<Aggregator>, u64)>,
}

impl Aggregator {
    /// `origin_ns`: start of the run on the clock; `ramp_intervals`: leading intervals
    /// excluded from totals.
    pub fn new(origin_ns: u64, interval_ns: u64, ramp_intervals: u64, jobs: usize) -> Aggregator {
        Aggregator {
            origin_ns,
            interval_ns,
            ramp_intervals,
            inner: Mutex::new(AggInner {
                open: BTreeMap::new(),
                progress: vec![0; jobs],
                next_final: 0,
                seen_end: 0,
                records: Records::new(),
                totals: [Histogram::new(), Histogram::new()],
                total_bytes: [0; 2],
                cum_write: 0,
                sensors: Vec::new(),
            }),
            head: None,
        }
    }

    /// Also log the first `len_ns` of the run at `interval_ns` (a second, finer series;
    /// its ramp is the same time as the main series').
    pub fn with_head(mut self, interval_ns: u64, len_ns: u64) -> Aggregator {
        let interval_ns = interval_ns.max(1);
        let ramp_ns = self.ramp_intervals * self.interval_ns;
        let jobs = self.lock().progress.len();
        let head = Aggregator::new(self.origin_ns, interval_ns, ramp_ns / interval_ns, jobs);
        self.head = Some((Box::new(head), self.origin_ns + len_ns));
        self
    }

    /// Close the finer series over the start (see [`Aggregator::with_head`]) at `end_ns`
    /// (the head's own end, or the run's if it ended first); `None` without one.
    pub fn finish_head(&self, end_ns: u64) -> Option<Records> {
        let (head, head_end) = self.head.as_ref()?;
        let end = end_ns.min(*head_end);
        Some(head.finish(end, end).0)
    }

    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// A time-bounded run will have `n` intervals: room for their records is made now.
    fn expect_intervals(&self, n: u64) {
        let mut g = self.lock();
        if g.records.is_empty() {
            g.records.reserve(usize::try_from(n).unwrap_or(usize::MAX));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, AggInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A job hands over its counts for interval `idx` and says it has moved on to
    /// `progress` (every interval below is complete for it).
    fn submit(
        &self,
        job: usize,
        idx: u64,
        parts: [(SparseHistogram, u64); 2],
        errors: [u64; 2],
        progress: u64,
    ) {
        let mut g = self.lock();
        let [(r, rb), (w, wb)] = parts;
        if r.count() + w.count() + errors[0] + errors[1] > 0 {
            let e = g.open.entry(idx).or_insert_with(|| OpenInterval {
                hist: [Histogram::new(), Histogram::new()],
                bytes: [0; 2],
                errors: [0; 2],
            });
            e.errors[0] += errors[0];
            e.errors[1] += errors[1];
            e.hist[0].merge_sparse(&r);
            e.hist[1].merge_sparse(&w);
            e.bytes[0] += rb;
            e.bytes[1] += wb;
        }
        g.seen_end = g.seen_end.max(idx + 1);
        g.progress[job] = progress;
        self.finalise(&mut g, None);
    }

    /// Record a sensor value (attached to the interval its time falls in). A value
    /// stamped in an interval already finalised (a reading over the span that just
    /// ended, taken after the jobs moved on) joins that interval's record.
    pub fn sensor(&self, reading: SensorReading) {
        let mut g = self.lock();
        let Some(rel) = reading.at_ns.checked_sub(self.origin_ns) else {
            return;
        };
        let idx = rel / self.interval_ns;
        if idx >= g.next_final {
            g.sensors.push(reading);
        } else {
            // Records are finalised in order from index 0: the index is the position.
            g.records.add_reading(idx as usize, reading);
        }
    }

    /// `end_ns`: (where the grid ends, when the last interval's time ends), for the
    /// final call; the two differ by the drain after a deadline.
    fn finalise(&self, g: &mut AggInner, end_ns: Option<(u64, u64)>) {
        let upto = match end_ns {
            Some((grid_end, _)) => {
                (grid_end.saturating_sub(self.origin_ns)).div_ceil(self.interval_ns)
            }
            // Finished jobs (progress u64::MAX) do not hold anything back, but the last
            // intervals wait for `finish`, which knows where the run ended.
            None => match g.progress.iter().copied().filter(|&p| p != u64::MAX).min() {
                Some(p) => p.min(g.seen_end),
                None => return,
            },
        };
        while g.next_final < upto {
            let idx = g.next_final;
            let start = idx * self.interval_ns;
            // The last interval's rate is its I/Os over the time they took: up to the
            // last completion, past the grid when I/Os drained after a deadline.
            let dur = match end_ns {
                Some((grid_end, last)) if idx + 1 == upto => {
                    let on_grid = (grid_end - self.origin_ns - start).clamp(1, self.interval_ns);
                    on_grid.max(last.saturating_sub(self.origin_ns + start))
                }
                _ => self.interval_ns,
            };
            let mut rec = IntervalRecord {
                index: idx,
                start_ns: start,
                duration_ns: dur,
                ramp: idx < self.ramp_intervals,
                read: IntervalDir::none(),
                write: IntervalDir::none(),
                all: IntervalDir::none(),
                cum_write_bytes: g.cum_write,
                sensors: Vec::new(),
                over_link_ceiling: false,
            };
            let open = g.open.remove(&idx);
            if let Some(o) = open {
                rec.read = IntervalDir::from_hist(&o.hist[0], o.bytes[0], dur);
                rec.write = IntervalDir::from_hist(&o.hist[1], o.bytes[1], dur);
                let mut both = o.hist[0].clone();
                both.merge(&o.hist[1]);
                rec.all = IntervalDir::from_hist(&both, o.bytes[0] + o.bytes[1], dur);
                rec.read.errors = Some(o.errors[0]);
                rec.write.errors = Some(o.errors[1]);
                rec.all.errors = Some(o.errors[0] + o.errors[1]);
                g.cum_write += o.bytes[1];
                rec.cum_write_bytes = g.cum_write;
                if !rec.ramp {
                    g.totals[0].merge(&o.hist[0]);
                    g.totals[1].merge(&o.hist[1]);
                    g.total_bytes[0] += o.bytes[0];
                    g.total_bytes[1] += o.bytes[1];
                }
            }
            // An interval's reading is the latest within it. A last interval stretched
            // by the drain after a deadline runs to its last completion, where the final
            // reading is taken: it ends the series with the state the run left.
            let drained = end_ns.is_some() && idx + 1 == upto && dur > self.interval_ns;
            let lo = self.origin_ns + start;
            let hi = lo + self.interval_ns.max(dur) + u64::from(drained);
            let grid_hi = lo + self.interval_ns;
            let mut latest: Vec<SensorReading> = Vec::new();
            for s in g.sensors.iter().filter(|s| s.at_ns >= lo && s.at_ns < hi) {
                // Past the grid (the drain), a state (temperature, counters) is the one
                // the run left; a power is a rate over the span since the last sample,
                // and the one over the interval's whole second stands.
                let power_past_grid = s.at_ns >= grid_hi && s.unit == "watt";
                if !(power_past_grid
                    && latest
                        .iter()
                        .any(|l| l.name == s.name && l.source == s.source))
                {
                    keep_latest(&mut latest, s.clone());
                }
            }
            g.sensors.retain(|s| s.at_ns >= hi);
            rec.sensors = latest;
            g.records.push(rec);
            g.next_final += 1;
        }
    }

    /// The latest finalised interval and the run's cumulative ops so far (for progress).
    pub fn latest(&self) -> Option<IntervalRecord> {
        self.lock().records.last()
    }

    /// Close the series at `end_ns` (the run's last completion or its deadline) and hand
    /// back the records and the post-ramp totals `[read, write]` with their bytes.
    /// `last_ns`, at or after `end_ns` when I/Os drained after the deadline, is when the
    /// last of them came back: the last interval's time runs to it.
    pub fn finish(&self, end_ns: u64, last_ns: u64) -> (Records, [Histogram; 2], [u64; 2]) {
        let mut g = self.lock();
        let end = end_ns.max(self.origin_ns + 1);
        self.finalise(&mut g, Some((end, last_ns.max(end))));
        let records = std::mem::take(&mut g.records);
        let totals = std::mem::take(&mut g.totals);
        (records, totals, g.total_bytes)
    }
}

/// Add `r` to an interval's readings, replacing an earlier one of the same name and
/// source (the latest sample of each stands for the interval) unless `r` is null and the
/// earlier one a value: a read that failed does not undo one that worked in the same
/// interval (a meter's last line, then its end).
fn keep_latest(readings: &mut Vec<SensorReading>, r: SensorReading) {
    match readings
        .iter()
        .position(|l| l.name == r.name && l.source == r.source)
    {
        Some(i)
            if readings[i].at_ns <= r.at_ns
                && (r.value.is_some() || readings[i].value.is_none()) =>
        {
            readings[i] = r
        }
        Some(_) => {}
        None => readings.push(r),
    }
}

/// One job's recorder: the hot path of measurement.
pub struct Recorder<'a> {
    agg: &'a Aggregator,
    job: usize,
    cur_idx: u64,
    /// Completions at or past this time belong to a later interval.
    next_boundary_ns: u64,
    /// Completions after the last interval (the drain after a deadline) count in it.
    last_idx: u64,
    cur: [Histogram; 2],
    cur_bytes: [u64; 2],
    /// Failed I/Os of the current interval by direction.
    cur_errors: [u64; 2],
    ops: u64,
    /// The finer series' recorder while its time lasts, and where it ends (0 without).
    head: Option<Box<Recorder<'a>>>,
    head_end_ns: u64,
}

impl<'a> Recorder<'a> {
    /// `last_idx`: the final interval of a time-bounded run (u64::MAX when unbounded).
    pub fn new(agg: &'a Aggregator, job: usize, last_idx: u64) -> Recorder<'a> {
        if job == 0 && last_idx != u64::MAX {
            agg.expect_intervals(last_idx.saturating_add(1));
        }
        Recorder {
            agg,
            job,
            cur_idx: 0,
            next_boundary_ns: agg.origin_ns + agg.interval_ns,
            last_idx,
            cur: [Histogram::new(), Histogram::new()],
            cur_bytes: [0; 2],
            cur_errors: [0; 2],
            ops: 0,
            head: agg
                .head
                .as_ref()
                .map(|(h, _)| Box::new(Recorder::new(h, job, u64::MAX))),
            head_end_ns: agg.head.as_ref().map_or(0, |h| h.1),
        }
    }

    /// Count one failed I/O, in the interval it came back in.
    #[cold]
    pub fn record_error(&mut self, dir: Dir, done_ns: u64) {
        if done_ns >= self.next_boundary_ns {
            self.roll(done_ns);
        }
        self.cur_errors[dir.index()] += 1;
    }

    /// Count one completion.
    #[inline(always)]
    pub fn record(&mut self, dir: Dir, bytes: u32, submit_ns: u64, done_ns: u64) {
        if done_ns >= self.next_boundary_ns {
            self.roll(done_ns);
        }
        if done_ns < self.head_end_ns {
            if let Some(h) = &mut self.head {
                h.record(dir, bytes, submit_ns, done_ns);
            }
        }
        let d = dir.index();
        self.cur[d].record(done_ns.saturating_sub(submit_ns));
        self.cur_bytes[d] += bytes as u64;
        self.ops += 1;
    }

    #[cold]
    fn roll(&mut self, now_ns: u64) {
        if now_ns >= self.head_end_ns {
            if let Some(mut h) = self.head.take() {
                h.finish();
            }
        }
        let idx = ((now_ns - self.agg.origin_ns) / self.agg.interval_ns).min(self.last_idx);
        if idx == self.cur_idx {
            self.next_boundary_ns = u64::MAX;
            return;
        }
        self.hand_over(idx);
        self.cur_idx = idx;
        self.next_boundary_ns = if idx == self.last_idx {
            u64::MAX
        } else {
            self.agg.origin_ns + (idx + 1) * self.agg.interval_ns
        };
    }

    fn hand_over(&mut self, progress: u64) {
        let parts = [
            (self.cur[0].to_sparse(), self.cur_bytes[0]),
            (self.cur[1].to_sparse(), self.cur_bytes[1]),
        ];
        self.agg
            .submit(self.job, self.cur_idx, parts, self.cur_errors, progress);
        self.cur[0].clear();
        self.cur[1].clear();
        self.cur_bytes = [0; 2];
        self.cur_errors = [0; 2];
    }

    /// Completions counted by this recorder.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// The job is done: hand over what is left.
    pub fn finish(&mut self) {
        if let Some(mut h) = self.head.take() {
            h.finish();
        }
        self.hand_over(u64::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_sum_into_a_grid_with_empty_intervals_and_ramp_excluded() {
        let agg = Aggregator::new(1_000, 100, 1, 2);
        let mut a = Recorder::new(&agg, 0, u64::MAX);
        let mut b = Recorder::new(&agg, 1, u64::MAX);
        a.record(Dir::Read, 4096, 1_000, 1_050); // interval 0 (ramp)
        b.record(Dir::Write, 512, 1_000, 1_090); // interval 0 (ramp)
        a.record(Dir::Read, 4096, 1_050, 1_150); // interval 1
        b.record(Dir::Write, 512, 1_100, 1_199); // interval 1
        a.record(Dir::Read, 4096, 1_150, 1_420); // interval 4: 2 and 3 empty
        a.finish();
        b.finish();
        let (recs, totals, bytes) = agg.finish(1_450, 1_450);
        let recs: Vec<IntervalRecord> = recs.iter().collect();
        assert_eq!(recs.len(), 5);
        assert!(recs[0].ramp && !recs[1].ramp);
        assert_eq!(recs[1].read.ops, 1);
        assert_eq!(recs[1].write.ops, 1);
        assert_eq!(recs[1].all.ops, 2);
        assert_eq!(recs[2].all.ops, 0);
        assert_eq!(recs[3].all.ops, 0);
        assert_eq!(recs[4].read.ops, 1);
        assert_eq!(recs[4].duration_ns, 50);
        assert_eq!(recs[4].cum_write_bytes, 1024);
        assert_eq!(totals[0].count(), 2);
        assert_eq!(totals[1].count(), 1);
        assert_eq!(bytes, [8192, 512]);
        assert_eq!(totals[1].max(), Some(99));
    }

    #[test]
    fn a_head_logs_the_start_again_at_a_finer_interval() {
        // Intervals of 100 ns; the first 100 ns again in intervals of 10.
        let agg = Aggregator::new(1_000, 100, 0, 2).with_head(10, 100);
        let mut a = Recorder::new(&agg, 0, u64::MAX);
        let mut b = Recorder::new(&agg, 1, u64::MAX);
        a.record(Dir::Write, 4096, 1_000, 1_005); // head 0
        b.record(Dir::Write, 4096, 1_000, 1_007); // head 0
        a.record(Dir::Write, 4096, 1_005, 1_032); // head 3
        b.record(Dir::Write, 4096, 1_007, 1_099); // head 9
        a.record(Dir::Write, 4096, 1_032, 1_150); // past the head
        a.finish();
        b.finish();
        let (recs, totals, _) = agg.finish(1_200, 1_200);
        let head = agg.finish_head(1_200).unwrap();
        // The main series is as without a head.
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs.get(0).unwrap().all.ops, recs.get(1).unwrap().all.ops),
            (4, 1)
        );
        assert_eq!(totals[1].count(), 5);
        // The head: ten intervals of 10 ns over the first 100 ns, no more.
        let ops: Vec<u64> = head.iter().map(|r| r.write.ops).collect();
        assert_eq!(ops, [2, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
        assert_eq!(head.get(3).unwrap().start_ns, 30);
        assert!((head.get(0).unwrap().write.ops_per_s - 2.0 / 10e-9).abs() < 1.0);
        // A run shorter than its head ends the head where it ended.
        let agg = Aggregator::new(0, 100, 0, 1).with_head(10, 100);
        let mut a = Recorder::new(&agg, 0, u64::MAX);
        a.record(Dir::Write, 1, 0, 25);
        a.finish();
        agg.finish(30, 30);
        assert_eq!(agg.finish_head(30).unwrap().len(), 3);
        assert_eq!(Aggregator::new(0, 100, 0, 1).finish_head(30), None);
    }

    #[test]
    fn failed_ios_count_by_direction_in_the_interval_they_came_back_in() {
        let agg = Aggregator::new(1_000, 100, 0, 2);
        let mut a = Recorder::new(&agg, 0, u64::MAX);
        let mut b = Recorder::new(&agg, 1, u64::MAX);
        a.record(Dir::Read, 4096, 1_000, 1_050); // interval 0
        a.record_error(Dir::Read, 1_120); // interval 1
        b.record_error(Dir::Write, 1_150); // interval 1
        b.record_error(Dir::Write, 1_160); // interval 1
        a.record_error(Dir::Read, 1_390); // interval 3, after an empty 2
        a.finish();
        b.finish();
        let (recs, _, _) = agg.finish(1_400, 1_400);
        let recs: Vec<IntervalRecord> = recs.iter().collect();
        let errs = |f: fn(&IntervalRecord) -> &IntervalDir| -> Vec<Option<u64>> {
            recs.iter().map(|r| f(r).errors).collect()
        };
        assert_eq!(errs(|r| &r.read), [Some(0), Some(1), Some(0), Some(1)]);
        assert_eq!(errs(|r| &r.write), [Some(0), Some(2), Some(0), Some(0)]);
        assert_eq!(errs(|r| &r.all), [Some(0), Some(3), Some(0), Some(1)]);
        // A failed I/O is no completion.
        assert_eq!(recs[1].all.ops, 0);
    }

    #[test]
    fn a_reading_for_an_interval_already_finalised_joins_its_record() {
        let agg = Aggregator::new(1_000, 100, 0, 1);
        let mut a = Recorder::new(&agg, 0, u64::MAX);
        agg.sensor(SensorReading::new(
            "power",
            "watt",
            Some(1.0),
            1_000,
            "meter",
        ));
        a.record(Dir::Read, 1, 1_000, 1_050);
        a.record(Dir::Read, 1, 1_050, 1_150); // interval 0 is final now
        agg.sensor(SensorReading::new(
            "power",
            "watt",
            Some(2.0),
            1_010,
            "meter",
        ));
        agg.sensor(SensorReading::new(
            "temp",
            "celsius",
            Some(3.0),
            1_020,
            "hwmon",
        ));
        agg.sensor(SensorReading::new("power", "watt", Some(9.0), 500, "meter"));
        a.finish();
        let (recs, _, _) = agg.finish(1_200, 1_200);
        let recs: Vec<IntervalRecord> = recs.iter().collect();
        let v: Vec<(&str, Option<f64>)> = recs[0]
            .sensors
            .iter()
            .map(|r| (r.name.as_str(), r.value))
            .collect();
        assert_eq!(v, [("power", Some(2.0)), ("temp", Some(3.0))]);
        assert!(recs[1].sensors.is_empty());
    }

    #[test]
    fn a_null_later_in_an_interval_does_not_undo_a_value() {
        let agg = Aggregator::new(0, 100, 0, 1);
        let r = |v: Option<f64>, at| SensorReading::new("power", "watt", v, at, "meter");
        agg.sensor(r(Some(5.0), 10));
        agg.sensor(r(None, 20));
        agg.sensor(r(None, 110));
        agg.sensor(r(Some(6.0), 120));
        let (recs, _, _) = agg.finish(200, 200);
        let recs: Vec<IntervalRecord> = recs.iter().collect();
        let v: Vec<Option<f64>> = recs.iter().map(|x| x.sensors[0].value).collect();
        assert_eq!(v, [Some(5.0), Some(6.0)]);
    }

    #[test]
    fn drain_after_deadline_lands_in_last_interval_whose_time_runs_to_it() {
        let agg = Aggregator::new(0, 100, 0, 1);
        let mut a = Recorder::new(&agg, 0, 1);
        a.record(Dir::Read, 1, 0, 150);
        a.record(Dir::Read, 1, 0, 230); // past the 200 ns deadline
        a.finish();
        let (recs, totals, _) = agg.finish(200, 250);
        let recs: Vec<IntervalRecord> = recs.iter().collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].read.ops, 2);
        assert_eq!(totals[0].count(), 2);
        // Two I/Os over the 150 ns from the interval's start to the last completion,
        // not over the 100 ns up to the deadline.
        assert_eq!(recs[1].duration_ns, 150);
        assert!((recs[1].read.ops_per_s - 2.0 / 150e-9).abs() < 1.0);
    }
}
