//! Evidence packs end to end: handoff artifacts kept beside the proof, a pack exported
//! from a sealed mission that verifies offline, and every kind of tampering named.

use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

use crate::proof::{check, preview, session, settled, start_handoff};

fn run_in(env: &TestEnv, dir: &Path, args: &[&str]) -> CliRun {
    env.command()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("nagi runs")
        .into()
}

/// Unpacks `pack` into a fresh folder, lets `change` edit it, and packs it again as `out`.
fn repacked(pack: &Path, out: &Path, change: impl FnOnce(&Path)) {
    let unpacked = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("tar")
        .arg("-xf")
        .arg(pack)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(status.success());
    change(unpacked.path());
    let mut names: Vec<String> = std::fs::read_dir(unpacked.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let status = std::process::Command::new("tar")
        .arg("-cf")
        .arg(out)
        .arg("-C")
        .arg(unpacked.path())
        .args(&names)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Rewrites the manifest's entry for `path` to what the file now holds, as someone covering
/// their tracks would.
fn fix_manifest(dir: &Path, path: &str) {
    let bytes = std::fs::read(dir.join(path)).unwrap();
    let manifest_path = dir.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    for entry in manifest["files"].as_array_mut().unwrap() {
        if entry["path"] == path {
            entry["sha256"] = json!(nagi_mission::digest::sha256_hex(&bytes));
            entry["bytes"] = json!(bytes.len());
        }
    }
    std::fs::write(manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn handoff_artifacts_are_kept_and_an_evidence_pack_verifies_offline_and_names_tampering() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    s.repo.write("src/new.rs", "pub fn new() {}\n");
    let artifact = preview(&s.env, "claude_code");
    let sha = artifact["artifact_sha256"].as_str().unwrap().to_string();
    // A preview alone keeps nothing.
    assert_eq!(
        s.env
            .error_code("mission.handoff.get", json!({"artifact_sha256": sha})),
        "handoff_artifact_not_found"
    );
    assert_eq!(
        s.env
            .error_code("mission.handoff.get", json!({"artifact_sha256": "xyz"})),
        "invalid_params"
    );
    let started = start_handoff(&s.env, &artifact);
    assert_eq!(
        started["result"]["type"], "mission_run_started",
        "{started}"
    );
    wait_for_mission(&s.env, "m1", "the new run's proof", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["provider"] == "claude_code"
    });
    // The artifact the continuation started from is kept, exactly.
    let kept = s
        .env
        .ok("mission.handoff.get", json!({"artifact_sha256": sha}));
    assert_eq!(kept["type"], "mission_handoff_artifact");
    assert_eq!(kept["artifact"], artifact);
    let shown = s.env.nagi_ok(&["mission", "handoff", "show", &sha]);
    assert!(
        shown.stdout.contains(&sha) && shown.stdout.contains("src/new.rs"),
        "{}",
        shown.stdout
    );

    // Export, then verify the pack with no server at all.
    let work = s.env.root();
    let pack = work.join("m1-proof.tar");
    let exported = run_in(
        &s.env,
        &work,
        &["mission", "proof", "m1", "--export", "m1-proof.tar"],
    );
    assert_eq!(exported.status, 0, "{}", exported.describe());
    assert!(
        exported.stdout.contains("nagi proof verify m1-proof.tar"),
        "{}",
        exported.stdout
    );
    let again = run_in(
        &s.env,
        &work,
        &["mission", "proof", "m1", "--export", "m1-proof.tar"],
    );
    assert_eq!(
        again.status,
        2,
        "an existing file is never overwritten: {}",
        again.describe()
    );
    assert!(
        again.stderr.contains("already exists"),
        "{}",
        again.describe()
    );
    s.env.ok("server.stop", json!({}));
    let verified = s
        .env
        .nagi(&["--json", "proof", "verify", pack.to_str().unwrap()]);
    assert_eq!(verified.status, 0, "{}", verified.describe());
    let report = verified.json();
    assert_eq!(report["verified"], true, "{report}");
    assert_eq!(report["mission_id"], "m1");
    assert_eq!(report["evidence_records"], 1);
    assert_eq!(report["handoff_artifacts"], 1);
    assert_eq!(
        report["files"], 5,
        "manifest, receipt, mission, one record, one artifact"
    );
    let receipt_seal = report["seal_digest"].as_str().unwrap().to_string();
    let human = s.env.nagi(&["proof", "verify", pack.to_str().unwrap()]);
    assert!(
        human.stdout.starts_with("verified: 5 files of mission m1"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains(&receipt_seal));

    // A changed record is named by the manifest...
    let edited = work.join("edited.tar");
    repacked(&pack, &edited, |dir| {
        let path = dir.join("evidence/unit.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"exit_code\": 0", "\"exit_code\": 1")).unwrap();
    });
    let refused = s.env.nagi(&["proof", "verify", edited.to_str().unwrap()]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused.stdout.contains("NOT verified"),
        "{}",
        refused.stdout
    );
    assert!(
        refused
            .stdout
            .contains("evidence/unit.json: its SHA-256 is"),
        "{}",
        refused.stdout
    );
    // ...and by the receipt's binding when the manifest was rewritten to match.
    let covered = work.join("covered.tar");
    repacked(&pack, &covered, |dir| {
        let path = dir.join("evidence/unit.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"exit_code\": 0", "\"exit_code\": 1")).unwrap();
        fix_manifest(dir, "evidence/unit.json");
    });
    let refused = s.env.nagi(&["proof", "verify", covered.to_str().unwrap()]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused
            .stdout
            .contains("evidence/unit.json: its record digest re-derives as"),
        "{}",
        refused.stdout
    );
    assert!(!refused.stdout.contains("SHA-256"), "{}", refused.stdout);
    // A receipt whose time was moved no longer re-derives its seal.
    let moved = work.join("moved.tar");
    repacked(&pack, &moved, |dir| {
        let path = dir.join("receipt.json");
        let mut receipt: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        receipt["verified_at_millis"] = json!(receipt["verified_at_millis"].as_u64().unwrap() + 1);
        std::fs::write(&path, serde_json::to_vec_pretty(&receipt).unwrap()).unwrap();
        fix_manifest(dir, "receipt.json");
    });
    let refused = s.env.nagi(&["proof", "verify", moved.to_str().unwrap()]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused
            .stdout
            .contains("receipt.json: seal_digest does not re-derive"),
        "{}",
        refused.stdout
    );
}

#[test]
fn an_evidence_pack_needs_a_sealed_mission() {
    let s = session(
        json!([check("unit", "test", &["-f", "missing-file"], json!([]))]),
        true,
    );
    settled(&s.env);
    assert_eq!(
        s.env
            .error_code("mission.proof.export", json!({"mission_id": "m1"})),
        "proof_not_ready"
    );
    assert_eq!(
        s.env
            .error_code("mission.proof.export", json!({"mission_id": "nope"})),
        "mission_not_found"
    );
    let file = s.env.root().join("never.tar");
    let refused = s
        .env
        .nagi(&["mission", "proof", "m1", "--export", file.to_str().unwrap()]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        !file.exists(),
        "nothing is written when the export is refused"
    );
}
