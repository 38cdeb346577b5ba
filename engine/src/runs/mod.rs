//! Provider runs: claims, launch, the transcript pane, and the supervisor that turns
//! provider reports into durable mission transitions.

pub mod checks;
pub mod claims;
pub mod handoff;
pub mod launch;
pub mod leftovers;
pub mod provider_version;
pub mod recipe;
pub mod recovery;
pub mod registry;
pub mod respond;
pub mod start;
pub mod supervisor;
pub mod transcript;
