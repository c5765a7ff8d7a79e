//! `drivelab compare A B …`: the headline numbers of several runs side by side with
//! their ratios to the first. Runs are bundle directories or run ids (or unique
//! prefixes) in the results database. Runs whose config hash differs from the first's
//! are not comparable: refused, or with `--force` compared under a loud warning.

use std::path::Path;

use clap::Args;
use drivelab_report::bundles::{drive_label, open_bundle, summary_of};

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
    /// (name, value, unit) in the run's order.
    pub metrics: Vec<(String, f64, String)>,
}

fn from_bundle(dir: &Path) -> Result<Side, String> {
    let doc = open_bundle(dir)?;
    let metrics = summary_of(&doc)
        .map(|s| {
            s.metrics
                .into_iter()
                .map(|m| (m.name, m.value, m.unit))
                .collect()
        })
        .unwrap_or_default();
    Ok(Side {
        source: dir.display().to_string(),
        drive: drive_label(&doc),
        suite: doc.suite,
        config_hash: doc.config_hash,
        metrics,
    })
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
        out += &format!(
            "{} = {} [{}] {} (config {}){flag}\n",
            key(i),
            s.drive,
            s.suite,
            s.source,
            s.config_hash.chars().take(12).collect::<String>()
        );
    }
    out.push('\n');
    let w = names
        .iter()
        .map(|n| n.0.chars().count())
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
    for (name, unit) in &names {
        let val = |s: &Side| s.metrics.iter().find(|m| &m.0 == name).map(|m| m.1);
        let base = val(&sides[0]);
        let mut line = format!("{name:<w$}  {unit:<6}");
        for (i, s) in sides.iter().enumerate() {
            let v = val(s);
            line += &format!("  {:>12}", v.map_or_else(|| "-".into(), fmt_value));
            if i > 0 {
                let r = match (v, base) {
                    (Some(v), Some(b)) if b != 0.0 => format!("{:.2}x", v / b),
                    _ => "-".into(),
                };
                line += &format!("  {r:>8}");
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    if a.runs.len() < 2 {
        return Err(Fail::usage(format!(
            "RUN: give at least two runs (bundle directories or run ids) to compare, not {}",
            a.runs.len()
        )));
    }
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
        sides.push(Side {
            source: format!("db:{}", rec.run_id),
            drive: match &rec.device_model {
                Some(m) => format!("{m} ({})", rec.device_path),
                None => rec.device_path.clone(),
            },
            suite: rec.suite,
            config_hash: rec.config_hash,
            metrics: rec
                .metrics
                .into_iter()
                .map(|m| (m.name, m.value, m.unit))
                .collect(),
        });
    }
    let differ: Vec<usize> = (1..sides.len())
        .filter(|&i| sides[i].config_hash != sides[0].config_hash)
        .collect();
    if !differ.is_empty() && !a.force {
        let i = differ[0];
        return Err(Fail::usage(format!(
            "RUN {}: its config hash {} differs from the first run's {} ({} vs {} settings): \
             the numbers are not comparable; --force compares them anyway",
            a.runs[i],
            short(&sides[i].config_hash),
            short(&sides[0].config_hash),
            sides[i].suite,
            sides[0].suite
        )));
    }
    if !differ.is_empty() {
        let warn = format!(
            "WARNING: {} of {} runs have a different configuration from the first (config hash \
             differs): the ratios compare unlike tests (--force)",
            differ.len(),
            sides.len()
        );
        eprintln!("{warn}");
        crate::output::stdout::say_line(&format!("!!! {warn}"))?;
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
            metrics: v
                .iter()
                .map(|(n, x)| (n.to_string(), *x, "MB/s".to_string()))
                .collect(),
        }
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
    fn values_keep_four_digits() {
        assert_eq!(fmt_value(1234.56), "1235");
        assert_eq!(fmt_value(123.456), "123.5");
        assert_eq!(fmt_value(1.23456), "1.23");
        assert_eq!(fmt_value(0.012345), "0.0123");
        assert_eq!(fmt_value(3.0), "3");
    }
}
