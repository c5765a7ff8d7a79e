//! `--spec "SEQ1M Q8T1"` (CrystalDiskMark's test names).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = drivelab_engine::spec::CdmSpec::parse(text);
});
