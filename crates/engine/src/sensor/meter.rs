//! An external meter: a long-running user command (`--sensor-cmd`) that prints one
//! reading per line — a USB-C power tester, a lab supply, a programmable power module, or
//! any other sensor. A line is a bare number (watts), a number with a unit (`5.1 W`,
//! `12.02 V 0.43 A`, `450 mA`), or named values with units (`vbus=5.02V ibus=1.21A`,
//! `temp=41.5 C`), separated by spaces, commas or semicolons; volts and amps on one line
//! with no watts also give their product as `power`.
//!
//! Lines are read on a thread of their own and stamped on arrival (CLOCK_MONOTONIC); the
//! run's sampling thread asks once per interval for the mean of each value over the
//! lines that arrived since it last asked, stamped with the start of that span so the
//! value lands in the interval it describes. Nothing here is on the I/O path. A span with
//! no line gives the latest value if it is under [`STALE_NS`] old; after a line that
//! cannot be read, or once the command has ended, a span with no good line is null, and
//! the run's notes say what happened. The command runs in a process group of its own and
//! is killed (the whole group) and reaped when the source is dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::{SensorReading, SensorSource};

/// How old the latest reading may be to stand for a span in which no line arrived.
pub const STALE_NS: u64 = 2_000_000_000;

/// How closely two samples' run-clock and CLOCK_MONOTONIC gaps agree when both were
/// taken in the same run.
const SAME_CLOCK_NS: u64 = 50_000_000;

/// The most distinct values a meter may have; further names are skipped.
pub const MAX_CHANNELS: usize = 32;
/// The longest line read; a longer one is skipped as not a reading.
pub const MAX_LINE_BYTES: u64 = 4096;

/// The source name of every meter reading.
pub const SOURCE: &str = "meter";

/// One value of a line: name, unit, value.
pub type Value = (String, String, f64);

/// What the reader thread hands over.
#[derive(Default)]
struct Shared {
    /// Each channel's sum and count over the good lines not yet taken (memory bounded
    /// by [`MAX_CHANNELS`], however fast the meter prints).
    sums: Vec<(String, String, f64, u64)>,
    /// The latest good line (kept after being taken, for spans with none).
    latest: Option<(u64, Vec<Value>)>,
    /// A line that could not be read came after the latest good one.
    garbage_since_good: bool,
    garbage_count: u64,
    /// Of them, lines that were readings, of values no meter reads (`plausible`).
    implausible_count: u64,
    first_garbage: Option<String>,
    /// When the command's output ended.
    ended_at: Option<u64>,
}

/// A meter command and what it has printed.
pub struct CommandMeter {
    command: String,
    child: Child,
    shared: Arc<Mutex<Shared>>,
    /// CLOCK_MONOTONIC and run-clock time of the previous sample.
    prev: Option<(u64, u64)>,
    /// Every (name, unit) seen so far, in order of appearance.
    channels: Vec<(String, String)>,
    garbage_noted: u64,
}

/// Process groups of the meters running now, for [`kill_all`].
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kill every meter command still running (for a process about to exit without
/// unwinding, e.g. on a second Ctrl-C).
pub fn kill_all() {
    for pgid in running().drain(..) {
        let _ = crate::sys::kill_process_group(pgid, libc::SIGKILL);
    }
}

fn lock(s: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl CommandMeter {
    /// Start `command` with `sh -c`, its output read line by line from now on.
    pub fn spawn(command: &str) -> Result<CommandMeter, String> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("--sensor-cmd: cannot start sh -c '{command}': {e}"))?;
        running().push(child.id());
        let out = child.stdout.take().expect("piped stdout");
        let shared = Arc::new(Mutex::new(Shared::default()));
        let s = shared.clone();
        std::thread::Builder::new()
            .name("drivelab-meter".into())
            .spawn(move || read_lines(BufReader::new(out), &s))
            .map_err(|e| format!("--sensor-cmd: cannot start its reader: {e}"))?;
        Ok(CommandMeter {
            command: command.into(),
            child,
            shared,
            prev: None,
            channels: Vec::new(),
            garbage_noted: 0,
        })
    }

    /// Wait (up to `timeout`) for the first good line, so that a run starts with the
    /// meter's channels known; why not when none came ("ended", "printed nothing that
    /// is a reading in N s").
    pub fn wait_first(&mut self, timeout: std::time::Duration) -> Result<(), String> {
        let t = std::time::Instant::now();
        loop {
            let g = lock(&self.shared);
            if g.latest.is_some() {
                return Ok(());
            }
            if g.ended_at.is_some() {
                drop(g);
                return Err(format!("{} before printing a reading", self.how_it_ended()));
            }
            if t.elapsed() >= timeout {
                let secs = timeout.as_secs();
                let first = crate::text::quoted(g.first_garbage.as_deref().unwrap_or(""));
                return Err(if g.garbage_count == 0 {
                    format!("printed no reading in {secs} s")
                } else if g.implausible_count == g.garbage_count {
                    format!("printed only implausible values in {secs} s (the first line: {first}); check its units")
                } else {
                    format!("printed no reading in {secs} s, only lines that are not readings (the first: {first})")
                });
            }
            drop(g);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl CommandMeter {
    /// How the command ended, once its output has: "exited with status 3", "was not
    /// found", ... (waiting up to a second for it to exit after closing its output).
    fn how_it_ended(&mut self) -> String {
        let mut status = None;
        for _ in 0..100 {
            status = self.child.try_wait().ok().flatten();
            if status.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        ended_text(status)
    }
}

/// How a meter command that ended did: sh's 127 and 126 are a command not found and
/// not executable.
fn ended_text(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "closed its output (still running)".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(127), _) => "was not found (sh: exit status 127)".into(),
            (Some(126), _) => "is not executable (sh: exit status 126)".into(),
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            (None, None) => format!("ended ({s})"),
        },
    }
}

fn read_lines(mut r: impl BufRead, shared: &Mutex<Shared>) {
    let clock = crate::sys::monotonic_ns;
    let mut buf = Vec::new();
    while let Some(complete) = read_line(&mut r, &mut buf) {
        let at = clock();
        let text = String::from_utf8_lossy(&buf);
        let mut g = lock(shared);
        let read = parse_line(&text).filter(|_| complete);
        let implausible = read
            .as_ref()
            .is_some_and(|v| !v.iter().all(|(_, u, x)| super::plausible(u, *x)));
        let parsed = read.filter(|_| !implausible);
        match parsed {
            Some(v) if v.is_empty() => {}
            Some(v) => {
                for (n, u, x) in &v {
                    match g.sums.iter().position(|c| &c.0 == n && &c.1 == u) {
                        Some(i) => {
                            g.sums[i].2 += x;
                            g.sums[i].3 += 1;
                        }
                        None if g.sums.len() < MAX_CHANNELS => {
                            g.sums.push((n.clone(), u.clone(), *x, 1))
                        }
                        None => {}
                    }
                }
                g.latest = Some((at, v));
                g.garbage_since_good = false;
            }
            None => {
                g.garbage_count += 1;
                g.implausible_count += u64::from(implausible);
                g.garbage_since_good = true;
                if g.first_garbage.is_none() {
                    let mut first: String = text.chars().take(60).collect();
                    if !complete {
                        first += &format!("… (a line over {MAX_LINE_BYTES} bytes)");
                    }
                    g.first_garbage = Some(first);
                }
            }
        }
    }
    lock(shared).ended_at = Some(clock());
}

/// The next line into `buf` (without its end), at most [`MAX_LINE_BYTES`] kept: Some(true)
/// for a whole line, Some(false) for one too long (the rest of it skipped), None at the
/// end of the output.
fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> Option<bool> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, MAX_LINE_BYTES)
        .read_until(b'\n', buf)
        .ok()?;
    if n == 0 {
        return None;
    }
    if buf.last() == Some(&b'\n') || (n as u64) < MAX_LINE_BYTES {
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        return Some(true);
    }
    let mut rest = Vec::new();
    loop {
        rest.clear();
        let n = std::io::Read::take(&mut *r, MAX_LINE_BYTES)
            .read_until(b'\n', &mut rest)
            .ok()?;
        if n == 0 || rest.last() == Some(&b'\n') {
            return Some(false);
        }
    }
}

impl SensorSource for CommandMeter {
    fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
        let now = crate::sys::monotonic_ns();
        let (sums, latest, stale_ok) = {
            let mut g = lock(&self.shared);
            let sums = std::mem::take(&mut g.sums);
            let ok = !g.garbage_since_good && g.ended_at.is_none();
            (sums, g.latest.clone(), ok)
        };
        let last = self.prev.replace((now, at_ns));
        let span = last.map_or(0, |(mono, _)| now.saturating_sub(mono));
        // The span's start on the run's clock: the previous sample's own time when it was
        // taken on this clock (the same run), else as far back as the span reaches.
        let stamp = match last {
            Some((_, at)) if at <= at_ns && (at_ns - at).abs_diff(span) < SAME_CLOCK_NS => at,
            _ => at_ns.saturating_sub(span),
        };
        for (n, u, _, _) in &sums {
            if !self.channels.iter().any(|(cn, cu)| cn == n && cu == u) {
                self.channels.push((n.clone(), u.clone()));
            }
        }
        // No line in the span: the latest value while it is fresh, the meter alive and
        // no garbage since.
        let fallback = match (&latest, sums.is_empty(), stale_ok) {
            (Some((t, v)), true, true) if now.saturating_sub(*t) < STALE_NS => Some(v),
            _ => None,
        };
        self.channels
            .iter()
            .map(|(n, u)| {
                let value = match fallback {
                    Some(v) => v.iter().find(|x| &x.0 == n && &x.1 == u).map(|x| x.2),
                    None => sums
                        .iter()
                        .find(|c| &c.0 == n && &c.1 == u)
                        .map(|c| c.2 / c.3 as f64),
                };
                SensorReading::new(n, u, value, stamp, SOURCE)
            })
            .collect()
    }

    fn describe(&self) -> String {
        let latest = lock(&self.shared).latest.clone();
        let names: Vec<String> = match latest {
            Some((_, v)) if self.channels.is_empty() => {
                v.iter().map(|(n, u, _)| format!("{n} {u}")).collect()
            }
            _ => self
                .channels
                .iter()
                .map(|(n, u)| format!("{n} {u}"))
                .collect(),
        };
        format!(
            "meter: sh -c '{}' ({})",
            self.command,
            if names.is_empty() {
                "no reading yet".to_string()
            } else {
                names.join(", ")
            }
        )
    }

    fn kind(&self) -> &'static str {
        "meter"
    }

    fn notes(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let (count, first, ended) = {
            let g = lock(&self.shared);
            (g.garbage_count, g.first_garbage.clone(), g.ended_at)
        };
        if count > self.garbage_noted {
            out.push(format!(
                "The meter (--sensor-cmd) printed {} line(s) that are not readings (the first: '{}'), skipped: a reading is numbers with units, finite, and {}; an interval with no good line after one of them has null meter readings.",
                count - self.garbage_noted,
                first.unwrap_or_default(),
                super::PLAUSIBLE
            ));
            self.garbage_noted = count;
        }
        if let Some(ended) = ended {
            let how = self.how_it_ended();
            let when = match self.prev {
                Some((mono, at)) if at as i128 + ended as i128 >= mono as i128 => format!(
                    "{:.2} s into the run",
                    (at as i128 + ended as i128 - mono as i128) as f64 / 1e9
                ),
                _ => "before the run began".into(),
            };
            out.push(format!(
                "The meter command (--sensor-cmd) {how} {when}: the readings it printed are kept, its readings after that are null."
            ));
        }
        out
    }
}

impl Drop for CommandMeter {
    fn drop(&mut self) {
        running().retain(|&p| p != self.child.id());
        let _ = crate::sys::kill_process_group(self.child.id(), libc::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A unit as written, normalised: (unit, factor to it, default name).
fn unit_of(u: &str) -> Option<(&'static str, f64, &'static str)> {
    Some(match u {
        "W" | "w" | "watt" | "watts" => ("watt", 1.0, "power"),
        "mW" | "mw" => ("watt", 1e-3, "power"),
        "V" | "v" | "volt" | "volts" => ("volt", 1.0, "voltage"),
        "mV" | "mv" => ("volt", 1e-3, "voltage"),
        "A" | "a" | "amp" | "amps" | "ampere" | "amperes" => ("ampere", 1.0, "current"),
        "mA" | "ma" => ("ampere", 1e-3, "current"),
        "C" | "°C" | "degC" | "celsius" => ("celsius", 1.0, "temperature"),
        "J" | "joule" | "joules" => ("joule", 1.0, "energy"),
        "Wh" => ("joule", 3600.0, "energy"),
        "mWh" => ("joule", 3.6, "energy"),
        _ => return None,
    })
}

/// A number at the start of `s` and the rest (its unit, if written together).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == '-' || c == '+')
                    && (i == 0 || matches!(s.as_bytes()[i - 1], b'e' | b'E')))
                || ((c == 'e' || c == 'E')
                    && s[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')))
        })
        .map_or(s.len(), |(i, _)| i);
    let v: f64 = s[..end].parse().ok()?;
    v.is_finite().then_some((v, &s[end..]))
}

fn slug(name: &str) -> String {
    name.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// `line` with each comma between two digits made a decimal point.
fn decimal_commas(line: &str) -> String {
    let b = line.as_bytes();
    line.char_indices()
        .map(|(i, c)| {
            let between =
                i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit();
            if c == ',' && between {
                '.'
            } else {
                c
            }
        })
        .collect()
}

/// The values of one line; `Some(empty)` for a blank line or a `#` comment, None for a
/// line that is not readings.
pub fn parse_line(line: &str) -> Option<Vec<Value>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Some(Vec::new());
    }
    // Escape sequences and other control bytes are no reading (nor a unit to show).
    if line.chars().any(|c| c.is_control() && c != '\t') {
        return None;
    }
    // A decimal comma (`5,1 W`) in a line without decimal points: one value, not two.
    let decimal = (!line.contains('.')).then(|| decimal_commas(line));
    let line = decimal.as_deref().unwrap_or(line);
    let tokens: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|t| !t.is_empty())
        .collect();
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (name, rest) = match tokens[i].split_once('=') {
            Some((n, r)) if !slug(n).is_empty() => (Some(slug(n)), r),
            Some(_) => return None,
            None => (None, tokens[i]),
        };
        let (v, mut unit) = split_number(rest)?;
        // A unit may follow as a token of its own.
        if unit.is_empty() {
            if let Some(next) = tokens.get(i + 1) {
                if !next.contains('=') && split_number(next).is_none() {
                    unit = next;
                    i += 1;
                }
            }
        }
        let value = match (unit_of(unit), name) {
            (Some((u, f, default)), n) => (n.unwrap_or_else(|| default.into()), u.into(), v * f),
            (None, Some(n)) => (n, unit.to_string(), v),
            // A bare number is watts; a bare number with a unit of its own is named by it.
            (None, None) if unit.is_empty() => ("power".into(), "watt".into(), v),
            (None, None) => {
                let n = slug(unit);
                if n.is_empty() {
                    return None;
                }
                (n, unit.to_string(), v)
            }
        };
        out.push(value);
        i += 1;
    }
    let has = |u: &str| out.iter().find(|x| x.1 == u).map(|x| x.2);
    if let (None, Some(v), Some(a)) = (has("watt"), has("volt"), has("ampere")) {
        out.push(("power".into(), "watt".into(), v * a));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(line: &str) -> Vec<(String, String, f64)> {
        parse_line(line).unwrap_or_else(|| panic!("{line:?} not read"))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_decimal_comma_is_one_value_and_control_bytes_no_reading() {
        assert_eq!(vals("5,1 W"), [("power".into(), "watt".into(), 5.1)]);
        assert_eq!(vals("12,0 V; 0,5 A").len(), 3);
        assert_eq!(vals("5.1, 0.2 A").len(), 2);
        assert_eq!(parse_line("5 \u{1b}[2J"), None);
    }

    #[test]
    fn lines_of_every_form_are_read() {
        assert_eq!(vals("5.25"), [("power".into(), "watt".into(), 5.25)]);
        assert_eq!(vals("5.25 W"), vals("5.25W"));
        let v = vals("12.0 V 0.5 A");
        assert_eq!(v.len(), 3);
        assert_eq!(v[2].0, "power");
        assert!(close(v[2].2, 6.0));
        let v = vals("vbus=5.02V, ibus=1200mA; temp=41.5 C");
        assert_eq!(v[0], ("vbus".into(), "volt".into(), 5.02));
        assert!(v[1].0 == "ibus" && v[1].1 == "ampere" && close(v[1].2, 1.2));
        assert_eq!(v[2], ("temp".into(), "celsius".into(), 41.5));
        assert!(v[3].0 == "power" && close(v[3].2, 5.02 * 1.2));
        assert_eq!(vals("fan=1200 rpm"), [("fan".into(), "rpm".into(), 1200.0)]);
        assert_eq!(vals("450 mW")[0].2, 0.45);
        assert_eq!(vals("1e-3W")[0].2, 1e-3);
        assert!(vals("").is_empty() && vals("# header").is_empty());
    }

    #[test]
    fn a_line_too_long_is_skipped_whole_and_the_next_is_read() {
        let long = "9".repeat(3 * MAX_LINE_BYTES as usize);
        let text = format!("1 W\n{long}\n2 W\n3 W");
        let mut r = std::io::Cursor::new(text.into_bytes());
        let mut buf = Vec::new();
        let mut got = Vec::new();
        while let Some(whole) = read_line(&mut r, &mut buf) {
            got.push((whole, String::from_utf8_lossy(&buf).into_owned()));
        }
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], (true, "1 W".to_string()));
        assert!(!got[1].0 && got[1].1.len() == MAX_LINE_BYTES as usize);
        assert_eq!(got[2], (true, "2 W".to_string()));
        assert_eq!(
            got[3],
            (true, "3 W".to_string()),
            "the last line without its end"
        );
    }

    /// `n` bytes of digits with no line end.
    struct Endless(u64);

    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = (buf.len() as u64).min(self.0) as usize;
            buf[..n].fill(b'9');
            self.0 -= n as u64;
            Ok(n)
        }
    }

    fn read_all(r: impl std::io::Read) -> Shared {
        let shared = Mutex::new(Shared::default());
        read_lines(BufReader::with_capacity(8192, r), &shared);
        shared.into_inner().unwrap()
    }

    #[test]
    fn fifty_megabytes_without_a_line_end_are_one_garbage_line_in_bounded_memory() {
        let huge = Endless(50 << 20);
        let g = read_all(std::io::Read::chain(huge, &b"\n5 W\n"[..]));
        assert_eq!(g.garbage_count, 1);
        let first = g.first_garbage.unwrap();
        assert!(first.contains("a line over 4096 bytes"), "{first}");
        assert_eq!(g.sums, [("power".into(), "watt".into(), 5.0, 1)]);
        // The line is read in pieces of at most MAX_LINE_BYTES, whatever its length.
        let mut r = BufReader::with_capacity(8192, Endless(50 << 20));
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf), Some(false));
        assert!(
            buf.capacity() <= 2 * MAX_LINE_BYTES as usize,
            "{}",
            buf.capacity()
        );
    }

    #[test]
    fn negative_absurd_and_non_finite_readings_are_garbage() {
        let g = read_all(&b"5.5\n-3\n1e23 W\n12 V -1 A\nnan\n"[..]);
        assert_eq!(g.sums, [("power".into(), "watt".into(), 5.5, 1)]);
        assert_eq!(g.garbage_count, 4);
        assert_eq!(g.first_garbage.as_deref(), Some("-3"));
    }

    #[test]
    fn a_meter_that_exits_keeps_what_it_printed_and_says_how_it_ended() {
        let mut m = CommandMeter::spawn("echo 5").unwrap();
        m.wait_first(std::time::Duration::from_secs(600)).unwrap();
        while lock(&m.shared).ended_at.is_none() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let r = m.sample(1_000);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].value, Some(5.0));
        let notes = m.notes();
        assert!(
            notes.iter().any(|n| n.contains("exited with status 0")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_meter_that_dies_first_says_how() {
        for (cmd, want) in [
            ("false", "exited with status 1 before printing a reading"),
            ("/nonexistent/meter", "was not found (sh: exit status 127)"),
            ("kill -9 $$", "was killed by signal 9"),
        ] {
            let mut m = CommandMeter::spawn(cmd).unwrap();
            let e = m
                .wait_first(std::time::Duration::from_secs(600))
                .unwrap_err();
            assert!(e.contains(want), "{cmd}: {e}");
        }
    }

    #[test]
    fn garbage_is_not_a_reading() {
        for bad in [
            "hello", "W 5", "5.1.2 W", "=5", "nan", "inf W", "power=", "5 W x",
        ] {
            assert!(
                parse_line(bad).is_none(),
                "{bad:?} read as {:?}",
                parse_line(bad)
            );
        }
    }
}
