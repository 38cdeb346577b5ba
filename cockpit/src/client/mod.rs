//! The cockpit's connections to the server, each on a thread of its own so that the
//! screen never waits for the socket: the request worker (requests in order, and a
//! snapshot every refresh interval), the mission-event follower, and the pane watch.

pub mod events;
pub mod watch;
pub mod worker;
