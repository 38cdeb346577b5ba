//! A tmux server of a test's own, for the tests that drive the real `nagi` binaries from
//! inside a terminal (attach, the cockpit, the console) and read what tmux shows.

use std::path::Path;
use std::time::{Duration, Instant};

use nagi_tests::*;

use crate::panes::PATIENCE;

/// A tmux server of the test's own, on a private socket; killed when dropped.
pub struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    /// `None` (with the reason printed) when tmux is not installed.
    pub fn start(dir: &Path) -> Option<Tmux> {
        if std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_err()
        {
            missing_prerequisite(
                "a tmux test",
                "tmux is not installed (apt-get install -y tmux)",
            );
            return None;
        }
        Some(Tmux {
            socket: dir.join("tmux.sock"),
        })
    }

    /// Runs one tmux command on the test's server. A target given after `-t` as a bare
    /// session name (`t`, `o`) is passed as the exact session `=t:`: tmux tries a bare target
    /// as the start of a window name in the newest session before it tries session names, and
    /// a new session's window is named `tmux` for a moment, so `-t t` could reach session `o`.
    pub fn run(&self, args: &[&str]) -> String {
        let args: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(index, arg)| {
                let follows_target_flag = index > 0 && args[index - 1] == "-t";
                if follows_target_flag && is_bare_session_name(arg) {
                    format!("={arg}:")
                } else {
                    arg.to_string()
                }
            })
            .collect();
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(&args)
            .output()
            .expect("tmux runs");
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A 100×30 session `t` running `sh` with the prompt `tmux$ `, whose `nagi` commands reach
    /// the test's server through `config_dir` (the test's own socket variables removed);
    /// returns once the prompt shows.
    pub fn open_shell(&self, config_dir: &Path) {
        let shell = format!(
            "env -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} PS1='tmux$ ' sh",
            config_dir.display()
        );
        self.new_session(100, 30, &shell);
        self.wait_for("t", "the tmux shell's prompt", |screen| {
            screen.contains("tmux$")
        });
    }

    /// A `cols`×`rows` session `t` running the real `nagi pane attach PANE` against the
    /// test's server (its own socket variables removed, its config folder and HOME given).
    pub fn attach_pane(&self, env: &TestEnv, pane_id: &str, cols: u16, rows: u16) {
        let attach = format!(
            "env -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} HOME={} {} pane attach {pane_id}",
            env.config_dir.display(),
            env.home().display(),
            nagi_binary().display()
        );
        self.new_session(cols, rows, &attach);
    }

    /// A detached `cols`×`rows` session `t` running `command`.
    fn new_session(&self, cols: u16, rows: u16, command: &str) {
        let (cols, rows) = (cols.to_string(), rows.to_string());
        self.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &cols,
            "-y",
            &rows,
            command,
        ]);
    }

    pub fn capture(&self, target: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", target])
    }

    /// Polls the captured screen until `accept` holds.
    pub fn wait_for(&self, target: &str, what: &str, accept: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.capture(target);
            if accept(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "tmux never showed {what}; last screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A target that names a session and nothing more: no window, pane or exact-match syntax.
fn is_bare_session_name(target: &str) -> bool {
    !target.is_empty() && !target.contains([':', '.', '%', '=', '@', '$'])
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
