//! The end-to-end suite: one test binary, the real `nagi` server and CLI in fresh temp
//! dirs. Each module is one capability.

mod attach;
mod attach_direct;
mod cockpit;
mod consent;
mod console;
mod corpus;
mod demo;
mod durability;
mod error_codes;
mod events;
mod fleet;
mod fleet_routing;
mod faults;
mod land;
mod layering;
mod load;
mod missions;
mod notify;
mod pane_scroll;
mod panes;
mod project;
mod proof;
mod read_only_guard;
mod real_providers;
mod recipe_runs;
mod recovery;
mod runs;
mod schema;
mod server;
mod steer;
mod torture;
mod transport;
mod usage;
mod worktree_methods;
mod worktrees;
