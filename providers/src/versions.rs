//! Which versions of each vendor CLI an adapter supports, and how the installed one is read.
//!
//! The vendors release every week and change their flags between releases (Claude Code
//! 2.1.197 refuses `--permission-mode manual`, which 2.1.332 accepts). Each adapter therefore
//! states the oldest version its command line was tested with, the newest it was tested with,
//! and the first version it refuses (the next major version, where the vendor promises to
//! break things). The engine asks the installed CLI for `--version` before a run starts and
//! refuses anything outside the range with the version it found.
//!
//! An ACP agent is any program that speaks the protocol, so it has no range: the protocol
//! version is negotiated in `initialize` instead.

use std::fmt;

use crate::spec::ProviderKind;

pub use semver::Version;

/// The versions of one vendor CLI that its adapter supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportedVersions {
    /// The product's name as a person knows it.
    pub product: &'static str,
    /// The oldest version the test suite runs (`.ci/install-providers`, the `oldest` pins).
    pub oldest: Version,
    /// The newest version the test suite runs (the default pins).
    pub newest_tested: Version,
    /// The first version refused: the next major release.
    pub refused_from: Version,
}

impl SupportedVersions {
    pub fn supports(&self, version: &Version) -> bool {
        let release = Version::new(version.major, version.minor, version.patch);
        release >= self.oldest && release < self.refused_from
    }
}

impl fmt::Display for SupportedVersions {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} {} or newer, below {} (tested with {}",
            self.product, self.oldest, self.refused_from, self.oldest
        )?;
        if self.newest_tested != self.oldest {
            write!(formatter, " and {}", self.newest_tested)?;
        }
        write!(formatter, ")")
    }
}

/// The supported range of one provider kind; `None` for ACP agents.
///
/// Keep these in step with `tests/fixtures/providers/package.json` (newest) and
/// `tests/fixtures/providers/oldest/package.json` (oldest): the real-CLI tests run both.
pub fn supported_versions(kind: ProviderKind) -> Option<SupportedVersions> {
    let (product, oldest, newest_tested, refused_from) = match kind {
        ProviderKind::Codex => ("Codex CLI", (0, 171, 0), (0, 171, 0), (1, 0, 0)),
        ProviderKind::ClaudeCode => ("Claude Code", (2, 1, 197), (2, 1, 332), (3, 0, 0)),
        ProviderKind::OpenCode => ("OpenCode", (1, 18, 33), (1, 18, 33), (2, 0, 0)),
        ProviderKind::Acp => return None,
    };
    let version = |(major, minor, patch)| Version::new(major, minor, patch);
    Some(SupportedVersions {
        product,
        oldest: version(oldest),
        newest_tested: version(newest_tested),
        refused_from: version(refused_from),
    })
}

/// The version in what `<cli> --version` printed: the first word that parses as a
/// semantic version, after an optional leading `v` (`codex-cli 0.171.0`,
/// `2.1.332 (Claude Code)`, `1.18.33`).
pub fn parse_version_output(output: &str) -> Option<Version> {
    output
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|word| word.strip_prefix('v').unwrap_or(word))
        .find_map(|word| Version::parse(word).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_lines_of_each_cli_parse() {
        let cases = [
            ("codex-cli 0.171.0\n", "0.171.0"),
            ("2.1.332 (Claude Code)\n", "2.1.332"),
            ("1.18.33\n", "1.18.33"),
            ("opencode v1.2.3-beta.1", "1.2.3-beta.1"),
        ];
        for (output, expected) in cases {
            assert_eq!(
                parse_version_output(output)
                    .map(|v| v.to_string())
                    .as_deref(),
                Some(expected),
                "{output:?}"
            );
        }
        assert_eq!(parse_version_output("usage: claude [options]"), None);
        assert_eq!(parse_version_output(""), None);
    }

    #[test]
    fn claude_codes_range_takes_the_tested_versions_and_refuses_older_and_next_major() {
        let range = supported_versions(ProviderKind::ClaudeCode).unwrap();
        for accepted in ["2.1.197", "2.1.250", "2.1.332", "2.9.0"] {
            assert!(
                range.supports(&Version::parse(accepted).unwrap()),
                "{accepted}"
            );
        }
        for refused in ["2.1.196", "2.0.99", "1.0.0", "3.0.0"] {
            assert!(
                !range.supports(&Version::parse(refused).unwrap()),
                "{refused}"
            );
        }
        // A pre-release of a supported version counts as that version.
        assert!(range.supports(&Version::parse("2.1.300-rc.1").unwrap()));
        assert!(supported_versions(ProviderKind::Acp).is_none());
        assert_eq!(
            range.to_string(),
            "Claude Code 2.1.197 or newer, below 3.0.0 (tested with 2.1.197 and 2.1.332)"
        );
        // One tested version is named once.
        assert_eq!(
            supported_versions(ProviderKind::OpenCode)
                .unwrap()
                .to_string(),
            "OpenCode 1.18.33 or newer, below 2.0.0 (tested with 1.18.33)"
        );
    }
}
