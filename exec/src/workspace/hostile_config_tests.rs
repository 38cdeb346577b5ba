//! A repository whose own Git configuration names a program in every place git
//! would run one: nagi's git runs none of them, and the scan still sees the
//! changes (the files compared as stored).

use super::hostile_config_fixture::HostileGitConfig;
use super::tests::TestRepository;
use super::*;

fn assert_nothing_ran(fixture: &HostileGitConfig, during: &str) {
    let ran = fixture.programs_that_ran();
    assert!(
        ran.is_empty(),
        "programs named by the repository ran during {during}: {ran:#?}"
    );
}

#[test]
fn no_program_named_by_the_repository_config_runs_in_any_git_command_of_the_engine() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    let scratch = tempfile::tempdir().unwrap();
    let fixture = HostileGitConfig::plant(&repository.root(), scratch.path());

    let snapshot = scan_workspace(&repository.root(), &ScanConfig::default());
    assert_nothing_ran(&fixture, "the workspace scan");
    let snapshot = snapshot.unwrap();
    for file in HostileGitConfig::stirred_files() {
        let entry = snapshot
            .entries
            .iter()
            .find(|entry| entry.path == *file)
            .unwrap();
        assert_eq!(entry.disposition, Disposition::Unstaged, "{file}");
    }

    let with_ignored = scan_workspace(
        &repository.root(),
        &ScanConfig {
            include_ignored: true,
            ..ScanConfig::default()
        },
    );
    assert_nothing_ran(&fixture, "the scan with ignored files");
    with_ignored.unwrap();

    let handoff = handoff_diff(&repository.root(), &base, &ScanConfig::default());
    assert_nothing_ran(&fixture, "the handoff diff");
    let (_, diff) = handoff.unwrap();
    for file in HostileGitConfig::stirred_files() {
        assert!(
            diff.changed_paths.contains(&file.to_string()),
            "{file} missing from {:?}",
            diff.changed_paths
        );
    }
    assert!(diff.stat.contains("hostile/clean.txt"), "{}", diff.stat);

    // The other entry points of the module: checkout location and commits.
    let git = GitRunner::new(&GitConfig::default()).unwrap();
    locate_checkout(&repository.root()).unwrap();
    head_commit(&git, &repository.root()).unwrap();
    verify_commit(&git, &repository.root(), &base).unwrap();
    checkout_of_same_repository(&repository.root(), &repository.root()).unwrap();
    assert_nothing_ran(&fixture, "locating the checkout and reading commits");
}

#[test]
fn a_required_filter_driver_fails_the_scan_by_name_and_runs_nothing() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    let scratch = tempfile::tempdir().unwrap();
    let fixture = HostileGitConfig::plant(&repository.root(), scratch.path());
    repository.git(&["config", "filter.CleanOnly.required", "true"]);

    let scanned = scan_workspace(&repository.root(), &ScanConfig::default());
    let handoff = handoff_diff(&repository.root(), &base, &ScanConfig::default());
    assert_nothing_ran(&fixture, "scans of a repository with a required filter");
    for error in [scanned.unwrap_err(), handoff.unwrap_err()] {
        assert!(
            matches!(&error, WorkspaceError::RequiredFilterDriver { driver } if driver == "CleanOnly"),
            "{error}"
        );
        assert!(
            error.to_string().contains("filter.CleanOnly.required"),
            "{error}"
        );
    }
}

#[test]
fn an_empty_filter_program_is_no_filter_so_contents_compare_as_stored() {
    // What the blanking relies on, checked against the git on this machine: a
    // filter whose clean command is empty leaves the bytes alone, so a file
    // whose bytes equal the index blob is clean even with a "filter" set.
    let repository = TestRepository::new();
    let scratch = tempfile::tempdir().unwrap();
    let fixture = HostileGitConfig::plant(&repository.root(), scratch.path());
    // Put the committed bytes back (with a new modification time): git must
    // compare contents and find them equal.
    for file in HostileGitConfig::stirred_files() {
        repository.write(file, &format!("contents of {file}\n"));
    }
    let snapshot = scan_workspace(&repository.root(), &ScanConfig::default());
    assert_nothing_ran(&fixture, "the scan");
    let snapshot = snapshot.unwrap();
    for file in HostileGitConfig::stirred_files() {
        let entry = snapshot
            .entries
            .iter()
            .find(|entry| entry.path == *file)
            .unwrap();
        assert_eq!(entry.disposition, Disposition::Tracked, "{file}");
    }
}
