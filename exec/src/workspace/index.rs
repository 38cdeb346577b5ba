//! Reading the index: modes, blob ids and flags of every tracked path.
//!
//! The real git binary reads it (`git ls-files -s -v -z`), on a second thread
//! while `git status` walks the tree, so every index version and extension git
//! supports is understood exactly as git understands it. (libgit2's
//! `Index::open` was measured as the alternative: on a 100,000-entry index it
//! cost two to three times as much CPU as `ls-files` plus our parse, and on
//! two cores that CPU is taken from the concurrent status walk.)

use std::path::Path;

use super::WorkspaceError;
use super::git::GitRunner;
use super::porcelain::{IndexEntry, parse_index};

/// Index entries of the checkout, in index (bytewise path) order.
pub fn read_index(
    git: &GitRunner,
    checkout_root: &Path,
) -> Result<Vec<IndexEntry>, WorkspaceError> {
    let output = git.run(checkout_root, &["ls-files", "-s", "-v", "-z"])?;
    parse_index(&output)
}
