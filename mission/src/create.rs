//! `mission.create` and `mission.configure` decisions (contract §2.1, §2.4, §5.1–§5.3).
//! Pure: the caller has already canonicalised the repository path.

use nagi_schema::mission::{MissionCheck, MissionCreateParams, MissionPathRule, MissionStatus};

use super::canonical::declaration_digest;
use super::error::MissionError;
use super::event::MissionEvent;
use super::model::{Declaration, DeclarationKind, Mission};
use super::validate::*;

#[expect(
    clippy::large_enum_variant,
    reason = "made once per request and moved once; boxing would only add an allocation"
)]
pub enum CreateDecision {
    /// An identical mission exists: nothing to write.
    Unchanged,
    Create(MissionEvent),
}

/// Steps 3–5 of §2.1, after the repository was canonicalised (step 2).
pub fn decide_create(
    existing: Option<&Mission>,
    params: &MissionCreateParams,
    canonical_repository: &str,
    now_millis: u64,
) -> Result<CreateDecision, MissionError> {
    if let Some(mission) = existing {
        let same = mission.title == params.title
            && mission.repository_path == canonical_repository
            && mission.objective == params.objective
            && mission.criteria.len() == params.acceptance_criteria.len()
            && mission
                .criteria
                .iter()
                .zip(&params.acceptance_criteria)
                .all(|(criterion, text)| &criterion.description == text);
        return if same {
            Ok(CreateDecision::Unchanged)
        } else {
            Err(MissionError::Conflict(format!(
                "mission {} already exists with a different title, repository, objective or criteria",
                params.mission_id
            )))
        };
    }
    let mission_id = nagi_schema::ids::MissionId::parse(&params.mission_id).map_err(|fault| {
        MissionError::InvalidMission(fault.describe("mission_id", &params.mission_id))
    })?;
    check_text("title", &params.title, MAX_TITLE_BYTES).map_err(MissionError::InvalidMission)?;
    check_text("objective", &params.objective, MAX_OBJECTIVE_BYTES)
        .map_err(MissionError::InvalidMission)?;
    let count = params.acceptance_criteria.len();
    if count == 0 || count > MAX_CRITERIA {
        return Err(MissionError::InvalidMission(format!(
            "a mission needs 1 to {MAX_CRITERIA} acceptance criteria; got {count}"
        )));
    }
    for (index, criterion) in params.acceptance_criteria.iter().enumerate() {
        check_text(
            &format!("acceptance_criteria[{index}]"),
            criterion,
            MAX_CRITERION_BYTES,
        )
        .map_err(MissionError::InvalidMission)?;
    }
    if canonical_repository.len() > MAX_PATH_BYTES || !canonical_repository.starts_with('/') {
        return Err(MissionError::InvalidMission(format!(
            "repository_path must be absolute and at most {MAX_PATH_BYTES} bytes"
        )));
    }
    Ok(CreateDecision::Create(MissionEvent::MissionCreated {
        mission_id,
        title: params.title.clone(),
        repository_path: canonical_repository.to_string(),
        objective: params.objective.clone(),
        acceptance_criteria: params.acceptance_criteria.clone(),
        at_millis: now_millis,
    }))
}

#[expect(
    clippy::large_enum_variant,
    reason = "made once per request and moved once; boxing would only add an allocation"
)]
pub enum ConfigureDecision {
    Unchanged,
    Configure(MissionEvent),
}

/// A declaration built from a request, before persistence validation. Values that failed
/// normalisation are kept raw with the reason, so the plan comparison of step 5 still sees
/// them and step 7 rejects them.
struct Candidate {
    declaration: Declaration,
    problems: Vec<String>,
}

fn normalise_or_keep(
    raw: &str,
    allow_root: bool,
    what: &str,
    problems: &mut Vec<String>,
) -> String {
    match normalise_relative_path(raw, allow_root) {
        Ok(path) => path,
        Err(error) => {
            problems.push(format!("{what}: {error}"));
            raw.to_string()
        }
    }
}

fn build_candidate(mission: &Mission, check: &MissionCheck) -> Candidate {
    let mut problems = Vec::new();
    let mut covered: Vec<String> = check
        .covers()
        .iter()
        .map(|index| mission.criteria[*index as usize].criterion_id.clone())
        .collect();
    covered.sort();
    covered.dedup();
    let (kind, required) = match check {
        MissionCheck::Command(command) => {
            let cwd = normalise_or_keep(&command.cwd, true, "cwd", &mut problems);
            let relevant_paths = command
                .relevant_paths
                .iter()
                .map(|rule| match normalise_path_rule(rule) {
                    Ok(rule) => rule,
                    Err(error) => {
                        problems.push(error);
                        rule.clone()
                    }
                })
                .collect();
            let required_artifacts = command
                .required_artifacts
                .iter()
                .map(|artifact| {
                    normalise_or_keep(artifact, false, "required artifact", &mut problems)
                })
                .collect();
            (
                DeclarationKind::Command {
                    program: command.program.clone(),
                    args: command.args.clone(),
                    cwd,
                    relevant_paths,
                    required_artifacts,
                    include_ignored: command.include_ignored,
                },
                command.required,
            )
        }
        MissionCheck::Manual(manual) => (
            DeclarationKind::Manual {
                reviewers: manual.reviewers.clone(),
                allow_override: manual.allow_override,
            },
            manual.required,
        ),
    };
    let digest = declaration_digest(check.id(), &kind, required, &covered);
    Candidate {
        declaration: Declaration {
            check_id: check.id().to_string(),
            kind,
            required,
            covered_criterion_ids: covered,
            digest,
        },
        problems,
    }
}

/// Persistence validation of one declaration (§5.1).
fn validate_declaration(candidate: &Candidate) -> Result<(), String> {
    let declaration = &candidate.declaration;
    let id = &declaration.check_id;
    check_id("check id", id)?;
    if let Some(problem) = candidate.problems.first() {
        return Err(format!("check {id}: {problem}"));
    }
    if declaration.covered_criterion_ids.len() > MAX_COVERED {
        return Err(format!(
            "check {id} covers more than {MAX_COVERED} criteria"
        ));
    }
    match &declaration.kind {
        DeclarationKind::Command {
            program,
            args,
            relevant_paths,
            required_artifacts,
            ..
        } => {
            if program.trim().is_empty()
                || program.len() > MAX_PROGRAM_BYTES
                || program.contains('\0')
            {
                return Err(format!(
                    "check {id}: program must be 1 to {MAX_PROGRAM_BYTES} bytes, non-blank, without NUL"
                ));
            }
            if args.len() > MAX_ARGS {
                return Err(format!(
                    "check {id} has {} arguments; the limit is {MAX_ARGS}",
                    args.len()
                ));
            }
            if let Some(bad) = args
                .iter()
                .position(|arg| arg.len() > MAX_ARG_BYTES || arg.contains('\0'))
            {
                return Err(format!(
                    "check {id}: argument {bad} is over {MAX_ARG_BYTES} bytes or contains NUL"
                ));
            }
            if relevant_paths.len() > MAX_PATH_RULES {
                return Err(format!(
                    "check {id} has {} path rules; the limit is {MAX_PATH_RULES}",
                    relevant_paths.len()
                ));
            }
            if required_artifacts.len() > MAX_ARTIFACTS {
                return Err(format!(
                    "check {id} has {} required artifacts; the limit is {MAX_ARTIFACTS}",
                    required_artifacts.len()
                ));
            }
            if relevant_paths
                .iter()
                .any(|rule| matches!(rule, MissionPathRule::Exact { path } if path == "."))
            {
                return Err(format!(
                    "check {id}: an exact path rule cannot name the workspace root"
                ));
            }
        }
        DeclarationKind::Manual { reviewers, .. } => {
            if reviewers.is_empty() {
                return Err(format!("manual check {id} needs at least one reviewer"));
            }
            if reviewers.len() > MAX_REVIEWERS {
                return Err(format!(
                    "manual check {id} has {} reviewers; the limit is {MAX_REVIEWERS}",
                    reviewers.len()
                ));
            }
            if let Some(bad) = reviewers.iter().find(|reviewer| !id_is_valid(reviewer)) {
                return Err(format!(
                    "manual check {id}: reviewer {bad:?} breaks the ID rule"
                ));
            }
        }
    }
    Ok(())
}

/// Closure-plan validity (§5.2).
fn validate_plan(mission: &Mission, declarations: &[Declaration]) -> Result<(), String> {
    if mission.criteria.is_empty() {
        return Err("the mission has no acceptance criteria".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for declaration in declarations {
        if !seen.insert(declaration.check_id.as_str()) {
            return Err(format!(
                "check id {} is declared twice",
                declaration.check_id
            ));
        }
    }
    if !declarations.iter().any(|declaration| declaration.required) {
        return Err("at least one check must be required".into());
    }
    for (index, criterion) in mission.criteria.iter().enumerate() {
        let covered = declarations.iter().any(|declaration| {
            declaration.required
                && declaration
                    .covered_criterion_ids
                    .contains(&criterion.criterion_id)
        });
        if !covered {
            return Err(format!(
                "acceptance criterion {index} ({:?}) is not covered by any required check",
                criterion.description
            ));
        }
    }
    Ok(())
}

/// Steps 3–9 of §2.4 (step 2, the missing mission, is the caller's).
pub fn decide_configure(
    mission: &Mission,
    checks: &[MissionCheck],
    now_millis: u64,
) -> Result<ConfigureDecision, MissionError> {
    let criteria_count = mission.criteria.len() as u64;
    for check in checks {
        if let Some(index) = check
            .covers()
            .iter()
            .find(|index| **index >= criteria_count)
        {
            return Err(MissionError::InvalidClosure(format!(
                "check {} covers criterion index {index}, but the mission has {criteria_count} criteria",
                check.id()
            )));
        }
    }
    let candidates: Vec<Candidate> = checks
        .iter()
        .map(|check| build_candidate(mission, check))
        .collect();
    let digests: Vec<String> = candidates
        .iter()
        .map(|candidate| candidate.declaration.digest.clone())
        .collect();
    let set_digest = crate::digest::declaration_set_digest(&digests);
    if let Some(plan) = &mission.plan {
        return if plan.declaration_set_digest == set_digest {
            Ok(ConfigureDecision::Unchanged)
        } else {
            Err(MissionError::Conflict(format!(
                "mission {} already has a different closure plan; a plan is frozen once configured",
                mission.mission_id
            )))
        };
    }
    let declarations: Vec<Declaration> = candidates
        .iter()
        .map(|candidate| candidate.declaration.clone())
        .collect();
    validate_plan(mission, &declarations).map_err(MissionError::InvalidClosure)?;
    if checks.is_empty() || checks.len() > MAX_CHECKS {
        return Err(MissionError::InvalidClosure(format!(
            "a closure plan needs 1 to {MAX_CHECKS} checks; got {}",
            checks.len()
        )));
    }
    for candidate in &candidates {
        validate_declaration(candidate).map_err(MissionError::InvalidClosure)?;
    }
    if mission.status != MissionStatus::Draft || mission.run.is_some() {
        return Err(MissionError::Runtime(format!(
            "mission {} is {} and can no longer be configured",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    Ok(ConfigureDecision::Configure(
        MissionEvent::ClosureConfigured {
            declarations,
            declaration_set_digest: set_digest,
            at_millis: now_millis,
        },
    ))
}
