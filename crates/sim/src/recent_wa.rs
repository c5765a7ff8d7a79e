//! Write amplification over the drive's most recent drive write: the simulated drive's own
//! figure, reported beside the closed form's (`analytic`). The closed form is the
//! large-block limit of greedy GC; at the small spare areas of consumer drives it reads a
//! few percent high, because greedy GC profits from blocks that happen to hold fewer valid
//! pages than the average one.

use std::collections::VecDeque;

/// Host and NAND data page counts, marked every quarter of the user capacity written,
/// with the host write commands and the virtual time at each mark.
#[derive(Debug, Clone)]
pub struct RecentWa {
    step: u64,
    next: u64,
    marks: VecDeque<(u64, u64)>,
    /// (host write commands, virtual time, die time idled in GC stalls) at each mark.
    ops_at: VecDeque<(u64, u64, u64)>,
}

/// Marks kept: the oldest is at least four quarters (one drive write) behind the newest.
const MARKS: usize = 5;

impl RecentWa {
    /// For a drive of `user_pages` logical pages.
    pub fn new(user_pages: u64) -> RecentWa {
        let step = (user_pages / 4).max(1);
        RecentWa {
            step,
            next: step,
            marks: VecDeque::from([(0, 0)]),
            ops_at: VecDeque::from([(0, 0, 0)]),
        }
    }

    /// Record the running totals of host pages written and NAND data pages programmed.
    #[inline]
    #[cfg(test)]
    pub fn note(&mut self, host_pages: u64, nand_pages: u64) {
        self.note_at(host_pages, nand_pages, (0, 0, 0));
    }

    /// [`RecentWa::note`] with (host write commands so far, the time, die time idled in
    /// GC stalls so far), for [`RecentWa::host_ops_per_s`] and
    /// [`RecentWa::stall_idle_fraction`].
    #[inline]
    pub fn note_at(&mut self, host_pages: u64, nand_pages: u64, at: (u64, u64, u64)) {
        if host_pages >= self.next {
            if self.marks.len() == MARKS {
                self.marks.pop_front();
                self.ops_at.pop_front();
            }
            self.marks.push_back((host_pages, nand_pages));
            self.ops_at.push_back(at);
            self.next = host_pages + self.step;
        }
    }

    /// Host write commands per second of virtual time over the same last drive write
    /// as [`RecentWa::ratio`], up to (`host_ops`, `t_ns`); `None` until the drive has
    /// been written once.
    pub fn host_ops_per_s(&self, host_pages: u64, host_ops: u64, t_ns: u64) -> Option<f64> {
        let &(h0, _) = self.marks.front()?;
        let &(o0, t0, _) = self.ops_at.front()?;
        (host_pages - h0 >= 4 * self.step && t_ns > t0)
            .then(|| (host_ops - o0) as f64 / ((t_ns - t0) as f64 / 1e9))
    }

    /// Share of the `dies`' time over the same window that they idled while GC stalls
    /// held the host back, up to (`idle_ns` so far, `t_ns`).
    pub fn stall_idle_fraction(
        &self,
        host_pages: u64,
        idle_ns: u64,
        t_ns: u64,
        dies: u32,
    ) -> Option<f64> {
        let &(h0, _) = self.marks.front()?;
        let &(_, t0, i0) = self.ops_at.front()?;
        (host_pages - h0 >= 4 * self.step && t_ns > t0)
            .then(|| ((idle_ns - i0) as f64 / (dies as f64 * (t_ns - t0) as f64)).min(1.0))
    }

    /// NAND data pages per host page over the last one to one and a quarter drive writes;
    /// `None` until the drive has been written once.
    pub fn ratio(&self, host_pages: u64, nand_pages: u64) -> Option<f64> {
        let &(h0, n0) = self.marks.front()?;
        let host = host_pages - h0;
        (host >= 4 * self.step).then(|| (nand_pages - n0) as f64 / host as f64)
    }

    /// Whether the last drive write was one steady state: its four quarters' write
    /// amplification and host write commands per second each within `tol` (relative) of
    /// one another. A window that spans a fill, an SLC burst or a change of GC phase is
    /// not: a rate derived from its WA describes no measurement.
    pub fn steady(&self, tol: f64) -> bool {
        if self.marks.len() < MARKS {
            return false;
        }
        let quarter = |i: usize| {
            let ((h0, n0), (h1, n1)) = (self.marks[i], self.marks[i + 1]);
            let ((o0, t0, _), (o1, t1, _)) = (self.ops_at[i], self.ops_at[i + 1]);
            let wa = (n1 - n0) as f64 / (h1 - h0).max(1) as f64;
            let rate = (o1 - o0) as f64 / (t1.saturating_sub(t0)).max(1) as f64;
            (wa, rate)
        };
        let q: Vec<(f64, f64)> = (0..MARKS - 1).map(quarter).collect();
        let spread = |f: fn(&(f64, f64)) -> f64| {
            let lo = q.iter().map(f).fold(f64::INFINITY, f64::min);
            let hi = q.iter().map(f).fold(0.0, f64::max);
            hi - lo <= tol * hi
        };
        spread(|x| x.0) && spread(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_the_last_drive_write_only() {
        let mut w = RecentWa::new(400); // a mark every 100 host pages
        let mut nand = 0;
        for host in 1..=399u64 {
            nand += 1; // WA 1 while filling
            w.note(host, nand);
        }
        assert_eq!(w.ratio(399, nand), None);
        for host in 400..=1000u64 {
            nand += 3; // then WA 3
            w.note(host, nand);
        }
        // The oldest mark is at 600 host pages: all of the window is at WA 3.
        assert_eq!(w.ratio(1000, nand), Some(3.0));
        // Straight after the first drive write the window still holds the fill.
        let mut w = RecentWa::new(400);
        w.note(400, 400);
        w.note(500, 800);
        assert_eq!(w.ratio(500, 800), Some(800.0 / 500.0));
    }
}
