//! The result bundle: a directory holding `run.json` (every step with its config, totals,
//! series and histograms, plus the suite's summary) and, once the suite is done,
//! `summary.txt` (the table it printed). Layout: `docs/bundle.md`.
//!
//! `run.json` is rewritten after every step through a temporary file and a rename, so a
//! kill at any moment leaves either the previous or the new document, never a torn one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use drivelab_analysis::telemetry::StepTelemetry;
use drivelab_engine::hist::HistogramJson;
use drivelab_engine::model::SensorReading;
use drivelab_engine::result::{HostInfo, Measured, RunStatus, Tool};
use drivelab_engine::spec::Workload;
use drivelab_engine::target::TargetInfo;

use crate::kind::SuiteKind;
use crate::plan::{PlannedStep, StepKind};

/// Version of the bundle layout; bumped on any change of its shape. 2: each step's
/// `telemetry`, `idle_before_ns` and `idle_sensors`, and the result schema 2 inside. 3:
/// the result schema 3 inside (a verifying step's read-back pass in its series and read
/// totals, `verify.pass_ns`, `verify.pass_first_index`) and seqfill's `verify` knob;
/// bundles of 2 read the same.
pub const BUNDLE_SCHEMA_VERSION: u32 = 3;
/// The oldest bundle layout still read (its steps' telemetry is worked out from their
/// series when needed); a resumed one is saved as the current layout.
pub const OLDEST_READABLE_BUNDLE_SCHEMA: u32 = 1;

/// Whether a bundle of layout `v` can be read.
pub fn readable_schema(v: u32) -> bool {
    (OLDEST_READABLE_BUNDLE_SCHEMA..=BUNDLE_SCHEMA_VERSION).contains(&v)
}
/// The bundle's main document.
pub const RUN_JSON: &str = "run.json";
/// The printed summary table, written when the suite finishes.
pub const SUMMARY_TXT: &str = "summary.txt";

/// State of a whole suite run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BundleStatus {
    /// Steps are still being run (or the process was killed: resume it).
    Running,
    Complete,
    /// Stopped by the user; resume it to continue.
    Interrupted,
    /// A step failed.
    Failed,
    /// Every step ran, but not on every host: a fleet view whose hosts dropped out
    /// (each of its steps adds up the hosts that finished it; `fleet.json` says which).
    Partial,
}

/// State of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Complete,
    Interrupted,
    Failed,
    /// Not run, by the suite's rule (early stop of a sweep, steady state reached).
    Skipped,
}

impl StepStatus {
    /// Finished steps are never run again by `--resume`.
    pub fn finished(self) -> bool {
        matches!(self, StepStatus::Complete | StepStatus::Skipped)
    }
}

impl From<RunStatus> for StepStatus {
    fn from(s: RunStatus) -> StepStatus {
        match s {
            RunStatus::Complete => StepStatus::Complete,
            RunStatus::Interrupted => StepStatus::Interrupted,
            RunStatus::Failed => StepStatus::Failed,
        }
    }
}

/// One headline number: `{"name":"SEQ1M Q8T1 read","value":3500.1,"unit":"MB/s"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

impl Metric {
    /// A metric, or None when the value is not finite (nothing measured).
    pub fn new(name: impl Into<String>, value: Option<f64>, unit: &str) -> Option<Metric> {
        value.filter(|v| v.is_finite()).map(|value| Metric {
            name: name.into(),
            value,
            unit: unit.into(),
        })
    }
}

/// A suite's analysis results and its headline metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The suite's own analysis (its shape depends on the suite; see docs/bundle.md).
    pub analysis: serde_json::Value,
    /// Flat list of headline numbers.
    pub metrics: Vec<Metric>,
}

impl Summary {
    /// The analysis read as its suite's type (`quick::Analysis`, `peak::Analysis`, …);
    /// None when it is not of that shape.
    pub fn analysis_as<A: serde::de::DeserializeOwned>(&self) -> Option<A> {
        A::deserialize(&self.analysis).ok()
    }
}

/// One step as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Position in the plan (0-based).
    pub index: usize,
    pub id: String,
    pub name: String,
    pub kind: StepKind,
    pub params: serde_json::Value,
    pub status: StepStatus,
    /// Why a skipped step was skipped.
    pub skip_reason: Option<String>,
    /// Wall-clock start and end of the step (RFC 3339 UTC, milliseconds), idle included.
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The resolved workload the step ran (or would have run, when skipped).
    pub config: Workload,
    /// Sensor values before and after the step (empty when the target has none).
    pub sensors_start: Vec<SensorReading>,
    pub sensors_end: Vec<SensorReading>,
    /// How long the target idled before the step (the suite's idle between tests).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_before_ns: u64,
    /// Sensor values read once a second during that idle (`at_ns`: since the idle
    /// began), so idle power and cooling show between workloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_sensors: Vec<SensorReading>,
    /// What the engine measured; None for skipped steps.
    pub run: Option<StepRun>,
    /// Temperature, throttling, power, energy and efficiency over the step, from the
    /// readings in its series (None for a step that did not run; absent in bundles made
    /// before drivelab read them).
    #[serde(default)]
    pub telemetry: Option<StepTelemetry>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The engine's result of one step: what it measured, without the per-run identity,
/// which the bundle holds once.
pub type StepRun = Measured;

impl StepRecord {
    /// The record of planned step `i` with `status` and nothing else yet: no times, no
    /// sensors, no idle, no run (each caller sets what it has, the rest from this).
    pub fn of_planned(i: usize, step: &PlannedStep, status: StepStatus) -> StepRecord {
        StepRecord {
            index: i,
            id: step.id.clone(),
            name: step.name.clone(),
            kind: step.kind,
            params: step.params.clone(),
            status,
            skip_reason: None,
            started_at: None,
            finished_at: None,
            config: step.workload.clone(),
            sensors_start: Vec::new(),
            sensors_end: Vec::new(),
            idle_before_ns: 0,
            idle_sensors: Vec::new(),
            run: None,
            telemetry: None,
        }
    }

    /// The read and write histograms, if the step ran.
    pub fn histograms(&self) -> Option<(&HistogramJson, &HistogramJson)> {
        self.run
            .as_ref()
            .map(|r| (&r.histogram.read, &r.histogram.write))
    }
}

/// The bundle's `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDoc {
    pub schema_version: u32,
    pub tool: Tool,
    pub suite: SuiteKind,
    /// The suite's resolved knobs (defaults, `--short` and flags applied).
    pub knobs: serde_json::Value,
    pub host: HostInfo,
    /// The target as the user named it (for `--resume`).
    pub target_arg: Option<String>,
    pub target: TargetInfo,
    /// The default test file was created by this suite run (removed at its end unless kept).
    pub test_file_created: bool,
    /// sha256 (hex) of the canonical JSON of the suite, its knobs and every planned step's
    /// workload without seeds: equal hashes mean comparable runs.
    pub config_hash: String,
    pub status: BundleStatus,
    pub created_at: String,
    pub updated_at: String,
    /// How many steps the plan has.
    pub planned_steps: usize,
    /// Finished (and the latest unfinished) steps, in plan order.
    pub steps: Vec<StepRecord>,
    /// Set once every step is finished.
    pub summary: Option<Summary>,
    /// Plain-language caveats.
    pub notes: Vec<String>,
    /// A bundle of a fleet run (`--host`, `--hosts`: each host's and the fleet view),
    /// which cannot be resumed. Absent (false) in every other bundle.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fleet: bool,
}

/// Wall-clock now, RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// A bundle directory and its document.
pub struct Bundle {
    pub dir: PathBuf,
    pub doc: RunDoc,
    /// The directory, opened once: its files are written through it, so a link or a
    /// directory put in its place during the run is never followed.
    handle: crate::atomic::Dir,
}

impl Bundle {
    /// Create the directory (and parents) and write the initial `run.json`. Only a new
    /// or empty directory is taken ([`check_new_dir`]).
    /// The directory is checked first ([`check_new_dir`], a usage error the caller
    /// finds out before); what fails after it (a full disk) leaves no directory made.
    pub fn create(dir: &Path, doc: RunDoc) -> Result<Bundle, String> {
        check_new_dir(dir)?;
        let made = !dir.exists();
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create the directory: {e}", dir.display()))?;
        let saved = open_dir(dir).and_then(|handle| {
            let b = Bundle {
                dir: dir.to_path_buf(),
                doc,
                handle,
            };
            b.save().map(|()| b)
        });
        if saved.is_err() && made {
            // Empty: the document was never linked in.
            let _ = std::fs::remove_dir(dir);
        }
        saved
    }

    /// Take the bundle for this process: held while the returned file is open, refused
    /// while another process runs (or resumes) the same bundle.
    pub fn lock(dir: &Path) -> Result<std::fs::File, String> {
        let p = dir.join(".lock");
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            // A link planted at the name is not followed to make or open a file elsewhere.
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&p)
            .map_err(|e| format!("{}: cannot open {}: {e}", dir.display(), p.display()))?;
        match f.try_lock() {
            Ok(()) => Ok(f),
            Err(std::fs::TryLockError::WouldBlock) => Err(format!(
                "{}: another drivelab process is running this bundle; wait for it, or stop it and --resume",
                dir.display()
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(format!(
                "{}: cannot lock {}: {e}",
                dir.display(),
                p.display()
            )),
        }
    }

    /// Open an existing bundle for `--resume`.
    pub fn open(dir: &Path) -> Result<Bundle, String> {
        let mut doc = open_bundle(dir).map_err(|e| format!("--resume {e}"))?;
        // Saved from now on in the current layout (which only adds fields).
        doc.schema_version = BUNDLE_SCHEMA_VERSION;
        Ok(Bundle {
            dir: dir.to_path_buf(),
            doc,
            handle: open_dir(dir)?,
        })
    }

    /// Write `run.json` atomically (temporary file, fsync, rename).
    pub fn save(&self) -> Result<(), String> {
        let path = self.dir.join(RUN_JSON);
        let mut text = serde_json::to_vec(&self.doc).map_err(|e| e.to_string())?;
        text.push(b'\n');
        crate::atomic::write_in(&self.handle, RUN_JSON, &text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Store a step record (replacing an earlier unfinished one of the same index) and save.
    pub fn put_step(&mut self, rec: StepRecord) -> Result<(), String> {
        self.doc.steps.retain(|s| s.index != rec.index);
        let at = self
            .doc
            .steps
            .iter()
            .position(|s| s.index > rec.index)
            .unwrap_or(self.doc.steps.len());
        self.doc.steps.insert(at, rec);
        self.doc.updated_at = now_rfc3339();
        self.save()
    }

    /// How many steps of the plan are saved as finished.
    pub fn finished_steps(&self) -> usize {
        self.doc
            .steps
            .iter()
            .filter(|s| s.status.finished())
            .count()
    }

    /// The saved record of the plan step `index`, if any.
    pub fn step(&self, index: usize) -> Option<&StepRecord> {
        self.doc.steps.iter().find(|s| s.index == index)
    }

    /// Set the status and save.
    pub fn set_status(&mut self, status: BundleStatus) -> Result<(), String> {
        self.doc.status = status;
        self.doc.updated_at = now_rfc3339();
        self.save()
    }

    /// Write the summary table next to `run.json`.
    pub fn write_table(&self, table: &str) -> Result<(), String> {
        let p = self.dir.join(SUMMARY_TXT);
        crate::atomic::write_in(&self.handle, SUMMARY_TXT, table.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", p.display()))
    }
}

fn open_dir(dir: &Path) -> Result<crate::atomic::Dir, String> {
    crate::atomic::Dir::open(dir)
        .map_err(|e| format!("{}: cannot open the directory: {e}", dir.display()))
}

/// The largest `run.json` read (a FIFO or a link to /dev/zero at its place is refused,
/// not read until memory runs out).
pub const MAX_RUN_JSON_BYTES: u64 = 1 << 30;

/// Reads `<dir>/run.json` (report, compare, the results database and `--resume`); the
/// message names the directory and what is wrong with it.
pub fn open_bundle(dir: &Path) -> Result<RunDoc, String> {
    let path = dir.join(RUN_JSON);
    let text = drivelab_trace::input::read_text(&path, MAX_RUN_JSON_BYTES).map_err(|e| {
        format!(
            "{}: not a result bundle directory (cannot read {RUN_JSON}: {e})",
            dir.display()
        )
    })?;
    parse_run_doc(&text).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The text of a bundle's `run.json` as a document of a readable schema; the message
/// says what is wrong with it (without the directory, which [`open_bundle`] adds).
pub fn parse_run_doc(text: &str) -> Result<RunDoc, String> {
    let mut doc: RunDoc = serde_json::from_str(text)
        .map_err(|e| format!("{RUN_JSON} is not a drivelab result bundle: {e}"))?;
    if !readable_schema(doc.schema_version) {
        return Err(format!(
            "bundle schema {} is not one of the supported {OLDEST_READABLE_BUNDLE_SCHEMA} to {BUNDLE_SCHEMA_VERSION}",
            doc.schema_version
        ));
    }
    doc.fleet |= made_before_the_fleet_field(&doc);
    Ok(doc)
}

/// The note in every bundle of a fleet run, telling its reader why it cannot be resumed.
pub const FLEET_NOTE: &str = "A fleet run (--host, --hosts) cannot be resumed: run it again.";

/// Whether `doc` is a fleet run's bundle made before bundles said so in their `fleet`
/// field: read once, when the bundle is read ([`parse_run_doc`]), from
/// the marks those bundles carry (the fleet note and target, the hosts' note).
fn made_before_the_fleet_field(doc: &RunDoc) -> bool {
    doc.notes.iter().any(|n| n == FLEET_NOTE)
        || doc
            .target_arg
            .as_deref()
            .is_some_and(|a| a.starts_with("fleet:"))
        || doc
            .notes
            .iter()
            .any(|n| n.contains("through fio --client;"))
}

/// The default name of a bundle's drive: its model and path, e.g.
/// `drivelab-sim nvme-tlc (sim:nvme-tlc,capacity=4G)`, or the path alone.
pub fn drive_label(doc: &RunDoc) -> String {
    let t = &doc.target;
    let model = t
        .model
        .clone()
        .or_else(|| t.simulated.as_ref().map(|m| m.model.clone()))
        .filter(|m| !m.trim().is_empty());
    let path = doc
        .target_arg
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| t.path.clone());
    match model {
        Some(m) if !path.is_empty() => format!("{} ({path})", m.trim()),
        Some(m) => m.trim().to_string(),
        None => path,
    }
}

/// How a bundle's drive was connected ("USB 3.2 Gen 2, UAS"), if its identity says.
pub fn connection(doc: &RunDoc) -> Option<String> {
    doc.target.device.as_ref()?.connection()
}

/// The drive itself (model and serial), when both are known.
pub fn drive_key(doc: &RunDoc) -> Option<(String, String)> {
    let t = &doc.target;
    Some((
        t.model.clone()?.trim().to_string(),
        t.serial.clone()?.trim().to_string(),
    ))
}

/// A bundle goes only into a new or an empty directory: never among a user's files (a
/// `summary.txt` there would be replaced) nor into another bundle.
pub fn check_new_dir(dir: &Path) -> Result<(), String> {
    if dir.as_os_str() == "-" {
        return Err(
            "--out -: a bundle is a directory, not standard output; give a new or empty directory"
                .into(),
        );
    }
    if dir.join(RUN_JSON).exists() {
        return Err(format!(
            "--out {}: already holds a result bundle; choose a new directory or --resume it",
            dir.display()
        ));
    }
    if let Some(b) = bundle_around(dir) {
        return Err(format!(
            "--out {}: is inside the result bundle {}, drivelab's record of a run; give a directory outside it",
            dir.display(),
            b.display()
        ));
    }
    match std::fs::symlink_metadata(dir) {
        Err(_) => Ok(()),
        Ok(m) if !m.is_dir() => Err(format!(
            "--out {}: exists and is not a directory; give a new or empty directory",
            dir.display()
        )),
        Ok(_) => {
            let entries = std::fs::read_dir(dir)
                .map_err(|e| format!("--out {}: cannot read the directory: {e}", dir.display()))?;
            match entries.count() {
                0 => Ok(()),
                n => Err(format!(
                    "--out {}: is not empty ({n} entries); a bundle takes a new or empty directory",
                    dir.display()
                )),
            }
        }
    }
}

/// The result bundle whose directory holds `dir` (at any depth), if one does: its
/// `run.json` names drivelab.
fn bundle_around(dir: &Path) -> Option<PathBuf> {
    let is_bundle = |a: &Path| {
        let doc = std::fs::read(a.join(RUN_JSON)).ok()?;
        let head = &doc[..doc.len().min(4096)];
        let mark = b"\"name\":\"drivelab\"";
        head.windows(mark.len())
            .any(|w| w == mark)
            .then(|| a.to_path_buf())
    };
    // As given (shown so), then where the path really is (a relative one's directory
    // may itself be inside a bundle, or a link may lead into one).
    let given = dir
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty());
    let existing = dir
        .ancestors()
        .skip(1)
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find_map(|a| std::fs::canonicalize(a).ok());
    let real = existing
        .map(|r| r.ancestors().map(Path::to_path_buf).collect::<Vec<_>>())
        .unwrap_or_default();
    given
        .map(Path::to_path_buf)
        .chain(real)
        .find_map(|a| is_bundle(&a))
}

/// A new default bundle directory: `<base>/<suite>-<UTC timestamp>` (a `-2`, `-3`, …
/// suffix when that exists already).
pub fn default_dir(base: &Path, suite: &str) -> PathBuf {
    let ts = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace(['-', ':'], "");
    let first = base.join(format!("{suite}-{ts}"));
    // Claimed by making it, so that two runs started in the same second do not both
    // pick the same name.
    let _ = std::fs::create_dir_all(base);
    std::iter::once(first.clone())
        .chain((2..10_000).map(|n| base.join(format!("{suite}-{ts}-{n}"))))
        .find(|p| std::fs::create_dir(p).is_ok())
        .unwrap_or(first)
}

#[cfg(test)]
mod tests {
    /// A bundle read back and written again (resume, the results database) keeps every
    /// number digit for digit: serde_json's exact float parsing is on.
    #[test]
    fn numbers_read_back_exactly() {
        for text in [
            "7745428225943865",
            "7745428225943865.0",
            "0.30000000000000004",
            "1.2345678901234567e-7",
            "123456.78901234567",
            "8.988465674311579e307",
        ] {
            let exact: f64 = text.parse().unwrap();
            let got: f64 = serde_json::from_str(text).unwrap();
            assert_eq!(got.to_bits(), exact.to_bits(), "{text}");
        }
    }

    use super::*;

    #[test]
    fn default_dir_is_suite_and_compact_utc_time() {
        let d = tempfile::tempdir().unwrap();
        let p = default_dir(d.path(), "quick");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        // quick-20250102T030405Z
        assert!(name.starts_with("quick-"), "{name}");
        assert_eq!(name.len(), "quick-".len() + 16, "{name}");
        assert!(name.ends_with('Z'));
        std::fs::create_dir_all(&p).unwrap();
        let q = default_dir(d.path(), "quick");
        assert_ne!(p, q);
    }

    #[test]
    fn a_bundle_takes_only_a_new_or_empty_directory() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_new_dir(&d.path().join("new")).is_ok());
        assert!(check_new_dir(d.path()).is_ok());
        std::fs::write(d.path().join("summary.txt"), "mine").unwrap();
        let e = check_new_dir(d.path()).unwrap_err();
        assert!(e.contains("is not empty"), "{e}");
        let e = check_new_dir(&d.path().join("summary.txt")).unwrap_err();
        assert!(e.contains("not a directory"), "{e}");
    }

    /// A fresh bundle document of the quick suite on a small simulated drive.
    fn quick_doc() -> RunDoc {
        use drivelab_engine::target::{OpenOptions, Target, TargetSpec};
        let d = drivelab_sim::parse("sim:nvme-tlc,capacity=4G").unwrap();
        let t = Target::open(TargetSpec::Model(Box::new(d)), &OpenOptions::default()).unwrap();
        let q = crate::quick::Quick::new(true);
        let plan = crate::suite::Suite::plan(&q, &t.info).unwrap();
        crate::runner::new_doc(&q, &plan, &t, None)
    }

    #[test]
    fn the_suite_is_saved_by_its_name_and_read_back_as_its_kind() {
        let doc = quick_doc();
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["suite"], "quick");
        // A bundle that is no fleet's says nothing about fleets (the same bytes as before).
        assert!(v.get("fleet").is_none(), "{v}");
        let back = parse_run_doc(&v.to_string()).unwrap();
        assert_eq!(back.suite, SuiteKind::Quick);
        assert!(!back.fleet);
        let mut bad = v.clone();
        bad["suite"] = "qiuck".into();
        let e = parse_run_doc(&bad.to_string()).unwrap_err();
        assert!(e.contains("qiuck"), "{e}");
    }

    #[test]
    fn a_fleet_bundle_says_so_in_a_field_and_old_ones_are_recognised_on_reading() {
        let mut doc = quick_doc();
        doc.fleet = true;
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["fleet"], true);
        let back = parse_run_doc(&v.to_string()).unwrap();
        assert!(crate::fio::fleet::is_fleet_bundle(&back));
        // A fleet bundle written before the field: its note marks it when read.
        let mut old = quick_doc();
        old.notes.push(crate::fio::fleet::FLEET_NOTE.into());
        let back = parse_run_doc(&serde_json::to_string(&old).unwrap()).unwrap();
        assert!(back.fleet);
        // A note never decides once the bundle is read: a document in memory is what
        // its field says.
        assert!(!crate::fio::fleet::is_fleet_bundle(&old));
    }

    #[test]
    fn bundle_open_and_open_bundle_share_one_schema_check() {
        let d = tempfile::tempdir().unwrap();
        let mut doc = quick_doc();
        doc.schema_version = BUNDLE_SCHEMA_VERSION + 1;
        std::fs::write(d.path().join(RUN_JSON), serde_json::to_vec(&doc).unwrap()).unwrap();
        let a = open_bundle(d.path()).unwrap_err();
        let b = Bundle::open(d.path()).err().unwrap();
        assert!(a.contains("is not one of the supported"), "{a}");
        assert_eq!(b, format!("--resume {a}"));
    }

    #[test]
    fn metrics_drop_missing_values() {
        assert!(Metric::new("x", None, "MB/s").is_none());
        assert!(Metric::new("x", Some(f64::NAN), "MB/s").is_none());
        assert_eq!(Metric::new("x", Some(1.5), "MB/s").unwrap().value, 1.5);
    }
}
