//! The consent cockpit's channel (`cockpit.*`, nagi extension): the only path that grants
//! authority — write scope, ACP starts, the project recipe, answers to attention items,
//! manual evidence, and dismissing warnings.
//!
//! A consent is two steps: `cockpit.preview` shows exactly what an action would authorise
//! and names it with a digest; `cockpit.decide` carries that `shown_digest` and the
//! person's decision. If anything the preview covered changed in between, the consent is
//! refused as stale (`consent_stale`) and nothing happens. The server checks the peer of
//! every `cockpit.*` request: same uid, not a descendant of the server, and not running in
//! a managed pane; otherwise `consent_forbidden`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::attention::AttentionRiskV1;
use crate::mission::{MissionProvider, MissionResponseDecision, MissionViewV1};

/// What a consent is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CockpitAction {
    /// Start a run with authority the public socket cannot grant: write scope, an ACP
    /// agent (always with write scope), the project recipe.
    StartRun {
        mission_id: String,
        run_id: String,
        provider: MissionProvider,
        #[serde(default)]
        worktree_path: Option<String>,
        /// Run in the mission's own worktree (made at its first start), not in
        /// `worktree_path` or the repository.
        #[serde(default)]
        worktree: bool,
        /// The ref a new mission worktree is made from (default `HEAD`).
        #[serde(default)]
        base: Option<String>,
        /// Let the provider write in the worktree.
        #[serde(default)]
        write_scope: bool,
        /// Run `.nagi/project.toml` setup and services for this run.
        #[serde(default)]
        execute_project_recipe: bool,
        #[serde(default)]
        execute_declared_checks: bool,
        /// The model and reasoning effort for the run (absent: the provider's default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_effort: Option<String>,
    },
    /// Answer a provider's attention item (contract §2.6, local path).
    Respond {
        mission_id: String,
        run_id: String,
        attention_id: String,
        decision: MissionResponseDecision,
        #[serde(default)]
        answers: BTreeMap<String, Vec<String>>,
    },
    /// Record manual evidence as a listed reviewer (contract preface item 6).
    ManualEvidence {
        mission_id: String,
        check_id: String,
        reviewer: String,
        reason: String,
        #[serde(default)]
        is_override: bool,
    },
    /// Start a handoff continuation, optionally with write scope or to an ACP agent.
    HandoffStart {
        mission_id: String,
        to: MissionProvider,
        generated_at_millis: u64,
        artifact_sha256: String,
        #[serde(default)]
        write_scope: bool,
    },
    /// Settle an attention item no provider will answer (a security warning, a response
    /// whose delivery is unknown) by dismissing it with a reason.
    DismissAttention {
        attention_id: String,
        /// The item's mission (nagi, optional). Attention ids are facts of the host that
        /// raised the item; with the mission named, a fleet dismisses on the mission's host
        /// and an item of another mission is refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mission_id: Option<String>,
        reason: String,
    },
    /// Land the mission's change (`mission.land`): re-verify, commit, integrate into the
    /// target branch, archive.
    Land {
        mission_id: String,
        #[serde(default)]
        into: Option<String>,
        #[serde(default)]
        strategy: crate::land::LandStrategy,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        push_remote: Option<String>,
        #[serde(default)]
        pull_request: bool,
    },
    /// Rebase the mission branch onto a branch's tip (`mission.sync`).
    Sync {
        mission_id: String,
        #[serde(default)]
        onto: Option<String>,
    },
}

impl CockpitAction {
    /// The cockpit action that lands what `params` asks for.
    pub fn land(params: crate::land::MissionLandParams) -> CockpitAction {
        CockpitAction::Land {
            mission_id: params.mission_id,
            into: params.into,
            strategy: params.strategy,
            message: params.message,
            push_remote: params.push_remote,
            pull_request: params.pull_request,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CockpitDecision {
    Approve,
    Deny,
}

/// `cockpit.hello`: may this peer grant consent?
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CockpitHelloParams {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CockpitPreviewParams {
    pub action: CockpitAction,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CockpitDecideParams {
    pub action: CockpitAction,
    /// The digest of the preview the person was shown.
    pub shown_digest: String,
    pub decision: CockpitDecision,
}

/// One service a recipe would start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecipeServiceView {
    pub id: String,
    pub command: Vec<String>,
    pub port_env: String,
    pub health: String,
}

/// Exactly what a project recipe consent covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecipeScopeView {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Vec<String>>,
    pub services: Vec<RecipeServiceView>,
    pub copy_ignored: Vec<String>,
    pub cleanup: Vec<Vec<String>>,
    pub scope_digest: String,
}

/// What a consent would authorise, as shown to the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CockpitPreview {
    /// Names exactly this preview; `cockpit.decide` must carry it.
    pub digest: String,
    pub title: String,
    pub risk: AttentionRiskV1,
    /// Human lines: provider, write scope, commands, services, ports, copied files, the
    /// question and the chosen answers.
    pub lines: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<RecipeScopeView>,
}

/// The result of `cockpit.decide`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CockpitOutcome {
    pub consent_id: String,
    pub decision: CockpitDecision,
    /// What happened, in words.
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mission: Option<MissionViewV1>,
}
