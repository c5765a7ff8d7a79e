//! Writes the sample report (every chart kind, three drives) with its SVG and
//! PNG files: `cargo run -p drivelab-report --example sample_report -- OUT_DIR`.

#[path = "../tests/common/sample.rs"]
mod sample;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "sample-report".into());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let report = sample::full_report(3, 3600);
    report.write(&dir.join("report.html"))?;
    report.write_svgs(dir)?;
    report.write_pngs(dir)?;
    println!("wrote {}", dir.display());
    Ok(())
}
