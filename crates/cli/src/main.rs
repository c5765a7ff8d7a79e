//! `drivelab`: the command line on top of drivelab's crates.
//!
//! Parsing and dispatch only; each subcommand lives in its own module under `cmd/`.
//! Exit codes: 0 done, 1 failed (I/O error, failed run), 2 bad input (nothing was
//! written), 130 interrupted.

mod args;
mod cmd;
mod fail;
mod out_path;
mod output;
mod record;
mod run_args;
mod session;
mod signals;
mod target_arg;
mod values;

use clap::Parser;

use crate::fail::Fail;

fn main() {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind::*;
            match e.kind() {
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => {
                    // One line naming the option and the accepted form.
                    eprintln!("drivelab: {}", fit(&one_line(&e.to_string())));
                    std::process::exit(2);
                }
            }
        }
    };
    match cmd::dispatch(cli) {
        Ok(code) => signals::exit(code, || ()),
        // One line whatever it quotes (a newline in a --host, a meter's escape bytes).
        Err(Fail { code, message }) => {
            signals::exit(code, || eprintln!("drivelab: {}", fit(&message)))
        }
    }
}

/// An error line as the terminal gets it: control bytes escaped; in a line too long to
/// read (a 15 000-zone `--random_distribution` quoted twice), each long quoted value is
/// cut short.
fn fit(message: &str) -> String {
    use drivelab_engine::text::{printable, shortened, MAX_SHOWN_CHARS};
    const LONG_LINE_CHARS: usize = 1000;
    if message.chars().count() <= LONG_LINE_CHARS {
        return printable(message).into_owned();
    }
    message
        .split('\'')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 && part.chars().count() > MAX_SHOWN_CHARS {
                shortened(part)
            } else {
                printable(part).into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("'")
}

/// clap's message in one line: the error, the names it lists on the lines under it
/// (missing arguments, possible values) and its tip, without the usage block.
fn one_line(text: &str) -> String {
    let mut lines = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"));
    let mut out = lines
        .by_ref()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .trim_end()
        .to_string();
    for l in lines.map(str::trim).filter(|l| !l.is_empty()) {
        out.push_str(if out.ends_with(':') { " " } else { "; " });
        out.push_str(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use drivelab_suites::SuiteKind;

    /// The run page's "run it again" command of a bundle of every suite kind is one the
    /// CLI's own parser takes (no unknown subcommand, no missing argument).
    #[test]
    fn the_run_pages_command_parses_for_every_suite() {
        use drivelab_engine::target::{OpenOptions, Target, TargetSpec};
        let target = "sim:nvme-tlc,capacity=4G";
        let d = drivelab_sim::parse(target).unwrap();
        let t = Target::open(TargetSpec::Model(Box::new(d)), &OpenOptions::default()).unwrap();
        let q = drivelab_suites::quick::Quick::new(true);
        let plan = drivelab_suites::Suite::plan(&q, &t.info).unwrap();
        let base = drivelab_suites::runner::new_doc(&q, &plan, &t, Some(target.into()));
        for kind in SuiteKind::ALL {
            let mut doc = base.clone();
            doc.suite = kind;
            doc.knobs = match kind {
                SuiteKind::Replay => {
                    serde_json::json!({"trace": "/srv/traces/db.dlt", "short": true})
                }
                SuiteKind::Fio => serde_json::json!({
                    "source": ["/home/ana/fio/rand.json", "/home/ana/fio/seq 1m.json"],
                    "drive": "Samsung T7", "connection": null,
                }),
                _ => serde_json::json!({"short": true}),
            };
            let cmd = drivelab_server::rerun_command(&doc);
            let parsed = crate::args::Cli::try_parse_from(shell_words(&cmd))
                .unwrap_or_else(|e| panic!("{kind}: `{cmd}` does not parse: {e}"));
            use crate::args::Command;
            use crate::run_args::SuiteCmd;
            match (kind, parsed.cmd) {
                (SuiteKind::Fio, Command::Import(a)) => {
                    let crate::cmd::fio::ImportCmd::Fio(f) = a.what;
                    assert_eq!(f.results.len(), 2, "{cmd}");
                    assert_eq!(f.drive.as_deref(), Some("Samsung T7"), "{cmd}");
                }
                (_, Command::Run(r)) => {
                    let (trace, common) = match r.suite.expect("a suite") {
                        SuiteCmd::Replay(a) => (Some(a.trace), a.common),
                        SuiteCmd::Quick(a) => (None, a.common),
                        SuiteCmd::Peak(a) => (None, a.common),
                        SuiteCmd::Consistency(a) => (None, a.common),
                        SuiteCmd::Seqfill(a) => (None, a.common),
                        SuiteCmd::Iometer(a) => (None, a.common),
                        SuiteCmd::Mixed(a) => (None, a.common),
                        SuiteCmd::Powerloss(a) => (None, a.common),
                    };
                    let want = (kind == SuiteKind::Replay).then(|| "/srv/traces/db.dlt".into());
                    assert_eq!(trace, want, "{kind}: `{cmd}`");
                    assert_eq!(
                        common.target.target.as_deref(),
                        Some(target),
                        "{kind}: `{cmd}`"
                    );
                    assert!(common.short, "{kind}: `{cmd}`");
                }
                (_, other) => panic!("{kind}: `{cmd}` parses as {other:?}"),
            }
        }
        let mut fio = base.clone();
        fio.suite = SuiteKind::Fio;
        fio.knobs = serde_json::json!({});
        let said = drivelab_server::rerun_command(&fio);
        assert!(said.contains("re-run fio"), "{said}");
    }

    /// The words a POSIX shell makes of `cmd` (plain words and '…' quoting only).
    fn shell_words(cmd: &str) -> Vec<String> {
        let (mut words, mut w, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
        for c in cmd.chars() {
            match c {
                '\'' => (quoted, any) = (!quoted, true),
                ' ' if !quoted => {
                    if any {
                        words.push(std::mem::take(&mut w));
                    }
                    any = false;
                }
                c => {
                    w.push(c);
                    any = true;
                }
            }
        }
        if any {
            words.push(w);
        }
        words
    }

    #[test]
    fn a_long_quoted_value_is_cut_and_control_bytes_escaped() {
        let zones = format!("zoned:{}", vec!["1/1"; 15_000].join(":"));
        let m =
            format!("invalid value '{zones}' for '--random_distribution': '{zones}' is not zoned");
        let f = super::fit(&m);
        assert!(f.len() < 600, "{f}");
        assert!(f.contains("for '--random_distribution'"), "{f}");
        assert_eq!(super::fit("--host 'a\nb\u{1b}'"), "--host 'a\\nb\\u{1b}'");
    }
}
