//! `--bssplit 4k/60:64k/40`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(shares) = drivelab_engine::spec::parse_bssplit(text) {
        // Documented: the shares add up to 100.
        let total: u64 = shares.iter().map(|s| s.percent as u64).sum();
        assert_eq!(total, 100, "{text:?} -> {shares:?}");
    }
});
