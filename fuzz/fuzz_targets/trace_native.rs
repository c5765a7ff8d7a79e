//! drivelab's own trace format (`docs/trace-format.md`), read to the end.
#![no_main]
use drivelab_trace::native::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = Reader::new(data) {
        for r in reader {
            if r.is_err() {
                break;
            }
        }
    }
});
