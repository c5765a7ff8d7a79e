//! `drivelab compare A B …`: the headline numbers of several runs side by side with
//! their ratios to the first. Runs are bundle directories or run ids (or unique
//! prefixes) in the results database. Runs whose config hash differs from the first's
//! are not comparable: refused, or with `--force` compared under a loud warning.

use drivelab_engine::text::{printable, shortened};
use std::path::Path;

use clap::Args;
use drivelab_suites::bundle::{connection, drive_label, open_bundle};
use drivelab_suites::hash::SPAN_AND_SEED;
use drivelab_suites::plan::StepKind;
use drivelab_suites::powerloss::Outcome;
use drivelab_suites::runner::summary_of;
use drivelab_suites::{SuiteKind, Summary};
use serde_json::Value;

use crate::fail::Fail;
use crate::record::open_existing_store;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Runs to compare: result bundle directories or run ids (or unique id prefixes) in
    /// the results database. The first is the baseline of the ratios.
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    /// Compare even when the runs' configurations differ (flagged in the output).
    #[arg(long)]
    pub force: bool,
    /// Drive name of each run, in the order of the runs (give one per run, or none for
    /// the target's model and path).
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// The results database for run ids: a SQLite file or a postgres:// URL
    /// [default: results.sqlite in $XDG_DATA_HOME/drivelab, else ~/.local/share/drivelab].
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

/// One run's comparable facts.
#[derive(Debug, Clone)]
pub struct Side {
    /// Where it came from: the bundle path or `db:<run id>`.
    pub source: String,
    /// Drive name.
    pub drive: String,
    pub suite: String,
    pub config_hash: String,
    /// The suite's resolved knobs (`{}` when unknown).
    pub knobs: Value,
    /// The measurement steps' names and workloads without seed and spans, as the config
    /// hash sees them (a bundle's; empty for a database run).
    pub steps: Vec<(String, Value)>,
    /// (name, value, unit) in the run's order.
    pub metrics: Vec<(String, f64, String)>,
    /// How the drive was connected ("USB 3.2 Gen 2, UAS"), when known.
    pub connection: Option<String>,
    /// The drive itself (model, serial), when known.
    pub drive_key: Option<(String, String)>,
    /// The run's status when it is not "complete" (an interrupted or failed run's
    /// numbers are partial), and who carried out its I/O when not drivelab's engine.
    pub caveats: Vec<String>,
    /// (metric, run-to-run spread as a share of its value) of the metrics the run
    /// measured more than once (quick's runs of a test).
    pub spread: Vec<(String, f64)>,
    /// Named by the reader (`--label`): kept as given.
    pub named: bool,
    /// A powerloss run's verdict (None: another suite).
    pub verdict: Option<Outcome>,
}

/// A powerloss run's verdict from its bundle (None: another suite).
fn verdict_of(doc: &drivelab_suites::RunDoc) -> Option<Outcome> {
    (doc.suite == SuiteKind::Powerloss).then(|| Outcome::of(doc.summary.as_ref()))
}

impl Side {
    /// The metric's run-to-run spread, if the run measured it more than once.
    fn spread_of(&self, metric: &str) -> Option<f64> {
        self.spread.iter().find(|s| s.0 == metric).map(|s| s.1)
    }
}

/// The run-to-run spreads of a bundle's metrics (see [`Side::spread`]).
fn spreads(doc: &drivelab_suites::RunDoc, summary: Option<&Summary>) -> Vec<(String, f64)> {
    match doc.suite {
        SuiteKind::Quick => summary
            .and_then(|s| s.analysis_as::<drivelab_suites::quick::Analysis>())
            .map(|a| a.run_spreads())
            .unwrap_or_default(),
        SuiteKind::Peak
        | SuiteKind::Consistency
        | SuiteKind::Seqfill
        | SuiteKind::Iometer
        | SuiteKind::Mixed
        | SuiteKind::Replay
        | SuiteKind::Fio
        | SuiteKind::Powerloss => Vec::new(),
    }
}

fn from_bundle(dir: &Path) -> Result<Side, String> {
    let doc = open_bundle(dir)?;
    let summary = summary_of(&doc);
    let spread = spreads(&doc, summary.as_ref());
    let verdict = verdict_of(&doc);
    let metrics = summary
        .map(|s| {
            s.metrics
                .into_iter()
                .map(|m| (m.name, m.value, m.unit))
                .collect()
        })
        .unwrap_or_default();
    let steps = doc
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Measure)
        .map(|s| (s.name.clone(), as_hashed(&s.config)))
        .collect();
    let t = &doc.target;
    let drive_key = t
        .model
        .clone()
        .zip(t.serial.clone())
        .map(|(m, s)| (m.trim().to_string(), s.trim().to_string()));
    let mut caveats = Vec::new();
    let status = serde_json::to_value(doc.status).unwrap_or(Value::Null);
    if status != "complete" {
        caveats.push(format!("status {}", shown(Some(&status))));
    }
    // A run carried out by fio (`--engine fio`, a fleet host) keeps fio's files in `fio/`.
    if dir.join("fio").is_dir() {
        caveats.push("I/O by fio".into());
    }
    Ok(Side {
        caveats,
        connection: connection(&doc),
        drive_key,
        source: dir.display().to_string(),
        drive: drive_label(&doc),
        suite: doc.suite.to_string(),
        spread,
        named: false,
        verdict,
        config_hash: doc.config_hash,
        knobs: doc.knobs,
        steps,
        metrics,
    })
}

/// A step's workload as the config hash sees it: without its seed and byte spans.
fn as_hashed(w: &drivelab_engine::spec::Workload) -> Value {
    let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        for k in SPAN_AND_SEED {
            m.remove(k);
        }
    }
    v
}

/// `v` as a value in a message: strings bare, the rest as JSON.
fn shown(v: Option<&Value>) -> String {
    match v {
        None => "(not set)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// The fields of two JSON objects whose values differ, as `name a vs b`.
fn fields_differing(a: &Value, b: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k} {} vs {}", shown(b.get(k)), shown(a.get(k))))
        .collect()
}

/// Why `other`'s config hash differs from `base`'s, in the knobs or steps that differ
/// (values given as other's vs base's).
pub fn why_different(base: &Side, other: &Side) -> String {
    if base.suite != other.suite {
        let kinds = [base, other].map(|s| s.suite.parse::<SuiteKind>().ok());
        let import = kinds.contains(&Some(SuiteKind::Fio));
        let why = if import {
            ": fio results imported are fio's steps, not that suite's; with --force the \
             metrics both name alike (a sweep's knee, the consistency and fill scores) \
             line up"
        } else {
            ""
        };
        return format!("another suite: {} vs {}{why}", other.suite, base.suite);
    }
    let test_knobs = |side: &Side| match side.suite.parse::<SuiteKind>() {
        Ok(kind) => drivelab_suites::hash::test_knobs(kind, &side.knobs),
        Err(_) => drivelab_suites::hash::measured_knobs(&side.knobs),
    };
    let knobs = fields_differing(&test_knobs(base), &test_knobs(other));
    if !knobs.is_empty() {
        return format!("settings differ: {}", knobs.join(", "));
    }
    let steps = (base.steps.len(), other.steps.len());
    if steps.0 > 0 && steps.1 > 0 && steps.0 != steps.1 {
        return format!("{} measurement steps vs {}", steps.1, steps.0);
    }
    let step = base.steps.iter().zip(&other.steps).find(|(a, b)| a != b);
    match step {
        Some((a, b)) if a.0 != b.0 => format!("step '{}' vs '{}'", b.0, a.0),
        Some((a, b)) => format!(
            "the same settings, but step '{}' ran otherwise: {}",
            a.0,
            fields_differing(&a.1, &b.1).join(", ")
        ),
        None => {
            "the same settings; the planned measurements differ (another drivelab version?)".into()
        }
    }
}

/// Formats a value with about four significant digits.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let d = if a >= 1000.0 || a == 0.0 || v.fract() == 0.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        4
    };
    format!("{v:.d$}")
}

/// The comparison table: one row per metric of the first run (then any the others add),
/// one value column per run and a ratio column for every run after the first.
/// One drive over several connections is one drive with variants: such sides are named
/// by the drive and the connection; returns the line that says so.
pub fn label_variants(sides: &mut [Side]) -> Option<String> {
    let mut said = None;
    for i in 0..sides.len() {
        let (Some(key), Some(conn)) = (sides[i].drive_key.clone(), sides[i].connection.clone())
        else {
            continue;
        };
        let others: Vec<&String> = sides
            .iter()
            .filter(|o| o.drive_key.as_ref() == Some(&key))
            .filter_map(|o| o.connection.as_ref())
            .filter(|c| **c != conn)
            .collect();
        if others.is_empty() {
            continue;
        }
        sides[i].drive = if sides[i].named {
            format!("{} ({conn})", sides[i].drive)
        } else {
            format!("{} ({conn})", key.0)
        };
        said.get_or_insert_with(|| {
            format!(
                "One drive ({}, serial {}) over several connections: its runs are variants by link, compared side by side.",
                key.0, key.1
            )
        });
    }
    said
}

pub fn table(sides: &[Side]) -> String {
    let mut names: Vec<(String, String)> = Vec::new();
    for s in sides {
        for (n, _, u) in &s.metrics {
            if !names.iter().any(|x| &x.0 == n) {
                names.push((n.clone(), u.clone()));
            }
        }
    }
    let key = |i: usize| ((b'A' + (i % 26) as u8) as char).to_string();
    let mut out = String::new();
    let base_hash = &sides[0].config_hash;
    for (i, s) in sides.iter().enumerate() {
        let flag = if &s.config_hash != base_hash {
            "  <-- CONFIG DIFFERS"
        } else {
            ""
        };
        let via = s
            .connection
            .as_ref()
            .filter(|c| !s.drive.contains(c.as_str()))
            .map_or(String::new(), |c| format!(" via {c}"));
        let caveats = if s.caveats.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.caveats.join(", ").to_uppercase())
        };
        out += &format!(
            "{} = {}{via} [{}] {} (config {}){caveats}{flag}\n",
            key(i),
            shortened(&s.drive),
            shortened(&s.suite),
            shortened(&s.source),
            s.config_hash.chars().take(12).collect::<String>()
        );
    }
    out.push('\n');
    // A name as the table shows it: one line, at most NAME_CHARS characters (a job name
    // of an imported fio result may be 65 000 characters long).
    let shown: Vec<String> = names.iter().map(|n| table_name(&n.0)).collect();
    let w = shown
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut head = format!("{:<w$}  {:<6}", "METRIC", "UNIT");
    for i in 0..sides.len() {
        head += &format!("  {:>12}", key(i));
        if i > 0 {
            head += &format!("  {:>8}", format!("{}/A", key(i)));
        }
    }
    out += head.trim_end();
    out.push('\n');
    if sides.iter().any(|s| s.verdict.is_some()) {
        let mut line = format!("{:<w$}  {:<6}", "verdict", "");
        for (i, s) in sides.iter().enumerate() {
            line += &format!("  {:>12}", s.verdict.map_or("-", Outcome::words));
            if i > 0 {
                line += &format!("  {:>8}", "");
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    let mut within = false;
    for ((name, unit), label) in names.iter().zip(&shown) {
        let val = |s: &Side| s.metrics.iter().find(|m| &m.0 == name).map(|m| m.1);
        let base = val(&sides[0]);
        let unit = printable(unit);
        let mut line = format!("{label:<w$}  {unit:<6}");
        for (i, s) in sides.iter().enumerate() {
            let v = val(s);
            let cell = match (v, s.spread_of(name)) {
                (Some(v), Some(sp)) => format!("{} ±{:.0}%", fmt_value(v), sp * 50.0),
                (v, _) => v.map_or_else(|| "-".into(), fmt_value),
            };
            line += &format!("  {cell:>12}");
            if i > 0 {
                let r = match (v, base) {
                    (Some(v), Some(b)) if b != 0.0 => {
                        let noise = within_spread(v / b, &sides[0], s, name);
                        within |= noise;
                        format!("{:.2}x{}", v / b, if noise { "~" } else { "" })
                    }
                    _ => "-".into(),
                };
                line += &format!("  {r:>8}");
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    if sides.iter().any(|s| !s.spread.is_empty()) {
        out += "\n±: half the run-to-run range of the run's repeats of the test";
        if within {
            out += "; ~: the ratio lies within that range (the runs of one bundle differ as much), so it shows no difference";
        }
        out.push('\n');
    }
    out
}

/// The longest metric name the table shows whole.
const NAME_CHARS: usize = 80;

/// `name` for a table cell: control bytes escaped, cut to [`NAME_CHARS`] with `…`.
fn table_name(name: &str) -> String {
    let p = printable(name);
    if p.chars().count() <= NAME_CHARS {
        return p.into_owned();
    }
    p.chars().take(NAME_CHARS - 1).chain(['…']).collect()
}

/// Whether `ratio` (of `other`'s value to `base`'s) is no further from 1 than the wider
/// of the two runs' run-to-run ranges of the metric: a difference their own repeats
/// show as well.
fn within_spread(ratio: f64, base: &Side, other: &Side, metric: &str) -> bool {
    let widest = [base.spread_of(metric), other.spread_of(metric)]
        .into_iter()
        .flatten()
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
    widest.is_some_and(|s| (ratio - 1.0).abs() <= s)
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    if a.runs.len() < 2 {
        return Err(Fail::usage(format!(
            "RUN: give at least two runs (bundle directories or run ids) to compare, not {}",
            a.runs.len()
        )));
    }
    crate::cmd::report::check_labels(&a.label, a.runs.len(), "RUN")?;
    if a.db.as_deref().is_some_and(|d| d.trim().is_empty()) {
        return Err(Fail::usage(
            "--db: give a SQLite file path or a postgres:// URL",
        ));
    }
    let mut store = None;
    let mut sides = Vec::new();
    for r in &a.runs {
        let p = Path::new(r);
        if p.is_dir() {
            sides.push(from_bundle(p).map_err(|e| Fail::usage(format!("RUN {e}")))?);
            continue;
        }
        if store.is_none() {
            store = Some(open_existing_store(a.db.as_deref())?.ok_or_else(|| {
                Fail::usage(format!(
                    "RUN {r}: neither a result bundle directory nor a run id (there is no results database at {} yet)",
                    crate::record::location_shown(a.db.as_deref())
                ))
            })?);
        }
        let st = store.as_mut().expect("opened above");
        let rec = st
            .get_run(r)
            .map_err(|e| Fail::usage(format!("RUN {r}: {e}")))?
            .ok_or_else(|| {
                Fail::usage(format!(
                    "RUN {r}: neither a result bundle directory nor a run id (or id prefix) in {}",
                    st.location()
                ))
            })?;
        let doc = rec
            .bundle_json
            .as_ref()
            .and_then(|v| serde_json::from_value::<drivelab_suites::RunDoc>(v.clone()).ok());
        sides.push(Side {
            source: format!("db:{}", rec.run_id),
            drive: match &rec.device_model {
                Some(m) => format!("{m} ({})", rec.device_path),
                None => rec.device_path.clone(),
            },
            suite: rec.suite,
            config_hash: rec.config_hash,
            knobs: rec.config.get("knobs").cloned().unwrap_or(Value::Null),
            steps: Vec::new(),
            metrics: rec
                .metrics
                .into_iter()
                .map(|m| (m.name, m.value, m.unit))
                .collect(),
            connection: None,
            drive_key: None,
            spread: doc
                .as_ref()
                .map(|doc| spreads(doc, summary_of(doc).as_ref()))
                .unwrap_or_default(),
            verdict: doc.as_ref().and_then(verdict_of),
            named: false,
            caveats: if rec.status == "complete" {
                Vec::new()
            } else {
                vec![format!("status {}", rec.status)]
            },
        });
    }
    let differ: Vec<usize> = (1..sides.len())
        .filter(|&i| sides[i].config_hash != sides[0].config_hash)
        .collect();
    if !differ.is_empty() && !a.force {
        let i = differ[0];
        return Err(Fail::usage(format!(
            "RUN {}: not comparable with the first run ({}; config hash {} vs {}); --force compares them anyway",
            a.runs[i],
            why_different(&sides[0], &sides[i]),
            short(&sides[i].config_hash),
            short(&sides[0].config_hash),
        )));
    }
    if !differ.is_empty() {
        // Said once, with the table it qualifies (on the terminal, a copy on stderr
        // showed it twice).
        crate::output::stdout::say_line(&format!(
            "!!! WARNING: {} of {} runs have a different configuration from the first \
             (config hash differs): the ratios compare unlike tests (--force)",
            differ.len(),
            sides.len()
        ))?;
    }
    for (side, name) in sides.iter_mut().zip(&a.label) {
        side.drive = name.clone();
        side.named = true;
    }
    if let Some(line) = label_variants(&mut sides) {
        crate::output::stdout::say_line(&line)?;
    }
    crate::output::stdout::say(&table(&sides))?;
    if !differ.is_empty() {
        crate::output::stdout::say_line(
            "!!! configurations differ: see the rows marked CONFIG DIFFERS above",
        )?;
    }
    Ok(0)
}

fn short(h: &str) -> String {
    h.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(hash: &str, v: &[(&str, f64)]) -> Side {
        Side {
            source: "x".into(),
            drive: "d".into(),
            suite: "quick".into(),
            config_hash: hash.into(),
            knobs: serde_json::json!({"runs": 3, "preset": "standard"}),
            steps: Vec::new(),
            metrics: v
                .iter()
                .map(|(n, x)| (n.to_string(), *x, "MB/s".to_string()))
                .collect(),
            connection: None,
            drive_key: None,
            caveats: Vec::new(),
            spread: Vec::new(),
            named: false,
            verdict: None,
        }
    }

    #[test]
    fn one_drive_over_two_connections_is_one_drive_with_variants() {
        let mut a = side("h", &[("SEQ read", 1000.0)]);
        let mut b = side("h", &[("SEQ read", 300.0)]);
        let mut c = side("h", &[("SEQ read", 900.0)]);
        for (s, conn, serial) in [
            (&mut a, "USB 3.2 Gen 2, UAS", "S1"),
            (&mut b, "USB 3.2 Gen 2, BOT", "S1"),
            (&mut c, "USB 3.2 Gen 2, UAS", "S2"),
        ] {
            s.connection = Some(conn.into());
            s.drive_key = Some(("T7".into(), serial.into()));
        }
        let mut sides = vec![a, b, c];
        let line = label_variants(&mut sides).unwrap();
        assert!(line.contains("T7, serial S1"), "{line}");
        assert_eq!(sides[0].drive, "T7 (USB 3.2 Gen 2, UAS)");
        assert_eq!(sides[1].drive, "T7 (USB 3.2 Gen 2, BOT)");
        assert_eq!(sides[2].drive, "d", "another drive keeps its name");
        let t = table(&sides);
        assert!(t.contains("A = T7 (USB 3.2 Gen 2, UAS) [quick]"), "{t}");
        assert!(t.contains("C = d via USB 3.2 Gen 2, UAS [quick]"), "{t}");
        assert!(!t.contains("CONFIG DIFFERS"));
    }

    #[test]
    fn ratios_are_to_the_first_run() {
        let t = table(&[
            side("h", &[("SEQ read", 1000.0), ("RND read", 50.0)]),
            side("h", &[("SEQ read", 1500.0), ("RND read", 0.0)]),
        ]);
        let seq = t.lines().find(|l| l.starts_with("SEQ read")).unwrap();
        assert!(seq.ends_with("1.50x"), "{seq}");
        let rnd = t.lines().find(|l| l.starts_with("RND read")).unwrap();
        assert!(rnd.ends_with("0.00x"), "{rnd}");
        assert!(!t.contains("CONFIG DIFFERS"));
    }

    #[test]
    fn missing_values_and_zero_baselines_give_no_ratio() {
        let t = table(&[
            side("h", &[("a", 0.0)]),
            side("g", &[("a", 3.0), ("b", 2.0)]),
        ]);
        assert!(t.contains("CONFIG DIFFERS"));
        let a = t.lines().find(|l| l.starts_with("a ")).unwrap();
        assert!(a.ends_with('-'), "{a}");
        let b = t.lines().find(|l| l.starts_with("b ")).unwrap();
        assert!(b.ends_with('-'), "{b}");
    }

    #[test]
    fn a_fio_import_against_a_native_run_says_what_lines_up() {
        let a = side("h", &[]);
        let mut b = side("g", &[]);
        b.suite = "fio".into();
        let why = why_different(&a, &b);
        assert!(
            why.starts_with("another suite: fio vs quick: fio results imported"),
            "{why}"
        );
        assert!(why.contains("--force"), "{why}");
    }

    #[test]
    fn a_refusal_names_the_knobs_that_differ_and_their_values() {
        let a = side("h", &[]);
        let mut b = side("g", &[]);
        b.knobs["runs"] = 2.into();
        b.knobs["short"] = true.into();
        assert_eq!(
            why_different(&a, &b),
            "settings differ: runs 2 vs 3, short true vs (not set)"
        );
        b.suite = "peak".into();
        assert_eq!(why_different(&a, &b), "another suite: peak vs quick");
    }

    #[test]
    fn with_equal_knobs_the_first_differing_step_is_named() {
        let mut a = side("h", &[]);
        let mut b = side("g", &[]);
        let w = |e: &str| serde_json::json!({"ioengine": e, "iodepth": 8});
        a.steps = vec![("SEQ read".into(), w("io_uring"))];
        b.steps = vec![("SEQ read".into(), w("sync"))];
        assert_eq!(
            why_different(&a, &b),
            "the same settings, but step 'SEQ read' ran otherwise: ioengine sync vs io_uring"
        );
    }

    #[test]
    fn values_keep_four_digits() {
        assert_eq!(fmt_value(1234.56), "1235");
        assert_eq!(fmt_value(123.456), "123.5");
        assert_eq!(fmt_value(1.23456), "1.23");
        assert_eq!(fmt_value(0.012345), "0.0123");
        assert_eq!(fmt_value(3.0), "3");
    }

    #[test]
    fn a_ratio_within_the_runs_own_spread_is_marked_and_the_spread_shown() {
        let mut a = side("h", &[("SEQ1M Q8T1 read", 1000.0), ("RND4K read", 100.0)]);
        let b = side("h", &[("SEQ1M Q8T1 read", 1080.0), ("RND4K read", 150.0)]);
        // A's three runs of each test ranged over 10 % of the value shown.
        a.spread = vec![
            ("SEQ1M Q8T1 read".into(), 0.10),
            ("RND4K read".into(), 0.10),
        ];
        let t = table(&[a, b]);
        let line = |m: &str| t.lines().find(|l| l.starts_with(m)).unwrap().to_string();
        assert!(line("SEQ1M").contains("1000 ±5%"), "{t}");
        assert!(line("SEQ1M").ends_with("1.08x~"), "{t}");
        assert!(line("RND4K").ends_with("1.50x"), "{t}");
        assert!(t.contains("~: the ratio lies within that range"), "{t}");
        // Without repeats, nothing is said about spread.
        let t = table(&[side("h", &[("x", 1.0)]), side("h", &[("x", 1.01)])]);
        assert!(!t.contains('±') && !t.contains('~'), "{t}");
    }

    #[test]
    fn imports_that_differ_in_numjobs_are_said_to_differ_in_numjobs_not_in_source() {
        let fio = |source: &str, numjobs: u32| {
            let mut s = side(source, &[]);
            s.suite = "fio".into();
            s.knobs = serde_json::json!({"source": source, "fio_version": "fio-3.1"});
            s.steps = vec![(
                "iotest".into(),
                serde_json::json!({"rw": "randread", "numjobs": numjobs, "iodepth": 16}),
            )];
            s
        };
        let why = why_different(&fio("a.json", 1), &fio("b.json", 4));
        assert!(why.contains("numjobs 4 vs 1"), "{why}");
        assert!(!why.contains("source"), "{why}");
        // A suite's knobs still say what differs.
        let mut q = side("h2", &[]);
        q.knobs = serde_json::json!({"runs": 5, "preset": "standard"});
        let why = why_different(&side("h", &[]), &q);
        assert!(why.contains("runs 5 vs 3"), "{why}");
    }

    #[test]
    fn a_name_the_reader_gives_is_kept_and_told_apart_by_connection() {
        let mut a = side("h", &[("SEQ read", 1000.0)]);
        let mut b = side("h", &[("SEQ read", 300.0)]);
        for (s, c) in [
            (&mut a, "USB 3.2 Gen 1, UAS"),
            (&mut b, "USB 3.2 Gen 1, BOT"),
        ] {
            s.drive_key = Some(("T7".into(), "S1".into()));
            s.connection = Some(c.into());
            s.drive = "my t7".into();
            s.named = true;
        }
        let mut sides = [a, b];
        label_variants(&mut sides);
        assert_eq!(sides[0].drive, "my t7 (USB 3.2 Gen 1, UAS)");
        assert_eq!(sides[1].drive, "my t7 (USB 3.2 Gen 1, BOT)");
    }
}
