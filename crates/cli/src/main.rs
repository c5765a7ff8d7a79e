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
    let code = match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(Fail { code, message }) => {
            // One line whatever it quotes (a newline in a --host, a meter's escape bytes).
            eprintln!("drivelab: {}", fit(&message));
            code
        }
    };
    std::process::exit(code);
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
