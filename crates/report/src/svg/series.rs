//! Drawing of data series as compact paths: decimated polylines, deduplicated
//! scatter marks with relative moves, bar rectangles, band polygons.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::model::{Chart, Dash, Scale, Series, SeriesKind};
use crate::palette::{GroupPalette, Shape};

use super::layout::{bar_slot, effective_dash, Layout};
use super::text::{escape, push_num};

/// Dash patterns in the order a group's lines take them: six, so that the six access
/// specs of an IOMeter run on one drive stay apart.
/// SVG attributes for a dash pattern.
pub fn dash_attr(d: Dash) -> &'static str {
    match d {
        Dash::Solid => "",
        Dash::Dashed => r#" stroke-dasharray="7 4""#,
        Dash::Dotted => r#" stroke-dasharray="1.5 3" stroke-linecap="round""#,
        Dash::DashDot => r#" stroke-dasharray="8 3 1.5 3""#,
        Dash::LongDash => r#" stroke-dasharray="16 4""#,
        Dash::DashDotDot => r#" stroke-dasharray="8 3 1.5 3 1.5 3""#,
    }
}

/// Offset from a mark's centre to where its outline starts.
pub fn shape_start(shape: Shape) -> (f64, f64) {
    match shape {
        Shape::Square => (-1.5, -1.5),
        Shape::Diamond | Shape::TriangleUp => (0.0, -2.0),
        Shape::TriangleDown => (0.0, 2.0),
    }
}

/// Outline of a mark relative to its start point.
pub fn shape_path(shape: Shape) -> &'static str {
    match shape {
        Shape::Square => "h3v3h-3z",
        Shape::Diamond => "l2 2-2 2-2-2z",
        Shape::TriangleUp => "l2.2 3.6h-4.4z",
        Shape::TriangleDown => "l2.2-3.6h-4.4z",
    }
}

fn usable(v: f64, scale: Scale) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// Draws series `idx` of `chart` into `out`.
pub fn draw(out: &mut String, chart: &Chart, lay: &Layout, palette: &GroupPalette, idx: usize) {
    let s = &chart.series[idx];
    let color = palette.color(&s.group);
    let xs = chart.x.scale;
    let ys = if s.on_y2 {
        chart.y2.as_ref().map_or(Scale::Linear, |a| a.scale)
    } else {
        chart.y.scale
    };
    let py = |v: f64| if s.on_y2 { lay.px_y2(v) } else { lay.px_y(v) };
    let mut shown = 0usize;
    // (centre x, top y, value) of each bar that carries its value.
    let mut labels: Vec<(f64, f64, f64)> = Vec::new();
    let mut d = String::with_capacity(s.points.len() * 12);
    let attrs = match s.kind {
        SeriesKind::Line => {
            let mut seg: Vec<(f64, f64)> = Vec::new();
            for &(x, y) in &s.points {
                if usable(x, xs) && usable(y, ys) {
                    seg.push((lay.px_x(x), py(y)));
                    shown += 1;
                } else {
                    polyline(&mut d, &seg, lay);
                    seg.clear();
                }
            }
            polyline(&mut d, &seg, lay);
            // Dense lines (more points than pixels) are drawn thinner so they stay readable.
            let width = if shown as f64 > lay.frame.width() {
                "1.1"
            } else {
                "1.8"
            };
            format!(
                r#"fill="none" stroke="{color}" stroke-width="{width}" stroke-linejoin="round"{}"#,
                dash_attr(effective_dash(chart, idx))
            )
        }
        SeriesKind::Scatter => {
            let pts = s
                .points
                .iter()
                .filter(|&&(x, y)| usable(x, xs) && usable(y, ys))
                .map(|&(x, y)| (lay.px_x(x), py(y)));
            shown = shapes(&mut d, pts, palette.shape(&s.group), true).0;
            format!(r#"fill="{color}" stroke="none""#)
        }
        SeriesKind::Bars => {
            let (n, value_labels) = bars(&mut d, chart, lay, idx, &py);
            (shown, labels) = (n, value_labels);
            format!(r#"fill="{color}" fill-opacity="0.85" stroke="none""#)
        }
        SeriesKind::Band => {
            let mut seg: Vec<(f64, f64, f64)> = Vec::new();
            for (i, &(x, lo)) in s.points.iter().enumerate() {
                let hi = s.upper[i];
                if usable(x, xs) && usable(lo, ys) && usable(hi, ys) {
                    seg.push((lay.px_x(x), py(lo), py(hi)));
                    shown += 1;
                } else {
                    band(&mut d, &seg, lay);
                    seg.clear();
                }
            }
            band(&mut d, &seg, lay);
            format!(r#"fill="{color}" fill-opacity="0.22" stroke="none""#)
        }
    };
    let kind = match s.kind {
        SeriesKind::Line => "line",
        SeriesKind::Scatter => "scatter",
        SeriesKind::Bars => "bars",
        SeriesKind::Band => "band",
    };
    let _ = write!(
        out,
        r#"<path class="dl-data dl-g{}" data-group="{}" data-series="{}" data-kind="{kind}" data-n="{shown}" d="{d}" {attrs}/>"#,
        palette.index(&s.group),
        escape(&s.group),
        escape(&s.name),
    );
    if s.kind == SeriesKind::Line && s.markers {
        let pts = s
            .points
            .iter()
            .filter(|&&(x, y)| usable(x, xs) && usable(y, ys))
            .map(|&(x, y)| (lay.px_x(x), py(y)));
        let mut d = String::new();
        let (_, drawn) = shapes(&mut d, pts, palette.shape(&s.group), false);
        let _ = write!(
            out,
            r#"<path class="dl-data dl-g{}" data-group="{}" data-series="{}" data-kind="markers" data-n="{drawn}" d="{d}" fill="{color}" stroke="none"/>"#,
            palette.index(&s.group),
            escape(&s.group),
            escape(&s.name),
        );
    }
    value_labels(out, s, lay, palette, color, labels);
}

/// The path of bar series `idx` into `d` (`py`: its y axis's pixel), beside the other
/// bar series; returns the bars shown (a zero is shown, not drawn) and the (centre x,
/// top y, value) of each bar that carries its value.
fn bars(
    d: &mut String,
    chart: &Chart,
    lay: &Layout,
    idx: usize,
    py: &dyn Fn(f64) -> f64,
) -> (usize, Vec<(f64, f64, f64)>) {
    let s = &chart.series[idx];
    let mut shown = 0usize;
    let mut labels: Vec<(f64, f64, f64)> = Vec::new();
    let bars: Vec<usize> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind == SeriesKind::Bars)
        .map(|(i, _)| i)
        .collect();
    let nb = bars.len().max(1) as f64;
    let bi = bars.iter().position(|&i| i == idx).unwrap_or(0) as f64;
    let total = if chart.x.categories.is_some() {
        0.8
    } else {
        0.9 * bar_slot(s)
    };
    let bw = total / nb;
    let f = lay.frame;
    let base = py(0.0).clamp(f.top, f.bottom);
    for &(x, y) in &s.points {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        shown += 1;
        if y == 0.0 {
            continue; // nothing to draw, but the value was shown as zero
        }
        // On a category axis a category's bars share its slot among the series
        // that have a value there: no gaps for drives that did not run a test.
        let (bw, bi) = if chart.x.categories.is_some() {
            let here: Vec<usize> = bars
                .iter()
                .copied()
                .filter(|&i| {
                    chart.series[i]
                        .points
                        .iter()
                        .any(|&(px, py)| px == x && py.is_finite())
                })
                .collect();
            let n = here.len().max(1) as f64;
            let pos = here.iter().position(|&i| i == idx).unwrap_or(0) as f64;
            (total / n, pos)
        } else {
            (bw, bi)
        };
        let x0 = lay.px_x(x - total / 2.0 + bi * bw);
        let mut x1 = lay.px_x(x - total / 2.0 + (bi + 1.0) * bw);
        if x1 - x0 < 1.0 {
            x1 = x0 + 1.0;
        }
        // A bar of a few pixels stays visible (its label says how small it is).
        let top = py(y).clamp(f.top - 2.0, f.bottom + 2.0).min(base - 2.0);
        if s.value_labels {
            labels.push(((x0 + x1) / 2.0, top, y));
        }
        d.push('M');
        push_num(d, x0);
        d.push(' ');
        push_num(d, base);
        d.push('V');
        push_num(d, top);
        d.push('H');
        push_num(d, x1);
        d.push('V');
        push_num(d, base);
        d.push('Z');
    }
    (shown, labels)
}

/// Each bar's value, above the bar, or inside its top when that would leave the plot.
fn value_labels(
    out: &mut String,
    s: &Series,
    lay: &Layout,
    palette: &GroupPalette,
    color: &str,
    labels: Vec<(f64, f64, f64)>,
) {
    for (x, top, v) in labels {
        // Above the bar, or inside its top when that would leave the plot.
        let (y, fill) = if top - 16.0 < lay.frame.top {
            (top + 13.0, "#ffffff")
        } else {
            (top - 4.0, color)
        };
        let decimals = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        let _ = write!(
            out,
            r#"<text class="dl-label dl-value dl-g{}" data-group="{}" x="{}" y="{}" font-size="11" text-anchor="middle" fill="{fill}">{}</text>"#,
            palette.index(&s.group),
            escape(&s.group),
            num1(x),
            num1(y),
            escape(&crate::ticks::fmt_number(v, decimals)),
        );
    }
}

/// Appends one mark of `shape` at each pixel point (relative moves after the first);
/// with `dedup`, a point on a pixel already marked is not drawn again. Returns the
/// points given and the marks drawn.
fn shapes(
    d: &mut String,
    pts: impl Iterator<Item = (f64, f64)>,
    shape: Shape,
    dedup: bool,
) -> (usize, usize) {
    let (sx, sy) = shape_start(shape);
    let body = shape_path(shape);
    let mut seen: HashSet<(i32, i32)> = HashSet::new();
    let mut prev: Option<(i32, i32)> = None;
    let (mut given, mut drawn) = (0, 0);
    for (fx, fy) in pts {
        given += 1;
        if !(fx.is_finite() && fy.is_finite()) || fx.abs() > 1e6 || fy.abs() > 1e6 {
            continue;
        }
        let c = (fx.round() as i32, fy.round() as i32);
        if dedup && !seen.insert(c) {
            continue;
        }
        match prev {
            None => {
                d.push('M');
                push_num(d, c.0 as f64 + sx);
                d.push(' ');
                push_num(d, c.1 as f64 + sy);
            }
            Some(p) => {
                let (dx, dy) = (c.0 - p.0, c.1 - p.1);
                let _ = write!(d, "m{dx}");
                if dy >= 0 {
                    d.push(' ');
                }
                let _ = write!(d, "{dy}");
            }
        }
        d.push_str(body);
        prev = Some(c);
        drawn += 1;
    }
    (given, drawn)
}

fn num1(v: f64) -> String {
    format!("{v:.1}")
}

/// Appends one polyline, decimated to first/min/max/last per pixel column
/// when it has more than two points per pixel.
fn polyline(d: &mut String, seg: &[(f64, f64)], lay: &Layout) {
    if seg.is_empty() {
        return;
    }
    let pts = if seg.len() as f64 > 2.0 * lay.frame.width() {
        decimate(seg)
    } else {
        seg.to_vec()
    };
    for (i, &(x, y)) in pts.iter().enumerate() {
        d.push(match i {
            0 => 'M',
            1 => 'L',
            _ => ' ',
        });
        push_num(d, x);
        d.push(' ');
        push_num(d, y);
    }
    if pts.len() == 1 {
        d.push_str("h0.1");
    }
}

fn decimate(seg: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(seg.len() / 2);
    let mut i = 0;
    while i < seg.len() {
        let col = seg[i].0.floor();
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < seg.len() && seg[j].0.floor() == col {
            if seg[j].1 < seg[lo].1 {
                lo = j;
            }
            if seg[j].1 > seg[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = [i, lo, hi, j - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(seg[k]);
                last = k;
            }
        }
        i = j;
    }
    out
}

/// Appends one band polygon (upper edge forward, lower edge back); many points
/// per pixel collapse to the column's envelope.
fn band(d: &mut String, seg: &[(f64, f64, f64)], lay: &Layout) {
    if seg.is_empty() {
        return;
    }
    let pts: Vec<(f64, f64, f64)> = if seg.len() as f64 > 2.0 * lay.frame.width() {
        let mut v: Vec<(f64, f64, f64)> = Vec::new();
        for &(x, lo, hi) in seg {
            match v.last_mut() {
                // Pixel y grows downwards: the lower edge has the larger px value.
                Some(last) if last.0.floor() == x.floor() => {
                    last.1 = last.1.max(lo);
                    last.2 = last.2.min(hi);
                }
                _ => v.push((x, lo, hi)),
            }
        }
        v
    } else {
        seg.to_vec()
    };
    for (i, p) in pts.iter().enumerate() {
        d.push(if i == 0 { 'M' } else { 'L' });
        push_num(d, p.0);
        d.push(' ');
        push_num(d, p.2);
    }
    for p in pts.iter().rev() {
        d.push('L');
        push_num(d, p.0);
        d.push(' ');
        push_num(d, p.1);
    }
    d.push('Z');
}
