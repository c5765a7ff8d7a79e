//! One module per subcommand.

mod io;
mod run;

use crate::args::{Cli, Command};
use crate::fail::Fail;

/// Run the chosen subcommand; Ok carries the exit code.
pub fn dispatch(cli: Cli) -> Result<i32, Fail> {
    match cli.cmd {
        Command::Io(a) => io::run(a),
        Command::Run(a) => run::run(a),
    }
}
