//! The length-delimited, domain-separated SHA-256 of MISSIONS.md §5.10, for the digests the
//! mission core itself needs (criterion ids, declaration identity, plan identity).

use nagi_schema::mission::MissionPathRule;
use sha2::{Digest, Sha256};

use super::model::DeclarationKind;

pub enum Field<'a> {
    Text(&'a str),
    U64(u64),
    Bool(bool),
    U8(u8),
}

const PREFIX: &str = "mission-authority-canonical-v1";

fn push_framed(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_be_bytes());
    hasher.update(bytes);
}

/// `SHA-256(L(prefix) ‖ L(domain) ‖ L(f1) ‖ … ‖ L(fn))` as lowercase hex.
pub fn canonical_digest(domain: &str, fields: &[Field<'_>]) -> String {
    let mut hasher = Sha256::new();
    push_framed(&mut hasher, PREFIX.as_bytes());
    push_framed(&mut hasher, domain.as_bytes());
    for field in fields {
        match field {
            Field::Text(text) => push_framed(&mut hasher, text.as_bytes()),
            Field::U64(value) => push_framed(&mut hasher, &value.to_be_bytes()),
            Field::Bool(value) => push_framed(&mut hasher, &[*value as u8]),
            Field::U8(value) => push_framed(&mut hasher, &[*value]),
        }
    }
    hex::encode(hasher.finalize())
}

pub fn criterion_id(index: u64, text: &str) -> String {
    canonical_digest("mission-criterion-v1", &[Field::U64(index), Field::Text(text)])
}

/// Digest of a list of digests after sorting (`checkset`, `declaration-set`,
/// `criteria`, `unresolved-attention`).
pub fn sorted_set_digest(domain: &str, items: &[String]) -> String {
    let mut sorted: Vec<&str> = items.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let mut fields = vec![Field::U64(sorted.len() as u64)];
    fields.extend(sorted.into_iter().map(Field::Text));
    canonical_digest(domain, &fields)
}

pub fn path_rule_digest(rule: &MissionPathRule) -> String {
    match rule {
        MissionPathRule::All => canonical_digest("mission-path-rule-v1", &[Field::U8(0)]),
        MissionPathRule::Exact { path } => canonical_digest("mission-path-rule-v1", &[Field::U8(1), Field::Text(path)]),
        MissionPathRule::Prefix { prefix } => canonical_digest("mission-path-rule-v1", &[Field::U8(2), Field::Text(prefix)]),
    }
}

fn push_sorted<'a>(fields: &mut Vec<Field<'a>>, items: &'a [String]) {
    let mut sorted: Vec<&str> = items.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    fields.push(Field::U64(sorted.len() as u64));
    fields.extend(sorted.into_iter().map(Field::Text));
}

/// The declaration identity of §5.3: order of rules, artifacts, covers and reviewers does
/// not matter; argument order does.
pub fn declaration_digest(check_id: &str, kind: &DeclarationKind, required: bool, covered_criterion_ids: &[String]) -> String {
    let no_strings: Vec<String> = Vec::new();
    let (rule_digests, artifacts, include_ignored, reviewers, allow_override) = match kind {
        DeclarationKind::Command { relevant_paths, required_artifacts, include_ignored, .. } => {
            (relevant_paths.iter().map(path_rule_digest).collect::<Vec<_>>(), required_artifacts, *include_ignored, &no_strings, false)
        }
        DeclarationKind::Manual { reviewers, allow_override } => (Vec::new(), &no_strings, false, reviewers, *allow_override),
    };
    let mut fields = vec![Field::Text(check_id)];
    match kind {
        DeclarationKind::Command { program, args, cwd, .. } => {
            fields.push(Field::U8(0));
            fields.push(Field::Text(program));
            fields.push(Field::U64(args.len() as u64));
            fields.extend(args.iter().map(|arg| Field::Text(arg)));
            fields.push(Field::Text(cwd));
        }
        DeclarationKind::Manual { .. } => fields.push(Field::U8(1)),
    }
    push_sorted(&mut fields, &rule_digests);
    push_sorted(&mut fields, artifacts);
    fields.push(Field::Bool(include_ignored));
    fields.push(Field::Bool(required));
    push_sorted(&mut fields, covered_criterion_ids);
    push_sorted(&mut fields, reviewers);
    fields.push(Field::Bool(allow_override));
    canonical_digest("mission-check-declaration-v1", &fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declaration_and_checkset_vectors_reproduce() {
        let criterion = criterion_id(0, "Redirect test passes");
        let kind = DeclarationKind::Command {
            program: "true".into(),
            args: vec![],
            cwd: ".".into(),
            relevant_paths: vec![MissionPathRule::All],
            required_artifacts: vec![],
            include_ignored: false,
        };
        let declaration = declaration_digest("redirect-test", &kind, true, std::slice::from_ref(&criterion));
        assert_eq!(declaration, "161f7b9313e319a8bbced7efab1a8a62db6e295ef16eb165724cb2417ddd994b");
        assert_eq!(
            sorted_set_digest("mission-checkset-v1", &[declaration]),
            "8fff7e44646dbe9e819d777882cf466156baaf7bdb6b45de4dcb9ccf12c1a2a3"
        );
        assert_eq!(
            sorted_set_digest("mission-criteria-v1", &[criterion]),
            "d46ea36a69606d9f736b834460fb3e2411057442d69778c16f136951c15c42b6"
        );
    }

    #[test]
    fn criterion_ids_match_the_contract_vectors() {
        assert_eq!(criterion_id(0, "Redirect test passes"), "d47bab29c48399fb5e9864cea6c2a9b2f2ec8687527116a09fcb5f7f522e61db");
        assert_eq!(criterion_id(0, "The redirect test passes"), "e939c6c76f6361e5b099fa9401b2315929cc1ef23f70d049510946722647b28b");
        assert_eq!(
            criterion_id(1, "The login flow has no regression"),
            "997f65b84cf2fa8ffde6837741fbb82fb790a684fada116052190bf978cddcfa"
        );
        assert_eq!(
            sorted_set_digest("mission-unresolved-attention-v1", &[]),
            "3fee3088a6bac012817a1e32b01acbc8895f78c403506121151fbaca0c88dbab"
        );
    }
}
