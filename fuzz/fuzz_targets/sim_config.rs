//! `sim:` targets: `sim:nvme-tlc,capacity=4G,op=7%`. Only the configuration is parsed
//! (`SimConfig::parse`), not the drive's tables (`drivelab_sim::parse` allocates them).
#![no_main]
use drivelab_sim::SimConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(cfg) = SimConfig::parse(text) {
        // Documented: parsing the resolved spec gives back the same parameters.
        let spec = cfg.to_spec();
        let again = SimConfig::parse(&spec)
            .unwrap_or_else(|e| panic!("{text:?} -> {spec:?} does not parse again: {e}"));
        assert_eq!(again, cfg, "{text:?} -> {spec:?}");
    }
});
