//! PNG output: our own SVG rasterised by resvg with the shipped DejaVu Sans,
//! so text renders the same on machines with no fonts installed.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia;
use resvg::usvg::{self, fontdb};

use crate::error::ReportError;
use crate::model::Chart;
use crate::palette::GroupPalette;
use crate::svg::render_svg;

/// DejaVu Sans (Bitstream Vera licence, see assets/fonts/DejaVuSans-LICENSE.txt).
static DEJAVU_SANS: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

/// Family name of the shipped font.
pub const SHIPPED_FONT_FAMILY: &str = "DejaVu Sans";

fn font_db() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(DEJAVU_SANS.to_vec());
        for set in [
            fontdb::Database::set_sans_serif_family,
            fontdb::Database::set_serif_family,
            fontdb::Database::set_monospace_family,
            fontdb::Database::set_cursive_family,
            fontdb::Database::set_fantasy_family,
        ] {
            set(&mut db, SHIPPED_FONT_FAMILY);
        }
        Arc::new(db)
    })
    .clone()
}

/// Rasterises an SVG document to PNG bytes at `scale` × its CSS pixel size.
/// Only the shipped font is used; `id` names the chart in errors.
pub fn svg_to_png(svg: &str, scale: f32, id: &str) -> Result<Vec<u8>, ReportError> {
    let err = |why: String| ReportError::Png {
        id: id.to_string(),
        why,
    };
    let opt = usvg::Options {
        font_family: SHIPPED_FONT_FAMILY.to_string(),
        fontdb: font_db(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| err(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| err(format!("cannot scale by {scale}")))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| err("empty image".to_string()))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| err(e.to_string()))
}

/// Renders a chart straight to PNG bytes.
pub fn render_png(
    chart: &Chart,
    palette: &GroupPalette,
    scale: f32,
) -> Result<Vec<u8>, ReportError> {
    let svg = render_svg(chart, palette)?;
    svg_to_png(&svg, scale, &chart.id)
}
