//! Shared fixtures of the proof unit tests: a mission with a frozen plan and a run, built
//! through the real decisions and fold, and hand-made snapshots and outcomes.

use std::path::PathBuf;

use nagi_schema::mission::{
    CommandCheck, ManualCheck, MissionCheck, MissionCreateParams, MissionPathRule, MissionProvider,
    MissionProviderMode, MissionStatus,
};

use nagi_exec::runner::{CommandOutcome, OutputSummary};
use nagi_exec::workspace::{Disposition, Fingerprint, WorkspaceEntry, WorkspaceSnapshot};
use nagi_mission::apply::apply;
use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::digest::{ProofIdentity, sha256_hex};
use nagi_mission::event::MissionEvent;
use nagi_mission::model::{Declaration, Evidence, Mission, Run, SandboxGrant};

pub const WORKTREE: &str = "/nonexistent/nagi-proof-fixture";

pub fn base_revision() -> String {
    "a".repeat(40)
}

/// Mission `m1` in `review_required` with run `run-1` and three checks: `unit` (required
/// command over `src/`, artifact `report.json`, covers criterion 1), `review` (required
/// manual, reviewer `alice`, no override, covers criterion 2) and `lint` (optional command
/// over everything).
pub fn mission() -> Mission {
    let params = MissionCreateParams {
        mission_id: "m1".into(),
        title: "Fix login".into(),
        repository_path: WORKTREE.into(),
        objective: "Fix the login redirect".into(),
        acceptance_criteria: vec![
            "Redirect test passes".into(),
            "A person reviewed the change".into(),
        ],
        host: None,
    };
    let CreateDecision::Create(created) = decide_create(None, &params, WORKTREE, 10).unwrap()
    else {
        panic!("created")
    };
    let mut mission = apply(None, &created);
    let checks = vec![
        MissionCheck::Command(CommandCheck {
            id: "unit".into(),
            program: "cargo".into(),
            args: vec!["test".into()],
            cwd: ".".into(),
            relevant_paths: vec![MissionPathRule::Prefix {
                prefix: "src".into(),
            }],
            required_artifacts: vec!["report.json".into()],
            include_ignored: false,
            required: true,
            covers: vec![0],
        }),
        MissionCheck::Manual(ManualCheck {
            id: "review".into(),
            reviewers: vec!["alice".into()],
            allow_override: false,
            required: true,
            covers: vec![1],
        }),
        MissionCheck::Command(CommandCheck {
            id: "lint".into(),
            program: "true".into(),
            args: vec![],
            cwd: ".".into(),
            relevant_paths: vec![],
            required_artifacts: vec![],
            include_ignored: false,
            required: false,
            covers: vec![0],
        }),
    ];
    let ConfigureDecision::Configure(configured) = decide_configure(&mission, &checks, 11).unwrap()
    else {
        panic!("configured")
    };
    mission = apply(Some(mission), &configured);
    mission = apply(
        Some(mission),
        &MissionEvent::RunStarted {
            run: run("run-1", MissionProvider::Codex),
            at_millis: 12,
        },
    );
    apply(
        Some(mission),
        &MissionEvent::StatusChanged {
            status: MissionStatus::ReviewRequired,
            reason: None,
            run_outcome: None,
            at_millis: 13,
        },
    )
}

pub fn run(run_id: &str, provider: MissionProvider) -> Run {
    Run {
        run_id: nagi_schema::ids::RunId::parse(run_id).unwrap(),
        provider,
        mode: MissionProviderMode::Managed,
        worktree_path: WORKTREE.into(),
        base_revision: base_revision(),
        execute_declared_checks: true,
        execute_project_recipe: false,
        handoff_from_run_id: None,
        handoff_artifact_sha256: None,
        provider_session_id: None,
        sandbox: SandboxGrant::ReadOnly,
        consent_id: None,
        pane_id: None,
        enforcement: None,
        workspace_digest_at_start: None,
        started_at_millis: 12,
        ended_at_millis: None,
        outcome: None,
        turns: 1,
        last_turn_outcome: None,
        queued_follow_ups: 0,
        usage: None,
        model: None,
        reasoning_effort: None,
    }
}

pub fn declaration<'a>(mission: &'a Mission, check_id: &str) -> &'a Declaration {
    mission.declaration(check_id).unwrap()
}

pub fn identity(mission: &Mission) -> ProofIdentity {
    crate::binding::current_identity(mission).unwrap()
}

pub fn record(mission: Mission, evidence: Evidence) -> Mission {
    let at = evidence.recorded_at_millis;
    apply(
        Some(mission),
        &MissionEvent::EvidenceRecorded {
            evidence,
            at_millis: at,
        },
    )
}

/// A file entry whose fingerprint is the SHA-256 of `content`.
pub fn file(path: &str, disposition: Disposition, content: &str) -> WorkspaceEntry {
    WorkspaceEntry {
        path: path.into(),
        disposition,
        fingerprint: Fingerprint::File {
            sha256: sha256_hex(content.as_bytes()),
            executable: false,
            size: content.len() as u64,
        },
    }
}

pub fn snapshot(entries: Vec<WorkspaceEntry>) -> WorkspaceSnapshot {
    let mut entries = entries;
    entries.sort_by(|left, right| left.path.cmp(&right.path));
    WorkspaceSnapshot::new("b".repeat(40), false, entries)
}

/// `src/lib.rs`, `docs/guide.md` tracked and an untracked `report.json`.
pub fn base_entries() -> Vec<WorkspaceEntry> {
    vec![
        file("src/lib.rs", Disposition::Tracked, "pub fn lib() {}"),
        file("docs/guide.md", Disposition::Tracked, "# Guide"),
        file("report.json", Disposition::Untracked, "{\"ok\":true}"),
    ]
}

pub fn outcome(exit_code: i32) -> CommandOutcome {
    let summary = |text: &str| OutputSummary {
        total_bytes: text.len() as u64,
        sha256: sha256_hex(text.as_bytes()),
        tail: text.into(),
    };
    CommandOutcome {
        exit_code,
        signal: None,
        failure: None,
        started_at_millis: 100,
        finished_at_millis: 150,
        duration_millis: 50,
        stdout: summary("running 3 tests\ntest result: ok\n"),
        stderr: summary(""),
        resolved_cwd: PathBuf::from(WORKTREE),
        resolved_program: PathBuf::from("/usr/bin/cargo"),
    }
}

/// The proof workspace of a hand-made snapshot (file fingerprints only, so nothing is read).
pub fn proof_workspace(mission: &Mission, snapshot: WorkspaceSnapshot) -> crate::ProofWorkspace {
    crate::ProofWorkspace::observe(
        std::path::Path::new(WORKTREE),
        snapshot,
        mission.plan.as_ref().unwrap(),
    )
    .unwrap()
}

/// Passing evidence for `unit` and `review` recorded against `entries`.
pub fn mission_with_passing_evidence(entries: Vec<WorkspaceEntry>) -> Mission {
    let mission = mission();
    let identity = identity(&mission);
    let current = snapshot(entries);
    let unit = crate::evidence::command_evidence(
        &crate::evidence::CommandEvidenceInput {
            declaration: declaration(&mission, "unit"),
            identity: &identity,
            before: &current,
            after: &current,
            recorded_at_millis: 200,
        },
        &outcome(0),
    )
    .unwrap();
    let review = crate::evidence::manual_evidence(
        declaration(&mission, "review"),
        &identity,
        "alice",
        "reviewed",
        false,
        &current,
        210,
    )
    .unwrap();
    record(record(mission, unit), review)
}

/// Opens a provider permission request on the mission.
pub fn open_attention(mission: Mission, attention_id: &str, requested_action: &str) -> Mission {
    use nagi_schema::attention::{AttentionKindV1, AttentionRiskV1, AttentionSourceV1};
    let attention = nagi_mission::model::Attention {
        attention_id: attention_id.into(),
        run_id: "run-1".into(),
        kind: AttentionKindV1::PermissionRequest,
        risk: AttentionRiskV1::High,
        requested_action: requested_action.into(),
        scope: requested_action.into(),
        questions: vec![],
        request_class: nagi_mission::model::RequestClass::CommandApproval,
        session_approval_available: false,
        provider_request_key: Some("number:1".into()),
        source: AttentionSourceV1::ProviderApi,
        lifecycle: nagi_mission::model::AttentionLifecycle::Open,
        attempts: vec![],
        closed_reason: None,
        closed_by: None,
        created_at_millis: 220,
        updated_at_millis: 220,
    };
    apply(
        Some(mission),
        &MissionEvent::AttentionOpened {
            attention,
            at_millis: 220,
        },
    )
}

pub fn head(sequence: u64) -> crate::AuthorityHead {
    crate::AuthorityHead {
        sequence,
        payload_digest: sha256_hex(format!("event {sequence}").as_bytes()),
    }
}

pub fn lease(mission: &Mission) -> crate::WorktreeLease {
    let run = mission.run.as_ref().unwrap();
    crate::WorktreeLease {
        mission_id: mission.mission_id.to_string(),
        run_id: run.run_id.to_string(),
        checkout_root: run.worktree_path.clone(),
        claim_nonce: "nonce-1".into(),
    }
}

/// Verifies `mission` against `entries` at `head(sequence)`.
pub fn verify_at(
    mission: &Mission,
    entries: Vec<WorkspaceEntry>,
    sequence: u64,
    verified_at_millis: u64,
) -> crate::Verdict {
    let workspace = proof_workspace(mission, snapshot(entries));
    let head = head(sequence);
    let lease = lease(mission);
    crate::verify(&crate::VerificationInput {
        mission,
        workspace: &workspace,
        authority_head: &head,
        lease: &lease,
        verified_at_millis,
    })
    .unwrap()
}

pub fn verified_receipt(verdict: crate::Verdict) -> nagi_schema::proof::ProofReceiptV1 {
    match verdict {
        crate::Verdict::Verified { receipt, .. } => *receipt,
        crate::Verdict::ReviewRequired { reasons, .. } => {
            panic!("expected a verified proof, got {reasons:?}")
        }
    }
}

pub fn review_reasons(verdict: crate::Verdict) -> Vec<String> {
    match verdict {
        crate::Verdict::Verified { .. } => {
            panic!("expected review_required, got a verified proof")
        }
        crate::Verdict::ReviewRequired { reasons, .. } => reasons,
    }
}
