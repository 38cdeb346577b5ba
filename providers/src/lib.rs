//! Provider adapters: how to launch each coding agent read-only over its structured
//! protocol, how its events map to turn state, how its native session is captured and
//! resumed, and how its approval requests and questions are surfaced.
//!
//! Adapters report; the engine decides. Nothing in this crate knows mission state: an
//! adapter turns a [`LaunchSpec`] into a running [`ProviderHandle`], forwards
//! [`ProviderCommand`]s to the provider and reports what happened as [`ProviderEvent`]s.
//! The engine turns those events into durable mission transitions.

pub mod acp;
pub mod acp_fs;
pub mod acp_transport;
pub mod answers;
pub mod claude;
pub mod claude_codec;
pub mod codex;
pub mod codex_codec;
pub mod confine;
pub mod framing;
pub mod opencode;
pub mod opencode_codec;
pub mod opencode_http;
pub mod process;
pub mod runner;
pub mod spec;

pub use confine::landlock_abi_version;
pub use spec::*;

/// Starts (or resumes) one provider session. Must be called inside a tokio runtime.
///
/// The provider is spawned before this returns, so a program that cannot be executed is a
/// synchronous [`LaunchError::Spawn`]. Everything after that (handshake, session, turns) is
/// reported on [`ProviderHandle::events`], ending with [`ProviderEvent::Stopped`].
pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    if spec.kind == ProviderKind::Acp && spec.program.as_os_str().is_empty() {
        return Err(LaunchError::Config("the ACP agent command is not configured".to_string()));
    }
    match spec.kind {
        ProviderKind::Codex => codex::launch(spec),
        ProviderKind::ClaudeCode => claude::launch(spec),
        ProviderKind::OpenCode => opencode::launch(spec),
        ProviderKind::Acp => acp::launch(spec),
    }
}
