//! `nagi worktree list|create|open|remove`: thin clients of the `worktree.*` methods.
//!
//! Without `--workspace` or `--cwd`, the repository is the one of the current directory
//! (the server cannot know the caller's directory, so the CLI sends it as `cwd`); relative
//! `--cwd` and `--path` values are made absolute here.

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::CliError;

/// Which repository: a workspace's, or a directory's (the current one by default).
#[derive(Debug, Args)]
pub struct Source {
    /// The workspace whose checkout names the repository.
    #[arg(long = "workspace", value_name = "ID", conflicts_with = "cwd")]
    workspace_id: Option<String>,
    /// A directory inside a checkout of the repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// The checkouts of the repository, with the workspace open in each.
    List {
        #[command(flatten)]
        source: Source,
    },
    /// Add a linked checkout on a branch (made from --base, or HEAD, when it does not
    /// exist) and open a workspace in it. The branch stays when the checkout is removed.
    Create {
        #[command(flatten)]
        source: Source,
        /// The branch (default: the first free `worktree/<n>`).
        #[arg(long)]
        branch: Option<String>,
        /// The revision a new branch starts from.
        #[arg(long, value_name = "REF")]
        base: Option<String>,
        /// The checkout's folder (default: nagi's worktrees folder of the repository).
        #[arg(long, value_name = "DIR")]
        path: Option<String>,
        #[arg(long)]
        label: Option<String>,
        #[arg(long)]
        focus: bool,
    },
    /// Open a workspace in an existing checkout, named by its branch or its folder (the
    /// workspace already open there is returned).
    Open {
        #[command(flatten)]
        source: Source,
        #[arg(long, required_unless_present = "path", conflicts_with = "path")]
        branch: Option<String>,
        #[arg(long, value_name = "DIR")]
        path: Option<String>,
        #[arg(long)]
        label: Option<String>,
        #[arg(long)]
        focus: bool,
    },
    /// Remove the linked checkout a workspace is open in, and close that workspace. The
    /// branch stays. Refuses uncommitted or untracked files without --force, the main
    /// checkout, and a checkout a live run holds.
    Remove {
        /// The workspace open in the checkout.
        workspace_id: String,
        /// Delete uncommitted and untracked files too, or a mission's worktree whose
        /// mission is not archived.
        #[arg(long)]
        force: bool,
    },
}

fn absolute(path: &str) -> Result<String, CliError> {
    std::path::absolute(path)
        .map(|path| path.display().to_string())
        .map_err(|error| CliError::Usage(format!("cannot make {path:?} absolute: {error}")))
}

impl Source {
    fn params(&self) -> Result<serde_json::Map<String, Value>, CliError> {
        let mut params = serde_json::Map::new();
        match (&self.workspace_id, &self.cwd) {
            (Some(workspace_id), _) => {
                params.insert("workspace_id".into(), json!(workspace_id));
            }
            (None, Some(cwd)) => {
                params.insert("cwd".into(), json!(absolute(cwd)?));
            }
            (None, None) => {
                params.insert("cwd".into(), json!(absolute(".")?));
            }
        }
        Ok(params)
    }
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

pub fn worktree_table(result: &Value) -> String {
    let mut out = format!(
        "repository {} ({})\n",
        text(&result["source"], "repo_root"),
        text(&result["source"], "repo_key")
    );
    out.push_str(&format!("{:<10} {:<30} PATH\n", "WORKSPACE", "BRANCH"));
    for worktree in result["worktrees"].as_array().into_iter().flatten() {
        let mut notes = Vec::new();
        if worktree["is_linked_worktree"] == false {
            notes.push("main");
        }
        if worktree["is_detached"] == true {
            notes.push("detached");
        }
        if worktree["is_prunable"] == true {
            notes.push("folder gone");
        }
        if worktree["is_bare"] == true {
            notes.push("bare");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        out.push_str(&format!(
            "{:<10} {:<30} {}{notes}\n",
            worktree["open_workspace_id"].as_str().unwrap_or("-"),
            worktree["branch"].as_str().unwrap_or("-"),
            text(worktree, "path"),
        ));
    }
    out
}

fn opened(verb: &str, result: &Value) -> String {
    let workspace = text(&result["workspace"], "workspace_id");
    format!(
        "{verb} {} on {} in workspace {workspace} (nagi pane attach {})\n",
        text(&result["worktree"], "path"),
        result["worktree"]["branch"]
            .as_str()
            .unwrap_or("a detached HEAD"),
        text(&result["root_pane"], "pane_id"),
    )
}

/// The params `create` and `open` share: the source, the branch, an absolute path, the
/// workspace's label and focus.
fn checkout_params(
    source: &Source,
    branch: Option<String>,
    path: Option<String>,
    label: Option<String>,
    focus: bool,
) -> Result<serde_json::Map<String, Value>, CliError> {
    let mut params = source.params()?;
    params.insert("branch".into(), json!(branch));
    params.insert(
        "path".into(),
        json!(path.as_deref().map(absolute).transpose()?),
    );
    params.insert("label".into(), json!(label));
    params.insert("focus".into(), json!(focus));
    Ok(params)
}

pub fn run(context: &Context, command: WorktreeCommand) -> CommandResult {
    match command {
        WorktreeCommand::List { source } => {
            let result = context.request("worktree.list", Value::Object(source.params()?))?;
            context.print(&result, worktree_table)
        }
        WorktreeCommand::Create {
            source,
            branch,
            base,
            path,
            label,
            focus,
        } => {
            let mut params = checkout_params(&source, branch, path, label, focus)?;
            params.insert("base".into(), json!(base));
            let result = context.request("worktree.create", Value::Object(params))?;
            context.print(&result, |result| opened("created", result))
        }
        WorktreeCommand::Open {
            source,
            branch,
            path,
            label,
            focus,
        } => {
            let params = checkout_params(&source, branch, path, label, focus)?;
            let result = context.request("worktree.open", Value::Object(params))?;
            context.print(&result, |result| {
                if result["already_open"] == true {
                    opened("already open:", result)
                } else {
                    opened("opened", result)
                }
            })
        }
        WorktreeCommand::Remove {
            workspace_id,
            force,
        } => {
            let result = context.request(
                "worktree.remove",
                json!({"workspace_id": workspace_id, "force": force}),
            )?;
            context.print(&result, |result| {
                format!(
                    "removed {} and closed workspace {}; its branch is kept\n",
                    text(result, "path"),
                    text(result, "workspace_id")
                )
            })
        }
    }
}
