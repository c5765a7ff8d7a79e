//! drivelab-store (being built).
