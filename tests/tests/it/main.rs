//! The end-to-end suite: one test binary, the real `nagi` server and CLI in fresh temp
//! dirs. Each module is one capability.

mod durability;
mod events;
mod attach;
mod missions;
mod project;
mod proof;
mod recovery;
mod runs;
mod panes;
mod schema;
mod server;
mod transport;
