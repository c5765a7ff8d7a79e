//! Sizes, percentages and durations as users type them (`--bs 4k`, `--size 90%`,
//! `--runtime 30s`): any text gives a value or a one-line error, never a panic.
#![no_main]
use drivelab_engine::size::{parse_duration_ns, parse_size, parse_size_or_percent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let one_line = |e: &String| assert!(!e.is_empty());
    if let Err(e) = parse_size(text) {
        one_line(&e);
    }
    if let Err(e) = parse_size_or_percent(text) {
        one_line(&e);
    }
    match parse_duration_ns(text) {
        Ok(ns) => assert!(ns <= drivelab_engine::size::MAX_DURATION_NS),
        Err(e) => one_line(&e),
    }
});
