use nagi_schema::attention::{AttentionDecisionV1, AttentionFailureCodeV1};
use nagi_schema::mission::MissionStatus;

use super::*;
use crate::handoff::test_support::*;
use nagi_mission::event::MissionEvent;
use nagi_mission::model::ResponseAttempt;

const VECTOR_JSON: &str = r#"{"schema_version":1,"artifact_sha256":"","generated_at_millis":100,"mission_id":"mission-handoff","source_run_id":"run-codex","suggested_run_id":"handoff-claude-c2badee0ff4f","source_provider":"codex","target_provider":"claude_code","repository_path":"/repo","worktree_path":"/repo","base_revision":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","head_revision":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","objective":"Fix login","acceptance_criteria":["Redirect test passes"],"diff":{"workspace_digest":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc","dirty":true,"changed_paths":["src/lib.rs"],"stat":" src/lib.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"},"decisions":[],"checks":[{"check_id":"redirect-test","kind":"command","required":true,"covered_criterion_ids":["d47bab29c48399fb5e9864cea6c2a9b2f2ec8687527116a09fcb5f7f522e61db"],"status":"missing"}],"selected_logs":[],"warnings":["w1","w2","w3"]}"#;

fn build(
    mission: &Mission,
    target: MissionProvider,
    diff: &HandoffDiff,
) -> MissionHandoffArtifactV1 {
    build_handoff_artifact(mission, target, 100, diff, &vector_config()).unwrap()
}

#[test]
fn the_contract_vector_reproduces_through_the_builder() {
    let artifact = build(
        &vector_mission(),
        MissionProvider::ClaudeCode,
        &vector_diff(),
    );
    assert_eq!(
        artifact.artifact_sha256,
        "e6198507e9979a931ecba061fa89f0daeb282d0851704f97407112841f55eb29"
    );
    assert_eq!(artifact.suggested_run_id, "handoff-claude-c2badee0ff4f");
    let blank = MissionHandoffArtifactV1 {
        artifact_sha256: String::new(),
        ..artifact
    };
    assert_eq!(serde_json::to_string(&blank).unwrap(), VECTOR_JSON);
}

#[test]
fn suggested_run_ids_follow_the_contract_examples_and_slugs() {
    let other_workspace = HandoffDiff {
        workspace_digest: "a".repeat(64),
        ..vector_diff()
    };
    assert_eq!(
        build(
            &vector_mission(),
            MissionProvider::ClaudeCode,
            &other_workspace
        )
        .suggested_run_id,
        "handoff-claude-cddfb9e2f410"
    );
    for (target, slug) in [
        (MissionProvider::ClaudeCode, "claude"),
        (MissionProvider::OpenCode, "opencode"),
        (MissionProvider::Acp, "acp"),
    ] {
        let id = build(&vector_mission(), target, &vector_diff()).suggested_run_id;
        assert!(
            id.starts_with(&format!("handoff-{slug}-"))
                && id.len() == "handoff-".len() + slug.len() + 13,
            "{id}"
        );
    }
    let mut from_claude = vector_mission();
    from_claude.run.as_mut().unwrap().provider = MissionProvider::ClaudeCode;
    assert!(
        build(&from_claude, MissionProvider::Codex, &vector_diff())
            .suggested_run_id
            .starts_with("handoff-codex-")
    );
}

#[test]
fn preconditions_are_checked_in_contract_order() {
    let mut mission = vector_mission();
    for status in [
        MissionStatus::Draft,
        MissionStatus::Preparing,
        MissionStatus::Active,
        MissionStatus::Archived,
    ] {
        mission.status = status;
        let error = build_handoff_artifact(
            &mission,
            MissionProvider::ClaudeCode,
            1,
            &vector_diff(),
            &vector_config(),
        )
        .unwrap_err();
        assert!(
            matches!(error, HandoffError::InvalidState { .. }),
            "{status:?}"
        );
    }
    for status in [
        MissionStatus::Blocked,
        MissionStatus::Failed,
        MissionStatus::ReviewRequired,
        MissionStatus::ReadyToClose,
    ] {
        mission.status = status;
        assert!(
            check_handoff_preconditions(&mission, MissionProvider::ClaudeCode).is_ok(),
            "{status:?}"
        );
    }
    assert!(matches!(
        check_handoff_preconditions(&mission, MissionProvider::Codex),
        Err(HandoffError::SameProvider { .. })
    ));
    mission.run = None;
    assert!(matches!(
        check_handoff_preconditions(&mission, MissionProvider::ClaudeCode),
        Err(HandoffError::NoRun { .. })
    ));
}

fn with_decision(
    mission: Mission,
    attention_id: &str,
    decision: AttentionDecisionV1,
    actor: &str,
) -> Mission {
    let mission = crate::test_support::open_attention(mission, attention_id, "run a command");
    let attempt = ResponseAttempt {
        attempt: 1,
        decision,
        actor: actor.into(),
        state: nagi_mission::model::AttemptState::Requested,
        requested_at_millis: 300,
        updated_at_millis: 300,
    };
    nagi_mission::apply::apply(
        Some(mission),
        &MissionEvent::ResponseRequested {
            attention_id: attention_id.into(),
            attempt,
            at_millis: 300,
        },
    )
}

#[test]
fn every_input_of_the_digest_changes_it_and_nothing_else_does() {
    let mission = vector_mission();
    let baseline = build(&mission, MissionProvider::ClaudeCode, &vector_diff());
    assert_eq!(
        build(&mission, MissionProvider::ClaudeCode, &vector_diff()),
        baseline,
        "stable when nothing changed"
    );

    let mut variants: Vec<(&str, MissionHandoffArtifactV1)> = vec![(
        "target",
        build(&mission, MissionProvider::OpenCode, &vector_diff()),
    )];
    variants.push((
        "generated_at",
        build_handoff_artifact(
            &mission,
            MissionProvider::ClaudeCode,
            101,
            &vector_diff(),
            &vector_config(),
        )
        .unwrap(),
    ));
    variants.push((
        "head",
        build(
            &mission,
            MissionProvider::ClaudeCode,
            &HandoffDiff {
                head_revision: "d".repeat(40),
                ..vector_diff()
            },
        ),
    ));
    variants.push((
        "paths",
        build(
            &mission,
            MissionProvider::ClaudeCode,
            &HandoffDiff {
                changed_paths: vec!["src/main.rs".into()],
                ..vector_diff()
            },
        ),
    ));
    variants.push((
        "stat",
        build(
            &mission,
            MissionProvider::ClaudeCode,
            &HandoffDiff {
                stat: " src/lib.rs | 3 ++-".into(),
                ..vector_diff()
            },
        ),
    ));
    variants.push((
        "dirty",
        build(
            &mission,
            MissionProvider::ClaudeCode,
            &HandoffDiff {
                dirty: false,
                ..vector_diff()
            },
        ),
    ));
    let mut touched = mission.clone();
    touched.updated_at_millis += 1;
    variants.push((
        "updated_at",
        build(&touched, MissionProvider::ClaudeCode, &vector_diff()),
    ));
    let mut failing = mission.clone();
    failing.evidence.insert(
        "redirect-test".into(),
        nagi_mission::model::Evidence {
            check_id: "redirect-test".into(),
            kind: nagi_schema::mission::MissionEvidenceKindV1::Command,
            assessment: nagi_schema::mission::MissionEvidenceAssessmentV1::Failed,
            workspace_digest: "c".repeat(64),
            relevant_digest: None,
            declaration_digest: mission.plan.as_ref().unwrap().declarations[0]
                .digest
                .clone(),
            run_id: "run-codex".into(),
            identity_digest: None,
            output_digest: None,
            recorded_at_millis: 42,
            duration_millis: None,
            exit_code: Some(1),
            source: None,
            artifacts: vec![],
            record_digest: None,
            detail: None,
            output_tail: None,
        },
    );
    variants.push((
        "check status",
        build(&failing, MissionProvider::ClaudeCode, &vector_diff()),
    ));
    let decided = with_decision(
        mission.clone(),
        "attention:1",
        AttentionDecisionV1::ApproveOnce,
        "local-user",
    );
    variants.push((
        "decision",
        build(&decided, MissionProvider::ClaudeCode, &vector_diff()),
    ));

    let mut seen = std::collections::BTreeSet::new();
    seen.insert(baseline.artifact_sha256.clone());
    for (what, artifact) in variants {
        assert!(
            seen.insert(artifact.artifact_sha256.clone()),
            "{what} did not change the digest"
        );
        assert_eq!(
            artifact.artifact_sha256,
            handoff_artifact_sha256(&artifact).unwrap(),
            "{what}"
        );
    }
}

#[test]
fn decisions_take_each_items_latest_attempt_in_id_order() {
    let mission = with_decision(
        vector_mission(),
        "attention:b",
        AttentionDecisionV1::Deny,
        "local-user",
    );
    let mission = with_decision(
        mission,
        "attention:a",
        AttentionDecisionV1::ApproveForSession,
        "local-user",
    );
    let mission = nagi_mission::apply::apply(
        Some(mission),
        &MissionEvent::ResponseSettled {
            attention_id: "attention:b".into(),
            attempt: 1,
            state: nagi_mission::model::AttemptState::DefinitelyNotApplied {
                code: AttentionFailureCodeV1::Timeout,
            },
            at_millis: 310,
        },
    );
    let mission = crate::test_support::open_attention(mission, "attention:c", "never answered");
    let artifact = build(&mission, MissionProvider::ClaudeCode, &vector_diff());
    let summary: Vec<(
        &str,
        AttentionDecisionV1,
        nagi_schema::handoff::MissionHandoffDecisionStateV1,
        u64,
    )> = artifact
        .decisions
        .iter()
        .map(|decision| {
            (
                decision.attention_id.as_str(),
                decision.decision,
                decision.state,
                decision.updated_at_millis,
            )
        })
        .collect();
    use nagi_schema::handoff::MissionHandoffDecisionStateV1 as State;
    assert_eq!(
        summary,
        [
            (
                "attention:a",
                AttentionDecisionV1::ApproveForSession,
                State::Requested,
                300
            ),
            ("attention:b", AttentionDecisionV1::Deny, State::Failed, 310)
        ]
    );
}

pub(crate) const PLANTED_SECRETS: [&str; 7] = [
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM",
    "hunter2-correct-horse",
    "s3cr3tpass",
    "Bearer-token-value-0123456789",
];

pub(crate) fn secret_mission() -> Mission {
    let mut mission = vector_mission();
    mission.objective = format!(
        "Fix login with key {} and push with {}\npassword={}\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\nclone https://deploy:{}@git.example.com/repo",
        PLANTED_SECRETS[0],
        PLANTED_SECRETS[1],
        PLANTED_SECRETS[4],
        PLANTED_SECRETS[3],
        PLANTED_SECRETS[5]
    );
    mission.criteria[0].description = format!(
        "Works with {} and Authorization: Bearer {}",
        PLANTED_SECRETS[2], PLANTED_SECRETS[6]
    );
    with_decision(
        mission,
        "attention:1",
        AttentionDecisionV1::ApproveOnce,
        &format!("token={}", PLANTED_SECRETS[1]),
    )
}

pub(crate) fn secret_diff() -> HandoffDiff {
    let long_directory =
        "deeply/nested/directory/structure/that/git/will/shorten/in/the/stat/output";
    let long_path = format!("{long_directory}/{}.txt", PLANTED_SECRETS[1]);
    HandoffDiff {
        head_revision: "b".repeat(40),
        workspace_digest: "c".repeat(64),
        dirty: true,
        changed_paths: vec![
            format!("config/{}.env", PLANTED_SECRETS[2]),
            long_path,
            "src/lib.rs".into(),
        ],
        stat: format!(
            " config/{}.env | 1 +\n .../shorten/in/the/stat/output/{}.txt | 2 +-\n ...{}.txt | 1 +\n src/lib.rs | 2 +-\n 3 files changed\npassword={}",
            PLANTED_SECRETS[2],
            PLANTED_SECRETS[1],
            &PLANTED_SECRETS[1][20..],
            PLANTED_SECRETS[5]
        ),
    }
}

#[test]
fn planted_secrets_never_reach_the_artifact_or_the_prompt() {
    let artifact = build(
        &secret_mission(),
        MissionProvider::ClaudeCode,
        &secret_diff(),
    );
    let serialised = serde_json::to_string(&artifact).unwrap();
    let prompt = crate::handoff::handoff_prompt(&artifact);
    for secret in PLANTED_SECRETS {
        assert!(
            !serialised.contains(secret),
            "{secret} leaked into the artifact: {serialised}"
        );
        assert!(
            !prompt.contains(secret),
            "{secret} leaked into the prompt: {prompt}"
        );
    }
    let shortened_fragment = &PLANTED_SECRETS[1][20..];
    assert!(
        !serialised.contains(shortened_fragment),
        "a shortened stat name leaked a fragment: {}",
        artifact.diff.stat
    );
    assert!(
        artifact
            .objective
            .starts_with("Fix login with key [REDACTED]")
    );
    assert!(
        artifact
            .diff
            .changed_paths
            .contains(&"src/lib.rs".to_string()),
        "normal paths are kept"
    );
    assert!(
        artifact.diff.stat.contains(" src/lib.rs | 2 +-"),
        "normal stat lines are kept"
    );
    assert_eq!(artifact.decisions[0].actor_id, "token=[REDACTED]");
}

#[test]
fn long_fields_are_cut_to_their_schema_limits() {
    let mut mission = vector_mission();
    mission.objective = "é".repeat(8192);
    let diff = HandoffDiff {
        stat: "x".repeat(40_000),
        changed_paths: vec!["p".repeat(4096)],
        ..vector_diff()
    };
    let artifact = build(&mission, MissionProvider::ClaudeCode, &diff);
    assert_eq!(artifact.objective.chars().count(), 8192);
    assert_eq!(artifact.diff.stat.chars().count(), MAX_STAT_CHARS);
    assert!(artifact.diff.stat.ends_with("(diff stat truncated)"));
    assert_eq!(artifact.diff.changed_paths[0].len(), 4096);
}

#[test]
fn the_default_warnings_are_three_short_advisories() {
    let warnings = default_warnings();
    assert_eq!(warnings.len(), 3);
    assert!(
        warnings
            .iter()
            .all(|warning| !warning.is_empty() && warning.chars().count() <= 1024)
    );
    let artifact = build_handoff_artifact(
        &vector_mission(),
        MissionProvider::ClaudeCode,
        100,
        &vector_diff(),
        &HandoffArtifactConfig::default(),
    )
    .unwrap();
    assert_eq!(artifact.warnings, warnings);
    assert_ne!(
        artifact.artifact_sha256,
        "e6198507e9979a931ecba061fa89f0daeb282d0851704f97407112841f55eb29"
    );
}
