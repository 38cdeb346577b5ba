//! Consent at the terminal: `nagi mission start ... --write` (or `--execute-recipe`, or
//! `--provider acp`) and `nagi mission respond` show the consent preview the cockpit would
//! show, ask, and decide, over the same `cockpit.preview` / `cockpit.decide` channel. The
//! server applies the same peer rule as to the cockpit: this process must have the server's
//! uid, must not run in one of its managed panes and must not be one of its descendants.
//! `--yes` approves without asking; a refusal is recorded as the cockpit records one.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

use crate::context::Context;
use crate::exit::CliError;

/// Shows `action`'s preview, asks (unless `yes`), and decides. Returns the outcome of an
/// approval; a refusal or an unanswered question is an error that says nothing was done.
pub fn ask_and_decide(context: &Context, action: Value, yes: bool) -> Result<Value, CliError> {
    let mut client = context.client()?;
    let hello = client
        .request("cockpit.hello", json!({}))
        .map_err(crate::connect::remote)?;
    if hello.get("consent_allowed").and_then(Value::as_bool) != Some(true) {
        let reason = hello
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("the server gave no reason");
        return Err(CliError::Remote {
            code: "consent_forbidden".into(),
            message: format!(
                "this terminal cannot grant consent ({reason}); run the command in a terminal of your own, or use nagi cockpit"
            ),
        });
    }
    let previewed = client
        .request("cockpit.preview", json!({"action": action}))
        .map_err(crate::connect::remote)?;
    let preview = previewed.get("preview").cloned().unwrap_or(Value::Null);
    let text = |key: &str| {
        preview
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut shown = format!("[{}] {}\n", text("risk"), text("title"));
    for line in preview
        .get("lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        shown.push_str(&format!("  • {}\n", line.as_str().unwrap_or("")));
    }
    shown.push_str(&format!("  digest {}\n", text("digest")));
    eprint!("{shown}");
    let approved = yes || {
        eprint!("approve exactly this? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let read = std::io::stdin().lock().read_line(&mut answer).unwrap_or(0);
        read > 0 && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    };
    let decision = if approved { "approve" } else { "deny" };
    let decided = client
        .request(
            "cockpit.decide",
            json!({"action": action, "shown_digest": text("digest"), "decision": decision}),
        )
        .map_err(crate::connect::remote)?;
    if approved {
        Ok(decided.get("outcome").cloned().unwrap_or(decided))
    } else {
        Err(CliError::Remote {
            code: "consent_denied".into(),
            message: "not approved: nothing was done (the refusal is recorded)".into(),
        })
    }
}
