//! Table components: a plain data table and a CrystalDiskMark-style tile table.

use std::fmt::Write as _;

use crate::palette::GroupPalette;
use crate::svg::escape;
use crate::ticks::fmt_number;

/// A column of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Header text.
    pub name: String,
    /// Unit shown in the header, e.g. "MB/s".
    pub unit: Option<String>,
    /// Right-aligned, tabular figures.
    pub numeric: bool,
}

impl Column {
    /// A text column.
    pub fn text(name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            unit: None,
            numeric: false,
        }
    }

    /// A numeric column with a unit.
    pub fn number(name: impl Into<String>, unit: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            unit: Some(unit.into()),
            numeric: true,
        }
    }
}

/// A row of a [`Table`]; a row with a group hides with that group.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Group (drive) of the row, if any.
    pub group: Option<String>,
    /// Cell texts, one per column.
    pub cells: Vec<String>,
}

/// A plain data table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Caption above the table.
    pub caption: String,
    /// Columns.
    pub columns: Vec<Column>,
    /// Rows.
    pub rows: Vec<Row>,
}

/// One read or write tile: throughput, IOPS and mean latency of a test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tile {
    /// Throughput in decimal MB/s.
    pub mbps: f64,
    /// Operations per second.
    pub iops: f64,
    /// Mean latency in microseconds.
    pub latency_us: f64,
}

/// One test row of a tile table (e.g. "SEQ1M Q8T1").
#[derive(Debug, Clone, PartialEq)]
pub struct TileRow {
    /// Test name.
    pub label: String,
    /// Read result.
    pub read: Tile,
    /// Write result.
    pub write: Tile,
}

/// A CrystalDiskMark-style table of tiles: one row per test, read and write side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct TileTable {
    /// Heading (usually the drive).
    pub title: String,
    /// Group (drive) of the table, if any: it hides with that group.
    pub group: Option<String>,
    /// Test rows.
    pub rows: Vec<TileRow>,
}

fn mbps_text(v: f64) -> String {
    let d = if v.abs() < 100.0 {
        2
    } else if v.abs() < 10_000.0 {
        1
    } else {
        0
    };
    fmt_number(v, d)
}

fn us_text(v: f64) -> String {
    fmt_number(v, if v.abs() < 1000.0 { 1 } else { 0 })
}

fn group_class(palette: &GroupPalette, group: Option<&str>, extra: &str) -> String {
    match group {
        Some(g) => format!(
            r#" class="dl-block dl-g{}{extra}" data-group="{}""#,
            palette.index(g),
            escape(g)
        ),
        None if extra.is_empty() => String::new(),
        None => format!(r#" class="{}""#, extra.trim()),
    }
}

/// Renders a data table as HTML.
pub fn table_html(out: &mut String, t: &Table, palette: &GroupPalette) {
    out.push_str(r#"<div class="dl-table-wrap"><table class="dl-table">"#);
    let _ = write!(out, "<caption>{}</caption><thead><tr>", escape(&t.caption));
    for c in &t.columns {
        let unit = c
            .unit
            .as_ref()
            .map(|u| format!(r#" <span class="dl-unit">({})</span>"#, escape(u)))
            .unwrap_or_default();
        let cls = if c.numeric { r#" class="num""# } else { "" };
        let _ = write!(out, "<th{cls}>{}{unit}</th>", escape(&c.name));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        let _ = write!(out, "<tr{}>", group_class(palette, r.group.as_deref(), ""));
        for (i, cell) in r.cells.iter().enumerate() {
            let numeric = t.columns.get(i).is_some_and(|c| c.numeric);
            let cls = if numeric { r#" class="num""# } else { "" };
            let _ = write!(out, "<td{cls}>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn tile_html(out: &mut String, t: &Tile, kind: &str) {
    let _ = write!(
        out,
        r#"<td class="dl-tile dl-{kind}"><span class="dl-big">{}</span> <span class="dl-unit">MB/s</span><br><span class="dl-small">{} IOPS · {} µs</span></td>"#,
        mbps_text(t.mbps),
        fmt_number(t.iops, 0),
        us_text(t.latency_us)
    );
}

/// Renders a tile table as HTML.
pub fn tiles_html(out: &mut String, t: &TileTable, palette: &GroupPalette) {
    let _ = write!(
        out,
        r#"<div{}><table class="dl-tiles"><caption>{}</caption><thead><tr><th></th><th>Read</th><th>Write</th></tr></thead><tbody>"#,
        group_class(palette, t.group.as_deref(), " dl-tiles-wrap"),
        escape(&t.title)
    );
    for r in &t.rows {
        let _ = write!(out, r#"<tr><th class="dl-test">{}</th>"#, escape(&r.label));
        tile_html(out, &r.read, "read");
        tile_html(out, &r.write, "write");
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}
