//! drivelab-analysis: the pure analyses behind drivelab's review
//! methodologies.
//!
//! Every function here works on data already measured — per-second series
//! (IOPS or MB/s each second) and sweep curves — and does no I/O. Results are
//! plain serde structs that never hold NaN or infinity: a value that does not
//! exist is an `Option`. Input samples that are NaN, infinite or negative are
//! read as 0 ("nothing measured"), see [`stats::clean`].
//!
//! - [`qd`]: queue-depth sweep knee (lowest QD reaching 95 % of the plateau, the
//!   level within noise of the best throughput) and the early-stop rule.
//! - [`consistency`]: performance-consistency scores over the final window,
//!   stalls, performance levels and the end of the initial burst.
//! - [`steady`]: the SNIA PTS steady-state window test.
//! - [`fleet`]: many hosts' results of one step: spread, merged histograms, summed series.
//! - [`fill`]: sequential-fill cache size and rate-drop episodes.
//! - [`telemetry`]: temperature, throttling, power, energy and efficiency of a step.
//! - [`replay`]: trace-replay scores (data rate, service times, slow I/Os, against
//!   the original).
//! - [`stats`], [`runs`]: the small shared helpers the modules above use.

pub mod consistency;
pub mod fill;
pub mod fleet;
pub mod qd;
pub mod replay;
pub mod runs;
pub mod stats;
pub mod steady;
pub mod telemetry;
