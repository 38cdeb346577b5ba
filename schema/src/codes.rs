//! Stable error codes. `code` is the branch key clients match on; messages are free text.
//!
//! The engine maps every internal error to one of these in one place
//! (`engine/src/errors.rs`). Codes marked "nagi extension" do not exist in the reference
//! contract; they appear where the reference answered with a vaguer code or dropped the
//! connection.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident => $wire:literal, )*) => {
        /// Every error code the server can send.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $wire,)* }
            }

            pub fn from_wire(text: &str) -> Option<ErrorCode> {
                match text { $($wire => Some(ErrorCode::$variant),)* _ => None }
            }

            /// The doc comment of the code, for `nagi api schema` and the README.
            pub fn description(self) -> &'static str {
                match self { $(ErrorCode::$variant => concat!($($doc, "\n",)*).trim_ascii(),)* }
            }
        }
    };
}

error_codes! {
    /// The request line could not be decoded: not JSON, not UTF-8, a missing or mistyped
    /// `id`/`method`/`params`, an unknown method or enum value, or an unknown field on a
    /// strict method.
    InvalidRequest => "invalid_request",
    /// nagi extension: the request line is longer than 1 MiB. The connection is closed
    /// after this reply.
    RequestTooLarge => "request_too_large",
    /// The server is shutting down, or the request could not be handed to it.
    ServerUnavailable => "server_unavailable",
    /// The response could not be encoded.
    SerializationFailed => "serialization_failed",
    /// The method exists in the protocol but this server does not offer it (for example
    /// pane layouts or plugins). The message names the method.
    FeatureUnavailable => "feature_unavailable",
    /// No mission with that id.
    MissionNotFound => "mission_not_found",
    /// A mission field breaks its rule (id syntax, text length, control characters,
    /// criteria count, path length).
    InvalidMission => "invalid_mission",
    /// The repository or worktree path is missing, not inside a Git checkout, or not the
    /// checkout root.
    InvalidRepository => "invalid_repository",
    /// An existing mission or closure plan differs from the one requested.
    MissionConflict => "mission_conflict",
    /// The closure plan or one of its checks is invalid, or the mission has no plan.
    InvalidClosure => "invalid_closure",
    /// `mode: passthrough` is not offered.
    ProviderModeUnavailable => "provider_mode_unavailable",
    /// The action needs a person's consent in the local cockpit; the public socket cannot
    /// grant it. Nothing was written.
    InteractiveConsentRequired => "interactive_consent_required",
    /// The run id is live for another mission or with other parameters, or was used before.
    RunConflict => "run_conflict",
    /// The run id is blank, too long or has illegal characters.
    InvalidRun => "invalid_run",
    /// The provider process could not be started. The mission is `failed`.
    ProviderStartFailed => "provider_start_failed",
    /// The provider executable cannot be found or is not executable, or the provider is
    /// not configured (ACP). Reported before anything is written.
    ProviderUnavailable => "provider_unavailable",
    /// nagi extension: the checkout is claimed by another live run (in this server or in
    /// another server process).
    CheckoutClaimed => "checkout_claimed",
    /// nagi extension: landing would move a checkout that has changes of its own, or
    /// `worktree.remove` (without `force`) would delete a checkout's uncommitted or
    /// untracked files; the message names the files. Nothing was changed.
    CheckoutDirty => "checkout_dirty",
    /// nagi extension: the mission's change conflicts with the target branch; the message
    /// names the paths. The target branch and the checkout are unchanged.
    LandConflict => "land_conflict",
    /// nagi extension: a landing's git step failed (no author identity, a target branch
    /// that does not exist, a push or `gh` that failed).
    LandFailed => "land_failed",
    /// Catch-all for failures that are not the caller's input: a mission that already has
    /// a run, an unreadable HEAD, a store failure.
    MissionRuntimeError => "mission_runtime_error",
    /// The rebuilt handoff artifact differs from the inspected one.
    HandoffArtifactChanged => "handoff_artifact_changed",
    /// The mission is not in a status a handoff can start from, or has no run.
    InvalidHandoffState => "invalid_handoff_state",
    /// The handoff target is the current provider.
    InvalidHandoffProvider => "invalid_handoff_provider",
    /// nagi extension: no kept handoff artifact has that digest.
    HandoffArtifactNotFound => "handoff_artifact_not_found",
    /// nagi extension: `mission.delete` of a mission that is not a draft, or that ran; the
    /// message says to abandon it instead.
    MissionNotDraft => "mission_not_draft",
    /// The mission has unresolved attention items.
    HandoffAttentionUnresolved => "handoff_attention_unresolved",
    /// The Git workspace could not be scanned.
    HandoffSnapshotFailed => "handoff_snapshot_failed",
    /// The source run changed between checks.
    RunMismatch => "run_mismatch",
    /// The project recipe (setup, services) failed.
    ProjectRecipeFailed => "project_recipe_failed",
    /// nagi extension: a worktree could not be made, opened, used or removed (a base ref
    /// that names no commit, a branch or folder in the way, the main checkout, a mission's
    /// worktree, git refused).
    WorktreeFailed => "worktree_failed",
    /// nagi extension: `worktree.open` names a branch or path that no checkout of the
    /// repository has.
    WorktreeNotFound => "worktree_not_found",
    /// nagi extension: the mission's worktree was deleted; the mission is `blocked`.
    WorktreeMissing => "worktree_missing",
    /// The mission has no sealed proof.
    ProofNotReady => "proof_not_ready",
    /// The stored receipt does not re-derive from the stored evidence.
    ProofBindingMismatch => "proof_binding_mismatch",
    /// `mission.close` on a mission that is neither `ready_to_close` nor `archived`.
    MissionNotReady => "mission_not_ready",
    /// The run is still live, or another verification holds it.
    MissionBusy => "mission_busy",
    /// The background verification could not be started.
    ProofWorkerFailed => "proof_worker_failed",
    /// No attention item with that id.
    AttentionNotFound => "attention_not_found",
    /// The run the response names is not live.
    RunNotActive => "run_not_active",
    /// The attention item cannot be answered now (no live provider request behind it).
    AttentionNotRespondable => "attention_not_respondable",
    /// The decision or answers do not fit the provider's request.
    InvalidResponse => "invalid_response",
    /// Whether the provider received the response is unknown; it is never retried
    /// automatically.
    ResponseStateUncertain => "response_state_uncertain",
    /// nagi extension: the consent names a digest of something that changed since it was
    /// shown.
    ConsentStale => "consent_stale",
    /// nagi extension: the peer may not grant consent (wrong uid, a descendant of the
    /// server, or its terminal is a managed pane).
    ConsentForbidden => "consent_forbidden",
    /// nagi extension: the connecting peer runs as another user.
    PermissionDenied => "permission_denied",
    /// nagi extension: the database is full (disk or page limit). Nothing was written.
    StorageFull => "storage_full",
    /// nagi extension: the database could not be written (read-only file, I/O error).
    /// Nothing was acknowledged.
    StorageFailed => "storage_failed",
    /// Parameters of a non-mission method are missing, mistyped or out of range.
    InvalidParams => "invalid_params",
    /// No pane with that id.
    PaneNotFound => "pane_not_found",
    /// No workspace with that id.
    WorkspaceNotFound => "workspace_not_found",
    /// No tab with that id.
    TabNotFound => "tab_not_found",
    /// A key-combo string is not valid. The message names the key.
    InvalidKey => "invalid_key",
    /// The regular expression does not compile.
    InvalidRegex => "invalid_regex",
    /// Session input or resize from a member that is not the controller.
    NotController => "not_controller",
    /// A resize below 20 columns by 5 rows.
    ResizeTooSmall => "resize_too_small",
    /// The pane process could not be started.
    PaneSpawnFailed => "pane_spawn_failed",
    /// A wait timed out.
    Timeout => "timeout",
    /// No session (terminal) with that id.
    SessionNotFound => "session_not_found",
    /// nagi extension: the pane's process has ended, so input cannot be delivered and a
    /// wait for output can never match.
    PaneExited => "pane_exited",
    /// nagi extension: writing to or resizing the pane's terminal failed.
    PaneIoFailed => "pane_io_failed",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_through_serde() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(*code));
            assert!(!code.description().is_empty(), "{code} has no description");
        }
    }
}
