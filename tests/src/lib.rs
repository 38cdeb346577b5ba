//! Support for the end-to-end tests: the real `nagi` binary in a fresh temp dir, real Git
//! repositories, and everything useful printed when a test fails.

pub mod harness;
pub mod repo;

pub use harness::*;
pub use repo::*;
