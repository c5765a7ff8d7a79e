//! From result bundles to a report: each suite present gets a section with the charts
//! and tables of the reviews it follows, every drive (bundle label) is one group with
//! its own colour and toggle, and several bundles of one suite share its charts.
//!
//! The suite's saved analysis (`summary.analysis` in `run.json`) is the source of the
//! headline numbers; an unfinished bundle without one is analysed again from its saved
//! steps by the suite itself, so the report never disagrees with `drivelab run`.

mod consistency;
mod exceedance;
mod fio;
mod iometer;
mod mixed;
mod peak;
mod powerloss;
mod quick;
mod replay;
mod seqfill;
mod telemetry;
mod verify;

use drivelab_engine::result::Histograms;
use drivelab_suites::bundle::{drive_key, BundleStatus, RunDoc, StepRecord, StepStatus, Summary};
use drivelab_suites::SuiteKind;

// The bundle reader lives beside its writer; re-exported here for the report's users.
pub use drivelab_suites::bundle::{connection, drive_label, open_bundle, parse_run_doc};
pub use drivelab_suites::runner::summary_of;

use drivelab_suites::fio::import::{imported_drive, is_import};

use crate::html::{Block, Column, Report, Row, Section, Table};

pub use exceedance::{exceedance_points, merge_histograms};

/// One result bundle, the name of its series and the drive it measured.
#[derive(Debug, Clone)]
pub struct DriveRun {
    /// The bundle's name in legends and tables (the drive's name, made unique per suite
    /// and told apart by connection where runs differ in it).
    pub label: String,
    /// The drive: group name (colour and toggle button). Bundles the reader gave one
    /// name are one drive; bundles named by their target are each their own.
    pub drive: String,
    /// Whether the reader named the drive (`--label`).
    pub named: bool,
    /// The bundle's `run.json`.
    pub doc: RunDoc,
}

impl DriveRun {
    /// A bundle of the drive the reader named `label`, or named by its target
    /// ([`drive_label`]) when `None`.
    pub fn new(label: Option<String>, doc: RunDoc) -> DriveRun {
        let named = label.is_some();
        let label = label.unwrap_or_else(|| drive_label(&doc));
        DriveRun {
            drive: label.clone(),
            label,
            named,
            doc,
        }
    }
}

/// The drive a bundle measured, as far as its record tells: the drive itself (model and
/// serial) where both are known, else its path on its host (`/dev/sdb` of two hosts is
/// two drives).
fn drive_identity(doc: &RunDoc) -> (String, String) {
    drive_key(doc).unwrap_or_else(|| (doc.host.hostname.clone(), doc.target.path.clone()))
}

/// Bundles named by their target whose labels meet although they measured different
/// drives (one device path on two hosts) say their host: "/dev/sdb on host-a" beside
/// "/dev/sdb on host-b", so they are two drives, not one.
pub fn label_hosts(runs: &mut [DriveRun]) {
    let ids: Vec<(String, String)> = runs.iter().map(|r| drive_identity(&r.doc)).collect();
    let clash: Vec<bool> = (0..runs.len())
        .map(|i| {
            !runs[i].named
                && (0..runs.len()).any(|j| {
                    j != i && !runs[j].named && runs[j].label == runs[i].label && ids[j] != ids[i]
                })
        })
        .collect();
    for (r, clash) in runs.iter_mut().zip(clash) {
        if clash {
            r.label = format!("{} on {}", r.label, r.doc.host.hostname);
            r.drive = r.label.clone();
        }
    }
}

/// One drive measured over several connections is one drive with variants: bundles
/// still named by their target ([`drive_label`]) whose drive (model and serial) another
/// bundle shares over another connection are named by the drive and the connection,
/// e.g. "Samsung T7 (USB 3.2 Gen 2, UAS)" beside "Samsung T7 (USB 3.2 Gen 2, BOT)".
/// Where the runs differ in connection otherwise, every label that knows its own says
/// it: "QEMU HARDDISK (/dev/sdb) · USB 3.2 Gen 1, UAS" (a legend of device paths alone
/// hides the contrast the runs were made for).
pub fn label_variants(runs: &mut [DriveRun]) {
    let conns: Vec<Option<String>> = runs.iter().map(|r| connection(&r.doc)).collect();
    let differ = conns.iter().any(|c| c != &conns[0]);
    let keys: Vec<Option<((String, String), String)>> = runs
        .iter()
        .zip(&conns)
        .map(|(r, c)| Some((drive_key(&r.doc)?, c.clone()?)))
        .collect();
    for (i, r) in runs.iter_mut().enumerate() {
        let Some(conn) = &conns[i] else {
            continue;
        };
        let same_drive = keys[i]
            .as_ref()
            .is_some_and(|(key, conn)| keys.iter().flatten().any(|(k, c)| k == key && c != conn));
        match &keys[i] {
            Some((key, _)) if same_drive && !r.named => r.label = format!("{} ({conn})", key.0),
            _ if differ => r.label = format!("{} · {conn}", r.label),
            _ => {}
        }
    }
}

/// Makes labels unique where two bundles of one suite share one: the second becomes
/// `label #2`, and so on (otherwise their series would merge in the suite's charts).
pub fn disambiguate(runs: &mut [DriveRun]) {
    name_variants(runs);
    for i in 1..runs.len() {
        let clash = |runs: &[DriveRun], label: &str| {
            runs[..i]
                .iter()
                .any(|r| r.label == label && r.doc.suite == runs[i].doc.suite)
        };
        if clash(runs, &runs[i].label) {
            let base = runs[i].label.clone();
            let mut n = 2;
            while clash(runs, &format!("{base} #{n}")) {
                n += 1;
            }
            runs[i].label = format!("{base} #{n}");
        }
    }
}

/// Imported fio sets of one drive (its `--drive` name at import, or the reader's
/// `--label`) are that drive's test sets, not other drives: each is named by the drive
/// and its tests ("SSD A · 4K random reads"), never "SSD A #2"; a drive's only set
/// keeps its label.
fn label_test_sets(runs: &mut [DriveRun]) {
    let drive_of = |r: &DriveRun| -> Option<String> {
        if r.named {
            is_import(&r.doc).then(|| r.label.clone())
        } else {
            imported_drive(&r.doc).map(str::to_string)
        }
    };
    let drives: Vec<Option<String>> = runs.iter().map(drive_of).collect();
    for i in 0..runs.len() {
        let Some(d) = &drives[i] else { continue };
        let sets = (0..runs.len())
            .filter(|&j| drives[j].as_ref() == Some(d))
            .count();
        if sets > 1 {
            runs[i].label = match tests_of(&runs[i].doc) {
                Some(t) => format!("{d} · {t}"),
                None => d.clone(),
            };
        }
    }
}

/// The kinds of I/O of a bundle's steps ("4K random reads"), joined where they differ.
fn tests_of(doc: &RunDoc) -> Option<String> {
    let mut kinds: Vec<String> = Vec::new();
    for k in doc.steps.iter().map(|s| workload_kind(&s.config)) {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    (!kinds.is_empty()).then(|| kinds.join(" + "))
}

/// Knobs that make a variant of one drive rather than another test: the reviews compare
/// a drive with and without extra over-provisioning side by side.
const VARIANT_KNOBS: [&str; 1] = ["op_percent"];

/// The variant a bundle is of its drive: "25 % OP" for a consistency test over 75 % of
/// the span, "default" otherwise.
pub fn variant_of(doc: &RunDoc) -> String {
    match doc.knobs.get("op_percent").and_then(|v| v.as_f64()) {
        Some(op) if op > 0.0 => format!("{} % OP", fmt_short(op)),
        _ => "default".into(),
    }
}

/// The knobs without the variant ones.
fn test_knobs(doc: &RunDoc) -> serde_json::Value {
    let mut k = doc.knobs.clone();
    if let Some(o) = k.as_object_mut() {
        for v in VARIANT_KNOBS {
            o.remove(v);
        }
    }
    k
}

/// Whether two bundles are the same test of one drive in different variants.
fn variants(a: &RunDoc, b: &RunDoc) -> bool {
    a.suite == b.suite
        && a.tool == b.tool
        && test_knobs(a) == test_knobs(b)
        && variant_of(a) != variant_of(b)
}

/// Bundles of one suite under one label that are variants of each other are named by
/// their variant ("drive · default", "drive · 25 % OP") instead of "#2".
fn name_variants(runs: &mut [DriveRun]) {
    let n = runs.len();
    let mut rename = vec![false; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && runs[i].label == runs[j].label && variants(&runs[i].doc, &runs[j].doc) {
                rename[i] = true;
            }
        }
    }
    for (r, go) in runs.iter_mut().zip(rename) {
        if go {
            r.label = format!("{} · {}", r.label, variant_of(&r.doc));
        }
    }
}

/// One bundle of a suite, ready for charting.
pub(crate) struct Entry<'a> {
    /// The bundle's name in legends and tables.
    pub label: &'a str,
    /// Its drive's group (colour and toggle).
    pub group: &'a str,
    pub doc: &'a RunDoc,
    pub summary: Summary,
}

impl Entry<'_> {
    /// The suite's analysis as its type (`peak::Analysis`, …); None when the bundle's
    /// analysis is not of that shape.
    pub fn analysis<A: serde::de::DeserializeOwned>(&self) -> Option<A> {
        self.summary.analysis_as()
    }

    /// Completed steps satisfying `pred`, in plan order.
    pub fn steps(&self, pred: impl Fn(&StepRecord) -> bool) -> Vec<&StepRecord> {
        self.doc
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Complete && s.run.is_some() && pred(s))
            .collect()
    }

    /// The histograms of the completed steps satisfying `pred`.
    pub fn histograms(&self, pred: impl Fn(&StepRecord) -> bool) -> Vec<&Histograms> {
        self.steps(pred)
            .into_iter()
            .filter_map(|s| s.run.as_ref().map(|r| &r.histogram))
            .collect()
    }
}

/// Lower-case id piece from a label: `SEQ1M Q8T1` → `seq1m-q8t1`.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// A line through `points`, or marks when a single point could not show as a line.
pub(crate) fn curve(
    name: impl Into<String>,
    group: impl Into<String>,
    points: Vec<(f64, f64)>,
) -> crate::model::Series {
    if points.len() < 2 {
        crate::model::Series::scatter(name, group, points)
    } else {
        crate::model::Series::line(name, group, points)
    }
}

fn fmt_short(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// What a step did, in the words of a chart subtitle: "4K random writes, QD32, 8.60 GB
/// span", "…, 16.8 MB span" (a bssplit reads "mixed-size"; a mix "random I/O (70 %
/// reads)").
pub(crate) fn workload_phrase(w: &drivelab_engine::spec::Workload) -> String {
    format!(
        "{}, QD{}, {} span",
        workload_kind(w),
        w.queue_depth(),
        crate::fmt_bytes(w.size_bytes)
    )
}

/// What a step's I/O is: "4K random reads", "128K sequential I/O (70 % reads)".
fn workload_kind(w: &drivelab_engine::spec::Workload) -> String {
    let bs = match w.bs.as_slice() {
        [one] => drivelab_engine::spec::block_size_label(one.bytes),
        _ => "mixed-size".to_string(),
    };
    let kind = if w.rw.is_random() {
        "random"
    } else {
        "sequential"
    };
    match w.read_percent() {
        100 => format!("{bs} {kind} reads"),
        0 => format!("{bs} {kind} writes"),
        p => format!("{bs} {kind} I/O ({p} % reads)"),
    }
}

/// Workload phrases ([`workload_phrase`]) joined where they differ ("…; …"), or None
/// without any.
pub(crate) fn join_workloads<'a>(phrases: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for p in phrases {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// A number for a table cell ("–" when missing).
pub(crate) fn cell(v: Option<f64>, decimals: usize) -> String {
    crate::ticks::fmt_number(v.unwrap_or(f64::NAN), decimals)
}

/// Choices the reader makes about a report.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Second at which the consistency zoom starts (default: a little before the
    /// earliest scoring window); ignored when past the end of every series.
    pub zoom_from_s: Option<u64>,
}

/// The report of `runs` (labels made unique per suite first): a section listing the
/// runs, then one section per suite present, in `drivelab run`'s order.
pub fn bundle_report(runs: &[DriveRun]) -> Report {
    bundle_report_with(runs, &ReportOptions::default())
}

/// [`bundle_report`] with the reader's choices.
pub fn bundle_report_with(runs: &[DriveRun], opts: &ReportOptions) -> Report {
    let mut runs = runs.to_vec();
    label_hosts(&mut runs);
    label_variants(&mut runs);
    label_test_sets(&mut runs);
    disambiguate(&mut runs);
    for r in runs.iter_mut().filter(|r| !r.named) {
        r.drive = imported_drive(&r.doc).map_or_else(|| r.label.clone(), str::to_string);
    }
    let mut groups: Vec<String> = Vec::new();
    for r in &runs {
        if !groups.contains(&r.drive) {
            groups.push(r.drive.clone());
        }
    }
    let mut report = Report::new("drivelab report")
        .meta("Drives", groups.len().to_string())
        .meta("Bundles", runs.len().to_string())
        .meta(
            "drivelab",
            runs.first()
                .map(|r| r.doc.tool.version.clone())
                .unwrap_or_default(),
        )
        .groups(groups);
    report = report.section(runs_section(&runs));
    for suite in SuiteKind::ALL {
        let entries: Vec<Entry> = runs
            .iter()
            .filter(|r| r.doc.suite == suite)
            .filter_map(|r| {
                // A powerloss write phase has no summary until its check: its section
                // says so rather than leaving the bundle out.
                let unchecked = (suite == SuiteKind::Powerloss).then(|| Summary {
                    analysis: serde_json::Value::Null,
                    metrics: Vec::new(),
                });
                summary_of(&r.doc).or(unchecked).map(|summary| Entry {
                    label: &r.label,
                    group: &r.drive,
                    doc: &r.doc,
                    summary,
                })
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let mut section = match suite {
            SuiteKind::Quick => quick::section(&entries),
            SuiteKind::Peak => peak::section(&entries),
            SuiteKind::Consistency => consistency::section(&entries, opts),
            SuiteKind::Seqfill => seqfill::section(&entries),
            SuiteKind::Iometer => iometer::section(&entries),
            SuiteKind::Mixed => mixed::section(&entries),
            SuiteKind::Replay => replay::section(&entries),
            SuiteKind::Fio => fio::section(&entries),
            SuiteKind::Powerloss => powerloss::section(&entries),
        };
        if suite == SuiteKind::Peak {
            for c in telemetry::peak_efficiency(&entries) {
                section = section.chart(c);
            }
        }
        if let Some(c) = telemetry::over_time(suite, &entries) {
            section = section.chart(c);
        }
        if let Some(t) = verify::table(&entries) {
            section = section.table(t);
        }
        let section = match variant_note(&entries) {
            Some(t) => section.text_first(t),
            None => section,
        };
        let section = mark_demonstrations(section, &entries);
        report = report.section(section.warnings_first(caveats(&entries)));
        // Imported fio results that form queue-depth sweeps: the peak section too.
        if suite == SuiteKind::Fio {
            let swept: Vec<Entry> = entries
                .iter()
                .filter(|e| fio::has_sweeps(e))
                .map(|e| Entry {
                    label: e.label,
                    group: e.group,
                    doc: e.doc,
                    summary: e.summary.clone(),
                })
                .collect();
            if !swept.is_empty() {
                report = report.section(peak::section(&swept));
            }
            for s in fio::series_sections(&entries, opts) {
                report = report.section(s);
            }
        }
    }
    report
}

/// Whether a bundle was made with `--short`: a demonstration of the method, not a
/// measurement of the drive.
fn is_short(doc: &RunDoc) -> bool {
    doc.knobs.get("short").and_then(|v| v.as_bool()) == Some(true)
}

/// Marks every chart and table of a section with `--short` bundles as a demonstration,
/// naming those bundles (all of them: "every bundle").
fn mark_demonstrations(mut section: Section, entries: &[Entry]) -> Section {
    let short: Vec<&str> = entries
        .iter()
        .filter(|e| is_short(e.doc))
        .map(|e| e.label)
        .collect();
    if short.is_empty() {
        return section;
    }
    let whose = if short.len() == entries.len() {
        "every run here".to_string()
    } else {
        short.join(", ")
    };
    let mark = format!("--short demonstration ({whose}): not a measurement of the drive");
    for b in &mut section.blocks {
        match b {
            Block::Chart(c) => {
                c.subtitle = Some(match c.subtitle.take() {
                    Some(s) => format!("{s} · {mark}"),
                    None => mark.clone(),
                })
            }
            Block::Table(t) => t.caption = format!("{} ({mark})", t.caption),
            Block::Tiles(t) => t.title = format!("{} ({mark})", t.title),
            _ => {}
        }
    }
    section.text_first(format!(
        "Runs made with --short ({whose}) are demonstrations of the method: minutes, \
         small spans and short steps, so their numbers do not describe the drive."
    ))
}

/// The bundles that are variants of the first one's test (see [`variants`]), said as
/// the reviews say it: one drive, side by side.
fn variant_note(entries: &[Entry]) -> Option<String> {
    let (first, rest) = entries.split_first()?;
    let alike: Vec<&Entry> = rest.iter().filter(|e| variants(e.doc, first.doc)).collect();
    (!alike.is_empty()).then(|| {
        let names: Vec<String> = alike
            .iter()
            .map(|e| format!("{} ({})", e.label, variant_of(e.doc)))
            .collect();
        format!(
            "Variants of one test: {} ({}) and {} ran the same test, but for the part of the span left unwritten as extra over-provisioning. They are shown side by side, each with its own toggle, as the reviews compare a drive with and without extra spare area.",
            first.label,
            variant_of(first.doc),
            names.join(", ")
        )
    })
}

/// What a reader of a suite's section must know first: runs that did not finish (their
/// numbers cover only the steps done), and runs made with other settings than the first
/// (the same test `drivelab compare` refuses without `--force`).
fn caveats(entries: &[Entry]) -> Vec<String> {
    let mut out = Vec::new();
    for e in entries {
        let d = e.doc;
        let why = match d.status {
            BundleStatus::Complete => continue,
            BundleStatus::Interrupted => "it was interrupted".to_string(),
            BundleStatus::Running => "it is still running, or was killed".to_string(),
            BundleStatus::Partial => {
                "hosts of its fleet dropped out (each step adds up the hosts that finished it)"
                    .to_string()
            }
            BundleStatus::Failed => {
                let reason = d
                    .steps
                    .iter()
                    .filter_map(|s| s.run.as_ref().and_then(|r| r.failure.clone()))
                    .next_back();
                match reason {
                    Some(r) => format!("it failed: {r}"),
                    None => "it failed".to_string(),
                }
            }
        };
        let done = d
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Complete)
            .count();
        out.push(format!(
            "{}: this run did not finish ({why}). {done} of its {} steps were completed, and its charts and numbers cover only those.",
            e.label, d.planned_steps
        ));
    }
    if let Some((first, rest)) = entries.split_first() {
        let unlike: Vec<String> = rest
            .iter()
            .filter(|e| e.doc.config_hash != first.doc.config_hash)
            .filter(|e| !variants(e.doc, first.doc))
            // One drive's imported test sets differ by design.
            .filter(|e| !(e.group == first.group && is_import(e.doc) && is_import(first.doc)))
            .map(|e| {
                let diff = knob_differences(&first.doc.knobs, &e.doc.knobs);
                if !diff.is_empty() {
                    format!("{} ({diff})", e.label)
                } else if e.doc.tool != first.doc.tool {
                    let build = |t: &drivelab_engine::result::Tool| match &t.commit {
                        Some(c) => format!("{} ({c})", t.version),
                        None => t.version.clone(),
                    };
                    format!(
                        "{} (the same options, planned by drivelab {} against {})",
                        e.label,
                        build(&e.doc.tool),
                        build(&first.doc.tool)
                    )
                } else {
                    format!("{} (the same options, other steps)", e.label)
                }
            })
            .collect();
        if !unlike.is_empty() {
            out.push(format!(
                "Not the same test: {} ran with other settings than {}, so their numbers do not compare like for like.",
                unlike.join("; "),
                first.label
            ));
        }
    }
    out
}

/// The suite options in which `b` differs from `a`, as "name a → b".
fn knob_differences(a: &serde_json::Value, b: &serde_json::Value) -> String {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return String::new();
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let v = |x: Option<&serde_json::Value>| x.map_or("–".to_string(), |v| v.to_string());
            format!("{k} {} → {}", v(a.get(k)), v(b.get(k)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn runs_section(runs: &[DriveRun]) -> Section {
    let mut table = Table {
        caption: "Result bundles in this report".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Suite"),
            Column::text("Target"),
            Column::text("Connection"),
            Column::text("Capacity"),
            Column::text("Host"),
            Column::text("drivelab"),
            Column::text("Status"),
            Column::text("Config hash"),
            Column::text("Created"),
        ],
        rows: Vec::new(),
    };
    let mut section = Section::new("Runs");
    for r in runs {
        let d = &r.doc;
        table.rows.push(Row {
            group: Some(r.drive.clone()),
            cells: vec![
                r.label.clone(),
                d.suite.to_string(),
                short_target(d),
                connection(d).unwrap_or_else(|| "–".into()),
                d.target
                    .capacity_bytes
                    .map_or("unknown".into(), crate::fmt_bytes),
                d.host.hostname.clone(),
                match &d.tool.commit {
                    Some(c) => format!("{} ({c})", d.tool.version),
                    None => d.tool.version.clone(),
                },
                format!("{:?}", d.status).to_lowercase(),
                d.config_hash.chars().take(12).collect(),
                d.created_at.clone(),
            ],
        });
    }
    section = section.table(table);
    // The same caveat of several bundles is printed once, naming them.
    let mut notes: Vec<(String, Vec<String>)> = Vec::new();
    for r in runs {
        let mut texts: Vec<String> = r.doc.notes.clone();
        if let Some(mem) = &r.doc.target.in_memory {
            texts.push(format!(
                "The target lives in memory ({mem}): memory, not a drive, was measured."
            ));
        }
        for t in texts {
            let who = format!("{} ({})", r.label, r.doc.suite);
            match notes.iter_mut().find(|n| n.0 == t) {
                Some(n) => n.1.push(who),
                None => notes.push((t, vec![who])),
            }
        }
    }
    for (text, who) in notes {
        let whom = if who.len() == runs.len() && runs.len() > 1 {
            "every bundle".to_string()
        } else {
            who.join("; ")
        };
        section = section.text(format!("{text} — {whom}"));
    }
    section
}

/// The target as typed (or its path), cut to a table-friendly length.
fn short_target(d: &RunDoc) -> String {
    let t = d
        .target_arg
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| d.target.path.clone());
    if t.chars().count() > 48 {
        let mut s: String = t.chars().take(47).collect();
        s.push('…');
        s
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_ids() {
        assert_eq!(slug("SEQ1M Q8T1"), "seq1m-q8t1");
        assert_eq!(slug("4K random read, QD8"), "4k-random-read-qd8");
        assert_eq!(slug("--a--"), "a");
    }
}
