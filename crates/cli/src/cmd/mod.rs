//! One module per subcommand.

pub mod compare;
pub mod completions;
pub mod db;
pub mod fio;
mod io;
pub mod lab_replay;
mod powerloss;
pub mod push;
pub mod report;
mod run;
pub mod serve;
pub mod trace;
pub mod verify;

use crate::args::{Cli, Command};
use crate::fail::Fail;

/// Run the chosen subcommand; Ok carries the exit code.
pub fn dispatch(cli: Cli) -> Result<i32, Fail> {
    match cli.cmd {
        Command::Io(a) => io::run(a),
        Command::Run(a) => run::run(a),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Db(a) => db::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Import(a) => fio::import(a),
        Command::Trace(a) => trace::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::LabReplayLog(a) => lab_replay::run(a),
        Command::Man => completions::man(),
    }
}
