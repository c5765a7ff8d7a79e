//! SVG rendering of a [`Chart`]: plain string building, escaped text, one
//! compact `<path>` per series. Every data element carries `class="dl-data dl-gN"`
//! and `data-group`, which the HTML toggles use.

mod layout;
mod series;
mod text;

use std::fmt::Write as _;

use crate::error::ReportError;
use crate::model::{Chart, Mark, Scale, SeriesKind};
use crate::palette::GroupPalette;
use crate::ticks::AxisTicks;

pub use layout::fit_legend_texts;
use layout::Layout;
pub use text::escape;
use text::{num, text_width};

/// Generic font stack: DejaVu Sans (shipped for PNG output) first, then common
/// system sans fonts; never an external font.
pub const FONT_STACK: &str =
    "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Arial, Helvetica, sans-serif";

const INK: &str = "#222";
const MUTED: &str = "#555";
const GRID: &str = "#e2e2e2";
const GRID_MINOR: &str = "#f1f1f1";

/// Renders a chart as a standalone `<svg>` element (no XML declaration), using
/// `palette` for group colours so every chart of a report agrees.
pub fn render_svg(chart: &Chart, palette: &GroupPalette) -> Result<String, ReportError> {
    chart.validate()?;
    let lay = Layout::compute(chart, palette);
    let f = &lay.frame;
    let mut s = String::with_capacity(16 * 1024);
    let w = chart.width;
    let h = chart.height;
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="dl-chart" id="dl-chart-{id}" data-chart="{id}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="{font}" font-size="11" fill="{INK}" role="img" aria-labelledby="dl-title-{id}">"#,
        id = chart.id,
        font = escape(FONT_STACK),
    );
    let _ = write!(
        s,
        r#"<title id="dl-title-{}">{}</title>"#,
        chart.id,
        escape(&chart.title)
    );
    if let Some(sub) = &chart.subtitle {
        let _ = write!(s, "<desc>{}</desc>", escape(sub));
    }
    let _ = write!(
        s,
        r#"<defs><clipPath id="dl-clip-{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
        chart.id,
        num(f.left),
        num(f.top),
        num(f.width()),
        num(f.height())
    );
    let _ = write!(s, r##"<rect width="{w}" height="{h}" fill="#fff"/>"##);
    header(&mut s, chart, &lay);
    legend(&mut s, &lay);
    grid(&mut s, &lay);

    let _ = write!(s, r#"<g clip-path="url(#dl-clip-{})">"#, chart.id);
    for m in &chart.marks {
        if let Mark::XRange { x0, x1, group, .. } = m {
            let a = lay.px_x(*x0).clamp(f.left - 1.0, f.right + 1.0);
            let b = lay.px_x(*x1).clamp(f.left - 1.0, f.right + 1.0);
            let (fill, cls) = mark_style(palette, group.as_deref());
            let _ = write!(
                s,
                r#"<rect class="dl-mark{cls}" x="{}" y="{}" width="{}" height="{}" fill="{fill}" fill-opacity="0.13"/>"#,
                num(a.min(b)),
                num(f.top),
                num((b - a).abs()),
                num(f.height())
            );
        }
    }
    for kind in [
        SeriesKind::Band,
        SeriesKind::Bars,
        SeriesKind::Scatter,
        SeriesKind::Line,
    ] {
        for (i, ser) in chart.series.iter().enumerate() {
            if ser.kind == kind {
                series::draw(&mut s, chart, &lay, palette, i);
            }
        }
    }
    overlay_lines(&mut s, chart, &lay, palette);
    s.push_str("</g>");

    axes(&mut s, chart, &lay);
    mark_labels(&mut s, chart, &lay, palette);
    callouts(&mut s, chart, &lay);
    notes(&mut s, &lay);
    s.push_str("</svg>");
    Ok(s)
}

fn mark_style(palette: &GroupPalette, group: Option<&str>) -> (&'static str, String) {
    match group {
        Some(g) => (
            palette.color(g),
            format!(r#" dl-g{}" data-group="{}"#, palette.index(g), escape(g)),
        ),
        None => ("#777", String::new()),
    }
}

fn header(s: &mut String, chart: &Chart, lay: &Layout) {
    let _ = write!(
        s,
        r#"<text class="dl-title" x="{}" y="{}" font-size="15" font-weight="bold">{}</text>"#,
        num(layout::PAD),
        num(lay.title_y),
        escape(&chart.title)
    );
    if let (Some(sub), Some(y)) = (&chart.subtitle, lay.subtitle_y) {
        let _ = write!(
            s,
            r#"<text class="dl-subtitle" x="{}" y="{}" font-size="12" fill="{MUTED}">{}</text>"#,
            num(layout::PAD),
            num(y),
            escape(sub)
        );
    }
}

fn legend(s: &mut String, lay: &Layout) {
    s.push_str(r#"<g class="dl-legend">"#);
    for e in &lay.legend {
        let _ = write!(
            s,
            r#"<g class="dl-leg dl-g{}" data-group="{}">"#,
            e.group_index,
            escape(&e.group)
        );
        let (x, y) = (e.x, e.y);
        match e.kind {
            layout::Swatch::Line(dash) => {
                let _ = write!(
                    s,
                    r#"<path d="M{} {}h18" stroke="{}" stroke-width="2.2" fill="none"{}/>"#,
                    num(x),
                    num(y - 4.0),
                    e.color,
                    series::dash_attr(dash)
                );
            }
            layout::Swatch::Shape(shape) => {
                let _ = write!(
                    s,
                    r#"<path d="M{} {}{}" fill="{}" transform="translate({} {}) scale(1.6) translate({} {})"/>"#,
                    0,
                    0,
                    series::shape_path(shape),
                    e.color,
                    num(x + 9.0),
                    num(y - 4.0),
                    num(series::shape_start(shape).0),
                    num(series::shape_start(shape).1)
                );
            }
            layout::Swatch::Block(opacity) => {
                let _ = write!(
                    s,
                    r#"<rect x="{}" y="{}" width="18" height="9" fill="{}" fill-opacity="{}"/>"#,
                    num(x),
                    num(y - 8.5),
                    e.color,
                    opacity
                );
            }
            layout::Swatch::Tick => {
                let _ = write!(
                    s,
                    r#"<path d="M{} {}v-10" stroke="{}" stroke-width="1.6"/>"#,
                    num(x + 9.0),
                    num(y + 1.0),
                    e.color
                );
            }
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}">{}</text></g>"#,
            num(x + 23.0),
            num(y),
            escape(&e.text)
        );
    }
    s.push_str("</g>");
}

fn grid(s: &mut String, lay: &Layout) {
    let f = &lay.frame;
    let mut minor = String::new();
    let mut major = String::new();
    for v in &lay.y.minor {
        let y = lay.px_y(*v);
        let _ = write!(minor, "M{} {}H{}", num(f.left), num(y), num(f.right));
    }
    for v in &lay.x.minor {
        let x = lay.px_x(*v);
        let _ = write!(minor, "M{} {}V{}", num(x), num(f.top), num(f.bottom));
    }
    for t in &lay.y.major {
        let y = lay.px_y(t.value);
        let _ = write!(major, "M{} {}H{}", num(f.left), num(y), num(f.right));
    }
    if !lay.x_is_category {
        for t in &lay.x.major {
            let x = lay.px_x(t.value);
            let _ = write!(major, "M{} {}V{}", num(x), num(f.top), num(f.bottom));
        }
    }
    let _ = write!(
        s,
        r#"<g class="dl-grid" fill="none" stroke-width="1"><path d="{minor}" stroke="{GRID_MINOR}"/><path d="{major}" stroke="{GRID}"/></g>"#
    );
}

fn overlay_lines(s: &mut String, chart: &Chart, lay: &Layout, palette: &GroupPalette) {
    let f = &lay.frame;
    // Rows of stall ticks stack up from the bottom; many rows get shorter.
    let rows = chart
        .marks
        .iter()
        .filter(|m| matches!(m, Mark::Ticks { .. }))
        .count()
        .max(1) as f64;
    let row_h = (60.0 / rows).clamp(4.0, 11.0);
    let mut tick_row = 0.0;
    for m in &chart.marks {
        match m {
            Mark::VLine { x, group, .. } => {
                let (color, cls) = mark_style(palette, group.as_deref());
                let _ = write!(
                    s,
                    r#"<path class="dl-mark{cls}" d="M{} {}V{}" stroke="{color}" stroke-width="1.3" stroke-dasharray="5 3" fill="none"/>"#,
                    num(lay.px_x(*x)),
                    num(f.top),
                    num(f.bottom)
                );
            }
            Mark::HLine { y, .. } => {
                let _ = write!(
                    s,
                    r##"<path class="dl-mark" d="M{} {}H{}" stroke="#444" stroke-width="1.2" stroke-dasharray="5 3" fill="none"/>"##,
                    num(f.left),
                    num(lay.px_y(*y)),
                    num(f.right)
                );
            }
            Mark::Ticks { xs, label, group } => {
                let (color, cls) = mark_style(palette, group.as_deref());
                let base = f.bottom - tick_row * row_h;
                tick_row += 1.0;
                let mut d = String::with_capacity(xs.len() * 10);
                for x in xs {
                    if x.is_finite() {
                        let _ = write!(
                            d,
                            "M{} {}v-{}",
                            num(lay.px_x(*x)),
                            num(base),
                            num(row_h - 2.0)
                        );
                    }
                }
                let _ = write!(
                    s,
                    r#"<path class="dl-mark dl-ticks{cls}" d="{d}" stroke="{color}" stroke-width="1.4" fill="none"><title>{}</title></path>"#,
                    escape(label)
                );
            }
            Mark::XRange { .. } | Mark::Point { .. } => {}
        }
    }
}

fn axes(s: &mut String, chart: &Chart, lay: &Layout) {
    let f = &lay.frame;
    let mut d = format!(
        "M{} {}V{}H{}",
        num(f.left),
        num(f.top),
        num(f.bottom),
        num(f.right)
    );
    if lay.y2.is_some() {
        let _ = write!(d, "V{}", num(f.top));
    }
    for t in &lay.x.major {
        let _ = write!(d, "M{} {}v4", num(lay.px_x(t.value)), num(f.bottom));
    }
    for t in &lay.y.major {
        let _ = write!(d, "M{} {}h-4", num(f.left), num(lay.px_y(t.value)));
    }
    if let Some(y2) = &lay.y2 {
        for t in &y2.major {
            let _ = write!(d, "M{} {}h4", num(f.right), num(lay.px_y2(t.value)));
        }
    }
    if lay.y.scale == Scale::Linear && lay.y.lo < 0.0 && lay.y.hi > 0.0 {
        let y0 = lay.px_y(0.0);
        let _ = write!(d, "M{} {}H{}", num(f.left), num(y0), num(f.right));
    }
    let _ = write!(
        s,
        r#"<g class="dl-axes"><path d="{d}" stroke="{INK}" stroke-width="1" fill="none"/>"#
    );
    // A zig-zag on the value axis where it does not start at zero.
    for (on_right, ax) in [(false, Some(&lay.y)), (true, lay.y2.as_ref())] {
        if let Some(ax) = ax {
            if layout::misses_zero(ax) {
                let x = if on_right { f.right } else { f.left };
                let y = f.bottom - 8.0;
                let _ = write!(
                    s,
                    r##"<path class="dl-axis-break" d="M{} {}l4-3 -8-3 4-2" stroke="{INK}" stroke-width="1.2" fill="#fff"/>"##,
                    num(x),
                    num(y)
                );
            }
        }
    }
    s.push_str(r##"<g font-size="11" fill="#333">"##);
    for t in &lay.x.major {
        if !t.label.is_empty() {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                num(lay.px_x(t.value)),
                num(f.bottom + 16.0),
                escape(&t.label)
            );
        }
    }
    for t in &lay.y.major {
        if !t.label.is_empty() {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                num(f.left - 7.0),
                num(lay.px_y(t.value) + 4.0),
                escape(&t.label)
            );
        }
    }
    if let Some(y2) = &lay.y2 {
        for t in &y2.major {
            if !t.label.is_empty() {
                let _ = write!(
                    s,
                    r#"<text x="{}" y="{}">{}</text>"#,
                    num(f.right + 7.0),
                    num(lay.px_y2(t.value) + 4.0),
                    escape(&t.label)
                );
            }
        }
    }
    s.push_str("</g>");
    let _ = write!(
        s,
        r#"<text class="dl-axis-title" x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"#,
        num((f.left + f.right) / 2.0),
        num(f.bottom + 34.0),
        escape(&chart.x.title())
    );
    let ymid = (f.top + f.bottom) / 2.0;
    let _ = write!(
        s,
        r#"<text class="dl-axis-title" transform="translate({} {}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
        num(lay.y_title_x),
        num(ymid),
        escape(&chart.y.title())
    );
    if let (Some(ax), Some(x)) = (&chart.y2, lay.y2_title_x) {
        let _ = write!(
            s,
            r#"<text class="dl-axis-title" transform="translate({} {}) rotate(90)" text-anchor="middle" font-size="12">{}</text>"#,
            num(x),
            num(ymid),
            escape(&ax.title())
        );
    }
    s.push_str("</g>");
}

fn halo_text(s: &mut String, x: f64, y: f64, anchor: &str, color: &str, text: &str, cls: &str) {
    let _ = write!(
        s,
        r##"<text class="dl-label{cls}" x="{}" y="{}" text-anchor="{anchor}" fill="{color}" stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke" font-size="11">{}</text>"##,
        num(x),
        num(y),
        escape(text)
    );
}

/// The labels of vertical lines, laid in rows along the top of the plot so that none
/// covers another (a replay's parts, each a long name a few lines apart, were drawn over
/// each other, cutting each short) and none runs out of the plot.
#[derive(Default)]
struct LabelRows {
    /// Per row, the spans (left, right; px) its labels take.
    rows: Vec<Vec<(f64, f64)>>,
}

impl LabelRows {
    /// Space kept between two labels of a row, px.
    const GAP: f64 = 6.0;
    /// Distance of one row from the next, px.
    const LINE: f64 = 13.0;

    /// Where a label `w` px wide goes for the line at `px`: (x, y, text-anchor). It reads
    /// right of the line, or left of it where the plot ends first, or from the plot's
    /// left edge when it is wider than either side; in the first row with room.
    fn place(&mut self, px: f64, w: f64, f: &layout::Frame) -> (f64, f64, &'static str) {
        let (left, anchor) = if px + 4.0 + w <= f.right {
            (px + 4.0, "start")
        } else if px - 4.0 - w >= f.left {
            (px - 4.0 - w, "end")
        } else {
            (f.left + 2.0, "start")
        };
        let span = (left, left + w);
        let free = |row: &Vec<(f64, f64)>| {
            row.iter()
                .all(|&(a, b)| span.1 + Self::GAP <= a || b + Self::GAP <= span.0)
        };
        let row = match self.rows.iter().position(free) {
            Some(r) => r,
            None => {
                self.rows.push(Vec::new());
                self.rows.len() - 1
            }
        };
        self.rows[row].push(span);
        let x = if anchor == "end" { span.1 } else { span.0 };
        (x, f.top + 12.0 + row as f64 * Self::LINE, anchor)
    }
}

fn mark_labels(s: &mut String, chart: &Chart, lay: &Layout, palette: &GroupPalette) {
    let f = &lay.frame;
    let mut vline_rows = LabelRows::default();
    for m in &chart.marks {
        match m {
            Mark::Point {
                x,
                y,
                label,
                group,
                on_y2,
            } => {
                let px = lay.px_x(*x);
                let py = if *on_y2 { lay.px_y2(*y) } else { lay.px_y(*y) };
                if !(px.is_finite() && py.is_finite()) {
                    continue;
                }
                let (color, cls) = mark_style(palette, group.as_deref());
                let color = if group.is_some() { color } else { INK };
                let _ = write!(
                    s,
                    r##"<g class="dl-mark{cls}"><circle cx="{}" cy="{}" r="6" fill="none" stroke="#fff" stroke-width="4"/><circle cx="{}" cy="{}" r="6" fill="none" stroke="{color}" stroke-width="2"/><circle cx="{}" cy="{}" r="2" fill="{color}"/>"##,
                    num(px),
                    num(py),
                    num(px),
                    num(py),
                    num(px),
                    num(py)
                );
                let w = text_width(label, 11.0);
                let (tx, anchor) = if px + 10.0 + w > f.right {
                    (px - 10.0, "end")
                } else {
                    (px + 10.0, "start")
                };
                let ty = if py - 10.0 < f.top + 12.0 {
                    py + 18.0
                } else {
                    py - 10.0
                };
                halo_text(s, tx, ty, anchor, INK, label, "");
                s.push_str("</g>");
            }
            Mark::VLine {
                x,
                label: Some(label),
                group,
            } => {
                let (color, cls) = mark_style(palette, group.as_deref());
                let color = if group.is_some() { color } else { MUTED };
                let (tx, ty, anchor) = vline_rows.place(lay.px_x(*x), text_width(label, 11.0), f);
                halo_text(s, tx, ty, anchor, color, label, &cls);
            }
            Mark::XRange {
                x0,
                x1,
                label: Some(label),
                group,
            } => {
                let a = lay.px_x(*x0).clamp(f.left, f.right);
                let b = lay.px_x(*x1).clamp(f.left, f.right);
                let (_, cls) = mark_style(palette, group.as_deref());
                halo_text(s, (a + b) / 2.0, f.top + 26.0, "middle", MUTED, label, &cls);
            }
            Mark::HLine {
                y,
                label: Some(label),
            } => {
                halo_text(
                    s,
                    f.right - 4.0,
                    lay.px_y(*y) - 5.0,
                    "end",
                    MUTED,
                    label,
                    "",
                );
            }
            _ => {}
        }
    }
}

fn callouts(s: &mut String, chart: &Chart, lay: &Layout) {
    let Some(y) = lay.callout_y else {
        return;
    };
    let f = &lay.frame;
    let line_h = layout::CALLOUT_LINE;
    let w = chart
        .callouts
        .iter()
        .map(|c| text_width(c, 12.0))
        .fold(0.0, f64::max)
        + 16.0;
    let h = line_h * chart.callouts.len() as f64 + 8.0;
    // In its band above the plot, right-aligned with it: it covers no data.
    let x = (f.right - w).max(f.left);
    let _ = write!(
        s,
        r##"<g class="dl-callout"><rect x="{}" y="{}" width="{}" height="{}" rx="3" fill="#fff" fill-opacity="0.9" stroke="#999"/>"##,
        num(x),
        num(y),
        num(w),
        num(h)
    );
    for (i, c) in chart.callouts.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-size="12">{}</text>"#,
            num(x + 8.0),
            num(y + 4.0 + line_h * (i as f64 + 1.0) - 4.0),
            escape(c)
        );
    }
    s.push_str("</g>");
}

fn notes(s: &mut String, lay: &Layout) {
    for (i, line) in lay.note_lines.iter().enumerate() {
        let (text, auto) = line;
        let cls = if *auto {
            r##" class="dl-axis-note" font-style="italic" fill="#7a3b00""##
        } else {
            r##" class="dl-note" fill="#555""##
        };
        let _ = write!(
            s,
            r#"<text{cls} x="{}" y="{}" font-size="10.5">{}</text>"#,
            num(layout::PAD),
            num(lay.notes_y + i as f64 * layout::NOTE_LINE),
            escape(text)
        );
    }
}

/// Chart-level facts the renderer derived: used by tests and the HTML layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Resolved x axis.
    pub x: AxisTicks,
    /// Resolved primary y axis.
    pub y: AxisTicks,
    /// Resolved secondary y axis.
    pub y2: Option<AxisTicks>,
    /// Notes the renderer adds on its own (axis does not start at 0, points dropped).
    pub auto_notes: Vec<String>,
}

/// Resolves a chart's axes and automatic notes without drawing it.
pub fn resolve(chart: &Chart) -> Result<Resolved, ReportError> {
    chart.validate()?;
    let palette = GroupPalette::for_charts([chart]);
    let lay = Layout::compute(chart, &palette);
    Ok(Resolved {
        x: lay.x,
        y: lay.y,
        y2: lay.y2,
        auto_notes: lay.auto_notes,
    })
}
