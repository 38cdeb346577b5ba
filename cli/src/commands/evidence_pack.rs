//! Evidence packs and kept handoff artifacts: `nagi mission proof ID --export FILE` writes
//! what `mission.proof.export` gives as a tar archive led by `manifest.json`; `nagi proof
//! verify FILE` checks such a file offline (`nagi_proof::pack`); `nagi mission handoff show
//! SHA` prints a kept artifact.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Component, Path};

use clap::Subcommand;
use nagi_schema::evidence_pack::{
    EVIDENCE_PACK_FORMAT, EvidencePackEntry, EvidencePackFile, EvidencePackManifest, MANIFEST_PATH,
};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK, EXIT_REMOTE_ERROR};

#[derive(Debug, Subcommand)]
pub enum ProofCommand {
    /// Check an evidence pack (`nagi mission proof ID --export FILE`) offline: every file
    /// against the manifest, the receipt's seal, each evidence record and handoff artifact
    /// against the digests the receipt and their names bind. Exit 1 names what differs.
    Verify {
        /// The pack (a tar archive).
        file: String,
    },
}

/// A pack's files by their path inside it.
type PackFiles = BTreeMap<String, Vec<u8>>;

/// Largest pack `verify` reads, and largest file in it.
const MAX_PACK_BYTES: u64 = 512 * 1024 * 1024;

fn append(
    builder: &mut tar::Builder<std::fs::File>,
    path: &str,
    bytes: &[u8],
    mtime: u64,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    builder.append_data(&mut header, path, bytes)
}

/// Writes the pack to `file`, which must not exist yet: a temporary file beside it is
/// renamed into place once complete, so a failed export leaves nothing half-written.
pub fn export(context: &Context, mission_id: &str, file: &Path) -> CommandResult {
    if std::fs::symlink_metadata(file).is_ok() {
        return Err(CliError::Usage(format!(
            "{} already exists; remove it or choose another name",
            file.display()
        )));
    }
    let result = context.request("mission.proof.export", json!({"mission_id": mission_id}))?;
    let files: Vec<EvidencePackFile> = serde_json::from_value(result["files"].clone())
        .map_err(|error| CliError::Usage(format!("the server's pack does not read: {error}")))?;
    let exported_at_millis = nagi_mission::clock::now_millis();
    let manifest = EvidencePackManifest {
        format: EVIDENCE_PACK_FORMAT.into(),
        mission_id: mission_id.to_string(),
        seal_digest: result["seal_digest"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        exported_at_millis,
        files: files
            .iter()
            .map(|file| EvidencePackEntry {
                path: file.path.clone(),
                sha256: file.sha256.clone(),
                bytes: file.content.len() as u64,
            })
            .collect(),
    };
    let manifest_text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    let directory = file
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temporary = tempfile::NamedTempFile::new_in(directory).map_err(|error| {
        CliError::Usage(format!("cannot write in {}: {error}", directory.display()))
    })?;
    let written = (|| -> std::io::Result<()> {
        let mut builder = tar::Builder::new(temporary.as_file().try_clone()?);
        let mtime = exported_at_millis / 1000;
        append(&mut builder, MANIFEST_PATH, manifest_text.as_bytes(), mtime)?;
        for pack_file in &files {
            append(
                &mut builder,
                &pack_file.path,
                pack_file.content.as_bytes(),
                mtime,
            )?;
        }
        builder.into_inner()?.sync_all()
    })();
    written.map_err(|error| CliError::Usage(format!("cannot write the pack: {error}")))?;
    temporary.persist_noclobber(file).map_err(|error| {
        CliError::Usage(format!(
            "cannot put the pack at {}: {}",
            file.display(),
            error.error
        ))
    })?;
    let summary = json!({
        "file": file.display().to_string(),
        "mission_id": mission_id,
        "seal_digest": manifest.seal_digest,
        "files": manifest.files.len() + 1,
    });
    context.print(&summary, |_| {
        format!(
            "wrote {} ({} files, seal {}); check it anywhere with: nagi proof verify {}\n",
            file.display(),
            manifest.files.len() + 1,
            manifest.seal_digest,
            file.display()
        )
    })
}

/// Reads every regular file of a tar archive. An entry that could escape a folder it is
/// unpacked into (absolute, or with `..`) or is not a regular file is a problem, not read.
fn read_pack(file: &str) -> Result<(PackFiles, Vec<String>), CliError> {
    let opened = std::fs::File::open(file)
        .map_err(|error| CliError::Usage(format!("cannot open {file}: {error}")))?;
    let mut archive = tar::Archive::new(opened.take(MAX_PACK_BYTES));
    let mut files = BTreeMap::new();
    let mut problems = Vec::new();
    let entries = archive
        .entries()
        .map_err(|error| CliError::Usage(format!("{file} is not a tar archive: {error}")))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|error| CliError::Usage(format!("{file} does not read: {error}")))?;
        let path = entry
            .path()
            .map(|path| path.into_owned())
            .map_err(|error| CliError::Usage(format!("{file}: an entry's name: {error}")))?;
        let name = path.display().to_string();
        if path
            .components()
            .any(|component| !matches!(component, Component::Normal(_)))
        {
            problems.push(format!("{name}: a path that leaves the pack"));
            continue;
        }
        if !entry.header().entry_type().is_file() {
            problems.push(format!("{name}: not a regular file"));
            continue;
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|error| CliError::Usage(format!("{file}: {name} does not read: {error}")))?;
        if files.insert(name.clone(), bytes).is_some() {
            problems.push(format!("{name}: in the pack twice"));
        }
    }
    Ok((files, problems))
}

pub fn verify(context: &Context, file: &str) -> CommandResult {
    let (files, mut problems) = read_pack(file)?;
    let report = nagi_proof::pack::verify_pack(&files);
    problems.extend(report.problems.iter().cloned());
    let verified = problems.is_empty();
    let summary = json!({
        "verified": verified,
        "mission_id": report.mission_id,
        "seal_digest": report.seal_digest,
        "files": report.files,
        "evidence_records": report.evidence_records,
        "handoff_artifacts": report.handoff_artifacts,
        "problems": problems,
    });
    context.print(&summary, |_| {
        if verified {
            format!(
                "verified: {} files of mission {}; the receipt's seal {} re-derives, {} evidence record(s) and {} handoff artifact(s) match the digests that bind them\n",
                report.files,
                report.mission_id.as_deref().unwrap_or("?"),
                report.seal_digest.as_deref().unwrap_or("?"),
                report.evidence_records,
                report.handoff_artifacts
            )
        } else {
            let mut text = format!("NOT verified: {} problem(s) in {file}\n", problems.len());
            for problem in &problems {
                text.push_str(&format!("  {problem}\n"));
            }
            text
        }
    })?;
    Ok(if verified { EXIT_OK } else { EXIT_REMOTE_ERROR })
}

pub fn handoff_show(context: &Context, artifact_sha256: &str) -> CommandResult {
    let result = context.request(
        "mission.handoff.get",
        json!({"artifact_sha256": artifact_sha256}),
    )?;
    context.print(&result, |result| {
        serde_json::to_string_pretty(result.get("artifact").unwrap_or(&Value::Null))
            .unwrap_or_default()
            + "\n"
    })
}

pub fn run(context: &Context, command: ProofCommand) -> CommandResult {
    match command {
        ProofCommand::Verify { file } => verify(context, &file),
    }
}
