//! Canonical digests of the mission contract (contract §5.10, §6.4, §6.5).
//!
//! Every mission digest is a length-delimited, domain-separated SHA-256:
//! `SHA-256(L("mission-authority-canonical-v1") ‖ L(domain) ‖ L(f1) ‖ … ‖ L(fn))`
//! where `L(x)` is the 8-byte big-endian length of `x` followed by `x`. The
//! framing makes field boundaries unambiguous (`"ab","c"` never collides with
//! `"a","bc"`), and the domain keeps digests of different kinds apart even when
//! their fields are equal. [`CanonicalHasher`] streams fields into the hash so
//! large inputs (a workspace snapshot with 100,000 paths) never need a buffer.
//!
//! The typed builders below take plain data so that the mission state machine,
//! the proof evaluator and the handoff builder can convert their own types into
//! them; the builders sort whatever the contract says is a set, so callers can
//! pass declarations, rules and ids in any order.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Prefix of every framed mission digest.
pub const MISSION_DIGEST_PREFIX: &str = "mission-authority-canonical-v1";

/// Streams length-framed fields into SHA-256 under one domain.
///
/// Field encodings follow §5.10: strings as UTF-8, `u64` as 8 bytes
/// big-endian, `i32` as 4 bytes big-endian, `bool` and `u8` as one byte; each
/// wrapped in `L(·)`.
pub struct CanonicalHasher {
    hasher: Sha256,
}

impl CanonicalHasher {
    /// Starts a digest with the mission prefix and `domain`.
    pub fn new(domain: &str) -> CanonicalHasher {
        CanonicalHasher::with_prefix(MISSION_DIGEST_PREFIX, domain)
    }

    /// Starts a digest with another prefix (for digests that are ours, not the
    /// contract's, so they can never be confused with a mission digest).
    pub fn with_prefix(prefix: &str, domain: &str) -> CanonicalHasher {
        let mut canonical_hasher = CanonicalHasher {
            hasher: Sha256::new(),
        };
        canonical_hasher.bytes(prefix.as_bytes());
        canonical_hasher.bytes(domain.as_bytes());
        canonical_hasher
    }

    /// Appends one length-framed field of raw bytes.
    pub fn bytes(&mut self, value: &[u8]) -> &mut CanonicalHasher {
        self.hasher.update((value.len() as u64).to_be_bytes());
        self.hasher.update(value);
        self
    }

    pub fn string(&mut self, value: &str) -> &mut CanonicalHasher {
        self.bytes(value.as_bytes())
    }

    pub fn u64(&mut self, value: u64) -> &mut CanonicalHasher {
        self.bytes(&value.to_be_bytes())
    }

    pub fn i32(&mut self, value: i32) -> &mut CanonicalHasher {
        self.bytes(&value.to_be_bytes())
    }

    pub fn u8(&mut self, value: u8) -> &mut CanonicalHasher {
        self.bytes(&[value])
    }

    pub fn bool(&mut self, value: bool) -> &mut CanonicalHasher {
        self.u8(u8::from(value))
    }

    /// Appends `u64 n` followed by each string, in the order given.
    pub fn string_list<S: AsRef<str>>(&mut self, values: &[S]) -> &mut CanonicalHasher {
        self.u64(values.len() as u64);
        for value in values {
            self.string(value.as_ref());
        }
        self
    }

    /// Appends `u64 n` followed by the strings sorted bytewise.
    pub fn sorted_string_list<S: AsRef<str>>(&mut self, values: &[S]) -> &mut CanonicalHasher {
        let mut sorted: Vec<&str> = values.iter().map(AsRef::as_ref).collect();
        sorted.sort_unstable();
        self.string_list(&sorted)
    }

    /// Finishes and renders lowercase hex.
    pub fn finish(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }
}

/// Lowercase hex SHA-256 of raw bytes (no framing).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One path rule of a check declaration (already in canonical form, §5.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PathRule {
    /// Every path.
    All,
    /// Exactly this path.
    Exact { path: String },
    /// This path and everything under `prefix/` (component-wise).
    Prefix { prefix: String },
}

impl PathRule {
    /// Whether `path` (relative, `/`-separated) is covered by this rule.
    /// `prefix src` matches `src` and `src/lib.rs` but not `src2/lib.rs`.
    pub fn matches(&self, path: &str) -> bool {
        match self {
            PathRule::All => true,
            PathRule::Exact { path: exact_path } => path == exact_path,
            PathRule::Prefix { prefix } => {
                if prefix == "." {
                    return true;
                }
                match path.strip_prefix(prefix.as_str()) {
                    Some(rest) => rest.is_empty() || rest.starts_with('/'),
                    None => false,
                }
            }
        }
    }
}

/// What a declared check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckDeclarationKind {
    Command {
        program: String,
        args: Vec<String>,
        cwd: String,
    },
    Manual,
}

/// Plain-data input of [`declaration_digest`] (§5.3). The lead converts the
/// wire/store declaration into this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckDeclaration {
    pub id: String,
    pub kind: CheckDeclarationKind,
    pub path_rules: Vec<PathRule>,
    pub artifacts: Vec<String>,
    pub include_ignored: bool,
    pub required: bool,
    pub covered_criterion_ids: Vec<String>,
    pub reviewers: Vec<String>,
    pub allow_override: bool,
}

/// Criterion id: domain `mission-criterion-v1` over (u64 index, text).
pub fn criterion_id(index: u64, text: &str) -> String {
    CanonicalHasher::new("mission-criterion-v1")
        .u64(index)
        .string(text)
        .finish()
}

/// Criteria digest: domain `mission-criteria-v1` over (u64 count, sorted ids).
pub fn criteria_digest<S: AsRef<str>>(criterion_ids: &[S]) -> String {
    CanonicalHasher::new("mission-criteria-v1")
        .sorted_string_list(criterion_ids)
        .finish()
}

/// Path-rule digest: domain `mission-path-rule-v1` over (u8 tag, path).
pub fn path_rule_digest(rule: &PathRule) -> String {
    let mut hasher = CanonicalHasher::new("mission-path-rule-v1");
    match rule {
        PathRule::All => hasher.u8(0),
        PathRule::Exact { path } => hasher.u8(1).string(path),
        PathRule::Prefix { prefix } => hasher.u8(2).string(prefix),
    };
    hasher.finish()
}

/// Declaration digest: domain `mission-check-declaration-v1` (§5.3). Sets
/// (rules, artifacts, covers, reviewers) are sorted; argument order counts.
pub fn declaration_digest(declaration: &CheckDeclaration) -> String {
    let mut hasher = CanonicalHasher::new("mission-check-declaration-v1");
    hasher.string(&declaration.id);
    match &declaration.kind {
        CheckDeclarationKind::Command { program, args, cwd } => {
            hasher.u8(0).string(program).string_list(args).string(cwd);
        }
        CheckDeclarationKind::Manual => {
            hasher.u8(1);
        }
    }
    let rule_digests: Vec<String> = declaration
        .path_rules
        .iter()
        .map(path_rule_digest)
        .collect();
    hasher
        .sorted_string_list(&rule_digests)
        .sorted_string_list(&declaration.artifacts)
        .bool(declaration.include_ignored)
        .bool(declaration.required)
        .sorted_string_list(&declaration.covered_criterion_ids)
        .sorted_string_list(&declaration.reviewers)
        .bool(declaration.allow_override);
    hasher.finish()
}

/// Checkset digest: domain `mission-checkset-v1` over the sorted declaration digests.
pub fn checkset_digest<S: AsRef<str>>(declaration_digests: &[S]) -> String {
    CanonicalHasher::new("mission-checkset-v1")
        .sorted_string_list(declaration_digests)
        .finish()
}

/// `mission.configure` idempotency digest: domain
/// `mission-check-declaration-set-v1` over the sorted declaration digests.
pub fn declaration_set_digest<S: AsRef<str>>(declaration_digests: &[S]) -> String {
    CanonicalHasher::new("mission-check-declaration-set-v1")
        .sorted_string_list(declaration_digests)
        .finish()
}

/// Unresolved-attention digest: domain `mission-unresolved-attention-v1`.
pub fn unresolved_attention_digest<S: AsRef<str>>(attention_ids: &[S]) -> String {
    CanonicalHasher::new("mission-unresolved-attention-v1")
        .sorted_string_list(attention_ids)
        .finish()
}

/// What a proof is bound to (`ProofIdentityV1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofIdentity {
    pub mission_id: String,
    pub run_id: String,
    pub repository_identity: String,
    pub worktree_identity: String,
    pub base_revision: String,
}

/// Proof-identity digest: domain `mission-proof-identity-v1`.
pub fn proof_identity_digest(identity: &ProofIdentity) -> String {
    CanonicalHasher::new("mission-proof-identity-v1")
        .string(&identity.mission_id)
        .string(&identity.run_id)
        .string(&identity.repository_identity)
        .string(&identity.worktree_identity)
        .string(&identity.base_revision)
        .finish()
}

/// "What was proven": domain `mission-verified-proof-subject-v1`.
pub fn subject_digest(
    identity_digest: &str,
    workspace_digest: &str,
    checkset_digest: &str,
    criteria_digest: &str,
) -> String {
    CanonicalHasher::new("mission-verified-proof-subject-v1")
        .string(identity_digest)
        .string(workspace_digest)
        .string(checkset_digest)
        .string(criteria_digest)
        .finish()
}

/// Inputs of the seal digest ("this exact verification"); digests as hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealInput {
    pub identity_digest: String,
    pub workspace_digest: String,
    pub checkset_digest: String,
    pub criteria_digest: String,
    pub attention_digest: String,
    pub evidence_digest: String,
    pub authority_head_digest: String,
    pub lease_digest: String,
    pub authority_sequence: u64,
    pub verified_at_millis: u64,
}

/// Seal digest: domain `mission-verified-proof-seal-v1`.
pub fn seal_digest(seal: &SealInput) -> String {
    CanonicalHasher::new("mission-verified-proof-seal-v1")
        .string(&seal.identity_digest)
        .string(&seal.workspace_digest)
        .string(&seal.checkset_digest)
        .string(&seal.criteria_digest)
        .string(&seal.attention_digest)
        .string(&seal.evidence_digest)
        .string(&seal.authority_head_digest)
        .string(&seal.lease_digest)
        .u64(seal.authority_sequence)
        .u64(seal.verified_at_millis)
        .finish()
}

/// Evidence-set digest: domain `mission-evidence-set-v1` over `u64 n`, then per
/// check id (sorted bytewise): check id, record digest. Input pairs are
/// `(check_id, record_digest)` in any order.
pub fn evidence_set_digest<S: AsRef<str>, T: AsRef<str>>(records: &[(S, T)]) -> String {
    let mut sorted: Vec<(&str, &str)> = records
        .iter()
        .map(|(check_id, digest)| (check_id.as_ref(), digest.as_ref()))
        .collect();
    sorted.sort_unstable();
    let mut hasher = CanonicalHasher::new("mission-evidence-set-v1");
    hasher.u64(sorted.len() as u64);
    for (check_id, record_digest) in sorted {
        hasher.string(check_id).string(record_digest);
    }
    hasher.finish()
}

/// Derived runtime id (not length-framed): `domain + ":" + hex(SHA-256(
/// "mission-runtime-id-v1\0" ‖ domain ‖ for each value "\0" ‖ value))`.
/// Used for attention ids (`attention`, [run id, request audit id]) and
/// internal claim/event ids.
pub fn stable_runtime_id<S: AsRef<str>>(domain: &str, values: &[S]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"mission-runtime-id-v1\0");
    hasher.update(domain.as_bytes());
    for value in values {
        hasher.update(b"\0");
        hasher.update(value.as_ref().as_bytes());
    }
    format!("{domain}:{}", hex::encode(hasher.finalize()))
}

/// Provider request audit id of a JSON-RPC id: `number:<n>` for numbers,
/// `string:<s>` for strings (the two never collide); `None` for other shapes.
pub fn provider_request_audit_id(json_rpc_id: &serde_json::Value) -> Option<String> {
    match json_rpc_id {
        serde_json::Value::Number(number) => Some(format!("number:{number}")),
        serde_json::Value::String(text) => Some(format!("string:{text}")),
        _ => None,
    }
}

/// §6.5 suggested run id: `handoff-<slug>-<first 12 hex of SHA-256(
/// "nagi-mission-handoff-run-v1" ‖ mission_id ‖ u64-BE(updated_at) ‖ slug ‖
/// workspace_digest)>` (plain concatenation). `slug` is `codex`, `claude`,
/// `opencode` or `acp` for the target provider.
pub fn suggested_handoff_run_id(
    mission_id: &str,
    mission_updated_at_millis: u64,
    target_slug: &str,
    workspace_digest: &str,
) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"nagi-mission-handoff-run-v1");
    hasher.update(mission_id.as_bytes());
    hasher.update(mission_updated_at_millis.to_be_bytes());
    hasher.update(target_slug.as_bytes());
    hasher.update(workspace_digest.as_bytes());
    let full = hex::encode(hasher.finalize());
    format!("handoff-{target_slug}-{}", &full[..12])
}

/// §6.4: lowercase hex SHA-256 of the artifact's compact JSON bytes (the
/// caller serialised it with `artifact_sha256` set to `""`).
pub fn artifact_sha256(compact_json: &[u8]) -> String {
    sha256_hex(compact_json)
}

/// §6.4 on a JSON value whose object keys are already in contract order
/// (serde_json with `preserve_order`): sets `artifact_sha256` to `""`,
/// serialises compactly and hashes. Returns `None` if the value is not an
/// object with an `artifact_sha256` key.
pub fn artifact_sha256_of_value(artifact: &serde_json::Value) -> Option<String> {
    let mut blanked = artifact.clone();
    let slot = blanked.as_object_mut()?.get_mut("artifact_sha256")?;
    *slot = serde_json::Value::String(String::new());
    let bytes = serde_json::to_vec(&blanked).ok()?;
    Some(artifact_sha256(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirect_declaration() -> CheckDeclaration {
        CheckDeclaration {
            id: "redirect-test".to_owned(),
            kind: CheckDeclarationKind::Command {
                program: "true".to_owned(),
                args: vec![],
                cwd: ".".to_owned(),
            },
            path_rules: vec![PathRule::All],
            artifacts: vec![],
            include_ignored: false,
            required: true,
            covered_criterion_ids: vec![criterion_id(0, "Redirect test passes")],
            reviewers: vec![],
            allow_override: false,
        }
    }

    #[test]
    fn criterion_ids_match_published_vectors() {
        assert_eq!(
            criterion_id(0, "Redirect test passes"),
            "d47bab29c48399fb5e9864cea6c2a9b2f2ec8687527116a09fcb5f7f522e61db"
        );
        assert_eq!(
            criterion_id(0, "The redirect test passes"),
            "e939c6c76f6361e5b099fa9401b2315929cc1ef23f70d049510946722647b28b"
        );
        assert_eq!(
            criterion_id(1, "The login flow has no regression"),
            "997f65b84cf2fa8ffde6837741fbb82fb790a684fada116052190bf978cddcfa"
        );
    }

    #[test]
    fn declaration_checkset_and_criteria_match_published_vectors() {
        let declaration_digest_hex = declaration_digest(&redirect_declaration());
        assert_eq!(
            declaration_digest_hex,
            "161f7b9313e319a8bbced7efab1a8a62db6e295ef16eb165724cb2417ddd994b"
        );
        assert_eq!(
            checkset_digest(&[declaration_digest_hex]),
            "8fff7e44646dbe9e819d777882cf466156baaf7bdb6b45de4dcb9ccf12c1a2a3"
        );
        assert_eq!(
            criteria_digest(&[criterion_id(0, "Redirect test passes")]),
            "d46ea36a69606d9f736b834460fb3e2411057442d69778c16f136951c15c42b6"
        );
    }

    #[test]
    fn empty_attention_digest_matches_published_vector() {
        assert_eq!(
            unresolved_attention_digest::<&str>(&[]),
            "3fee3088a6bac012817a1e32b01acbc8895f78c403506121151fbaca0c88dbab"
        );
    }

    #[test]
    fn attention_runtime_id_matches_published_example() {
        assert_eq!(
            stable_runtime_id("attention", &["run-respond", "number:41"]),
            "attention:0b8d9b79d1b1b19585f1b1ac99631e0dcd9f5085eb08fd0c31490e91aec29b15"
        );
        assert_eq!(
            provider_request_audit_id(&serde_json::json!(41)).as_deref(),
            Some("number:41")
        );
        assert_eq!(
            provider_request_audit_id(&serde_json::json!("41")).as_deref(),
            Some("string:41")
        );
    }

    #[test]
    fn suggested_run_ids_match_published_examples() {
        assert_eq!(
            suggested_handoff_run_id("mission-handoff", 42, "claude", &"c".repeat(64)),
            "handoff-claude-c2badee0ff4f"
        );
        assert_eq!(
            suggested_handoff_run_id("mission-handoff", 42, "claude", &"a".repeat(64)),
            "handoff-claude-cddfb9e2f410"
        );
    }

    #[test]
    fn artifact_digest_matches_published_vector() {
        let artifact = serde_json::json!({
            "schema_version": 1,
            "artifact_sha256": "will be blanked",
            "generated_at_millis": 100,
            "mission_id": "mission-handoff",
            "source_run_id": "run-codex",
            "suggested_run_id": "handoff-claude-c2badee0ff4f",
            "source_provider": "codex",
            "target_provider": "claude_code",
            "repository_path": "/repo",
            "worktree_path": "/repo",
            "base_revision": "a".repeat(40),
            "head_revision": "b".repeat(40),
            "objective": "Fix login",
            "acceptance_criteria": ["Redirect test passes"],
            "diff": {
                "workspace_digest": "c".repeat(64),
                "dirty": true,
                "changed_paths": ["src/lib.rs"],
                "stat": " src/lib.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"
            },
            "decisions": [],
            "checks": [{
                "check_id": "redirect-test",
                "kind": "command",
                "required": true,
                "covered_criterion_ids": [criterion_id(0, "Redirect test passes")],
                "status": "missing"
            }],
            "selected_logs": [],
            "warnings": ["w1", "w2", "w3"]
        });
        assert_eq!(
            artifact_sha256_of_value(&artifact).as_deref(),
            Some("e6198507e9979a931ecba061fa89f0daeb282d0851704f97407112841f55eb29")
        );
        assert_eq!(artifact_sha256_of_value(&serde_json::json!({"a": 1})), None);
    }

    #[test]
    fn set_order_does_not_matter_but_argument_order_does() {
        let mut first = redirect_declaration();
        first.path_rules = vec![
            PathRule::Prefix {
                prefix: "src".into(),
            },
            PathRule::Exact {
                path: "Cargo.toml".into(),
            },
        ];
        first.artifacts = vec!["b.json".into(), "a.json".into()];
        let mut reordered = first.clone();
        reordered.path_rules.reverse();
        reordered.artifacts.reverse();
        assert_eq!(declaration_digest(&first), declaration_digest(&reordered));

        let with_args = |args: &[&str]| {
            let mut declaration = redirect_declaration();
            declaration.kind = CheckDeclarationKind::Command {
                program: "cargo".into(),
                args: args.iter().map(|arg| arg.to_string()).collect(),
                cwd: ".".into(),
            };
            declaration_digest(&declaration)
        };
        assert_ne!(with_args(&["test", "--lib"]), with_args(&["--lib", "test"]));
        assert_ne!(checkset_digest(&["x"]), declaration_set_digest(&["x"]));
    }

    #[test]
    fn evidence_set_and_seal_depend_on_every_field() {
        let forward = evidence_set_digest(&[("a", "1"), ("b", "2")]);
        let backward = evidence_set_digest(&[("b", "2"), ("a", "1")]);
        assert_eq!(forward, backward);
        assert_ne!(forward, evidence_set_digest(&[("a", "2"), ("b", "1")]));

        let seal = SealInput {
            identity_digest: "i".into(),
            workspace_digest: "w".into(),
            checkset_digest: "c".into(),
            criteria_digest: "k".into(),
            attention_digest: "t".into(),
            evidence_digest: "e".into(),
            authority_head_digest: "h".into(),
            lease_digest: "l".into(),
            authority_sequence: 7,
            verified_at_millis: 9,
        };
        let mut later = seal.clone();
        later.verified_at_millis = 10;
        assert_ne!(seal_digest(&seal), seal_digest(&later));
        let identity = ProofIdentity {
            mission_id: "m".into(),
            run_id: "r".into(),
            repository_identity: "/repo".into(),
            worktree_identity: "/repo".into(),
            base_revision: "a".repeat(40),
        };
        let identity_digest = proof_identity_digest(&identity);
        assert_ne!(
            subject_digest(&identity_digest, "w1", "c", "k"),
            subject_digest(&identity_digest, "w2", "c", "k")
        );
    }

    #[test]
    fn framing_separates_field_boundaries() {
        let joined = CanonicalHasher::new("d").string("ab").string("c").finish();
        let split = CanonicalHasher::new("d").string("a").string("bc").finish();
        assert_ne!(joined, split);
    }

    #[test]
    fn prefix_rules_match_component_wise() {
        let rule = PathRule::Prefix {
            prefix: "src".into(),
        };
        assert!(rule.matches("src"));
        assert!(rule.matches("src/lib.rs"));
        assert!(!rule.matches("src2/lib.rs"));
        assert!(!rule.matches("srclib.rs"));
        assert!(PathRule::Prefix { prefix: ".".into() }.matches("anything"));
        assert!(PathRule::Exact { path: "a/b".into() }.matches("a/b"));
        assert!(!PathRule::Exact { path: "a/b".into() }.matches("a/b/c"));
    }
}
