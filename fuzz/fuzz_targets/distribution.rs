//! `--random_distribution zipf:1.2` and the like.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = drivelab_engine::spec::Distribution::parse(text);
});
