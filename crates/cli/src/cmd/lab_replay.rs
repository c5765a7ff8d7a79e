//! `drivelab lab-replay-log LOG TARGET --destructive=TARGET (--to-mark NAME | --to-flush N)`
//! (hidden; the device lab's tool, docs/lab.md): replay a dm-log-writes log onto a fresh
//! device up to a mark or a flush, so that what was durable at that point can be checked
//! (`drivelab verify --from`, `drivelab run powerloss --check`).

use std::fs::File;
use std::path::PathBuf;

use clap::Args;
use drivelab_engine::log_writes::{self, Until};
use drivelab_engine::target::{OpenOptions, Target, TargetSpec};

use crate::fail::Fail;

#[derive(Args, Debug)]
pub struct LabReplayArgs {
    /// The dm-log-writes log device (or a copy of it in a file).
    pub log: PathBuf,
    /// The fresh (zeroed) block device to write the log's writes onto.
    pub target: PathBuf,
    /// The device allowed to be written: TARGET again.
    #[arg(long, value_name = "TARGET")]
    pub destructive: Option<PathBuf>,
    /// Replay up to and including this mark (`dmsetup message DEV 0 mark NAME`).
    #[arg(long, value_name = "NAME", conflicts_with = "to_flush")]
    pub to_mark: Option<String>,
    /// Replay up to and including the N-th FLUSH entry (from 1).
    #[arg(long, value_name = "N")]
    pub to_flush: Option<u64>,
}

pub fn run(a: LabReplayArgs) -> Result<i32, Fail> {
    let until = match (a.to_mark, a.to_flush) {
        (Some(m), None) => Until::Mark(m),
        (None, Some(n)) => Until::Flush(n),
        (None, None) => Until::End,
        (Some(_), Some(_)) => {
            return Err(Fail::usage(
                "--to-mark NAME and --to-flush N: give one of them",
            ))
        }
    };
    crate::out_path::target_not_input(&a.target, &a.log, "LOG", "the log being replayed")?;
    let mut log = File::open(&a.log)
        .map_err(|e| Fail::usage(format!("LOG {}: cannot be read ({e})", a.log.display())))?;
    // The log and the request checked before the target is opened: nothing is written
    // on a bad log or a mark it does not have.
    let bad_log = |e: log_writes::LogError| match e {
        log_writes::LogError::Io(_) => Fail::failed(format!("LOG {}: {e}", a.log.display())),
        _ => Fail::usage(format!("LOG {}: {e}", a.log.display())),
    };
    let (_, entries) = log_writes::read_entries(&mut log).map_err(bad_log)?;
    log_writes::stop_index(&entries, &until).map_err(bad_log)?;
    let open = OpenOptions {
        write: true,
        direct: false,
        overwrite: false,
        destructive: a.destructive,
        create_size: 0,
    };
    let target = Target::open(TargetSpec::Path(Some(a.target.clone())), &open)
        .map_err(|e| Fail::usage(e.0))?;
    let mut dev: &File = target
        .file()
        .ok_or_else(|| Fail::usage("TARGET: give a block device (with --destructive=TARGET)"))?;
    let done = log_writes::replay(&mut log, &mut dev, &until).map_err(bad_log)?;
    dev.sync_all()
        .map_err(|e| Fail::failed(format!("TARGET {}: {e}", a.target.display())))?;
    crate::output::json::write_stdout(&done).map_err(Fail::failed)?;
    Ok(0)
}
