//! The series' records, kept compact in memory.
//!
//! A run at 10 ms intervals makes 360 000 records an hour. Kept as [`IntervalRecord`]s
//! (three directions of optional fields, a vector of sensor readings with three strings
//! each) a record of a simulated drive cost about 1.4 KB; here it is a fixed-size
//! [`Packed`] value (about 200 bytes, no allocation of its own) and its sensor readings a
//! 24-byte entry each in one table beside it, their names, units and sources kept once
//! per series. What can be worked out is not stored: the rates (ops and bytes over the
//! interval's duration, by the very formula [`per_s`] that made them) and the sums over
//! both directions. A record where those do not hold (another tool's series, with rates of
//! its own) is kept whole, boxed, so every record reads back exactly as it was pushed and
//! the document serialised from here is the same JSON.
//!
//! The document is serialised from these records one at a time ([`Records`] implements
//! `Serialize` as a sequence, materialising each record as it is written), so writing a
//! result never holds a second copy of its series.

use std::fmt;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{per_s, IntervalDir, IntervalRecord};
use crate::sensor::SensorReading;

/// A missing count or latency in a packed record (a real one this large is kept whole).
const NONE: u64 = u64::MAX;

/// Latency summary of one direction, nulls as [`NONE`] (the mean as NaN, which no JSON
/// number is).
#[derive(Debug, Clone, Copy)]
struct PackedLat {
    mean_ns: f64,
    p50_ns: u64,
    p99_ns: u64,
    p9999_ns: u64,
    max_ns: u64,
}

#[derive(Debug, Clone, Copy)]
struct PackedDir {
    ops: u64,
    bytes: u64,
    errors: u64,
    lat: PackedLat,
}

/// One record without its readings: every field fixed-size.
#[derive(Debug, Clone, Copy)]
struct Packed {
    index: u64,
    start_ns: u64,
    duration_ns: u64,
    cum_write_bytes: u64,
    read: PackedDir,
    write: PackedDir,
    /// Both directions' latency (the counts are the sums of read and write).
    all_lat: PackedLat,
    ramp: bool,
    over_link_ceiling: bool,
}

#[derive(Debug, Clone)]
enum Slot {
    Packed(Packed),
    /// A record that does not pack exactly (with its readings).
    Whole(Box<IntervalRecord>),
}

/// One sensor reading of a packed record.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// The record's position.
    pos: u32,
    /// Its name, unit and source in [`Records::keys`].
    key: u32,
    /// NaN for null (a NaN is written as null in JSON anyway).
    value: f64,
    at_ns: u64,
}

/// A sensor's name, unit and source.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    name: String,
    unit: String,
    source: String,
}

/// The records of a series, in order. Read them with [`Records::iter`] or
/// [`Records::get`] (each record is made on the fly); add with [`Records::push`].
#[derive(Debug, Clone, Default)]
pub struct Records {
    slots: Vec<Slot>,
    /// The packed records' readings, in the order of their records.
    readings: Vec<Reading>,
    keys: Vec<Key>,
    /// Records still expected ([`Records::reserve`]), for the readings' room.
    expected: usize,
}

/// Most records room is made for ahead (about 450 MB, not touched until written): a
/// longer run's records grow as a vector does.
const MAX_RESERVED: usize = 1 << 21;

fn opt(v: Option<u64>) -> Option<u64> {
    match v {
        Some(NONE) => None,
        None => Some(NONE),
        Some(x) => Some(x),
    }
}

fn unopt(v: u64) -> Option<u64> {
    (v != NONE).then_some(v)
}

impl PackedLat {
    fn pack(d: &IntervalDir) -> Option<PackedLat> {
        let mean_ns = match d.lat_mean_ns {
            Some(m) if m.is_nan() => return None,
            Some(m) => m,
            None => f64::NAN,
        };
        Some(PackedLat {
            mean_ns,
            p50_ns: opt(d.lat_p50_ns)?,
            p99_ns: opt(d.lat_p99_ns)?,
            p9999_ns: opt(d.lat_p9999_ns)?,
            max_ns: opt(d.lat_max_ns)?,
        })
    }

    fn unpack(&self, ops: u64, bytes: u64, errors: Option<u64>, dur: u64) -> IntervalDir {
        IntervalDir {
            ops,
            bytes,
            ops_per_s: per_s(ops, dur),
            bytes_per_s: per_s(bytes, dur),
            lat_mean_ns: (!self.mean_ns.is_nan()).then_some(self.mean_ns),
            lat_p50_ns: unopt(self.p50_ns),
            lat_p99_ns: unopt(self.p99_ns),
            lat_p9999_ns: unopt(self.p9999_ns),
            lat_max_ns: unopt(self.max_ns),
            errors,
        }
    }
}

impl PackedDir {
    fn pack(d: &IntervalDir) -> Option<PackedDir> {
        Some(PackedDir {
            ops: d.ops,
            bytes: d.bytes,
            errors: opt(d.errors)?,
            lat: PackedLat::pack(d)?,
        })
    }

    fn unpack(&self, dur: u64) -> IntervalDir {
        self.lat
            .unpack(self.ops, self.bytes, unopt(self.errors), dur)
    }
}

/// Both directions' errors: their sum, null when neither is known.
fn sum_errors(r: Option<u64>, w: Option<u64>) -> Option<u64> {
    match (r, w) {
        (None, None) => None,
        (r, w) => r.unwrap_or(0).checked_add(w.unwrap_or(0)),
    }
}

impl Packed {
    /// `r` without its readings, if it reads back exactly.
    fn pack(r: &IntervalRecord) -> Option<Packed> {
        let p = Packed {
            index: r.index,
            start_ns: r.start_ns,
            duration_ns: r.duration_ns,
            cum_write_bytes: r.cum_write_bytes,
            read: PackedDir::pack(&r.read)?,
            write: PackedDir::pack(&r.write)?,
            all_lat: PackedLat::pack(&r.all)?,
            ramp: r.ramp,
            over_link_ceiling: r.over_link_ceiling,
        };
        let back = p.unpack(Vec::new());
        let same = |a: &IntervalDir, b: &IntervalDir| {
            a.ops == b.ops
                && a.bytes == b.bytes
                && a.errors == b.errors
                && a.ops_per_s.to_bits() == b.ops_per_s.to_bits()
                && a.bytes_per_s.to_bits() == b.bytes_per_s.to_bits()
        };
        (same(&back.read, &r.read) && same(&back.write, &r.write) && same(&back.all, &r.all))
            .then_some(p)
    }

    fn unpack(&self, sensors: Vec<SensorReading>) -> IntervalRecord {
        let d = self.duration_ns;
        let (r, w) = (&self.read, &self.write);
        let all = self.all_lat.unpack(
            r.ops.wrapping_add(w.ops),
            r.bytes.wrapping_add(w.bytes),
            sum_errors(unopt(r.errors), unopt(w.errors)),
            d,
        );
        IntervalRecord {
            index: self.index,
            start_ns: self.start_ns,
            duration_ns: d,
            ramp: self.ramp,
            read: r.unpack(d),
            write: w.unpack(d),
            all,
            cum_write_bytes: self.cum_write_bytes,
            sensors,
            over_link_ceiling: self.over_link_ceiling,
        }
    }
}

impl Records {
    pub fn new() -> Records {
        Records::default()
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Make room for `n` records more (a run that knows its length): a vector grown by
    /// doubling leaves the smaller copies it outgrew behind in the heap, up to twice the
    /// records' size. Room that cannot be had is not made.
    pub fn reserve(&mut self, n: usize) {
        let n = n.min(MAX_RESERVED);
        if self.slots.try_reserve_exact(n).is_ok() {
            self.expected = n;
        }
    }

    /// Add a record at the end.
    pub fn push(&mut self, r: IntervalRecord) {
        let pos = self.slots.len();
        if self.expected > 0 && !r.sensors.is_empty() && self.readings.capacity() == 0 {
            // The first readings tell how many a record has.
            let _ = self
                .readings
                .try_reserve_exact(self.expected.saturating_mul(r.sensors.len()));
        }
        self.expected = self.expected.saturating_sub(1);
        let slot = self.slot_of(r, pos);
        self.slots.push(slot);
    }

    /// The record at `pos` replaced by `r`.
    pub fn set(&mut self, pos: usize, r: IntervalRecord) {
        if pos >= self.slots.len() {
            return;
        }
        let range = self.readings_of(pos);
        self.readings.drain(range);
        self.slots[pos] = self.slot_of(r, pos);
    }

    /// Mark the record at `pos` as over (or not over) the link's ceiling.
    pub fn set_over_link_ceiling(&mut self, pos: usize, over: bool) {
        match self.slots.get_mut(pos) {
            Some(Slot::Packed(p)) => p.over_link_ceiling = over,
            Some(Slot::Whole(r)) => r.over_link_ceiling = over,
            None => {}
        }
    }

    /// The record at `pos`.
    pub fn get(&self, pos: usize) -> Option<IntervalRecord> {
        Some(match self.slots.get(pos)? {
            Slot::Packed(p) => p.unpack(self.sensors_of(pos)),
            Slot::Whole(r) => (**r).clone(),
        })
    }

    pub fn first(&self) -> Option<IntervalRecord> {
        self.get(0)
    }

    pub fn last(&self) -> Option<IntervalRecord> {
        self.get(self.len().checked_sub(1)?)
    }

    /// The records in order, each made as it is reached.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            records: self,
            at: 0..self.len(),
        }
    }

    /// Memory the records take: their slots, readings and the sensor names (what a
    /// record costs, for the tests that bound it). Spare capacity of the vectors is left
    /// out: never written, it takes no memory.
    pub fn bytes_held(&self) -> usize {
        let keys: usize = self
            .keys
            .iter()
            .map(|k| size_of::<Key>() + k.name.capacity() + k.unit.capacity() + k.source.capacity())
            .sum();
        let whole: usize = self
            .slots
            .iter()
            .filter_map(|s| match s {
                Slot::Whole(r) => Some(
                    size_of::<IntervalRecord>() + r.sensors.capacity() * size_of::<SensorReading>(),
                ),
                Slot::Packed(_) => None,
            })
            .sum();
        self.slots.len() * size_of::<Slot>()
            + self.readings.len() * size_of::<Reading>()
            + keys
            + whole
    }

    /// Fixed size of one record in memory, readings apart.
    pub const SLOT_BYTES: usize = size_of::<Slot>();

    /// Fixed size of one sensor reading in memory.
    pub const READING_BYTES: usize = size_of::<Reading>();

    /// Join `reading` to the record at `pos` (the latest of each sensor stands for it;
    /// see [`super::keep_latest`]).
    pub(crate) fn add_reading(&mut self, pos: usize, reading: SensorReading) {
        let Some(mut r) = self.get(pos) else {
            return;
        };
        super::keep_latest(&mut r.sensors, reading);
        self.set(pos, r);
    }

    fn slot_of(&mut self, r: IntervalRecord, pos: usize) -> Slot {
        let (Some(p), Ok(pos32)) = (Packed::pack(&r), u32::try_from(pos)) else {
            return Slot::Whole(Box::new(r));
        };
        // Readings stay in the order of their records: a set() of an earlier record
        // puts its readings where its old ones were.
        let at = self.readings.partition_point(|x| (x.pos as usize) < pos);
        let new: Vec<Reading> = r
            .sensors
            .into_iter()
            .map(|s| Reading {
                pos: pos32,
                key: self.key_of(s.name, s.unit, s.source),
                value: s.value.unwrap_or(f64::NAN),
                at_ns: s.at_ns,
            })
            .collect();
        self.readings.splice(at..at, new);
        Slot::Packed(p)
    }

    fn key_of(&mut self, name: String, unit: String, source: String) -> u32 {
        let k = Key { name, unit, source };
        let i = match self.keys.iter().position(|x| *x == k) {
            Some(i) => i,
            None => {
                self.keys.push(k);
                self.keys.len() - 1
            }
        };
        i as u32
    }

    fn readings_of(&self, pos: usize) -> std::ops::Range<usize> {
        let lo = self.readings.partition_point(|x| (x.pos as usize) < pos);
        let hi = self.readings.partition_point(|x| (x.pos as usize) <= pos);
        lo..hi
    }

    fn sensors_of(&self, pos: usize) -> Vec<SensorReading> {
        self.readings[self.readings_of(pos)]
            .iter()
            .map(|x| {
                let k = &self.keys[x.key as usize];
                SensorReading {
                    name: k.name.clone(),
                    unit: k.unit.clone(),
                    value: (!x.value.is_nan()).then_some(x.value),
                    at_ns: x.at_ns,
                    source: k.source.clone(),
                }
            })
            .collect()
    }
}

/// The records of a [`Records`] in order, each made as it is reached.
pub struct Iter<'a> {
    records: &'a Records,
    at: std::ops::Range<usize>,
}

impl Iterator for Iter<'_> {
    type Item = IntervalRecord;
    fn next(&mut self) -> Option<IntervalRecord> {
        self.records.get(self.at.next()?)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.at.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<IntervalRecord> {
        self.records.get(self.at.next_back()?)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Records {
    type Item = IntervalRecord;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for Records {
    fn eq(&self, other: &Records) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<IntervalRecord>> for Records {
    fn from(v: Vec<IntervalRecord>) -> Records {
        v.into_iter().collect()
    }
}

impl FromIterator<IntervalRecord> for Records {
    fn from_iter<I: IntoIterator<Item = IntervalRecord>>(it: I) -> Records {
        let mut r = Records::new();
        it.into_iter().for_each(|x| r.push(x));
        r
    }
}

impl Serialize for Records {
    /// A JSON array of the records, each made as it is written.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Records {
    /// Read a record at a time into the compact form (a large document's series is never
    /// held whole as records).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Records, D::Error> {
        struct Seq;
        impl<'de> Visitor<'de> for Seq {
            type Value = Records;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of interval records")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Records, A::Error> {
                let mut r = Records::new();
                while let Some(x) = seq.next_element::<IntervalRecord>()? {
                    r.push(x);
                }
                Ok(r)
            }
        }
        d.deserialize_seq(Seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine_like(i: u64) -> IntervalRecord {
        let dur = 10_000_000;
        let dir = |ops: u64, bytes: u64| IntervalDir {
            ops,
            bytes,
            ops_per_s: per_s(ops, dur),
            bytes_per_s: per_s(bytes, dur),
            lat_mean_ns: (ops > 0).then_some(311_512.5),
            lat_p50_ns: (ops > 0).then_some(311_295),
            lat_p99_ns: (ops > 0).then_some(311_295),
            lat_p9999_ns: (ops > 0).then_some(311_295),
            lat_max_ns: (ops > 0).then_some(311_500),
            errors: Some(0),
        };
        let read = dir(32, 32 << 20);
        let write = dir(i % 3, (i % 3) << 20);
        let all = IntervalDir {
            lat_max_ns: Some(311_600),
            ..dir(read.ops + write.ops, read.bytes + write.bytes)
        };
        IntervalRecord {
            index: i,
            start_ns: i * dur,
            duration_ns: dur,
            ramp: i == 0,
            read,
            write,
            all,
            cum_write_bytes: i << 20,
            sensors: vec![
                SensorReading::new("temperature", "celsius", Some(41.5), i * dur, "model"),
                SensorReading::new("thermal_time_1", "seconds", Some(0.0), i * dur, "model"),
                SensorReading::new("power", "watt", None, i * dur, "model"),
            ],
            over_link_ceiling: false,
        }
    }

    #[test]
    fn a_record_of_the_engine_is_a_few_hundred_bytes_without_an_allocation_of_its_own() {
        // The fixed part of a record, and each reading, by size: no heap of their own.
        const { assert!(Records::SLOT_BYTES <= 216) };
        const { assert!(Records::READING_BYTES <= 24) };
        let n = 10_000;
        let mut r = Records::new();
        (0..n).for_each(|i| r.push(engine_like(i)));
        assert!(r.slots.iter().all(|s| matches!(s, Slot::Packed(_))));
        // Everything held over the records: a record with its three sensor readings.
        let per = r.bytes_held() as f64 / n as f64;
        assert!(per < 400.0, "{per:.0} bytes per record");
        // As IntervalRecords they were several times that.
        let old = size_of::<IntervalRecord>() + 3 * (size_of::<SensorReading>() + 3 * 16);
        assert!(per * 2.0 < old as f64, "{per} against {old}");
    }

    #[test]
    fn every_record_reads_back_as_it_was_pushed_and_serialises_the_same() {
        let mut foreign = engine_like(5);
        // Another tool's rate (not ops over the duration), a null mean and error count.
        foreign.read.ops_per_s = 3_199.7;
        foreign.write.lat_mean_ns = None;
        foreign.write.errors = None;
        let mut odd = engine_like(6);
        odd.all.ops += 1; // not the sum of the directions
        let mut huge = engine_like(7);
        huge.read.lat_max_ns = Some(u64::MAX);
        let list: Vec<IntervalRecord> = (0..5)
            .map(engine_like)
            .chain([foreign, odd, huge, engine_like(8)])
            .collect();
        let r: Records = list.clone().into();
        assert_eq!(r.iter().collect::<Vec<_>>(), list);
        assert_eq!(r.get(8), list.get(8).cloned());
        assert!(matches!(r.slots[5], Slot::Whole(_)) && matches!(r.slots[8], Slot::Packed(_)));
        let a = serde_json::to_string(&r).unwrap();
        assert_eq!(a, serde_json::to_string(&list).unwrap());
        let back: Records = serde_json::from_str(&a).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn readings_join_an_earlier_record_in_place() {
        let mut r: Records = (0..4).map(engine_like).collect();
        r.add_reading(
            1,
            SensorReading::new("power", "watt", Some(2.5), 10_000_001, "model"),
        );
        r.add_reading(
            1,
            SensorReading::new("fan", "rpm", Some(900.0), 10_000_002, "hwmon"),
        );
        let one = r.get(1).unwrap();
        let v: Vec<_> = one
            .sensors
            .iter()
            .map(|s| (s.name.as_str(), s.value))
            .collect();
        assert_eq!(
            v,
            [
                ("temperature", Some(41.5)),
                ("thermal_time_1", Some(0.0)),
                ("power", Some(2.5)),
                ("fan", Some(900.0))
            ]
        );
        assert_eq!(r.get(2).unwrap(), engine_like(2));
        assert_eq!(r.get(0).unwrap(), engine_like(0));
        r.set_over_link_ceiling(3, true);
        assert!(r.last().unwrap().over_link_ceiling);
    }
}
