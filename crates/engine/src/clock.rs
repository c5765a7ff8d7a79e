//! Where the engine's time comes from.
//!
//! Real backends read a [`MonotonicClock`]; the discrete-event backend takes time from the
//! simulated device instead, so the same engine runs in virtual time.

use std::time::Instant;

/// A source of nanosecond timestamps that never go backwards.
pub trait Clock: Sync {
    fn now_ns(&self) -> u64;
}

/// CLOCK_MONOTONIC, counted from when the clock was made.
pub struct MonotonicClock {
    base: Instant,
}

impl MonotonicClock {
    pub fn new() -> MonotonicClock {
        MonotonicClock {
            base: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline(always)]
    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }
}
