//! What only this server process knows, and loses with it: the runs that are live here
//! (`registry.rs`) and the checkout locks it holds (`claims.rs`). The store keeps the
//! durable side of both; recovery rebuilds these from it.

pub mod claims;
pub mod registry;
pub mod steering;
