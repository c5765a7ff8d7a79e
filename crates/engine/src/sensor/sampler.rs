//! The side thread that samples a real run's sensors once per interval.
//!
//! It owns the sources and is a plain (not scoped) thread, so that a sensor read that
//! never returns (a hung sysfs attribute, a dead USB bridge) cannot keep the run from
//! ending: [`Sampler::finish`] waits a bounded time for the thread to hand the sources
//! back, and past that leaves it behind with a note. Readings are handed over through a
//! buffer the run moves into its aggregator ([`Sampler::drain`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::{SensorReading, SensorSource};
use crate::clock::{Clock, MonotonicClock};

/// How long the end of a run waits for a sensor read in progress.
pub const FINISH_WAIT: Duration = Duration::from_secs(3);

type Sources = Vec<Box<dyn SensorSource>>;

#[derive(Default)]
struct State {
    readings: Vec<SensorReading>,
    /// The sources and their notes, once the thread is done.
    returned: Option<(Sources, Vec<String>)>,
}

struct Shared {
    stop: AtomicBool,
    state: Mutex<State>,
    done: Condvar,
}

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, State> {
    s.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running sampler thread.
pub struct Sampler {
    shared: Arc<Shared>,
}

impl Sampler {
    /// Sample `sources` at `origin` and every `interval` after it on `clock`, and once
    /// more at the end.
    pub fn start(mut sources: Sources, clock: MonotonicClock, origin: u64, interval: u64) -> Self {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            done: Condvar::new(),
        });
        let s = shared.clone();
        let body = move || {
            let mut next = origin;
            while !s.stop.load(Ordering::Relaxed) {
                let now = clock.now_ns();
                if now >= next {
                    let got: Vec<_> = sources.iter_mut().flat_map(|x| x.sample(now)).collect();
                    lock(&s).readings.extend(got);
                    while next <= now {
                        next += interval.max(1);
                    }
                }
                let wait = (next.saturating_sub(clock.now_ns())).min(50_000_000);
                std::thread::sleep(Duration::from_nanos(wait));
            }
            // The spans since the last sample (a meter's mean, ending with the run), and
            // what the sources have to say about the run.
            let now = clock.now_ns();
            let got: Vec<_> = sources.iter_mut().flat_map(|x| x.sample(now)).collect();
            let notes = sources.iter_mut().flat_map(|x| x.notes()).collect();
            let mut g = lock(&s);
            g.readings.extend(got);
            g.returned = Some((sources, notes));
            s.done.notify_all();
        };
        let spawned = std::thread::Builder::new()
            .name("drivelab-sensors".into())
            .spawn(body);
        if let Err(e) = spawned {
            lock(&shared).returned = Some((
                Vec::new(),
                vec![format!(
                    "The sensors were not sampled: no thread for them ({e})."
                )],
            ));
        }
        Sampler { shared }
    }

    /// The readings taken since the last call.
    pub fn drain(&self) -> Vec<SensorReading> {
        std::mem::take(&mut lock(&self.shared).readings)
    }

    /// Stop sampling and take the sources back with their notes and last readings,
    /// waiting at most `wait` for a read in progress; past that, the thread is left
    /// behind (no sources come back; any meter command is killed) and a note says so.
    pub fn finish(self, wait: Duration) -> (Sources, Vec<String>, Vec<SensorReading>) {
        self.shared.stop.store(true, Ordering::Relaxed);
        let g = lock(&self.shared);
        let (mut g, _) = self
            .shared
            .done
            .wait_timeout_while(g, wait, |st| st.returned.is_none())
            .unwrap_or_else(|e| e.into_inner());
        let readings = std::mem::take(&mut g.readings);
        match g.returned.take() {
            Some((sources, notes)) => (sources, notes, readings),
            None => {
                drop(g);
                super::meter::kill_all();
                let note = format!(
                    "A sensor read did not return within {} s of the run's end (a hung sysfs attribute or device?): it was left behind, the run's last sensor readings are missing and its sensors are not sampled again.",
                    wait.as_secs_f64()
                );
                (Vec::new(), vec![note], readings)
            }
        }
    }
}

/// Read `sources` once (stamped `at_ns`), outside a run: on a side thread, so that a read
/// that never returns cannot hang the caller. Waits at most `wait`; past that the sources
/// are left behind with the read (none come back; any meter command is killed) and a
/// note says so.
pub fn sample_once(
    mut sources: Sources,
    at_ns: u64,
    wait: Duration,
) -> (Sources, Vec<String>, Vec<SensorReading>) {
    if sources.is_empty() {
        return (sources, Vec::new(), Vec::new());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("drivelab-sensor-read".into())
        .spawn(move || {
            let got: Vec<_> = sources.iter_mut().flat_map(|x| x.sample(at_ns)).collect();
            let _ = tx.send((sources, got));
        });
    if let Err(e) = spawned {
        let note = format!("The sensors were not read: no thread for them ({e}).");
        return (Vec::new(), vec![note], Vec::new());
    }
    match rx.recv_timeout(wait) {
        Ok((sources, readings)) => (sources, Vec::new(), readings),
        Err(_) => {
            super::meter::kill_all();
            let note = format!(
                "A sensor read between runs did not return within {} s (a hung sysfs attribute or device?): it was left behind and the sensors are not read again.",
                wait.as_secs_f64()
            );
            (Vec::new(), vec![note], Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A source whose second read never returns (until the test ends).
    struct Stuck {
        reads: mpsc::Sender<()>,
        hold: Arc<Mutex<()>>,
    }

    impl SensorSource for Stuck {
        fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
            let _ = self.reads.send(());
            let _held = self.hold.lock();
            vec![SensorReading::new("power", "watt", Some(1.0), at_ns, "x")]
        }
    }

    #[test]
    fn a_read_that_never_returns_does_not_hold_the_run() {
        let hold = Arc::new(Mutex::new(()));
        let blocker = hold.lock().unwrap();
        let (tx, rx) = mpsc::channel();
        let src = Stuck {
            reads: tx,
            hold: hold.clone(),
        };
        let s = Sampler::start(vec![Box::new(src)], MonotonicClock::new(), 0, 1_000_000);
        rx.recv().unwrap(); // the first read has started and is stuck
        let (sources, notes, _) = s.finish(Duration::from_millis(1));
        assert!(sources.is_empty());
        assert!(notes[0].contains("did not return"), "{notes:?}");
        drop(blocker);
    }

    struct Fine;

    impl SensorSource for Fine {
        fn sample(&mut self, at_ns: u64) -> Vec<SensorReading> {
            vec![SensorReading::new("power", "watt", Some(2.0), at_ns, "x")]
        }
        fn notes(&mut self) -> Vec<String> {
            vec!["fine".into()]
        }
    }

    #[test]
    fn a_read_between_runs_that_never_returns_does_not_hang_the_caller() {
        let hold = Arc::new(Mutex::new(()));
        let blocker = hold.lock().unwrap();
        let (tx, _rx) = mpsc::channel();
        let src = Stuck {
            reads: tx,
            hold: hold.clone(),
        };
        let (sources, notes, readings) =
            sample_once(vec![Box::new(src)], 0, Duration::from_millis(1));
        assert!(sources.is_empty() && readings.is_empty());
        assert!(notes[0].contains("did not return"), "{notes:?}");
        drop(blocker);
    }

    #[test]
    fn a_read_between_runs_gives_the_sources_back() {
        let (sources, notes, readings) =
            sample_once(vec![Box::new(Fine)], 7, Duration::from_secs(3600));
        assert_eq!(sources.len(), 1);
        assert!(notes.is_empty());
        assert_eq!(readings[0].at_ns, 7);
    }

    #[test]
    fn sources_come_back_with_their_notes_and_last_readings() {
        let s = Sampler::start(vec![Box::new(Fine)], MonotonicClock::new(), 0, 1_000_000);
        let (sources, notes, last) = s.finish(Duration::from_secs(3600));
        assert_eq!(sources.len(), 1);
        assert_eq!(notes, ["fine"]);
        assert!(!last.is_empty());
    }
}
