//! The git work of the `worktree.*` methods, through libgit2 (no hooks, no filters from
//! outside the repository): find the repository a directory is in, list its checkouts,
//! add a linked checkout on a branch, and remove one while keeping its branch. Blocking.
//! `api::worktrees` puts workspaces around it.

use std::path::{Path, PathBuf};

use nagi_exec::workspace::checkout::{FindCheckoutError, find_checkout};

use nagi_schema::git_worktrees::{WorktreeInfo, WorktreeSourceInfo};
use nagi_schema::pane::WorkspaceWorktreeInfo;

use crate::errors::WorktreeError;

/// The repository a directory is in, and the checkout that holds the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryPlace {
    /// `<name>-<8 hex digits>`, as the repository's folder of nagi worktrees is named.
    pub key: String,
    pub name: String,
    /// The main checkout's root (the common dir of a bare repository).
    pub root: PathBuf,
    pub common_dir: PathBuf,
    /// The root of the checkout the directory is in.
    pub checkout: PathBuf,
}

/// One checkout of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutEntry {
    pub path: PathBuf,
    pub branch: Option<String>,
    pub is_bare: bool,
    pub is_detached: bool,
    pub is_prunable: bool,
    pub is_linked: bool,
    /// Why it is locked (`git worktree lock`), when it is.
    pub locked: Option<String>,
}

impl CheckoutEntry {
    pub fn info(&self, open_workspace_id: Option<String>) -> WorktreeInfo {
        let folder = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string());
        WorktreeInfo {
            path: self.path.display().to_string(),
            branch: self.branch.clone(),
            is_bare: self.is_bare,
            is_detached: self.is_detached,
            is_prunable: self.is_prunable,
            is_linked_worktree: self.is_linked,
            label: self.branch.clone().unwrap_or(folder),
            open_workspace_id,
        }
    }
}

impl RepositoryPlace {
    pub fn source(&self, source_workspace_id: Option<String>) -> WorktreeSourceInfo {
        WorktreeSourceInfo {
            repo_key: self.key.clone(),
            repo_name: self.name.clone(),
            repo_root: self.root.display().to_string(),
            source_checkout_path: self.checkout.display().to_string(),
            source_workspace_id,
        }
    }

    /// The provenance of a workspace open in `checkout`.
    pub fn provenance(&self, checkout: &Path) -> WorkspaceWorktreeInfo {
        WorkspaceWorktreeInfo {
            repo_key: self.key.clone(),
            repo_name: self.name.clone(),
            repo_root: self.root.display().to_string(),
            checkout_path: checkout.display().to_string(),
            is_linked_worktree: checkout != self.root,
        }
    }
}

fn git_message(error: &git2::Error) -> &str {
    error.message()
}

/// The repository `directory` (absolute, existing) is in.
pub fn repository_of(directory: &Path) -> Result<RepositoryPlace, WorktreeError> {
    let canonical = std::fs::canonicalize(directory).map_err(|error| {
        WorktreeError::NotACheckout(format!("cannot resolve {}: {error}", directory.display()))
    })?;
    let found = find_checkout(&canonical).map_err(|error| match error {
        FindCheckoutError::NotInCheckout { .. } => WorktreeError::NotACheckout(format!(
            "{} is not inside a Git checkout",
            canonical.display()
        )),
        FindCheckoutError::Bare { .. } => WorktreeError::NotACheckout(format!(
            "{} is a bare repository; give a directory of one of its checkouts",
            canonical.display()
        )),
        other => WorktreeError::Failed(other.to_string()),
    })?;
    let root = found
        .main_root()
        .map_err(|error| WorktreeError::Failed(error.to_string()))?;
    let checkout = found.root;
    let common_dir = found.common_dir;
    let folder = super::git::repository_folder(Path::new(""), &root, &common_dir);
    let key = folder.display().to_string();
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| key.clone());
    Ok(RepositoryPlace {
        key,
        name,
        root,
        common_dir,
        checkout,
    })
}

fn canonical_or_same(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The branch HEAD names (also when it has no commit yet), and whether HEAD is detached.
fn head_of(repository: &git2::Repository) -> (Option<String>, bool) {
    let detached = repository.head_detached().unwrap_or(false);
    if detached {
        return (None, true);
    }
    let branch = repository
        .find_reference("HEAD")
        .ok()
        .and_then(|head| head.symbolic_target().ok().flatten().map(str::to_string))
        .and_then(|target| target.strip_prefix("refs/heads/").map(str::to_string));
    (branch, false)
}

/// Every checkout of the repository: the main one first, then the linked ones by name.
pub fn checkouts(place: &RepositoryPlace) -> Result<Vec<CheckoutEntry>, WorktreeError> {
    let main = open(&place.common_dir)?;
    let mut entries = Vec::new();
    if main.is_bare() {
        entries.push(CheckoutEntry {
            path: place.common_dir.clone(),
            branch: None,
            is_bare: true,
            is_detached: false,
            is_prunable: false,
            is_linked: false,
            locked: None,
        });
    } else {
        let (branch, is_detached) = head_of(&main);
        entries.push(CheckoutEntry {
            path: place.root.clone(),
            branch,
            is_bare: false,
            is_detached,
            is_prunable: false,
            is_linked: false,
            locked: None,
        });
    }
    let names = main.worktrees().map_err(|error| {
        WorktreeError::Failed(format!(
            "cannot list the worktrees of {}: {}",
            place.root.display(),
            git_message(&error)
        ))
    })?;
    for name in names.iter().filter_map(|name| name.ok().flatten()) {
        let Ok(worktree) = main.find_worktree(name) else {
            continue;
        };
        let locked = match worktree.is_locked() {
            Ok(git2::WorktreeLockStatus::Locked(reason)) => {
                Some(reason.unwrap_or_else(|| "no reason given".into()))
            }
            _ => None,
        };
        let path = canonical_or_same(worktree.path());
        if worktree.validate().is_err() {
            entries.push(CheckoutEntry {
                path,
                branch: None,
                is_bare: false,
                is_detached: false,
                is_prunable: true,
                is_linked: true,
                locked,
            });
            continue;
        }
        let (branch, is_detached) = match git2::Repository::open_from_worktree(&worktree) {
            Ok(repository) => head_of(&repository),
            Err(_) => (None, false),
        };
        entries.push(CheckoutEntry {
            path,
            branch,
            is_bare: false,
            is_detached,
            is_prunable: false,
            is_linked: true,
            locked,
        });
    }
    Ok(entries)
}

fn open(path: &Path) -> Result<git2::Repository, WorktreeError> {
    git2::Repository::open(path).map_err(|error| {
        WorktreeError::Failed(format!(
            "cannot open the repository {}: {}",
            path.display(),
            git_message(&error)
        ))
    })
}

/// Refuses a name that cannot be a local branch.
pub fn check_branch_name(branch: &str) -> Result<(), WorktreeError> {
    if branch.len() > 200 || !git2::Reference::is_valid_name(&format!("refs/heads/{branch}")) {
        return Err(WorktreeError::InvalidParams(format!(
            "{branch:?} is not a valid branch name"
        )));
    }
    Ok(())
}

/// `worktree/<n>` for the first `n` that names no local branch.
pub fn unused_branch_name(place: &RepositoryPlace) -> Result<String, WorktreeError> {
    let repository = open(&place.common_dir)?;
    (1..10_000)
        .map(|number| format!("worktree/{number}"))
        .find(|name| {
            repository
                .find_branch(name, git2::BranchType::Local)
                .is_err()
        })
        .ok_or_else(|| WorktreeError::Failed("every worktree/<n> branch name is taken".into()))
}

/// A folder for a new checkout of `branch` under `folder`: the branch with `/` as `-`,
/// and `-2`, `-3`, … when that is taken.
pub fn unused_folder(folder: &Path, branch: &str) -> PathBuf {
    let stem: String = branch
        .chars()
        .map(|character| match character {
            '/' | '\\' => '-',
            other => other,
        })
        .collect();
    let first = folder.join(&stem);
    if std::fs::symlink_metadata(&first).is_err() {
        return first;
    }
    (2..)
        .map(|number| folder.join(format!("{stem}-{number}")))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_err())
        .expect("some suffix is free")
}

/// A checkout that [`add_checkout`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedCheckout {
    pub entry: CheckoutEntry,
    pub branch_created: bool,
}

/// Adds a linked checkout of `branch` at `target`: an existing local branch is checked
/// out (a `base` must then name its tip, or be absent), another is created from `base`
/// (a revision as the source checkout reads it; its `HEAD` when absent).
pub fn add_checkout(
    place: &RepositoryPlace,
    branch_name: &str,
    base: Option<&str>,
    target: &Path,
) -> Result<AddedCheckout, WorktreeError> {
    check_branch_name(branch_name)?;
    if let Some(holder) = checkouts(place)?
        .into_iter()
        .find(|entry| entry.branch.as_deref() == Some(branch_name))
    {
        return Err(WorktreeError::Failed(format!(
            "the branch {branch_name} is checked out at {}; open that checkout with worktree.open (nagi worktree open --branch {branch_name})",
            holder.path.display()
        )));
    }
    match std::fs::read_dir(target).map(|mut entries| entries.next().is_none()) {
        Ok(false) => {
            return Err(WorktreeError::Failed(format!(
                "{} already exists and is not empty",
                target.display()
            )));
        }
        Ok(true) => std::fs::remove_dir(target).map_err(|error| {
            WorktreeError::Failed(format!("cannot use {}: {error}", target.display()))
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(WorktreeError::Failed(format!(
                "{} is in the way: {error}",
                target.display()
            )));
        }
    }
    let source = open(&place.checkout)?;
    let base_commit = base
        .map(|base| {
            source
                .revparse_single(base)
                .and_then(|object| object.peel_to_commit())
                .map_err(|error| {
                    WorktreeError::Failed(format!(
                        "the base {base:?} names no commit: {}",
                        git_message(&error)
                    ))
                })
        })
        .transpose()?;
    let (branch, branch_created) = match source.find_branch(branch_name, git2::BranchType::Local) {
        Ok(branch) => {
            let tip = branch.get().peel_to_commit().ok().map(|commit| commit.id());
            if let Some(base_commit) = &base_commit
                && tip != Some(base_commit.id())
            {
                return Err(WorktreeError::Failed(format!(
                    "the branch {branch_name} exists at another commit than the base {}; leave the base out to check the branch out as it is, or name a new branch",
                    base.unwrap_or_default()
                )));
            }
            (branch, false)
        }
        Err(_) => {
            let start = match base_commit {
                Some(commit) => commit,
                None => source
                    .head()
                    .and_then(|head| head.peel_to_commit())
                    .map_err(|error| {
                        WorktreeError::Failed(format!(
                            "HEAD of {} names no commit, so a new branch has nothing to start from: {}",
                            place.checkout.display(),
                            git_message(&error)
                        ))
                    })?,
            };
            let branch = source.branch(branch_name, &start, false).map_err(|error| {
                WorktreeError::Failed(format!(
                    "cannot create the branch {branch_name}: {}",
                    git_message(&error)
                ))
            })?;
            (branch, true)
        }
    };
    let undo_branch = |source: &git2::Repository| {
        if branch_created
            && let Ok(mut made) = source.find_branch(branch_name, git2::BranchType::Local)
        {
            let _ = made.delete();
        }
    };
    if let Some(parent) = target.parent()
        && let Err(error) = std::fs::create_dir_all(parent)
    {
        undo_branch(&source);
        return Err(WorktreeError::Failed(format!(
            "cannot create {}: {error}",
            parent.display()
        )));
    }
    let name = unused_worktree_name(&source, target);
    let mut options = git2::WorktreeAddOptions::new();
    options.reference(Some(branch.get()));
    if let Err(error) = source.worktree(&name, target, Some(&options)) {
        undo_branch(&source);
        return Err(WorktreeError::Failed(format!(
            "git worktree add failed: {}",
            git_message(&error)
        )));
    }
    Ok(AddedCheckout {
        entry: CheckoutEntry {
            path: canonical_or_same(target),
            branch: Some(branch_name.to_string()),
            is_bare: false,
            is_detached: false,
            is_prunable: false,
            is_linked: true,
            locked: None,
        },
        branch_created,
    })
}

/// A name for git's record of a new worktree (`.git/worktrees/<name>`): the folder's name,
/// made unique.
fn unused_worktree_name(repository: &git2::Repository, target: &Path) -> String {
    let stem: String = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "worktree".into())
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || "-_.".contains(character) {
                character
            } else {
                '-'
            }
        })
        .collect();
    let stem = stem.trim_start_matches('.').to_string();
    let stem = if stem.is_empty() {
        "worktree".into()
    } else {
        stem
    };
    std::iter::once(stem.clone())
        .chain((2..).map(|number| format!("{stem}-{number}")))
        .find(|name| repository.find_worktree(name).is_err())
        .expect("some suffix is free")
}

/// At most this many paths are named in a refusal.
const NAMED_PATHS: usize = 10;

/// Files of the checkout at `path` that differ from its HEAD, untracked ones included and
/// ignored ones not.
pub fn dirty_files(path: &Path) -> Result<Vec<String>, WorktreeError> {
    let repository = open(path)?;
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repository.statuses(Some(&mut options)).map_err(|error| {
        WorktreeError::Failed(format!(
            "cannot read the status of {}: {}",
            path.display(),
            git_message(&error)
        ))
    })?;
    Ok(statuses
        .iter()
        .filter_map(|entry| entry.path().ok().map(str::to_string))
        .collect())
}

/// Whether the checkout may be removed: never the main checkout or a locked one; without
/// `force`, not one with uncommitted or untracked files (they are named).
pub fn check_removable(entry: &CheckoutEntry, force: bool) -> Result<(), WorktreeError> {
    if !entry.is_linked {
        return Err(WorktreeError::Failed(format!(
            "{} is the repository's main checkout; worktree.remove removes linked worktrees only",
            entry.path.display()
        )));
    }
    if let Some(reason) = &entry.locked {
        return Err(WorktreeError::Failed(format!(
            "{} is locked ({reason}); unlock it with `git worktree unlock {}` first",
            entry.path.display(),
            entry.path.display()
        )));
    }
    if force || entry.is_prunable {
        return Ok(());
    }
    let dirty = dirty_files(&entry.path)?;
    if dirty.is_empty() {
        return Ok(());
    }
    let named: Vec<&str> = dirty.iter().take(NAMED_PATHS).map(String::as_str).collect();
    let more = dirty.len().saturating_sub(NAMED_PATHS);
    Err(WorktreeError::Dirty(format!(
        "{} has {} uncommitted or untracked file{}: {}{}; commit them, or remove with force to delete them",
        entry.path.display(),
        dirty.len(),
        if dirty.len() == 1 { "" } else { "s" },
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )))
}

/// Removes the linked checkout at `entry.path`: its folder, then git's record of it. The
/// branch stays. [`check_removable`] says whether it may.
pub fn remove_checkout(
    place: &RepositoryPlace,
    entry: &CheckoutEntry,
) -> Result<(), WorktreeError> {
    if std::fs::symlink_metadata(&entry.path).is_ok() {
        std::fs::remove_dir_all(&entry.path).map_err(|error| {
            WorktreeError::Failed(format!("cannot remove {}: {error}", entry.path.display()))
        })?;
    }
    let main = open(&place.common_dir)?;
    let names = main
        .worktrees()
        .map_err(|error| WorktreeError::Failed(git_message(&error).to_string()))?;
    for name in names.iter().filter_map(|name| name.ok().flatten()) {
        if let Ok(worktree) = main.find_worktree(name)
            && canonical_or_same(worktree.path()) == entry.path
        {
            let mut prune = git2::WorktreePruneOptions::new();
            prune.valid(true).working_tree(false);
            worktree.prune(Some(&mut prune)).map_err(|error| {
                WorktreeError::Failed(format!(
                    "the folder is gone but git's record of it could not be pruned: {}",
                    git_message(&error)
                ))
            })?;
        }
    }
    Ok(())
}

/// Undoes [`add_checkout`] when what follows it fails: the checkout goes, and the branch
/// too when the add made it.
pub fn undo_add(place: &RepositoryPlace, added: &AddedCheckout) {
    if let Err(error) = remove_checkout(place, &added.entry) {
        tracing::warn!(%error, path = %added.entry.path.display(), "cannot undo a worktree made for a failed worktree.create");
        return;
    }
    if added.branch_created
        && let Some(branch) = &added.entry.branch
        && let Ok(repository) = open(&place.common_dir)
        && let Ok(mut made) = repository.find_branch(branch, git2::BranchType::Local)
    {
        let _ = made.delete();
    }
}
