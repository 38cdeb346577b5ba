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
pub mod versions;

pub use confine::landlock_abi_version;
pub use spec::*;

/// Starts (or resumes) one provider session. Must be called inside a tokio runtime.
///
/// The provider is spawned before this returns, so a program that cannot be executed is a
/// synchronous [`LaunchError::Spawn`]. Everything after that (handshake, session, turns) is
/// reported on [`ProviderHandle::events`], ending with [`ProviderEvent::Stopped`].
pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    check_spec(&spec)?;
    match spec.kind {
        ProviderKind::Codex => codex::launch(spec),
        ProviderKind::ClaudeCode => claude::launch(spec),
        ProviderKind::OpenCode => opencode::launch(spec),
        ProviderKind::Acp => acp::launch(spec),
    }
}

/// Rejects a spec that cannot describe a run, before anything is started.
fn check_spec(spec: &LaunchSpec) -> Result<(), LaunchError> {
    if spec.program.as_os_str().is_empty() {
        let what = if spec.kind == ProviderKind::Acp {
            "the ACP agent command is not configured"
        } else {
            "no provider program"
        };
        return Err(LaunchError::Config(what.to_string()));
    }
    if !spec.worktree.is_absolute() || !spec.worktree.is_dir() {
        return Err(LaunchError::Config(format!(
            "worktree {} is not an absolute path to a directory",
            spec.worktree.display()
        )));
    }
    if spec
        .resume_session_id
        .as_deref()
        .is_some_and(|id| id.is_empty() || id.len() > 256 || id.chars().any(char::is_control))
    {
        return Err(LaunchError::Config(
            "the stored session id is empty, longer than 256 bytes or has control characters"
                .to_string(),
        ));
    }
    if spec.kind == ProviderKind::Acp && (spec.model.is_some() || spec.reasoning_effort.is_some()) {
        return Err(LaunchError::Config(
            "choosing a model or a reasoning effort is not supported for ACP agents yet; configure it in the agent's own settings"
                .to_string(),
        ));
    }
    if spec.kind == ProviderKind::OpenCode
        && spec
            .model
            .as_deref()
            .is_some_and(|model| !model.contains('/'))
    {
        return Err(LaunchError::Config(
            "OpenCode names a model as provider/model (for example anthropic/claude-sonnet-4-5)"
                .to_string(),
        ));
    }
    if spec.leading_args.len() + spec.extra_args.len() > 256
        || spec
            .leading_args
            .iter()
            .chain(&spec.extra_args)
            .any(|arg| arg.contains('\0'))
    {
        return Err(LaunchError::Config(
            "provider arguments: at most 256, none containing NUL".to_string(),
        ));
    }
    Ok(())
}
