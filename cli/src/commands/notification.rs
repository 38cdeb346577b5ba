//! `nagi notification show TITLE [--body TEXT] [--sound none|done|request]`: tell a person
//! something through the server's notification sinks (`notification.show`).

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use crate::CommandResult;
use crate::context::Context;

#[derive(Debug, Subcommand)]
pub enum NotificationCommand {
    /// Show a notification: on the desktop (freedesktop Notifications, when a session bus
    /// exists) and through the `[notify] command`.
    Show(ShowArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Sound {
    None,
    Done,
    Request,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    pub title: String,
    #[arg(long)]
    pub body: Option<String>,
    /// Accepted for compatibility; nagi plays no sound.
    #[arg(long, value_enum, default_value = "none")]
    pub sound: Sound,
}

pub fn run(context: &Context, command: NotificationCommand) -> CommandResult {
    let NotificationCommand::Show(args) = command;
    let sound = match args.sound {
        Sound::None => "none",
        Sound::Done => "done",
        Sound::Request => "request",
    };
    let result = context.request(
        "notification.show",
        json!({"title": args.title, "body": args.body, "sound": sound}),
    )?;
    context.print(&result, |result| {
        match (result["shown"].as_bool(), result["reason"].as_str()) {
            (Some(true), _) => "shown\n".to_string(),
            (_, Some("disabled")) => "not shown: notifications are off ([notify] enabled = false)\n".to_string(),
            _ => "not shown: no desktop notification service answered and no [notify] command is set\n".to_string(),
        }
    })
}
