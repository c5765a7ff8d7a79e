//! The chart model: what a chart shows, independent of how it is drawn.

use crate::error::ReportError;

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values; ticks in 1-2-5 steps.
    Linear,
    /// Decades (…, 0.1, 1, 10, …); values ≤ 0 cannot be shown and are dropped.
    Log10,
    /// Powers of two (1, 2, 4, …, 512), for queue depths and block sizes.
    Log2,
}

/// One chart axis. `min`/`max` are automatic unless set.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What is measured, e.g. "Throughput".
    pub label: String,
    /// Unit shown in the axis label, e.g. "MB/s". Required except on category axes.
    pub unit: String,
    /// Mapping of values onto the axis.
    pub scale: Scale,
    /// Fixed lower end; `None` = chosen from the data.
    pub min: Option<f64>,
    /// Fixed upper end; `None` = chosen from the data.
    pub max: Option<f64>,
    /// On an automatic linear value axis, stretch the range down (or up) to 0.
    /// On by default: turn it off to zoom, and the chart will say the axis does not start at 0.
    pub include_zero: bool,
    /// Category names: x values are then indices 0, 1, … and ticks carry these names.
    pub categories: Option<Vec<String>>,
}

impl Axis {
    /// A linear axis with an automatic range that includes zero.
    pub fn linear(label: impl Into<String>, unit: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            unit: unit.into(),
            scale: Scale::Linear,
            min: None,
            max: None,
            include_zero: true,
            categories: None,
        }
    }

    /// A base-10 logarithmic axis with an automatic decade range.
    pub fn log10(label: impl Into<String>, unit: impl Into<String>) -> Self {
        Axis {
            scale: Scale::Log10,
            include_zero: false,
            ..Axis::linear(label, unit)
        }
    }

    /// A base-2 logarithmic axis (queue depth, block size).
    pub fn log2(label: impl Into<String>, unit: impl Into<String>) -> Self {
        Axis {
            scale: Scale::Log2,
            include_zero: false,
            ..Axis::linear(label, unit)
        }
    }

    /// A category axis (for grouped bars): value `i` is category `names[i]`.
    pub fn categories(label: impl Into<String>, names: Vec<String>) -> Self {
        Axis {
            categories: Some(names),
            include_zero: false,
            ..Axis::linear(label, "")
        }
    }

    /// Fixes the range (either end may stay automatic).
    pub fn range(mut self, min: Option<f64>, max: Option<f64>) -> Self {
        self.min = min;
        self.max = max;
        self
    }

    /// Lets an automatic linear axis start away from zero (the chart then notes it).
    pub fn tight(mut self) -> Self {
        self.include_zero = false;
        self
    }

    /// The text drawn along the axis: label, unit and, for log axes, the scale.
    pub fn title(&self) -> String {
        let mut parts = Vec::new();
        if !self.unit.is_empty() {
            parts.push(self.unit.clone());
        }
        match self.scale {
            Scale::Linear => {}
            Scale::Log10 => parts.push("log scale".to_string()),
            Scale::Log2 => parts.push("log2 scale".to_string()),
        }
        if parts.is_empty() {
            self.label.clone()
        } else {
            format!("{} ({})", self.label, parts.join(", "))
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesKind {
    /// Connected line; a NaN y breaks it.
    Line,
    /// Small marks, one per point (shape varies by group for colour-blind readers).
    Scatter,
    /// Bars from zero; several bar series side by side share each x slot.
    Bars,
    /// A shaded area between `points` (lower) and `upper`.
    Band,
}

/// Line dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// Continuous line.
    Solid,
    /// Long dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// Dashes and dots alternating.
    DashDot,
    /// Very long dashes.
    LongDash,
    /// A dash and two dots.
    DashDotDot,
}

/// One data series belonging to a group (a drive).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The drive this series belongs to: picks the colour and the toggle that hides it.
    pub group: String,
    /// How it is drawn.
    pub kind: SeriesKind,
    /// (x, y) points; for `Band` the y is the lower edge.
    pub points: Vec<(f64, f64)>,
    /// Upper edge of a `Band`, one per point; empty for other kinds.
    pub upper: Vec<f64>,
    /// Plot against the secondary (right) y axis.
    pub on_y2: bool,
    /// Dash pattern; `None` = by order within the group (solid, dashed, dotted).
    pub dash: Option<Dash>,
    /// Bar width in x units on a numeric axis; `None` = the smallest x spacing.
    pub bar_width: Option<f64>,
    /// Bars carry their values as text (a bar too small to see still reads).
    pub value_labels: bool,
    /// A line also marks each of its points (the group's shape): a curve of a few
    /// measured points (a queue-depth sweep) shows where it was measured.
    pub markers: bool,
}

impl Series {
    fn new(
        kind: SeriesKind,
        name: impl Into<String>,
        group: impl Into<String>,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Series {
            name: name.into(),
            group: group.into(),
            kind,
            points,
            upper: Vec::new(),
            on_y2: false,
            dash: None,
            bar_width: None,
            value_labels: false,
            markers: false,
        }
    }

    /// A line series.
    pub fn line(
        name: impl Into<String>,
        group: impl Into<String>,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Series::new(SeriesKind::Line, name, group, points)
    }

    /// A scatter series.
    pub fn scatter(
        name: impl Into<String>,
        group: impl Into<String>,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Series::new(SeriesKind::Scatter, name, group, points)
    }

    /// A bar series.
    pub fn bars(
        name: impl Into<String>,
        group: impl Into<String>,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Series::new(SeriesKind::Bars, name, group, points)
    }

    /// A band from (x, lower, upper) triples.
    pub fn band(
        name: impl Into<String>,
        group: impl Into<String>,
        points: Vec<(f64, f64, f64)>,
    ) -> Self {
        let upper = points.iter().map(|p| p.2).collect();
        let mut s = Series::new(
            SeriesKind::Band,
            name,
            group,
            points.iter().map(|p| (p.0, p.1)).collect(),
        );
        s.upper = upper;
        s
    }

    /// Moves the series onto the secondary (right) y axis.
    pub fn on_y2(mut self) -> Self {
        self.on_y2 = true;
        self
    }

    /// Sets the dash pattern.
    pub fn dashed(mut self, dash: Dash) -> Self {
        self.dash = Some(dash);
        self
    }

    /// Writes each bar's value on it.
    pub fn labelled(mut self) -> Self {
        self.value_labels = true;
        self
    }

    /// Marks every point of a line with the group's shape.
    pub fn with_markers(mut self) -> Self {
        self.markers = true;
        self
    }

    /// Sets the bar width in x units.
    pub fn with_bar_width(mut self, width: f64) -> Self {
        self.bar_width = Some(width);
        self
    }
}

/// Something drawn over the data: a labelled point, a line, a shaded range.
#[derive(Debug, Clone, PartialEq)]
pub enum Mark {
    /// A ringed point with a label next to it (e.g. the selected queue depth, the cache size).
    Point {
        /// x value.
        x: f64,
        /// y value (on y2 when `on_y2`).
        y: f64,
        /// Text next to the point.
        label: String,
        /// Group the mark belongs to (hidden with it); `None` = always shown.
        group: Option<String>,
        /// Against the secondary y axis.
        on_y2: bool,
    },
    /// A full-height vertical line with an optional label at the top.
    VLine {
        /// x value.
        x: f64,
        /// Text at the top of the line.
        label: Option<String>,
        /// Group the mark belongs to; `None` = always shown.
        group: Option<String>,
    },
    /// A horizontal reference line with an optional label.
    HLine {
        /// y value on the primary axis.
        y: f64,
        /// Text at the right end of the line.
        label: Option<String>,
    },
    /// Short ticks along the bottom of the plot (e.g. stalls), drawn in the group colour.
    Ticks {
        /// x values of the ticks.
        xs: Vec<f64>,
        /// Legend-like name, used in the title tooltip.
        label: String,
        /// Group the ticks belong to; `None` = always shown.
        group: Option<String>,
    },
    /// A shaded x range (scoring window, drop episode) with an optional label.
    XRange {
        /// Start x value.
        x0: f64,
        /// End x value.
        x1: f64,
        /// Text at the top of the range.
        label: Option<String>,
        /// Group the range belongs to; `None` = always shown.
        group: Option<String>,
    },
}

/// A chart: axes, series and marks, plus text.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Stable id: `[A-Za-z0-9_-]+`, unique in a report; names the SVG/PNG file.
    pub id: String,
    /// Title line.
    pub title: String,
    /// Optional line under the title.
    pub subtitle: Option<String>,
    /// Small print under the plot (method notes, caveats).
    pub notes: Vec<String>,
    /// Lines printed in a box in the plot's top-left corner (e.g. scores).
    pub callouts: Vec<String>,
    /// Horizontal axis.
    pub x: Axis,
    /// Primary (left) vertical axis.
    pub y: Axis,
    /// Optional secondary (right) vertical axis.
    pub y2: Option<Axis>,
    /// Data series, drawn in order.
    pub series: Vec<Series>,
    /// Overlays.
    pub marks: Vec<Mark>,
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
}

impl Chart {
    /// A chart of the default size (860 × 440) with no series yet.
    pub fn new(id: impl Into<String>, title: impl Into<String>, x: Axis, y: Axis) -> Self {
        Chart {
            id: id.into(),
            title: title.into(),
            subtitle: None,
            notes: Vec::new(),
            callouts: Vec::new(),
            x,
            y,
            y2: None,
            series: Vec::new(),
            marks: Vec::new(),
            width: 860,
            height: 440,
        }
    }

    /// Sets the subtitle.
    pub fn subtitle(mut self, text: impl Into<String>) -> Self {
        self.subtitle = Some(text.into());
        self
    }

    /// Adds a note under the plot.
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    /// Adds a line to the callout box.
    pub fn callout(mut self, text: impl Into<String>) -> Self {
        self.callouts.push(text.into());
        self
    }

    /// Sets the secondary y axis.
    pub fn with_y2(mut self, axis: Axis) -> Self {
        self.y2 = Some(axis);
        self
    }

    /// Adds a series.
    pub fn with_series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Adds a mark.
    pub fn with_mark(mut self, mark: Mark) -> Self {
        self.marks.push(mark);
        self
    }

    /// Sets the size in CSS pixels.
    pub fn size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }

    /// Checks the chart can be drawn honestly: id, units, series shapes, axes.
    pub fn validate(&self) -> Result<(), ReportError> {
        let bad = |why: String| {
            Err(ReportError::InvalidChart {
                id: self.id.clone(),
                why,
            })
        };
        if self.id.is_empty()
            || !self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return bad("id must be non-empty and use only A-Z a-z 0-9 - _".into());
        }
        if self.width < 200 || self.height < 150 {
            return bad("chart must be at least 200 x 150 px".into());
        }
        let mut axes = vec![("x", &self.x), ("y", &self.y)];
        if let Some(y2) = &self.y2 {
            axes.push(("y2", y2));
        }
        for (name, axis) in &axes {
            if axis.categories.is_none() && axis.unit.trim().is_empty() {
                return bad(format!("{name} axis '{}' has no unit", axis.label));
            }
            if axis.categories.is_some() && *name != "x" {
                return bad("only the x axis can hold categories".into());
            }
            if axis.categories.is_some() && axis.scale != Scale::Linear {
                return bad("a category axis must use the linear scale".into());
            }
            if let (Some(lo), Some(hi)) = (axis.min, axis.max) {
                if lo >= hi || !lo.is_finite() || !hi.is_finite() {
                    return bad(format!("{name} axis range {lo}..{hi} is empty"));
                }
            }
            if axis.scale != Scale::Linear && axis.min.is_some_and(|v| v <= 0.0) {
                return bad(format!("{name} axis is logarithmic but min <= 0"));
            }
        }
        for s in &self.series {
            if s.on_y2 && self.y2.is_none() {
                return bad(format!("series '{}' is on y2 but there is no y2", s.name));
            }
            if s.kind == SeriesKind::Band && s.upper.len() != s.points.len() {
                return bad(format!(
                    "band '{}' has {} lower and {} upper values",
                    s.name,
                    s.points.len(),
                    s.upper.len()
                ));
            }
            if s.kind == SeriesKind::Bars {
                let axis = if s.on_y2 {
                    self.y2.as_ref().unwrap_or(&self.y)
                } else {
                    &self.y
                };
                if axis.scale != Scale::Linear {
                    return bad(format!(
                        "bars '{}' need a linear value axis (bars start at zero)",
                        s.name
                    ));
                }
                if self.x.scale != Scale::Linear {
                    return bad(format!(
                        "bars '{}' need a linear or category x axis",
                        s.name
                    ));
                }
            }
        }
        Ok(())
    }
}
