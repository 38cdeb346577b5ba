//! Running checks and reading checkouts: `runner` runs one declared check under a
//! supervisor, `workspace` scans a Git checkout without running any program its
//! configuration names. Both sit below proof and the engine and know nothing of them.

pub mod runner;
pub mod workspace;
