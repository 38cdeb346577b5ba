//! The bridge between the mission aggregate and the canonical digests of contract §5.10.
//! The digests themselves live in `crate::digest`; this file only turns the aggregate's own
//! types (`Declaration`, `DeclarationKind`, the wire `MissionPathRule`) into their plain-data
//! inputs, so there is exactly one implementation of each digest.

use nagi_schema::mission::MissionPathRule;

use super::model::{Declaration, DeclarationKind};
use crate::digest::{self, CheckDeclaration, CheckDeclarationKind, PathRule};

/// The digest library's form of a wire path rule (already normalised, §5.1).
pub fn path_rule(rule: &MissionPathRule) -> PathRule {
    match rule {
        MissionPathRule::All => PathRule::All,
        MissionPathRule::Exact { path } => PathRule::Exact { path: path.clone() },
        MissionPathRule::Prefix { prefix } => PathRule::Prefix {
            prefix: prefix.clone(),
        },
    }
}

/// The path rules a command check declares (`[]` means every file); manual checks have none.
pub fn relevant_path_rules(kind: &DeclarationKind) -> Vec<PathRule> {
    match kind {
        DeclarationKind::Command { relevant_paths, .. } => {
            relevant_paths.iter().map(path_rule).collect()
        }
        DeclarationKind::Manual { .. } => Vec::new(),
    }
}

/// The plain-data input of `digest::declaration_digest` for a declaration's parts.
pub fn check_declaration(
    check_id: &str,
    kind: &DeclarationKind,
    required: bool,
    covered_criterion_ids: &[String],
) -> CheckDeclaration {
    let (declaration_kind, artifacts, include_ignored, reviewers, allow_override) = match kind {
        DeclarationKind::Command {
            program,
            args,
            cwd,
            required_artifacts,
            include_ignored,
            ..
        } => (
            CheckDeclarationKind::Command {
                program: program.clone(),
                args: args.clone(),
                cwd: cwd.clone(),
            },
            required_artifacts.clone(),
            *include_ignored,
            Vec::new(),
            false,
        ),
        DeclarationKind::Manual {
            reviewers,
            allow_override,
        } => (
            CheckDeclarationKind::Manual,
            Vec::new(),
            false,
            reviewers.clone(),
            *allow_override,
        ),
    };
    CheckDeclaration {
        id: check_id.to_string(),
        kind: declaration_kind,
        path_rules: relevant_path_rules(kind),
        artifacts,
        include_ignored,
        required,
        covered_criterion_ids: covered_criterion_ids.to_vec(),
        reviewers,
        allow_override,
    }
}

/// The declaration identity of §5.3: order of rules, artifacts, covers and reviewers does
/// not matter; argument order does.
pub fn declaration_digest(
    check_id: &str,
    kind: &DeclarationKind,
    required: bool,
    covered_criterion_ids: &[String],
) -> String {
    digest::declaration_digest(&check_declaration(
        check_id,
        kind,
        required,
        covered_criterion_ids,
    ))
}

/// Recomputes a stored declaration's digest from its content (the proof evaluator compares
/// it with `Declaration::digest`, so an altered plan can never verify).
pub fn recomputed_declaration_digest(declaration: &Declaration) -> String {
    declaration_digest(
        &declaration.check_id,
        &declaration.kind,
        declaration.required,
        &declaration.covered_criterion_ids,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::{checkset_digest, criteria_digest, criterion_id};

    #[test]
    fn the_declaration_and_checkset_vectors_reproduce_through_the_aggregate_types() {
        let criterion = criterion_id(0, "Redirect test passes");
        let kind = DeclarationKind::Command {
            program: "true".into(),
            args: vec![],
            cwd: ".".into(),
            relevant_paths: vec![MissionPathRule::All],
            required_artifacts: vec![],
            include_ignored: false,
        };
        let declaration = declaration_digest(
            "redirect-test",
            &kind,
            true,
            std::slice::from_ref(&criterion),
        );
        assert_eq!(
            declaration,
            "161f7b9313e319a8bbced7efab1a8a62db6e295ef16eb165724cb2417ddd994b"
        );
        assert_eq!(
            checkset_digest(&[declaration]),
            "8fff7e44646dbe9e819d777882cf466156baaf7bdb6b45de4dcb9ccf12c1a2a3"
        );
        assert_eq!(
            criteria_digest(&[criterion]),
            "d46ea36a69606d9f736b834460fb3e2411057442d69778c16f136951c15c42b6"
        );
    }

    #[test]
    fn manual_declarations_hash_their_reviewers_and_override() {
        let criterion = criterion_id(0, "Reviewed");
        let digest_of = |reviewers: &[&str], allow_override: bool| {
            let kind = DeclarationKind::Manual {
                reviewers: reviewers.iter().map(|name| name.to_string()).collect(),
                allow_override,
            };
            declaration_digest("review", &kind, true, std::slice::from_ref(&criterion))
        };
        assert_eq!(
            digest_of(&["alice", "bob"], false),
            digest_of(&["bob", "alice"], false)
        );
        assert_ne!(digest_of(&["alice"], false), digest_of(&["alice"], true));
        assert_ne!(digest_of(&["alice"], false), digest_of(&["bob"], false));
    }
}
