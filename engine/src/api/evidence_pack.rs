//! `mission.handoff.get` (a kept handoff artifact by its digest) and `mission.proof.export`
//! (the files of an evidence pack). Both only read.

use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::digest::sha256_hex;
use nagi_schema::evidence_pack::{
    EvidencePackFile, MissionHandoffGetParams, MissionProofExportParams,
};
use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::results::ResponseResult;
use nagi_store::HANDOFF_ARTIFACT_BLOB;

use crate::engine::Engine;
use crate::errors::EngineError;

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

pub fn handoff_get(
    engine: &Arc<Engine>,
    params: MissionHandoffGetParams,
) -> Result<ResponseResult, EngineError> {
    if !is_sha256_hex(&params.artifact_sha256) {
        return Err(EngineError::InvalidParams(format!(
            "artifact_sha256 must be 64 lowercase hex digits, got {:?}",
            params.artifact_sha256
        )));
    }
    let body = engine
        .missions
        .read(|reader| reader.blob_of_kind(&params.artifact_sha256, HANDOFF_ARTIFACT_BLOB))?
        .ok_or_else(|| {
            MissionError::HandoffArtifactNotFound(format!(
                "no handoff artifact {} is kept; an artifact is kept once a continuation starts from it (mission.handoff.start), and a preview alone keeps nothing",
                params.artifact_sha256
            ))
        })?;
    let artifact: MissionHandoffArtifactV1 = serde_json::from_slice(&body).map_err(|error| {
        MissionError::Runtime(format!(
            "the kept artifact {} does not read back: {error}",
            params.artifact_sha256
        ))
    })?;
    Ok(ResponseResult::MissionHandoffArtifact { artifact })
}

fn file(path: String, content: String) -> EvidencePackFile {
    EvidencePackFile {
        sha256: sha256_hex(content.as_bytes()),
        path,
        content,
    }
}

fn pretty<T: serde::Serialize>(what: &str, value: &T) -> Result<String, EngineError> {
    serde_json::to_string_pretty(value)
        .map(|text| text + "\n")
        .map_err(|error| MissionError::Runtime(format!("cannot write {what}: {error}")).into())
}

/// The receipt (checked as `mission.proof.get` checks it), the evidence record of every
/// check it binds, every kept handoff artifact of the mission, and the mission's view.
pub fn proof_export(
    engine: &Arc<Engine>,
    params: MissionProofExportParams,
) -> Result<ResponseResult, EngineError> {
    let mission = super::missions::load_checked(engine, &params.mission_id)?;
    let receipt = nagi_proof::receipt::proof_receipt(&mission)?;
    let mut files = vec![
        file("receipt.json".into(), pretty("the receipt", &receipt)?),
        file(
            "mission.json".into(),
            pretty("the mission", &engine.view(&mission))?,
        ),
    ];
    for entry in &receipt.fresh_evidence {
        let record = mission.evidence.get(&entry.check_id).ok_or_else(|| {
            MissionError::ProofBindingMismatch(format!(
                "the receipt binds evidence of check {} that the mission does not hold",
                entry.check_id
            ))
        })?;
        files.push(file(
            format!("evidence/{}.json", entry.check_id),
            pretty("an evidence record", record)?,
        ));
    }
    let artifacts = engine
        .missions
        .read(|reader| reader.mission_blobs(mission.mission_id.as_str(), HANDOFF_ARTIFACT_BLOB))?;
    for (digest, body) in artifacts {
        let content = String::from_utf8(body).map_err(|_| {
            MissionError::Runtime(format!("the kept artifact {digest} is not UTF-8"))
        })?;
        files.push(file(format!("handoff/{digest}.json"), content));
    }
    Ok(ResponseResult::MissionEvidencePack {
        mission_id: mission.mission_id.to_string(),
        seal_digest: receipt.seal_digest.clone(),
        files,
    })
}
