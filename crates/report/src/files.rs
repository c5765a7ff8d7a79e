//! Writing charts as separate SVG and PNG files, named after chart ids.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::model::Chart;
use crate::palette::GroupPalette;
use crate::png::svg_to_png;
use crate::svg::render_svg;

/// In the head of every HTML report and SVG file drivelab writes: how drivelab knows a
/// file it may replace is its own.
pub const GENERATOR_MARK: &str = r#"<meta name="generator" content="drivelab">"#;

/// The PNG text chunk (keyword `Software`) in every chart drivelab writes as PNG.
pub const PNG_SOFTWARE_MARK: &[u8] = b"Software\0drivelab";

/// How every SVG file drivelab writes starts: a file that starts so is drivelab's own.
pub fn svg_start() -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- {GENERATOR_MARK} -->\n")
}

/// Whether `head` (a file's first bytes) is a PNG chart drivelab wrote: the signature,
/// `IHDR`, then drivelab's `Software` text chunk, exactly where drivelab puts it.
pub fn is_own_png(head: &[u8]) -> bool {
    const AFTER_IHDR: usize = 8 + 4 + 4 + 13 + 4;
    let text = AFTER_IHDR + 8;
    head.len() >= text + PNG_SOFTWARE_MARK.len()
        && head.starts_with(b"\x89PNG\r\n\x1a\n")
        && &head[12..16] == b"IHDR"
        && head[AFTER_IHDR..AFTER_IHDR + 4] == (PNG_SOFTWARE_MARK.len() as u32).to_be_bytes()
        && &head[AFTER_IHDR + 4..text] == b"tEXt"
        && head[text..].starts_with(PNG_SOFTWARE_MARK)
}

/// The file names `write_pngs`/`write_svgs` give the charts (`<id>.<ext>`).
pub fn chart_file_names<'a>(charts: impl IntoIterator<Item = &'a Chart>, ext: &str) -> Vec<String> {
    charts
        .into_iter()
        .map(|c| format!("{}.{ext}", c.id))
        .collect()
}

/// `png` with a `tEXt` chunk naming drivelab as its software, right after `IHDR`.
fn mark_png(png: Vec<u8>) -> Vec<u8> {
    // 8 bytes of signature, then IHDR: length (4), type (4), 13 bytes, CRC (4).
    const AFTER_IHDR: usize = 8 + 4 + 4 + 13 + 4;
    if png.len() < AFTER_IHDR || &png[12..16] != b"IHDR" {
        return png;
    }
    let mut chunk = Vec::with_capacity(PNG_SOFTWARE_MARK.len() + 12);
    chunk.extend_from_slice(&(PNG_SOFTWARE_MARK.len() as u32).to_be_bytes());
    chunk.extend_from_slice(b"tEXt");
    chunk.extend_from_slice(PNG_SOFTWARE_MARK);
    let crc = crc32fast::hash(&chunk[4..]);
    chunk.extend_from_slice(&crc.to_be_bytes());
    let mut out = png;
    out.splice(AFTER_IHDR..AFTER_IHDR, chunk);
    out
}

/// Scale of PNG files relative to the chart's CSS size (2 = sharp on high-DPI screens and in print).
pub const PNG_SCALE: f32 = 2.0;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn check_ids(charts: &[&Chart]) -> Result<(), ReportError> {
    let mut seen = HashSet::new();
    for c in charts {
        if !seen.insert(c.id.as_str()) {
            return Err(ReportError::InvalidReport(format!(
                "two charts share the id '{}'",
                c.id
            )));
        }
    }
    Ok(())
}

/// Writes `<dir>/<id>.svg` for every chart (creating `dir`), colours from `palette`.
pub fn write_svgs_with<'a>(
    charts: impl IntoIterator<Item = &'a Chart>,
    palette: &GroupPalette,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    write_each(charts, dir, "svg", |c| {
        let svg = render_svg(c, palette)?;
        Ok(format!("{}{svg}\n", svg_start()).into_bytes())
    })
}

/// Writes `<dir>/<id>.png` for every chart at [`PNG_SCALE`], colours from `palette`.
pub fn write_pngs_with<'a>(
    charts: impl IntoIterator<Item = &'a Chart>,
    palette: &GroupPalette,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    write_each(charts, dir, "png", |c| {
        svg_to_png(&render_svg(c, palette)?, PNG_SCALE, &c.id).map(mark_png)
    })
}

/// Writes `<dir>/<id>.<ext>` for every chart (creating `dir`), its bytes from `render`.
fn write_each<'a>(
    charts: impl IntoIterator<Item = &'a Chart>,
    dir: &Path,
    ext: &str,
    render: impl Fn(&Chart) -> Result<Vec<u8>, ReportError>,
) -> Result<Vec<PathBuf>, ReportError> {
    let charts: Vec<&Chart> = charts.into_iter().collect();
    check_ids(&charts)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut out = Vec::new();
    for c in charts {
        let bytes = render(c)?;
        let path = dir.join(format!("{}.{ext}", c.id));
        drivelab_suites::atomic::write_file(&path, &bytes).map_err(io(&path))?;
        out.push(path);
    }
    Ok(out)
}

/// Writes `<dir>/<id>.svg` for every chart; groups coloured in order of appearance.
pub fn write_svgs<'a>(
    charts: impl IntoIterator<Item = &'a Chart> + Clone,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    let palette = GroupPalette::for_charts(charts.clone());
    write_svgs_with(charts, &palette, dir)
}

/// Writes `<dir>/<id>.png` for every chart; groups coloured in order of appearance.
pub fn write_pngs<'a>(
    charts: impl IntoIterator<Item = &'a Chart> + Clone,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    let palette = GroupPalette::for_charts(charts.clone());
    write_pngs_with(charts, &palette, dir)
}
