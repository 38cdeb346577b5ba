//! A mission's frozen closure plan, given back as the checks of the `mission.configure`
//! that made it: what a fleet host that takes a mission over from a host that is gone
//! configures, so that the mission closes by the same checks there.

use nagi_schema::mission::{CommandCheck, ManualCheck, MissionCheck};

use crate::model::{DeclarationKind, Mission};

/// The declared checks of `mission`'s plan, in the order first configured (empty without
/// one). Configuring them on a mission with the same criteria makes the same plan: the
/// same declarations and the same `declaration_set_digest`.
pub fn declared_checks(mission: &Mission) -> Vec<MissionCheck> {
    let Some(plan) = &mission.plan else {
        return Vec::new();
    };
    plan.declarations
        .iter()
        .map(|declaration| {
            let covers: Vec<u64> = declaration
                .covered_criterion_ids
                .iter()
                .filter_map(|id| {
                    mission
                        .criteria
                        .iter()
                        .position(|criterion| &criterion.criterion_id == id)
                        .map(|index| index as u64)
                })
                .collect();
            match &declaration.kind {
                DeclarationKind::Command {
                    program,
                    args,
                    cwd,
                    relevant_paths,
                    required_artifacts,
                    include_ignored,
                } => MissionCheck::Command(CommandCheck {
                    id: declaration.check_id.clone(),
                    program: program.clone(),
                    args: args.clone(),
                    cwd: cwd.clone(),
                    relevant_paths: relevant_paths.clone(),
                    required_artifacts: required_artifacts.clone(),
                    include_ignored: *include_ignored,
                    required: declaration.required,
                    covers,
                }),
                DeclarationKind::Manual {
                    reviewers,
                    allow_override,
                } => MissionCheck::Manual(ManualCheck {
                    id: declaration.check_id.clone(),
                    reviewers: reviewers.clone(),
                    allow_override: *allow_override,
                    required: declaration.required,
                    covers,
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply;
    use crate::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
    use nagi_schema::mission::{MissionCreateParams, MissionPathRule};

    fn created(repository: &str) -> Mission {
        let params = MissionCreateParams {
            mission_id: "m1".into(),
            title: "Fix login".into(),
            repository_path: repository.into(),
            objective: "Make the login redirect".into(),
            acceptance_criteria: vec!["Redirects".into(), "Reviewed".into(), "Lint".into()],
            host: None,
        };
        let CreateDecision::Create(event) = decide_create(None, &params, repository, 1).unwrap()
        else {
            panic!("created");
        };
        apply(None, &event)
    }

    fn configured(mission: Mission, checks: &[MissionCheck]) -> Mission {
        let ConfigureDecision::Configure(event) = decide_configure(&mission, checks, 2).unwrap()
        else {
            panic!("configured");
        };
        apply(Some(mission), &event)
    }

    #[test]
    fn the_declared_checks_configure_the_same_plan_on_a_mission_made_again_elsewhere() {
        let checks = vec![
            MissionCheck::Command(CommandCheck {
                id: "redirect".into(),
                program: "cargo".into(),
                args: vec!["test".into(), "login".into()],
                cwd: "./app/".into(),
                relevant_paths: vec![MissionPathRule::All],
                required_artifacts: vec!["out/report.xml".into()],
                include_ignored: true,
                required: true,
                covers: vec![2, 0],
            }),
            MissionCheck::Manual(ManualCheck {
                id: "review".into(),
                reviewers: vec!["ana".into()],
                allow_override: true,
                required: true,
                covers: vec![1],
            }),
        ];
        let original = configured(created("/home/ana/repo"), &checks);
        let given_back = declared_checks(&original);
        assert_eq!(given_back.len(), 2);
        assert_eq!(given_back[0].id(), "redirect");
        let again = configured(created("/var/lib/nagi/relocated/m1"), &given_back);
        let (plan, plan_again) = (original.plan.unwrap(), again.plan.unwrap());
        assert_eq!(
            plan.declaration_set_digest,
            plan_again.declaration_set_digest
        );
        assert_eq!(plan.declarations, plan_again.declarations);
    }

    #[test]
    fn a_mission_without_a_plan_has_no_declared_checks() {
        assert!(declared_checks(&created("/repo")).is_empty());
    }
}
