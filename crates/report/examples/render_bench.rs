//! Renders the consistency charts (log, linear, zoom, histogram) of 10 drives ×
//! 3600 one-second points into one HTML report and prints how long it took.
//! `cargo run --release -p drivelab-report --example render_bench [-- OUT_DIR]`
//! also writes the report, SVGs and PNGs to OUT_DIR.

#[path = "../tests/common/sample.rs"]
mod sample;

use std::time::Instant;

use drivelab_report::{GroupPalette, Report, Section};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let names = sample::drive_names(10);
    let t0 = Instant::now();
    let charts = sample::consistency_charts(&names, 3600);
    let build = t0.elapsed();

    let mut section = Section::new("Consistency");
    for c in charts.iter().cloned() {
        section = section.chart(c);
    }
    let report = Report::new("render bench").section(section);

    // Warm-up, then the timed runs.
    let _ = report.render()?;
    let runs = 5;
    let t1 = Instant::now();
    let mut bytes = 0;
    for _ in 0..runs {
        bytes = report.render()?.len();
    }
    let html = t1.elapsed() / runs;

    let palette = GroupPalette::for_charts(&charts);
    let t2 = Instant::now();
    for c in &charts {
        let _ = drivelab_report::render_png(c, &palette, 1.0)?;
    }
    let png = t2.elapsed();

    let points: usize = charts
        .iter()
        .flat_map(|c| c.series.iter())
        .map(|s| s.points.len())
        .sum();
    println!(
        "data: {} charts, {} series, {} points (built in {:.1?})",
        charts.len(),
        charts.iter().map(|c| c.series.len()).sum::<usize>(),
        points,
        build
    );
    println!(
        "html report (SVG of all charts + document): {:.1?} per render, {:.2} MB",
        html,
        bytes as f64 / 1e6
    );
    println!("png at 1x of all {} charts: {:.1?}", charts.len(), png);

    if let Some(dir) = std::env::args().nth(1) {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir)?;
        report.write(&dir.join("bench.html"))?;
        report.write_svgs(dir)?;
        report.write_pngs(dir)?;
        println!("wrote {}", dir.display());
    }
    Ok(())
}
