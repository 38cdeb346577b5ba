//! Offline verification of an evidence pack (`nagi proof verify FILE`): every file against
//! the manifest, the receipt's digests against each other (the evidence set, subject and
//! seal re-derive from the receipt's own fields), every bound evidence record against the
//! receipt (its record digest re-derives and is the one the receipt names), and every
//! handoff artifact against its digest. Needs no server and no repository.

use std::collections::BTreeMap;

use nagi_mission::digest::{
    SealInput, artifact_sha256_of_value, evidence_set_digest, seal_digest, sha256_hex,
    subject_digest, unresolved_attention_digest,
};
use nagi_mission::model::Evidence;
use nagi_schema::evidence_pack::{EVIDENCE_PACK_FORMAT, EvidencePackManifest, MANIFEST_PATH};
use nagi_schema::proof::ProofReceiptV1;

use super::binding::{identity_digest, identity_from_wire};
use super::evidence::evidence_record_digest;

/// What a verification found. The pack verifies when `problems` is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackReport {
    pub mission_id: Option<String>,
    pub seal_digest: Option<String>,
    pub files: usize,
    pub evidence_records: usize,
    pub handoff_artifacts: usize,
    /// Each names the file (or the receipt field) that does not match.
    pub problems: Vec<String>,
}

fn parse<T: serde::de::DeserializeOwned>(
    path: &str,
    bytes: &[u8],
    problems: &mut Vec<String>,
) -> Option<T> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Some(value),
        Err(error) => {
            problems.push(format!(
                "{path}: does not read as what it should hold: {error}"
            ));
            None
        }
    }
}

/// Verifies the files of a pack, keyed by their path inside it.
pub fn verify_pack(files: &BTreeMap<String, Vec<u8>>) -> PackReport {
    let mut report = PackReport {
        files: files.len(),
        ..PackReport::default()
    };
    let problems = &mut report.problems;
    let Some(manifest_bytes) = files.get(MANIFEST_PATH) else {
        problems.push(format!(
            "{MANIFEST_PATH}: missing; this is not an evidence pack"
        ));
        return report;
    };
    let Some(manifest) = parse::<EvidencePackManifest>(MANIFEST_PATH, manifest_bytes, problems)
    else {
        return report;
    };
    if manifest.format != EVIDENCE_PACK_FORMAT {
        problems.push(format!(
            "{MANIFEST_PATH}: format {:?} is not {EVIDENCE_PACK_FORMAT:?}",
            manifest.format
        ));
    }
    report.mission_id = Some(manifest.mission_id.clone());
    check_manifest(&manifest, files, problems);
    let Some(receipt) = files
        .get("receipt.json")
        .and_then(|bytes| parse::<ProofReceiptV1>("receipt.json", bytes, problems))
    else {
        if !files.contains_key("receipt.json") {
            problems.push("receipt.json: missing".into());
        }
        return report;
    };
    report.seal_digest = Some(receipt.seal_digest.clone());
    if manifest.seal_digest != receipt.seal_digest {
        problems.push(format!(
            "{MANIFEST_PATH}: names the seal {}, the receipt is sealed {}",
            manifest.seal_digest, receipt.seal_digest
        ));
    }
    if manifest.mission_id != receipt.identity.mission_id {
        problems.push(format!(
            "{MANIFEST_PATH}: names mission {}, the receipt is of mission {}",
            manifest.mission_id, receipt.identity.mission_id
        ));
    }
    check_receipt(&receipt, problems);
    report.evidence_records = check_evidence(&receipt, files, problems);
    report.handoff_artifacts = check_artifacts(files, problems);
    report
}

fn check_manifest(
    manifest: &EvidencePackManifest,
    files: &BTreeMap<String, Vec<u8>>,
    problems: &mut Vec<String>,
) {
    for entry in &manifest.files {
        match files.get(&entry.path) {
            None => problems.push(format!(
                "{}: listed in the manifest but missing",
                entry.path
            )),
            Some(bytes) => {
                let actual = sha256_hex(bytes);
                if actual != entry.sha256 {
                    problems.push(format!(
                        "{}: its SHA-256 is {actual}, the manifest says {}",
                        entry.path, entry.sha256
                    ));
                } else if bytes.len() as u64 != entry.bytes {
                    problems.push(format!(
                        "{}: {} bytes, the manifest says {}",
                        entry.path,
                        bytes.len(),
                        entry.bytes
                    ));
                }
            }
        }
    }
    for path in files.keys() {
        if path != MANIFEST_PATH && !manifest.files.iter().any(|entry| &entry.path == path) {
            problems.push(format!("{path}: not in the manifest"));
        }
    }
}

/// The receipt's own digests re-derive from its fields (contract §3.8).
fn check_receipt(receipt: &ProofReceiptV1, problems: &mut Vec<String>) {
    let identity = identity_digest(&identity_from_wire(&receipt.identity));
    let records: Vec<(&str, &str)> = receipt
        .fresh_evidence
        .iter()
        .map(|entry| (entry.check_id.as_str(), entry.evidence_digest.as_str()))
        .collect();
    let evidence = evidence_set_digest(&records);
    if receipt.evidence_digest != evidence {
        problems
            .push("receipt.json: evidence_digest does not re-derive from fresh_evidence".into());
    }
    let attention = unresolved_attention_digest::<&str>(&[]);
    if receipt.attention_digest != attention {
        problems.push("receipt.json: attention_digest is not the empty set's".into());
    }
    let subject = subject_digest(
        &identity,
        &receipt.workspace_digest,
        &receipt.checkset_digest,
        &receipt.criteria_digest,
    );
    if receipt.subject_digest != subject {
        problems.push("receipt.json: subject_digest does not re-derive".into());
    }
    let seal = seal_digest(&SealInput {
        identity_digest: identity,
        workspace_digest: receipt.workspace_digest.clone(),
        checkset_digest: receipt.checkset_digest.clone(),
        criteria_digest: receipt.criteria_digest.clone(),
        attention_digest: attention,
        evidence_digest: evidence,
        authority_head_digest: receipt.authority_head_digest.clone(),
        lease_digest: receipt.lease_digest.clone(),
        authority_sequence: receipt.authority_sequence,
        verified_at_millis: receipt.verified_at_millis,
    });
    if receipt.seal_digest != seal {
        problems.push("receipt.json: seal_digest does not re-derive".into());
    }
}

/// Each evidence entry of the receipt has its record in `evidence/<check id>.json`, and the
/// record's digest re-derives and is the one the receipt binds. Returns how many records
/// there are.
fn check_evidence(
    receipt: &ProofReceiptV1,
    files: &BTreeMap<String, Vec<u8>>,
    problems: &mut Vec<String>,
) -> usize {
    for entry in &receipt.fresh_evidence {
        let path = format!("evidence/{}.json", entry.check_id);
        let Some(bytes) = files.get(&path) else {
            problems.push(format!(
                "{path}: missing; the receipt binds evidence of check {}",
                entry.check_id
            ));
            continue;
        };
        let Some(record) = parse::<Evidence>(&path, bytes, problems) else {
            continue;
        };
        let derived = evidence_record_digest(&record);
        if record.check_id != entry.check_id {
            problems.push(format!(
                "{path}: is the record of check {}",
                record.check_id
            ));
        } else if derived.as_deref() != Some(entry.evidence_digest.as_str()) {
            problems.push(format!(
                "{path}: its record digest re-derives as {}, the receipt binds {}",
                derived.as_deref().unwrap_or("nothing (it is no record)"),
                entry.evidence_digest
            ));
        } else if record.record_digest != derived {
            problems.push(format!("{path}: its record_digest field is not its digest"));
        }
    }
    files
        .keys()
        .filter(|path| path.starts_with("evidence/"))
        .count()
}

/// Each `handoff/<sha256>.json` hashes to its name (contract §6.4). Returns how many.
fn check_artifacts(files: &BTreeMap<String, Vec<u8>>, problems: &mut Vec<String>) -> usize {
    let mut count = 0;
    for (path, bytes) in files {
        let Some(name) = path
            .strip_prefix("handoff/")
            .and_then(|name| name.strip_suffix(".json"))
        else {
            continue;
        };
        count += 1;
        let Some(value) = parse::<serde_json::Value>(path, bytes, problems) else {
            continue;
        };
        let derived = artifact_sha256_of_value(&value);
        if derived.as_deref() != Some(name) {
            problems.push(format!(
                "{path}: the artifact hashes to {}, not to its name",
                derived.as_deref().unwrap_or("nothing (it is no artifact)")
            ));
        } else if value.get("artifact_sha256").and_then(|sha| sha.as_str()) != Some(name) {
            problems.push(format!(
                "{path}: its artifact_sha256 field is not its digest"
            ));
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(entries: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "format": EVIDENCE_PACK_FORMAT, "mission_id": "m1", "seal_digest": "s",
            "exported_at_millis": 1, "files": entries
        }))
        .unwrap()
    }

    #[test]
    fn a_pack_without_a_manifest_is_no_pack() {
        let report = verify_pack(&BTreeMap::new());
        assert_eq!(
            report.problems,
            vec!["manifest.json: missing; this is not an evidence pack"]
        );
    }

    #[test]
    fn every_file_that_differs_from_the_manifest_is_named() {
        let good = b"{}".to_vec();
        let mut files = BTreeMap::new();
        files.insert(
            MANIFEST_PATH.to_string(),
            manifest(serde_json::json!([
                {"path": "mission.json", "sha256": sha256_hex(&good), "bytes": 2},
                {"path": "evidence/a.json", "sha256": sha256_hex(b"other"), "bytes": 5},
                {"path": "receipt.json", "sha256": "0", "bytes": 1}
            ])),
        );
        files.insert("mission.json".into(), good);
        files.insert("evidence/a.json".into(), b"changed".to_vec());
        files.insert("extra.txt".into(), b"x".to_vec());
        let report = verify_pack(&files);
        let text = report.problems.join("\n");
        assert!(text.contains("evidence/a.json: its SHA-256 is"), "{text}");
        assert!(
            text.contains("receipt.json: listed in the manifest but missing"),
            "{text}"
        );
        assert!(text.contains("extra.txt: not in the manifest"), "{text}");
        assert!(!text.contains("mission.json"), "{text}");
        assert_eq!(report.mission_id.as_deref(), Some("m1"));
    }
}
