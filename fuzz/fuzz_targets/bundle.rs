//! A result bundle's `run.json`, as `drivelab report` and `drivelab compare` read it:
//! parsed and schema-checked (`parse_run_doc`, what `open_bundle` does after reading
//! the file), labelled, summarised (an unfinished bundle is analysed again by its
//! suite, `from_saved` + `report`), and rendered into the HTML report.
#![no_main]
use drivelab_report::bundles::{bundle_report, drive_label, parse_run_doc, summary_of, DriveRun};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(doc) = parse_run_doc(text) else {
        return;
    };
    let _ = drive_label(&doc);
    let _ = summary_of(&doc);
    let _ = drivelab_suites::from_saved(doc.suite, &doc.knobs);
    let runs = [DriveRun::new(None, doc)];
    let _ = bundle_report(&runs).render();
});
