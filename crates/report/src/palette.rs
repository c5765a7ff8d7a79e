//! Group (drive) colours and marker shapes, shared by every chart of a report.

use crate::model::{Chart, Mark};

/// Colour-blind-safe palette: Okabe–Ito first, then Paul Tol's muted dark tones,
/// ordered so that neighbours differ in hue and lightness. Past ten groups the
/// colours repeat, and the scatter marker shape (four shapes) still helps tell them apart.
pub const COLORS: [&str; 10] = [
    "#0072B2", // blue
    "#D55E00", // vermillion
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#E69F00", // orange
    "#56B4E9", // sky blue
    "#332288", // indigo
    "#882255", // wine
    "#999933", // olive
    "#555555", // grey
];

/// Scatter marker shapes, cycled by group index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Filled square.
    Square,
    /// Filled diamond.
    Diamond,
    /// Filled triangle pointing up.
    TriangleUp,
    /// Filled triangle pointing down.
    TriangleDown,
}

/// The groups of a report in a fixed order: group `i` always gets `COLORS[i % 10]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupPalette {
    groups: Vec<String>,
}

impl GroupPalette {
    /// A palette with the given groups, in this order.
    pub fn new(groups: Vec<String>) -> Self {
        let mut p = GroupPalette::default();
        for g in groups {
            p.add(&g);
        }
        p
    }

    /// The groups of `charts` in order of first appearance (series, then marks).
    pub fn for_charts<'a>(charts: impl IntoIterator<Item = &'a Chart>) -> Self {
        let mut p = GroupPalette::default();
        for c in charts {
            p.add_chart(c);
        }
        p
    }

    /// Adds the groups of one chart that are not known yet.
    pub fn add_chart(&mut self, chart: &Chart) {
        for s in &chart.series {
            self.add(&s.group);
        }
        for m in &chart.marks {
            if let Some(g) = mark_group(m) {
                self.add(g);
            }
        }
    }

    /// Adds a group at the end unless it is already known.
    pub fn add(&mut self, group: &str) {
        if !self.groups.iter().any(|g| g == group) {
            self.groups.push(group.to_string());
        }
    }

    /// The groups in order.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// Index of a group; unknown groups get an index past the known ones.
    pub fn index(&self, group: &str) -> usize {
        self.groups
            .iter()
            .position(|g| g == group)
            .unwrap_or(self.groups.len())
    }

    /// Colour of a group.
    pub fn color(&self, group: &str) -> &'static str {
        COLORS[self.index(group) % COLORS.len()]
    }

    /// Scatter marker shape of a group.
    pub fn shape(&self, group: &str) -> Shape {
        match self.index(group) % 4 {
            0 => Shape::Square,
            1 => Shape::Diamond,
            2 => Shape::TriangleUp,
            _ => Shape::TriangleDown,
        }
    }
}

/// The group a mark belongs to, if any.
pub fn mark_group(m: &Mark) -> Option<&str> {
    match m {
        Mark::Point { group, .. }
        | Mark::VLine { group, .. }
        | Mark::Ticks { group, .. }
        | Mark::XRange { group, .. } => group.as_deref(),
        Mark::HLine { .. } => None,
    }
}
