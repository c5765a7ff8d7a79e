//! Progress on stderr: a line redrawn in place on a terminal, or (with `--progress
//! always` on a log file, under nohup or ssh) one plain line per finished interval. Each
//! line says how far the run is and when it should end: bytes written, rate and ETA for
//! a byte-bounded fill, the share of the planned time and ETA for a timed run, and the
//! suite's own ETA after it (see [`SuiteClock`]).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use clap::ValueEnum;
use drivelab_engine::result::Progress;
use drivelab_engine::series::IntervalRecord;
use drivelab_engine::size::human_bytes;
use drivelab_engine::spec::Workload;

/// `--progress`: when to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ProgressMode {
    /// A line redrawn in place, only when stderr is a terminal.
    #[default]
    Auto,
    /// Also when stderr is not a terminal: then one plain line per interval.
    Always,
    /// None at all.
    Never,
}

/// How progress is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Off,
    /// One line, redrawn in place (a terminal).
    Redraw,
    /// One plain line per finished interval (a log file).
    Lines,
}

impl ProgressMode {
    /// The style on this process's stderr; `quiet`: the command shows no progress
    /// unless asked to (its stdout carries JSON).
    pub fn style(self, quiet: bool) -> Style {
        self.style_for(quiet, std::io::stderr().is_terminal())
    }

    fn style_for(self, quiet: bool, tty: bool) -> Style {
        match self {
            ProgressMode::Never => Style::Off,
            ProgressMode::Auto if quiet || !tty => Style::Off,
            _ if tty => Style::Redraw,
            _ => Style::Lines,
        }
    }
}

/// What bounds a run, for its share done and its ETA.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// Runs this long (ramp included), in the target's time (virtual for `sim:`).
    Time(u64),
    /// Writes this many bytes (a fill, a precondition pass).
    WriteBytes(u64),
    Unknown,
}

impl Bound {
    pub fn of(w: &Workload) -> Bound {
        match (w.runtime_ns, w.io_size_bytes) {
            (Some(t), _) => Bound::Time(w.ramp_ns + t),
            (None, Some(b)) if w.read_percent() == 0 => Bound::WriteBytes(b),
            _ => Bound::Unknown,
        }
    }

    /// The share of the run done by the end of interval `r`.
    fn done(self, r: &IntervalRecord) -> Option<f64> {
        let (done, total) = match self {
            Bound::Time(t) => (r.start_ns + r.duration_ns, t),
            Bound::WriteBytes(b) => (r.cum_write_bytes, b),
            Bound::Unknown => return None,
        };
        (total > 0).then(|| (done as f64 / total as f64).min(1.0))
    }
}

/// A duration for people: `42 s`, `4 min 10 s`, `1 h 05 min`.
pub fn human_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// The rates of interval `r`, as the line shows them.
fn rates(r: &IntervalRecord) -> String {
    let mut s = String::new();
    for (name, d) in [("read", &r.read), ("write", &r.write)] {
        if d.ops > 0 {
            s += &format!(
                " {name} {:>9.0} IOPS {:>8.1} MB/s",
                d.ops_per_s,
                d.bytes_per_s / 1e6
            );
        }
    }
    if r.ramp {
        s += " (ramp)";
    }
    s
}

/// How far a run bounded by `bound` is, and its ETA, after `wall_s` seconds.
fn how_far(bound: Bound, r: &IntervalRecord, wall_s: f64) -> String {
    let Some(f) = bound.done(r) else {
        return String::new();
    };
    let eta = if f > 0.0 {
        format!(", ETA {}", human_duration(wall_s * (1.0 - f) / f))
    } else {
        String::new()
    };
    match bound {
        Bound::WriteBytes(b) => format!(
            "; {} of {} ({:.0} %){eta}",
            human_bytes(r.cum_write_bytes),
            human_bytes(b),
            f * 100.0
        ),
        Bound::Time(t) => format!(
            "; {:.0} % of {}{eta}",
            f * 100.0,
            human_duration(t as f64 / 1e9)
        ),
        Bound::Unknown => String::new(),
    }
}

/// The text of one progress line (no terminal codes, no line end).
pub fn text(prefix: &str, bound: Bound, p: &Progress<'_>, suffix: &str) -> String {
    let wall = p.wall.as_secs_f64();
    let mut line = format!("{prefix}[{wall:>5.0}s]");
    if let Some(r) = p.latest {
        line += &rates(r);
        line += &how_far(bound, r, wall);
    }
    line + suffix
}

/// A progress display that knows what the running step is bounded by.
pub struct Meter {
    style: Style,
    state: Mutex<State>,
}

struct State {
    prefix: String,
    bound: Bound,
    /// The interval the last plain line showed (a line per interval, never twice).
    shown: Option<u64>,
}

impl Meter {
    pub fn new(style: Style) -> Meter {
        Meter {
            style,
            state: Mutex::new(State {
                prefix: String::new(),
                bound: Bound::Unknown,
                shown: None,
            }),
        }
    }

    pub fn style(&self) -> Style {
        self.style
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new run starts: lines are led by `prefix`, its end is `bound`.
    pub fn start(&self, prefix: &str, bound: Bound) {
        let mut s = self.state();
        s.prefix = prefix.to_string();
        s.bound = bound;
        s.shown = None;
    }

    /// Show `p`, with `suffix` after it (the suite's ETA).
    pub fn show(&self, p: &Progress<'_>, suffix: &str) {
        let (prefix, bound) = {
            let mut s = self.state();
            if self.style == Style::Lines {
                // A plain line only for an interval not shown yet.
                let idx = p.latest.map(|r| r.index);
                if idx.is_none() || idx == s.shown {
                    return;
                }
                s.shown = idx;
            }
            (s.prefix.clone(), s.bound)
        };
        let line = text(&prefix, bound, p, suffix);
        let out = match self.style {
            Style::Off => return,
            Style::Redraw => format!("\r\x1b[2K{line}   "),
            Style::Lines => format!("{line}\n"),
        };
        let _ = std::io::stderr().write_all(out.as_bytes());
    }

    /// A line of its own (a message), above the redrawn progress line.
    pub fn say(&self, text: &str) {
        match self.style {
            Style::Off => {}
            Style::Redraw => eprintln!("\r\x1b[2K{text}"),
            Style::Lines => eprintln!("{text}"),
        }
    }

    /// Erase the redrawn line.
    pub fn clear(&self) {
        if self.style == Style::Redraw {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        }
    }

    /// The engine's callback, or None when nothing is shown.
    pub fn callback(&self) -> Option<impl Fn(&Progress<'_>) + Sync + '_> {
        (self.style != Style::Off).then_some(move |p: &Progress<'_>| self.show(p, ""))
    }
}

/// What a suite's steps will take: time in the target's clock for timed steps (and the
/// idle time between them), bytes for fills; learnt as it goes, the wall time per unit
/// of target time (1 on a real target, far less on a simulated one) and the write rate
/// of fills, so that the ETA covers the steps still to come.
pub struct SuiteClock {
    /// Per step: (target-time nanoseconds of I/O, of idle before it, bytes to write).
    steps: Vec<(u64, u64, u64)>,
    learnt: Mutex<Learnt>,
}

#[derive(Default, Clone, Copy)]
struct Learnt {
    /// Wall seconds per target second, from the timed steps seen so far.
    wall_per_ns: Option<f64>,
    /// Bytes per wall second of fills seen so far.
    fill_rate: Option<f64>,
}

impl SuiteClock {
    pub fn new(plan: &[drivelab_suites::plan::PlannedStep]) -> SuiteClock {
        let steps = plan
            .iter()
            .map(|s| match Bound::of(&s.workload) {
                Bound::Time(t) => (t, s.idle_before_ns, 0),
                Bound::WriteBytes(b) => (0, s.idle_before_ns, b),
                Bound::Unknown => (0, s.idle_before_ns, 0),
            })
            .collect();
        SuiteClock {
            steps,
            learnt: Mutex::new(Learnt::default()),
        }
    }

    fn learnt(&self) -> Learnt {
        *self.learnt.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the plan holds from step `from` on: (seconds of I/O, seconds idle, bytes).
    /// `first`: step `from` is the first this process runs, and a suite never idles
    /// before the first step it runs.
    fn rest(&self, from: usize, first: bool) -> (f64, f64, u64) {
        self.steps
            .iter()
            .enumerate()
            .skip(from)
            .fold((0.0, 0.0, 0), |(t, i, b), (k, s)| {
                let idle = if first && k == from { 0 } else { s.1 };
                (t + s.0 as f64 / 1e9, i + idle as f64 / 1e9, b + s.2)
            })
    }

    /// The line a suite starts with: how long its plan is, from step `from` on (a
    /// resumed suite has done the ones before).
    pub fn plan_line(&self, suite: &str, simulated: bool, from: usize) -> String {
        let (secs, idle, bytes) = self.rest(from, true);
        let n = self.steps.len();
        let steps = if from == 0 {
            format!("{n} steps")
        } else {
            format!("{} of {n} steps to go", n.saturating_sub(from))
        };
        let mut s = format!(
            "drivelab: {suite}: {steps}, {} of timed I/O",
            human_duration(secs)
        );
        if idle > 0.0 {
            s += &format!(" and {} idle between them", human_duration(idle));
        }
        if bytes > 0 {
            s += &format!(
                " and {} to write in fills (their time depends on the target)",
                human_bytes(bytes)
            );
        }
        if simulated {
            s += "; in virtual time: a simulated drive runs through it faster";
        }
        s
    }

    /// Learn from the progress `p` of step `index` (bounded by `bound`).
    pub fn learn(&self, bound: Bound, p: &Progress<'_>) {
        let Some(r) = p.latest else { return };
        let wall = p.wall.as_secs_f64();
        let mut l = self.learnt.lock().unwrap_or_else(|e| e.into_inner());
        match bound {
            Bound::Time(_) => {
                let dev = (r.start_ns + r.duration_ns) as f64;
                if dev > 0.0 {
                    l.wall_per_ns = Some(wall / dev);
                }
            }
            Bound::WriteBytes(_) if wall > 0.0 && r.cum_write_bytes > 0 => {
                l.fill_rate = Some(r.cum_write_bytes as f64 / wall);
            }
            _ => {}
        }
    }

    /// The suite's ETA while step `index` runs (`bound`, progress `p`): the step's
    /// rest plus the steps after it, as far as it can be told. `before` when what runs
    /// comes before step `index` itself (the fill of a fresh test file).
    pub fn eta(&self, index: usize, before: bool, bound: Bound, p: &Progress<'_>) -> String {
        let l = self.learnt();
        let wall = p.wall.as_secs_f64();
        let step_left = p
            .latest
            .and_then(|r| bound.done(r))
            .filter(|&f| f > 0.0)
            .map_or(0.0, |f| wall * (1.0 - f) / f);
        // Before step `index` runs (its fill), it is the first step of this process.
        let (secs, idle, bytes) = if before {
            self.rest(index, true)
        } else {
            self.rest(index + 1, false)
        };
        let timed = (secs + idle) * 1e9 * l.wall_per_ns.unwrap_or(1e-9);
        let mut s = format!(
            " | suite ETA {}",
            human_duration(step_left + timed + bytes as f64 / l.fill_rate.unwrap_or(f64::INFINITY))
        );
        if bytes > 0 && l.fill_rate.is_none() {
            s += &format!(" + writing {}", human_bytes(bytes));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelab_engine::series::IntervalDir;
    use std::time::Duration;

    fn rec(index: u64, end_s: u64, written: u64) -> IntervalRecord {
        IntervalRecord {
            index,
            start_ns: (end_s - 1) * 1_000_000_000,
            duration_ns: 1_000_000_000,
            ramp: false,
            read: IntervalDir::default(),
            write: IntervalDir::default(),
            all: IntervalDir::default(),
            cum_write_bytes: written,
            sensors: Vec::new(),
            over_link_ceiling: false,
        }
    }

    #[test]
    fn modes_follow_the_terminal_unless_told() {
        use ProgressMode::*;
        assert_eq!(Auto.style_for(false, true), Style::Redraw);
        assert_eq!(Auto.style_for(false, false), Style::Off);
        assert_eq!(Auto.style_for(true, true), Style::Off);
        assert_eq!(Always.style_for(false, false), Style::Lines);
        assert_eq!(Always.style_for(true, false), Style::Lines);
        assert_eq!(Always.style_for(false, true), Style::Redraw);
        assert_eq!(Never.style_for(false, true), Style::Off);
    }

    #[test]
    fn a_fill_shows_bytes_done_share_and_eta() {
        let r = rec(3, 4, 1 << 30);
        let p = Progress {
            wall: Duration::from_secs(4),
            latest: Some(&r),
        };
        let t = text("fill ", Bound::WriteBytes(4 << 30), &p, "");
        assert!(t.starts_with("fill [    4s]"), "{t}");
        assert!(t.contains("1 GiB of 4 GiB (25 %), ETA 12 s"), "{t}");
    }

    #[test]
    fn a_timed_run_shows_its_share_of_the_planned_time() {
        let r = rec(29, 30, 0);
        let p = Progress {
            wall: Duration::from_secs(30),
            latest: Some(&r),
        };
        let t = text("", Bound::Time(120_000_000_000), &p, "");
        assert!(t.ends_with("; 25 % of 2 min 00 s, ETA 1 min 30 s"), "{t}");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(42.4), "42 s");
        assert_eq!(human_duration(250.0), "4 min 10 s");
        assert_eq!(human_duration(3900.0), "1 h 05 min");
    }

    #[test]
    fn the_suite_eta_adds_the_steps_to_come_at_the_pace_seen() {
        // Three timed steps of 10 s of target time; the target runs 5x faster than
        // the wall clock (a simulated drive).
        let c = SuiteClock {
            steps: vec![(10_000_000_000, 0, 0); 3],
            learnt: Mutex::new(Learnt::default()),
        };
        let r = rec(4, 5, 0);
        let p = Progress {
            wall: Duration::from_secs(1),
            latest: Some(&r),
        };
        let b = Bound::Time(10_000_000_000);
        c.learn(b, &p);
        // Half of step 0 is left (1 s), then 2 x 10 s of target time at 0.2 s each.
        assert_eq!(c.eta(0, false, b, &p), " | suite ETA 5 s");
        // Before step 0 (a fill), all three steps are still to come.
        assert_eq!(c.eta(0, true, b, &p), " | suite ETA 7 s");
        assert!(c
            .plan_line("x", true, 0)
            .contains("3 steps, 30 s of timed I/O"));
        assert!(c
            .plan_line("x", false, 1)
            .starts_with("drivelab: x: 2 of 3 steps to go, 20 s"));
    }

    #[test]
    fn the_plan_counts_the_idle_between_steps_apart_and_none_before_the_first() {
        // Two 1 s tests with 2 s idle before each: no idle before the first one run.
        let c = SuiteClock {
            steps: vec![(1_000_000_000, 2_000_000_000, 0); 2],
            learnt: Mutex::new(Learnt::default()),
        };
        let line = c.plan_line("quick", false, 0);
        assert!(
            line.ends_with("2 steps, 2 s of timed I/O and 2 s idle between them"),
            "{line}"
        );
        // A resumed suite starts at its step 1: no idle before it either.
        let line = c.plan_line("quick", false, 1);
        assert!(
            line.ends_with("1 of 2 steps to go, 1 s of timed I/O"),
            "{line}"
        );
    }
}
