//! drivelab-report (being built).
