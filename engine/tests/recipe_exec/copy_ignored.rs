//! Copying a recipe's ignored files into a real linked worktree, and making a mission's
//! worktree (its branch, the recipe's location, no program the repository's config names).

use std::os::unix::fs::PermissionsExt;

use crate::recipe_support::*;
use nagi_engine::recipe::exec::{CopyOutcome, RecipeExecError, copy_ignored};
use nagi_engine::recipe::validate_str;
use nagi_engine::worktrees::prepare_mission_worktree;

// ---- copy_ignored -------------------------------------------------------------------------

fn copy_recipe(paths: &[&str]) -> nagi_engine::recipe::ProjectRecipe {
    let list = paths
        .iter()
        .map(|path| format!("{path:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    validate_str(&format!(
        "schema = 1\n[worktree]\ncopy_ignored = [{list}]\n"
    ))
    .unwrap()
}

fn refusal(
    result: Result<Vec<nagi_engine::recipe::exec::CopiedFile>, RecipeExecError>,
) -> (String, String) {
    match result {
        Err(RecipeExecError::CopyRefused { path, reason }) => (path, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn ignored_files_are_copied_with_their_permissions_and_missing_ones_skipped() {
    let repository = copy_test_repository();
    repository.write("config/local.toml", "db = 'dev'\n");
    std::fs::set_permissions(
        repository.path("config/local.toml"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let destination = tempfile::tempdir().unwrap();
    let copied = copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml", "fixtures/absent.json"]),
    )
    .unwrap();
    assert_eq!(copied[0].outcome, CopyOutcome::Copied);
    assert_eq!(copied[0].bytes, 11);
    assert_eq!(copied[1].outcome, CopyOutcome::MissingSource);
    let target = destination.path().join("config/local.toml");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "db = 'dev'\n");
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert!(
        !destination.path().join("fixtures").exists(),
        "nothing is created for a missing source"
    );
}

#[test]
fn a_file_reached_through_a_symlink_is_refused() {
    let repository = copy_test_repository();
    repository.write("real.toml", "x = 1\n");
    std::os::unix::fs::symlink("real.toml", repository.path("link.toml")).unwrap();
    std::fs::create_dir_all(repository.path("real_dir")).unwrap();
    repository.write("real_dir/inner.toml", "y = 2\n");
    std::os::unix::fs::symlink("real_dir", repository.path("confdir")).unwrap();
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["link.toml"]),
    ));
    assert_eq!(path, "link.toml");
    assert!(reason.contains("symbolic link"), "{reason}");
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["confdir/inner.toml"]),
    ));
    assert!(
        reason.contains("`confdir`") && reason.contains("symbolic link"),
        "{reason}"
    );
    // The destination must not redirect the copy either.
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), destination.path().join("config")).unwrap();
    repository.write("config/local.toml", "db = 1\n");
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml"]),
    ));
    assert!(
        reason.contains("new worktree") && reason.contains("symbolic link"),
        "{reason}"
    );
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
}

#[test]
fn files_over_the_size_limits_are_refused_before_anything_is_copied() {
    let repository = copy_test_repository();
    // Sparse files: the limits are checked on sizes, before any byte is read.
    let big = std::fs::File::create(repository.path("data.big")).unwrap();
    big.set_len(16 * 1024 * 1024 + 1).unwrap();
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["data.big"]),
    ));
    assert_eq!(path, "data.big");
    assert!(reason.contains("16 MiB"), "{reason}");
    let names: Vec<String> = (0..5).map(|index| format!("part{index}.big")).collect();
    for name in &names {
        std::fs::File::create(repository.path(name))
            .unwrap()
            .set_len(15 * 1024 * 1024)
            .unwrap();
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&refs),
    ));
    assert_eq!(path, "part4.big");
    assert!(reason.contains("64 MiB"), "{reason}");
    assert!(
        std::fs::read_dir(destination.path())
            .unwrap()
            .next()
            .is_none(),
        "nothing was copied"
    );
}

#[test]
fn a_file_git_does_not_ignore_is_refused_and_nothing_is_copied() {
    let repository = copy_test_repository();
    repository.write("config/local.toml", "db = 'dev'\n");
    repository.write("notes.txt", "untracked, not ignored\n");
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml", "notes.txt"]),
    ));
    assert_eq!(path, "notes.txt");
    assert!(reason.contains("not ignored by Git"), "{reason}");
    assert!(
        !destination.path().join("config/local.toml").exists(),
        "the refusal came before any copy"
    );
}

#[test]
fn identical_destinations_are_accepted_and_different_ones_refused() {
    let repository = copy_test_repository();
    // A tracked file arrives with the checkout: identical bytes, no ignore needed.
    let destination = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(destination.path().join("docs")).unwrap();
    std::fs::write(destination.path().join("docs/guide.md"), "# Guide\n").unwrap();
    let copied = copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["docs/guide.md"]),
    )
    .unwrap();
    assert_eq!(copied[0].outcome, CopyOutcome::AlreadyPresent);
    repository.write("config/local.toml", "db = 'dev'\n");
    std::fs::create_dir_all(destination.path().join("config")).unwrap();
    std::fs::write(
        destination.path().join("config/local.toml"),
        "db = 'other'\n",
    )
    .unwrap();
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml"]),
    ));
    assert!(reason.contains("different content"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(destination.path().join("config/local.toml")).unwrap(),
        "db = 'other'\n"
    );
}

// ---- the mission worktree -----------------------------------------------------------------

#[test]
fn the_mission_worktree_is_a_linked_checkout_on_its_branch_with_the_ignored_files() {
    let repository = copy_test_repository();
    repository.write("config/local.toml", "db = 'dev'\n");
    let recipe = copy_recipe(&["config/local.toml"]);
    let prepared = prepare_mission_worktree(&repository.root(), "m-1", Some(&recipe)).unwrap();
    assert!(prepared.worktree.created);
    assert_eq!(
        prepared.worktree.path,
        repository.root().join(".worktrees/m-1")
    );
    assert_eq!(
        git_in(
            &prepared.worktree.path,
            &["rev-parse", "--abbrev-ref", "HEAD"]
        ),
        "mission/m-1"
    );
    assert_eq!(
        git_in(&prepared.worktree.path, &["rev-parse", "HEAD"]),
        repository.head()
    );
    assert_eq!(
        std::fs::read_to_string(prepared.worktree.path.join("config/local.toml")).unwrap(),
        "db = 'dev'\n"
    );
    assert_eq!(
        std::fs::read_to_string(prepared.worktree.path.join("src/lib.rs")).unwrap(),
        repository_file(&repository, "src/lib.rs")
    );
    // Asking again finds the same worktree; the copy finds identical bytes.
    let again = prepare_mission_worktree(&repository.root(), "m-1", Some(&recipe)).unwrap();
    assert!(!again.worktree.created);
    assert_eq!(again.worktree.path, prepared.worktree.path);
    assert_eq!(again.copied[0].outcome, CopyOutcome::AlreadyPresent);
}

#[test]
fn an_existing_mission_branch_is_reused_and_the_recipe_location_is_honoured() {
    let repository = copy_test_repository();
    repository.git(&["branch", "mission/m-2"]);
    repository.write(
        "src/lib.rs",
        "pub fn login() -> &'static str { \"later\" }\n",
    );
    repository.git(&["commit", "-q", "-am", "later"]);
    let recipe = validate_str("schema = 1\n[worktree]\nlocation = \"trees/missions\"\n").unwrap();
    let prepared = prepare_mission_worktree(&repository.root(), "m-2", Some(&recipe)).unwrap();
    assert_eq!(
        prepared.worktree.path,
        repository.root().join("trees/missions/m-2")
    );
    assert_eq!(
        git_in(
            &prepared.worktree.path,
            &["rev-parse", "--abbrev-ref", "HEAD"]
        ),
        "mission/m-2"
    );
    assert_ne!(
        git_in(&prepared.worktree.path, &["rev-parse", "HEAD"]),
        repository.head(),
        "the existing branch keeps its commit"
    );
    let refused = prepare_mission_worktree(&repository.root(), "a:b", None).unwrap_err();
    assert!(
        refused.to_string().contains("cannot name the Git branch"),
        "{refused}"
    );
}

// The same hostile configuration the engine's scan tests plant.
#[path = "../../../exec/src/workspace/hostile_config_fixture.rs"]
mod hostile_config_fixture;

#[test]
fn creating_a_mission_worktree_runs_no_program_the_repository_config_names() {
    // libgit2 checks the new worktree out: it must run neither the smudge
    // filters nor the post-checkout hook the repository names, and the ignore
    // check of copy_ignored must run nothing either.
    let repository = copy_test_repository();
    let scratch = tempfile::tempdir().unwrap();
    let fixture =
        hostile_config_fixture::HostileGitConfig::plant(&repository.root(), scratch.path());
    repository.write("config/local.toml", "db = 'dev'\n");
    let recipe = copy_recipe(&["config/local.toml"]);
    let prepared = prepare_mission_worktree(&repository.root(), "m-h", Some(&recipe));
    let ran = fixture.programs_that_ran();
    assert!(
        ran.is_empty(),
        "programs named by the repository ran: {ran:#?}"
    );
    let prepared = prepared.unwrap();
    for file in hostile_config_fixture::HostileGitConfig::stirred_files() {
        assert_eq!(
            std::fs::read_to_string(prepared.worktree.path.join(file)).unwrap(),
            format!("contents of {file}\n"),
            "{file} is checked out as committed"
        );
    }
}

fn repository_file(repository: &TestRepository, path: &str) -> String {
    std::fs::read_to_string(repository.path(path)).unwrap()
}
