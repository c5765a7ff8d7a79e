//! Scores of a trace replay (the storage-trace reviews: PCMark 10's traces, "The
//! Destroyer"): average data rate, average and percentile service time per operation,
//! the share of I/Os above 10, 50 and 100 ms, total replay time, issue lag, and — where
//! the trace carries the original service times — this drive against the original, I/O
//! by I/O.
//!
//! Inputs are the replay's histograms as buckets `(lower_bound, count)` of a log-linear
//! layout (each bucket at most 1/128 of its lower bound wide). A percentile is the lower
//! bound of the bucket holding its rank; "above T" counts the buckets whose lower bound is
//! at or above T (so within one bucket's width, under 0.8 %, of T).

use serde::{Deserialize, Serialize};

/// One distribution as measured: its count, exact sum and buckets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dist {
    pub count: u64,
    pub sum: f64,
    pub max: Option<u64>,
    /// `(lower_bound, count)`, ascending.
    pub buckets: Vec<(u64, u64)>,
}

impl Dist {
    /// The value at percentile `p` (0–100): the lower bound of the bucket holding rank
    /// ⌈p/100 · count⌉.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for &(lo, c) in &self.buckets {
            seen += c;
            if seen >= rank {
                return Some(lo);
            }
        }
        self.max
    }

    /// How many values are at or above `t`.
    pub fn at_or_above(&self, t: u64) -> u64 {
        self.buckets
            .iter()
            .filter(|(lo, _)| *lo >= t)
            .map(|(_, c)| c)
            .sum()
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// Two distributions together.
    pub fn merged(&self, o: &Dist) -> Dist {
        let mut b = self.buckets.clone();
        b.extend_from_slice(&o.buckets);
        b.sort_unstable_by_key(|x| x.0);
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(b.len());
        for (lo, c) in b {
            match out.last_mut() {
                Some(l) if l.0 == lo => l.1 += c,
                _ => out.push((lo, c)),
            }
        }
        Dist {
            count: self.count + o.count,
            sum: self.sum + o.sum,
            max: self.max.max(o.max),
            buckets: out,
        }
    }
}

/// One operation's service times (ns) and bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpInput {
    pub bytes: u64,
    pub service_ns: Dist,
}

/// What the analysis needs of a replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayInput {
    /// Replay start to last completion.
    pub replay_ns: u64,
    pub read: OpInput,
    pub write: OpInput,
    pub flush: OpInput,
    pub discard: OpInput,
    /// Open loop: issue lag (ns).
    pub lag_ns: Option<Dist>,
    pub late_ios: u64,
    pub kept_up: bool,
    /// I/Os with an original service time, and how this drive did against it.
    pub compared_ios: u64,
    pub faster_ios: u64,
    pub slower_ios: u64,
    /// (this service time / original) × 1000.
    pub ratio_permille: Option<Dist>,
}

impl OpInput {
    fn merged(&self, o: &OpInput) -> OpInput {
        OpInput {
            bytes: self.bytes + o.bytes,
            service_ns: self.service_ns.merged(&o.service_ns),
        }
    }
}

impl ReplayInput {
    /// Two parts of one replay (consecutive windows of the trace) as one.
    pub fn merged(&self, o: &ReplayInput) -> ReplayInput {
        let both = |a: &Option<Dist>, b: &Option<Dist>| match (a, b) {
            (Some(a), Some(b)) => Some(a.merged(b)),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        ReplayInput {
            replay_ns: self.replay_ns + o.replay_ns,
            read: self.read.merged(&o.read),
            write: self.write.merged(&o.write),
            flush: self.flush.merged(&o.flush),
            discard: self.discard.merged(&o.discard),
            lag_ns: both(&self.lag_ns, &o.lag_ns),
            late_ios: self.late_ios + o.late_ios,
            kept_up: self.kept_up && o.kept_up,
            compared_ios: self.compared_ios + o.compared_ios,
            faster_ios: self.faster_ios + o.faster_ios,
            slower_ios: self.slower_ios + o.slower_ios,
            ratio_permille: both(&self.ratio_permille, &o.ratio_permille),
        }
    }
}

/// Service-time scores of one operation (or of all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpScores {
    pub ios: u64,
    pub bytes: u64,
    pub mean_service_ns: Option<f64>,
    pub p50_service_ns: Option<u64>,
    pub p90_service_ns: Option<u64>,
    pub p99_service_ns: Option<u64>,
    pub p999_service_ns: Option<u64>,
    pub max_service_ns: Option<u64>,
    /// Share (0–1) of the I/Os that took 10, 50 and 100 ms or more.
    pub over_10ms_fraction: Option<f64>,
    pub over_50ms_fraction: Option<f64>,
    pub over_100ms_fraction: Option<f64>,
}

/// Issue lag of an open-loop replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LagScores {
    pub p50_lag_ns: Option<u64>,
    pub p99_lag_ns: Option<u64>,
    pub max_lag_ns: Option<u64>,
    /// I/Os issued more than 1 ms after their due time.
    pub late_ios: u64,
    pub kept_up: bool,
}

/// This drive against the trace's original service times, I/O by I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VsOriginal {
    pub compared_ios: u64,
    /// Share (0–1) of the compared I/Os served faster / slower than originally.
    pub faster_fraction: f64,
    pub slower_fraction: f64,
    /// Percentiles of (this service time / original): below 1 is faster.
    pub p10_ratio: Option<f64>,
    pub p50_ratio: Option<f64>,
    pub p90_ratio: Option<f64>,
    pub p99_ratio: Option<f64>,
}

/// The replay's scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayScores {
    pub total_replay_ns: u64,
    pub total_replay_s: f64,
    /// Bytes read and written over the total replay time.
    pub avg_data_rate_bytes_per_s: f64,
    /// The same in decimal megabytes (10^6 B) and binary mebibytes (2^20 B) per second.
    pub avg_data_rate_mb_per_s: f64,
    pub avg_data_rate_mib_per_s: f64,
    pub all: OpScores,
    pub read: OpScores,
    pub write: OpScores,
    pub flush: OpScores,
    pub discard: OpScores,
    pub lag: Option<LagScores>,
    pub vs_original: Option<VsOriginal>,
}

fn op_scores(bytes: u64, d: &Dist) -> OpScores {
    let share = |t: u64| (d.count > 0).then(|| d.at_or_above(t) as f64 / d.count as f64);
    OpScores {
        ios: d.count,
        bytes,
        mean_service_ns: d.mean(),
        p50_service_ns: d.percentile(50.0),
        p90_service_ns: d.percentile(90.0),
        p99_service_ns: d.percentile(99.0),
        p999_service_ns: d.percentile(99.9),
        max_service_ns: d.max,
        over_10ms_fraction: share(10_000_000),
        over_50ms_fraction: share(50_000_000),
        over_100ms_fraction: share(100_000_000),
    }
}

/// Score a replay.
pub fn score(r: &ReplayInput) -> ReplayScores {
    let secs = r.replay_ns.max(1) as f64 / 1e9;
    let data = (r.read.bytes + r.write.bytes) as f64 / secs;
    let all = [&r.write, &r.flush, &r.discard]
        .iter()
        .fold(r.read.service_ns.clone(), |a, o| a.merged(&o.service_ns));
    let bytes = r.read.bytes + r.write.bytes + r.discard.bytes;
    let ratio = |p: f64| {
        r.ratio_permille
            .as_ref()
            .and_then(|d| d.percentile(p))
            .map(|v| v as f64 / 1000.0)
    };
    ReplayScores {
        total_replay_ns: r.replay_ns,
        total_replay_s: r.replay_ns as f64 / 1e9,
        avg_data_rate_bytes_per_s: data,
        avg_data_rate_mb_per_s: data / 1e6,
        avg_data_rate_mib_per_s: data / (1u64 << 20) as f64,
        all: op_scores(bytes, &all),
        read: op_scores(r.read.bytes, &r.read.service_ns),
        write: op_scores(r.write.bytes, &r.write.service_ns),
        flush: op_scores(0, &r.flush.service_ns),
        discard: op_scores(r.discard.bytes, &r.discard.service_ns),
        lag: r.lag_ns.as_ref().map(|d| LagScores {
            p50_lag_ns: d.percentile(50.0),
            p99_lag_ns: d.percentile(99.0),
            max_lag_ns: d.max,
            late_ios: r.late_ios,
            kept_up: r.kept_up,
        }),
        vs_original: (r.compared_ios > 0).then(|| VsOriginal {
            compared_ios: r.compared_ios,
            faster_fraction: r.faster_ios as f64 / r.compared_ios as f64,
            slower_fraction: r.slower_ios as f64 / r.compared_ios as f64,
            p10_ratio: ratio(10.0),
            p50_ratio: ratio(50.0),
            p90_ratio: ratio(90.0),
            p99_ratio: ratio(99.0),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(values: &[u64]) -> Dist {
        let mut d = Dist::default();
        for &v in values {
            d = d.merged(&Dist {
                count: 1,
                sum: v as f64,
                max: Some(v),
                buckets: vec![(v, 1)],
            });
        }
        d
    }

    #[test]
    fn scores_add_up_from_the_distributions() {
        let r = ReplayInput {
            replay_ns: 2_000_000_000,
            read: OpInput {
                bytes: 3_000_000,
                service_ns: dist(&[1_000_000, 20_000_000, 60_000_000, 200_000_000]),
            },
            write: OpInput {
                bytes: 1_000_000,
                service_ns: dist(&[5_000_000; 4]),
            },
            compared_ios: 8,
            faster_ios: 6,
            slower_ios: 2,
            ratio_permille: Some(dist(&[500, 500, 500, 500, 800, 900, 1500, 3000])),
            ..Default::default()
        };
        let s = score(&r);
        assert_eq!(s.avg_data_rate_bytes_per_s, 2_000_000.0);
        assert_eq!(s.avg_data_rate_mb_per_s, 2.0);
        assert_eq!(s.all.ios, 8);
        assert_eq!(s.read.over_10ms_fraction, Some(0.75));
        assert_eq!(s.read.over_50ms_fraction, Some(0.5));
        assert_eq!(s.read.over_100ms_fraction, Some(0.25));
        assert_eq!(s.all.over_10ms_fraction, Some(3.0 / 8.0));
        assert_eq!(s.write.mean_service_ns, Some(5e6));
        assert_eq!(s.read.p50_service_ns, Some(20_000_000));
        assert_eq!(s.flush.ios, 0);
        assert_eq!(s.flush.mean_service_ns, None);
        let v = s.vs_original.unwrap();
        assert_eq!((v.faster_fraction, v.slower_fraction), (0.75, 0.25));
        assert_eq!(v.p50_ratio, Some(0.5));
        assert_eq!(v.p90_ratio, Some(3.0));
        assert!(s.lag.is_none());
        // Two halves merged score as the whole.
        let half = ReplayInput {
            replay_ns: 1_000_000_000,
            read: OpInput {
                bytes: 1_500_000,
                service_ns: dist(&[1_000_000, 20_000_000]),
            },
            ..Default::default()
        };
        let other = ReplayInput {
            read: OpInput {
                bytes: 1_500_000,
                service_ns: dist(&[60_000_000, 200_000_000]),
            },
            ..half.clone()
        };
        let m = score(&half.merged(&other));
        assert_eq!(m.read, s.read);
        assert_eq!(m.total_replay_ns, 2_000_000_000);
    }
}
