//! Tiny command-line view of a results database: `dbtool LOCATION [list|export]`.
use drivelab_store::{RunFilter, Store};

fn main() {
    let mut args = std::env::args().skip(1);
    let location = args
        .next()
        .unwrap_or_else(|| Store::default_location().display().to_string());
    let command = args.next().unwrap_or_else(|| "list".into());
    let result = Store::open(&location).and_then(|mut store| match command.as_str() {
        "export" => store
            .export_runs(&RunFilter::default())
            .map(|doc| println!("{doc:#}")),
        _ => store.list_runs(&RunFilter::default()).map(|runs| {
            println!("{} runs in {}", runs.len(), store.location());
            for r in runs {
                println!(
                    "{}  {}  {}  {}",
                    &r.run_id[..r.run_id.len().min(8)],
                    r.started_at,
                    r.suite,
                    r.device_model.unwrap_or_default()
                );
            }
        }),
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
