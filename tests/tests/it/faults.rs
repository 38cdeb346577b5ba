//! Disk and I/O faults: a full disk (SQLite's page limit, and a real tiny filesystem made by
//! the test) and a database that becomes read-only. Mutations fail with a clear code,
//! nothing acknowledged is lost, and the server recovers when space or write access
//! returns.

use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_tests::*;
use serde_json::{Value, json};

/// Creates missions until one fails; returns the acknowledged ids and the failure.
fn create_until_failure(
    env: &TestEnv,
    repo: &TestRepo,
    prefix: &str,
    limit: usize,
) -> (Vec<String>, Option<Value>) {
    let mut acknowledged = Vec::new();
    for index in 0..limit {
        let id = format!("{prefix}{index}");
        let mut params = create_params(&id, &repo.path_text());
        params["objective"] = json!("x".repeat(6000));
        let response = env.call("mission.create", params);
        if response.get("error").is_some() {
            return (acknowledged, Some(response));
        }
        acknowledged.push(id);
    }
    (acknowledged, None)
}

fn assert_all_present(env: &TestEnv, ids: &[String]) {
    for id in ids {
        let response = env.call("mission.get", json!({"mission_id": id}));
        assert_eq!(
            response["result"]["mission"]["mission_id"],
            id.as_str(),
            "acknowledged {id} is lost: {response}"
        );
    }
}

#[test]
fn the_page_limit_fails_writes_with_storage_full_and_nothing_acknowledged_is_lost() {
    let mut env = TestEnv::new();
    env.env.insert("NAGI_STORE_MAX_PAGES".into(), "60".into());
    env.start_server();
    let repo = TestRepo::new();
    let (acknowledged, failure) = create_until_failure(&env, &repo, "p", 500);
    let failure = failure.expect("a 60-page database fills up");
    assert_eq!(failure["error"]["code"], "storage_full", "{failure}");
    assert!(
        failure["error"]["message"]
            .as_str()
            .unwrap()
            .contains("full")
    );
    assert!(!acknowledged.is_empty());
    // Reads still work, and the failed create left nothing behind.
    let listed = env.ok("mission.list", json!({}))["missions"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, acknowledged.len());
    env.signal_server(libc::SIGTERM);
    env.env.remove("NAGI_STORE_MAX_PAGES");
    env.start_server();
    assert_all_present(&env, &acknowledged);
    assert_eq!(
        env.ok("mission.create", create_params("after", &repo.path_text()))["created"],
        true
    );
}

struct TinyFilesystem {
    mount_point: PathBuf,
}

impl TinyFilesystem {
    fn mount(root: &Path, size: &str) -> Option<TinyFilesystem> {
        let mount_point = root.join("tiny");
        std::fs::create_dir_all(&mount_point).unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&mount_point)
            .status()
            .ok()?;
        status.success().then_some(TinyFilesystem { mount_point })
    }

    fn remount(&self, mode: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(&self.mount_point)
            .status()
            .unwrap();
        assert!(status.success(), "remount {mode}");
    }
}

impl Drop for TinyFilesystem {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

fn tiny_session(size: &str) -> Option<(TestEnv, TinyFilesystem)> {
    let mut env = TestEnv::new();
    let Some(filesystem) = TinyFilesystem::mount(&env.root(), size) else {
        missing_prerequisite(
            "a full-disk test",
            "mounting a tmpfs needs root (CAP_SYS_ADMIN)",
        );
        return None;
    };
    let socket = filesystem.mount_point.join("nagi.sock");
    env.env
        .insert("NAGI_SOCKET_PATH".into(), socket.display().to_string());
    env.socket = socket;
    Some((env, filesystem))
}

#[test]
fn a_full_filesystem_fails_writes_and_recovers_when_space_returns() {
    let Some((mut env, filesystem)) = tiny_session("3m") else {
        return;
    };
    env.start_server();
    let repo = TestRepo::new();
    let filler = filesystem.mount_point.join("filler");
    // Leave a little room, then fill it with missions.
    let free = {
        let output = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(&filesystem.mount_point)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .last()
            .unwrap()
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    std::fs::write(&filler, vec![0u8; free.saturating_sub(300 * 1024) as usize]).unwrap();
    let (acknowledged, failure) = create_until_failure(&env, &repo, "f", 2000);
    let failure = failure.expect("the tiny filesystem fills up");
    let code = failure["error"]["code"].as_str().unwrap();
    assert!(
        code == "storage_full" || code == "storage_failed",
        "{failure}"
    );
    assert_all_present(&env, &acknowledged);
    // Space returns: the same server accepts writes again.
    std::fs::remove_file(&filler).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let response = env.call(
            "mission.create",
            create_params("after-space", &repo.path_text()),
        );
        if response.get("result").is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "writes never recovered: {response}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    env.signal_server(libc::SIGTERM);
    env.start_server();
    assert_all_present(&env, &acknowledged);
}

/// Linux refuses to remount a filesystem read-only while files on it are open for writing,
/// so the read-only case is the one a user meets: the data directory is read-only when the
/// server starts (a remounted disk, a restored backup). The server refuses to start with a
/// clear message instead of serving a store it cannot write, and loses nothing.
#[test]
fn a_read_only_data_directory_stops_the_server_with_a_clear_message_and_loses_nothing() {
    let Some((mut env, filesystem)) = tiny_session("64m") else {
        return;
    };
    env.start_server();
    let repo = TestRepo::new();
    let (acknowledged, _) = create_until_failure(&env, &repo, "r", 5);
    assert_eq!(acknowledged.len(), 5);
    env.signal_server(libc::SIGTERM);
    let before = std::fs::read(filesystem.mount_point.join("nagi.db")).unwrap();
    filesystem.remount("ro");
    let run = env.nagi(&["server"]);
    assert_ne!(run.status, 0, "{}", run.describe());
    assert!(
        run.stderr.contains("read-only"),
        "the message names the cause:\n{}",
        run.describe()
    );
    assert_eq!(
        std::fs::read(filesystem.mount_point.join("nagi.db")).unwrap(),
        before
    );
    filesystem.remount("rw");
    env.start_server();
    assert_all_present(&env, &acknowledged);
    assert_eq!(
        env.ok(
            "mission.create",
            create_params("after-rw", &repo.path_text())
        )["created"],
        true
    );
}

/// A damaged database is refused at start with the reason, and left as it is: before, the
/// server served it, reads failed with `storage_failed` and creates were acknowledged but
/// could not be read back.
#[test]
fn a_damaged_database_is_refused_at_start_and_left_untouched() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let (acknowledged, failure) = create_until_failure(&env, &repo, "c", 400);
    assert!(failure.is_none(), "{failure:?}");
    assert_eq!(acknowledged.len(), 400);
    env.signal_server(libc::SIGTERM);
    let database = env.database_path();
    {
        // Everything into the main file, so the damage below is what SQLite reads.
        let connection = rusqlite::Connection::open(&database).unwrap();
        connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let mut bytes = std::fs::read(&database).unwrap();
    let page_size = 4096;
    let pages = bytes.len() / page_size;
    assert!(pages > 8, "the database has {pages} pages");
    // Page 1 holds the header and the schema: keep it, so SQLite opens the file; garble
    // the middle of every other page after it.
    for page in (2..pages).step_by(2) {
        let start = page * page_size + 100;
        bytes[start..start + 2000].fill(0xA5);
    }
    std::fs::write(&database, &bytes).unwrap();
    let mut server = env
        .command()
        .arg("server")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            panic!("the server started on a damaged database");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = server.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!status.success());
    assert!(
        stderr.contains("is damaged") && stderr.contains("quick_check"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&database).unwrap(),
        bytes,
        "the file was changed"
    );
}
