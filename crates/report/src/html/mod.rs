//! The self-contained HTML report: inline CSS, inline SVG charts, a few lines
//! of inline JavaScript for the drive toggles, and a Content-Security-Policy
//! that forbids every fetch, so the file works offline from anywhere.

mod assets;
mod tables;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::files;
use crate::model::Chart;
use crate::palette::GroupPalette;
use crate::svg::{escape, render_svg};

/// How every HTML report drivelab writes starts, up to and with its generator mark:
/// a file that starts so is drivelab's own (it may be replaced).
pub fn html_start() -> String {
    format!(
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
            r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#,
            "{}"
        ),
        assets::CSP,
        crate::files::GENERATOR_MARK
    )
}

pub use tables::{Column, Row, Table, Tile, TileRow, TileTable};

/// One piece of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph of plain text.
    Text(String),
    /// A caveat the reader must not miss (an unfinished run, unlike settings), shown
    /// boxed.
    Warning(String),
    /// A chart, inlined as SVG (boxed: charts are much larger than the other blocks).
    Chart(Box<Chart>),
    /// A data table.
    Table(Table),
    /// A CrystalDiskMark-style tile table.
    Tiles(TileTable),
}

/// A titled section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Heading.
    pub title: String,
    /// Content, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section.
    pub fn new(title: impl Into<String>) -> Self {
        Section {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Adds a paragraph.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// Puts a paragraph at the top of the section (caveats added later go above it).
    pub fn text_first(mut self, text: impl Into<String>) -> Self {
        self.blocks.insert(0, Block::Text(text.into()));
        self
    }

    /// Puts caveats at the top of the section, in order, before everything else.
    pub fn warnings_first(mut self, texts: Vec<String>) -> Self {
        self.blocks
            .splice(0..0, texts.into_iter().map(Block::Warning));
        self
    }

    /// Adds a chart.
    pub fn chart(mut self, chart: Chart) -> Self {
        self.blocks.push(Block::Chart(Box::new(chart)));
        self
    }

    /// Adds a table.
    pub fn table(mut self, table: Table) -> Self {
        self.blocks.push(Block::Table(table));
        self
    }

    /// Adds a tile table.
    pub fn tiles(mut self, tiles: TileTable) -> Self {
        self.blocks.push(Block::Tiles(tiles));
        self
    }
}

/// A whole report: title, metadata, sections.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Document title.
    pub title: String,
    /// Key/value facts shown under the title (date, host, tool version, …).
    pub meta: Vec<(String, String)>,
    /// Groups (drives) in the order their colours and toggles should follow;
    /// groups not listed are appended in order of appearance.
    pub groups: Vec<String>,
    /// Sections, in order.
    pub sections: Vec<Section>,
}

impl Report {
    /// An empty report.
    pub fn new(title: impl Into<String>) -> Self {
        Report {
            title: title.into(),
            ..Report::default()
        }
    }

    /// Adds a metadata entry.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.push((key.into(), value.into()));
        self
    }

    /// Fixes the group order (colours, toggle buttons).
    pub fn groups(mut self, groups: Vec<String>) -> Self {
        self.groups = groups;
        self
    }

    /// Adds a section.
    pub fn section(mut self, section: Section) -> Self {
        self.sections.push(section);
        self
    }

    /// All charts, in document order.
    pub fn charts(&self) -> Vec<&Chart> {
        self.sections
            .iter()
            .flat_map(|s| s.blocks.iter())
            .filter_map(|b| match b {
                Block::Chart(c) => Some(c.as_ref()),
                _ => None,
            })
            .collect()
    }

    /// The report's group palette: listed groups first, then every group found
    /// in charts, tile tables and table rows, in document order.
    pub fn palette(&self) -> GroupPalette {
        let mut p = GroupPalette::new(self.groups.clone());
        for b in self.sections.iter().flat_map(|s| s.blocks.iter()) {
            match b {
                Block::Chart(c) => p.add_chart(c),
                Block::Tiles(t) => {
                    if let Some(g) = &t.group {
                        p.add(g);
                    }
                }
                Block::Table(t) => {
                    for r in &t.rows {
                        if let Some(g) = &r.group {
                            p.add(g);
                        }
                    }
                }
                Block::Text(_) | Block::Warning(_) => {}
            }
        }
        p
    }

    /// Renders the whole document.
    pub fn render(&self) -> Result<String, ReportError> {
        let palette = self.palette();
        let mut ids = HashSet::new();
        for c in self.charts() {
            if !ids.insert(c.id.as_str()) {
                return Err(ReportError::InvalidReport(format!(
                    "two charts share the id '{}'",
                    c.id
                )));
            }
        }
        let mut out = String::with_capacity(256 * 1024);
        out.push_str(&html_start());
        let _ = write!(out, "<title>{}</title><style>", escape(&self.title));
        out.push_str(assets::CSS);
        out.push_str(&assets::group_css(palette.groups().len()));
        out.push_str("</style></head><body>\n");
        let _ = write!(out, "<header><h1>{}</h1>", escape(&self.title));
        if !self.meta.is_empty() {
            out.push_str(r#"<dl class="dl-meta">"#);
            for (k, v) in &self.meta {
                let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
            }
            out.push_str("</dl>");
        }
        out.push_str("</header>\n");
        if palette.groups().len() > 1 {
            toggle_bar(&mut out, &palette);
        }
        out.push_str("<main>\n");
        for (si, s) in self.sections.iter().enumerate() {
            let _ = write!(
                out,
                r#"<section id="dl-sec-{si}"><h2>{}</h2>"#,
                escape(&s.title)
            );
            for b in &s.blocks {
                match b {
                    Block::Text(t) => {
                        let _ = write!(out, "<p>{}</p>", escape(t));
                    }
                    Block::Warning(t) => {
                        let _ = write!(out, r#"<p class="dl-warn">⚠ {}</p>"#, escape(t));
                    }
                    Block::Chart(c) => {
                        let _ = write!(out, r#"<figure class="dl-figure" id="fig-{}">"#, c.id);
                        out.push_str(&render_svg(c, &palette)?);
                        out.push_str("</figure>");
                    }
                    Block::Table(t) => tables::table_html(&mut out, t, &palette),
                    Block::Tiles(t) => tables::tiles_html(&mut out, t, &palette),
                }
                out.push('\n');
            }
            out.push_str("</section>\n");
        }
        out.push_str("</main>\n<script>");
        out.push_str(assets::JS);
        out.push_str("</script></body></html>\n");
        Ok(out)
    }

    /// Renders and writes the document to `path`.
    pub fn write(&self, path: &Path) -> Result<(), ReportError> {
        let html = self.render()?;
        drivelab_suites::atomic::write_file(path, html.as_bytes()).map_err(|source| {
            ReportError::Io {
                path: path.to_path_buf(),
                source,
            }
        })
    }

    /// Writes every chart as `<dir>/<id>.svg`, in the report's colours.
    pub fn write_svgs(&self, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        files::write_svgs_with(self.charts(), &self.palette(), dir)
    }

    /// Writes every chart as `<dir>/<id>.png`, in the report's colours.
    pub fn write_pngs(&self, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        files::write_pngs_with(self.charts(), &self.palette(), dir)
    }
}

fn toggle_bar(out: &mut String, palette: &GroupPalette) {
    out.push_str(
        r#"<nav id="dl-toggles" class="dl-toggles" hidden aria-label="Show or hide drives"><span class="dl-toggles-label">Drives:</span>"#,
    );
    for g in palette.groups() {
        let i = palette.index(g);
        let _ = write!(
            out,
            r#"<button type="button" class="dl-tog dl-g{i}" data-g="{i}" data-group="{}" aria-pressed="true"><span class="dl-sw" style="background:{}"></span>{}</button>"#,
            escape(g),
            palette.color(g),
            escape(g)
        );
    }
    out.push_str(
        r#"<button type="button" class="dl-tog-all" data-all="1">Show all</button></nav>"#,
    );
    out.push('\n');
}
