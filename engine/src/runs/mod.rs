//! Live provider runs held by this server process.

pub mod registry;
