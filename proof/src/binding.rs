//! What a proof is bound to: the run's identity (§3.8 `ProofIdentityV1`), the authority
//! head the evaluation read (the last durable event), and the worktree lease held while
//! verifying. The last two are opaque to clients; their digests only have to change whenever
//! the underlying state changes, so each is a framed digest of everything that identifies it.

use nagi_schema::proof::ProofIdentityV1;

use super::error::ProofError;
use nagi_mission::digest::{CanonicalHasher, ProofIdentity, proof_identity_digest};
use nagi_mission::model::Mission;

/// The identity of the mission's current run (§5.4 step 1): mission id, run id, the
/// mission's canonical repository path, the run's canonical worktree path and its base
/// revision, which must be a full commit id.
pub fn current_identity(mission: &Mission) -> Result<ProofIdentity, ProofError> {
    let run = mission.run.as_ref().ok_or_else(|| ProofError::NoRun {
        mission_id: mission.mission_id.to_string(),
    })?;
    if !is_full_commit_id(&run.base_revision) {
        return Err(ProofError::InvalidBaseRevision {
            run_id: run.run_id.to_string(),
            base_revision: run.base_revision.clone(),
        });
    }
    Ok(ProofIdentity {
        mission_id: mission.mission_id.to_string(),
        run_id: run.run_id.to_string(),
        repository_identity: mission.repository_path.clone(),
        worktree_identity: run.worktree_path.clone(),
        base_revision: run.base_revision.clone(),
    })
}

/// 40 or 64 hex digits.
pub fn is_full_commit_id(revision: &str) -> bool {
    matches!(revision.len(), 40 | 64) && revision.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// The digest every evidence record and receipt of this identity carries.
pub fn identity_digest(identity: &ProofIdentity) -> String {
    proof_identity_digest(identity)
}

pub fn identity_to_wire(identity: &ProofIdentity) -> ProofIdentityV1 {
    ProofIdentityV1 {
        mission_id: identity.mission_id.clone(),
        run_id: identity.run_id.clone(),
        repository_identity: identity.repository_identity.clone(),
        worktree_identity: identity.worktree_identity.clone(),
        base_revision: identity.base_revision.clone(),
    }
}

pub fn identity_from_wire(identity: &ProofIdentityV1) -> ProofIdentity {
    ProofIdentity {
        mission_id: identity.mission_id.clone(),
        run_id: identity.run_id.clone(),
        repository_identity: identity.repository_identity.clone(),
        worktree_identity: identity.worktree_identity.clone(),
        base_revision: identity.base_revision.clone(),
    }
}

/// The durable head an evaluation read: the sequence of the last committed event and the
/// digest of that event's stored payload. The store re-checks both when the seal commits,
/// so no event can slip in between evaluation and seal (§5.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityHead {
    /// Sequence of the last committed event (≥ 1 for anything sealable).
    pub sequence: u64,
    /// Digest of that event's stored payload, as the store keeps it.
    pub payload_digest: String,
}

impl AuthorityHead {
    /// `authority_head_digest` of the receipt.
    pub fn digest(&self) -> String {
        CanonicalHasher::new("mission-authority-head-v1")
            .u64(self.sequence)
            .string(&self.payload_digest)
            .finish()
    }
}

/// The worktree lease held while the checks ran and the proof was evaluated (§10). The nonce
/// is random per claim, so a released and re-claimed lease has another digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeLease {
    pub mission_id: String,
    pub run_id: String,
    /// Canonical checkout root the lease covers.
    pub checkout_root: String,
    /// Random value chosen when the lease was claimed.
    pub claim_nonce: String,
}

impl WorktreeLease {
    /// `lease_digest` of the receipt.
    pub fn digest(&self) -> String {
        CanonicalHasher::new("mission-worktree-lease-v1")
            .string(&self.mission_id)
            .string(&self.run_id)
            .string(&self.checkout_root)
            .string(&self.claim_nonce)
            .finish()
    }

    /// Why the lease does not cover this identity (§5.7: scoped to mission, run and
    /// checkout root), if it does not.
    pub fn scope_problem(&self, identity: &ProofIdentity) -> Option<String> {
        if self.mission_id != identity.mission_id || self.run_id != identity.run_id {
            return Some(format!(
                "the worktree lease belongs to mission {} run {}, not to mission {} run {}",
                self.mission_id, self.run_id, identity.mission_id, identity.run_id
            ));
        }
        if self.checkout_root != identity.worktree_identity {
            return Some(format!(
                "the worktree lease covers {}, but the run works in {}",
                self.checkout_root, identity.worktree_identity
            ));
        }
        if self.claim_nonce.is_empty() {
            return Some("the worktree lease has no claim nonce".to_string());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> ProofIdentity {
        ProofIdentity {
            mission_id: "m".into(),
            run_id: "r".into(),
            repository_identity: "/repo".into(),
            worktree_identity: "/repo".into(),
            base_revision: "a".repeat(40),
        }
    }

    #[test]
    fn head_and_lease_digests_change_with_every_part() {
        let head = AuthorityHead {
            sequence: 7,
            payload_digest: "p".into(),
        };
        assert_ne!(
            head.digest(),
            AuthorityHead {
                sequence: 8,
                ..head.clone()
            }
            .digest()
        );
        assert_ne!(
            head.digest(),
            AuthorityHead {
                payload_digest: "q".into(),
                ..head.clone()
            }
            .digest()
        );
        let lease = WorktreeLease {
            mission_id: "m".into(),
            run_id: "r".into(),
            checkout_root: "/repo".into(),
            claim_nonce: "n1".into(),
        };
        assert_ne!(
            lease.digest(),
            WorktreeLease {
                claim_nonce: "n2".into(),
                ..lease.clone()
            }
            .digest()
        );
        assert_eq!(lease.digest().len(), 64);
    }

    #[test]
    fn a_lease_must_cover_the_identity() {
        let lease = WorktreeLease {
            mission_id: "m".into(),
            run_id: "r".into(),
            checkout_root: "/repo".into(),
            claim_nonce: "n".into(),
        };
        assert_eq!(lease.scope_problem(&identity()), None);
        let other_run = WorktreeLease {
            run_id: "r2".into(),
            ..lease.clone()
        };
        assert!(
            other_run
                .scope_problem(&identity())
                .unwrap()
                .contains("run r2")
        );
        let other_root = WorktreeLease {
            checkout_root: "/elsewhere".into(),
            ..lease
        };
        assert!(
            other_root
                .scope_problem(&identity())
                .unwrap()
                .contains("/elsewhere")
        );
    }

    #[test]
    fn base_revisions_must_be_full_commit_ids() {
        assert!(is_full_commit_id(&"a".repeat(40)));
        assert!(is_full_commit_id(&"F".repeat(64)));
        assert!(!is_full_commit_id("abc123"));
        assert!(!is_full_commit_id(&"g".repeat(40)));
    }
}
