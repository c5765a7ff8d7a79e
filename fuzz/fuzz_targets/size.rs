//! Sizes, percentages and durations as users type them (`--bs 4k`, `--size 90%`,
//! `--runtime 30s`): any text gives a value or a one-line error, never a panic.
#![no_main]
use drivelab_engine::size::{parse_duration_ns, parse_size, parse_size_or_percent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let said = |e: &String| assert!(!e.is_empty(), "{text:?}: an empty error");
    if let Err(e) = parse_size(text) {
        said(&e);
    }
    if let Err(e) = parse_size_or_percent(text) {
        said(&e);
    }
    match parse_duration_ns(text) {
        Ok(ns) => assert!(ns <= drivelab_engine::size::MAX_DURATION_NS, "{text:?}"),
        Err(e) => said(&e),
    }
});
