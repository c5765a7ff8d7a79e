//! fio's per-second logs (`write_iops_log` and friends) and histogram logs.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = drivelab_suites::fio::logs::parse_rows(text);
        let _ = drivelab_suites::fio::logs::parse_hist(text);
    }
});
