//! Handoff artifacts kept by digest, and evidence packs (nagi extensions).
//!
//! Every handoff artifact a continuation started from is stored content-addressed, in the
//! same transaction as the continuation, and `mission.handoff.get` returns it by its
//! `artifact_sha256`. `mission.proof.export` gathers what proves a sealed mission — the
//! checked receipt, the evidence record of every check it binds, the mission's handoff
//! artifacts and the mission's view — as files with their SHA-256, which `nagi mission
//! proof ID --export FILE` writes as a tar archive with a manifest, and `nagi proof verify
//! FILE` checks offline.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mission::ID_PATTERN;

/// The `format` of an evidence pack's manifest.
pub const EVIDENCE_PACK_FORMAT: &str = "nagi-evidence-pack-v1";

/// The manifest's path inside a pack.
pub const MANIFEST_PATH: &str = "manifest.json";

/// `mission.handoff.get`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffGetParams {
    /// The lowercase hex SHA-256 of the artifact (as `mission.handoff.preview` gave it).
    #[schemars(length(min = 64, max = 64), regex(pattern = r"^[0-9a-f]{64}$"))]
    pub artifact_sha256: String,
}

/// `mission.proof.export`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionProofExportParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
}

/// One file of an evidence pack: UTF-8 JSON text and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidencePackFile {
    /// A relative path: `receipt.json`, `mission.json`, `evidence/<check id>.json`,
    /// `handoff/<artifact sha256>.json`.
    pub path: String,
    pub sha256: String,
    pub content: String,
}

/// One entry of a pack's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidencePackEntry {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// `manifest.json` of an evidence pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidencePackManifest {
    /// [`EVIDENCE_PACK_FORMAT`].
    pub format: String,
    pub mission_id: String,
    /// The receipt's seal digest, for a reader who only looks here.
    pub seal_digest: String,
    pub exported_at_millis: u64,
    pub files: Vec<EvidencePackEntry>,
}
