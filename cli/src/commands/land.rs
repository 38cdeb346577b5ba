//! `nagi mission land`: land a ready mission's change on a branch. Landing writes the
//! person's branch, so it goes through the same consent as the cockpit: the command shows
//! what it will do (branch, strategy, files, message), asks, and decides; `--yes` approves
//! without asking. The server refuses it from a managed pane or a descendant of the server.
//! `nagi mission sync` (rebase the mission branch onto a branch's tip) asks the same way.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Strategy {
    Squash,
    Merge,
    Rebase,
}

#[derive(Debug, Args)]
pub struct LandArgs {
    pub mission_id: String,
    /// The branch to land into (default: the branch the checkout had when the mission's
    /// worktree was made).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// One commit with the whole change (the default).
    #[arg(long, conflicts_with_all = ["merge", "rebase"])]
    pub squash: bool,
    /// A merge commit of the mission branch.
    #[arg(long, conflicts_with = "rebase")]
    pub merge: bool,
    /// Replay the mission's commits onto the branch, then fast-forward it.
    #[arg(long)]
    pub rebase: bool,
    /// The commit message (default: the mission's title and objective); the trailers
    /// Nagi-Mission and Nagi-Proof are added.
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
    /// Push the landed branch to REMOTE (with --pr: push the mission branch).
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Open a pull request into the branch with `gh` instead of landing locally (needs
    /// --push); without `gh` the command to run is printed.
    #[arg(long, requires = "push")]
    pub pr: bool,
    /// Approve without asking.
    #[arg(long)]
    pub yes: bool,
}

impl LandArgs {
    fn strategy(&self) -> &'static str {
        if self.merge {
            "merge"
        } else if self.rebase {
            "rebase"
        } else {
            "squash"
        }
    }
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    pub mission_id: String,
    /// The branch to rebase onto (default: the branch a landing would go into).
    #[arg(long, value_name = "BRANCH")]
    pub onto: Option<String>,
    /// Approve without asking.
    #[arg(long)]
    pub yes: bool,
}

/// `nagi mission sync`: rebase the mission branch onto a branch's tip, with consent.
pub fn sync(context: &Context, args: SyncArgs) -> CommandResult {
    let action = json!({"kind": "sync", "mission_id": args.mission_id, "onto": args.onto});
    let outcome = super::consent::ask_and_decide(context, action, args.yes)?;
    print_outcome(context, &outcome)
}

fn print_outcome(context: &Context, outcome: &Value) -> CommandResult {
    context.print(outcome, |outcome| {
        let summary = outcome.get("summary").and_then(Value::as_str).unwrap_or("");
        match outcome.get("mission") {
            Some(mission) if mission.is_object() => {
                format!("{summary}\n{}", output::mission(mission))
            }
            _ => format!("{summary}\n"),
        }
    })
}

pub fn run(context: &Context, args: LandArgs) -> CommandResult {
    let action = json!({
        "kind": "land",
        "mission_id": args.mission_id,
        "into": args.into,
        "strategy": args.strategy(),
        "message": args.message,
        "push_remote": args.push,
        "pull_request": args.pr,
    });
    let outcome = super::consent::ask_and_decide(context, action, args.yes)?;
    print_outcome(context, &outcome)
}
