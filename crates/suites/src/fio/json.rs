//! fio's JSON and json+ output (`--output-format=json` / `json+`), read with serde.
//!
//! Units as fio documents them (HOWTO "JSON+ output", `stat.c`): `io_bytes` bytes,
//! `io_kbytes` KiB (1024 bytes), `bw` KiB/s, `bw_bytes` bytes/s, `runtime` and
//! `job_runtime` milliseconds, `*_ns` nanoseconds, `iops` I/Os per second, json+ `bins`
//! keyed by a bin's value in ns. In client mode the document is `client_stats` (one
//! entry per host and job, tagged `hostname` and `port`) and text lines of the servers
//! come first in the same file.
//!
//! A result file is read as a stream ([`parse_file`]) into these types, which keep only
//! the fields drivelab uses (options as strings, json+ bins as number pairs): a json+
//! file of hundreds of MB takes a fraction of its size in memory, never a
//! `serde_json::Value` tree of it.

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The whole document. Its job entries are read one at a time and a job section's
/// jobs reported one by one are added up as they come ([`Grouper`]): a file of any
/// number of entries holds its results, never all its entries, in memory.
#[derive(Debug, Clone)]
pub struct Output {
    /// `fio version`.
    pub fio_version: String,
    /// The end of the run, epoch ms (controller's clock).
    pub timestamp_ms: Option<u64>,
    /// The same in whole seconds (every fio 3.x writes it).
    pub timestamp: Option<u64>,
    /// A local run's results (`jobs`).
    pub jobs: Vec<Job>,
    /// A client's results, per host (`client_stats`).
    pub client_stats: Vec<Job>,
    /// Options of the `[global]` section (`global options`: an object; since fio 3.39
    /// in client mode an array, one per server).
    pub global_options: FioOptions,
    /// The first entry whose numbers fio would not write ([`Job::check`]), as
    /// "job 'NAME': why".
    pub invalid: Option<String>,
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Output;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("fio's JSON output: an object with \"fio version\" and \"jobs\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Output, A::Error> {
                let mut version = None;
                let (mut timestamp_ms, mut timestamp) = (None, None);
                let mut global: Option<FioOptions> = None;
                let mut lists: [Option<Entries>; 2] = [None, None];
                let mut invalid = None;
                while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                    let list = match k.as_ref() {
                        "fio version" => {
                            version = Some(m.next_value::<String>()?);
                            continue;
                        }
                        "timestamp_ms" => {
                            timestamp_ms = m.next_value()?;
                            continue;
                        }
                        "timestamp" => {
                            timestamp = m.next_value()?;
                            continue;
                        }
                        "global options" => {
                            global = Some(m.next_value()?);
                            continue;
                        }
                        "jobs" => 0,
                        "client_stats" => 1,
                        _ => {
                            m.next_value::<de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    let e = m.next_value_seed(EntriesSeed(global.as_ref()))?;
                    invalid = invalid.or(e.invalid.clone());
                    lists[list] = Some(e);
                }
                let global = global.unwrap_or_default();
                // Entries read before the global options (fio writes those first) are
                // added up now that `numjobs` is known.
                let [jobs, client_stats] = lists.map(|e| match e {
                    Some(e) if e.grouped => e.jobs,
                    Some(e) => {
                        let mut g = Grouper::new(&global);
                        e.jobs.into_iter().for_each(|j| g.push(j));
                        g.finish().jobs
                    }
                    None => Vec::new(),
                });
                Ok(Output {
                    fio_version: version.ok_or_else(|| de::Error::missing_field("fio version"))?,
                    timestamp_ms,
                    timestamp,
                    jobs,
                    client_stats,
                    global_options: global,
                    invalid,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A list of job entries as read: grouped ([`Grouper`]) when the global options came
/// before it, else one by one.
struct Entries {
    jobs: Vec<Job>,
    grouped: bool,
    invalid: Option<String>,
}

/// Reads a list of job entries one at a time, adding up each job section's jobs
/// reported one by one when the global options (`numjobs` may be one) are known.
struct EntriesSeed<'a>(Option<&'a FioOptions>);

impl<'de> de::DeserializeSeed<'de> for EntriesSeed<'_> {
    type Value = Entries;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Entries, D::Error> {
        struct V<'a>(Option<&'a FioOptions>);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of fio's job entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Entries, A::Error> {
                let none = FioOptions::default();
                let mut g = Grouper::new(self.0.unwrap_or(&none));
                g.hold = self.0.is_none();
                while let Some(j) = s.next_element::<Job>()? {
                    g.push(j);
                }
                let mut e = g.finish();
                e.grouped = self.0.is_some();
                Ok(e)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Entries, E> {
                Ok(Entries {
                    jobs: Vec::new(),
                    grouped: true,
                    invalid: None,
                })
            }
        }
        d.deserialize_any(V(self.0))
    }
}

/// Job entries added up as they are read: a job section's `numjobs` jobs reported one
/// by one (no `group_reporting`: that many entries in a row with one name, host, group
/// and set of options) become one result ([`Job::merge`], `entries` = numjobs); any
/// other entry is a result of its own. At most `numjobs` entries are held at once.
pub struct Grouper<'a> {
    global: &'a FioOptions,
    out: Vec<Job>,
    /// The entries of the section being read, not yet all there.
    run: Vec<Job>,
    /// Keep every entry as it is (the global options are not known yet).
    hold: bool,
    invalid: Option<String>,
}

impl<'a> Grouper<'a> {
    pub fn new(global: &'a FioOptions) -> Self {
        Grouper {
            global,
            out: Vec::new(),
            run: Vec::new(),
            hold: false,
            invalid: None,
        }
    }

    /// One more entry, in the document's order.
    pub fn push(&mut self, j: Job) {
        if let Err(e) = j.check() {
            self.invalid
                .get_or_insert_with(|| format!("job '{}': {e}", j.jobname));
        }
        if self.hold {
            self.out.push(j);
            return;
        }
        if self.run.first().is_some_and(|f| !f.same_section(&j)) {
            self.flush();
        }
        self.run.push(j);
        if self.run.len() >= numjobs(&self.run[0], self.global) {
            self.flush();
        }
    }

    /// Entries held now (at most the section's `numjobs`).
    pub fn held(&self) -> usize {
        self.run.len()
    }

    /// The results so far.
    pub fn results(&self) -> &[Job] {
        &self.out
    }

    fn flush(&mut self) {
        let run = std::mem::take(&mut self.run);
        let n = run.len();
        if n > 1 && n == numjobs(&run[0], self.global) {
            let refs: Vec<&Job> = run.iter().collect();
            self.out.push(Job {
                entries: n,
                ..Job::merge(&refs)
            });
        } else {
            self.out.extend(run);
        }
    }

    fn finish(mut self) -> Entries {
        self.flush();
        Entries {
            jobs: self.out,
            grouped: !self.hold,
            invalid: self.invalid,
        }
    }
}

/// Most jobs fio runs in one job section (its `MAX_JOBS`, drivelab's too).
pub const FIO_MAX_JOBS: u64 = drivelab_engine::run::MAX_JOBS as u64;

/// A job's `numjobs` (its own option, else the global one), 1 when it names none or
/// one fio would not run (refused with its name when the result is converted).
pub fn numjobs(job: &Job, global: &FioOptions) -> usize {
    job.option(global, "numjobs")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| (1..=FIO_MAX_JOBS).contains(n))
        .unwrap_or(1) as usize
}

impl Output {
    /// The end of the run, epoch ms: `timestamp_ms`, else `timestamp` in seconds.
    pub fn end_ms(&self) -> Option<u64> {
        self.timestamp_ms
            .or_else(|| self.timestamp.and_then(|s| s.checked_mul(1000)))
    }

    /// The jobs of either form, without fio's own "All clients" sum (drivelab adds up
    /// hosts itself).
    pub fn all_jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs
            .iter()
            .chain(self.client_stats.iter())
            .filter(|j| j.jobname != "All clients")
    }

    /// The jobs as [`Output::all_jobs`] has them, moved out of the document.
    pub fn take_jobs(&mut self) -> Vec<Job> {
        let mut v = std::mem::take(&mut self.jobs);
        v.append(&mut self.client_stats);
        v.retain(|j| j.jobname != "All clients");
        v
    }
}

/// One job (or group with `group_reporting`).
#[derive(Debug, Clone, Deserialize)]
pub struct Job {
    pub jobname: String,
    #[serde(default)]
    pub groupid: u32,
    /// errno of the first error that stopped the job (0: none).
    #[serde(default)]
    pub error: i64,
    /// ms the job ran (fio 3.x; summed over the group's jobs with group_reporting).
    #[serde(default)]
    pub job_runtime: u64,
    /// Epoch ms the job started (fio 3.36+).
    #[serde(default)]
    pub job_start: Option<u64>,
    pub read: Dir,
    pub write: Dir,
    #[serde(default)]
    pub trim: Option<Dir>,
    /// User and system CPU as a percentage of the job's runtime.
    #[serde(default)]
    pub usr_cpu: f64,
    #[serde(default)]
    pub sys_cpu: f64,
    /// Client mode: the host as the client was given it.
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub port: Option<u32>,
    /// The job's own options (a local run's jobs).
    #[serde(rename = "job options", default)]
    pub job_options: FioOptions,
    /// How many of fio's entries this result adds up (0 or 1: one; a job section's
    /// jobs reported one by one: its numjobs).
    #[serde(skip)]
    pub entries: usize,
}

impl Job {
    /// Option `k` of the job, else of the global section.
    pub fn option<'a>(&'a self, global: &'a FioOptions, k: &str) -> Option<&'a str> {
        self.job_options.get(k).or_else(|| global.get(k))
    }

    /// Whether `other` is another job of the same section reported on its own: one
    /// name, host, group and set of options.
    fn same_section(&self, other: &Job) -> bool {
        self.jobname == other.jobname
            && self.hostname == other.hostname
            && self.groupid == other.groupid
            && self.job_options == other.job_options
    }

    /// The jobs of one fio job section reported one by one (no `group_reporting`) as
    /// one result, as `group_reporting` would give it: counts, bytes and rates added,
    /// runtime the longest, latency scalars combined and json+ bins added (plain JSON's
    /// percentiles do not combine: none then), CPU the mean weighted by runtime.
    pub fn merge(jobs: &[&Job]) -> Job {
        let first = jobs[0].clone();
        let w: Vec<f64> = jobs.iter().map(|j| j.job_runtime.max(1) as f64).collect();
        let wsum: f64 = w.iter().sum();
        let cpu =
            |f: fn(&Job) -> f64| jobs.iter().zip(&w).map(|(j, w)| f(j) * w).sum::<f64>() / wsum;
        let dir = |f: fn(&Job) -> &Dir| Dir::merge(&jobs.iter().map(|j| f(j)).collect::<Vec<_>>());
        Job {
            error: jobs.iter().map(|j| j.error).find(|&e| e != 0).unwrap_or(0),
            job_runtime: jobs.iter().map(|j| j.job_runtime).sum(),
            job_start: jobs.iter().filter_map(|j| j.job_start).min(),
            read: dir(|j| &j.read),
            write: dir(|j| &j.write),
            trim: None,
            usr_cpu: cpu(|j| j.usr_cpu),
            sys_cpu: cpu(|j| j.sys_cpu),
            ..first
        }
    }
}

impl Job {
    /// The numbers as fio writes them: rates and latencies never negative, no trims
    /// (drivelab's results hold reads and writes only). `Err` names the field.
    pub fn check(&self) -> Result<(), String> {
        if let Some(t) = self.trim.as_ref().filter(|t| t.total_ios > 0) {
            return Err(format!(
                "trim total_ios {}: drivelab's results have reads and writes only, so trims cannot be shown as trims; import the jobs that read or write",
                t.total_ios
            ));
        }
        for (name, d) in [("read", &self.read), ("write", &self.write)] {
            d.check().map_err(|e| format!("{name} {e}"))?;
        }
        Ok(())
    }
}

impl Dir {
    fn check(&self) -> Result<(), String> {
        if self.iops < 0.0 {
            return Err(format!("iops {}: a rate is never negative", self.iops));
        }
        for (name, l) in [
            ("slat_ns", &self.slat_ns),
            ("clat_ns", &self.clat_ns),
            ("lat_ns", &self.lat_ns),
        ] {
            let Some(l) = l else { continue };
            for (field, v) in [("mean", l.mean), ("stddev", l.stddev)] {
                if v < 0.0 {
                    return Err(format!(
                        "{name} {field} {v}: a latency is never negative (a result edited by hand?)"
                    ));
                }
            }
        }
        Ok(())
    }

    fn merge(ds: &[&Dir]) -> Dir {
        let lat =
            |f: fn(&Dir) -> Option<&Lat>| Lat::merge(&ds.iter().map(|d| f(d)).collect::<Vec<_>>());
        Dir {
            io_bytes: ds.iter().map(|d| d.io_bytes).sum(),
            bw: ds.iter().map(|d| d.bw).sum(),
            bw_bytes: ds.iter().map(|d| d.bw_bytes).sum(),
            iops: ds.iter().map(|d| d.iops).sum(),
            runtime: ds.iter().map(|d| d.runtime).max().unwrap_or(0),
            total_ios: ds.iter().map(|d| d.total_ios).sum(),
            slat_ns: lat(|d| d.slat_ns.as_ref()),
            clat_ns: lat(|d| d.clat_ns.as_ref()),
            lat_ns: lat(|d| d.lat_ns.as_ref()),
        }
    }
}

impl Lat {
    /// Several jobs' latency together; None unless every job has it.
    fn merge(ls: &[Option<&Lat>]) -> Option<Lat> {
        let ls: Vec<&Lat> = ls.iter().copied().collect::<Option<_>>()?;
        let with: Vec<&&Lat> = ls.iter().filter(|l| l.n > 0).collect();
        let n: u64 = with.iter().map(|l| l.n).sum();
        let mean = with.iter().map(|l| l.mean * l.n as f64).sum::<f64>() / n.max(1) as f64;
        let sq = with
            .iter()
            .map(|l| (l.stddev.powi(2) + l.mean.powi(2)) * l.n as f64)
            .sum::<f64>()
            / n.max(1) as f64;
        let bins = ls
            .iter()
            .map(|l| l.bins.as_ref())
            .collect::<Option<Vec<_>>>()
            .map(|bs| {
                let mut out: BTreeMap<u64, u64> = BTreeMap::new();
                for b in bs {
                    for &(k, c) in &b.0 {
                        let e = out.entry(k).or_default();
                        *e = e.saturating_add(c);
                    }
                }
                Bins(out.into_iter().collect())
            });
        Some(Lat {
            min: with.iter().map(|l| l.min).min().unwrap_or(0),
            max: with.iter().map(|l| l.max).max().unwrap_or(0),
            mean,
            stddev: (sq - mean * mean).max(0.0).sqrt(),
            n,
            percentile: None,
            bins,
        })
    }
}

/// One direction of a job.
#[derive(Debug, Clone, Deserialize)]
pub struct Dir {
    /// Bytes moved.
    pub io_bytes: u64,
    /// KiB/s.
    #[serde(default)]
    pub bw: u64,
    /// Bytes/s.
    #[serde(default)]
    pub bw_bytes: u64,
    pub iops: f64,
    /// ms this direction ran.
    pub runtime: u64,
    pub total_ios: u64,
    #[serde(default)]
    pub slat_ns: Option<Lat>,
    #[serde(default)]
    pub clat_ns: Option<Lat>,
    #[serde(default)]
    pub lat_ns: Option<Lat>,
}

/// A latency distribution in ns.
#[derive(Debug, Clone, Deserialize)]
pub struct Lat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(rename = "N", default)]
    pub n: u64,
    /// `"99.000000": ns`, as `(percentile, ns)` in fio's order (fio 3.1's `"0.00" : 0`
    /// padding included).
    #[serde(default)]
    pub percentile: Option<Percentiles>,
    /// json+ only: `"<bin value ns>": count`, non-empty bins.
    #[serde(default)]
    pub bins: Option<Bins>,
}

impl Lat {
    /// Whether it carries a distribution (percentiles or bins), not just scalars.
    pub fn has_distribution(&self) -> bool {
        self.bins.is_some() || self.percentile.is_some()
    }
}

/// A parsed output file: the document and the text lines before it (in client mode the
/// servers' messages, `<host> fio: …`, and the client's own).
#[derive(Debug, Clone)]
pub struct Parsed {
    pub output: Output,
    pub text: Vec<String>,
}

/// Most bytes of a result file read (a mistyped path to a huge file is refused, not
/// read); fio's largest json+ results of thousands of jobs are a few hundred MB.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Most text lines kept from before the document (client mode's server messages).
const MAX_TEXT_LINES: usize = 10_000;

/// Longest text line kept whole (longer ones are cut).
const MAX_LINE_BYTES: u64 = 64 << 10;

/// Parse an output file's text (see [`parse_from`]).
pub fn parse(text: &str) -> Result<Parsed, String> {
    parse_from(std::io::Cursor::new(text.as_bytes()))
}

/// Parse an output file as a stream, at most [`MAX_FILE_BYTES`] of it: the whole file
/// is never in memory, only the fields drivelab uses.
pub fn parse_file(path: &Path) -> Result<Parsed, String> {
    parse_from(std::io::BufReader::with_capacity(1 << 20, open_file(path)?))
}

/// A result file opened for reading: a regular file of at most [`MAX_FILE_BYTES`]
/// (a device or a pipe is never read to its end).
pub fn open_file(path: &Path) -> Result<std::fs::File, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let m = f.metadata().map_err(|e| e.to_string())?;
    if !m.is_file() || m.len() > MAX_FILE_BYTES {
        return Err(format!(
            "not a regular file of at most {} GiB (fio's --output file)",
            MAX_FILE_BYTES >> 30
        ));
    }
    Ok(f)
}

/// Skip fio's leading text lines to the first line that opens a JSON object (`{` alone,
/// as fio writes it, or a whole compact document, as `jq -c` writes it) and read one
/// document from there, streaming; a line that opens no fio document is passed over.
pub fn parse_from<R: BufRead + Seek>(mut r: R) -> Result<Parsed, String> {
    let io = |e: std::io::Error| format!("cannot read it: {e}");
    let mut text = Vec::new();
    let mut first_err = None;
    loop {
        let start = r.stream_position().map_err(io)?;
        // Only the line's first bytes are read before the document is tried: a compact
        // document is one line of any length.
        let mut head = Vec::new();
        let n = r
            .by_ref()
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut head)
            .map_err(io)?;
        if n == 0 {
            break;
        }
        let lead = head.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if head.get(lead) == Some(&b'{') {
            r.seek(SeekFrom::Start(start + lead as u64)).map_err(io)?;
            let mut de = serde_json::Deserializer::from_reader(r.by_ref());
            match Output::deserialize(&mut de) {
                Ok(output) => return Ok(Parsed { output, text }),
                Err(e) => {
                    first_err.get_or_insert(format!("not fio's JSON output: {e}"));
                    r.seek(SeekFrom::Start(start + n as u64)).map_err(io)?;
                }
            }
        } else {
            let line = String::from_utf8_lossy(&head).trim().to_string();
            if !line.is_empty() && text.len() < MAX_TEXT_LINES {
                text.push(line);
            }
        }
        if !head.ends_with(b"\n") && n as u64 == MAX_LINE_BYTES {
            // The rest of a long text line.
            let mut sink = Vec::new();
            while !sink.ends_with(b"\n") {
                sink.clear();
                if r.by_ref()
                    .take(MAX_LINE_BYTES)
                    .read_until(b'\n', &mut sink)
                    .map_err(io)?
                    == 0
                {
                    break;
                }
            }
        }
    }
    Err(first_err.unwrap_or_else(|| {
        "no JSON document in it (run fio with --output-format=json or json+)".into()
    }))
}

/// fio's job options (`"job options"`, `"global options"`) as strings, as fio writes
/// them (numbers and booleans of hand-made files as their text); since fio 3.39 the
/// global options of client mode are an array, one object per server: a name takes
/// its first value then.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioOptions(BTreeMap<String, String>);

impl FioOptions {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str)
    }
}

/// An option's value as text.
struct OptText(Option<String>);

impl<'de> Deserialize<'de> for OptText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(OptText(match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Some(s),
            v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_)) => Some(v.to_string()),
            // Nothing fio writes (null, arrays, objects): no value.
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for FioOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FioOptions;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("fio's options: an object of option names, or an array of them")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<FioOptions, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, OptText>()? {
                    if let Some(v) = v.0 {
                        out.entry(k).or_insert(v);
                    }
                }
                Ok(FioOptions(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<FioOptions, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(o) = s.next_element::<FioOptions>()? {
                    for (k, v) in o.0 {
                        out.entry(k).or_insert(v);
                    }
                }
                Ok(FioOptions(out))
            }
            fn visit_unit<E: de::Error>(self) -> Result<FioOptions, E> {
                Ok(FioOptions::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// fio's percentile list: `(percentile, ns)` pairs as written (a key that is not a
/// number is passed over, as fio writes none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Percentiles(pub Vec<(f64, u64)>);

impl<'de> Deserialize<'de> for Percentiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Percentiles;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("fio's percentiles: an object of \"<percentile>\": ns")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Percentiles, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<std::borrow::Cow<'de, str>, u64>()? {
                    if out.len() >= MAX_BINS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_BINS} percentiles in one distribution"
                        )));
                    }
                    if let Ok(p) = k.parse::<f64>() {
                        out.push((p, v));
                    }
                }
                Ok(Percentiles(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Most bins one json+ distribution holds (fio's histogram has 1856).
pub const MAX_BINS: usize = 1 << 16;

/// json+ latency bins: `(bin value ns, count)` in value order (fio's `"<ns>": count`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bins(pub Vec<(u64, u64)>);

impl<'de> Deserialize<'de> for Bins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Bins;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("json+ bins: an object of \"<ns>\": count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Bins, A::Error> {
                let mut out = Vec::new();
                while let Some((k, c)) = m.next_entry::<std::borrow::Cow<'de, str>, u64>()? {
                    let v: u64 = k.parse().map_err(|_| {
                        de::Error::custom(format!(
                            "histogram bin '{k}' is not a whole number of ns"
                        ))
                    })?;
                    if out.len() >= MAX_BINS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_BINS} latency bins in one distribution: fio's histogram has 1856"
                        )));
                    }
                    out.push((v, c));
                }
                out.sort_unstable();
                Ok(Bins(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The fio version number of a `fio-3.33` string.
pub fn version_number(v: &str) -> &str {
    v.trim().trim_start_matches("fio-")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULT: &str = include_str!("../../../../fuzz/corpus/fio_result/null-jsonplus.json");

    /// Jobs reported one by one (json+, no group_reporting) add up as fio's group would.
    #[test]
    fn jobs_reported_one_by_one_add_up() {
        let out = parse(RESULT).unwrap().output;
        let a = &out.jobs[0];
        let mut b = a.clone();
        b.read.clat_ns.as_mut().unwrap().mean *= 3.0;
        b.job_runtime += 10;
        let m = Job::merge(&[a, &b]);
        assert_eq!(m.read.total_ios, 2 * a.read.total_ios);
        assert_eq!(m.read.io_bytes, 2 * a.read.io_bytes);
        assert_eq!(m.read.runtime, a.read.runtime);
        let (c, ca) = (m.read.clat_ns.unwrap(), a.read.clat_ns.clone().unwrap());
        assert_eq!(c.n, 2 * ca.n);
        assert!((c.mean - 2.0 * ca.mean).abs() < 1e-6 * ca.mean.max(1.0));
        let bins = |l: &Lat| l.bins.as_ref().unwrap().0.iter().map(|b| b.1).sum::<u64>();
        assert_eq!(bins(&c), 2 * bins(&ca));
        assert!(c.percentile.is_none(), "percentiles do not add up");
    }

    /// A document of many job entries reported one by one (no group_reporting) holds
    /// its results, not its entries, once read: each section's jobs are added up as
    /// they come, and no more than one section's entries are held at once. Before
    /// and after the global options alike (fio writes them first; a hand-made file
    /// may not).
    #[test]
    fn entries_are_added_up_as_they_are_read_holding_one_section_at_most() {
        let v: serde_json::Value = serde_json::from_str(RESULT).unwrap();
        let job = &v["jobs"][0];
        let (sections, per) = (500usize, 8usize);
        let mut jobs = Vec::new();
        for k in 0..sections {
            for _ in 0..per {
                let mut j = job.clone();
                j["jobname"] = format!("s{k}").into();
                jobs.push(j);
            }
        }
        // numjobs in the global section only, written before the jobs or after them.
        let jobs = format!(r#""jobs": {}"#, serde_json::Value::from(jobs));
        let global = format!(r#""global options": {{"numjobs": "{per}"}}"#);
        for global_last in [false, true] {
            let (a, b) = if global_last {
                (&jobs, &global)
            } else {
                (&global, &jobs)
            };
            let text = format!(r#"{{"fio version": "fio-3.33", {a}, {b}}}"#);
            let out = parse(&text).unwrap().output;
            assert_eq!(out.jobs.len(), sections);
            let one = job["read"]["total_ios"].as_u64().unwrap();
            for (k, j) in out.jobs.iter().enumerate() {
                assert_eq!(j.entries, per);
                assert_eq!(j.jobname, format!("s{k}"));
                assert_eq!(j.read.total_ios, per as u64 * one);
            }
        }
        // The grouper holds at most one section's entries.
        let parsed: Vec<Job> = (0..3 * per + 2)
            .map(|i| {
                let mut j: Job = serde_json::from_value(job.clone()).unwrap();
                j.jobname = format!("s{}", i / per);
                j.job_options =
                    serde_json::from_value(serde_json::json!({"numjobs": per.to_string()}))
                        .unwrap();
                j
            })
            .collect();
        let none = FioOptions::default();
        let mut g = Grouper::new(&none);
        let mut most = 0;
        for j in parsed {
            g.push(j);
            most = most.max(g.held());
        }
        assert!(most < per, "{most}");
        assert_eq!(g.results().len(), 3);
        let e = g.finish();
        // The last, incomplete section: its two entries each a result of its own.
        assert_eq!(e.jobs.len(), 5);
        assert_eq!(
            e.jobs.iter().map(|j| j.entries.max(1)).collect::<Vec<_>>(),
            [8, 8, 8, 1, 1]
        );
    }

    #[test]
    fn a_compact_document_after_text_lines_is_read() {
        let v: serde_json::Value = serde_json::from_str(RESULT).unwrap();
        let compact = serde_json::to_string(&v).unwrap();
        let p = parse(&format!("<h> fio: note\n{compact}\n")).unwrap();
        assert_eq!(p.text, vec!["<h> fio: note".to_string()]);
        assert_eq!(p.output.jobs.len(), 1);
        assert!(parse(&compact).is_ok());
        assert!(parse("not fio").unwrap_err().contains("no JSON document"));
        assert!(parse("{\"a\": 1}").unwrap_err().contains("not fio's JSON"));
    }
}
