//! Notifications (issue 16): a person is told when an attention item opens or a mission
//! needs review, is ready to close, failed or is blocked — through the `[notify] command`
//! and the freedesktop Notifications service on a session bus (a private `dbus-daemon`
//! started by the test, with a Notifications service of the test's own) — and
//! `notification.show` tells them what a client asks, through the same sinks.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::runs::{Runs, start_params, status_is, write_config};

/// A session whose config has the fake providers (their first turn follows `script`) and
/// `notify` as its `[notify]` section.
fn session_with_notify(notify: &str, script: Value, extra_env: &[(&str, String)]) -> Runs {
    let mut env = TestEnv::new();
    for (key, value) in extra_env {
        env.env.insert(key.to_string(), value.clone());
    }
    let log = write_config(&env, &script, &[]);
    let path = env.config_dir.join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{config}\n[notify]\n{notify}\n")).unwrap();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "test", &["-f", "README.md"]),
    );
    Runs { env, repo, log }
}

/// A `[notify] command` that appends each notification (its JSON line on stdin, then its
/// environment's kind) to `file`.
fn recording_command(file: &Path) -> String {
    let script = format!(
        "cat >> {path} && echo \"env:$NAGI_NOTIFY_KIND:$NAGI_NOTIFY_MISSION\" >> {path}",
        path = file.display()
    );
    format!("command = [\"sh\", \"-c\", {}]", toml_string(&script))
}

fn recorded(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn kinds(file: &Path) -> Vec<String> {
    recorded(file)
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|line| line["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_notify_command_hears_of_a_mission_that_needs_review_and_of_the_kinds_chosen_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    let runs = session_with_notify(
        &format!(
            "desktop = false\nkinds = [\"ready_to_close\", \"message\"]\n{}",
            recording_command(&file)
        ),
        json!([{"text": "done"}]),
        &[],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    crate::panes::eventually("the ready_to_close notification", || {
        kinds(&file).contains(&"ready_to_close".to_string())
    });
    // notification.show runs the command before it answers: after it, everything notified
    // before has had its turn.
    let shown = runs.env.ok(
        "notification.show",
        json!({"title": "  build\tfailed\n", "body": "api workspace", "sound": "request"}),
    );
    assert_eq!(
        shown,
        json!({"type": "notification_show", "shown": true, "reason": "shown"})
    );
    let lines = recorded(&file);
    let notes: Vec<Value> = lines
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let ready = notes
        .iter()
        .find(|note| note["kind"] == "ready_to_close")
        .unwrap();
    assert_eq!(ready["mission_id"], "m1");
    assert_eq!(ready["title"], "nagi: mission m1 is ready_to_close");
    assert!(
        ready["body"]
            .as_str()
            .unwrap()
            .contains("nagi mission close m1"),
        "{ready}"
    );
    assert!(
        lines.contains(&"env:ready_to_close:m1".to_string()),
        "{lines:?}"
    );
    let message = notes.iter().find(|note| note["kind"] == "message").unwrap();
    assert_eq!(message["title"], "build failed", "one line, trimmed");
    assert!(
        !kinds(&file).contains(&"review_required".to_string()),
        "review_required was not chosen: {lines:?}"
    );
}

#[test]
fn an_attention_item_notifies_and_switched_off_nothing_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    let runs = session_with_notify(
        &format!("desktop = false\n{}", recording_command(&file)),
        json!([{"approve_command": "rm -rf build"}]),
        &[],
    );
    let mut params = start_params("codex", "r1");
    params["execute_declared_checks"] = json!(false);
    runs.env.ok("mission.start", params);
    crate::panes::eventually("the attention notification", || {
        kinds(&file).contains(&"attention".to_string())
    });
    let note: Value = recorded(&file)
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|note| note["kind"] == "attention")
        .unwrap();
    assert_eq!(note["title"], "nagi: mission m1 needs you");
    assert!(
        note["body"].as_str().unwrap().contains("rm -rf build"),
        "{note}"
    );
    assert!(
        note["body"].as_str().unwrap().contains("nagi cockpit"),
        "{note}"
    );

    // Switched off: notification.show says so, and runs nothing.
    let config = std::fs::read_to_string(runs.env.config_dir.join("config.toml")).unwrap();
    std::fs::write(
        runs.env.config_dir.join("config.toml"),
        config.replace("[notify]\n", "[notify]\nenabled = false\n"),
    )
    .unwrap();
    runs.env.ok("server.reload_config", json!({}));
    let before = recorded(&file).len();
    let answer = runs.env.ok("notification.show", json!({"title": "hello"}));
    assert_eq!(answer["shown"], false);
    assert_eq!(answer["reason"], "disabled");
    assert_eq!(recorded(&file).len(), before);
    assert_eq!(
        runs.env
            .error_code("notification.show", json!({"title": " \n\t "})),
        "invalid_params"
    );
}

/// A private session bus and, on it, a Notifications service that records every `Notify`
/// call (summary and body) to a file.
struct PrivateBus {
    daemon: std::process::Child,
    address: String,
    calls: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

fn private_bus() -> Option<PrivateBus> {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = std::process::Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let mut address = String::new();
    std::io::BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut address)
        .ok()?;
    let address = address.trim().to_string();
    let calls = dir.path().join("notify-calls.txt");
    let (service_address, service_calls) = (address.clone(), calls.clone());
    let (ready_sender, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(notifications_service(
            &service_address,
            &service_calls,
            ready_sender,
        ));
    });
    ready
        .recv_timeout(std::time::Duration::from_secs(20))
        .ok()?;
    Some(PrivateBus {
        daemon,
        address,
        calls,
        _dir: dir,
    })
}

/// Owns `org.freedesktop.Notifications` and answers each `Notify` with an id, recording it.
async fn notifications_service(address: &str, calls: &Path, ready: std::sync::mpsc::Sender<()>) {
    use futures_util::StreamExt;
    let connection = zbus::connection::Builder::address(address)
        .unwrap()
        .name("org.freedesktop.Notifications")
        .unwrap()
        .build()
        .await
        .unwrap();
    let _ = ready.send(());
    let mut messages = zbus::MessageStream::from(&connection);
    let mut next_id = 0u32;
    while let Some(Ok(message)) = messages.next().await {
        let header = message.header();
        if header.message_type() != zbus::message::Type::MethodCall
            || header.member().map(|member| member.as_str()) != Some("Notify")
        {
            continue;
        }
        type Notify = (
            String,
            u32,
            String,
            String,
            String,
            Vec<String>,
            std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
            i32,
        );
        if let Ok((app, _, _, summary, body, _, _, _)) = message.body().deserialize::<Notify>() {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(calls)
                .unwrap();
            writeln!(file, "{app}|{summary}|{body}").unwrap();
        }
        next_id += 1;
        let _ = connection.reply(&header, &(next_id,)).await;
    }
}

#[test]
fn a_desktop_notification_reaches_the_notifications_service_on_the_session_bus() {
    let Some(bus) = private_bus() else {
        missing_prerequisite(
            "a_desktop_notification_reaches_the_notifications_service_on_the_session_bus",
            "dbus-daemon (Debian's dbus-daemon package) is needed for a private session bus",
        );
        return;
    };
    let runs = session_with_notify(
        "kinds = [\"blocked\", \"message\"]",
        json!(["wait_interrupt"]),
        &[("DBUS_SESSION_BUS_ADDRESS", bus.address.clone())],
    );
    let shown = runs.env.ok(
        "notification.show",
        json!({"title": "build failed", "body": "api workspace"}),
    );
    assert_eq!(shown["reason"], "shown", "{shown}");
    let calls = std::fs::read_to_string(&bus.calls).unwrap_or_default();
    assert!(calls.contains("nagi|build failed|api workspace"), "{calls}");
    // A mission that is blocked (its run stopped) notifies the desktop by itself.
    let mut params = start_params("codex", "r1");
    params["execute_declared_checks"] = json!(false);
    runs.env.ok("mission.start", params);
    wait_for_mission(&runs.env, "m1", "active", status_is("active"));
    runs.env.ok("mission.stop", json!({"mission_id": "m1"}));
    crate::panes::eventually("the blocked notification on the bus", || {
        std::fs::read_to_string(&bus.calls)
            .unwrap_or_default()
            .contains("nagi|nagi: mission m1 is blocked|stopped by uid")
    });
}
