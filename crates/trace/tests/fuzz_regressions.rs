//! Inputs the fuzzers once crashed on (fuzz/fuzz_targets/), kept as regression tests:
//! reading each to its end gives records or an error, never a panic.

use drivelab_trace::native::Reader;

/// `trace_native`: an extent whose offset plus length passes 2^64 (the reader now refuses
/// it itself, with the record's number).
#[test]
fn an_extent_past_2_64_is_an_error_not_a_panic() {
    let data = include_bytes!("fuzz/extent-past-2-64.dltrace");
    let reader = Reader::new(&data[..]).expect("the header is valid");
    let mut refused = false;
    for r in reader {
        if let Err(e) = r {
            assert!(!e.to_string().is_empty());
            refused = true;
            break;
        }
    }
    assert!(refused, "the corrupt record is refused");
}
