//! `--buffer_pattern` / data pattern words.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = drivelab_engine::spec::DataPattern::parse(text);
});
