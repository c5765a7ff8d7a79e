//! What every line-oriented format shares: reading lines with their numbers (bounded in
//! length), counting what was skipped, and [`LineImport`], which turns a [`LineFormat`]'s
//! parsed lines into an [`Import`].

use super::sorted::Sorter;
use super::volume::{VolumeFilter, VolumeMap, VolumeSurvey};
use super::{Event, Import};
use crate::{Header, Record, TraceError};
use std::collections::BTreeMap;
use std::io::{BufRead, Read};

/// The longest line accepted: a binary file given as text is refused, not read whole.
pub const MAX_LINE_BYTES: usize = 1 << 16;

/// Lines of a text input, numbered from 1, without their line ending.
pub(crate) struct Lines {
    input: Box<dyn BufRead>,
    buf: Vec<u8>,
    pub line_no: u64,
}

impl Lines {
    pub fn new(input: Box<dyn BufRead>, lines_before: u64) -> Lines {
        Lines {
            input,
            buf: Vec::with_capacity(256),
            line_no: lines_before,
        }
    }

    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>, TraceError> {
        self.buf.clear();
        let n = (&mut self.input)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > MAX_LINE_BYTES {
            return Err(self.bad(format!(
                "longer than {MAX_LINE_BYTES} bytes (is this a text trace?)"
            )));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((self.line_no, s))),
            Err(_) => Err(TraceError::malformed(
                Some(self.line_no),
                "not text (invalid UTF-8; is this a text trace?)",
            )),
        }
    }

    pub fn bad(&self, message: impl Into<String>) -> TraceError {
        TraceError::malformed(Some(self.line_no), message)
    }
}

/// What was skipped, by reason, with the first line of each.
#[derive(Default)]
pub(crate) struct Skips(BTreeMap<&'static str, (u64, u64)>);

impl Skips {
    pub fn add(&mut self, why: &'static str, line: u64) {
        self.0.entry(why).or_insert((0, line)).0 += 1;
    }

    pub fn notes(&self, notes: &mut Vec<String>) {
        for (why, (n, first)) in &self.0 {
            notes.push(format!(
                "skipped {n} lines: {why} (the first at line {first})"
            ));
        }
    }
}

/// What a line of a format says.
pub(crate) enum Parsed<'a> {
    /// A request, with its volume when the format names one.
    Io(Record, Option<&'a str>),
    /// Not a request, and worth saying (counted in the notes).
    Skip(&'static str),
    /// Not a request and nothing to say (a fio `wait`).
    Nothing,
}

/// One CSV-like format: a line in, a record out, times on the format's own clock (ns).
pub(crate) trait LineFormat {
    /// `Header::source_format`.
    fn name(&self) -> &'static str;
    /// Parse one non-empty line; an error is the reason it is malformed.
    fn parse<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, String>;
    /// Is the first line a row of column names? (By default: its first field is not a
    /// number.)
    fn is_header(&self, line: &str) -> bool {
        let first = line.split([',', ' ', '\t']).next().unwrap_or("").trim();
        !first.is_empty() && !first.starts_with(|c: char| c.is_ascii_digit())
    }
    /// The units and mapping assumed, for the header's notes.
    fn notes(&self) -> Vec<String>;
    /// Wall-clock time (ns since the Unix epoch) of the source-clock time `t`.
    fn unix_ns(&self, _t: u64) -> Option<u64> {
        None
    }
}

/// How the volumes of a trace are taken.
enum Spread {
    /// One volume: the one asked for, or the only one (see [`VolumeFilter`]).
    One(VolumeFilter),
    /// `--volume all`, first pass: finding each volume's extent.
    Survey(VolumeSurvey),
    /// `--volume all`, second pass: each record moved to its volume's offset.
    Map(VolumeMap),
}

impl Spread {
    /// Where a record of volume `vol` goes (one volume: where it is).
    fn place(&mut self, mut r: Record, vol: Option<&str>) -> Result<Record, String> {
        let v = vol.unwrap_or("");
        match self {
            Spread::One(_) => {}
            Spread::Survey(s) => s.add(v, r.offset_bytes.saturating_add(r.len_bytes))?,
            Spread::Map(m) => {
                r.offset_bytes = r
                    .offset_bytes
                    .checked_add(m.offset(v)?)
                    .ok_or("--volume all: a record lies past 2^64 bytes")?;
            }
        }
        Ok(r)
    }
}

/// A [`LineFormat`] as an [`Import`].
pub(crate) struct LineImport<F> {
    lines: Lines,
    fmt: F,
    volumes: Spread,
    skips: Skips,
    sorter: Sorter,
    path: String,
    data_seen: bool,
    ended: bool,
}

impl<F: LineFormat> LineImport<F> {
    pub fn new(input: Box<dyn BufRead>, fmt: F, volume: Option<String>, path: String) -> Self {
        Self::after(input, 0, fmt, volume, path)
    }

    /// The same, `lines_before` lines into the input (a format that read its own first
    /// line).
    pub fn after(
        input: Box<dyn BufRead>,
        lines_before: u64,
        fmt: F,
        volume: Option<String>,
        path: String,
    ) -> Self {
        LineImport {
            lines: Lines::new(input, lines_before),
            fmt,
            volumes: Spread::One(VolumeFilter::new(volume)),
            skips: Skips::default(),
            sorter: Sorter::default(),
            path,
            data_seen: lines_before > 0,
            ended: false,
        }
    }

    /// `--volume all`: every volume of the input, each moved to its own offset in one
    /// span. `open` makes an import of the input from its start; it is called twice (the
    /// first pass finds each volume's highest byte), so the input must be a file.
    pub fn all_volumes(
        open: impl Fn() -> Result<LineImport<F>, TraceError>,
    ) -> Result<LineImport<F>, TraceError> {
        let mut first = open()?;
        first.volumes = Spread::Survey(VolumeSurvey::default());
        while first.next_admitted()?.is_some() {}
        let Spread::Survey(survey) = first.volumes else {
            unreachable!("set above")
        };
        let map = survey
            .layout()
            .map_err(|why| TraceError::malformed(None, why))?;
        let mut second = open()?;
        second.volumes = Spread::Map(map);
        Ok(second)
    }

    /// The next record admitted, in input order; `None` at the end.
    fn next_admitted(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            let Some((n, line)) = self.lines.next_line()? else {
                return Ok(None);
            };
            let line = line.trim();
            if line.is_empty() {
                self.skips.add("empty", n);
                continue;
            }
            if line.starts_with('#') {
                self.skips.add("comment", n);
                continue;
            }
            if !self.data_seen && self.fmt.is_header(line) {
                self.data_seen = true;
                self.skips.add("a header row of column names", n);
                continue;
            }
            self.data_seen = true;
            match self.fmt.parse(line) {
                Err(why) => return Err(TraceError::malformed(Some(n), why)),
                Ok(Parsed::Skip(why)) => self.skips.add(why, n),
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::Io(r, vol)) => {
                    if let Spread::One(f) = &mut self.volumes {
                        if !vol.is_none_or(|v| f.admit(v)) {
                            continue;
                        }
                    }
                    match super::check_extent(&r) {
                        Err(why) => return Err(TraceError::malformed(Some(n), why)),
                        Ok(false) => self.skips.add(super::ZERO_LENGTH, n),
                        Ok(true) => match self.volumes.place(r, vol) {
                            Err(why) => return Err(TraceError::malformed(Some(n), why)),
                            Ok(placed) => return Ok(Some(placed)),
                        },
                    }
                }
            }
        }
    }
}

impl<F: LineFormat> Import for LineImport<F> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        while !self.ended {
            match self.next_admitted()? {
                Some(r) => {
                    if let Some(out) = self.sorter.push(r) {
                        return Ok(Some(Event::Io(out)));
                    }
                }
                None => self.ended = true,
            }
        }
        Ok(self.sorter.pop().map(Event::Io))
    }

    fn header(&self) -> Result<Header, TraceError> {
        let mut notes = self.fmt.notes();
        let (mut volumes, mut device_size_bytes) = (Vec::new(), None);
        match &self.volumes {
            Spread::One(f) => f.finish(&self.path, &mut notes)?,
            Spread::Map(m) => {
                notes.push(m.note());
                volumes = m.spans.clone();
                device_size_bytes = Some(m.total_bytes);
            }
            Spread::Survey(_) => {}
        }
        self.skips.notes(&mut notes);
        self.sorter.notes(&mut notes);
        Ok(Header {
            source_format: self.fmt.name().into(),
            source_path: Some(self.path.clone()),
            device_size_bytes,
            start_unix_ns: self.sorter.base().and_then(|b| self.fmt.unix_ns(b)),
            notes,
            volumes,
        })
    }
}

/// The `i`th of `fields` as a number, or why not.
pub(crate) fn num<T: std::str::FromStr>(
    fields: &[&str],
    i: usize,
    what: &str,
) -> Result<T, String> {
    let f = fields
        .get(i)
        .ok_or_else(|| {
            format!(
                "{} fields, the {what} (field {}) is missing",
                fields.len(),
                i + 1
            )
        })?
        .trim();
    f.parse()
        .map_err(|_| format!("the {what} (field {}) `{f}` is not a whole number", i + 1))
}

/// Comma-separated fields, at least `n` of them.
pub(crate) fn csv(line: &str, n: usize) -> Result<Vec<&str>, String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() < n {
        return Err(format!("{} comma-separated fields, expected {n}", f.len()));
    }
    Ok(f)
}

/// `count` units of `unit` bytes, refused when it does not fit in 64 bits.
pub(crate) fn scaled(count: u64, unit: u64, what: &str) -> Result<u64, String> {
    count
        .checked_mul(unit)
        .ok_or_else(|| format!("the {what} {count} × {unit} bytes is beyond 2^64"))
}

/// A time of `count` units of `unit_ns` nanoseconds (`unit`: "s", "ms", "µs") as
/// nanoseconds; refused beyond 2^64 ns (584 years).
pub(crate) fn scaled_ns(count: u64, unit_ns: u64, unit: &str, what: &str) -> Result<u64, String> {
    count.checked_mul(unit_ns).ok_or_else(|| {
        format!("the {what} {count} {unit} is beyond 2^64 ns (584 years): not a time in a trace")
    })
}

/// Seconds (a decimal number) as nanoseconds.
pub(crate) fn seconds_ns(s: &str, what: &str) -> Result<u64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("the {what} `{s}` is not a number of seconds"))?;
    if !(0.0..1.8e10).contains(&v) {
        return Err(format!(
            "the {what} `{s}` is not a time in seconds from 0 to 1.8e10"
        ));
    }
    Ok((v * 1e9).round() as u64)
}
