//! Resource reservation: every die, channel and host-link direction has a next-free time.
//! An operation starts when its resource is free (and not before it is asked for) and
//! holds it for its cost; the request completes when its last resource is done.

/// Next-free times of the device's shared resources, in virtual ns.
#[derive(Debug, Clone)]
pub struct Resources {
    die_free: Vec<u64>,
    /// When the reads that went ahead of each die's queue (`die_suspend`) are done.
    read_free: Vec<u64>,
    /// Start and end of the last queued read on each die (`die_read`): a read that goes
    /// ahead of the queue cannot run beside it.
    last_read: Vec<(u64, u64)>,
    chan_free: Vec<u64>,
    channels: u32,
    link_free: [u64; 2],
    busy_until: u64,
}

impl Resources {
    /// `dies` dies spread round-robin over `channels` channels; all free at time 0.
    pub fn new(dies: u32, channels: u32) -> Resources {
        Resources {
            die_free: vec![0; dies as usize],
            read_free: vec![0; dies as usize],
            last_read: vec![(0, 0); dies as usize],
            chan_free: vec![0; channels as usize],
            channels,
            link_free: [0; 2],
            busy_until: 0,
        }
    }

    /// Hold die `d` for `cost` ns from `max(t, its next-free time)`; returns the end.
    #[inline]
    pub fn die(&mut self, d: u32, t: u64, cost: u64) -> u64 {
        let slot = &mut self.die_free[d as usize];
        let end = (*slot).max(t) + cost;
        *slot = end;
        if end > self.busy_until {
            self.busy_until = end;
        }
        end
    }

    /// A read in die `d`'s queue ([`Resources::die`]), remembered so that a read going
    /// ahead of the queue does not overlap it.
    #[inline]
    pub fn die_read(&mut self, d: u32, t: u64, cost: u64) -> u64 {
        let end = self.die(d, t, cost);
        self.last_read[d as usize] = (end - cost, end);
        end
    }

    /// A read that goes ahead of die `d`'s queue: it starts at `t` even when the die is
    /// busy (the controller suspends the program or erase in progress, as real ones do
    /// for reads) and pushes the die's queued work back by its `cost`. Returns its end.
    #[inline]
    pub fn die_suspend(&mut self, d: u32, t: u64, cost: u64) -> u64 {
        // One read at a time per die: a second one waits for the first, and for a
        // queued read that is running at that moment.
        let mut start = t.max(self.read_free[d as usize]);
        let (r0, r1) = self.last_read[d as usize];
        if (r0..r1).contains(&start) {
            start = r1;
        }
        let end = start + cost;
        self.read_free[d as usize] = end;
        let slot = &mut self.die_free[d as usize];
        *slot = (*slot).max(start) + cost;
        if *slot > self.busy_until {
            self.busy_until = *slot;
        }
        end
    }

    /// Hold the channel of die `d` for `cost` ns; returns the end.
    #[inline]
    pub fn chan(&mut self, d: u32, t: u64, cost: u64) -> u64 {
        let slot = &mut self.chan_free[(d % self.channels) as usize];
        let end = (*slot).max(t) + cost;
        *slot = end;
        end
    }

    /// Hold host-link direction `dir` (0 read, 1 write) for `cost` ns; returns the end.
    #[inline]
    pub fn link(&mut self, dir: usize, t: u64, cost: u64) -> u64 {
        let slot = &mut self.link_free[dir];
        let end = (*slot).max(t) + cost;
        *slot = end;
        if end > self.busy_until {
            self.busy_until = end;
        }
        end
    }

    /// When die `d` is next free.
    #[inline]
    pub fn die_free_at(&self, d: u32) -> u64 {
        self.die_free[d as usize]
    }

    /// The die that is free soonest (lowest index on ties): where a controller with a
    /// write buffer sends the next page it programs.
    #[inline]
    pub fn least_busy_die(&self) -> u32 {
        let mut best = 0;
        let mut best_t = u64::MAX;
        for (d, &t) in self.die_free.iter().enumerate() {
            if t < best_t {
                best_t = t;
                best = d;
            }
        }
        best as u32
    }

    /// The latest end of any die or link reservation: after it the device is idle.
    #[inline]
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// The latest next-free time over all dies.
    pub fn all_dies_free_at(&self) -> u64 {
        self.die_free.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_queue_per_resource() {
        let mut r = Resources::new(2, 1);
        assert_eq!(r.die(0, 100, 50), 150);
        assert_eq!(r.die(0, 120, 50), 200); // waits for die 0
        assert_eq!(r.die(1, 120, 50), 170); // die 1 is free
        assert_eq!(r.chan(0, 0, 10), 10);
        assert_eq!(r.chan(1, 5, 10), 20); // same channel
        assert_eq!(r.busy_until(), 200);
        assert_eq!(r.all_dies_free_at(), 200);
        assert_eq!(r.link(1, 300, 5), 305);
        assert_eq!(r.busy_until(), 305);
        assert_eq!(r.least_busy_die(), 1);
    }

    #[test]
    fn a_suspending_read_jumps_the_queue_and_delays_it() {
        let mut r = Resources::new(1, 1);
        assert_eq!(r.die(0, 0, 1_000), 1_000); // a long program
        assert_eq!(r.die_suspend(0, 100, 60), 160); // the read does not wait for it
        assert_eq!(r.die_free_at(0), 1_060); // the program resumes 60 ns later
        assert_eq!(r.die_suspend(0, 120, 60), 220); // the die reads one page at a time
        assert_eq!(r.die_free_at(0), 1_120);
        assert_eq!(r.die_suspend(0, 2_000, 60), 2_060); // an idle die: from `t`
        assert_eq!(r.die_free_at(0), 2_060);
        // A queued read running at the time: the suspending one waits for it.
        assert_eq!(r.die_read(0, 3_000, 60), 3_060);
        assert_eq!(r.die_suspend(0, 3_010, 60), 3_120);
    }
}
