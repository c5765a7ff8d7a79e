//! The README's showcase figures are what the deterministic simulated command it shows
//! gives (scripts/readme-figures rewrites them; this test says when they are stale).
//! The simulator runs in virtual time with seeds derived from the drive's parameters:
//! the 1200 s test takes seconds of CPU and gives the same numbers every time.

mod common;
use common::*;

const COMMAND: &str = "drivelab run consistency sim:dramless,capacity=16G --duration 1200s";

/// The README's text between the figure markers.
fn readme_figures() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    assert!(readme.contains(COMMAND), "the README shows the command");
    let start = readme.find("<!-- readme-figures:").expect("opening marker");
    let body = &readme[start..];
    let body = &body[body.find("-->").unwrap() + 3..];
    body[..body
        .find("<!-- /readme-figures -->")
        .expect("closing marker")]
        .to_string()
}

/// `4594` as the README writes it: `4 594`.
fn grouped(n: &str) -> String {
    let mut out = String::new();
    for (i, c) in n.chars().enumerate() {
        if i > 0 && (n.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_readme_figures_are_what_the_deterministic_command_gives() {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = COMMAND.split(' ').skip(1).collect();
    args.extend(["--no-db", "--out", "b"]);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The duration asked for is the duration measured, in one continuous run.
    assert!(out.contains(", 1200 s measured continuously"), "{out}");
    // "  last 400 s: average 4594 IOPS, average/stddev 1.23, min 0, …"
    let line = out
        .lines()
        .find(|l| l.starts_with("  last "))
        .unwrap_or_else(|| panic!("{out}"));
    let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    let (window, iops, ratio) = (words[1], words[4], words[7]);
    assert_eq!(words[6], "average/stddev", "{line}");
    let expected = format!(
        "it scores\n{} IOPS on average with an average ÷ standard deviation of {ratio} over the last {window} s",
        grouped(iops)
    );
    assert_eq!(
        readme_figures(),
        expected,
        "the README's figures are stale: run scripts/readme-figures"
    );
}

#[test]
fn thousands_are_grouped_as_the_readme_writes_them() {
    assert_eq!(grouped("4594"), "4 594");
    assert_eq!(grouped("123"), "123");
    assert_eq!(grouped("1234567"), "1 234 567");
}
