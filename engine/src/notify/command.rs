//! `[notify] command`: a program (no shell) run once per notification, with the
//! notification as one JSON object on stdin and in `NAGI_NOTIFY_KIND`, `NAGI_NOTIFY_MISSION`,
//! `NAGI_NOTIFY_TITLE` and `NAGI_NOTIFY_BODY`. It may take 10 s; then it is killed.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::Notification;

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(command: &[String], notification: &Notification) -> Result<(), String> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| "no program".to_string())?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env("NAGI_NOTIFY_KIND", notification.kind.as_str())
        .env(
            "NAGI_NOTIFY_MISSION",
            notification.mission_id.as_deref().unwrap_or_default(),
        )
        .env("NAGI_NOTIFY_TITLE", &notification.title)
        .env("NAGI_NOTIFY_BODY", &notification.body)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("{program} cannot be started: {error}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let mut line = serde_json::to_vec(notification).unwrap_or_default();
        line.push(b'\n');
        // A command that does not read its input is fine.
        let _ = stdin.write_all(&line).await;
    }
    match tokio::time::timeout(COMMAND_TIMEOUT, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("{program} exited with {status}")),
        Ok(Err(error)) => Err(format!("{program}: {error}")),
        Err(_) => Err(format!(
            "{program} took longer than {} s and was killed",
            COMMAND_TIMEOUT.as_secs()
        )),
    }
}
