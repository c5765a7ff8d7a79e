//! Writing charts as separate SVG and PNG files, named after chart ids.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::model::Chart;
use crate::palette::GroupPalette;
use crate::png::svg_to_png;
use crate::svg::render_svg;

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
        Ok(format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}\n").into_bytes())
    })
}

/// Writes `<dir>/<id>.png` for every chart at [`PNG_SCALE`], colours from `palette`.
pub fn write_pngs_with<'a>(
    charts: impl IntoIterator<Item = &'a Chart>,
    palette: &GroupPalette,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    write_each(charts, dir, "png", |c| {
        svg_to_png(&render_svg(c, palette)?, PNG_SCALE, &c.id)
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
        std::fs::write(&path, bytes).map_err(io(&path))?;
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
