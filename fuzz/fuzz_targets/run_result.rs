//! The engine's result JSON (`drivelab io --json`, a bundle step's `run`).
#![no_main]
use drivelab_engine::result::RunResult;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = serde_json::from_slice::<RunResult>(data) {
        // What is read is written back without failing.
        let _ = serde_json::to_vec(&r);
    }
});
