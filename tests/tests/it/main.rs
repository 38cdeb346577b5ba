//! The end-to-end suite: one test binary, the real `nagi` server and CLI in fresh temp
//! dirs. Each module is one capability.

mod durability;
mod events;
mod missions;
mod read_only_guard;
mod real_providers;
mod schema;
mod server;
mod transport;
