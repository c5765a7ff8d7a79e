//! The one error type of the command line: a message and an exit code.

/// Why a command did not succeed.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

/// Exit code for bad input (nothing was written).
pub const USAGE: i32 = 2;
/// Exit code for a failed run.
pub const FAILED: i32 = 1;
/// Exit code for an interrupted run.
pub const INTERRUPTED: i32 = 130;

impl Fail {
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: USAGE,
            message: message.into(),
        }
    }
    pub fn failed(message: impl Into<String>) -> Fail {
        Fail {
            code: FAILED,
            message: message.into(),
        }
    }
}
