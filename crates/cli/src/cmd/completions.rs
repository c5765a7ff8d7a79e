//! `drivelab completions SHELL` and `drivelab man`: shell completion scripts and the
//! manual page, generated from the command-line definition itself (clap_complete and
//! clap_mangen), so they always know every subcommand and option of this build.

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs, Shell};
use crate::fail::Fail;

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(generator, &mut Cli::command(), "drivelab", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page (roff): the top-level sections, then one section per subcommand
/// (and per suite of `run`) with its synopsis, description and options.
pub fn page() -> Result<String, Fail> {
    // (Not clap's own `help` subcommand: --help is in every synopsis.)
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out).map_err(render_fail)?;
    man.render_name_section(&mut out).map_err(render_fail)?;
    man.render_synopsis_section(&mut out).map_err(render_fail)?;
    man.render_description_section(&mut out)
        .map_err(render_fail)?;
    man.render_options_section(&mut out).map_err(render_fail)?;
    man.render_subcommands_section(&mut out)
        .map_err(render_fail)?;
    // Every subcommand is a section of this one page (there are no drivelab-io(1) …
    // pages): the list names them as their sections are headed.
    let mut text = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| {
            match l
                .strip_prefix("drivelab\\-")
                .and_then(|r| r.strip_suffix("(1)"))
            {
                Some(sub) => format!(
                    "drivelab {sub} (section DRIVELAB {} below)",
                    sub.to_uppercase()
                ),
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    sub_sections(&cmd, "drivelab", &mut text)?;
    out.clear();
    man.render_version_section(&mut out).map_err(render_fail)?;
    text.push_str(&String::from_utf8_lossy(&out));
    Ok(text)
}

fn render_fail(e: std::io::Error) -> Fail {
    Fail::failed(format!("cannot render the man page: {e}"))
}

/// A section `.SH "drivelab SUB"` for each visible subcommand of `cmd`, its own
/// sections turned into subsections, then its subcommands' in turn.
fn sub_sections(cmd: &clap::Command, path: &str, text: &mut String) -> Result<(), Fail> {
    // (Not clap's own `help` subcommand: --help is in every synopsis.)
    let shown = |s: &&clap::Command| !s.is_hide_set() && s.get_name() != "help";
    for sub in cmd.get_subcommands().filter(shown) {
        let name = format!("{path} {}", sub.get_name());
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(name.clone());
        let m = clap_mangen::Man::new(sub.clone());
        let mut out = Vec::new();
        m.render_synopsis_section(&mut out).map_err(render_fail)?;
        m.render_description_section(&mut out)
            .map_err(render_fail)?;
        m.render_options_section(&mut out).map_err(render_fail)?;
        text.push_str(&format!(".SH \"{}\"\n", name.to_uppercase()));
        text.push_str(&String::from_utf8_lossy(&out).replace(".SH ", ".SS "));
        sub_sections(&sub, &name, text)?;
    }
    Ok(())
}

pub fn completions(a: CompletionsArgs) -> Result<i32, Fail> {
    crate::output::stdout::say(&script(a.shell))?;
    Ok(0)
}

pub fn man() -> Result<i32, Fail> {
    crate::output::stdout::say(&page()?)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBCOMMANDS: [&str; 7] = ["io", "run", "report", "compare", "db", "completions", "man"];

    #[test]
    fn every_shell_gets_a_script_naming_every_subcommand() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let s = script(shell);
            for sub in SUBCOMMANDS {
                assert!(s.contains(sub), "{shell:?} script lacks '{sub}'");
            }
            // Options of a nested subcommand are completed too.
            assert!(
                s.contains("destructive"),
                "{shell:?} script lacks --destructive"
            );
        }
        assert!(script(Shell::Bash).contains("complete -F"));
        assert!(script(Shell::Zsh).starts_with("#compdef drivelab"));
        assert!(script(Shell::Fish).contains("complete -c drivelab"));
    }

    #[test]
    fn the_man_page_documents_each_subcommand_and_its_options() {
        let p = page().unwrap();
        assert!(p.contains(".TH drivelab"), "{}", &p[..200]);
        for sub in SUBCOMMANDS {
            let head = format!(".SH \"DRIVELAB {}\"", sub.to_uppercase());
            assert!(p.contains(&head), "no section {head}");
        }
        // The suites of `run` have theirs, and options are listed with their help.
        assert!(p.contains(".SH \"DRIVELAB RUN CONSISTENCY\""));
        assert!(p.contains("\\-\\-iodepth"));
        assert!(p.contains("I/Os outstanding per job"));
        assert!(!p.contains("DRIVELAB HELP") && !p.contains("RUN HELP"));
        // It cites no page that is not there (every subcommand is a section of this one).
        assert!(!p.contains("(1)"), "cites another page");
        assert!(p.contains("drivelab io (section DRIVELAB IO below)"));
    }
}
