//! Renders a scenario [`ToolCall`] in each CLI's own tool names and argument shapes.

use serde_json::{Value, json};

use super::conversation::{ApplyPatchKind, ConversationDigest};
use super::scenario::{AskCall, Scenario, ToolCall};

/// A Codex tool call: Codex offers most tools as functions (JSON arguments) and `apply_patch`
/// as a freeform "custom" tool (raw text input), depending on the model.
#[derive(Debug, Clone, PartialEq)]
pub enum CodexCall {
    Function { name: String, arguments: Value },
    Custom { name: String, input: String },
}

/// Codex: shell reads and commands go through `exec_command`, file changes through
/// `apply_patch` in whichever form the request offers it (falling back to a shell write when it
/// offers none).
pub fn codex_call(scenario: &Scenario, call: &ToolCall, digest: &ConversationDigest) -> CodexCall {
    match call {
        ToolCall::Read { path } => codex_shell(
            digest,
            format!("cat {}", shell_quote(&scenario.resolve_path(path))),
        ),
        ToolCall::Shell { command } => codex_shell(digest, command.clone()),
        ToolCall::Write { path, content } => {
            let path = scenario.resolve_path(path);
            let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
            for line in content.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            codex_patch(digest, patch, || {
                format!(
                    "printf '%s' {} > {}",
                    shell_quote(content),
                    shell_quote(&path)
                )
            })
        }
        ToolCall::Edit { path, old, new } => {
            let path = scenario.resolve_path(path);
            let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
            for line in old.lines() {
                patch.push_str(&format!("-{line}\n"));
            }
            for line in new.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            codex_patch(digest, patch, || {
                format!(
                    "sed -i {} {}",
                    shell_quote(&format!("s/{old}/{new}/")),
                    shell_quote(&path)
                )
            })
        }
        ToolCall::Ask(ask) => CodexCall::Function {
            name: "request_user_input".to_owned(),
            arguments: json!({
                "questions": [{
                    "id": "question_1",
                    "header": ask.header,
                    "question": ask.question,
                    "options": ask.options.iter().map(|option| json!({
                        "label": option.label,
                        "description": option.description,
                    })).collect::<Vec<_>>(),
                }]
            }),
        },
        ToolCall::Raw { name, arguments } => CodexCall::Function {
            name: name.clone(),
            arguments: arguments.clone(),
        },
    }
}

fn codex_shell(digest: &ConversationDigest, command: String) -> CodexCall {
    if !digest.offers_tool("exec_command") && digest.offers_tool("shell") {
        return CodexCall::Function {
            name: "shell".to_owned(),
            arguments: json!({"command": ["bash", "-lc", command]}),
        };
    }
    CodexCall::Function {
        name: "exec_command".to_owned(),
        arguments: json!({"cmd": command}),
    }
}

fn codex_patch(
    digest: &ConversationDigest,
    patch: String,
    shell_fallback: impl FnOnce() -> String,
) -> CodexCall {
    match digest.codex_apply_patch_kind {
        Some(ApplyPatchKind::Custom) => CodexCall::Custom {
            name: "apply_patch".to_owned(),
            input: patch,
        },
        Some(ApplyPatchKind::Function) => CodexCall::Function {
            name: "apply_patch".to_owned(),
            arguments: json!({"input": patch}),
        },
        None => codex_shell(digest, shell_fallback()),
    }
}

/// Claude Code: its built-in tool names and input fields.
pub fn claude_call(scenario: &Scenario, call: &ToolCall) -> (String, Value) {
    match call {
        ToolCall::Read { path } => (
            "Read".into(),
            json!({"file_path": scenario.resolve_path(path)}),
        ),
        ToolCall::Write { path, content } => (
            "Write".into(),
            json!({"file_path": scenario.resolve_path(path), "content": content}),
        ),
        ToolCall::Edit { path, old, new } => (
            "Edit".into(),
            json!({"file_path": scenario.resolve_path(path), "old_string": old, "new_string": new}),
        ),
        ToolCall::Shell { command } => (
            "Bash".into(),
            json!({"command": command, "description": "Run a command"}),
        ),
        ToolCall::Ask(ask) => (
            "AskUserQuestion".into(),
            json!({"questions": [ask_questions_entry(ask, "multiSelect")]}),
        ),
        ToolCall::Raw { name, arguments } => (name.clone(), arguments.clone()),
    }
}

/// OpenCode: its built-in tool names and (camelCase) argument fields.
pub fn opencode_call(scenario: &Scenario, call: &ToolCall) -> (String, Value) {
    match call {
        ToolCall::Read { path } => (
            "read".into(),
            json!({"filePath": scenario.resolve_path(path)}),
        ),
        ToolCall::Write { path, content } => (
            "write".into(),
            json!({"filePath": scenario.resolve_path(path), "content": content}),
        ),
        ToolCall::Edit { path, old, new } => (
            "edit".into(),
            json!({"filePath": scenario.resolve_path(path), "oldString": old, "newString": new}),
        ),
        ToolCall::Shell { command } => (
            "bash".into(),
            json!({"command": command, "description": "Run a command"}),
        ),
        ToolCall::Ask(ask) => (
            "question".into(),
            json!({"questions": [ask_questions_entry(ask, "multiple")]}),
        ),
        ToolCall::Raw { name, arguments } => (name.clone(), arguments.clone()),
    }
}

fn ask_questions_entry(ask: &AskCall, multi_select_field: &str) -> Value {
    let mut entry = json!({
        "question": ask.question,
        "header": ask.header,
        "options": ask.options.iter().map(|option| json!({
            "label": option.label,
            "description": option.description,
        })).collect::<Vec<_>>(),
    });
    entry[multi_select_field] = Value::Bool(ask.multi_select);
    entry
}

/// Quotes a word for a POSIX shell.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_plain_paths_and_quotes_the_rest() {
        assert_eq!(shell_quote("/tmp/a.txt"), "/tmp/a.txt");
        assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
    }

    #[test]
    fn codex_write_uses_the_custom_apply_patch_tool_when_offered() {
        let scenario = Scenario::from_json(r#"{"steps":[{"text":"x"}]}"#).expect("valid");
        let digest = ConversationDigest {
            codex_apply_patch_kind: Some(ApplyPatchKind::Custom),
            ..ConversationDigest::default()
        };
        let call = ToolCall::Write {
            path: "new.txt".into(),
            content: "a\nb".into(),
        };
        assert_eq!(
            codex_call(&scenario, &call, &digest),
            CodexCall::Custom {
                name: "apply_patch".into(),
                input: "*** Begin Patch\n*** Add File: new.txt\n+a\n+b\n*** End Patch\n".into(),
            }
        );
    }
}
