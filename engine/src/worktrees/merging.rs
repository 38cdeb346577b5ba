//! The git steps shared by landing (`land.rs`) and syncing (`sync.rs`) a mission branch,
//! through libgit2: the worktree's tree as `git add -A` would stage it (objects only),
//! the target branch's tip, an in-memory three-way merge that names the conflicting
//! paths, and replaying a branch's commits onto another commit.

use std::collections::BTreeSet;
use std::path::Path;

use nagi_mission::MissionError;

pub fn failed(what: &str, error: git2::Error) -> MissionError {
    MissionError::LandFailed(format!("{what}: {}", error.message()))
}

pub fn open(path: &Path) -> Result<git2::Repository, MissionError> {
    git2::Repository::open(path).map_err(|error| {
        failed(
            &format!("cannot open the repository {}", path.display()),
            error,
        )
    })
}

/// The tree of the worktree as `git add -A` would stage it, written as objects only: the
/// worktree's own index file is not touched. Staged by git itself with a private copy of
/// the index (its preloaded, threaded index refresh is what a person's `git add -A` costs).
pub fn worktree_tree(worktree: &git2::Repository) -> Result<git2::Oid, MissionError> {
    staged(worktree, false)
}

/// [`worktree_tree`], keeping the staged index in the worktree's git folder for
/// `land::finish_mission_branch`.
pub fn worktree_tree_keeping_index(worktree: &git2::Repository) -> Result<git2::Oid, MissionError> {
    staged(worktree, true)
}

fn staged(worktree: &git2::Repository, keep_index: bool) -> Result<git2::Oid, MissionError> {
    use nagi_exec::workspace::staging;
    let root = worktree.workdir().ok_or_else(|| {
        MissionError::LandFailed("the mission worktree has no working directory".into())
    })?;
    let config = Default::default();
    let tree = if keep_index {
        staging::staged_tree_keeping_index(root, &config, worktree.path())
    } else {
        staging::staged_tree(root, &config)
    }
    .map_err(|error| MissionError::LandFailed(format!("cannot stage the worktree: {error}")))?;
    git2::Oid::from_str(&tree).map_err(|error| failed("git gave no tree id", error))
}

pub fn target_commit<'r>(
    repository: &'r git2::Repository,
    branch: &str,
) -> Result<git2::Commit<'r>, MissionError> {
    repository
        .find_branch(branch, git2::BranchType::Local)
        .map_err(|_| {
            MissionError::LandFailed(format!(
                "the target branch `{branch}` does not exist; give an existing branch with --into"
            ))
        })?
        .get()
        .peel_to_commit()
        .map_err(|error| failed(&format!("the branch `{branch}` has no commit"), error))
}

/// Merges `theirs` into `ours` over `ancestor`, in memory; the paths of any conflict are
/// a `land_conflict`.
pub fn merge_in_memory(
    repository: &git2::Repository,
    ancestor: &git2::Tree<'_>,
    ours: &git2::Tree<'_>,
    theirs: &git2::Tree<'_>,
    target_branch: &str,
) -> Result<git2::Oid, MissionError> {
    let mut merged = repository
        .merge_trees(ancestor, ours, theirs, None)
        .map_err(|error| failed("the merge could not be computed", error))?;
    if merged.has_conflicts() {
        let mut paths = BTreeSet::new();
        for conflict in merged
            .conflicts()
            .map_err(|error| failed("cannot read the conflicts", error))?
            .flatten()
        {
            if let Some(entry) = [conflict.our, conflict.their, conflict.ancestor]
                .into_iter()
                .flatten()
                .next()
            {
                paths.insert(String::from_utf8_lossy(&entry.path).into_owned());
            }
        }
        return Err(MissionError::LandConflict(format!(
            "the mission's change conflicts with `{target_branch}` in {}: nothing was changed; send the mission back to the agent or resolve it in its worktree, then land again",
            paths.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    merged
        .write_tree_to(repository)
        .map_err(|error| failed("cannot write the merged tree", error))
}

pub fn author(repository: &git2::Repository) -> Result<git2::Signature<'static>, MissionError> {
    repository.signature().map_err(|error| {
        MissionError::LandFailed(format!(
            "git has no author identity for the landed commit ({}); set it with `git config user.name` and `git config user.email`",
            error.message()
        ))
    })
}

/// Replays the commits of `tip` that `onto` does not have, oldest first, onto `onto`, as
/// `git rebase` does (authors kept, `signature` as committer). `last_trailers` is added to
/// the last commit's message when it has no `Nagi-Mission` trailer yet. A merge commit
/// cannot be replayed; a conflict names its paths.
pub fn replay_onto(
    repository: &git2::Repository,
    tip: &git2::Commit<'_>,
    onto: &git2::Commit<'_>,
    signature: &git2::Signature<'_>,
    onto_label: &str,
    last_trailers: Option<&str>,
) -> Result<git2::Oid, MissionError> {
    let mut walk = repository
        .revwalk()
        .map_err(|error| failed("cannot walk the mission branch", error))?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .and_then(|()| walk.push(tip.id()))
        .and_then(|()| walk.hide(onto.id()))
        .map_err(|error| failed("cannot walk the mission branch", error))?;
    let commits: Vec<git2::Oid> = walk
        .collect::<Result<_, _>>()
        .map_err(|error| failed("cannot walk the mission branch", error))?;
    let mut current = onto.clone();
    for (position, id) in commits.iter().enumerate() {
        let commit = repository
            .find_commit(*id)
            .map_err(|error| failed("cannot read a mission commit", error))?;
        if commit.parent_count() != 1 {
            return Err(MissionError::LandFailed(format!(
                "commit {id} on the mission branch is a merge; a rebase cannot replay it: land with --squash or --merge"
            )));
        }
        let parent = commit
            .parent(0)
            .map_err(|error| failed("cannot read a commit's parent", error))?;
        let merged = merge_in_memory(
            repository,
            &tree_of(&parent)?,
            &tree_of(&current)?,
            &tree_of(&commit)?,
            onto_label,
        )?;
        let tree = repository
            .find_tree(merged)
            .map_err(|error| failed("cannot read a replayed tree", error))?;
        let last = position + 1 == commits.len();
        let text = commit.message().unwrap_or("").to_string();
        let text = match last_trailers {
            Some(trailers) if last && !text.contains("Nagi-Mission:") => {
                format!("{}\n{trailers}", text.trim_end())
            }
            _ => text,
        };
        let replayed = repository
            .commit(None, &commit.author(), signature, &text, &tree, &[&current])
            .map_err(|error| failed("cannot write a replayed commit", error))?;
        current = repository
            .find_commit(replayed)
            .map_err(|error| failed("cannot read a replayed commit", error))?;
    }
    Ok(current.id())
}

pub fn tree_of<'r>(commit: &git2::Commit<'r>) -> Result<git2::Tree<'r>, MissionError> {
    commit
        .tree()
        .map_err(|error| failed("cannot read a commit's tree", error))
}
