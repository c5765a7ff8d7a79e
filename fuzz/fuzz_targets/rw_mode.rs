//! `--rw randrw` and `--ioengine io_uring`: the one-word choices.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = drivelab_engine::spec::RwMode::parse(text);
    let _ = drivelab_engine::spec::IoEngine::parse(text);
});
