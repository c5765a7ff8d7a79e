//! Ctrl-C and SIGTERM: the first sets a flag the engine watches (stop issuing, drain,
//! write the partial result); a second one ends the process at once.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};

/// Install the handlers and return the flag they set.
pub fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // A second signal while the flag is already set exits with 130.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone());
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}
