//! The cleared environment of a check command (contract §5.4).

use std::ffi::OsString;
use std::path::Path;

/// Variables copied from the server's environment when set; nothing else is.
pub const ALLOWED_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TERM",
    "COLORTERM",
    "LANG",
    "LC_ALL",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "BUN_INSTALL",
    "NVM_DIR",
    "GOPATH",
    "GOROOT",
    "SYSTEMROOT",
    "WINDIR",
    "PATHEXT",
];

/// Builds the command environment from `base` (normally the server's own):
/// the allowlisted variables, `PWD` = `cwd`, and `LC_ALL=C` when neither
/// `LANG` nor `LC_ALL` is set. Sorted by name, so it is deterministic.
pub fn check_environment(base: &[(OsString, OsString)], cwd: &Path) -> Vec<(OsString, OsString)> {
    let mut environment: Vec<(OsString, OsString)> = base
        .iter()
        .filter(|(name, _)| {
            name.to_str()
                .is_some_and(|name| ALLOWED_VARIABLES.contains(&name))
        })
        .cloned()
        .collect();
    environment.sort();
    environment.dedup_by(|later, earlier| later.0 == earlier.0);
    let has_locale = environment
        .iter()
        .any(|(name, _)| name == "LANG" || name == "LC_ALL");
    if !has_locale {
        environment.push(("LC_ALL".into(), "C".into()));
    }
    environment.push(("PWD".into(), cwd.as_os_str().to_owned()));
    environment.sort();
    environment
}
