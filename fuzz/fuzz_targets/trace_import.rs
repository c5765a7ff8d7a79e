//! `drivelab trace import FORMAT FILE`: the first byte picks the format (fio iolog,
//! blkparse, blktrace, MSR, SPC, Tencent, Alibaba), the rest is the file, read to the end.
#![no_main]
use drivelab_trace::import::{open, Format, Options};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

static FILE: OnceLock<PathBuf> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[pick as usize % Format::ALL.len()];
    // One file, rewritten for every input (blktrace reads `NAME.blktrace.N`).
    let path = FILE.get_or_init(|| std::env::temp_dir().join("drivelab-fuzz-trace-import.blktrace.0"));
    std::fs::write(path, body).unwrap();
    let opts = Options {
        volume: (pick & 0x80 != 0).then(|| "0".to_string()),
        ..Options::default()
    };
    if let Ok(mut import) = open(format, path, &opts) {
        for _ in 0..1_000_000 {
            match import.next_event() {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        let _ = import.header();
    }
});
