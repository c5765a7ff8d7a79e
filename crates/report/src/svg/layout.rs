//! Chart layout: data extents, resolved axes, margins, legend rows, notes.

use crate::model::{Axis, Chart, Dash, Mark, Scale, Series, SeriesKind};
use crate::palette::{GroupPalette, Shape};
use crate::ticks::{self, AxisTicks};

use super::text::{text_width, wrap};

/// Outer padding in px.
pub const PAD: f64 = 12.0;
/// Line height of notes in px.
pub const NOTE_LINE: f64 = 14.0;
const LEGEND_ROW: f64 = 18.0;

/// The plot area in px.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Frame {
    pub fn width(&self) -> f64 {
        self.right - self.left
    }
    pub fn height(&self) -> f64 {
        self.bottom - self.top
    }
}

/// What a legend entry shows next to its text.
#[derive(Debug, Clone, Copy)]
pub enum Swatch {
    Line(Dash),
    Shape(Shape),
    Block(f64),
    Tick,
}

/// One placed legend entry.
#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub x: f64,
    pub y: f64,
    pub kind: Swatch,
    pub color: &'static str,
    pub text: String,
    pub group: String,
    pub group_index: usize,
}

/// Height of one callout line.
pub const CALLOUT_LINE: f64 = 16.0;

/// Everything the drawing code needs to place things.
#[derive(Debug, Clone)]
pub struct Layout {
    pub frame: Frame,
    pub x: AxisTicks,
    pub y: AxisTicks,
    pub y2: Option<AxisTicks>,
    pub x_is_category: bool,
    pub title_y: f64,
    pub subtitle_y: Option<f64>,
    /// Top of the callout box, in its band above the plot (None without callouts).
    pub callout_y: Option<f64>,
    pub legend: Vec<LegendEntry>,
    pub note_lines: Vec<(String, bool)>,
    pub notes_y: f64,
    pub auto_notes: Vec<String>,
    pub y_title_x: f64,
    pub y2_title_x: Option<f64>,
}

/// True for a linear value axis whose range does not reach zero.
pub fn misses_zero(ax: &AxisTicks) -> bool {
    ax.scale == Scale::Linear && (ax.lo > 0.0 || ax.hi < 0.0)
}

#[derive(Default)]
struct Extent {
    range: Option<(f64, f64)>,
}

impl Extent {
    /// Adds a value; returns false when it cannot be shown on this scale.
    fn add(&mut self, v: f64, scale: Scale) -> bool {
        if !v.is_finite() {
            return true; // gaps are intentional, not dropped data
        }
        if scale != Scale::Linear && v <= 0.0 {
            return false;
        }
        self.range = Some(match self.range {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
        true
    }
}

fn resolve_axis(axis: &Axis, ext: &Extent, has_bars: bool, is_x: bool, target: usize) -> AxisTicks {
    if let Some(names) = &axis.categories {
        return ticks::categories(names);
    }
    match axis.scale {
        Scale::Linear => {
            // Bars always start at zero, whatever range was asked for.
            let (min, max) = if has_bars {
                (axis.min.map(|m| m.min(0.0)), axis.max.map(|m| m.max(0.0)))
            } else {
                (axis.min, axis.max)
            };
            ticks::linear(
                ext.range,
                min,
                max,
                axis.include_zero || has_bars,
                !is_x,
                target,
            )
        }
        Scale::Log10 => ticks::log10(ext.range, axis.min, axis.max),
        Scale::Log2 => ticks::log2(ext.range, axis.min, axis.max),
    }
}

/// The data's extents on the three axes, and what they ask of them.
#[derive(Default)]
struct Extents {
    x: Extent,
    y: Extent,
    y2: Extent,
    /// Points a log axis cannot show (at or below 0).
    dropped: usize,
    /// Whether bars stand on the y (y2) axis, which then starts at zero.
    bars_y: bool,
    bars_y2: bool,
}

impl Extents {
    fn of(chart: &Chart) -> Extents {
        let mut e = Extents::default();
        e.add_series(chart);
        e.add_marks(chart);
        e
    }

    fn add_series(&mut self, chart: &Chart) {
        let xs = chart.x.scale;
        for s in &chart.series {
            let (ye, ys) = if s.on_y2 {
                (
                    &mut self.y2,
                    chart.y2.as_ref().map_or(Scale::Linear, |a| a.scale),
                )
            } else {
                (&mut self.y, chart.y.scale)
            };
            for (i, &(x, y)) in s.points.iter().enumerate() {
                let mut ok = self.x.add(x, xs);
                ok &= ye.add(y, ys);
                if s.kind == SeriesKind::Band {
                    ok &= ye.add(s.upper[i], ys);
                }
                if !ok {
                    self.dropped += 1;
                }
            }
            if s.kind == SeriesKind::Bars {
                ye.add(0.0, ys);
                if s.on_y2 {
                    self.bars_y2 = true;
                } else {
                    self.bars_y = true;
                }
                if chart.x.categories.is_none() {
                    let half = bar_slot(s) / 2.0;
                    if let Some((lo, hi)) = self.x.range {
                        self.x.add(lo - half, xs);
                        self.x.add(hi + half, xs);
                    }
                }
            }
        }
    }

    fn add_marks(&mut self, chart: &Chart) {
        let xs = chart.x.scale;
        for m in &chart.marks {
            match m {
                Mark::Point { x, y, on_y2, .. } => {
                    self.x.add(*x, xs);
                    if *on_y2 {
                        let scale = chart.y2.as_ref().map_or(Scale::Linear, |a| a.scale);
                        self.y2.add(*y, scale);
                    } else {
                        self.y.add(*y, chart.y.scale);
                    }
                }
                Mark::VLine { x, .. } => {
                    self.x.add(*x, xs);
                }
                Mark::HLine { y, .. } => {
                    self.y.add(*y, chart.y.scale);
                }
                Mark::Ticks { xs: v, .. } => {
                    for x in v {
                        self.x.add(*x, xs);
                    }
                }
                Mark::XRange { x0, x1, .. } => {
                    self.x.add(*x0, xs);
                    self.x.add(*x1, xs);
                }
            }
        }
    }

    /// The y axis and the right one, each with about `target` ticks.
    fn y_axes(&self, chart: &Chart, target: usize) -> (AxisTicks, Option<AxisTicks>) {
        let y = resolve_axis(&chart.y, &self.y, self.bars_y, false, target);
        let y2 = chart
            .y2
            .as_ref()
            .map(|a| resolve_axis(a, &self.y2, self.bars_y2, false, target));
        (y, y2)
    }
}

/// The legend placed in rows from `top`, each entry's text fitted to the width `w`;
/// and the height its rows take (0 without a legend).
fn place_legend(
    chart: &Chart,
    palette: &GroupPalette,
    w: f64,
    top: f64,
) -> (Vec<LegendEntry>, f64) {
    let mut legend_entries = legend_entries(chart, palette);
    // Each entry fits on one row: what the names share gives way to what differs.
    let room = ((w - 2.0 * PAD - 39.0) / text_width("m", 11.0)).max(12.0) as usize;
    let mut texts: Vec<String> = legend_entries.iter().map(|e| e.2.clone()).collect();
    fit_legend_texts(&mut texts, room);
    for (e, t) in legend_entries.iter_mut().zip(texts) {
        e.2 = t;
    }
    let mut legend = Vec::new();
    let mut lx = PAD;
    let mut row = 0usize;
    for (kind, color, text, group) in legend_entries {
        let ew = 23.0 + text_width(&text, 11.0) + 16.0;
        if lx > PAD && lx + ew > w - PAD {
            row += 1;
            lx = PAD;
        }
        legend.push(LegendEntry {
            x: lx,
            y: top + 12.0 + row as f64 * LEGEND_ROW,
            kind,
            color,
            group_index: palette.index(&group),
            text,
            group,
        });
        lx += ew;
    }
    let height = if legend.is_empty() {
        0.0
    } else {
        (row + 1) as f64 * LEGEND_ROW
    };
    (legend, height)
}

/// The notes the chart gets by itself: a linear axis that does not start at 0, points a
/// log axis cannot show.
fn auto_notes(chart: &Chart, y: &AxisTicks, y2: Option<&AxisTicks>, dropped: usize) -> Vec<String> {
    let mut auto_notes = Vec::new();
    if misses_zero(y) {
        let which = if chart.y2.is_some() { "left" } else { "y" };
        auto_notes.push(format!(
            "Note: the {which} axis ({}) does not start at 0.",
            chart.y.label
        ));
    }
    if let (Some(a), Some(t)) = (&chart.y2, y2) {
        if misses_zero(t) {
            auto_notes.push(format!(
                "Note: the right axis ({}) does not start at 0.",
                a.label
            ));
        }
    }
    if dropped > 0 {
        auto_notes.push(format!(
            "Note: {dropped} point(s) at or below 0 cannot be drawn on a log axis and are not shown."
        ));
    }
    auto_notes
}

impl Layout {
    pub fn compute(chart: &Chart, palette: &GroupPalette) -> Layout {
        let w = chart.width as f64;
        let h = chart.height as f64;
        let ext = Extents::of(chart);

        // Vertical layout.
        let title_y = PAD + 13.0;
        let mut top = PAD + 22.0;
        let subtitle_y = chart.subtitle.as_ref().map(|_| {
            let y = top + 11.0;
            top += 18.0;
            y
        });
        let (legend, legend_height) = place_legend(chart, palette, w, top);
        top += legend_height;
        // Callouts get their own band above the plot, so they never cover data.
        let callout_y = (!chart.callouts.is_empty()).then(|| {
            let y = top + 6.0;
            top += CALLOUT_LINE * chart.callouts.len() as f64 + 8.0 + 6.0;
            y
        });
        let plot_top = top + 10.0;

        // Automatic notes, then the chart's own, wrapped to the width.
        let max_chars = ((w - 2.0 * PAD) / (10.5 * 0.6)).max(20.0) as usize;

        // The y axes need only the plot height.
        let y_target = |ph: f64| ((ph / 45.0).round() as usize).clamp(3, 10);

        // First pass with the user's notes to get the height; auto notes are
        // decided after the axes are known, then the layout is settled.
        let mut note_lines: Vec<(String, bool)> = chart
            .notes
            .iter()
            .flat_map(|n| wrap(n, max_chars).into_iter().map(|l| (l, false)))
            .collect();
        let bottom_for = |n: usize| h - PAD - n as f64 * NOTE_LINE - 40.0;
        let mut plot_bottom = bottom_for(note_lines.len());
        let (mut y, mut y2) = ext.y_axes(chart, y_target(plot_bottom - plot_top));
        let auto_notes = auto_notes(chart, &y, y2.as_ref(), ext.dropped);
        if !auto_notes.is_empty() {
            for n in &auto_notes {
                note_lines.extend(wrap(n, max_chars).into_iter().map(|l| (l, true)));
            }
            plot_bottom = bottom_for(note_lines.len());
            (y, y2) = ext.y_axes(chart, y_target(plot_bottom - plot_top));
        }
        let plot_bottom = plot_bottom.max(plot_top + 40.0);
        let notes_y = plot_bottom + 52.0;

        // Horizontal layout.
        let label_w = |t: &AxisTicks| {
            t.major
                .iter()
                .map(|k| text_width(&k.label, 11.0))
                .fold(0.0, f64::max)
        };
        let left = PAD + 16.0 + label_w(&y) + 10.0;
        let y2_title_x = y2.as_ref().map(|_| w - PAD - 11.0);
        let right = match &y2 {
            Some(t) => w - (PAD + 16.0 + label_w(t) + 10.0),
            None => w - PAD - 14.0,
        };
        let pw = (right - left).max(40.0);
        let x_target = ((pw / 90.0).round() as usize).clamp(2, 12);
        let x = resolve_axis(&chart.x, &ext.x, false, true, x_target);
        Layout {
            frame: Frame {
                left,
                right: left + pw,
                top: plot_top,
                bottom: plot_bottom,
            },
            x,
            y,
            y2,
            x_is_category: chart.x.categories.is_some(),
            title_y,
            subtitle_y,
            callout_y,
            legend,
            note_lines,
            notes_y,
            auto_notes,
            y_title_x: PAD + 11.0,
            y2_title_x,
        }
    }

    pub fn px_x(&self, v: f64) -> f64 {
        self.frame.left + self.x.fraction(v) * self.frame.width()
    }

    pub fn px_y(&self, v: f64) -> f64 {
        self.frame.bottom - self.y.fraction(v) * self.frame.height()
    }

    pub fn px_y2(&self, v: f64) -> f64 {
        match &self.y2 {
            Some(t) => self.frame.bottom - t.fraction(v) * self.frame.height(),
            None => self.px_y(v),
        }
    }
}

/// Shortens legend texts longer than `room` characters so that each still says what
/// sets it apart: two names alike up to their ends (one drive's bundles, "drive (sim:…)
/// · default" and "… · 25 % OP") keep their start and their own end, the shared middle
/// elided ("drive (sim:cap… · 25 % OP"); a name alone is cut at its end. Texts that
/// fit are left as they are.
pub fn fit_legend_texts(texts: &mut [String], room: usize) {
    if texts.iter().all(|t| t.chars().count() <= room) {
        return;
    }
    let chars: Vec<Vec<char>> = texts.iter().map(|t| t.chars().collect()).collect();
    // The start the texts share (all of them, when more than one).
    let shared = if chars.len() > 1 {
        let first = &chars[0];
        (0..first.len())
            .take_while(|&i| chars.iter().all(|c| c.get(i) == Some(&first[i])))
            .count()
    } else {
        0
    };
    for (t, c) in texts.iter_mut().zip(&chars) {
        if c.len() <= room {
            continue;
        }
        // What differs begins at the last separator before the first difference
        // (" · ", a space), so "· 25 % OP" stays whole.
        let prefix: String = c[..shared].iter().collect();
        let tail_at = prefix
            .rfind(" · ")
            .map(|b| prefix[..b + 1].chars().count())
            .or_else(|| prefix.rfind(' ').map(|b| prefix[..b + 1].chars().count()))
            .unwrap_or(shared);
        let tail: String = c[tail_at..].iter().collect();
        let tail_len = c.len() - tail_at;
        *t = if shared > 0 && tail_len + 3 <= room {
            let head: String = c[..(room - tail_len - 2).min(tail_at)].iter().collect();
            format!("{}… {}", head.trim_end(), tail)
        } else {
            let head: String = c[..room - 1].iter().collect();
            format!("{head}…")
        };
    }
}

fn legend_entries(
    chart: &Chart,
    palette: &GroupPalette,
) -> Vec<(Swatch, &'static str, String, String)> {
    let mut out = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let kind = match s.kind {
            SeriesKind::Line => Swatch::Line(effective_dash(chart, i)),
            SeriesKind::Scatter => Swatch::Shape(palette.shape(&s.group)),
            SeriesKind::Bars => Swatch::Block(0.85),
            SeriesKind::Band => Swatch::Block(0.3),
        };
        let text = if s.on_y2 {
            format!("{} (right axis)", s.name)
        } else {
            s.name.clone()
        };
        out.push((kind, palette.color(&s.group), text, s.group.clone()));
    }
    // Tick rows get an entry only for a group no series already names; their
    // label is always on the ticks themselves as a tooltip.
    for m in &chart.marks {
        if let Mark::Ticks {
            label,
            group: Some(g),
            ..
        } = m
        {
            if !chart.series.iter().any(|s| &s.group == g) {
                out.push((Swatch::Tick, palette.color(g), label.clone(), g.clone()));
            }
        }
    }
    out
}

const DASHES: [Dash; 6] = [
    Dash::Solid,
    Dash::Dashed,
    Dash::Dotted,
    Dash::DashDot,
    Dash::LongDash,
    Dash::DashDotDot,
];

/// Dash of line series `idx`: its own, else the next of [`DASHES`] by order within its
/// group.
pub fn effective_dash(chart: &Chart, idx: usize) -> Dash {
    let s = &chart.series[idx];
    if let Some(d) = s.dash {
        return d;
    }
    let before = chart.series[..idx]
        .iter()
        .filter(|o| o.group == s.group && o.kind == SeriesKind::Line)
        .count();
    DASHES[before % DASHES.len()]
}

/// Width of one bar slot in x units: the given width or the smallest x spacing.
pub fn bar_slot(s: &Series) -> f64 {
    if let Some(w) = s.bar_width {
        return w;
    }
    let mut xs: Vec<f64> = s
        .points
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    let min = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    if min.is_finite() {
        min
    } else {
        1.0
    }
}
