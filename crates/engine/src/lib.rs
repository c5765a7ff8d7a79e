//! drivelab's workload engine.
//!
//! Data flows one way: a resolved [`spec::Workload`] goes in, a backend carries out its
//! I/Os against a target, and every completion lands in the measurement core
//! (histograms and a fixed-grid interval series); out comes a result. The engine knows
//! nothing of review methodologies. Time always comes from a clock the engine is given,
//! so a simulated device ([`model::DeviceModel`]) runs the very same engine in virtual time.

pub mod model;
pub mod op;
