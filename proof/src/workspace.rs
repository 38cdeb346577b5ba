//! The workspace as the proof evaluator sees it: a trusted snapshot plus the content digest
//! of every required artifact that exists in it.
//!
//! Why artifacts need more than the snapshot: `ProofArtifactV1.content_digest` is the
//! SHA-256 of the file bytes (or of the symlink target text). The scan already has that for
//! every path git reported (changed and untracked files, the usual case for a generated
//! report), but a clean tracked file is fingerprinted by its index blob id, which is not a
//! SHA-256 of the content. For those few paths the bytes are read here, right after the
//! scan proved them equal to the index.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::ProofError;
use nagi_exec::workspace::{Fingerprint, WorkspaceSnapshot};
use nagi_mission::model::{ClosurePlan, DeclarationKind};

/// Git's mode of a symlink in the index.
const SYMLINK_MODE: u32 = 0o120000;

/// A snapshot plus the artifact digests the evaluator compares evidence with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofWorkspace {
    pub snapshot: WorkspaceSnapshot,
    /// Content digest of each required artifact of the plan that exists in `snapshot`,
    /// keyed by its normalised path. An artifact that is absent has no entry.
    pub artifact_digests: BTreeMap<String, String>,
}

impl ProofWorkspace {
    /// Hashes the plan's required artifacts as they are in `snapshot` of `worktree_root`.
    pub fn observe(
        worktree_root: &Path,
        snapshot: WorkspaceSnapshot,
        plan: &ClosurePlan,
    ) -> Result<ProofWorkspace, ProofError> {
        let mut artifact_digests = BTreeMap::new();
        for declaration in &plan.declarations {
            let DeclarationKind::Command {
                required_artifacts, ..
            } = &declaration.kind
            else {
                continue;
            };
            for path in required_artifacts {
                if artifact_digests.contains_key(path) {
                    continue;
                }
                if let Some(digest) = artifact_content_digest(worktree_root, &snapshot, path)? {
                    artifact_digests.insert(path.clone(), digest);
                }
            }
        }
        Ok(ProofWorkspace {
            snapshot,
            artifact_digests,
        })
    }

    pub fn artifact_digest(&self, path: &str) -> Option<&str> {
        self.artifact_digests.get(path).map(String::as_str)
    }
}

/// SHA-256 of an artifact's content as the snapshot has it: the file bytes, or the symlink
/// target text (never followed). `None` when the snapshot does not have the path or has it
/// as missing.
pub fn artifact_content_digest(
    worktree_root: &Path,
    snapshot: &WorkspaceSnapshot,
    path: &str,
) -> Result<Option<String>, ProofError> {
    let Some(entry) = snapshot.entry(path) else {
        return Ok(None);
    };
    match &entry.fingerprint {
        Fingerprint::Missing => Ok(None),
        Fingerprint::File { sha256, .. } => Ok(Some(sha256.clone())),
        Fingerprint::Symlink { target_sha256 } => Ok(Some(target_sha256.clone())),
        Fingerprint::IndexBlob { mode, .. } => {
            read_content_digest(&worktree_root.join(path), path, *mode == SYMLINK_MODE).map(Some)
        }
    }
}

fn read_content_digest(full_path: &Path, path: &str, symlink: bool) -> Result<String, ProofError> {
    let unreadable = |detail: String| ProofError::ArtifactUnreadable {
        path: path.to_string(),
        detail,
    };
    if symlink {
        let target =
            std::fs::read_link(full_path).map_err(|error| unreadable(error.to_string()))?;
        return Ok(hex::encode(Sha256::digest(target.as_os_str().as_bytes())));
    }
    let metadata =
        std::fs::symlink_metadata(full_path).map_err(|error| unreadable(error.to_string()))?;
    if !metadata.file_type().is_file() {
        return Err(unreadable(
            "it is no longer a regular file; the workspace changed after the scan".to_string(),
        ));
    }
    let mut file = std::fs::File::open(full_path).map_err(|error| unreadable(error.to_string()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        let length = file
            .read(&mut buffer)
            .map_err(|error| unreadable(error.to_string()))?;
        if length == 0 {
            break;
        }
        hasher.update(&buffer[..length]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The media type of an artifact, chosen from its extension (case-insensitive, §3.8).
pub fn media_type_of(path: &str) -> &'static str {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let extension = match file_name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => extension.to_ascii_lowercase(),
        _ => return "application/octet-stream",
    };
    match extension.as_str() {
        "json" => "application/json",
        "html" => "text/html",
        "txt" | "md" | "log" => "text/plain",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp4" => "video/mp4",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_follow_the_extension_table() {
        assert_eq!(media_type_of("reports/out.JSON"), "application/json");
        assert_eq!(media_type_of("index.html"), "text/html");
        for text in ["a.txt", "b.md", "c.LOG"] {
            assert_eq!(media_type_of(text), "text/plain");
        }
        assert_eq!(media_type_of("shot.png"), "image/png");
        assert_eq!(media_type_of("shot.JPeG"), "image/jpeg");
        assert_eq!(media_type_of("shot.jpg"), "image/jpeg");
        assert_eq!(media_type_of("shot.webp"), "image/webp");
        assert_eq!(media_type_of("logo.svg"), "image/svg+xml");
        assert_eq!(media_type_of("demo.mp4"), "video/mp4");
        assert_eq!(media_type_of("archive.tar.gz"), "application/octet-stream");
        assert_eq!(media_type_of("Makefile"), "application/octet-stream");
        assert_eq!(media_type_of(".json"), "application/octet-stream");
        assert_eq!(media_type_of("dir.json/report"), "application/octet-stream");
    }
}
