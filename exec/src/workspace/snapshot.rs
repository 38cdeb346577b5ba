//! The workspace snapshot, its canonical digest and §5.5 relevance.
//!
//! # Fingerprints
//!
//! A path is fingerprinted in one of two ways, chosen by what git already
//! proved about it:
//!
//! * **Clean tracked paths** (in the index and absent from `git status`) get
//!   [`Fingerprint::IndexBlob`]: the index mode and blob id. `git status` has
//!   just compared the working copy with the index: by its stat cache, and by
//!   content for racily clean entries, with `core.fileMode=true` so the
//!   executable bit is compared too. "Absent from status" therefore means the
//!   working copy *is* that blob with that mode (for symlinks the blob is the
//!   link target text). Re-hashing 100,000 clean files would repeat git's work
//!   and make a scan cost a full read of the tree instead of one stat walk.
//! * **Every path git reported** (staged, unstaged, deleted, untracked, and
//!   ignored when requested) gets a content fingerprint read by us:
//!   [`Fingerprint::File`] (SHA-256 of the bytes, executable bit, size),
//!   [`Fingerprint::Symlink`] (SHA-256 of the target text, never followed) or
//!   [`Fingerprint::Missing`].
//!
//! Whichever form a path has, it changes whenever the content, the mode or the
//! symlink target changes, and it is the same when nothing changed. Together
//! with the disposition, the fingerprint is what §5.5 freshness compares.
//!
//! # Digest
//!
//! [`WorkspaceSnapshot::digest`] is a length-framed SHA-256 (see
//! [`nagi_mission::digest::CanonicalHasher`], prefix [`WORKSPACE_DIGEST_PREFIX`]) over
//! HEAD, the include-ignored flag and every entry in path order (path,
//! disposition, fingerprint). Any tracked, staged, unstaged, deleted or
//! untracked change alters at least one entry, so it alters the digest.

use serde::{Deserialize, Serialize};

use nagi_mission::digest::{CanonicalHasher, PathRule};

/// Prefix of our own (non-contract) workspace digests.
pub const WORKSPACE_DIGEST_PREFIX: &str = "nagi-workspace-canonical-v1";

/// How git sees a path (first match in this order, contract §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    Ignored,
    Untracked,
    /// The working copy differs from the index (modified, deleted, type change).
    Unstaged,
    /// The index differs from HEAD, the working copy equals the index.
    Staged,
    /// Clean: working copy, index and HEAD agree.
    Tracked,
}

impl Disposition {
    fn tag(self) -> u8 {
        match self {
            Disposition::Ignored => 0,
            Disposition::Untracked => 1,
            Disposition::Unstaged => 2,
            Disposition::Staged => 3,
            Disposition::Tracked => 4,
        }
    }
}

/// What a path's content and mode are (see the module docs for which form).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fingerprint {
    /// Clean tracked path: verified equal to this index entry by `git status`.
    IndexBlob { mode: u32, blob_id: String },
    /// Regular file read by the scan.
    File {
        sha256: String,
        executable: bool,
        size: u64,
    },
    /// Symlink read by the scan: SHA-256 of its target text.
    Symlink { target_sha256: String },
    /// Not present in the working tree.
    Missing,
}

/// One path of the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkspaceEntry {
    pub path: String,
    pub disposition: Disposition,
    pub fingerprint: Fingerprint,
}

/// A trusted scan of one checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceSnapshot {
    /// `HEAD^{commit}` during the scan.
    pub head_commit: String,
    /// Whether ignored files were scanned (and are in `entries`).
    pub include_ignored: bool,
    /// Every path, sorted bytewise, unique.
    pub entries: Vec<WorkspaceEntry>,
    /// Canonical digest of all of the above.
    pub digest: String,
}

fn hash_entry(hasher: &mut CanonicalHasher, entry: &WorkspaceEntry) {
    hasher.string(&entry.path).u8(entry.disposition.tag());
    match &entry.fingerprint {
        Fingerprint::IndexBlob { mode, blob_id } => {
            hasher.u8(0).u64(u64::from(*mode)).string(blob_id);
        }
        Fingerprint::File {
            sha256,
            executable,
            size,
        } => {
            hasher.u8(1).string(sha256).bool(*executable).u64(*size);
        }
        Fingerprint::Symlink { target_sha256 } => {
            hasher.u8(2).string(target_sha256);
        }
        Fingerprint::Missing => {
            hasher.u8(3);
        }
    }
}

impl WorkspaceSnapshot {
    /// Builds a snapshot from sorted, unique entries and computes its digest.
    pub fn new(head_commit: String, include_ignored: bool, entries: Vec<WorkspaceEntry>) -> Self {
        let mut hasher =
            CanonicalHasher::with_prefix(WORKSPACE_DIGEST_PREFIX, "workspace-snapshot");
        hasher
            .string(&head_commit)
            .bool(include_ignored)
            .u64(entries.len() as u64);
        for entry in &entries {
            hash_entry(&mut hasher, entry);
        }
        let digest = hasher.finish();
        WorkspaceSnapshot {
            head_commit,
            include_ignored,
            entries,
            digest,
        }
    }

    /// The entry of `path`, if the workspace has it.
    pub fn entry(&self, path: &str) -> Option<&WorkspaceEntry> {
        self.entries
            .binary_search_by(|entry| entry.path.as_str().cmp(path))
            .ok()
            .map(|index| &self.entries[index])
    }

    /// Entries relevant to a check (§5.5): matching any rule (every path when
    /// `rules` is empty), without ignored files unless `include_ignored`.
    pub fn relevant_entries<'a>(
        &'a self,
        rules: &'a [PathRule],
        include_ignored: bool,
    ) -> impl Iterator<Item = &'a WorkspaceEntry> + 'a {
        self.entries.iter().filter(move |entry| {
            (include_ignored || entry.disposition != Disposition::Ignored)
                && (rules.is_empty() || rules.iter().any(|rule| rule.matches(&entry.path)))
        })
    }
}

/// §5.5 freshness of command evidence: whether the relevant files (path,
/// fingerprint and disposition) are the same in both snapshots. When
/// `include_ignored` is requested but a snapshot did not scan ignored files,
/// the answer is `false` (it cannot be shown to be fresh).
pub fn relevant_files_equal(
    evidence: &WorkspaceSnapshot,
    current: &WorkspaceSnapshot,
    rules: &[PathRule],
    include_ignored: bool,
) -> bool {
    if include_ignored && !(evidence.include_ignored && current.include_ignored) {
        return false;
    }
    evidence
        .relevant_entries(rules, include_ignored)
        .eq(current.relevant_entries(rules, include_ignored))
}

/// Digest of the relevant files only, so evidence can store one value instead
/// of a whole snapshot: equal digests ⇔ [`relevant_files_equal`] (for
/// snapshots that both scanned ignored files when `include_ignored`).
pub fn relevant_files_digest(
    snapshot: &WorkspaceSnapshot,
    rules: &[PathRule],
    include_ignored: bool,
) -> String {
    let mut hasher = CanonicalHasher::with_prefix(WORKSPACE_DIGEST_PREFIX, "relevant-files");
    hasher.bool(include_ignored);
    let mut count: u64 = 0;
    for entry in snapshot.relevant_entries(rules, include_ignored) {
        hash_entry(&mut hasher, entry);
        count += 1;
    }
    hasher.u64(count);
    hasher.finish()
}
