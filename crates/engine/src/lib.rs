//! drivelab's workload engine.
//!
//! Data flows one way: a resolved [`spec::Workload`] goes in, a backend carries out its
//! I/Os against a target, and every completion lands in the measurement core
//! (histograms and a fixed-grid interval series); out comes a [`result::RunResult`]. The
//! engine knows nothing of review methodologies. Time always comes from a clock the
//! engine is given, so a simulated device ([`model::DeviceModel`]) runs the very same
//! engine in virtual time.
//!
//! Layout: `spec` (what to do), `target` (where), `backend` (how: one file per I/O
//! engine, one loop each), `source` (where a backend's I/Os come from: a generator's job
//! or a trace), `gen` and `data` (which I/Os, which bytes), `hist` and `series`
//! (measurement), `run` (putting it together), `replay` (a trace as the I/O source, run
//! by the same backends), `assemble` (the result of either), `result` (what comes out),
//! `block_header`, `verify` and `verify_pass` (checking what was written), `log_writes`
//! (the kernel's dm-log-writes format and a replayer), `sys` (raw system calls).

pub mod assemble;
pub mod backend;
pub mod block_header;
pub mod buf;
pub mod clock;
pub mod data;
pub mod gen;
pub mod hist;
pub mod job;
pub mod log_writes;
pub mod model;
pub mod op;
pub mod prepare;
pub mod replay;
pub mod result;
pub mod run;
pub mod sensor;
pub mod series;
pub mod size;
pub mod source;
pub mod spec;
pub mod sys;
pub mod target;
pub mod verify;
pub mod verify_backlog;
pub mod verify_pass;
pub use drivelab_trace::text;
