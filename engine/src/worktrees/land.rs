//! The git work of landing a mission (`mission.land`), through libgit2 (no hooks, no
//! filters configured outside the repository), with `git` itself only for a push:
//!
//! - [`inspect`] works out, without writing anything the person can see, what a landing
//!   would do: the target branch and its tip, the files of the change, the checkout that
//!   has the target checked out, and refuses a conflict (`land_conflict`, with the paths)
//!   or a checkout with changes of its own (`checkout_dirty`, with the files).
//! - [`land`] does it: commits the worktree's changes on `mission/<id>`, builds the landed
//!   commit (squash, merge or rebase), moves the target branch with one compare-and-swap
//!   reference update, then moves the checkout that has it checked out, then pushes.
//!
//! Order matters for a crash: every object is written before the target reference moves,
//! and the reference moves in one atomic update, so a SIGKILL leaves the target branch
//! either where it was or at the landed commit.

use std::path::{Path, PathBuf};

use nagi_mission::MissionError;
use nagi_schema::land::LandStrategy;

use super::merging::{
    author, failed, merge_in_memory, open, replay_onto, target_commit, tree_of, worktree_tree,
    worktree_tree_keeping_index,
};

/// Everything a landing needs to know. Built by the engine from the mission.
#[derive(Debug, Clone)]
pub struct LandRequest {
    /// A checkout of the repository (the mission's `repository_path`).
    pub repository_root: PathBuf,
    /// The mission's worktree.
    pub worktree_path: PathBuf,
    pub mission_branch: String,
    pub mission_id: String,
    pub target_branch: String,
    pub strategy: LandStrategy,
    /// The commit message without its trailers.
    pub message: String,
    pub push_remote: Option<String>,
    pub pull_request: bool,
}

/// What a landing would do, as [`inspect`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandInspection {
    pub target_revision: String,
    /// The tree the worktree holds now (what lands).
    pub change_tree: String,
    /// Paths the change touches, against the merge base with the target.
    pub files: Vec<String>,
    /// The checkout (other than the mission's worktree) that has the target checked out.
    pub checkout: Option<PathBuf>,
}

/// The message with nagi's trailers.
pub fn message_with_trailers(message: &str, mission_id: &str, seal: &str) -> String {
    format!(
        "{}\n\nNagi-Mission: {mission_id}\nNagi-Proof: {seal}\n",
        message.trim_end()
    )
}

fn changed_paths(
    repository: &git2::Repository,
    from: &git2::Tree<'_>,
    to: &git2::Tree<'_>,
) -> Result<Vec<String>, MissionError> {
    let diff = repository
        .diff_tree_to_tree(Some(from), Some(to), None)
        .map_err(|error| failed("cannot list the change's files", error))?;
    Ok(diff
        .deltas()
        .filter_map(|delta| delta.new_file().path().or(delta.old_file().path()))
        .map(|path| path.to_string_lossy().into_owned())
        .collect())
}

/// The checkout, other than `except`, whose HEAD is the branch `target_branch`.
fn checkout_of(
    repository: &git2::Repository,
    target_branch: &str,
    except: &Path,
) -> Result<Option<PathBuf>, MissionError> {
    let reference = format!("refs/heads/{target_branch}");
    let except = std::fs::canonicalize(except).unwrap_or_else(|_| except.to_path_buf());
    let has_target = |candidate: &git2::Repository| -> Option<PathBuf> {
        let workdir = candidate.workdir()?;
        let workdir = std::fs::canonicalize(workdir).ok()?;
        if workdir == except {
            return None;
        }
        let head = candidate.find_reference("HEAD").ok()?;
        (head.symbolic_target().ok().flatten() == Some(reference.as_str())).then_some(workdir)
    };
    let main_path = repository.commondir().parent().map(Path::to_path_buf);
    if let Some(main_path) = main_path
        && let Ok(main) = git2::Repository::open(&main_path)
        && !main.is_bare()
        && let Some(found) = has_target(&main)
    {
        return Ok(Some(found));
    }
    let names = repository
        .worktrees()
        .map_err(|error| failed("cannot list the repository's worktrees", error))?;
    for name in names.iter().flatten().flatten() {
        let Ok(worktree) = repository.find_worktree(name) else {
            continue;
        };
        if worktree.validate().is_err() {
            continue;
        }
        if let Ok(linked) = git2::Repository::open_from_worktree(&worktree)
            && let Some(found) = has_target(&linked)
        {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Files of `checkout` that would be lost or overwritten by moving it: any change to a
/// tracked file (staged or not), and an untracked file at a path the landing writes. Only
/// the tracked files and the landing's paths are looked at, as `git merge` does; other
/// untracked files do not matter.
fn dirty_files(checkout: &Path, landing_paths: &[String]) -> Result<Vec<String>, MissionError> {
    let mut dirty =
        nagi_exec::workspace::staging::changed_tracked_paths(checkout, &Default::default())
            .map_err(|error| {
                MissionError::LandFailed(format!(
                    "cannot read the status of {}: {error}",
                    checkout.display()
                ))
            })?;
    dirty.extend(untracked_in_the_way(checkout, landing_paths)?);
    Ok(dirty)
}

/// Landing paths that the checkout's index does not have but its disk does.
fn untracked_in_the_way(
    checkout: &Path,
    landing_paths: &[String],
) -> Result<Vec<String>, MissionError> {
    let repository = open(checkout)?;
    let index = repository
        .index()
        .map_err(|error| failed("cannot read the checkout's index", error))?;
    Ok(landing_paths
        .iter()
        .filter(|path| {
            index.get_path(Path::new(path.as_str()), 0).is_none()
                && std::fs::symlink_metadata(checkout.join(path.as_str())).is_ok()
        })
        .cloned()
        .collect())
}

/// Landed paths of `checkout` that changed since `prepare` looked (the moments between
/// preparing and applying): only these would be overwritten. A tracked file whose stat
/// and content no longer match its index entry counts as changed, and so does an untracked
/// file at a landed path.
fn landed_paths_changed(
    checkout: &Path,
    landing_paths: &[String],
) -> Result<Vec<String>, MissionError> {
    use std::os::unix::fs::MetadataExt;
    let repository = open(checkout)?;
    let index = repository
        .index()
        .map_err(|error| failed("cannot read the checkout's index", error))?;
    let mut changed = Vec::new();
    for path in landing_paths {
        let on_disk = std::fs::symlink_metadata(checkout.join(path.as_str())).ok();
        match (index.get_path(Path::new(path.as_str()), 0), on_disk) {
            (None, None) => {}
            (None, Some(_)) | (Some(_), None) => changed.push(path.clone()),
            (Some(entry), Some(metadata)) => {
                let same_stat = u64::from(entry.file_size) == (metadata.len() & 0xffff_ffff)
                    && i64::from(entry.mtime.seconds()) == metadata.mtime()
                    && i64::from(entry.mtime.nanoseconds()) == metadata.mtime_nsec();
                // A stat that differs (or an entry git smudged as racily clean) is settled
                // by the content.
                let same_content = same_stat
                    || (metadata.is_file()
                        && git2::Oid::hash_file(
                            git2::ObjectType::Blob,
                            checkout.join(path.as_str()),
                        )
                        .is_ok_and(|id| id == entry.id));
                if !same_content {
                    changed.push(path.clone());
                }
            }
        }
    }
    Ok(changed)
}

fn refuse_dirty(checkout: &Path, dirty: &[String]) -> MissionError {
    let shown: Vec<&str> = dirty.iter().take(20).map(String::as_str).collect();
    let more = dirty.len().saturating_sub(shown.len());
    MissionError::CheckoutDirty(format!(
        "the checkout {} has the target branch checked out and changes of its own: {}{}; commit or stash them, then land again (nothing was changed)",
        checkout.display(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// The checkout that has the target checked out (none for a pull request), refused as
/// `checkout_dirty` when it has changes of its own or files in the way of `paths`.
fn clean_checkout(
    repository: &git2::Repository,
    request: &LandRequest,
    paths: &[String],
) -> Result<Option<PathBuf>, MissionError> {
    let checkout = checkout_having_target(repository, request)?;
    if let Some(checkout) = &checkout {
        let dirty = dirty_files(checkout, paths)?;
        if !dirty.is_empty() {
            return Err(refuse_dirty(checkout, &dirty));
        }
    }
    Ok(checkout)
}

fn checkout_having_target(
    repository: &git2::Repository,
    request: &LandRequest,
) -> Result<Option<PathBuf>, MissionError> {
    if request.pull_request {
        return Ok(None);
    }
    checkout_of(repository, &request.target_branch, &request.worktree_path)
}

/// The checkout a landing would move: the one (other than the mission's worktree) that has
/// the target branch checked out. Reads no file status.
pub fn checkout_to_move(request: &LandRequest) -> Result<Option<PathBuf>, MissionError> {
    checkout_having_target(&open(&request.repository_root)?, request)
}

/// Works out what a landing ([`prepare`], [`apply`]) would do, writing no reference and no file the person sees
/// (the trees it computes are written as loose objects only).
pub fn inspect(request: &LandRequest) -> Result<LandInspection, MissionError> {
    let repository = open(&request.repository_root)?;
    author(&repository)?;
    let worktree = open(&request.worktree_path)?;
    let target = target_commit(&repository, &request.target_branch)?;
    let mission_tip = worktree
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|error| failed("cannot read the mission branch", error))?;
    let change_tree = worktree_tree(&worktree)?;
    let change = worktree
        .find_tree(change_tree)
        .map_err(|error| failed("cannot read the worktree's tree", error))?;
    let base = repository
        .merge_base(target.id(), mission_tip.id())
        .and_then(|base| repository.find_commit(base))
        .map_err(|error| failed("the mission branch and the target share no history", error))?;
    let base_tree = base
        .tree()
        .map_err(|error| failed("cannot read the merge base", error))?;
    let target_tree = target
        .tree()
        .map_err(|error| failed("cannot read the target", error))?;
    merge_in_memory(
        &repository,
        &base_tree,
        &target_tree,
        &change,
        &request.target_branch,
    )?;
    let files = changed_paths(&repository, &base_tree, &change)?;
    let checkout = clean_checkout(&repository, request, &files)?;
    Ok(LandInspection {
        target_revision: target.id().to_string(),
        change_tree: change_tree.to_string(),
        files,
        checkout,
    })
}

/// The commit of what the worktree holds (as `git add -A` and `git commit` would make
/// it) on top of its HEAD, written as an object only: the branch, the worktree's HEAD and
/// its index move after the archive seal ([`finish_mission_branch`]), so the proof's
/// re-verification after a crash still sees the worktree it verified. Returns HEAD itself
/// when nothing is uncommitted.
fn mission_commit(
    worktree: &git2::Repository,
    signature: &git2::Signature<'_>,
    message: &str,
) -> Result<git2::Oid, MissionError> {
    let head = worktree
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|error| failed("cannot read the mission branch", error))?;
    let tree_id = worktree_tree_keeping_index(worktree)?;
    if tree_id == head.tree_id() {
        return Ok(head.id());
    }
    let tree = worktree
        .find_tree(tree_id)
        .map_err(|error| failed("cannot read the worktree's tree", error))?;
    worktree
        .commit(None, signature, signature, message, &tree, &[&head])
        .map_err(|error| failed("cannot write the mission's commit", error))
}

/// Moves the mission branch (and the worktree's HEAD and index) to the landed
/// `mission_revision`, once the landing is sealed. Nothing happens when the branch is
/// already there or has moved elsewhere meanwhile.
pub fn finish_mission_branch(
    worktree_path: &Path,
    mission_revision: &str,
) -> Result<(), MissionError> {
    let worktree = open(worktree_path)?;
    let head = worktree
        .head()
        .map_err(|error| failed("cannot read the mission branch", error))?;
    let Ok(branch) = head.name().map(str::to_string) else {
        return Ok(());
    };
    let head_id = head
        .peel_to_commit()
        .map_err(|error| failed("cannot read the mission branch", error))?
        .id();
    let landed = git2::Oid::from_str(mission_revision)
        .and_then(|id| worktree.find_commit(id))
        .map_err(|error| failed("cannot read the landed mission commit", error))?;
    if landed.id() == head_id || landed.parent_id(0).ok() != Some(head_id) {
        return Ok(());
    }
    worktree
        .reference_matching(&branch, landed.id(), true, head_id, "nagi: landed")
        .map_err(|error| failed("cannot move the mission branch", error))?;
    // The index the landing staged describes exactly the landed tree, with fresh file
    // stats: it becomes the worktree's index in one rename. Without it (a restart in
    // between removed nothing, but a later stage may have), the index is rebuilt from the
    // tree.
    let kept = worktree
        .path()
        .join(nagi_exec::workspace::staging::kept_index_name(
            &landed.tree_id().to_string(),
        ));
    if std::fs::rename(&kept, worktree.path().join("index")).is_ok() {
        return Ok(());
    }
    let mut index = worktree
        .index()
        .map_err(|error| failed("cannot read the worktree's index", error))?;
    index
        .read_tree(&tree_of(&landed)?)
        .and_then(|()| index.write())
        .map_err(|error| failed("cannot write the worktree's index", error))
}

/// The new tip of the target: one commit (squash), a merge commit, or the mission's
/// commits replayed (rebase).
fn integrate(
    repository: &git2::Repository,
    request: &LandRequest,
    signature: &git2::Signature<'_>,
    message: &str,
    target: &git2::Commit<'_>,
    mission_tip: &git2::Commit<'_>,
) -> Result<git2::Oid, MissionError> {
    let base = repository
        .merge_base(target.id(), mission_tip.id())
        .and_then(|base| repository.find_commit(base))
        .map_err(|error| failed("the mission branch and the target share no history", error))?;
    match request.strategy {
        LandStrategy::Squash | LandStrategy::Merge => {
            // When the target has not moved since the mission branched, the merge is the
            // mission's own tree: nothing to merge.
            let merged = if base.id() == target.id() {
                mission_tip.tree_id()
            } else {
                merge_in_memory(
                    repository,
                    &tree_of(&base)?,
                    &tree_of(target)?,
                    &tree_of(mission_tip)?,
                    &request.target_branch,
                )?
            };
            let tree = repository
                .find_tree(merged)
                .map_err(|error| failed("cannot read the merged tree", error))?;
            let parents: Vec<&git2::Commit<'_>> = if request.strategy == LandStrategy::Merge {
                vec![target, mission_tip]
            } else {
                vec![target]
            };
            repository
                .commit(None, signature, signature, message, &tree, &parents)
                .map_err(|error| failed("cannot write the landed commit", error))
        }
        LandStrategy::Rebase => replay_onto(
            repository,
            mission_tip,
            target,
            signature,
            &request.target_branch,
            Some(&trailers_of(message)),
        ),
    }
}

fn trailers_of(message: &str) -> String {
    message
        .lines()
        .filter(|line| line.starts_with("Nagi-Mission: ") || line.starts_with("Nagi-Proof: "))
        .map(|line| format!("\n{line}"))
        .collect()
}

/// Moves the checkout at `checkout` (checked clean just before) to `new_commit`, as a
/// fast-forward of its branch does: only the landing's `paths` are written (or deleted),
/// and the index follows.
fn move_checkout(
    checkout: &Path,
    new_commit: git2::Oid,
    paths: &[String],
) -> Result<(), MissionError> {
    let repository = open(checkout)?;
    let commit = repository
        .find_commit(new_commit)
        .map_err(|error| failed("cannot read the landed commit", error))?;
    let mut builder = git2::build::CheckoutBuilder::new();
    builder.force().disable_pathspec_match(true);
    for path in paths {
        builder.path(path.as_str());
    }
    let not_updated = |error: git2::Error| {
        failed(
            &format!(
                "the target branch moved, but the checkout {} could not be updated; run `git reset --hard` there",
                checkout.display()
            ),
            error,
        )
    };
    repository
        .checkout_tree(commit.as_object(), Some(&mut builder))
        .map_err(not_updated)?;
    // Each landed path is compared by content, and one that is not what the landed tree
    // holds is checked out again with its index entry removed, so that no file stats are
    // taken on trust. (The CI failure this was first written for, a file left with its
    // old content, came from the staging, not from here: see `copy_index` in nagi-exec.)
    let tree = commit.tree().map_err(not_updated)?;
    let stale: Vec<&String> = paths
        .iter()
        .filter(|path| !matches_tree(checkout, &tree, path))
        .collect();
    if stale.is_empty() {
        return Ok(());
    }
    let mut index = repository.index().map_err(not_updated)?;
    let mut again = git2::build::CheckoutBuilder::new();
    again.force().disable_pathspec_match(true);
    for path in &stale {
        let _ = index.remove_path(Path::new(path.as_str()));
        again.path(path.as_str());
    }
    index.write().map_err(not_updated)?;
    repository
        .checkout_tree(commit.as_object(), Some(&mut again))
        .map_err(not_updated)
}

/// Whether the file at `path` in `checkout` is what `tree` holds there (absent where the
/// tree has nothing). A symbolic link or submodule counts as matching: libgit2 writes
/// those by their entry, not by stats.
fn matches_tree(checkout: &Path, tree: &git2::Tree<'_>, path: &str) -> bool {
    let on_disk = checkout.join(path);
    match tree.get_path(Path::new(path)) {
        Ok(entry)
            if entry.kind() == Some(git2::ObjectType::Blob) && entry.filemode() != 0o120000 =>
        {
            git2::Oid::hash_file(git2::ObjectType::Blob, &on_disk)
                .is_ok_and(|oid| oid == entry.id())
        }
        Ok(_) => true,
        Err(_) => std::fs::symlink_metadata(&on_disk).is_err(),
    }
}

fn git_command(repository: &Path, args: &[&str]) -> Result<String, MissionError> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(repository)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| MissionError::LandFailed(format!("cannot run git: {error}")))?;
    if !output.status.success() {
        return Err(MissionError::LandFailed(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn open_pull_request(
    repository: &Path,
    request: &LandRequest,
    message: &str,
) -> Result<String, MissionError> {
    let title = message.lines().next().unwrap_or(&request.mission_branch);
    let args = [
        "pr",
        "create",
        "--base",
        request.target_branch.as_str(),
        "--head",
        request.mission_branch.as_str(),
        "--title",
        title,
        "--body",
        message,
    ];
    match std::process::Command::new("gh")
        .args(args)
        .current_dir(repository)
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(output) if output.status.success() => {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
        }
        Ok(output) => Err(MissionError::LandFailed(format!(
            "the branch {} was pushed, but `gh pr create` failed: {}",
            request.mission_branch,
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
        Err(_) => Ok(format!(
            "gh is not installed; open the pull request with: gh pr create --base {} --head {} --title {title:?}",
            request.target_branch, request.mission_branch,
        )),
    }
}

/// A landing whose objects are written and whose references have not moved yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub previous_target_revision: String,
    pub landed_revision: String,
    pub mission_revision: String,
    pub checkout: Option<PathBuf>,
    /// The paths the landing changes in the target (what the checkout's move writes).
    pub written: Vec<String>,
}

/// Writes the landing's commits and checks it can go through, moving no reference and
/// no file. `message` carries the trailers.
pub fn prepare(request: &LandRequest, message: &str) -> Result<Prepared, MissionError> {
    let repository = open(&request.repository_root)?;
    let worktree = open(&request.worktree_path)?;
    let signature = author(&repository)?;
    let target = target_commit(&repository, &request.target_branch)?;
    let mission_revision = mission_commit(&worktree, &signature, message)?;
    let mission_tip = repository
        .find_commit(mission_revision)
        .map_err(|error| failed("cannot read the mission's commit", error))?;
    if request.pull_request {
        return Ok(Prepared {
            previous_target_revision: target.id().to_string(),
            landed_revision: mission_revision.to_string(),
            mission_revision: mission_revision.to_string(),
            checkout: None,
            written: Vec::new(),
        });
    }
    let landed = integrate(
        &repository,
        request,
        &signature,
        message,
        &target,
        &mission_tip,
    )?;
    let landed_commit = repository
        .find_commit(landed)
        .map_err(|error| failed("cannot read the landed commit", error))?;
    let written = changed_paths(&repository, &tree_of(&target)?, &tree_of(&landed_commit)?)?;
    let checkout = clean_checkout(&repository, request, &written)?;
    Ok(Prepared {
        previous_target_revision: target.id().to_string(),
        landed_revision: landed.to_string(),
        mission_revision: mission_revision.to_string(),
        checkout,
        written,
    })
}

/// What [`apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub pushed_to: Option<String>,
    pub pull_request: Option<String>,
    /// What went wrong after the target branch moved (the landing stands).
    pub problem: Option<String>,
}

fn oid(text: &str) -> Result<git2::Oid, MissionError> {
    git2::Oid::from_str(text).map_err(|error| failed("a revision is not an object id", error))
}

/// Moves the target branch to the prepared commit (one compare-and-swap reference
/// update), then the checkout that has it checked out, then pushes. A failure before the
/// branch moved is an error and nothing changed; one after it is reported in `problem`.
pub fn apply(request: &LandRequest, prepared: &Prepared) -> Result<Applied, MissionError> {
    let repository = open(&request.repository_root)?;
    if request.pull_request {
        let remote = request.push_remote.as_deref().unwrap_or("origin");
        git_command(
            &request.repository_root,
            &[
                "push",
                "--",
                remote,
                &format!(
                    "{}:refs/heads/{}",
                    prepared.mission_revision, request.mission_branch
                ),
            ],
        )?;
        let message = repository
            .find_commit(oid(&prepared.mission_revision)?)
            .map_err(|error| failed("cannot read the mission's commit", error))?
            .message()
            .unwrap_or("")
            .to_string();
        return match open_pull_request(&request.repository_root, request, &message) {
            Ok(pull_request) => Ok(Applied {
                pushed_to: Some(remote.to_string()),
                pull_request: Some(pull_request),
                problem: None,
            }),
            Err(error) => Ok(Applied {
                pushed_to: Some(remote.to_string()),
                pull_request: None,
                problem: Some(error.to_string()),
            }),
        };
    }
    if let Some(checkout) = &prepared.checkout {
        let dirty = landed_paths_changed(checkout, &prepared.written)?;
        if !dirty.is_empty() {
            return Err(refuse_dirty(checkout, &dirty));
        }
    }
    let reference = format!("refs/heads/{}", request.target_branch);
    repository
        .reference_matching(
            &reference,
            oid(&prepared.landed_revision)?,
            true,
            oid(&prepared.previous_target_revision)?,
            &format!("nagi: land {}", request.mission_branch),
        )
        .map_err(|error| {
            failed(
                &format!(
                    "the branch `{}` could not be moved (it may have moved meanwhile; land again)",
                    request.target_branch
                ),
                error,
            )
        })?;
    crate::faults::pause_at("land_branch_moved");
    let mut problems = Vec::new();
    if let Some(checkout) = &prepared.checkout
        && let Err(error) =
            move_checkout(checkout, oid(&prepared.landed_revision)?, &prepared.written)
    {
        problems.push(error.to_string());
    }
    let pushed_to = match &request.push_remote {
        Some(remote) => match git_command(
            &request.repository_root,
            &["push", "--", remote, &format!("{reference}:{reference}")],
        ) {
            Ok(_) => Some(remote.clone()),
            Err(error) => {
                problems.push(format!("landed, but not pushed: {error}"));
                None
            }
        },
        None => None,
    };
    Ok(Applied {
        pushed_to,
        pull_request: None,
        problem: (!problems.is_empty()).then(|| problems.join("; ")),
    })
}

/// What recovery found of a landing a crash interrupted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// The target branch has the landed commit: the landing stands (the checkout was
    /// moved to it again, if it has the branch checked out).
    Finished,
    /// The target branch never moved: nothing landed.
    RolledBack,
}

/// Finishes or rolls back an interrupted landing. `checkout` is the checkout that had
/// the target checked out when it was prepared.
pub fn recover(
    repository_root: &Path,
    target_branch: &str,
    previous_target_revision: &str,
    landed_revision: &str,
    checkout: Option<&Path>,
) -> Result<Recovered, MissionError> {
    let repository = open(repository_root)?;
    clear_stale_lock(
        &repository
            .commondir()
            .join(format!("refs/heads/{target_branch}.lock")),
    );
    let current = target_commit(&repository, target_branch)?.id();
    let landed = oid(landed_revision)?;
    if current == landed {
        if let Some(checkout) = checkout
            && current_branch(checkout).as_deref() == Some(target_branch)
        {
            let previous = repository
                .find_commit(oid(previous_target_revision)?)
                .map_err(|error| failed("cannot read the previous target", error))?;
            let landed_commit = repository
                .find_commit(landed)
                .map_err(|error| failed("cannot read the landed commit", error))?;
            let written =
                changed_paths(&repository, &tree_of(&previous)?, &tree_of(&landed_commit)?)?;
            if let Ok(checkout_repository) = git2::Repository::open(checkout) {
                clear_stale_lock(&checkout_repository.path().join("index.lock"));
            }
            move_checkout(checkout, landed, &written)?;
        }
        return Ok(Recovered::Finished);
    }
    if repository
        .graph_descendant_of(current, landed)
        .unwrap_or(false)
    {
        return Ok(Recovered::Finished);
    }
    Ok(Recovered::RolledBack)
}

/// A git lock file left by a process killed while it held it. A live git command holds
/// its lock for moments: one still there after ten seconds is taken as stale and removed.
fn clear_stale_lock(lock: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::symlink_metadata(lock).is_ok() {
        if std::time::Instant::now() >= deadline {
            let _ = std::fs::remove_file(lock);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The branch HEAD of `checkout` names, or `None` when it is detached.
pub fn current_branch(checkout: &Path) -> Option<String> {
    let repository = git2::Repository::open(checkout).ok()?;
    let head = repository.find_reference("HEAD").ok()?;
    head.symbolic_target()
        .ok()
        .flatten()?
        .strip_prefix("refs/heads/")
        .map(str::to_string)
}
