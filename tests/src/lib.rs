//! Support for the end-to-end tests: the real `nagi` binary in a fresh temp dir, real Git
//! repositories, a mock model server for the real provider CLIs, and everything useful
//! printed when a test fails.

pub mod harness;
pub mod mock_model;
pub mod pty;
pub mod real_cli;
pub mod repo;
pub mod temporal;

pub use harness::*;
pub use repo::*;
