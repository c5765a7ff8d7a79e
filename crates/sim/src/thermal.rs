//! Lumped thermal model: one heat capacity behind one thermal resistance to ambient.
//!
//! Power is idle power plus the energy of the work done (NAND programs, reads, erases and
//! bytes over the host link) per unit time. Over a step of length `dt` with mean power
//! `P`, the temperature relaxes exponentially towards `T_ss = T_ambient + R·P` with time
//! constant `τ`. Above `throttle_c` the drive throttles until it has cooled to `release_c`;
//! crossing times are solved exactly within a step.

/// Constants of the thermal model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThermalParams {
    pub ambient_c: f64,
    pub resistance_c_per_w: f64,
    pub tau_s: f64,
    pub idle_w: f64,
    pub throttle_c: f64,
    pub release_c: f64,
}

/// An M.2 NVMe drive without heatsink: sustained link-speed writes (~5 W) heat it past
/// 75 °C in a few seconds; steady-state random writes (~1 W) leave it near 47 °C.
pub const M2_NVME: ThermalParams = ThermalParams {
    ambient_c: 35.0,
    resistance_c_per_w: 12.0,
    tau_s: 4.0,
    idle_w: 0.4,
    throttle_c: 75.0,
    release_c: 70.0,
};

/// Energy of the work the device does, joules per unit.
#[derive(Debug, Clone, Copy)]
pub struct Energy {
    pub link_per_byte_j: f64,
    pub slc_program_per_page_j: f64,
    pub program_per_page_j: f64,
    pub read_per_page_j: f64,
    pub erase_j: f64,
}

/// Energies that go with [`M2_NVME`].
pub const NVME_ENERGY: Energy = Energy {
    link_per_byte_j: 0.5e-9,
    slc_program_per_page_j: 0.8e-6,
    program_per_page_j: 2.0e-6,
    read_per_page_j: 0.3e-6,
    erase_j: 50e-6,
};

/// Temperature state and the throttle intervals seen so far.
#[derive(Debug, Clone)]
pub struct Thermal {
    p: ThermalParams,
    temp_c: f64,
    last_ns: u64,
    last_energy_j: f64,
    throttled: bool,
    throttle_start_ns: u64,
    intervals: Vec<(u64, u64)>,
    max_c: f64,
    start_c: f64,
}

impl Thermal {
    /// Start at the idle steady state at time 0.
    pub fn new(p: ThermalParams) -> Thermal {
        Thermal::starting_at(p, p.ambient_c + p.resistance_c_per_w * p.idle_w)
    }

    /// Start at `t0` °C at time 0 (a drive warm from earlier work, or cold).
    pub fn starting_at(p: ThermalParams, t0: f64) -> Thermal {
        Thermal {
            p,
            temp_c: t0,
            last_ns: 0,
            last_energy_j: 0.0,
            throttled: false,
            throttle_start_ns: 0,
            intervals: Vec::new(),
            max_c: t0,
            start_c: t0,
        }
    }

    /// Time of the last update.
    #[inline]
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// Whether the drive is throttling now.
    #[inline]
    pub fn throttled(&self) -> bool {
        self.throttled
    }

    fn project(&self, now_ns: u64, energy_total_j: f64) -> (f64, f64, f64) {
        let dt_s = (now_ns.saturating_sub(self.last_ns)) as f64 * 1e-9;
        if dt_s <= 0.0 {
            return (self.temp_c, self.temp_c, dt_s);
        }
        let power = self.p.idle_w + (energy_total_j - self.last_energy_j) / dt_s;
        let t_ss = self.p.ambient_c + self.p.resistance_c_per_w * power;
        let t_new = t_ss + (self.temp_c - t_ss) * (-dt_s / self.p.tau_s).exp();
        (t_new, t_ss, dt_s)
    }

    /// Temperature at `now_ns` given the device's cumulative work energy, without
    /// changing state.
    pub fn temperature_at(&self, now_ns: u64, energy_total_j: f64) -> f64 {
        self.project(now_ns, energy_total_j).0
    }

    /// Advance to `now_ns` with cumulative work energy `energy_total_j`.
    pub fn update(&mut self, now_ns: u64, energy_total_j: f64) {
        let (t_new, t_ss, dt_s) = self.project(now_ns, energy_total_j);
        if dt_s <= 0.0 {
            return;
        }
        // Time (ns after last_ns) at which the exponential passes `level`.
        let crossing = |level: f64| -> u64 {
            let ratio = (self.temp_c - t_ss) / (level - t_ss);
            let t = if ratio > 0.0 {
                self.p.tau_s * ratio.ln()
            } else {
                dt_s
            };
            self.last_ns + (t.clamp(0.0, dt_s) * 1e9) as u64
        };
        if !self.throttled && t_new >= self.p.throttle_c {
            self.throttled = true;
            self.throttle_start_ns = crossing(self.p.throttle_c);
        } else if self.throttled && t_new <= self.p.release_c {
            self.throttled = false;
            let end = crossing(self.p.release_c).max(self.throttle_start_ns);
            self.intervals.push((self.throttle_start_ns, end));
        }
        self.max_c = self.max_c.max(t_new);
        self.temp_c = t_new;
        self.last_ns = now_ns;
        self.last_energy_j = energy_total_j;
    }

    /// Closed throttle intervals, plus the open one (ending at `now_ns`) if throttling.
    pub fn intervals(&self, now_ns: u64) -> Vec<(u64, u64)> {
        let mut v = self.intervals.clone();
        if self.throttled {
            v.push((self.throttle_start_ns, now_ns.max(self.throttle_start_ns)));
        }
        v
    }

    /// Temperature at time 0.
    pub fn start_c(&self) -> f64 {
        self.start_c
    }

    /// Highest temperature reached.
    pub fn max_c(&self) -> f64 {
        self.max_c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heats_under_load_throttles_and_cools_when_idle() {
        let mut th = Thermal::new(M2_NVME);
        let start = th.temperature_at(0, 0.0);
        assert!((start - 39.8).abs() < 1e-9);
        // 6 W of work for 20 s in 1 ms steps.
        let mut e = 0.0;
        let mut t = 0u64;
        while t < 20_000_000_000 {
            t += 1_000_000;
            e += 6.0e-3;
            th.update(t, e);
        }
        assert!(th.throttled());
        let onset = th.intervals(t)[0].0;
        // Analytic onset: T_ss = 35 + 12 × 6.4 = 111.8; 111.8 - 72 e^{-t/4} = 75 → t ≈ 2.72 s.
        let expect = 4.0 * (72.0f64 / 36.8).ln();
        assert!(((onset as f64) * 1e-9 - expect).abs() < 0.01, "{onset}");
        // Idle for 60 s: cools and releases.
        th.update(t + 60_000_000_000, e);
        assert!(!th.throttled());
        let iv = th.intervals(t + 60_000_000_000);
        assert_eq!(iv.len(), 1);
        assert!(iv[0].1 > t && iv[0].1 < t + 60_000_000_000);
        assert!(th.temperature_at(t + 60_000_000_000, e) < 41.0);
    }
}
