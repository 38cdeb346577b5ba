//! Evidence for one declaration (contract §3.7, §5.4): from a command the trusted runner
//! ran (or refused to run) and the workspace around it, or from a listed reviewer.
//!
//! An [`Evidence`] is both the summary the views show and, when `record_digest` is set, the
//! evidence *record* a proof may use. Following §5.4, only a command that ran to its end with
//! every required artifact present gets a record (passed or failed by its exit code); a
//! command that could not be started, timed out, hit an output limit or lost a required
//! artifact is summarised as `failed` without a record. Nothing here can produce provider
//! claim evidence: the only constructors are a command outcome and a listed reviewer.

use std::path::Path;

use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionEvidenceKindV1};

use super::binding::identity_digest;
use super::error::{NameList, ProofError};
use super::workspace::{artifact_content_digest, media_type_of};
use nagi_exec::runner::{CommandFailure, CommandOutcome, OutputSummary, RunnerError};
use nagi_exec::workspace::{Disposition, WorkspaceEntry, WorkspaceSnapshot, relevant_files_digest};
use nagi_mission::canonical::relevant_path_rules;
use nagi_mission::digest::{CanonicalHasher, ProofIdentity};
use nagi_mission::model::{
    Declaration, DeclarationKind, Evidence, EvidenceArtifact, EvidenceSource,
};
use nagi_mission::redact::redact;
use nagi_mission::validate::{check_text, id_is_valid};

/// Bytes of each output stream's end kept in `output_tail` (after redaction).
pub const STREAM_TAIL_BYTES: usize = 2048;
/// Longest reason a reviewer may give (§3.8 `reason` 1..4096).
pub const MAX_MANUAL_REASON_BYTES: usize = 4096;
/// How many changed paths a detail names before it only counts them.
const NAMED_CHANGED_PATHS: usize = 5;

/// One command check that ran, with the scans taken just before and just after it.
#[derive(Debug, Clone, Copy)]
pub struct CommandEvidenceInput<'a> {
    pub declaration: &'a Declaration,
    /// The current run's identity; its worktree is where required artifacts are read.
    pub identity: &'a ProofIdentity,
    pub before: &'a WorkspaceSnapshot,
    pub after: &'a WorkspaceSnapshot,
    /// Logical time the evidence is recorded at.
    pub recorded_at_millis: u64,
}

/// The evidence of a command check that the runner started. A cancelled command is an
/// error: §5.4 abandons the whole collection then, and no evidence is written.
pub fn command_evidence(
    input: &CommandEvidenceInput<'_>,
    outcome: &CommandOutcome,
) -> Result<Evidence, ProofError> {
    let declaration = input.declaration;
    let DeclarationKind::Command {
        program,
        args,
        cwd,
        required_artifacts,
        include_ignored,
        ..
    } = &declaration.kind
    else {
        return Err(ProofError::NotACommandCheck {
            check_id: declaration.check_id.clone(),
        });
    };
    if *include_ignored && !input.after.include_ignored {
        return Err(ProofError::IgnoredFilesNotScanned {
            check_id: declaration.check_id.clone(),
        });
    }
    if outcome.failure == Some(CommandFailure::Cancelled) {
        return Err(ProofError::CollectionCancelled {
            check_id: declaration.check_id.clone(),
        });
    }
    let worktree = Path::new(&input.identity.worktree_identity);
    let mut artifacts = Vec::new();
    let mut missing_artifacts = Vec::new();
    for path in required_artifacts {
        match artifact_content_digest(worktree, input.after, path)? {
            Some(content_digest) => artifacts.push(EvidenceArtifact {
                path: path.clone(),
                content_digest,
                media_type: media_type_of(path).to_string(),
            }),
            None => missing_artifacts.push(format!("`{path}`")),
        }
    }

    let mut problems = Vec::new();
    if let Some(failure) = &outcome.failure {
        problems.push(failure.to_string());
    } else if outcome.exit_code != 0 {
        problems.push(exit_description(outcome));
    }
    if !missing_artifacts.is_empty() {
        problems.push(format!(
            "required artifact {} missing after the command ran",
            NameList(&missing_artifacts)
        ));
    }
    // §5.4: a record exists only for a command that ran to its end with every artifact.
    let has_record = outcome.failure.is_none() && missing_artifacts.is_empty();
    let assessment = if problems.is_empty() {
        MissionEvidenceAssessmentV1::Passed
    } else {
        MissionEvidenceAssessmentV1::Failed
    };
    let mut detail_parts = problems;
    if let Some(note) = workspace_change_note(input.before, input.after) {
        detail_parts.push(note);
    }

    let rules = relevant_path_rules(&declaration.kind);
    let mut evidence = Evidence {
        check_id: declaration.check_id.clone(),
        kind: MissionEvidenceKindV1::Command,
        assessment,
        workspace_digest: input.after.digest.clone(),
        relevant_digest: Some(relevant_files_digest(input.after, &rules, *include_ignored)),
        declaration_digest: declaration.digest.clone(),
        run_id: input.identity.run_id.clone(),
        identity_digest: Some(identity_digest(input.identity)),
        output_digest: Some(output_digest(&outcome.stdout, &outcome.stderr)),
        recorded_at_millis: input.recorded_at_millis,
        duration_millis: Some(outcome.duration_millis),
        exit_code: Some(outcome.exit_code),
        source: Some(EvidenceSource::Command {
            program: program.clone(),
            args: args.clone(),
            cwd: cwd.clone(),
            exit_code: outcome.exit_code,
            started_at_millis: outcome.started_at_millis,
            finished_at_millis: outcome.finished_at_millis,
        }),
        artifacts,
        record_digest: None,
        detail: if detail_parts.is_empty() {
            None
        } else {
            Some(detail_parts.join("; "))
        },
        output_tail: output_tail(&outcome.stdout, &outcome.stderr),
    };
    if has_record {
        evidence.record_digest = evidence_record_digest(&evidence);
    }
    Ok(evidence)
}

/// The summary of a command check the runner refused to start (cwd escape, program missing
/// or not executable, spawn failure): `failed`, no record, the reason in `detail`.
pub fn rejected_command_evidence(
    declaration: &Declaration,
    identity: &ProofIdentity,
    snapshot: &WorkspaceSnapshot,
    error: &RunnerError,
    recorded_at_millis: u64,
) -> Result<Evidence, ProofError> {
    if !declaration.is_command() {
        return Err(ProofError::NotACommandCheck {
            check_id: declaration.check_id.clone(),
        });
    }
    Ok(Evidence {
        check_id: declaration.check_id.clone(),
        kind: MissionEvidenceKindV1::Command,
        assessment: MissionEvidenceAssessmentV1::Failed,
        workspace_digest: snapshot.digest.clone(),
        relevant_digest: None,
        declaration_digest: declaration.digest.clone(),
        run_id: identity.run_id.clone(),
        identity_digest: Some(identity_digest(identity)),
        output_digest: None,
        recorded_at_millis,
        duration_millis: None,
        exit_code: None,
        source: None,
        artifacts: Vec::new(),
        record_digest: None,
        detail: Some(format!("the command could not be started: {error}")),
        output_tail: None,
    })
}

/// Evidence a person gives for a manual check. Refused unless `reviewer` is one of the
/// declaration's reviewers, and an override unless the declaration allows overrides.
pub fn manual_evidence(
    declaration: &Declaration,
    identity: &ProofIdentity,
    reviewer: &str,
    reason: &str,
    is_override: bool,
    snapshot: &WorkspaceSnapshot,
    now_millis: u64,
) -> Result<Evidence, ProofError> {
    let DeclarationKind::Manual {
        reviewers,
        allow_override,
    } = &declaration.kind
    else {
        return Err(ProofError::NotAManualCheck {
            check_id: declaration.check_id.clone(),
        });
    };
    if !id_is_valid(reviewer) {
        return Err(ProofError::InvalidManualEvidence {
            detail: format!(
                "reviewer {reviewer:?} must be 1 to 128 bytes of letters, digits, '_', '.', ':' and '-'"
            ),
        });
    }
    check_text("reason", reason, MAX_MANUAL_REASON_BYTES)
        .map_err(|detail| ProofError::InvalidManualEvidence { detail })?;
    if !reviewers.iter().any(|listed| listed == reviewer) {
        return Err(ProofError::ReviewerNotListed {
            check_id: declaration.check_id.clone(),
            reviewer: reviewer.to_string(),
            allowed: NameList(reviewers).to_string(),
        });
    }
    if is_override && !allow_override {
        return Err(ProofError::OverrideNotAllowed {
            check_id: declaration.check_id.clone(),
        });
    }
    let mut evidence = Evidence {
        check_id: declaration.check_id.clone(),
        kind: MissionEvidenceKindV1::Manual,
        assessment: MissionEvidenceAssessmentV1::Passed,
        workspace_digest: snapshot.digest.clone(),
        relevant_digest: None,
        declaration_digest: declaration.digest.clone(),
        run_id: identity.run_id.clone(),
        identity_digest: Some(identity_digest(identity)),
        output_digest: None,
        recorded_at_millis: now_millis,
        duration_millis: None,
        exit_code: None,
        source: Some(EvidenceSource::Manual {
            reviewer: reviewer.to_string(),
            reason: reason.to_string(),
            is_override,
            recorded_at_millis: now_millis,
        }),
        artifacts: Vec::new(),
        record_digest: None,
        detail: is_override.then(|| format!("passed by an override of reviewer {reviewer}")),
        output_tail: None,
    };
    evidence.record_digest = evidence_record_digest(&evidence);
    Ok(evidence)
}

/// The digest of an evidence record: everything the record proves (identity, declaration,
/// workspace, relevant files, output, source, artifacts, time), but not the mutable summary
/// (`assessment` becomes `stale` on a handoff) nor the presentation (`detail`, the redacted
/// `output_tail`). `None` for evidence without a source or identity, which is no record.
pub fn evidence_record_digest(evidence: &Evidence) -> Option<String> {
    let source = evidence.source.as_ref()?;
    let identity = evidence.identity_digest.as_ref()?;
    let mut hasher = CanonicalHasher::new("mission-evidence-record-v1");
    hasher
        .string(&evidence.check_id)
        .u8(kind_tag(evidence.kind))
        .string(identity)
        .string(&evidence.run_id)
        .string(&evidence.declaration_digest)
        .string(&evidence.workspace_digest);
    optional_string(&mut hasher, evidence.relevant_digest.as_deref());
    optional_string(&mut hasher, evidence.output_digest.as_deref());
    match evidence.duration_millis {
        Some(duration) => hasher.u8(1).u64(duration),
        None => hasher.u8(0),
    };
    match evidence.exit_code {
        Some(exit_code) => hasher.u8(1).i32(exit_code),
        None => hasher.u8(0),
    };
    match source {
        EvidenceSource::Command {
            program,
            args,
            cwd,
            exit_code,
            started_at_millis,
            finished_at_millis,
        } => hasher
            .u8(0)
            .string(program)
            .string_list(args)
            .string(cwd)
            .i32(*exit_code)
            .u64(*started_at_millis)
            .u64(*finished_at_millis),
        EvidenceSource::Manual {
            reviewer,
            reason,
            is_override,
            recorded_at_millis,
        } => hasher
            .u8(1)
            .string(reviewer)
            .string(reason)
            .bool(*is_override)
            .u64(*recorded_at_millis),
    };
    let mut artifacts: Vec<&EvidenceArtifact> = evidence.artifacts.iter().collect();
    artifacts.sort_by(|left, right| left.path.cmp(&right.path));
    hasher.u64(artifacts.len() as u64);
    for artifact in artifacts {
        hasher
            .string(&artifact.path)
            .string(&artifact.content_digest)
            .string(&artifact.media_type);
    }
    hasher.u64(evidence.recorded_at_millis);
    Some(hasher.finish())
}

fn kind_tag(kind: MissionEvidenceKindV1) -> u8 {
    match kind {
        MissionEvidenceKindV1::Command => 0,
        MissionEvidenceKindV1::Manual => 1,
        MissionEvidenceKindV1::ProviderClaim => 2,
    }
}

fn optional_string(hasher: &mut CanonicalHasher, value: Option<&str>) {
    match value {
        Some(value) => hasher.u8(1).string(value),
        None => hasher.u8(0),
    };
}

fn exit_description(outcome: &CommandOutcome) -> String {
    match outcome.signal {
        Some(signal) => {
            format!("the command was killed by signal {signal} (exit code recorded as -1)")
        }
        None => format!("the command exited with code {}", outcome.exit_code),
    }
}

/// Digest of both output streams (their SHA-256 and sizes); the streams themselves are not
/// kept.
fn output_digest(stdout: &OutputSummary, stderr: &OutputSummary) -> String {
    CanonicalHasher::new("mission-evidence-output-v1")
        .string(&stdout.sha256)
        .u64(stdout.total_bytes)
        .string(&stderr.sha256)
        .u64(stderr.total_bytes)
        .finish()
}

/// The redacted ends of both streams, each at most [`STREAM_TAIL_BYTES`], labelled.
fn output_tail(stdout: &OutputSummary, stderr: &OutputSummary) -> Option<String> {
    let mut sections = Vec::new();
    for (label, summary) in [("stdout", stdout), ("stderr", stderr)] {
        let redacted = redact(&summary.tail);
        let text = redacted.trim_end();
        if text.trim().is_empty() {
            continue;
        }
        let cut = summary.total_bytes > summary.tail.len() as u64 || text.len() > STREAM_TAIL_BYTES;
        let end = last_bytes_on_a_line_start(text, STREAM_TAIL_BYTES);
        sections.push(if cut {
            format!("[{label}, end]\n{end}")
        } else {
            format!("[{label}]\n{end}")
        });
    }
    if sections.is_empty() {
        None
    } else {
        Some(sections.join("\n"))
    }
}

/// At most `max_bytes` from the end of `text`, starting after a line break when one is in
/// the cut part (so the tail never begins mid-line unless one line is longer than that).
fn last_bytes_on_a_line_start(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let end = &text[text.ceil_char_boundary(text.len() - max_bytes)..];
    match end.find('\n') {
        Some(line_break) if line_break + 1 < end.len() => &end[line_break + 1..],
        _ => end,
    }
}

/// Says which workspace paths the command itself changed (and whether it moved HEAD), so a
/// reviewer sees a check that rewrites files; `None` when it changed nothing.
fn workspace_change_note(before: &WorkspaceSnapshot, after: &WorkspaceSnapshot) -> Option<String> {
    let changed = changed_paths(before, after);
    let mut notes = Vec::new();
    if before.head_commit != after.head_commit {
        notes.push(format!(
            "the command moved HEAD from {} to {}",
            before.head_commit, after.head_commit
        ));
    }
    if !changed.is_empty() {
        let named: Vec<String> = changed
            .iter()
            .take(NAMED_CHANGED_PATHS)
            .map(|path| redact(path).into_owned())
            .collect();
        let more = changed.len().saturating_sub(NAMED_CHANGED_PATHS);
        let suffix = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        notes.push(format!(
            "the command changed {} workspace path(s): {}{suffix}",
            changed.len(),
            named.join(", ")
        ));
    }
    if notes.is_empty() {
        None
    } else {
        Some(notes.join("; "))
    }
}

/// Paths whose entry (disposition or fingerprint) differs, or that exist in only one of the
/// snapshots. Ignored files count only when both snapshots scanned them.
fn changed_paths(before: &WorkspaceSnapshot, after: &WorkspaceSnapshot) -> Vec<String> {
    let both_scanned_ignored = before.include_ignored && after.include_ignored;
    let comparable =
        |entry: &&WorkspaceEntry| both_scanned_ignored || entry.disposition != Disposition::Ignored;
    let mut left = before.entries.iter().filter(comparable).peekable();
    let mut right = after.entries.iter().filter(comparable).peekable();
    let mut changed = Vec::new();
    loop {
        match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(entry), None) => {
                changed.push(entry.path.clone());
                left.next();
            }
            (None, Some(entry)) => {
                changed.push(entry.path.clone());
                right.next();
            }
            (Some(old), Some(new)) => match old.path.cmp(&new.path) {
                std::cmp::Ordering::Less => {
                    changed.push(old.path.clone());
                    left.next();
                }
                std::cmp::Ordering::Greater => {
                    changed.push(new.path.clone());
                    right.next();
                }
                std::cmp::Ordering::Equal => {
                    if old != new {
                        changed.push(new.path.clone());
                    }
                    left.next();
                    right.next();
                }
            },
        }
    }
    changed
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
