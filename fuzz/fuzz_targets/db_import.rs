//! `drivelab db import FILE`: the export document, parsed and every record validated.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(records) = drivelab_store::parse_export(&doc) {
        for r in &records {
            let _ = r.summary();
        }
    }
});
