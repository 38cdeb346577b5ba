//! Fixtures of the proof and handoff tests: a real Git repository in a temporary directory,
//! and a mission whose events are committed to an in-memory ledger that plays the store's
//! part (contiguous sequences, a payload digest per event) so seals see a real authority
//! head.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_exec::runner::{CommandCheckRequest, DiscardOutput, RunnerConfig, run_command_check};
use nagi_exec::workspace::{ScanConfig, WorkspaceSnapshot, scan_workspace};
use nagi_mission::apply::apply;
use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::digest::sha256_hex;
use nagi_mission::event::MissionEvent;
use nagi_mission::model::{Mission, Run, SandboxGrant};
use nagi_proof::{
    AuthorityHead, CommandEvidenceInput, ProofWorkspace, Verdict, VerificationInput, WorktreeLease,
    command_evidence, current_identity, rejected_command_evidence, verify,
};
use nagi_schema::mission::{
    CommandCheck, ManualCheck, MissionCheck, MissionCreateParams, MissionPathRule, MissionProvider,
    MissionProviderMode, MissionStatus,
};

/// Runs `git` in `directory` as a test user, with no global or system configuration, and
/// answers its trimmed output (panics with git's stderr when it fails).
pub fn git_in(directory: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(directory)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A Git checkout in a temporary directory, with one commit.
pub struct TestRepository {
    directory: tempfile::TempDir,
}

impl TestRepository {
    /// A checkout that ignores `target/`.
    pub fn new() -> TestRepository {
        TestRepository::with_gitignore("target/\n")
    }

    /// A checkout whose first commit has `gitignore` as its `.gitignore`, beside
    /// `src/lib.rs` and `docs/guide.md`.
    pub fn with_gitignore(gitignore: &str) -> TestRepository {
        let repository = TestRepository {
            directory: tempfile::tempdir().unwrap(),
        };
        repository.git(&["init", "-q", "-b", "main", "."]);
        repository.write(".gitignore", gitignore);
        repository.write("src/lib.rs", "pub fn login() -> &'static str { \"ok\" }\n");
        repository.write("docs/guide.md", "# Guide\n");
        repository.git(&["add", "-A"]);
        repository.git(&["commit", "-q", "-m", "initial"]);
        repository
    }

    pub fn root(&self) -> PathBuf {
        self.directory.path().canonicalize().unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.directory.path(), args)
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.path(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    /// `path` under the checkout's canonical root.
    pub fn path(&self, path: &str) -> PathBuf {
        self.root().join(path)
    }

    pub fn scan(&self) -> WorkspaceSnapshot {
        scan_workspace(&self.root(), &ScanConfig::default()).unwrap()
    }
}

/// `unit`: a required command over `src/` that writes the artifact `report.json` when
/// `src/lib.rs` says `ok`.
pub fn unit_check() -> MissionCheck {
    MissionCheck::Command(CommandCheck {
        id: "unit".into(),
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "grep -q '\"ok\"' src/lib.rs && printf '{\"ok\":true}' > report.json".into(),
        ],
        cwd: ".".into(),
        relevant_paths: vec![MissionPathRule::Prefix {
            prefix: "src".into(),
        }],
        required_artifacts: vec!["report.json".into()],
        include_ignored: false,
        required: true,
        covers: vec![0, 1],
    })
}

/// `review`: a required manual check by `alice`.
pub fn review_check(allow_override: bool) -> MissionCheck {
    MissionCheck::Manual(ManualCheck {
        id: "review".into(),
        reviewers: vec!["alice".into()],
        allow_override,
        required: true,
        covers: vec![1],
    })
}

/// A mission over a real repository and the ledger its events are committed to.
pub struct Ledger {
    pub mission: Mission,
    pub sequence: u64,
    pub last_payload_digest: String,
    pub clock: u64,
}

impl Ledger {
    /// Creates, configures and starts a mission (Codex, run `run-1`) on `repository`, and
    /// moves it to `review_required` as a completed turn would.
    pub fn start(
        repository: &TestRepository,
        objective: &str,
        criteria: &[&str],
        checks: Vec<MissionCheck>,
    ) -> Ledger {
        let root = repository.root().display().to_string();
        let params = MissionCreateParams {
            mission_id: "mission-proof".into(),
            title: "Proof".into(),
            repository_path: root.clone(),
            objective: objective.into(),
            acceptance_criteria: criteria.iter().map(|text| text.to_string()).collect(),
            host: None,
        };
        let CreateDecision::Create(created) = decide_create(None, &params, &root, 1_000).unwrap()
        else {
            panic!("created")
        };
        let mut ledger = Ledger {
            mission: apply(None, &created),
            sequence: 0,
            last_payload_digest: String::new(),
            clock: 1_000,
        };
        ledger.record_payload(&created);
        let at_millis = ledger.tick();
        let ConfigureDecision::Configure(configured) =
            decide_configure(&ledger.mission, &checks, at_millis).unwrap()
        else {
            panic!("configured")
        };
        ledger.commit(configured);
        let run = Run {
            run_id: nagi_schema::ids::RunId::parse("run-1").unwrap(),
            provider: MissionProvider::Codex,
            mode: MissionProviderMode::Managed,
            worktree_path: root,
            base_revision: repository.head(),
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
            started_at_millis: ledger.clock,
            ended_at_millis: None,
            outcome: None,
            turns: 1,
            last_turn_outcome: None,
            queued_follow_ups: 0,
            usage: None,
            model: None,
            reasoning_effort: None,
        };
        let at_millis = ledger.tick();
        ledger.commit(MissionEvent::RunStarted { run, at_millis });
        let at_millis = ledger.tick();
        ledger.commit(MissionEvent::StatusChanged {
            status: MissionStatus::ReviewRequired,
            reason: None,
            run_outcome: None,
            at_millis,
        });
        ledger
    }

    pub fn tick(&mut self) -> u64 {
        self.clock += 10;
        self.clock
    }

    fn record_payload(&mut self, event: &MissionEvent) {
        self.sequence += 1;
        self.last_payload_digest = sha256_hex(&serde_json::to_vec(event).unwrap());
    }

    pub fn commit(&mut self, event: MissionEvent) {
        self.record_payload(&event);
        self.mission = apply(Some(self.mission.clone()), &event);
    }

    pub fn head(&self) -> AuthorityHead {
        AuthorityHead {
            sequence: self.sequence,
            payload_digest: self.last_payload_digest.clone(),
        }
    }

    pub fn lease(&self) -> WorktreeLease {
        let run = self.mission.run.as_ref().unwrap();
        WorktreeLease {
            mission_id: self.mission.mission_id.to_string(),
            run_id: run.run_id.to_string(),
            checkout_root: run.worktree_path.clone(),
            claim_nonce: "claim-nonce-1".into(),
        }
    }

    /// Runs every command check in plan order, with a scan before and after each, and
    /// commits its evidence (§5.4 step 3).
    pub fn collect_command_evidence(&mut self) {
        let identity = current_identity(&self.mission).unwrap();
        let worktree = PathBuf::from(&identity.worktree_identity);
        let declarations = self.mission.plan.as_ref().unwrap().declarations.clone();
        for declaration in declarations
            .iter()
            .filter(|declaration| declaration.is_command())
        {
            let nagi_mission::model::DeclarationKind::Command {
                program, args, cwd, ..
            } = &declaration.kind
            else {
                unreachable!()
            };
            let before = scan_workspace(&worktree, &ScanConfig::default()).unwrap();
            let request = CommandCheckRequest {
                worktree: worktree.clone(),
                cwd: cwd.clone(),
                program: program.clone(),
                args: args.clone(),
            };
            let evidence =
                match run_command_check(&request, &RunnerConfig::default(), &mut DiscardOutput) {
                    Ok(outcome) => {
                        let after = scan_workspace(&worktree, &ScanConfig::default()).unwrap();
                        let input = CommandEvidenceInput {
                            declaration,
                            identity: &identity,
                            before: &before,
                            after: &after,
                            recorded_at_millis: self.tick(),
                        };
                        command_evidence(&input, &outcome).unwrap()
                    }
                    Err(error) => rejected_command_evidence(
                        declaration,
                        &identity,
                        &before,
                        &error,
                        self.tick(),
                    )
                    .unwrap(),
                };
            let at_millis = evidence.recorded_at_millis;
            self.commit(MissionEvent::EvidenceRecorded {
                evidence,
                at_millis,
            });
        }
    }

    /// The final scan of §5.4 step 4 and the evaluation at the current head.
    pub fn verify_now(&mut self, worktree: &Path) -> Verdict {
        let snapshot = scan_workspace(worktree, &ScanConfig::default()).unwrap();
        let workspace =
            ProofWorkspace::observe(worktree, snapshot, self.mission.plan.as_ref().unwrap())
                .unwrap();
        let head = self.head();
        let lease = self.lease();
        let verified_at_millis = self.tick();
        verify(&VerificationInput {
            mission: &self.mission,
            workspace: &workspace,
            authority_head: &head,
            lease: &lease,
            verified_at_millis,
        })
        .unwrap()
    }
}

pub fn reasons(verdict: &Verdict) -> Vec<String> {
    match verdict {
        Verdict::Verified { .. } => Vec::new(),
        Verdict::ReviewRequired { reasons, .. } => reasons.clone(),
    }
}
