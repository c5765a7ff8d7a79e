//! A fio JSON / json+ result as `drivelab import fio` reads it (no logs folder).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = drivelab_suites::fio::import::import(text, None, "fuzz.json");
    }
});
