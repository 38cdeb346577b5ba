//! Fixtures for the reducer and rendering tests: missions, attention items, previews.

use nagi_schema::attention::*;
use nagi_schema::cockpit::{CockpitPreview, RecipeScopeView, RecipeServiceView};
use nagi_schema::handoff::{MissionHandoffArtifactV1, MissionHandoffDiffV1};
use nagi_schema::mission::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::request::ServerUpdate;
use crate::state::App;

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn char_key(character: char) -> KeyEvent {
    key(KeyCode::Char(character))
}

pub fn type_text(app: &mut App, text: &str) {
    for character in text.chars() {
        assert!(app.handle_key(char_key(character)).is_empty());
    }
}

pub fn run_view(run_id: &str, provider: MissionProvider) -> MissionRunViewV1 {
    MissionRunViewV1 {
        run_id: run_id.into(),
        provider,
        mode: MissionProviderMode::Managed,
        worktree_path: "/work/repo".into(),
        base_revision: "a".repeat(40),
        execute_declared_checks: true,
        execute_project_recipe: false,
        handoff_from_run_id: None,
        handoff_artifact_sha256: None,
        pane_id: Some("w1:p1".into()),
        enforcement: Some("provider_sandbox".into()),
        live: Some(true),
        turns: Some(1),
        last_turn_outcome: None,
        queued_follow_ups: None,
        usage: None,
        model: None,
        reasoning_effort: None,
    }
}

pub fn mission(id: &str, status: MissionStatus) -> MissionViewV1 {
    MissionViewV1 {
        schema_version: 1,
        mission_id: id.into(),
        title: format!("Title of {id}"),
        repository_path: "/work/repo".into(),
        objective: "Make the login redirect work".into(),
        criteria: vec![MissionCriterionSummaryV1 {
            criterion_id: Some("c0ffee00".repeat(8)),
            description: "Redirect test passes".into(),
            coverage: MissionCriterionCoverageV1::Covered,
            required_check_ids: vec!["unit".into()],
        }],
        closure_configured: true,
        declared_check_count: 2,
        checks: vec![
            MissionCheckSummaryV1 {
                check_id: "unit".into(),
                kind: MissionCheckKindV1::Command,
                required: true,
                covered_criterion_ids: vec![],
                status: MissionCheckStatusV1::Passed,
            },
            MissionCheckSummaryV1 {
                check_id: "review".into(),
                kind: MissionCheckKindV1::Manual,
                required: true,
                covered_criterion_ids: vec![],
                status: MissionCheckStatusV1::ManualMissing,
            },
        ],
        evidence: vec![MissionEvidenceSummaryV1 {
            check_id: "unit".into(),
            kind: MissionEvidenceKindV1::Command,
            assessment: MissionEvidenceAssessmentV1::Passed,
            workspace_digest: "d".repeat(64),
            recorded_at_millis: 1,
            duration_millis: Some(1500),
            exit_code: Some(0),
            artifact_count: 0,
            reviewer: None,
            manual_override: None,
            source: None,
            detail: None,
            output_tail: None,
        }],
        evidence_pack_digest: None,
        details_available: true,
        status,
        status_reason: Some("the provider is working".into()),
        run: Some(run_view("r1", MissionProvider::Codex)),
        run_history: vec![],
        checks_running: None,
        worktree: None,
        landing: None,
        usage: None,
        abandoned_reason: None,
        unresolved_attention_count: 1,
        updated_at_millis: 1,
        host: None,
    }
}

fn item(
    id: &str,
    kind: AttentionKindV1,
    risk: AttentionRiskV1,
    action: &str,
    questions: Vec<AttentionQuestionV1>,
) -> AttentionItemV1 {
    AttentionItemV1 {
        schema_version: 1,
        attention_id: id.into(),
        mission_id: "m1".into(),
        run_id: "r1".into(),
        session_id: "s".into(),
        pane: AttentionPaneTargetV1 {
            workspace_id: "w1".into(),
            pane_id: "w1:p1".into(),
        },
        kind,
        requested_action: action.into(),
        scope: "this run".into(),
        risk,
        provider: MissionProvider::Codex,
        source: AttentionSourceV1::ProviderApi,
        response_capability: AttentionResponseCapabilityV1::Reliable,
        questions,
        created_at_millis: 1,
        expires_at_millis: None,
        occurrence_count: 1,
        unread: true,
        state: AttentionStateV1::Open,
        delivery: AttentionDeliveryStateV1::NotRequested,
        host: None,
    }
}

pub fn question(id: &str, multiple: bool, custom_allowed: bool) -> AttentionQuestionV1 {
    AttentionQuestionV1 {
        id: id.into(),
        header: "DB".into(),
        prompt: "Which database?".into(),
        options: vec![
            AttentionQuestionOptionV1 {
                label: "sqlite".into(),
                description: "a file".into(),
            },
            AttentionQuestionOptionV1 {
                label: "postgres".into(),
                description: String::new(),
            },
        ],
        multiple,
        custom_allowed,
    }
}

pub fn question_item(multiple: bool) -> AttentionItemV1 {
    item(
        "attention:q1",
        AttentionKindV1::ProviderQuestion,
        AttentionRiskV1::Low,
        "answer a question",
        vec![question("q-db", multiple, true)],
    )
}

pub fn approval_item() -> AttentionItemV1 {
    item(
        "attention:a1",
        AttentionKindV1::PermissionRequest,
        AttentionRiskV1::High,
        "run rm -rf build",
        vec![],
    )
}

pub fn warning_item() -> AttentionItemV1 {
    item(
        "attention:w1",
        AttentionKindV1::SecurityWarning,
        AttentionRiskV1::Critical,
        "the workspace changed during read-only run r1",
        vec![],
    )
}

/// An app that shows one active mission and the given attention items.
pub fn app_with(attention: Vec<AttentionItemV1>) -> App {
    let mut app = App::new();
    let requests = app.apply(ServerUpdate::Snapshot {
        missions: vec![mission("m1", MissionStatus::Active)],
        attention,
    });
    assert!(requests.is_empty());
    app
}

pub fn recipe_preview() -> CockpitPreview {
    CockpitPreview {
        digest: "f".repeat(64),
        title: "Start r1".into(),
        risk: AttentionRiskV1::High,
        lines: vec![
            "Start run r1 of mission m1 (Fix login)".into(),
            "write scope: the provider MAY CHANGE FILES in /work/repo".into(),
            "recipe setup: npm ci".into(),
        ],
        recipe: Some(RecipeScopeView {
            path: "/work/repo/.nagi/project.toml".into(),
            setup: Some(vec!["npm".into(), "ci".into()]),
            services: vec![RecipeServiceView {
                id: "web".into(),
                command: vec!["npm".into(), "run".into(), "dev".into()],
                port_env: "PORT".into(),
                health: "http://127.0.0.1:{port}/health".into(),
            }],
            copy_ignored: vec![".env.example".into()],
            cleanup: vec![vec!["rm".into(), "-rf".into(), "tmp".into()]],
            scope_digest: "5".repeat(64),
        }),
    }
}

pub fn artifact() -> MissionHandoffArtifactV1 {
    MissionHandoffArtifactV1 {
        schema_version: 1,
        artifact_sha256: "a1".repeat(32),
        generated_at_millis: 42,
        mission_id: "m1".into(),
        source_run_id: "r1".into(),
        suggested_run_id: "r1-handoff-1".into(),
        source_provider: MissionProvider::Codex,
        target_provider: MissionProvider::ClaudeCode,
        repository_path: "/work/repo".into(),
        worktree_path: "/work/repo".into(),
        base_revision: "a".repeat(40),
        head_revision: "b".repeat(40),
        objective: "Make the login redirect work".into(),
        acceptance_criteria: vec!["Redirect test passes".into()],
        diff: MissionHandoffDiffV1 {
            workspace_digest: "d".repeat(64),
            dirty: true,
            changed_paths: vec!["src/login.rs".into()],
            stat: "1 file changed".into(),
        },
        decisions: vec![],
        checks: vec![],
        selected_logs: vec![],
        warnings: vec!["the proof is not verified".into()],
    }
}
