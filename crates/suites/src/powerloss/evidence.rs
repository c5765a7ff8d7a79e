//! Did the power go between the write phase and the check? A check after a cut that
//! never happened (the write phase stopped by Ctrl-C or an error, then `--check` at once)
//! finds every flushed block and would call the drive honest on a test that cut nothing.
//! Before each cycle's rounds the journal records what can show a cut later (a `cycle`
//! record: [`PowerState`] and the drive's [`DriveId`]); the check reads them again and
//! [`decide`]s:
//!
//! - the drive's power-cycle count rose: the drive lost its power ([`CutEvidence::PowerCyclesRose`]);
//! - the count is unchanged: the drive kept its power, whatever the host did (a restart
//!   that kept the drive powered flushed its cache and tests nothing): [`CutEvidence::NoCut`];
//! - no count on both sides (a loop device, a file, no SMART readable): the host's boot
//!   id decides if it changed ([`CutEvidence::BootChanged`]: the host lost its power or
//!   restarted); the same boot is [`CutEvidence::Unknown`];
//! - a simulated drive's own cut is [`CutEvidence::SimulatedCut`].

use serde::{Deserialize, Serialize};

use drivelab_engine::target::{Target, TargetInfo, TargetKind};

/// Where the host's boot id is (a new random id every boot).
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// What can show later that the power was cut: recorded before a cycle's rounds, read
/// again at its check. Every field is null when unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerState {
    /// The host's boot id.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The drive's count of its power cycles (SMART attribute 12, NVMe's power cycles).
    #[serde(default)]
    pub power_cycles: Option<u64>,
    /// The drive's power-on hours (shown beside the count, not decided on).
    #[serde(default)]
    pub power_on_hours: Option<u64>,
    /// Where the counts were read ("nvme-smart:nvme0", "smartctl:sda").
    #[serde(default)]
    pub counts_source: Option<String>,
}

impl PowerState {
    /// The state now: the host's boot id and, for a block device, its drive's counts.
    pub fn now(target: &Target) -> PowerState {
        let boot_id = std::fs::read_to_string(BOOT_ID)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let counts = match (&target.info.kind, &target.info.device) {
            (TargetKind::BlockDevice, Some(id)) => drivelab_engine::sensor::power_counts::read(
                std::path::Path::new("/sys"),
                std::path::Path::new("/dev"),
                id,
            ),
            _ => None,
        };
        PowerState {
            boot_id,
            power_cycles: counts.as_ref().map(|c| c.power_cycles),
            power_on_hours: counts.as_ref().and_then(|c| c.power_on_hours),
            counts_source: counts.map(|c| c.source),
        }
    }
}

/// Which drive a block device is: a check on another one is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveId {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub serial: Option<String>,
    #[serde(default)]
    pub capacity_bytes: Option<u64>,
}

impl DriveId {
    /// A block device's identity; None for a file or a simulated drive.
    pub fn of(info: &TargetInfo) -> Option<DriveId> {
        (info.kind == TargetKind::BlockDevice).then(|| DriveId {
            model: info.model.clone(),
            serial: info.serial.clone(),
            capacity_bytes: info.capacity_bytes,
        })
    }

    /// How `now` is not this drive: a model, serial or capacity this one has that
    /// `now` lacks or has otherwise; None when it may be the same drive.
    pub fn mismatch(&self, now: &DriveId) -> Option<String> {
        let show = |v: &Option<String>| v.as_deref().unwrap_or("none").to_string();
        let field = |name: &str, was: &Option<String>, is: &Option<String>| {
            (was.is_some() && was != is).then(|| format!("{name} {} (now {})", show(was), show(is)))
        };
        field("model", &self.model, &now.model)
            .or_else(|| field("serial", &self.serial, &now.serial))
            .or_else(|| {
                let (was, is) = (self.capacity_bytes?, now.capacity_bytes?);
                (was != is).then(|| format!("{was} bytes (now {is})"))
            })
    }
}

/// What shows that the power was cut between a cycle's write phase and its check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutEvidence {
    /// The drive's power-cycle count rose: it lost its power.
    PowerCyclesRose,
    /// The host's boot id changed (it lost its power or restarted); the drive's count
    /// is not known.
    BootChanged,
    /// A simulated drive's model cut its power.
    SimulatedCut,
    /// No cut: the drive's count is unchanged (or the simulated cut never came). The
    /// cycle tested nothing: its verdict is inconclusive.
    #[serde(rename = "none")]
    NoCut,
    /// Neither shows it (the same boot and no count, or a journal from before drivelab
    /// recorded them): the verdict stands, said unconfirmed.
    #[default]
    Unknown,
}

impl CutEvidence {
    /// Whether a cut is shown.
    pub fn evidenced(self) -> bool {
        matches!(
            self,
            CutEvidence::PowerCyclesRose | CutEvidence::BootChanged | CutEvidence::SimulatedCut
        )
    }

    /// How strongly it shows a cut, for the weakest of several cycles: none, unknown,
    /// the host's restart, the drive's own count or the model.
    fn strength(self) -> u8 {
        match self {
            CutEvidence::NoCut => 0,
            CutEvidence::Unknown => 1,
            CutEvidence::BootChanged => 2,
            CutEvidence::PowerCyclesRose | CutEvidence::SimulatedCut => 3,
        }
    }

    /// The weakest of `all` (Unknown when there is none).
    pub fn weakest(all: impl IntoIterator<Item = CutEvidence>) -> CutEvidence {
        all.into_iter()
            .min_by_key(|e| e.strength())
            .unwrap_or_default()
    }

    /// In words, for the report.
    pub fn words(self) -> &'static str {
        match self {
            CutEvidence::PowerCyclesRose => "the drive's power-cycle count rose",
            CutEvidence::BootChanged => "the host's boot id changed",
            CutEvidence::SimulatedCut => "the simulated drive's power was cut",
            CutEvidence::NoCut => "no power cut",
            CutEvidence::Unknown => "could not be confirmed",
        }
    }
}

/// The evidence of one cycle, with the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub evidence: CutEvidence,
    pub note: String,
}

/// What `before` (recorded before the write phase; None: the journal has none) and
/// `now` (at the check) show of a cut.
pub fn decide(before: Option<&PowerState>, now: &PowerState) -> Evidence {
    let e = |evidence, note: String| Evidence { evidence, note };
    let Some(b) = before else {
        return e(
            CutEvidence::Unknown,
            "the journal records no power state (written by an older drivelab)".into(),
        );
    };
    let boot_changed = match (&b.boot_id, &now.boot_id) {
        (Some(x), Some(y)) => Some(x != y),
        _ => None,
    };
    let cycles = b.power_cycles.zip(now.power_cycles);
    match (cycles, boot_changed) {
        (Some((x, y)), _) if y > x => e(
            CutEvidence::PowerCyclesRose,
            format!("the drive's power-cycle count rose from {x} to {y}"),
        ),
        (Some((x, y)), _) if y < x => e(
            CutEvidence::Unknown,
            format!("the drive's power-cycle count fell from {x} to {y} (a counter reset?)"),
        ),
        (Some((x, _)), Some(true)) => e(
            CutEvidence::NoCut,
            format!("no power cut of the drive: the host restarted (its boot id changed) but the drive's power cycles are unchanged at {x}: it kept its power, and the test cut nothing"),
        ),
        (Some((x, _)), Some(false)) => e(
            CutEvidence::NoCut,
            format!("no power cut: same boot, power cycles unchanged at {x}"),
        ),
        (Some((x, _)), None) => e(
            CutEvidence::NoCut,
            format!("no power cut: the drive's power cycles are unchanged at {x}"),
        ),
        (None, Some(true)) => e(
            CutEvidence::BootChanged,
            "the host's boot id changed (it lost its power or restarted); the drive's power-cycle count is not known".into(),
        ),
        (None, Some(false)) => e(
            CutEvidence::Unknown,
            "same boot, and no power-cycle count for this device (a loop device or a file has none; a drive's needs SMART: root, smartctl)".into(),
        ),
        (None, None) => e(
            CutEvidence::Unknown,
            "neither the host's boot id nor the drive's power-cycle count is known at both ends".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(boot: Option<&str>, cycles: Option<u64>) -> PowerState {
        PowerState {
            boot_id: boot.map(str::to_string),
            power_cycles: cycles,
            power_on_hours: cycles.map(|c| c * 10),
            counts_source: cycles.map(|_| "smartctl:sda".into()),
        }
    }

    #[test]
    fn every_case_of_the_decision() {
        use CutEvidence::*;
        let (a, b) = (Some("aaaa"), Some("bbbb"));
        let cases: [(Option<PowerState>, PowerState, CutEvidence, &str); 11] = [
            (None, state(a, Some(5)), Unknown, "older drivelab"),
            (
                Some(state(a, Some(5))),
                state(a, Some(6)),
                PowerCyclesRose,
                "rose from 5 to 6",
            ),
            (
                Some(state(a, Some(5))),
                state(b, Some(6)),
                PowerCyclesRose,
                "rose from 5 to 6",
            ),
            (
                Some(state(None, Some(5))),
                state(None, Some(7)),
                PowerCyclesRose,
                "to 7",
            ),
            (
                Some(state(a, Some(5))),
                state(a, Some(4)),
                Unknown,
                "fell from 5 to 4",
            ),
            (
                Some(state(a, Some(5))),
                state(a, Some(5)),
                NoCut,
                "no power cut: same boot, power cycles unchanged at 5",
            ),
            (
                Some(state(a, Some(5))),
                state(b, Some(5)),
                NoCut,
                "host restarted",
            ),
            (
                Some(state(None, Some(5))),
                state(a, Some(5)),
                NoCut,
                "unchanged at 5",
            ),
            (
                Some(state(a, None)),
                state(b, None),
                BootChanged,
                "boot id changed",
            ),
            (
                Some(state(a, None)),
                state(a, Some(5)),
                Unknown,
                "same boot",
            ),
            (Some(state(None, None)), state(a, None), Unknown, "neither"),
        ];
        for (before, now, want, says) in cases {
            let got = decide(before.as_ref(), &now);
            assert_eq!(got.evidence, want, "{before:?} {now:?}: {}", got.note);
            assert!(got.note.contains(says), "{}", got.note);
            assert_eq!(
                got.evidence.evidenced(),
                matches!(want, PowerCyclesRose | BootChanged)
            );
        }
    }

    #[test]
    fn a_journal_without_the_fields_reads_as_unknown() {
        let s: PowerState = serde_json::from_str("{}").unwrap();
        assert_eq!(s, PowerState::default());
        assert_eq!(
            decide(Some(&s), &state(Some("a"), Some(1))).evidence,
            CutEvidence::Unknown
        );
        let e: CutEvidence = serde_json::from_str("\"power_cycles_rose\"").unwrap();
        assert_eq!(e, CutEvidence::PowerCyclesRose);
    }

    #[test]
    fn another_drive_is_told_by_model_serial_or_capacity() {
        let d = |m: Option<&str>, s: Option<&str>, c: Option<u64>| DriveId {
            model: m.map(str::to_string),
            serial: s.map(str::to_string),
            capacity_bytes: c,
        };
        let was = d(Some("X1"), Some("S1"), Some(1 << 30));
        assert_eq!(was.mismatch(&was), None);
        let m = was
            .mismatch(&d(Some("X1"), Some("S2"), Some(1 << 30)))
            .unwrap();
        assert!(m.contains("serial S1 (now S2)"), "{m}");
        let m = was
            .mismatch(&d(Some("X2"), Some("S1"), Some(1 << 30)))
            .unwrap();
        assert!(m.contains("model X1 (now X2)"), "{m}");
        assert!(was
            .mismatch(&d(Some("X1"), None, Some(1 << 30)))
            .unwrap()
            .contains("now none"));
        assert!(was
            .mismatch(&d(Some("X1"), Some("S1"), Some(2 << 30)))
            .is_some());
        // What the journal did not know cannot differ.
        assert_eq!(d(None, None, None).mismatch(&was), None);
    }

    #[test]
    fn the_weakest_evidence_of_several_cycles() {
        use CutEvidence::*;
        assert_eq!(
            CutEvidence::weakest([PowerCyclesRose, BootChanged]),
            BootChanged
        );
        assert_eq!(
            CutEvidence::weakest([PowerCyclesRose, Unknown, NoCut]),
            NoCut
        );
        assert_eq!(CutEvidence::weakest([]), Unknown);
    }
}
