//! Mission definitions and closure plans from the command line or from a TOML/JSON file.
//!
//! A check on the command line: `--check 'ID=PROGRAM ARGS...'` (a command check, split
//! like a shell would, required, covering every criterion, cwd `.`, every file relevant),
//! `--manual-check 'ID=REVIEWER[,REVIEWER...]'`, and `--covers 'ID=1,3'` (criteria numbered from 1) to narrow what a
//! check covers. A file holds `[[checks]]` tables with the fields of `mission.configure`;
//! omitted fields take the same defaults as the flags.

use std::path::Path;

use nagi_schema::mission::{CommandCheck, ManualCheck, MissionCheck, MissionPathRule};
use serde::Deserialize;

use crate::exit::CliError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MissionFile {
    pub mission_id: Option<String>,
    pub title: Option<String>,
    pub repository_path: Option<String>,
    pub objective: Option<String>,
    #[serde(default, alias = "criteria")]
    pub acceptance_criteria: Vec<String>,
    #[serde(default)]
    pub checks: Vec<CheckEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckEntry {
    pub id: String,
    #[serde(default = "default_kind")]
    pub kind: String,
    pub program: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default = "default_cwd")]
    pub cwd: String,
    #[serde(default)]
    pub relevant_paths: Vec<MissionPathRule>,
    #[serde(default)]
    pub required_artifacts: Vec<String>,
    #[serde(default)]
    pub include_ignored: bool,
    #[serde(default = "default_required")]
    pub required: bool,
    pub covers: Option<Vec<u64>>,
    #[serde(default)]
    pub reviewers: Vec<String>,
    #[serde(default)]
    pub allow_override: bool,
}

fn default_kind() -> String {
    "command".into()
}
fn default_cwd() -> String {
    ".".into()
}
fn default_required() -> bool {
    true
}

pub fn read_mission_file(path: &Path) -> Result<MissionFile, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| CliError::Usage(format!("cannot read {}: {error}", path.display())))?;
    let is_json = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
    if is_json {
        serde_json::from_str(&text)
            .map_err(|error| CliError::Usage(format!("{}: {error}", path.display())))
    } else {
        toml::from_str(&text)
            .map_err(|error| CliError::Usage(format!("{}: {error}", path.display())))
    }
}

impl CheckEntry {
    pub fn into_check(self, criteria_count: usize) -> Result<MissionCheck, CliError> {
        let covers = self
            .covers
            .unwrap_or_else(|| (0..criteria_count as u64).collect());
        match self.kind.as_str() {
            "command" => {
                let program = self.program.ok_or_else(|| {
                    CliError::Usage(format!(
                        "check {}: a command check needs `program`",
                        self.id
                    ))
                })?;
                Ok(MissionCheck::Command(CommandCheck {
                    id: self.id,
                    program,
                    args: self.args,
                    cwd: self.cwd,
                    relevant_paths: self.relevant_paths,
                    required_artifacts: self.required_artifacts,
                    include_ignored: self.include_ignored,
                    required: self.required,
                    covers,
                }))
            }
            "manual" => Ok(MissionCheck::Manual(ManualCheck {
                id: self.id,
                reviewers: self.reviewers,
                allow_override: self.allow_override,
                required: self.required,
                covers,
            })),
            other => Err(CliError::Usage(format!(
                "check {}: kind must be \"command\" or \"manual\", not {other:?}",
                self.id
            ))),
        }
    }
}

fn split_assignment<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), CliError> {
    text.split_once('=')
        .filter(|(id, value)| !id.is_empty() && !value.trim().is_empty())
        .ok_or_else(|| CliError::Usage(format!("{flag} expects ID=VALUE, got {text:?}")))
}

/// `--check 'unit=cargo test --quiet'`
pub fn command_check_from_flag(text: &str) -> Result<CheckEntry, CliError> {
    let (id, command) = split_assignment("--check", text)?;
    let words = shlex::split(command).ok_or_else(|| {
        CliError::Usage(format!("--check {id}: unbalanced quotes in {command:?}"))
    })?;
    let (program, args) = words
        .split_first()
        .ok_or_else(|| CliError::Usage(format!("--check {id}: no program")))?;
    Ok(CheckEntry {
        id: id.to_string(),
        kind: "command".into(),
        program: Some(program.clone()),
        args: args.to_vec(),
        cwd: ".".into(),
        relevant_paths: Vec::new(),
        required_artifacts: Vec::new(),
        include_ignored: false,
        required: true,
        covers: None,
        reviewers: Vec::new(),
        allow_override: false,
    })
}

/// `--manual-check 'review=alice,bob'`
pub fn manual_check_from_flag(text: &str) -> Result<CheckEntry, CliError> {
    let (id, reviewers) = split_assignment("--manual-check", text)?;
    Ok(CheckEntry {
        id: id.to_string(),
        kind: "manual".into(),
        program: None,
        args: Vec::new(),
        cwd: ".".into(),
        relevant_paths: Vec::new(),
        required_artifacts: Vec::new(),
        include_ignored: false,
        required: true,
        covers: None,
        reviewers: reviewers
            .split(',')
            .map(|reviewer| reviewer.trim().to_string())
            .collect(),
        allow_override: false,
    })
}

/// `--covers 'unit=0,2'`
pub fn apply_covers_flag(checks: &mut [CheckEntry], text: &str) -> Result<(), CliError> {
    let (id, list) = split_assignment("--covers", text)?;
    // Criteria are numbered from 1, as `nagi mission get` shows them; the wire's `covers`
    // counts from 0.
    let covers = list
        .split(',')
        .map(|number| match number.trim().parse::<u64>() {
            Ok(number) if number >= 1 => Ok(number - 1),
            _ => Err(CliError::Usage(format!(
                "--covers {id}: {number:?} is not a criterion number; criteria are numbered from 1, as `nagi mission get` shows them"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let check = checks
        .iter_mut()
        .find(|check| check.id == id)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--covers names check {id:?}, which no --check declares"
            ))
        })?;
    check.covers = Some(covers);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_flag_splits_like_a_shell_and_covers_everything() {
        let entry = command_check_from_flag("unit=cargo test -- 'a b'").unwrap();
        let MissionCheck::Command(check) = entry.into_check(3).unwrap() else {
            panic!()
        };
        assert_eq!(check.program, "cargo");
        assert_eq!(check.args, vec!["test", "--", "a b"]);
        assert_eq!(check.covers, vec![0, 1, 2]);
        assert!(command_check_from_flag("=x").is_err());
        assert!(command_check_from_flag("unit=").is_err());
        assert!(command_check_from_flag("unit='open").is_err());
    }

    #[test]
    fn covers_counts_criteria_from_one_as_the_views_do() {
        let mut checks = vec![command_check_from_flag("unit=cargo test").unwrap()];
        apply_covers_flag(&mut checks, "unit=1,3").unwrap();
        assert_eq!(checks[0].covers, Some(vec![0, 2]));
        let zero = apply_covers_flag(&mut checks, "unit=0").unwrap_err();
        assert!(format!("{zero:?}").contains("numbered from 1"), "{zero:?}");
    }
}
