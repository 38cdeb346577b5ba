//! Provider adapters: how to launch each coding agent read-only over its structured
//! protocol, how its events map to turn state, how its native session is captured and
//! resumed, and how its approval requests and questions are surfaced.
//!
//! Adapters report; the engine decides. Nothing in this crate knows mission state: an
//! adapter turns a [`LaunchSpec`] into a running [`ProviderHandle`], forwards
//! [`ProviderCommand`]s to the provider and reports what happened as [`ProviderEvent`]s.
//! The engine turns those events into durable mission transitions.

pub mod spec;

pub use spec::*;
