//! `drivelab report BUNDLE… -o report.html [--png DIR] [--svg DIR] [--label NAME]…`:
//! one self-contained HTML file with every suite's charts and tables; several bundles
//! share charts with one group (toggle) per drive. Every input is checked and the whole
//! report rendered before anything is written.

use std::path::PathBuf;

use clap::Args;
use drivelab_report::bundles::{bundle_report_with, open_bundle, DriveRun, ReportOptions};
use drivelab_report::chart_file_names;
use drivelab_suites::consistency::ConsistencyAnalysis;
use drivelab_suites::SuiteKind;

use crate::fail::Fail;
use crate::out_path::{Kind, OutDir, OutFile};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result bundle directories written by `drivelab run`.
    #[arg(value_name = "BUNDLE", required = true)]
    pub bundles: Vec<PathBuf>,
    /// The HTML file to write (`-`: stdout, which then carries the report alone).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "report.html"
    )]
    pub output: PathBuf,
    /// Drive name of each bundle, in the order of the bundles (give one per bundle, or
    /// none for the target's model and path). Bundles with one name are one drive.
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Also write every chart as a PNG file (named after the chart) into DIR.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// Also write every chart as an SVG file (named after the chart) into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Start the consistency zoom at this time into the test, like 1400s (the
    /// reference's); default: a little before the scoring window.
    #[arg(long = "zoom-from", value_name = "TIME", value_parser = crate::values::duration)]
    pub zoom_from: Option<u64>,
    /// Replace output files drivelab did not write, or of another kind (a trace, a
    /// result document…; a report or chart drivelab wrote is replaced anyway; a results
    /// database or a bundle's file never is).
    #[arg(long)]
    pub force: bool,
}

/// `--label`: none, or one non-empty drive name per `what` (BUNDLE, RUN) of `count`.
pub fn check_labels(labels: &[String], count: usize, what: &str) -> Result<(), Fail> {
    if !labels.is_empty() && labels.len() != count {
        return Err(Fail::usage(format!(
            "--label: given {} time(s) for {count} {}(s); give one NAME per {what}, in order, or none",
            labels.len(),
            what.to_lowercase()
        )));
    }
    if let Some(l) = labels.iter().find(|l| l.trim().is_empty()) {
        return Err(Fail::usage(format!(
            "--label '{l}': a drive name must not be empty"
        )));
    }
    Ok(())
}

pub fn run(a: ReportArgs) -> Result<i32, Fail> {
    if a.bundles.is_empty() {
        return Err(Fail::usage(
            "BUNDLE: give one or more result bundle directories (made by drivelab run)",
        ));
    }
    check_labels(&a.label, a.bundles.len(), "BUNDLE")?;
    let out = OutFile::claim_doc(
        &a.output,
        "-o/--output",
        Kind::Report,
        a.force,
        "the report is written to a regular file only (- puts it on standard output)",
    )?;
    let png = a
        .png
        .as_deref()
        .map(|d| OutDir::claim(d, "--png", Kind::Png, a.force))
        .transpose()?;
    let svg = a
        .svg
        .as_deref()
        .map(|d| OutDir::claim(d, "--svg", Kind::Svg, a.force))
        .transpose()?;
    let mut runs = Vec::new();
    for (i, b) in a.bundles.iter().enumerate() {
        let doc = open_bundle(b).map_err(|e| Fail::usage(format!("BUNDLE {e}")))?;
        runs.push(DriveRun::new(a.label.get(i).cloned(), doc));
    }
    let opts = ReportOptions {
        zoom_from_s: a.zoom_from.map(|ns| ns / 1_000_000_000),
    };
    if let Some(from) = opts.zoom_from_s {
        let longest = runs
            .iter()
            .filter(|r| r.doc.suite == SuiteKind::Consistency)
            .filter_map(|r| r.doc.summary.as_ref())
            .filter_map(|s| s.analysis_as::<ConsistencyAnalysis>())
            .map(|a| a.iops_per_s.len())
            .max();
        match longest {
            Some(n) if (from as usize) < n => {}
            Some(n) => {
                return Err(Fail::usage(format!(
                    "--zoom-from: {from} s is not inside the consistency test ({n} s); give a time before its end, like {}s",
                    n / 2
                )))
            }
            None => {
                return Err(Fail::usage(
                    "--zoom-from: no consistency bundle to zoom into; give it with a consistency BUNDLE",
                ))
            }
        }
    }
    let report = bundle_report_with(&runs, &opts);
    let html = report
        .render()
        .map_err(|e| Fail::failed(format!("cannot render the report: {e}")))?;
    for (dir, ext) in [(&png, "png"), (&svg, "svg")] {
        if let Some(d) = dir {
            d.check_files_beside(chart_file_names(report.charts(), ext), Some(&out))?;
        }
    }
    out.write(html.as_bytes())?;
    // The report on standard output is alone there: what was written is said on stderr.
    let say = |line: String| -> Result<(), Fail> {
        if out.is_stdout() {
            eprintln!("{}", crate::output::stdout::visible(&line));
            Ok(())
        } else {
            crate::output::stdout::say_line(&line)
        }
    };
    let n = report.charts().len();
    say(format!(
        "wrote {} ({n} charts, {} drive(s), {} bundle(s))",
        if out.is_stdout() {
            "the report to standard output".to_string()
        } else {
            out.shown()
        },
        report.palette().groups().len(),
        runs.len()
    ))?;
    type Write = fn(
        &drivelab_report::Report,
        &std::path::Path,
    ) -> Result<Vec<PathBuf>, drivelab_report::ReportError>;
    let images: [(Option<OutDir>, &str, Write); 2] = [
        (png, "PNG", drivelab_report::Report::write_pngs),
        (svg, "SVG", drivelab_report::Report::write_svgs),
    ];
    for (dir, kind, write) in images {
        if let Some(d) = dir {
            let files = write(&report, d.path()).map_err(|e| Fail::failed(e.to_string()))?;
            say(format!(
                "wrote {} {kind} files to {}",
                files.len(),
                d.path().display()
            ))?;
            d.keep();
        }
    }
    Ok(0)
}
