//! drivelab-analysis (being built).
