//! Choosing one volume of a multi-volume trace (MSR DiskNumber, Tencent and Alibaba
//! volume ids, fio file names, blktrace devices).

use crate::TraceError;
use std::collections::BTreeSet;

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
}
