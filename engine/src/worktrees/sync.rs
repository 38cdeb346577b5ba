//! Syncing a mission branch (`mission.sync`): its commits are replayed onto the current
//! tip of a branch (as `git rebase` does), and the worktree's uncommitted changes are
//! carried over onto the result (as a stash and pop would). Everything is computed in
//! memory first, so a conflict changes nothing and names the paths; then the branch moves
//! with one compare-and-swap reference update and the worktree's changed files are
//! written, its index following the new tip (uncommitted changes stay uncommitted).

use std::path::PathBuf;

use nagi_mission::MissionError;

use super::merging::{
    author, failed, merge_in_memory, open, replay_onto, target_commit, tree_of, worktree_tree,
};

#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub repository_root: PathBuf,
    pub worktree_path: PathBuf,
    pub mission_branch: String,
    pub onto: String,
}

/// What a sync would do or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncOutcome {
    /// The tip of `onto` the branch is (or would be) rebased on.
    pub onto_revision: String,
    /// Commits of the mission branch that `onto` does not have.
    pub commits: usize,
    /// `true` when the branch already contains `onto`'s tip: nothing to do.
    pub up_to_date: bool,
    /// The mission branch's tip before the sync.
    pub previous_head: String,
    /// The mission branch's tip after the sync (in a preview: as it would be now; the
    /// replayed commits carry the time they are made).
    pub new_head: String,
}

struct Planned<'r> {
    onto: git2::Commit<'r>,
    head: git2::Commit<'r>,
    commits: usize,
    up_to_date: bool,
}

impl Planned<'_> {
    fn outcome(&self, new_head: git2::Oid) -> SyncOutcome {
        SyncOutcome {
            onto_revision: self.onto.id().to_string(),
            commits: self.commits,
            up_to_date: self.up_to_date,
            previous_head: self.head.id().to_string(),
            new_head: new_head.to_string(),
        }
    }
}

fn plan<'r>(
    repository: &'r git2::Repository,
    worktree: &git2::Repository,
    request: &SyncRequest,
) -> Result<Planned<'r>, MissionError> {
    let onto = target_commit(repository, &request.onto)?;
    let head_id = worktree
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|error| failed("cannot read the mission branch", error))?
        .id();
    let head = repository
        .find_commit(head_id)
        .map_err(|error| failed("cannot read the mission branch", error))?;
    let base = repository
        .merge_base(onto.id(), head.id())
        .map_err(|error| failed("the mission branch and the target share no history", error))?;
    let (ahead, _) = repository
        .graph_ahead_behind(head.id(), onto.id())
        .map_err(|error| failed("cannot compare the branches", error))?;
    Ok(Planned {
        up_to_date: base == onto.id(),
        commits: ahead,
        onto,
        head,
    })
}

/// What [`sync`] would do, refusing a conflict, without writing anything visible.
pub fn inspect(request: &SyncRequest) -> Result<SyncOutcome, MissionError> {
    let repository = open(&request.repository_root)?;
    let worktree = open(&request.worktree_path)?;
    let planned = plan(&repository, &worktree, request)?;
    if planned.up_to_date {
        return Ok(planned.outcome(planned.head.id()));
    }
    let rebased = rebased(&repository, &worktree, request, &planned)?;
    Ok(planned.outcome(rebased.new_head))
}

struct Rebased {
    new_head: git2::Oid,
    /// What the worktree holds now, as `git add -A` would stage it.
    uncommitted: git2::Oid,
    /// What it will hold: its uncommitted changes on the new head.
    carried: git2::Oid,
}

/// The rebased tip and the tree the worktree will hold (its uncommitted changes on it).
fn rebased(
    repository: &git2::Repository,
    worktree: &git2::Repository,
    request: &SyncRequest,
    planned: &Planned<'_>,
) -> Result<Rebased, MissionError> {
    let signature = author(repository)?;
    let new_head = replay_onto(
        repository,
        &planned.head,
        &planned.onto,
        &signature,
        &request.onto,
        None,
    )?;
    let new_head_commit = repository
        .find_commit(new_head)
        .map_err(|error| failed("cannot read the rebased branch", error))?;
    let uncommitted = worktree_tree(worktree)?;
    let carried = merge_in_memory(
        repository,
        &tree_of(&planned.head)?,
        &tree_of(&new_head_commit)?,
        &repository
            .find_tree(uncommitted)
            .map_err(|error| failed("cannot read the worktree's tree", error))?,
        &request.onto,
    )?;
    Ok(Rebased {
        new_head,
        uncommitted,
        carried,
    })
}

/// Rebases the mission branch onto `request.onto` and carries the worktree's uncommitted
/// changes over. Blocking.
pub fn sync(request: &SyncRequest) -> Result<SyncOutcome, MissionError> {
    let repository = open(&request.repository_root)?;
    let worktree = open(&request.worktree_path)?;
    let planned = plan(&repository, &worktree, request)?;
    if planned.up_to_date {
        return Ok(planned.outcome(planned.head.id()));
    }
    let Rebased {
        new_head,
        uncommitted,
        carried,
    } = rebased(&repository, &worktree, request, &planned)?;
    let worktree_now = worktree
        .find_tree(uncommitted)
        .map_err(|error| failed("cannot read the worktree's tree", error))?;
    // Looked up through the worktree's own handle: its checkout writes it.
    let carried_tree = worktree
        .find_tree(carried)
        .map_err(|error| failed("cannot read the carried tree", error))?;
    let new_head_commit = worktree
        .find_commit(new_head)
        .map_err(|error| failed("cannot read the rebased branch", error))?;
    // The files to write: those that differ between what the worktree holds now and
    // what it will hold.
    let diff = worktree
        .diff_tree_to_tree(Some(&worktree_now), Some(&carried_tree), None)
        .map_err(|error| failed("cannot compare the worktree", error))?;
    let paths: Vec<String> = diff
        .deltas()
        .filter_map(|delta| delta.new_file().path().or(delta.old_file().path()))
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    worktree
        .reference_matching(
            &format!("refs/heads/{}", request.mission_branch),
            new_head,
            true,
            planned.head.id(),
            &format!("nagi: sync onto {}", request.onto),
        )
        .map_err(|error| failed("the mission branch moved meanwhile; sync again", error))?;
    if !paths.is_empty() {
        let mut builder = git2::build::CheckoutBuilder::new();
        builder.force().disable_pathspec_match(true);
        for path in &paths {
            builder.path(path.as_str());
        }
        worktree
            .checkout_tree(carried_tree.as_object(), Some(&mut builder))
            .map_err(|error| {
                failed(
                    "the mission branch moved, but the worktree's files could not be written; run `git reset --hard` and `git stash pop` there by hand",
                    error,
                )
            })?;
    }
    let mut index = worktree
        .index()
        .map_err(|error| failed("cannot read the worktree's index", error))?;
    index
        .read_tree(&tree_of(&new_head_commit)?)
        .and_then(|()| index.write())
        .map_err(|error| failed("cannot write the worktree's index", error))?;
    Ok(planned.outcome(new_head))
}
