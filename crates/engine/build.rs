//! Records the commit drivelab was built from (`tool.commit` in every result), so that
//! results from two builds of one version can be told apart.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=DRIVELAB_COMMIT={commit}");
    // Built again when HEAD moves (a commit, a checkout).
    // (Only files that exist: cargo runs a build script every time for a missing one.)
    // logs/HEAD changes with every commit, checkout or reset, even when the branch's ref
    // lives in packed-refs; refs are shared by worktrees, in the common directory.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .unwrap_or_else(|| dir.clone());
        let mut watch = vec![
            format!("{dir}/HEAD"),
            format!("{dir}/logs/HEAD"),
            format!("{common}/packed-refs"),
        ];
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{common}/{head}"));
        }
        for f in watch.iter().filter(|f| std::path::Path::new(f).exists()) {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
