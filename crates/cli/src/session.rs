//! A target held for the length of a command: opened under the safety rules, filled
//! before reads when it is a fresh test file, and cleaned up whatever happens (a test
//! file this run created is removed unless `--keep`, also on errors and Ctrl-C, and on a
//! second Ctrl-C that ends the process without waiting).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use drivelab_engine::prepare;
use drivelab_engine::result::Progress;
use drivelab_engine::result::RunStatus;
use drivelab_engine::spec::Workload;
use drivelab_engine::target::{OpenOptions, Target, TargetSpec};

use crate::fail::Fail;
use crate::output::progress::{Bound, Meter};

/// How long a meter command has to print its first reading.
const METER_FIRST_READING: std::time::Duration = std::time::Duration::from_secs(10);

pub struct Session {
    target: Option<Target>,
    keep: bool,
    pub stop: Arc<AtomicBool>,
}

impl Session {
    pub fn open(spec: TargetSpec, opts: &OpenOptions, keep: bool) -> Result<Session, Fail> {
        let stop = crate::signals::stop_flag();
        let target = Target::open(spec, opts).map_err(|e| Fail::usage(e.0))?;
        let session = Session {
            target: Some(target),
            keep,
            stop,
        };
        session.arm_second_signal();
        Ok(session)
    }

    pub fn target(&self) -> &Target {
        self.target.as_ref().expect("open session")
    }

    pub fn target_mut(&mut self) -> &mut Target {
        self.target.as_mut().expect("open session")
    }

    /// Bad input found after opening: clean up, exit 2.
    pub fn usage(&mut self, msg: impl Into<String>) -> Fail {
        self.cleanup();
        Fail::usage(msg)
    }

    /// A failure after opening: clean up, exit 1.
    pub fn failed(&mut self, msg: impl Into<String>) -> Fail {
        self.cleanup();
        Fail::failed(msg)
    }

    /// What a second Ctrl-C removes before exiting: the test file `close` would remove.
    fn arm_second_signal(&self) {
        let file = match &self.target {
            Some(t) if !self.keep => t.created_file(),
            _ => None,
        };
        crate::signals::remove_on_exit(file);
    }

    fn cleanup(&mut self) {
        crate::signals::remove_on_exit(None);
        if let Some(t) = self.target.take() {
            let _ = t.close(self.keep);
        }
    }

    /// Treat the open target as a test file this command created (a resumed suite whose
    /// first run created it): remove it at the end unless kept.
    pub fn adopt_test_file(&mut self) {
        self.target_mut().adopt_test_file();
        self.arm_second_signal();
    }

    /// Write a fresh test file once before reads (see `prepare::ensure_filled`), its
    /// progress on `meter`.
    pub fn ensure_filled(&mut self, w: &Workload, meter: &Meter) -> Result<(), Fail> {
        let t = self.target();
        if t.info.created_by_drivelab && !t.is_filled() {
            meter.say(&format!(
                "drivelab: writing {} once so that reads hit data…",
                t.info.path
            ));
        }
        meter.start("fill ", Bound::WriteBytes(t.info.span_bytes()));
        let stop = self.stop.clone();
        let cb = meter.callback();
        let progress = cb.as_ref().map(|f| f as &(dyn Fn(&Progress<'_>) + Sync));
        let filled = prepare::ensure_filled(w, self.target_mut(), &stop, progress);
        meter.clear();
        match filled {
            Ok(RunStatus::Complete) => Ok(()),
            // The run that follows stops at once and writes its (empty) result marked
            // interrupted, so that a script waiting for a document gets one; the test
            // file goes when the session closes.
            Ok(RunStatus::Interrupted) => {
                eprintln!(
                    "drivelab: interrupted while filling the test file: nothing was measured"
                );
                Ok(())
            }
            Ok(RunStatus::Failed) => Err(self.failed("filling the test file failed")),
            Err(e) => Err(self.failed(format!("filling the test file failed: {e}"))),
        }
    }

    /// Refuse `--sensor-cmd` and `--sensor-hwmon` for a `sim:` TARGET, told from its
    /// text so that no simulator is built for the one-line error.
    pub fn check_sensor_target(
        target: Option<&str>,
        t: &crate::target_arg::TargetArgs,
    ) -> Result<(), Fail> {
        if crate::target_arg::is_sim(target)
            && (t.sensor_cmd.is_some() || !t.sensor_hwmon.is_empty())
        {
            return Err(Fail::usage(
                "--sensor-cmd, --sensor-hwmon: a simulated device reports its own temperature and power; give them with a real target",
            ));
        }
        Ok(())
    }

    /// The sensors the runs sample: the drive's own as `--sensors` chooses, then any
    /// `--sensor-hwmon` device and the `--sensor-cmd` meter; listed on stderr.
    pub fn choose_sensors(&mut self, t: &crate::target_arg::TargetArgs) -> Result<(), Fail> {
        use drivelab_engine::sensor::{hwmon::HwmonSource, meter::CommandMeter};
        let chosen = self.target_mut().select_sensors(&t.sensors);
        chosen.map_err(|e| self.usage(e))?;
        for dir in &t.sensor_hwmon {
            match HwmonSource::open(dir) {
                Ok(s) => self.target_mut().add_sensor(Box::new(s)),
                Err(why) => {
                    return Err(self.usage(format!(
                        "--sensor-hwmon {}: {why} (expected an hwmon device such as /sys/class/hwmon/hwmon3)",
                        dir.display()
                    )))
                }
            }
        }
        if let Some(cmd) = &t.sensor_cmd {
            let mut m = CommandMeter::spawn(cmd).map_err(|e| self.usage(e))?;
            if let Err(why) = m.wait_first(METER_FIRST_READING) {
                return Err(self.usage(format!(
                    "--sensor-cmd: '{cmd}' {why} (expected lines like '5.1 W', '12.0 V 0.4 A' or 'vbus=5.0V ibus=1.2A')"
                )));
            }
            self.target_mut().add_sensor(Box::new(m));
        }
        let sensors = self.target().sensor_sources();
        if !sensors.is_empty() {
            eprintln!("drivelab: sensors: {}", sensors.join("; "));
        }
        Ok(())
    }

    /// Whether a test file this run created is kept at the end (`--keep`).
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// Close the target (removing a test file created by this run unless kept).
    pub fn close(mut self) -> Result<(), Fail> {
        crate::signals::remove_on_exit(None);
        if let Some(t) = self.target.take() {
            t.close(self.keep)
                .map_err(|e| Fail::failed(format!("cannot remove the test file: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.cleanup();
    }
}
