//! Ctrl-C, SIGTERM, SIGHUP (a closed terminal or SSH session: the most common end of a
//! long run) and SIGQUIT are one thing: an interruption. The first sets a flag the engine watches (stop issuing, drain,
//! write the partial result, remove a test file this run created). A second one does not
//! wait for the drain: it removes that test file at once, if there is one, and ends the
//! process with 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use drivelab_engine::target::CreatedFile;
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;

/// The signals that interrupt a run.
const STOP_SIGNALS: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// The test file a second signal removes (set while a session holds one to remove).
static REMOVE_ON_EXIT: Mutex<Option<CreatedFile>> = Mutex::new(None);

/// Install the handlers once and return the flag they set.
pub fn stop_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        match Signals::new(STOP_SIGNALS) {
            Ok(mut signals) => {
                let f = flag.clone();
                std::thread::Builder::new()
                    .name("drivelab-signals".into())
                    .spawn(move || {
                        for _ in signals.forever() {
                            if !f.swap(true, Ordering::SeqCst) {
                                continue;
                            }
                            second_signal();
                        }
                    })
                    .expect("cannot start the signal thread");
            }
            Err(_) => {
                // Without the watcher thread, fall back to the flag alone.
                for sig in STOP_SIGNALS {
                    let _ = signal_hook::flag::register(sig, flag.clone());
                }
            }
        }
        flag
    })
    .clone()
}

/// Remove `file` if a second signal ends the process before the session does (None:
/// nothing to remove, e.g. once the session has closed it or with `--keep`).
pub fn remove_on_exit(file: Option<CreatedFile>) {
    *REMOVE_ON_EXIT.lock().unwrap_or_else(|e| e.into_inner()) = file;
}

/// What a second signal must undo before the process ends (kernel settings a command
/// changed, e.g. `trace record`'s tracer); None once the command has undone it itself.
type Undo = Box<dyn FnOnce() + Send>;
static UNDO_ON_EXIT: Mutex<Option<Undo>> = Mutex::new(None);

pub fn undo_on_exit(undo: Option<Undo>) {
    *UNDO_ON_EXIT.lock().unwrap_or_else(|e| e.into_inner()) = undo;
}

/// Held by whichever ends the process first: the main thread with its own exit code, or
/// a second signal with 130 (after undoing what it must). Never released: the holder
/// ends the process. So a second signal's undo (the tracer set back under the main
/// thread's feet) never turns the main thread's teardown into a different exit code.
static ENDING: Mutex<()> = Mutex::new(());

/// End the process with `code` as the main thread's own ending, after `last_words` (its
/// error line); if a second signal is already ending it, wait for that (exit 130).
pub fn exit(code: i32, last_words: impl FnOnce()) -> ! {
    std::mem::forget(ENDING.lock().unwrap_or_else(|e| e.into_inner()));
    last_words();
    std::process::exit(code)
}

fn second_signal() -> ! {
    std::mem::forget(ENDING.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(undo) = UNDO_ON_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        undo();
    }
    drivelab_engine::sensor::meter::kill_all();
    drivelab_suites::fio::process::kill_all();
    let pending = REMOVE_ON_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match pending.map(|f| (f.remove(), f)) {
        Some((Ok(()), f)) => eprintln!(
            "drivelab: interrupted again: stopped at once; {} was removed",
            f.path().display()
        ),
        Some((Err(e), f)) => eprintln!(
            "drivelab: interrupted again: stopped at once; could not remove {}: {e}",
            f.path().display()
        ),
        None => eprintln!("drivelab: interrupted again: stopped at once"),
    }
    std::process::exit(130)
}
