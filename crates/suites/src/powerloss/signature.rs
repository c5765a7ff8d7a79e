//! Was the target formatted since the write phase? A filesystem, swap space or partition
//! table made on it after the run (mkfs.xfs, mkswap, mkfs.vfat, btrfs, fdisk…) rewrote
//! the run's blocks: a check would count them lost and blame the drive.
//!
//! Before each cycle's rounds the journal records what the target's start holds, as
//! util-linux's `blkid -p` (its low-level probe: every superblock, swap and partition
//! table signature it knows, read from the device, no cache) sees it; the check probes
//! again. A signature there now that was not there before the run is newer than the
//! run (a drive that lost writes shows older content, never a format the run never saw),
//! so the cycle is inconclusive, naming what was found. The same signature (its kind
//! and UUID) as before the run says nothing: the drive may have lost the run's writes
//! over it. blkid rather than a crate: the crates that read these signatures bind
//! libblkid itself (bindgen, its headers); blkid's own probe knows every kind and is in
//! util-linux, beside losetup and mount.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// One signature found at a target's start: a filesystem, swap space, a partition
/// table or another kind blkid knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// blkid's name of its kind: "xfs", "swap", "vfat", "ext4", "gpt"…
    pub kind: String,
    /// What it is for, as blkid says ("filesystem", "other" for swap, "raid",
    /// "crypto"); "partition_table" for a partition table.
    #[serde(default)]
    pub usage: Option<String>,
    /// Its UUID (a partition table's id), new at each format; null when it has none.
    #[serde(default)]
    pub uuid: Option<String>,
}

impl Signature {
    /// "swap space (UUID 1234…)", "a filesystem of type xfs (UUID …)", "a partition
    /// table of type gpt".
    pub fn describe(&self) -> String {
        let what = match (self.kind.as_str(), self.usage.as_deref()) {
            ("swap", _) => "swap space".to_string(),
            (k, Some("partition_table")) => format!("a partition table of type {k}"),
            (k, Some("filesystem")) => format!("a filesystem of type {k}"),
            (k, Some(u)) => format!("a signature of type {k} ({u})"),
            (k, None) => format!("a signature of type {k}"),
        };
        match &self.uuid {
            Some(u) => format!("{what} (UUID {u})"),
            None => what,
        }
    }
}

/// What a probe of the target's start found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    /// No signature blkid knows.
    Nothing,
    Found(Signature),
    /// More than one signature (blkid's "ambivalent result": a format over another
    /// that left the old one's magic).
    Several,
    /// Not probed: why (blkid missing, or it failed).
    Unknown(String),
}

impl Probe {
    /// Probe `path` (a block device or a file) with `blkid -p`.
    pub fn of(path: &Path) -> Probe {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let out = Command::new("blkid")
            .args(["-p", "-o", "export"])
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .output();
        match out {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Probe::Unknown("blkid (util-linux) is not installed".into())
            }
            Err(e) => Probe::Unknown(format!("blkid: {e}")),
            Ok(o) => match o.status.code() {
                Some(0) => parse_export(&String::from_utf8_lossy(&o.stdout)),
                Some(2) => Probe::Nothing,
                Some(8) => Probe::Several,
                _ => Probe::Unknown(format!(
                    "blkid -p exited with {}: {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
            },
        }
    }

    /// What this probe, taken at the check, shows was written since the probe `before`
    /// (taken before the run's rounds; None: an older drivelab's journal): None when
    /// nothing new is known.
    pub fn new_since(&self, before: Option<&Probe>) -> Option<String> {
        let before = before?;
        if matches!(before, Probe::Unknown(_)) || before == self {
            return None;
        }
        match self {
            Probe::Nothing | Probe::Unknown(_) => None,
            Probe::Found(s) => Some(s.describe()),
            Probe::Several => Some("more than one filesystem or other signature".into()),
        }
    }
}

/// The signature in `blkid -p -o export`'s KEY=value lines: a filesystem's (TYPE) or
/// else a partition table's (PTTYPE); Nothing when neither is there.
fn parse_export(text: &str) -> Probe {
    let get = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(kind) = get("TYPE") {
        return Probe::Found(Signature {
            kind,
            usage: get("USAGE"),
            uuid: get("UUID"),
        });
    }
    match get("PTTYPE") {
        Some(kind) => Probe::Found(Signature {
            kind,
            usage: Some("partition_table".into()),
            uuid: get("PTUUID"),
        }),
        None => Probe::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// blkid 2.38's own output for swap, xfs, vfat and a GPT.
    #[test]
    fn blkid_export_lines_give_the_signature() {
        let swap = "DEVNAME=/dev/loop3\nUUID=a33af4c0-e55f-4787-99f6-d7d24bb2f84a\nVERSION=1\nTYPE=swap\nUSAGE=other\n";
        let p = parse_export(swap);
        assert_eq!(
            p,
            Probe::Found(Signature {
                kind: "swap".into(),
                usage: Some("other".into()),
                uuid: Some("a33af4c0-e55f-4787-99f6-d7d24bb2f84a".into()),
            })
        );
        let Probe::Found(s) = &p else { unreachable!() };
        assert_eq!(
            s.describe(),
            "swap space (UUID a33af4c0-e55f-4787-99f6-d7d24bb2f84a)"
        );
        let vfat = "DEVNAME=/dev/loop3\nSEC_TYPE=msdos\nUUID=6501-41E4\nVERSION=FAT16\nBLOCK_SIZE=512\nTYPE=vfat\nUSAGE=filesystem\n";
        let Probe::Found(s) = parse_export(vfat) else {
            panic!()
        };
        assert_eq!(s.describe(), "a filesystem of type vfat (UUID 6501-41E4)");
        let gpt = "DEVNAME=/dev/loop3\nPTUUID=52e2684b-fb77-ed47-b776-1bb587a86643\nPTTYPE=gpt\n";
        let Probe::Found(s) = parse_export(gpt) else {
            panic!()
        };
        assert_eq!(
            s.describe(),
            "a partition table of type gpt (UUID 52e2684b-fb77-ed47-b776-1bb587a86643)"
        );
        assert_eq!(parse_export("DEVNAME=/dev/loop3\n"), Probe::Nothing);
    }

    /// Only a signature not there before the run is news; an older journal (no probe)
    /// or an unknown probe says nothing.
    #[test]
    fn only_a_signature_new_since_the_run_counts() {
        let sig = |uuid: &str| {
            Probe::Found(Signature {
                kind: "xfs".into(),
                usage: Some("filesystem".into()),
                uuid: Some(uuid.into()),
            })
        };
        let unknown = Probe::Unknown("blkid (util-linux) is not installed".into());
        assert_eq!(
            sig("a").new_since(Some(&Probe::Nothing)).as_deref(),
            Some("a filesystem of type xfs (UUID a)")
        );
        assert!(sig("b").new_since(Some(&sig("a"))).is_some());
        assert_eq!(sig("a").new_since(Some(&sig("a"))), None);
        assert_eq!(sig("a").new_since(None), None);
        assert_eq!(sig("a").new_since(Some(&unknown)), None);
        assert_eq!(Probe::Nothing.new_since(Some(&sig("a"))), None);
        assert!(Probe::Several.new_since(Some(&Probe::Nothing)).is_some());
    }
}
