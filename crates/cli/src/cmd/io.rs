//! `drivelab io`: one workload, fio-style.

use std::sync::atomic::Ordering;

use drivelab_engine::result::Progress;
use drivelab_engine::result::RunStatus;
use drivelab_engine::run::{self, RunOptions};
use drivelab_engine::size::SizeOrPercent;
use drivelab_engine::spec::{BsShare, IoEngine, RwMode, WorkloadRequest};
use drivelab_engine::target::{self, OpenOptions, TargetSpec};

use crate::args::IoArgs;
use crate::fail::{Fail, FAILED, INTERRUPTED};
use crate::out_path::{self, Kind, OutFile};
use crate::output;
use crate::output::progress::{Bound, Meter};
use crate::session::Session;

/// Build the workload request from the options (spec shorthand first, explicit options win).
fn request(a: &IoArgs) -> WorkloadRequest {
    let mut r = WorkloadRequest::default();
    if let Some(s) = a.spec {
        // The spec says sequential or random; --rw only the direction (read, write or
        // mixed), whether or not it is spelt with "rand".
        let (read, write) = match a.rw {
            None | Some(RwMode::Read | RwMode::RandRead) => (true, false),
            Some(RwMode::Write | RwMode::RandWrite) => (false, true),
            Some(RwMode::Rw | RwMode::RandRw) => (true, true),
        };
        r.rw = match (s.random, read, write) {
            (true, true, true) => RwMode::RandRw,
            (true, _, false) => RwMode::RandRead,
            (true, false, true) => RwMode::RandWrite,
            (false, true, true) => RwMode::Rw,
            (false, _, false) => RwMode::Read,
            (false, false, true) => RwMode::Write,
        };
        r.bs = vec![BsShare {
            bytes: s.bs,
            percent: 100,
        }];
        // The engine follows from the depth (io_uring above Q1) unless --ioengine names one.
        r.iodepth = s.q;
        r.numjobs = s.t;
    } else if let Some(rw) = a.rw {
        r.rw = rw;
    }
    if let Some(v) = a.rwmixread {
        r.rwmixread = v;
    }
    if let Some(b) = a.bs {
        r.bs = vec![BsShare {
            bytes: b,
            percent: 100,
        }];
    }
    if let Some(s) = &a.bssplit {
        r.bs = s.0.clone();
    }
    if let Some(v) = a.iodepth {
        r.iodepth = v;
    }
    if let Some(v) = a.numjobs {
        r.numjobs = v;
    }
    if a.ioengine.is_some() {
        r.ioengine = a.ioengine;
    }
    r.direct = a.direct;
    if let Some(v) = a.invalidate {
        r.invalidate = v;
    }
    if let Some(v) = a.end_fsync {
        r.end_fsync = v;
    }
    if let Some(v) = a.offset {
        r.offset = v;
    }
    r.size = a.size;
    r.io_size = a.io_size;
    r.runtime_ns = match (a.runtime, a.io_size) {
        (Some(t), _) => Some(t),
        (None, Some(_)) => None,
        (None, None) => r.runtime_ns,
    };
    if let Some(v) = a.ramp_time {
        r.ramp_ns = v;
    }
    if let Some(v) = a.percentage_random {
        r.percentage_random = v;
    }
    if let Some(d) = &a.random_distribution {
        r.random_distribution = d.clone();
    }
    r.randseed = a.randseed;
    if let Some(d) = a.data {
        r.data = d;
    }
    if let Some(v) = a.log_interval {
        r.log_interval_ns = v;
    }
    r.continue_on_error = a.continue_on_error;
    r.verify = a.verify;
    r.verify_backlog = a.verify_backlog.map(u64::from);
    if let Some(v) = a.fixedbufs {
        r.fixedbufs = v;
    }
    if let Some(v) = a.registerfiles {
        r.registerfiles = v;
    }
    if let Some(n) = a.iodepth_batch_submit {
        r.iodepth_batch_submit = n;
    }
    r
}

pub fn run(a: IoArgs) -> Result<i32, Fail> {
    // `sim:help`: the simulator's keys, each with its meaning, form and default.
    if a.target.target.as_deref() == Some("sim:help") {
        print!("{}", drivelab_sim::help_text());
        return Ok(0);
    }
    let req = request(&a);
    // The depth came from the spec, not --iodepth: say so in its terms.
    if let (Some(s), None, Some(IoEngine::Sync)) = (a.spec, a.iodepth, req.ioengine) {
        if s.q > 1 {
            return Err(Fail::usage(format!(
                "--spec \"{}\": the sync engine keeps one I/O in flight per thread; use Q1 with T{} threads, or --ioengine io_uring",
                s.label(),
                s.q * s.t
            )));
        }
    }
    // What can be checked without the target is checked before it is opened (or made).
    run::check(&req).map_err(Fail::usage)?;
    // Found out now, not after the run.
    let target_path =
        std::path::PathBuf::from(a.target.target.as_deref().unwrap_or(target::TEST_FILE_NAME));
    // Ctrl-C from here on is an interruption (a partial result, exit 130), not the
    // default action: the handlers go in before the outputs are claimed.
    crate::signals::stop_flag();
    let claim = |p: &std::path::Path, flag, kind| {
        OutFile::claim(p, flag, kind, a.force)?.not_the_target(&target_path)
    };
    let json_out = a.json.as_deref();
    let json_out = json_out.map(|p| claim(p, "--json", Kind::Result));
    let csv_out = a.csv.as_deref();
    let csv_out = csv_out.map(|p| claim(p, "--csv", Kind::SeriesCsv));
    let (json_out, csv_out) = (json_out.transpose()?, csv_out.transpose()?);
    out_path::distinct(&[json_out.as_ref(), csv_out.as_ref()])?;
    // `--json -` is `--output-format json`: the result alone on standard output.
    let json_stdout =
        a.output_format == "json" || json_out.as_ref().is_some_and(OutFile::is_stdout);
    let json_out = json_out.filter(|o| !o.is_stdout());
    let csv_stdout = csv_out.as_ref().is_some_and(OutFile::is_stdout);
    if json_stdout && csv_stdout {
        return Err(Fail::usage(
            "--csv -: standard output carries the JSON result (--output-format json); give --csv a file name",
        ));
    }
    // A document on standard output is alone there: no summary, no progress.
    let doc_stdout = json_stdout || csv_stdout;
    Session::check_sensor_target(a.target.target.as_deref(), &a.target)?;
    let spec = crate::target_arg::parse(a.target.target.as_deref())?;
    // null and sim: targets bring their own engine; another one asked for would be
    // replaced without a word.
    crate::target_arg::refuse_engine_on_null(&spec, req.ioengine)?;
    match (&spec, req.ioengine) {
        (TargetSpec::Model(_), Some(e)) if e != IoEngine::Sim => {
            return Err(Fail::usage(format!(
                "--ioengine {}: a sim: target runs in virtual time on its own engine; leave --ioengine out",
                e.name()
            )))
        }
        _ => {}
    }
    let writes = req.rw.writes(req.rwmixread);
    let create_size = match (&spec, req.size) {
        (TargetSpec::Path(p), Some(SizeOrPercent::Bytes(s))) => {
            if let SizeOrPercent::Percent(_) = req.offset {
                let missing = !p
                    .as_deref()
                    .unwrap_or(std::path::Path::new(target::TEST_FILE_NAME))
                    .exists();
                if missing {
                    return Err(Fail::usage(
                        "--offset: a percentage of a test file that --size is about to size; give the offset in bytes",
                    ));
                }
            }
            req.offset.resolve(0) + s
        }
        _ => target::TEST_FILE_SIZE,
    };
    let open = OpenOptions {
        write: writes,
        direct: req.direct.unwrap_or(true),
        overwrite: a.target.overwrite,
        destructive: a.target.destructive.clone(),
        create_size,
    };
    let mut session = Session::open(spec, &open, a.target.keep)?;
    let w = run::resolve(&req, &session.target().info).map_err(|e| session.usage(e))?;
    session.choose_sensors(&a.target)?;
    let meter = Meter::new(a.progress.style(doc_stdout));
    if w.read_percent() > 0 {
        session.ensure_filled(&w, &meter)?;
        // (Not when stopped during the fill: the run stops at once, marked interrupted.)
        if !a.read_holes && !session.stop.load(Ordering::Relaxed) {
            run::refuse_unwritten(&w, session.target()).map_err(|e| session.usage(e))?;
        }
    }
    meter.start("", Bound::of(&w));
    let stop = session.stop.clone();
    let cb = meter.callback();
    let res = run::run(
        &w,
        session.target_mut(),
        &RunOptions {
            stop: &stop,
            progress: cb.as_ref().map(|f| f as &(dyn Fn(&Progress<'_>) + Sync)),
        },
    )
    .map_err(|e| session.failed(e))?;
    meter.clear();
    let interrupted = session.stop.load(Ordering::Relaxed);
    // The measurement is shown first, so that a file that cannot be written after all
    // (a full disk) does not take it with it.
    // A stdout that cannot be written still lets the files be written first.
    let verified = res
        .measured
        .verify
        .as_ref()
        .and_then(|v| output::summary::verified_line(v, &res.config));
    let shown = if json_stdout || csv_stdout {
        // The check's outcome goes to the terminal, never into the document's stream.
        if let Some(line) = verified {
            eprintln!("drivelab: {line}");
        }
        if json_stdout {
            output::json::write_stdout(&res).map_err(Fail::failed)
        } else {
            Ok(())
        }
    } else {
        output::stdout::say(&output::summary::render(&res))
    };
    if let Some(r) = json_out {
        output::json::write_file(&r, &res)?;
    }
    if let Some(r) = csv_out {
        r.write(output::csv::render(&res.measured.series).as_bytes())?;
    }
    shown?;
    session.close()?;
    Ok(match res.measured.status {
        RunStatus::Complete => 0,
        RunStatus::Interrupted => INTERRUPTED,
        RunStatus::Failed => {
            if let Some(f) = &res.measured.failure {
                eprintln!("drivelab: the run failed: {f}");
            }
            if interrupted {
                INTERRUPTED
            } else {
                FAILED
            }
        }
    })
}
