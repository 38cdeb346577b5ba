//! Errors of the pane host. Every variant a caller can cause names its stable wire code in
//! its doc comment; [`PaneError::code`] returns it for the server's error table.

use nagi_schema::codes::ErrorCode;

/// An error of a pane, tab, workspace or session operation. Nothing was changed when one
/// is returned, except where a variant says otherwise.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PaneError {
    /// `invalid_params`: the params of `method` did not decode.
    #[error("invalid params for {method}: {message}")]
    ParamsDecode { method: String, message: String },
    /// `invalid_params`: a field breaks its rule (length, characters, range, path).
    #[error("{0}")]
    InvalidParams(String),
    /// `invalid_params`: `lines` outside 1..=10000.
    #[error("lines must be between 1 and {max}, got {lines}")]
    LinesOutOfRange { lines: u32, max: u32 },
    /// `pane_not_found`.
    #[error("pane not found: {pane_id}")]
    PaneNotFound { pane_id: String },
    /// `pane_not_found`: no pane id given and no pane is focused.
    #[error("no pane is focused and no pane_id was given")]
    NoFocusedPane,
    /// `workspace_not_found`.
    #[error("workspace not found: {workspace_id}")]
    WorkspaceNotFound { workspace_id: String },
    /// `workspace_not_found`: no workspace id given and no workspace is focused.
    #[error("no workspace is focused and no workspace_id was given")]
    NoFocusedWorkspace,
    /// `tab_not_found`.
    #[error("tab not found: {tab_id}")]
    TabNotFound { tab_id: String },
    /// `session_not_found`: no pane has this terminal id.
    #[error("session not found: {session_id}")]
    SessionNotFound { session_id: String },
    /// `invalid_key`: a key-combo string is not valid; nothing was written.
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey { key: String, reason: String },
    /// `invalid_regex`: the pattern does not compile.
    #[error("invalid regex {pattern:?}: {message}")]
    InvalidRegex { pattern: String, message: String },
    /// `not_controller`: session input or resize from a client that is not the session's
    /// controller.
    #[error("client {client_id} is not the controller of session {session_id}")]
    NotController {
        session_id: String,
        client_id: String,
    },
    /// `resize_too_small`.
    #[error(
        "resize to {cols}x{rows} refused: the minimum is {min_cols} columns by {min_rows} rows"
    )]
    ResizeTooSmall {
        cols: u16,
        rows: u16,
        min_cols: u16,
        min_rows: u16,
    },
    /// `feature_unavailable`: the method (or read source) exists in the protocol but nagi
    /// does not offer it.
    #[error("{feature} is not available in nagi")]
    FeatureUnavailable { feature: String },
    /// `pane_spawn_failed`: the PTY or the pane process could not be started.
    #[error("could not start {program:?}: {message}")]
    PaneSpawnFailed { program: String, message: String },
    /// `timeout`: `pane.wait_for_output` saw no match in time.
    #[error("no output of pane {pane_id} matched within {timeout_ms} ms")]
    Timeout { pane_id: String, timeout_ms: u64 },
    /// `pane_exited` (new code): the pane's process has ended, so input cannot be
    /// delivered, or a wait can never match.
    #[error("the process of pane {pane_id} has ended")]
    PaneExited { pane_id: String },
    /// `pane_io_failed` (new code): writing to or resizing the pane's terminal failed.
    #[error("terminal I/O on pane {pane_id} failed: {message}")]
    PaneIo { pane_id: String, message: String },
    /// `server_unavailable`: the pane host is shutting down.
    #[error("the pane host is shutting down")]
    ShuttingDown,
}

impl PaneError {
    /// The stable wire code (the catalogue of `nagi_schema::codes`).
    pub fn code(&self) -> ErrorCode {
        match self {
            PaneError::ParamsDecode { .. }
            | PaneError::InvalidParams(_)
            | PaneError::LinesOutOfRange { .. } => ErrorCode::InvalidParams,
            PaneError::PaneNotFound { .. } | PaneError::NoFocusedPane => ErrorCode::PaneNotFound,
            PaneError::WorkspaceNotFound { .. } | PaneError::NoFocusedWorkspace => {
                ErrorCode::WorkspaceNotFound
            }
            PaneError::TabNotFound { .. } => ErrorCode::TabNotFound,
            PaneError::SessionNotFound { .. } => ErrorCode::SessionNotFound,
            PaneError::InvalidKey { .. } => ErrorCode::InvalidKey,
            PaneError::InvalidRegex { .. } => ErrorCode::InvalidRegex,
            PaneError::NotController { .. } => ErrorCode::NotController,
            PaneError::ResizeTooSmall { .. } => ErrorCode::ResizeTooSmall,
            PaneError::FeatureUnavailable { .. } => ErrorCode::FeatureUnavailable,
            PaneError::PaneSpawnFailed { .. } => ErrorCode::PaneSpawnFailed,
            PaneError::Timeout { .. } => ErrorCode::Timeout,
            PaneError::PaneExited { .. } => ErrorCode::PaneExited,
            PaneError::PaneIo { .. } => ErrorCode::PaneIoFailed,
            PaneError::ShuttingDown => ErrorCode::ServerUnavailable,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> PaneError {
        PaneError::InvalidParams(message.into())
    }
}
