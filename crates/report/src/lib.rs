//! drivelab-report turns numbers into pictures and documents: a generic,
//! data-driven chart model ([`Chart`]), an SVG renderer of our own
//! ([`render_svg`]), PNG output through resvg with a shipped font
//! ([`render_png`], [`write_pngs`]), and one self-contained, offline HTML
//! report ([`Report`]) with per-drive toggles; and the mapping of drivelab's
//! result bundles to those charts and tables ([`bundles`]).

pub mod bundles;
mod error;
mod files;
mod html;
mod model;
mod palette;
mod png;
mod svg;
pub mod ticks;

pub use error::ReportError;
pub use files::{
    chart_file_names, is_own_png, svg_start, write_pngs, write_pngs_with, write_svgs,
    write_svgs_with, GENERATOR_MARK, PNG_SCALE, PNG_SOFTWARE_MARK,
};
pub use html::{html_start, Block, Column, Report, Row, Section, Table, Tile, TileRow, TileTable};
pub use model::{Axis, Chart, Dash, Mark, Scale, Series, SeriesKind};
pub use palette::{GroupPalette, Shape, COLORS};
pub use png::{render_png, svg_to_png, SHIPPED_FONT_FAMILY};
pub use svg::{escape, fit_legend_texts, render_svg, resolve, Resolved, FONT_STACK};
pub use ticks::{fmt_bytes, fmt_number};
