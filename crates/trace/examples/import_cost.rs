//! The importers' own cost, without encoding or writing a trace: read FILE as FORMAT to
//! the end and count its records (timed under /usr/bin/time in a --release build;
//! docs/performance.md, "blkparse text"; `bench/trace-import --format blkparse` makes an
//! input).
//!
//! Usage: cargo run --release -p drivelab-trace --example import_cost -- FORMAT FILE

use drivelab_trace::import::{self, Event, Format, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(format), Some(path)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: import_cost FORMAT FILE");
        std::process::exit(2);
    };
    let Some(format) = Format::from_name(format) else {
        eprintln!("import_cost: unknown format {format}");
        std::process::exit(2);
    };
    let mut imp = match import::open(format, std::path::Path::new(path), &Options::default()) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("import_cost: {e}");
            std::process::exit(1);
        }
    };
    let mut ios = 0u64;
    loop {
        match imp.next_event() {
            Ok(Some(Event::Io(_))) => ios += 1,
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                eprintln!("import_cost: {e}");
                std::process::exit(1);
            }
        }
    }
    println!("{ios}");
}
