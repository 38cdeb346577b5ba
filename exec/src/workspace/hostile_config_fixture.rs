//! Test fixture: a repository whose own Git configuration names a program in
//! every place git would run one, each program leaving its own marker file.
//!
//! Shared by the engine's scan tests and the end-to-end tests (which include
//! this file by path), so both plant exactly the same set. Only `std` here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Program-naming configuration entries planted in `.git/config`; the value
/// of each is the path of its own marker-writing script (`!`-prefixed where
/// git wants a shell command).
const PLANTED_ENTRIES: &[&str] = &[
    "filter.CleanOnly.clean",
    "filter.CleanOnly.smudge",
    "filter.processOnly.process",
    "filter.a=b.clean",
    "filter.a=b.smudge",
    "diff.evil.command",
    "diff.evil.textconv",
    "diff.external",
    "merge.evil.driver",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshCommand",
    "core.askPass",
    "core.gitProxy",
    "core.alternateRefsCommand",
    "pager.status",
    "pager.diff",
    "sequence.editor",
    "credential.helper",
    "credential.https://example.invalid.helper",
    "gpg.program",
    "gpg.ssh.program",
    "gpg.ssh.defaultKeyCommand",
    "interactive.diffFilter",
    "difftool.evil.cmd",
    "mergetool.evil.cmd",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
    "uploadpack.packObjectsHook",
    "imap.tunnel",
    "sendemail.sendmailCmd",
    "web.browser",
    "man.viewer",
    "hook.evil.command",
];

/// Entries planted in files the repository's config includes: one through
/// `include.path`, one through `includeIf "gitdir:…"`.
const INCLUDED_ENTRIES: &[(&str, &str)] = &[
    ("include.path", "filter.included.clean"),
    ("includeIf", "filter.conditional.clean"),
];

/// `.git/info/attributes`: every path gets the diff and merge driver; the
/// filters go by extension (info/attributes outranks `.gitattributes`, so
/// the extensions that the in-tree file names are left alone here).
const INFO_ATTRIBUTES: &str =
    "* diff=evil merge=evil\n*.txt filter=CleanOnly\n*.md filter=processOnly\n";

/// In-tree `.gitattributes` (left untracked, which git honours just the same).
const TREE_ATTRIBUTES: &str = "*.rs filter=a=b\n*.sh filter=included\n*.toml filter=conditional\n";

/// Tracked files the fixture adds, one per filter driver.
const STIRRED_FILES: &[&str] = &[
    "hostile/clean.txt",
    "hostile/process.md",
    "hostile/equals.rs",
    "hostile/included.sh",
    "hostile/conditional.toml",
];

const HOOKS: &[&str] = &[
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "fsmonitor-watchman",
    "pre-auto-gc",
];

pub struct HostileGitConfig {
    markers: PathBuf,
}

fn run_git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn label(key: &str) -> String {
    key.chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character
            } else {
                '_'
            }
        })
        .collect()
}

impl HostileGitConfig {
    /// Commits one file per filter driver in the checkout at `root` (clean),
    /// then plants the configuration, attributes and hooks, then changes every
    /// fixture file in place: same size, different bytes, an older
    /// modification time, so that git must compare contents (running a clean
    /// filter, were one honoured). Scripts and markers live in `scratch`.
    pub fn plant(root: &Path, scratch: &Path) -> HostileGitConfig {
        let markers = scratch.join("markers");
        let scripts = scratch.join("scripts");
        std::fs::create_dir_all(&markers).unwrap();
        std::fs::create_dir_all(&scripts).unwrap();
        for file in STIRRED_FILES {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("contents of {file}\n")).unwrap();
        }
        run_git(root, &["add", "--", "hostile"]);
        run_git(root, &["commit", "-q", "-m", "hostile fixture files"]);

        let write_script = |name: &str| -> String {
            use std::os::unix::fs::PermissionsExt;
            let script = scripts.join(name);
            let marker = markers.join(format!("ran-{name}"));
            // A filter that did run passes its input through, so git's own
            // result stays the same and only the marker tells.
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncase \"$0\" in *filter_*) exec cat;; esac\nexit 0\n",
                    marker.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            script.display().to_string()
        };

        let git_dir = PathBuf::from(run_git(root, &["rev-parse", "--absolute-git-dir"]));
        let common_dir = PathBuf::from(run_git(
            root,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ));
        for key in PLANTED_ENTRIES {
            let script = write_script(&label(key));
            let value = if key.starts_with("credential.") || key.starts_with("alias.") {
                format!("!{script}")
            } else {
                script
            };
            run_git(root, &["config", key, &value]);
        }
        let alias_script = write_script("alias_status");
        run_git(
            root,
            &["config", "alias.status", &format!("!{alias_script}")],
        );
        for (include_kind, included_key) in INCLUDED_ENTRIES {
            let script = write_script(&label(included_key));
            let included_file = scratch.join(format!("{}.gitconfig", label(included_key)));
            let (section, rest) = included_key.split_once('.').unwrap();
            let (driver, variable) = rest.rsplit_once('.').unwrap();
            std::fs::write(
                &included_file,
                format!("[{section} \"{driver}\"]\n\t{variable} = {script}\n"),
            )
            .unwrap();
            let include_key = if *include_kind == "include.path" {
                "include.path".to_owned()
            } else {
                // `gitdir:<dir>/` matches every git dir below `<dir>`.
                format!(
                    "includeIf.gitdir:{}/.path",
                    git_dir.parent().unwrap().display()
                )
            };
            run_git(
                root,
                &["config", &include_key, included_file.to_str().unwrap()],
            );
        }
        let hooks_path = scratch.join("hooks");
        std::fs::create_dir_all(&hooks_path).unwrap();
        std::fs::create_dir_all(common_dir.join("hooks")).unwrap();
        for hook in HOOKS {
            let script = write_script(&format!("hook_{}", label(hook)));
            std::fs::copy(&script, hooks_path.join(hook)).unwrap();
            std::fs::copy(&script, common_dir.join("hooks").join(hook)).unwrap();
        }
        run_git(
            root,
            &["config", "core.hooksPath", hooks_path.to_str().unwrap()],
        );
        std::fs::create_dir_all(common_dir.join("info")).unwrap();
        std::fs::write(common_dir.join("info/attributes"), INFO_ATTRIBUTES).unwrap();
        std::fs::write(root.join(".gitattributes"), TREE_ATTRIBUTES).unwrap();

        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for file in STIRRED_FILES {
            let path = root.join(file);
            let same_size: String = format!("contents of {file}\n")
                .chars()
                .map(|character| if character == '\n' { '\n' } else { 'X' })
                .collect();
            std::fs::write(&path, same_size).unwrap();
            let handle = std::fs::File::options().write(true).open(&path).unwrap();
            handle.set_modified(an_hour_ago).unwrap();
        }
        HostileGitConfig { markers }
    }

    /// The fixture files, all changed since the commit.
    pub fn stirred_files() -> &'static [&'static str] {
        STIRRED_FILES
    }

    /// `marker: what ran` for every planted program that ran; empty when none.
    pub fn programs_that_ran(&self) -> Vec<String> {
        let mut ran: Vec<String> = std::fs::read_dir(&self.markers)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                format!(
                    "{}: {}",
                    entry.file_name().to_string_lossy(),
                    std::fs::read_to_string(entry.path())
                        .unwrap_or_default()
                        .trim()
                )
            })
            .collect();
        ran.sort();
        ran
    }
}
