//! What can go wrong when a recipe is executed, and which wire code each becomes
//! (`errors::wire_error` holds the mapping; each variant's doc names its code).

use nagi_store::StoreError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum RecipeExecError {
    /// `project_recipe_failed`: a declared `copy_ignored` file may not be copied. Nothing
    /// was copied (every file is checked before the first copy).
    #[error("worktree.copy_ignored `{path}`: {reason}")]
    CopyRefused { path: String, reason: String },
    /// `mission_runtime_error`: the mission's linked worktree cannot be created.
    #[error("cannot create the mission worktree {path}: {detail}")]
    WorktreeFailed { path: String, detail: String },
    /// `project_recipe_failed`: setup could not start, exited non-zero, or hit a limit.
    #[error("project setup failed: {message}")]
    SetupFailed { message: String },
    /// `project_recipe_failed`: a service could not start, exited early or never became
    /// healthy; it was stopped.
    #[error("service `{service_id}` failed: {message}")]
    ServiceFailed { service_id: String, message: String },
    /// `project_recipe_failed`: every port of the range is leased or in use.
    #[error(
        "no free port for service `{service_id}` in {first}..={last}: every port is leased or in use"
    )]
    PortsExhausted {
        service_id: String,
        first: u16,
        last: u16,
    },
    /// `project_recipe_failed`: a service's processes could not be ended.
    #[error("cannot stop service `{service_id}`: {detail}")]
    StopFailed { service_id: String, detail: String },
    /// `project_recipe_failed`: a file of the recipe's execution (transcript, service log)
    /// cannot be written.
    #[error("{detail}")]
    Io { detail: String },
    /// The store's own code (`storage_full`, `storage_failed`, `server_unavailable`).
    #[error(transparent)]
    Store(#[from] StoreError),
}
