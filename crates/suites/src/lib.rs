//! drivelab-suites (being built).
