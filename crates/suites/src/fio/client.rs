//! Many hosts at once through fio's client/server mode: one `fio --client` process per
//! host (all started together), a per-host job file whose logs go to a per-host
//! directory on this controller, and every host's result checked here: a host is failed
//! when its entry is missing from fio's result, its job reported an error, fio printed
//! an error for it (disconnected, timed out, failed to connect, could not write a log)
//! or its logs did not arrive. fio's exit status and its "All clients" entry are never
//! used (see docs/fio.md for why).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use drivelab_engine::result::Measured;

use super::convert::{self, Context, JobLogs};
use super::jobfile::{self, JobOptions, Logs};
use super::logs::Files;
use super::{json, process};
use crate::plan::{Action, PlannedStep};

/// fio's default server port.
pub const DEFAULT_PORT: u16 = 8765;

/// One fio server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Address or name as given (fio's `hostname` in its result; the suffix of the log
    /// files it writes here).
    pub addr: String,
    pub port: u16,
}

impl Host {
    pub const FORM: &'static str = "HOST or HOST,PORT (an IPv4 address or a name; port 1-65535)";

    pub fn parse(s: &str) -> Result<Host, String> {
        let s = s.trim();
        let (addr, port) = match s.split_once(',') {
            Some((a, p)) => (
                a.trim(),
                p.trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("'{s}' is not {}", Self::FORM))?,
            ),
            None => (s, DEFAULT_PORT),
        };
        let ok = !addr.is_empty()
            && addr
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !ok {
            return Err(format!("'{s}' is not {}", Self::FORM));
        }
        Ok(Host {
            addr: addr.to_string(),
            port,
        })
    }

    /// A directory name for the host (`127.0.0.2`, `db1-8766` with a port other than
    /// the default).
    pub fn id(&self) -> String {
        if self.port == DEFAULT_PORT {
            self.addr.clone()
        } else {
            format!("{}-{}", self.addr, self.port)
        }
    }

    fn client_arg(&self) -> String {
        format!("--client=ip:{},{}", self.addr, self.port)
    }
}

/// The hosts of a hosts file: one `HOST[,PORT]` a line, `#` comments, blank lines.
/// Two hosts with one address are refused: fio names the logs it writes here after the
/// address alone, so one host's logs would overwrite the other's.
pub fn parse_hosts(lines: &[String]) -> Result<Vec<Host>, String> {
    let mut out: Vec<Host> = Vec::new();
    for l in lines {
        let l = l.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let h = Host::parse(l)?;
        if let Some(o) = out.iter().find(|o| same_address(&o.addr, &h.addr)) {
            let also = if o.addr == h.addr {
                String::new()
            } else {
                format!(" (as {})", drivelab_engine::text::quoted(&o.addr))
            };
            return Err(format!(
                "{} is given twice{also}; every host needs its own address (fio names the logs it sends back after the address only)",
                drivelab_engine::text::quoted(&h.addr)
            ));
        }
        out.push(h);
    }
    if out.is_empty() {
        return Err("no hosts given".into());
    }
    Ok(out)
}

/// Whether two host addresses name the same host: numeric IPv4 addresses compared as
/// the addresses fio's resolver reads them (`127.000.000.002` is 127.0.0.2), names
/// without regard to case.
fn same_address(a: &str, b: &str) -> bool {
    match (numeric_v4(a), numeric_v4(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// A numeric IPv4 address as the C library's `inet_aton` (which fio's `getaddrinfo`
/// uses) reads it: 1 to 4 parts, each decimal, octal (a leading 0) or hex (`0x`), the
/// last filling the bytes left.
fn numeric_v4(s: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<u64> = s
        .split('.')
        .map(|p| {
            let (digits, radix) = match p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
                Some(h) => (h, 16),
                None if p.len() > 1 && p.starts_with('0') => (&p[1..], 8),
                None => (p, 10),
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            u64::from_str_radix(digits, radix).ok()
        })
        .collect::<Option<_>>()?;
    let (last, head) = parts.split_last()?;
    if head.len() > 3 || head.iter().any(|&p| p > 255) || *last >> (8 * (4 - head.len())) != 0 {
        return None;
    }
    let v = head
        .iter()
        .enumerate()
        .fold(*last, |v, (i, &p)| v | p << (24 - 8 * i));
    Some(std::net::Ipv4Addr::from(v as u32))
}

/// fio's client/server protocol number of a release, where known (fio's
/// `FIO_SERVER_VER` at each release tag).
fn release_of_protocol(p: u32) -> Option<&'static str> {
    Some(match p {
        86 => "fio-3.25",
        94 => "fio-3.28",
        96 => "fio-3.30",
        97 => "fio-3.33",
        100 => "fio-3.35",
        101 => "fio-3.36",
        103 => "fio-3.37",
        107 => "fio-3.38 or 3.39",
        111 => "fio-3.40",
        113 => "fio-3.41",
        120 => "fio-3.42",
        _ => return None,
    })
}

/// What a version probe of one host found.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// The server's fio version (`fio-3.33`).
    Version(String),
    /// It speaks another protocol: (the server's, this client's) protocol numbers.
    Mismatch(u32, u32),
    /// It could not be asked (the message says why).
    Unreachable(String),
}

/// Ask every host for its fio version at once: a job of fio's null engine (no I/O on
/// the host) through `fio --client`, whose probe line names the server's version.
pub fn probe_all(prog: &str, hosts: &[Host], dir: &Path) -> Result<Vec<Probe>, String> {
    let job = dir.join("probe.fio");
    crate::atomic::write_file(
        &job,
        b"; drivelab-fio-job: version probe, no I/O (null engine)\n[probe]\nioengine=null\nsize=1m\nrw=read\n",
    )
    .map_err(|e| format!("cannot write {}: {e}", job.display()))?;
    // All at once, each in a thread of its own, each given a minute (a host whose
    // address drops packets would otherwise hold the run for the kernel's connect
    // timeout).
    let probes: Vec<Probe> = std::thread::scope(|sc| {
        let running: Vec<_> = hosts
            .iter()
            .map(|h| sc.spawn(move || probe_one(prog, h, dir)))
            .collect();
        running
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Probe::Unreachable("the probe failed".into()))
            })
            .collect()
    });
    Ok(probes)
}

/// Probe one host, stopped after a minute.
fn probe_one(prog: &str, h: &Host, dir: &Path) -> Probe {
    use std::process::{Command, Stdio};
    let child = Command::new(prog)
        .args([
            h.client_arg(),
            "--output-format=normal".into(),
            "probe.fio".into(),
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Probe::Unreachable(format!("cannot run {prog}: {e}")),
    };
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = std::io::Read::read_to_string(o, &mut s);
        }
        s
    });
    let never = AtomicBool::new(false);
    match process::wait(child, &never, Some(std::time::Duration::from_secs(60))) {
        Ok(e) if e.overran => Probe::Unreachable("no answer within a minute".into()),
        Ok(e) => read_probe(&reader.join().unwrap_or_default(), &e.stderr),
        Err(e) => Probe::Unreachable(e),
    }
}

/// Remove the file `path` on every host at once (the test file a fleet run leaves):
/// a job of 4 KiB that may not create the file (`allow_file_create=0`) and unlinks it
/// when done (`unlink=1`). Per host: None when it was removed, else why not.
pub fn remove_all(prog: &str, hosts: &[Host], path: &str, dir: &Path) -> Vec<Option<String>> {
    let job = dir.join("remove.fio");
    let text = format!(
        "; {}: remove the file drivelab's fleet run left\n[remove]\nfilename={}\nioengine=psync\nrw=read\nbs=4k\nsize=4k\nallow_file_create=0\nunlink=1\n",
        super::JOB_MARK,
        path.replace(':', "\\:")
    );
    if let Err(e) = crate::atomic::write_file(&job, text.as_bytes()) {
        let why = format!("cannot write {}: {e}", job.display());
        return hosts.iter().map(|_| Some(why.clone())).collect();
    }
    let out: Vec<Option<String>> = std::thread::scope(|sc| {
        let running: Vec<_> = hosts
            .iter()
            .map(|h| sc.spawn(move || remove_one(prog, h, dir)))
            .collect();
        running
            .into_iter()
            .map(|t| t.join().unwrap_or(Some("the removal failed".into())))
            .collect()
    });
    let _ = std::fs::remove_file(job);
    out
}

/// Run `remove.fio` on one host, stopped after a minute; None when its job ended
/// without error.
fn remove_one(prog: &str, h: &Host, dir: &Path) -> Option<String> {
    let result = format!("remove-{}.json", h.id());
    let args = vec![
        "--output-format=json".to_string(),
        format!("--output={result}"),
        h.client_arg(),
        "remove.fio".into(),
    ];
    let never = AtomicBool::new(false);
    let ended = process::spawn(prog, &args, dir)
        .and_then(|c| process::wait(c, &never, Some(std::time::Duration::from_secs(60))));
    let text = std::fs::read_to_string(dir.join(&result)).unwrap_or_default();
    let _ = std::fs::remove_file(dir.join(&result));
    let ended = match ended {
        Ok(e) if e.overran => return Some("no answer within a minute".into()),
        Ok(e) => e,
        Err(e) => return Some(e),
    };
    let parsed = json::parse(&text).ok();
    let job = parsed.as_ref().and_then(|p| {
        p.output
            .client_stats
            .iter()
            .find(|j| j.jobname == "remove" && j.hostname.as_deref() == Some(h.addr.as_str()))
    });
    match job {
        Some(j) if j.error == 0 => None,
        Some(j) => Some(format!(
            "error {} ({})",
            j.error,
            std::io::Error::from_raw_os_error(j.error as i32)
        )),
        None => Some(
            ended
                .stderr
                .lines()
                .next()
                .unwrap_or("fio's result holds no entry for it")
                .to_string(),
        ),
    }
}

/// The probe's finding from fio's output.
pub fn read_probe(stdout: &str, stderr: &str) -> Probe {
    let all = format!("{stdout}\n{stderr}");
    if let Some(rest) = all.split("version mismatch (").nth(1) {
        let nums: Vec<u32> = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .take(2)
            .collect();
        if let [theirs, ours] = nums[..] {
            return Probe::Mismatch(theirs, ours);
        }
    }
    for line in all.lines() {
        if let Some(v) = line.split("fio=").nth(1) {
            let v = v.split([',', ' ']).next().unwrap_or("").to_string();
            if v.starts_with("fio-") {
                return Probe::Version(v);
            }
        }
    }
    let why = all
        .lines()
        .find(|l| l.contains("fio:") || l.contains("client"))
        .unwrap_or("no answer")
        .trim()
        .to_string();
    Probe::Unreachable(why)
}

/// Refuse a fleet whose hosts do not all run this controller's fio version.
pub fn check_versions(ours: &str, hosts: &[Host], probes: &[Probe]) -> Result<(), String> {
    let mut bad = Vec::new();
    for (h, p) in hosts.iter().zip(probes) {
        let who = format!("{}:{}", h.addr, h.port);
        match p {
            Probe::Version(v) if v == ours => {}
            Probe::Version(v) => bad.push(format!("{who} runs {v}")),
            Probe::Mismatch(theirs, mine) => bad.push(format!(
                "{who} speaks fio protocol {theirs} ({}), this controller's {ours} protocol {mine}",
                release_of_protocol(*theirs).unwrap_or("another fio release")
            )),
            Probe::Unreachable(why) => bad.push(format!("{who} did not answer ({why})")),
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    Err(format!(
        "every host must run this controller's fio ({ours}): {}; nothing was run",
        bad.join("; ")
    ))
}

/// One host's outcome of one step.
pub type HostOutcome = Result<Measured, String>;

/// Where host `h`'s files of step `step` go under the run's directory.
pub fn step_dir(out: &Path, h: &Host, step: &PlannedStep) -> PathBuf {
    out.join(h.id())
        .join("fio")
        .join(jobfile::job_name(&step.id))
}

/// Run one step on every host at once; each host's result checked on its own.
pub fn run_step(
    prog: &str,
    version: &str,
    step: &PlannedStep,
    target_path: &str,
    hosts: &[Host],
    out: &Path,
    stop: &AtomicBool,
) -> Vec<HostOutcome> {
    let started = epoch_ms();
    let running: Vec<Result<(PathBuf, String, std::process::Child), String>> = hosts
        .iter()
        .map(|h| start(prog, step, target_path, h, out))
        .collect();
    running
        .into_iter()
        .zip(hosts)
        .map(|(r, h)| {
            let (dir, prefix, child) = r?;
            let ended = process::wait(child, stop, process::deadline(step))?;
            check_host(h, step, &dir, &prefix, started, version, &ended)
        })
        .collect()
}

fn mtime_ms(p: &Path) -> Option<u64> {
    let t = std::fs::metadata(p).ok()?.modified().ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64)
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Write host `h`'s job file and start its client.
fn start(
    prog: &str,
    step: &PlannedStep,
    target_path: &str,
    h: &Host,
    out: &Path,
) -> Result<(PathBuf, String, std::process::Child), String> {
    if let Action::Precondition {
        also_discard: Some(_),
    } = step.action
    {
        return Err(
            "over-provisioning (--op) discards on the host, which fio's client cannot do".into(),
        );
    }
    let dir = step_dir(out, h, step);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot make {}: {e}", logs.display()))?;
    let prefix = logs.join("s").display().to_string();
    let text = jobfile::render(
        step,
        &JobOptions {
            filename: target_path,
            logs: Some(Logs {
                prefix: prefix.clone(),
                hist: true,
            }),
            header: vec![format!(
                "{}: host {}:{}, run by drivelab through fio --client",
                super::JOB_MARK,
                h.addr,
                h.port
            )],
        },
    )?;
    crate::atomic::write_file(&dir.join("job.fio"), text.as_bytes())
        .map_err(|e| format!("cannot write the job file: {e}"))?;
    let args = vec![
        "--output-format=json+".to_string(),
        "--output=out.json".into(),
        h.client_arg(),
        "job.fio".into(),
    ];
    let child = process::spawn(prog, &args, &dir)?;
    Ok((dir, prefix, child))
}

/// fio's messages that mean a host's result is not whole.
const HOST_ERRORS: [&str; 7] = [
    "disconnected",
    "timed out",
    "timeout on",
    "failed to connect",
    "version mismatch",
    "fopen log",
    "Connection refused",
];

/// Check and convert one host's result.
fn check_host(
    h: &Host,
    step: &PlannedStep,
    dir: &Path,
    prefix: &str,
    started_ms: u64,
    version: &str,
    ended: &process::Ended,
) -> HostOutcome {
    let who = format!("{}:{}", h.addr, h.port);
    if ended.overran {
        return Err(format!(
            "host {who}: its step did not end within {} s; stopped",
            process::deadline(step).map_or(0, |d| d.as_secs())
        ));
    }
    let text = std::fs::read_to_string(dir.join("out.json")).unwrap_or_default();
    let parsed = json::parse(&text);
    let mut lines: Vec<String> = ended.stderr.lines().map(str::to_string).collect();
    if let Ok(p) = &parsed {
        lines.extend(p.text.iter().cloned());
    }
    if let Some(l) = lines.iter().find(|l| {
        HOST_ERRORS.iter().any(|e| l.contains(e))
            || l.contains(&format!("<{}> fio:", h.addr))
            || (l.starts_with('<') && l.contains("> fio: "))
    }) {
        return Err(format!("host {who}: {}", l.trim()));
    }
    let parsed = parsed.map_err(|e| format!("host {who}: fio's result: {e}"))?;
    let job = parsed
        .output
        .client_stats
        .iter()
        .find(|j| j.jobname != "All clients" && j.hostname.as_deref() == Some(h.addr.as_str()))
        .ok_or_else(|| {
            format!("host {who}: fio's result holds no entry for it (the host dropped out)")
        })?;
    if job.error != 0 {
        return Err(format!(
            "host {who}: its job stopped with error {} ({})",
            job.error,
            std::io::Error::from_raw_os_error(job.error as i32)
        ));
    }
    let files = Files::expected(prefix, step.workload.numjobs, &format!(".{}", h.addr));
    if let Some(m) = files.missing().first() {
        return Err(format!(
            "host {who}: its per-second logs did not arrive ({} missing)",
            m.display()
        ));
    }
    let logs = JobLogs::read(&files, None).map_err(|e| format!("host {who}: {e}"))?;
    if ended.stopped {
        return Err(format!("host {who}: interrupted"));
    }
    convert::measured(
        job,
        &Context {
            workload: &step.workload,
            logs: Some(&logs),
            // fio 3.33's client output has no timestamp_ms, and its `timestamp` is the
            // client's, not the end of the host's run: the logs arrived at the end of
            // the job, so their time of writing, less the runtime, is its start.
            est_start_ms: Some(job.job_start.unwrap_or_else(|| {
                mtime_ms(&files.iops[0]).map_or(started_ms, |t| {
                    t.saturating_sub(job.read.runtime.max(job.write.runtime))
                })
            })),
            fio_version: version,
            own_logs: true,
            hist_interval_ms: Some(super::jobfile::log_msec(&step.workload)),
        },
    )
    .map_err(|e| format!("host {who}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_host_written_two_ways_is_given_twice() {
        for (a, b) in [
            ("127.0.0.2", "127.000.000.002"),
            ("127.0.0.2", "0x7f.0.0.2"),
            ("127.0.0.2", "127.2"),
            ("Host-A", "host-a"),
        ] {
            let e = parse_hosts(&[a.into(), b.into()]).unwrap_err();
            assert!(e.contains("given twice"), "{a} {b}: {e}");
        }
        assert!(parse_hosts(&["127.0.0.2".into(), "127.0.0.3".into()]).is_ok());
        assert_eq!(numeric_v4("256.0.0.1"), None);
        assert_eq!(numeric_v4("host"), None);
        assert_eq!(numeric_v4("010.0.0.1"), Some([8, 0, 0, 1].into()));
    }

    #[test]
    fn hosts_parse_and_clash() {
        let h = Host::parse("127.0.0.2").unwrap();
        assert_eq!(
            (h.addr.as_str(), h.port, h.id()),
            ("127.0.0.2", 8765, "127.0.0.2".to_string())
        );
        assert_eq!(Host::parse("db1,8766").unwrap().id(), "db1-8766");
        assert!(Host::parse("a b").is_err());
        assert!(Host::parse("h,0").is_err());
        let lines: Vec<String> = ["# fleet", "10.0.0.1", "", "10.0.0.2,9000 # spare"]
            .map(String::from)
            .to_vec();
        assert_eq!(parse_hosts(&lines).unwrap().len(), 2);
        let twice = ["10.0.0.1", "10.0.0.1,9000"].map(String::from).to_vec();
        assert!(parse_hosts(&twice).unwrap_err().contains("given twice"));
    }

    #[test]
    fn probes_read_fios_lines() {
        assert_eq!(
            read_probe(
                "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1\n",
                ""
            ),
            Probe::Version("fio-3.33".into())
        );
        assert_eq!(
            read_probe(
                "",
                "fio: bad server cmd version 86\nfio: client/server version mismatch (86 != 97)\n"
            ),
            Probe::Mismatch(86, 97)
        );
        let e = check_versions(
            "fio-3.33",
            &[Host::parse("a").unwrap(), Host::parse("b").unwrap()],
            &[Probe::Version("fio-3.33".into()), Probe::Mismatch(86, 97)],
        )
        .unwrap_err();
        assert!(
            e.contains("b:8765 speaks fio protocol 86 (fio-3.25)"),
            "{e}"
        );
    }
}
