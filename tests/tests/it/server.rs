//! The daemon: socket resolution, permissions, single instance, stale sockets, clean stop,
//! other users refused, autostart.

use std::os::unix::fs::PermissionsExt;

use nagi_tests::*;
use serde_json::json;

#[test]
fn the_socket_is_private_in_a_private_directory() {
    let mut env = TestEnv::new();
    env.start_server();
    let socket_mode = std::fs::metadata(&env.socket).unwrap().permissions().mode() & 0o777;
    let dir_mode = std::fs::metadata(&env.config_dir)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(socket_mode, 0o600);
    assert_eq!(dir_mode, 0o700);
    let database_mode = std::fs::metadata(env.database_path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(database_mode, 0o600);
}

#[test]
fn a_second_server_on_an_answering_socket_exits_with_a_clear_message() {
    let mut env = TestEnv::new();
    env.start_server();
    let second = env.nagi(&["server"]);
    assert_eq!(second.status, 3, "{}", second.describe());
    assert!(
        second.stderr.contains("already running"),
        "{}",
        second.describe()
    );
    assert_eq!(
        env.ok("ping", json!({}))["type"],
        "pong",
        "the first server is unharmed"
    );
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let mut env = TestEnv::new();
    env.start_server();
    env.kill_server();
    assert!(env.socket.exists(), "SIGKILL leaves the socket file behind");
    env.start_server();
    assert_eq!(env.ok("ping", json!({}))["type"], "pong");
}

#[test]
fn server_stop_sigterm_and_sigint_stop_cleanly_and_keep_every_commit() {
    let repo = TestRepo::new();
    for (round, how) in ["stop", "term", "int"].into_iter().enumerate() {
        let mut env = TestEnv::new();
        env.start_server();
        for index in 0..5 {
            env.ok(
                "mission.create",
                create_params(&format!("m{round}-{index}"), &repo.path_text()),
            );
        }
        match how {
            "stop" => {
                env.nagi_ok(&["server", "stop"]);
                env.signal_server(0);
            }
            "term" => assert!(env.signal_server(libc::SIGTERM).unwrap().success()),
            _ => assert!(env.signal_server(libc::SIGINT).unwrap().success()),
        }
        assert!(
            !env.socket.exists(),
            "{how}: a clean stop removes the socket"
        );
        env.start_server();
        assert_eq!(
            env.ok("mission.list", json!({}))["missions"]
                .as_array()
                .unwrap()
                .len(),
            5,
            "{how}"
        );
    }
}

/// A user made for the test (`useradd`, removed again on drop), or `nobody` where the
/// system has no `useradd`.
struct TestUser {
    name: Option<String>,
    uid: u32,
    gid: u32,
}

impl TestUser {
    fn create() -> TestUser {
        let name = format!("nagit{}", std::process::id());
        let made = std::process::Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/bin/false",
                &name,
            ])
            .status()
            .map(|status| status.success())
            .unwrap_or(false);
        if !made {
            eprintln!("useradd is not available; using nobody (65534)");
            return TestUser {
                name: None,
                uid: 65534,
                gid: 65534,
            };
        }
        let id = |flag: &str| -> u32 {
            let out = std::process::Command::new("id")
                .args([flag, &name])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        TestUser {
            uid: id("-u"),
            gid: id("-g"),
            name: Some(name),
        }
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        if let Some(name) = &self.name {
            let _ = std::process::Command::new("userdel").arg(name).status();
        }
    }
}

/// Connects as `user` in a forked child, sends `line` and returns what the child saw:
/// 0 the answer was `permission_denied`, 1 any other answer, 2 no connection.
fn request_as(user: &TestUser, socket: &std::path::Path, line: &[u8]) -> i32 {
    let child = unsafe { libc::fork() };
    if child == 0 {
        unsafe {
            libc::setgroups(0, std::ptr::null());
            libc::setgid(user.gid);
            libc::setuid(user.uid);
        }
        let code = match std::os::unix::net::UnixStream::connect(socket) {
            Ok(stream) => {
                use std::io::{BufRead, Write};
                let mut writer = stream.try_clone().unwrap();
                let _ = writer.write_all(line);
                let mut answer = String::new();
                let _ = std::io::BufReader::new(stream).read_line(&mut answer);
                if answer.contains("permission_denied") {
                    0
                } else {
                    1
                }
            }
            Err(_) => 2,
        };
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(child, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "child crashed");
    libc::WEXITSTATUS(status)
}

#[test]
fn a_peer_with_another_uid_is_refused() {
    if unsafe { libc::geteuid() } != 0 {
        missing_prerequisite(
            "a_peer_with_another_uid_is_refused",
            "switching to another uid needs root",
        );
        return;
    }
    let user = TestUser::create();
    let mut env = TestEnv::new();
    env.start_server();
    // Let the other user reach the socket through the directory, so only the peer check
    // stops it.
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&env.socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let list = request_as(
        &user,
        &env.socket,
        b"{\"id\":\"x\",\"method\":\"mission.list\",\"params\":{}}\n",
    );
    let hello = request_as(
        &user,
        &env.socket,
        b"{\"id\":\"y\",\"method\":\"cockpit.hello\",\"params\":{}}\n",
    );
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let meaning = "1: answered without permission_denied, 2: could not connect";
    assert_eq!(list, 0, "mission.list as uid {}: {meaning}", user.uid);
    assert_eq!(hello, 0, "cockpit.hello as uid {}: {meaning}", user.uid);
    let missions = env.ok("mission.list", serde_json::json!({}));
    assert_eq!(
        missions["missions"].as_array().map(Vec::len),
        Some(0),
        "{missions}"
    );
}

#[test]
fn an_insecure_session_directory_is_refused() {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = env.nagi(&["server"]);
    assert_eq!(run.status, 3, "{}", run.describe());
    assert!(
        run.stderr.contains("accessible to other users"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_reply_poll_window_past_its_limit_is_refused_before_anything_is_written() {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[server]\nreply_poll_microseconds = 5000\n",
    )
    .unwrap();
    let run = env.nagi(&["server"]);
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(
        run.stderr
            .contains("server.reply_poll_microseconds is 5000; the limit is 1000"),
        "{}",
        run.describe()
    );
    assert!(!env.database_path().exists(), "no database was created");
    assert!(!env.socket.exists(), "no socket was bound");
}

#[test]
fn the_cli_starts_a_background_server_and_says_so() {
    let env = TestEnv::new();
    let first = env.nagi_ok(&["ping"]);
    assert!(
        first.stderr.contains("started one in the background"),
        "{}",
        first.describe()
    );
    let second = env.nagi_ok(&["ping"]);
    assert!(
        second.stderr.is_empty(),
        "no second start: {}",
        second.describe()
    );
    env.nagi_ok(&["server", "stop"]);
}

#[test]
fn named_sessions_are_separate() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    env.nagi_ok(&[
        "--session",
        "alpha",
        "mission",
        "create",
        "m1",
        "--title",
        "A",
        "--repo",
        &repo.path_text(),
        "--objective",
        "O",
        "--criterion",
        "C",
    ]);
    let alpha = env
        .nagi_ok(&["--session", "alpha", "--json", "mission", "list"])
        .json();
    let beta = env
        .nagi_ok(&["--session", "beta", "--json", "mission", "list"])
        .json();
    assert_eq!(alpha["missions"].as_array().unwrap().len(), 1);
    assert_eq!(beta["missions"].as_array().unwrap().len(), 0);
    assert!(env.config_dir.join("sessions/alpha/nagi.sock").exists());
    env.nagi_ok(&["--session", "alpha", "server", "stop"]);
    env.nagi_ok(&["--session", "beta", "server", "stop"]);
}

/// The config file's name and folder are shared with another program called nagi: its
/// sections are ignored with one warning line naming them, while nagi's own sections stay
/// strict (a misspelt key in `[server]` is still refused before anything is written).
#[test]
fn foreign_config_sections_are_ignored_with_a_warning_and_own_sections_stay_strict() {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[update]\nchannel = \"stable\"\n\n[theme]\nname = \"dark\"\n\n[server]\nreply_poll_microseconds = 50\n",
    )
    .unwrap();
    env.start_server();
    env.ok("ping", serde_json::json!({}));
    let log = env.server_log();
    assert!(
        log.contains("ignoring the config sections [update], [theme]")
            || log.contains("ignoring the config sections [theme], [update]"),
        "one warning names the foreign sections:\n{log}"
    );
    env.kill_server();

    let strict = TestEnv::new();
    std::fs::create_dir_all(&strict.config_dir).unwrap();
    std::fs::set_permissions(&strict.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        strict.config_dir.join("config.toml"),
        "[update]\nchannel = \"stable\"\n\n[server]\nreply_poll_microsecond = 50\n",
    )
    .unwrap();
    let run = strict.nagi(&["server"]);
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(
        run.stderr.contains("reply_poll_microsecond"),
        "{}",
        run.describe()
    );
    assert!(!strict.database_path().exists(), "no database was created");
}

#[test]
fn an_edited_config_applies_after_reload_config_without_a_restart() {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let config_file = env.config_dir.join("config.toml");
    std::fs::write(
        &config_file,
        "[providers.codex]\ncommand = [\"/nonexistent/codex\"]\n",
    )
    .unwrap();
    env.start_server();
    assert!(
        env.server_log().contains("configuration read"),
        "the log names the file it read:\n{}",
        env.server_log()
    );
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok("mission.configure", configure_params("m1", "true", &[]));
    let start = json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"});
    assert_eq!(
        env.error_code("mission.start", start.clone()),
        "provider_unavailable"
    );

    // A broken edit changes nothing, and says why.
    std::fs::write(&config_file, "[providers.codex\n").unwrap();
    let failed = env.nagi(&["server", "reload-config"]);
    assert_eq!(failed.status, 1, "{}", failed.describe());
    assert!(
        failed.stdout.contains("configuration reload: failed"),
        "{}",
        failed.describe()
    );
    assert!(failed.stdout.contains("unchanged"), "{}", failed.describe());

    // The fixed edit applies to the next start; a setting fixed at start is named.
    let log = fake_log_path(&env);
    std::fs::write(
        &config_file,
        format!(
            "[providers.codex]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {} }}\n\n[server]\nreply_poll_microseconds = 0\n\n{}",
            toml_string(test_binary("fake_codex").to_str().unwrap()),
            toml_string(&json!([{"text": "hello"}]).to_string()),
            toml_string(log.to_str().unwrap()),
            fake_sandbox_section(&env)
        ),
    )
    .unwrap();
    let reloaded = env.ok("server.reload_config", json!({}));
    assert_eq!(reloaded["status"], "partial", "{reloaded}");
    let diagnostics = reloaded["diagnostics"].to_string();
    assert!(diagnostics.contains("[providers] changed"), "{diagnostics}");
    assert!(
        diagnostics.contains("server.reply_poll_microseconds"),
        "{diagnostics}"
    );
    let started = env.ok("mission.start", start);
    assert_eq!(started["type"], "mission_run_started", "{started}");
}
