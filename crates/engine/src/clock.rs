//! Where the engine's time comes from.
//!
//! Real backends read a [`MonotonicClock`]; the discrete-event backend takes time from the
//! simulated device instead, so the same engine runs in virtual time.

/// A source of nanosecond timestamps that never go backwards.
pub trait Clock: Sync {
    fn now_ns(&self) -> u64;
}

/// CLOCK_MONOTONIC, counted from when the clock was made.
///
/// Where the kernel's own clocksource is the TSC (invariant, synchronised across CPUs),
/// the clock reads the TSC directly and scales it with a factor calibrated against
/// CLOCK_MONOTONIC (≈8 ns a reading against ≈19 ns through the vDSO). The factor is
/// measured once per process, across a 10 ms sleep: each end is the TSC read between two
/// CLOCK_MONOTONIC readings (the closest of a few tries), so the calibration error stays
/// below 10^-5 (under 40 ms over an hour) without spending CPU on the run's account.
/// Elsewhere it reads CLOCK_MONOTONIC.
#[derive(Clone, Copy)]
pub enum MonotonicClock {
    /// The TSC at creation, and the scale factor.
    Tsc { start: u64, mult: u64 },
    /// CLOCK_MONOTONIC at creation.
    Vdso { start_ns: u64 },
}

/// Fixed-point shift of the TSC scale factor.
const SHIFT: u32 = 32;

/// A TSC reading and the CLOCK_MONOTONIC time it was taken at: the midpoint of the
/// tightest of a few bracketing pairs of CLOCK_MONOTONIC readings.
fn tsc_at() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..8 {
        let m0 = crate::sys::monotonic_ns();
        let t = crate::sys::tsc();
        let m1 = crate::sys::monotonic_ns();
        if m1 - m0 < best.0 {
            best = (m1 - m0, t, m0 + (m1 - m0) / 2);
        }
    }
    (best.1, best.2)
}

/// Nanoseconds per TSC tick << SHIFT, or None where the TSC is not to be used.
fn tsc_scale() -> Option<u64> {
    static SCALE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *SCALE.get_or_init(|| {
        if !crate::sys::tsc_usable() {
            return None;
        }
        let (t0, m0) = tsc_at();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (t1, m1) = tsc_at();
        if t1 <= t0 || m1 <= m0 {
            return None;
        }
        Some(((((m1 - m0) as u128) << SHIFT) / (t1 - t0) as u128) as u64)
    })
}

impl MonotonicClock {
    pub fn new() -> MonotonicClock {
        match tsc_scale() {
            Some(mult) => MonotonicClock::Tsc {
                start: crate::sys::tsc(),
                mult,
            },
            None => MonotonicClock::Vdso {
                start_ns: crate::sys::monotonic_ns(),
            },
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
        match *self {
            MonotonicClock::Tsc { start, mult } => {
                let ticks = crate::sys::tsc().saturating_sub(start) as u128;
                ((ticks * mult as u128) >> SHIFT) as u64
            }
            MonotonicClock::Vdso { start_ns } => crate::sys::monotonic_ns() - start_ns,
        }
    }
}

/// The last part of a wait for a due time is spent spinning on the clock: a sleep ends
/// tens of µs late on a busy machine, a trace's I/Os come µs apart.
pub const SPIN_NS: u64 = 50_000;

/// Wait until `t` on `clock`: sleep to within [`SPIN_NS`] of it, then spin.
pub fn sleep_until(clock: &dyn Clock, t: u64) {
    let now = clock.now_ns();
    if t > now + SPIN_NS {
        std::thread::sleep(std::time::Duration::from_nanos(t - now - SPIN_NS));
    }
    while clock.now_ns() < t {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_clock_monotonic() {
        let c = MonotonicClock::new();
        let m0 = crate::sys::monotonic_ns();
        let c0 = c.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let c1 = c.now_ns();
        let m1 = crate::sys::monotonic_ns();
        let (dc, dm) = (c1 - c0, m1 - m0);
        assert!(
            (dc as f64 - dm as f64).abs() < 2e-4 * dm as f64 + 20_000.0,
            "{dc} vs {dm}"
        );
        let mut prev = c.now_ns();
        for _ in 0..100_000 {
            let n = c.now_ns();
            assert!(n >= prev);
            prev = n;
        }
    }
}
