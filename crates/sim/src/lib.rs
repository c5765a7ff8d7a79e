//! drivelab-sim (being built).
