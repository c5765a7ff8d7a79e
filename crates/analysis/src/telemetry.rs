//! Drive telemetry over one step: temperature at its start and end and at its hottest,
//! the seconds the drive throttled, its power (min, time-weighted mean, max), the energy
//! it used, and its efficiency (kIOPS per watt, MB/s per watt) — the figures the
//! external-SSD and enterprise reviews print beside the I/O.
//!
//! Input is the step's interval series with the sensor readings filed under each
//! interval. A figure with no reading behind it is `None` (null in JSON), never 0.
//!
//! Which reading is used when several sources give one: for power an external meter
//! (`meter…`), then the simulator's model (`model`), then anything else (hwmon); for
//! temperature the drive's own log (`nvme-smart…`, `smart…`), then hwmon, then the model.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One sensor value as filed under an interval. The names are shared: a series of an
/// hour at 10 ms has a million readings of a few sensors, and each must not carry its
/// own copies of their names (see [`Names`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub name: Arc<str>,
    pub unit: Arc<str>,
    pub source: Arc<str>,
    pub value: Option<f64>,
}

impl Reading {
    pub fn new(name: &str, unit: &str, source: &str, value: Option<f64>) -> Reading {
        Reading {
            name: name.into(),
            unit: unit.into(),
            source: source.into(),
            value,
        }
    }
}

/// The names of a series' readings, each kept once: [`Names::reading`] makes a reading
/// whose name, unit and source share the strings of the readings before it.
#[derive(Debug, Default)]
pub struct Names(Vec<Arc<str>>);

impl Names {
    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.iter().find(|a| ***a == *s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.0.push(a.clone());
        a
    }

    /// A reading with shared names.
    pub fn reading(&mut self, name: &str, unit: &str, source: &str, value: Option<f64>) -> Reading {
        Reading {
            name: self.get(name),
            unit: self.get(unit),
            source: self.get(source),
            value,
        }
    }
}

/// One interval of a step: its length, what completed in it, and its readings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Interval {
    pub duration_s: f64,
    /// Inside the ramp: left out of power and efficiency (like the I/O totals).
    pub ramp: bool,
    pub ops: u64,
    pub bytes: u64,
    pub readings: Vec<Reading>,
}

/// What a step's telemetry says (fields with their unit in the name; null: no reading).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepTelemetry {
    /// Where the temperature comes from (e.g. "nvme-smart:nvme0").
    pub temperature_source: Option<String>,
    pub temperature_start_celsius: Option<f64>,
    pub temperature_end_celsius: Option<f64>,
    pub temperature_max_celsius: Option<f64>,
    /// Seconds the drive spent throttling during the step; null when nothing tells.
    pub throttled_s: Option<f64>,
    /// How `throttled_s` was found: "thermal management time" (the drive's own
    /// counters advancing) or "above warning temperature".
    pub throttle_basis: Option<String>,
    /// Where the power comes from (e.g. "meter", "model", "hwmon:ina226").
    pub power_source: Option<String>,
    pub power_min_w: Option<f64>,
    /// Time-weighted over the measured intervals that have a reading.
    pub power_mean_w: Option<f64>,
    pub power_max_w: Option<f64>,
    /// Over the measured intervals; null unless every one of them has a reading.
    pub energy_j: Option<f64>,
    /// Share of the measured time covered by a power reading, 0–1.
    pub power_coverage_ratio: Option<f64>,
    /// Thousands of I/Os per second per watt, over the intervals with a power reading.
    pub kiops_per_w: Option<f64>,
    /// Decimal MB/s per watt, over the same intervals.
    pub mbps_per_w: Option<f64>,
    /// The drive's own write amplification over the step: what it wrote to its media
    /// (`media_written`, the OCP log) over what the host wrote to it (`data_written`),
    /// both as the drive counts them; null unless both advanced.
    #[serde(default)]
    pub write_amplification_ratio: Option<f64>,
}

/// The names the drive's thermal-management time counters have (seconds, cumulative).
const THERMAL_TIME: [&str; 2] = ["thermal_time_1", "thermal_time_2"];

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

fn power_rank(source: &str) -> u8 {
    if source.starts_with("meter") {
        0
    } else if source == "model" {
        1
    } else {
        2
    }
}

fn temperature_rank(source: &str) -> u8 {
    if source.starts_with("nvme-smart") || source.starts_with("smart") {
        0
    } else if source.starts_with("hwmon") {
        1
    } else if source == "model" {
        2
    } else {
        3
    }
}

/// The (source, name) of the power reading to use: a `watt` reading named `power…`
/// with at least one value, best-ranked source first, then "power" before other names.
pub fn power_channel(intervals: &[Interval]) -> Option<(String, String)> {
    pick(
        intervals,
        |r| &*r.unit == "watt" && r.name.starts_with("power"),
        |s, n| (power_rank(s), n != "power"),
    )
}

/// The (source, name) of the temperature to use: the composite `temperature` reading.
pub fn temperature_channel(intervals: &[Interval]) -> Option<(String, String)> {
    pick(
        intervals,
        |r| &*r.unit == "celsius" && &*r.name == "temperature",
        |s, _| (temperature_rank(s), false),
    )
}

fn pick(
    intervals: &[Interval],
    keep: impl Fn(&Reading) -> bool,
    rank: impl Fn(&str, &str) -> (u8, bool),
) -> Option<(String, String)> {
    let mut best: Option<(&str, &str)> = None;
    for r in intervals.iter().flat_map(|i| &i.readings) {
        if !keep(r) || finite(r.value).is_none() {
            continue;
        }
        let better = match best {
            None => true,
            Some((s, n)) => rank(&r.source, &r.name) < rank(s, n),
        };
        if better {
            best = Some((&*r.source, &*r.name));
        }
    }
    best.map(|(s, n)| (s.to_string(), n.to_string()))
}

/// The value of `channel` in one interval (None when absent or null).
pub fn value_of(interval: &Interval, channel: &(String, String)) -> Option<f64> {
    interval
        .readings
        .iter()
        .find(|r| *r.source == *channel.0 && *r.name == *channel.1)
        .and_then(|r| finite(r.value))
}

/// Each interval's power from the chosen channel (None where it has no reading).
pub fn power_series(intervals: &[Interval]) -> Vec<Option<f64>> {
    match power_channel(intervals) {
        Some(ch) => intervals.iter().map(|i| value_of(i, &ch)).collect(),
        None => vec![None; intervals.len()],
    }
}

/// Each interval's temperature from the chosen channel.
pub fn temperature_series(intervals: &[Interval]) -> Vec<Option<f64>> {
    match temperature_channel(intervals) {
        Some(ch) => intervals.iter().map(|i| value_of(i, &ch)).collect(),
        None => vec![None; intervals.len()],
    }
}

/// The drive's cumulative thermal-management seconds (both thresholds) in one interval,
/// from the first source that has them.
fn thermal_time(i: &Interval) -> Option<f64> {
    let src = i
        .readings
        .iter()
        .find(|r| THERMAL_TIME.contains(&&*r.name) && finite(r.value).is_some())?
        .source
        .clone();
    let mut sum = 0.0;
    for r in &i.readings {
        if r.source == src && THERMAL_TIME.contains(&&*r.name) {
            sum += finite(r.value)?;
        }
    }
    Some(sum)
}

/// The warning temperature a source declares (`temperature_warning`, °C), if any.
fn warning_c(intervals: &[Interval]) -> Option<f64> {
    intervals.iter().flat_map(|i| &i.readings).find_map(|r| {
        (&*r.name == "temperature_warning" && &*r.unit == "celsius")
            .then(|| finite(r.value))
            .flatten()
    })
}

/// Which intervals the drive throttled in, and how that is known: its
/// thermal-management counters advancing from the interval's reading to the next
/// (the last interval: from the one before), else its temperature above the warning
/// temperature it declares. None when neither is available.
pub fn throttled_intervals(intervals: &[Interval]) -> Option<(Vec<bool>, &'static str)> {
    let times: Vec<Option<f64>> = intervals.iter().map(thermal_time).collect();
    if times.iter().filter(|t| t.is_some()).count() >= 2 {
        let flags = (0..intervals.len())
            .map(|k| {
                let (a, b) = if k + 1 < times.len() {
                    (times[k], times[k + 1])
                } else {
                    (times[k.saturating_sub(1)], times[k])
                };
                matches!((a, b), (Some(a), Some(b)) if b > a)
            })
            .collect();
        return Some((flags, "thermal management time"));
    }
    let warn = warning_c(intervals)?;
    let temps = temperature_series(intervals);
    temps.iter().any(|t| t.is_some()).then(|| {
        let flags = temps.iter().map(|t| t.is_some_and(|t| t > warn)).collect();
        (flags, "above warning temperature")
    })
}

/// Seconds throttled: the drive's counters' advance over the step where it has them
/// (exact to its 1 s resolution), else the length of the intervals above the warning
/// temperature.
fn throttled_seconds(intervals: &[Interval]) -> Option<(f64, &'static str)> {
    let (flags, basis) = throttled_intervals(intervals)?;
    if basis == "thermal management time" {
        let times: Vec<f64> = intervals.iter().filter_map(thermal_time).collect();
        let first = times.first()?;
        let last = times.last()?;
        return Some(((last - first).max(0.0), basis));
    }
    let s = intervals
        .iter()
        .zip(&flags)
        .filter(|(_, &f)| f)
        .map(|(i, _)| i.duration_s)
        .sum();
    Some((s, basis))
}

/// The telemetry of one step.
pub fn step_telemetry(intervals: &[Interval]) -> StepTelemetry {
    let mut t = StepTelemetry::default();
    if let Some(ch) = temperature_channel(intervals) {
        let temps: Vec<f64> = intervals.iter().filter_map(|i| value_of(i, &ch)).collect();
        t.temperature_start_celsius = temps.first().copied();
        t.temperature_end_celsius = temps.last().copied();
        t.temperature_max_celsius = temps.iter().copied().reduce(f64::max);
        t.temperature_source = Some(ch.0);
    }
    if let Some((s, basis)) = throttled_seconds(intervals) {
        t.throttled_s = Some(s);
        t.throttle_basis = Some(basis.into());
    }
    power(intervals, &mut t);
    t.write_amplification_ratio = write_amplification(intervals);
    t
}

/// Media bytes over host bytes written, from the first to the last interval in which one
/// source gives both counters.
fn write_amplification(intervals: &[Interval]) -> Option<f64> {
    let both = |i: &Interval| -> Option<(f64, f64)> {
        let media = i.readings.iter().find(|r| &*r.name == "media_written")?;
        let host = i
            .readings
            .iter()
            .find(|r| &*r.name == "data_written" && r.source == media.source)?;
        Some((finite(host.value)?, finite(media.value)?))
    };
    let pairs: Vec<(f64, f64)> = intervals.iter().filter_map(both).collect();
    let (first, last) = (pairs.first()?, pairs.last()?);
    let (host, media) = (last.0 - first.0, last.1 - first.1);
    (host > 0.0 && media >= 0.0).then(|| media / host)
}

fn power(intervals: &[Interval], t: &mut StepTelemetry) {
    let Some(ch) = power_channel(intervals) else {
        return;
    };
    let measured: Vec<&Interval> = intervals.iter().filter(|i| !i.ramp).collect();
    let total_s: f64 = measured.iter().map(|i| i.duration_s).sum();
    let (mut energy, mut secs, mut ops, mut bytes) = (0.0, 0.0, 0u64, 0u64);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in &measured {
        let Some(p) = value_of(i, &ch) else { continue };
        energy += p * i.duration_s;
        secs += i.duration_s;
        ops += i.ops;
        bytes += i.bytes;
        lo = lo.min(p);
        hi = hi.max(p);
    }
    t.power_source = Some(ch.0.clone());
    if secs <= 0.0 {
        t.power_coverage_ratio = (total_s > 0.0).then_some(0.0);
        return;
    }
    // (Over the lowest reading, so that a constant power is its own mean exactly.)
    let above: f64 = measured
        .iter()
        .filter_map(|i| Some((value_of(i, &ch)? - lo) * i.duration_s))
        .sum();
    let mean = lo + above / secs;
    t.power_min_w = Some(lo);
    t.power_max_w = Some(hi);
    t.power_mean_w = Some(mean);
    t.power_coverage_ratio = Some(secs / total_s);
    t.energy_j = (secs >= total_s).then_some(energy);
    if mean > 0.0 {
        t.kiops_per_w = Some(ops as f64 / secs / 1e3 / mean);
        t.mbps_per_w = Some(bytes as f64 / secs / 1e6 / mean);
    }
}

/// Which intervals ran faster than the link can carry (`ceiling_bytes_per_s`, both
/// directions together): a cache, compression or memory answered, not the drive.
pub fn over_link_ceiling(intervals: &[Interval], ceiling_bytes_per_s: f64) -> Vec<bool> {
    intervals
        .iter()
        .map(|i| i.duration_s > 0.0 && i.bytes as f64 / i.duration_s > ceiling_bytes_per_s)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(ops: u64, readings: &[(&str, &str, &str, Option<f64>)]) -> Interval {
        Interval {
            duration_s: 1.0,
            ramp: false,
            ops,
            bytes: ops * 4096,
            readings: readings
                .iter()
                .map(|(n, u, s, v)| Reading::new(n, u, s, *v))
                .collect(),
        }
    }

    #[test]
    fn power_energy_and_efficiency_are_exact_and_time_weighted() {
        let mut a = iv(10_000, &[("power", "watt", "hwmon:ina226", Some(4.0))]);
        let b = iv(30_000, &[("power", "watt", "hwmon:ina226", Some(6.0))]);
        a.duration_s = 1.0;
        let mut c = b.clone();
        c.duration_s = 2.0;
        c.ops = 60_000;
        c.bytes = 60_000 * 4096;
        let t = step_telemetry(&[a, b, c]);
        assert_eq!(t.power_min_w, Some(4.0));
        assert_eq!(t.power_max_w, Some(6.0));
        // (4×1 + 6×1 + 6×2) J over 4 s.
        assert_eq!(t.energy_j, Some(22.0));
        assert_eq!(t.power_mean_w, Some(5.5));
        assert_eq!(t.power_coverage_ratio, Some(1.0));
        // 100 000 I/Os in 4 s = 25 kIOPS, at 5.5 W.
        assert!((t.kiops_per_w.unwrap() - 25.0 / 5.5).abs() < 1e-12);
        assert!((t.mbps_per_w.unwrap() - 25_000.0 * 4096.0 / 1e6 / 5.5).abs() < 1e-9);
        assert_eq!(t.power_source.as_deref(), Some("hwmon:ina226"));
        assert_eq!(t.temperature_start_celsius, None);
        assert_eq!(t.throttled_s, None);
    }

    #[test]
    fn nothing_read_is_null_never_zero() {
        let t = step_telemetry(&[iv(5, &[]), iv(5, &[])]);
        assert_eq!(t, StepTelemetry::default());
        let j = serde_json::to_value(&t).unwrap();
        assert!(j["power_mean_w"].is_null() && j["energy_j"].is_null());
    }

    #[test]
    fn a_gap_in_the_power_readings_keeps_the_mean_but_drops_the_energy() {
        let p = |v| [("power", "watt", "meter", v)];
        let t = step_telemetry(&[iv(1000, &p(Some(2.0))), iv(1000, &p(None)), iv(3000, &[])]);
        assert_eq!(t.power_mean_w, Some(2.0));
        assert_eq!(t.energy_j, None);
        assert!((t.power_coverage_ratio.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(t.kiops_per_w, Some(0.5));
    }

    #[test]
    fn the_meter_wins_over_hwmon_and_the_ramp_is_left_out() {
        let both = |m, h| {
            [
                ("power_in1", "watt", "hwmon:ina226", Some(h)),
                ("power", "watt", "meter", Some(m)),
            ]
        };
        let mut ramp = iv(1, &both(100.0, 100.0));
        ramp.ramp = true;
        let t = step_telemetry(&[ramp, iv(1000, &both(3.0, 9.0))]);
        assert_eq!(t.power_source.as_deref(), Some("meter"));
        assert_eq!((t.power_min_w, t.power_max_w), (Some(3.0), Some(3.0)));
    }

    #[test]
    fn temperature_start_end_max_from_the_drives_own_log_first() {
        let r = |log: f64, hw: f64| {
            [
                ("temperature", "celsius", "hwmon:nvme", Some(hw)),
                ("temperature", "celsius", "nvme-smart:nvme0", Some(log)),
            ]
        };
        let t = step_telemetry(&[
            iv(1, &r(40.0, 0.0)),
            iv(1, &r(55.0, 0.0)),
            iv(1, &r(50.0, 0.0)),
        ]);
        assert_eq!(t.temperature_source.as_deref(), Some("nvme-smart:nvme0"));
        assert_eq!(t.temperature_start_celsius, Some(40.0));
        assert_eq!(t.temperature_end_celsius, Some(50.0));
        assert_eq!(t.temperature_max_celsius, Some(55.0));
    }

    #[test]
    fn throttling_from_the_drives_counters_or_the_warning_temperature() {
        let c = |t1: f64, t2: f64| {
            [
                ("thermal_time_1", "seconds", "nvme-smart:nvme0", Some(t1)),
                ("thermal_time_2", "seconds", "nvme-smart:nvme0", Some(t2)),
            ]
        };
        let ivs = [
            iv(1, &c(10.0, 0.0)),
            iv(1, &c(11.0, 0.0)),
            iv(1, &c(11.0, 1.0)),
            iv(1, &c(11.0, 1.0)),
        ];
        let (flags, basis) = throttled_intervals(&ivs).unwrap();
        assert_eq!(flags, [true, true, false, false]);
        assert_eq!(basis, "thermal management time");
        let t = step_telemetry(&ivs);
        assert_eq!(t.throttled_s, Some(2.0));
        let w = |temp: f64| {
            [
                ("temperature", "celsius", "hwmon:drivetemp", Some(temp)),
                (
                    "temperature_warning",
                    "celsius",
                    "hwmon:drivetemp",
                    Some(70.0),
                ),
            ]
        };
        let ivs = [
            iv(1, &w(60.0)),
            iv(1, &w(71.0)),
            iv(1, &w(72.5)),
            iv(1, &w(69.0)),
        ];
        let t = step_telemetry(&ivs);
        assert_eq!(t.throttled_s, Some(2.0));
        assert_eq!(
            t.throttle_basis.as_deref(),
            Some("above warning temperature")
        );
        // A temperature with no threshold says nothing about throttling.
        let t = step_telemetry(&[iv(1, &[("temperature", "celsius", "model", Some(90.0))])]);
        assert_eq!(t.throttled_s, None);
    }

    #[test]
    fn the_drives_own_write_amplification_from_its_media_and_host_counters() {
        let c = |host: f64, media: f64| {
            [
                ("data_written", "bytes", "nvme-smart:nvme0", Some(host)),
                ("media_written", "bytes", "nvme-smart:nvme0", Some(media)),
            ]
        };
        let ivs = [
            iv(1, &c(1e9, 3e9)),
            iv(1, &c(1.5e9, 4e9)),
            iv(1, &c(2e9, 5.5e9)),
        ];
        assert_eq!(step_telemetry(&ivs).write_amplification_ratio, Some(2.5));
        // Nothing written by the host: no ratio.
        let ivs = [iv(1, &c(1e9, 3e9)), iv(1, &c(1e9, 3e9))];
        assert_eq!(step_telemetry(&ivs).write_amplification_ratio, None);
    }

    #[test]
    fn the_link_ceiling_flags_only_the_intervals_above_it() {
        let mut fast = iv(0, &[]);
        fast.bytes = 1_300_000_000;
        let mut slow = iv(0, &[]);
        slow.bytes = 1_100_000_000;
        assert_eq!(over_link_ceiling(&[slow, fast], 1.2e9), [false, true]);
    }
}
