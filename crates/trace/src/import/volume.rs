//! Choosing one volume of a multi-volume trace (MSR DiskNumber, Tencent and Alibaba
//! volume ids, fio file names, blktrace devices).

use crate::{TraceError, VolumeSpan};
use std::collections::{BTreeSet, HashMap};

/// Distinct volume names remembered for messages; a trace with more still works (the
/// rest are counted as records, not kept: 100 000 names must not fill memory).
const MAX_LISTED: usize = 1000;
/// The longest volume name kept (longer ones are cut for the list).
const MAX_NAME_CHARS: usize = 64;

#[derive(Default)]
pub(crate) struct VolumeFilter {
    wanted: Option<String>,
    chosen: Option<String>,
    ambiguous: bool,
    seen: BTreeSet<String>,
    /// More distinct volumes than MAX_LISTED were seen.
    more: bool,
    /// The volume asked for was seen.
    wanted_seen: bool,
    others: u64,
}

impl VolumeFilter {
    pub fn new(wanted: Option<String>) -> VolumeFilter {
        VolumeFilter {
            wanted,
            ..VolumeFilter::default()
        }
    }

    /// Is a record of volume `v` kept?
    pub fn admit(&mut self, v: &str) -> bool {
        if !self.seen.contains(v) {
            let key: String = if v.chars().count() <= MAX_NAME_CHARS {
                v.to_string()
            } else {
                v.chars().take(MAX_NAME_CHARS).chain(['…']).collect()
            };
            if self.seen.len() < MAX_LISTED {
                self.seen.insert(key);
            } else if !self.seen.contains(&key) {
                self.more = true;
            }
        }
        self.wanted_seen |= self.wanted.as_deref() == Some(v);
        let keep = match (&self.wanted, &self.chosen) {
            (Some(w), _) => w == v,
            (None, None) => {
                self.chosen = Some(v.to_string());
                true
            }
            (None, Some(c)) => {
                self.ambiguous |= c != v;
                c == v
            }
        };
        self.others += u64::from(!keep);
        keep
    }

    /// At the end: the volume asked for was there, or there was only one; a note when
    /// there were several.
    pub fn finish(&self, path: &str, notes: &mut Vec<String>) -> Result<(), TraceError> {
        let list = || {
            let mut l: Vec<String> = self
                .seen
                .iter()
                .take(20)
                .map(|v| crate::text::shortened(v))
                .collect();
            if self.seen.len() > 20 || self.more {
                l.push("…".into());
            }
            l.join(", ")
        };
        let count = || {
            if self.more {
                format!("more than {}", self.seen.len())
            } else {
                self.seen.len().to_string()
            }
        };
        if let Some(w) = &self.wanted {
            if !self.wanted_seen {
                let w = crate::text::shortened(w);
                return Err(TraceError::malformed(
                    None,
                    format!(
                        "--volume {w}: {path} has no record of volume {w}; its volumes: {}",
                        if self.seen.is_empty() {
                            "none".into()
                        } else {
                            list()
                        }
                    ),
                ));
            }
        }
        if self.ambiguous {
            return Err(TraceError::malformed(
                None,
                format!(
                    "{path} holds {} volumes ({}); choose one with --volume",
                    count(),
                    list()
                ),
            ));
        }
        if self.seen.len() > 1 || self.more {
            notes.push(format!(
                "kept volume {} of {} volumes; skipped {} records of the others",
                crate::text::shortened(self.wanted.as_deref().unwrap_or("")),
                count(),
                self.others
            ));
        } else if let Some(v) = self.wanted.as_ref().or(self.chosen.as_ref()) {
            notes.push(format!("volume {}", crate::text::shortened(v)));
        }
        Ok(())
    }
}

/// Each volume's span is its highest byte touched rounded up to this (and so starts on
/// a multiple of it).
pub(crate) const VOLUME_ALIGN_BYTES: u64 = 1 << 20;
/// The most volumes `--volume all` maps (each is a name in memory, twice).
pub(crate) const MAX_VOLUMES_MAPPED: usize = 100_000;
/// The longest volume name `--volume all` maps (so the names of the most volumes take a
/// few tens of MB, not a line's 64 KiB each).
pub(crate) const MAX_NAME_BYTES_MAPPED: usize = 256;

/// `--volume all`, first pass: the highest byte each volume touches.
#[derive(Default)]
pub(crate) struct VolumeSurvey {
    ends: HashMap<String, u64>,
}

impl VolumeSurvey {
    pub fn add(&mut self, v: &str, end_bytes: u64) -> Result<(), String> {
        if let Some(e) = self.ends.get_mut(v) {
            *e = (*e).max(end_bytes);
            return Ok(());
        }
        if v.len() > MAX_NAME_BYTES_MAPPED {
            return Err(format!(
                "--volume all: a volume name of {} bytes (at most {MAX_NAME_BYTES_MAPPED}): is the volume column right?",
                v.len()
            ));
        }
        if self.ends.len() >= MAX_VOLUMES_MAPPED {
            return Err(format!(
                "--volume all: more than {MAX_VOLUMES_MAPPED} volumes; choose one with --volume"
            ));
        }
        self.ends.insert(v.to_string(), end_bytes);
        Ok(())
    }

    /// The volumes laid out one after another in the order of their numbers (names
    /// that are not numbers after those, in text order), each on a 1 MiB boundary.
    pub fn layout(self) -> Result<VolumeMap, String> {
        let mut vols: Vec<(String, u64)> = self.ends.into_iter().collect();
        vols.sort_by(|a, b| volume_order(&a.0, &b.0));
        let mut spans = Vec::with_capacity(vols.len());
        let mut at = 0u64;
        for (volume, end) in vols {
            let extent = end
                .div_ceil(VOLUME_ALIGN_BYTES)
                .max(1)
                .checked_mul(VOLUME_ALIGN_BYTES);
            let next = extent.and_then(|e| at.checked_add(e));
            let (Some(extent_bytes), Some(next)) = (extent, next) else {
                return Err(
                    "--volume all: the volumes together span more than 2^64 bytes; choose one with --volume"
                        .into(),
                );
            };
            spans.push(VolumeSpan {
                volume,
                offset_bytes: at,
                extent_bytes,
            });
            at = next;
        }
        let offsets = spans
            .iter()
            .map(|s| (s.volume.clone(), s.offset_bytes))
            .collect();
        Ok(VolumeMap {
            spans,
            offsets,
            total_bytes: at,
        })
    }
}

/// Volume numbers in numeric order; other names after them, in text order.
fn volume_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// `--volume all`, second pass: where each volume lies in the one span.
pub(crate) struct VolumeMap {
    pub spans: Vec<VolumeSpan>,
    offsets: HashMap<String, u64>,
    pub total_bytes: u64,
}

impl VolumeMap {
    /// The offset of volume `v` (one the survey saw: the input changed if not).
    pub fn offset(&self, v: &str) -> Result<u64, String> {
        self.offsets.get(v).copied().ok_or_else(|| {
            format!("volume {} was not in the file's first reading (did the file change while it was imported?)", crate::text::shortened(v))
        })
    }

    pub fn note(&self) -> String {
        format!(
            "--volume all: {} volumes mapped into one span of {} bytes, each at a 1 MiB-aligned offset in the order of their numbers",
            self.spans.len(),
            self.total_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_volume_needs_no_choice() {
        let mut f = VolumeFilter::new(None);
        assert!(f.admit("3") && f.admit("3"));
        let mut notes = Vec::new();
        f.finish("x", &mut notes).unwrap();
        assert_eq!(notes, ["volume 3"]);
    }

    #[test]
    fn several_volumes_are_refused_with_their_list_unless_one_is_chosen() {
        let mut f = VolumeFilter::new(None);
        for v in ["1", "2", "1", "0"] {
            f.admit(v);
        }
        let e = f.finish("t.csv", &mut Vec::new()).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.csv holds 3 volumes (0, 1, 2); choose one with --volume"
        );

        let mut f = VolumeFilter::new(Some("2".into()));
        let kept: Vec<bool> = ["1", "2", "1"].iter().map(|v| f.admit(v)).collect();
        assert_eq!(kept, [false, true, false]);
        let mut notes = Vec::new();
        f.finish("t.csv", &mut notes).unwrap();
        assert_eq!(
            notes,
            ["kept volume 2 of 2 volumes; skipped 2 records of the others"]
        );
    }

    #[test]
    fn a_hundred_thousand_volumes_keep_a_bounded_list() {
        let mut f = VolumeFilter::new(Some("99999".into()));
        for i in 0..100_000 {
            f.admit(&format!("{i}"));
        }
        assert!(f.seen.len() <= MAX_LISTED);
        let mut notes = Vec::new();
        f.finish("t.csv", &mut notes).unwrap();
        assert_eq!(
            notes,
            ["kept volume 99999 of more than 1000 volumes; skipped 99999 records of the others"]
        );
        let mut f = VolumeFilter::new(None);
        f.admit(&"v".repeat(70_000));
        f.admit("w\nx");
        let e = f.finish("t.csv", &mut Vec::new()).unwrap_err().to_string();
        assert!(e.len() < 300 && !e.contains('\n'), "{e}");
    }

    #[test]
    fn a_volume_not_in_the_trace_is_refused() {
        let mut f = VolumeFilter::new(Some("9".into()));
        f.admit("1");
        let e = f.finish("t.csv", &mut Vec::new()).unwrap_err().to_string();
        assert!(
            e.contains("--volume 9") && e.ends_with("its volumes: 1"),
            "{e}"
        );
    }

    #[test]
    fn volumes_are_laid_out_in_number_order_on_mib_boundaries() {
        let mut s = VolumeSurvey::default();
        s.add("10", 1).unwrap();
        s.add("2", 3 << 20).unwrap();
        s.add("2", (1 << 20) + 1).unwrap();
        s.add("0", 5 << 20).unwrap();
        let m = s.layout().unwrap();
        let got: Vec<(&str, u64, u64)> = m
            .spans
            .iter()
            .map(|v| (v.volume.as_str(), v.offset_bytes, v.extent_bytes))
            .collect();
        assert_eq!(
            got,
            [
                ("0", 0, 5 << 20),
                ("2", 5 << 20, 3 << 20),
                ("10", 8 << 20, 1 << 20)
            ]
        );
        assert_eq!(m.total_bytes, 9 << 20);
        assert_eq!(m.offset("10"), Ok(8 << 20));
        assert!(m.offset("3").is_err());
    }

    #[test]
    fn too_many_or_too_long_volume_names_are_refused() {
        let mut s = VolumeSurvey::default();
        assert!(s
            .add(&"x".repeat(257), 1)
            .unwrap_err()
            .contains("257 bytes"));
        for i in 0..MAX_VOLUMES_MAPPED {
            s.add(&i.to_string(), 1).unwrap();
        }
        s.add("0", 2).unwrap();
        assert!(s
            .add("new", 1)
            .unwrap_err()
            .contains("more than 100000 volumes"));
    }

    #[test]
    fn volumes_spanning_past_2_64_are_refused() {
        let mut s = VolumeSurvey::default();
        s.add("0", u64::MAX - 5).unwrap();
        s.add("1", u64::MAX - 5).unwrap();
        assert!(s.layout().err().unwrap().contains("more than 2^64"));
    }
}
