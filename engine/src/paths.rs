//! Where the socket, the database and the locks live.
//!
//! Socket resolution order (as the seed): `--session NAME`, then `NAGI_SOCKET_PATH`, then
//! `NAGI_SESSION`, then the default `<config dir>/nagi.sock`. Named sessions live in
//! `<config dir>/sessions/<name>/`. The config dir is `$NAGI_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/nagi`, else `~/.config/nagi`. A session's data (database, log, lock)
//! lives in the directory of its socket.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct PathEnvironment {
    pub nagi_socket_path: Option<String>,
    pub nagi_session: Option<String>,
    pub nagi_config_dir: Option<String>,
    pub xdg_config_home: Option<String>,
    pub home: Option<String>,
}

impl PathEnvironment {
    pub fn from_process() -> PathEnvironment {
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        PathEnvironment {
            nagi_socket_path: read("NAGI_SOCKET_PATH"),
            nagi_session: read("NAGI_SESSION"),
            nagi_config_dir: read("NAGI_CONFIG_DIR"),
            xdg_config_home: read("XDG_CONFIG_HOME"),
            home: read("HOME"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    pub config_dir: PathBuf,
    pub socket_path: PathBuf,
    /// Directory of the socket: holds the database, the server log and the server lock.
    pub data_dir: PathBuf,
    pub session_name: Option<String>,
}

impl SessionPaths {
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("nagi.db")
    }

    pub fn server_lock_path(&self) -> PathBuf {
        self.data_dir.join("server.lock")
    }

    pub fn server_log_path(&self) -> PathBuf {
        self.data_dir.join("server.log")
    }

    /// Shared by every session of the config dir, so two servers never share a checkout.
    pub fn claim_lock_dir(&self) -> PathBuf {
        self.config_dir.join("mission-worktree-locks")
    }

    pub fn config_file_path(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// Per-run transcripts shown in the run panes.
    pub fn transcript_dir(&self) -> PathBuf {
        self.data_dir.join("transcripts")
    }
}

/// The default folder of mission worktrees: `$XDG_DATA_HOME/nagi/worktrees`, else
/// `~/.local/share/nagi/worktrees` (outside nagi's config and data folders); `None` when
/// neither `XDG_DATA_HOME` nor `HOME` is set.
pub fn default_worktrees_dir() -> Option<PathBuf> {
    let read = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(data) = read("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
    {
        return Some(data.join("nagi").join("worktrees"));
    }
    read("HOME").map(|home| PathBuf::from(home).join(".local/share/nagi/worktrees"))
}

/// A recipe's service id as one path segment. The recipe's id rule already refuses `.`,
/// `..` and `/`; this keeps the log path inside its folder even so. Mission and run ids
/// are typed (`nagi_schema::ids`) and are their own segments.
pub fn path_segment(id: &str) -> String {
    match id {
        "." => "%2E".into(),
        ".." => "%2E%2E".into(),
        other => other.replace('/', "%2F"),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error(
        "session name {0:?} is not valid: use letters, digits, '_', '.' and '-' (not '.' or '..')"
    )]
    InvalidSessionName(String),
    #[error("cannot find a config directory: set NAGI_CONFIG_DIR, XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    #[error("NAGI_SOCKET_PATH {0:?} must be an absolute path to a socket file")]
    InvalidSocketPath(String),
}

fn session_name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 64
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'))
}

pub fn config_dir(environment: &PathEnvironment) -> Result<PathBuf, PathError> {
    if let Some(dir) = &environment.nagi_config_dir {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = &environment.xdg_config_home {
        return Ok(Path::new(dir).join("nagi"));
    }
    if let Some(home) = &environment.home {
        return Ok(Path::new(home).join(".config").join("nagi"));
    }
    Err(PathError::NoConfigDir)
}

pub fn resolve_session_paths(
    session_flag: Option<&str>,
    environment: &PathEnvironment,
) -> Result<SessionPaths, PathError> {
    let config_dir = config_dir(environment)?;
    let named = |name: &str| -> Result<SessionPaths, PathError> {
        if !session_name_is_valid(name) {
            return Err(PathError::InvalidSessionName(name.to_string()));
        }
        let data_dir = config_dir.join("sessions").join(name);
        Ok(SessionPaths {
            config_dir: config_dir.clone(),
            socket_path: data_dir.join("nagi.sock"),
            data_dir,
            session_name: Some(name.to_string()),
        })
    };
    if let Some(name) = session_flag {
        return named(name);
    }
    if let Some(socket) = &environment.nagi_socket_path {
        let socket_path = PathBuf::from(socket);
        let Some(parent) = socket_path
            .parent()
            .filter(|_| socket_path.is_absolute() && socket_path.file_name().is_some())
        else {
            return Err(PathError::InvalidSocketPath(socket.clone()));
        };
        return Ok(SessionPaths {
            config_dir: config_dir.clone(),
            data_dir: parent.to_path_buf(),
            socket_path,
            session_name: None,
        });
    }
    if let Some(name) = &environment.nagi_session {
        return named(name);
    }
    Ok(SessionPaths {
        config_dir: config_dir.clone(),
        socket_path: config_dir.join("nagi.sock"),
        data_dir: config_dir,
        session_name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment() -> PathEnvironment {
        PathEnvironment {
            nagi_socket_path: None,
            nagi_session: None,
            nagi_config_dir: None,
            xdg_config_home: Some("/xdg".into()),
            home: Some("/home/u".into()),
        }
    }

    #[test]
    fn resolution_follows_the_documented_order() {
        let mut env = environment();
        assert_eq!(
            resolve_session_paths(None, &env).unwrap().socket_path,
            Path::new("/xdg/nagi/nagi.sock")
        );
        env.xdg_config_home = None;
        assert_eq!(
            resolve_session_paths(None, &env).unwrap().socket_path,
            Path::new("/home/u/.config/nagi/nagi.sock")
        );
        env.nagi_config_dir = Some("/cfg".into());
        assert_eq!(
            resolve_session_paths(None, &env).unwrap().socket_path,
            Path::new("/cfg/nagi.sock")
        );
        env.nagi_session = Some("work".into());
        assert_eq!(
            resolve_session_paths(None, &env).unwrap().socket_path,
            Path::new("/cfg/sessions/work/nagi.sock")
        );
        env.nagi_socket_path = Some("/run/x/n.sock".into());
        let paths = resolve_session_paths(None, &env).unwrap();
        assert_eq!(paths.socket_path, Path::new("/run/x/n.sock"));
        assert_eq!(paths.database_path(), Path::new("/run/x/nagi.db"));
        let flagged = resolve_session_paths(Some("cli"), &env).unwrap();
        assert_eq!(
            flagged.socket_path,
            Path::new("/cfg/sessions/cli/nagi.sock")
        );
        assert_eq!(
            flagged.claim_lock_dir(),
            Path::new("/cfg/mission-worktree-locks")
        );
    }

    #[test]
    fn bad_session_names_and_relative_socket_paths_are_refused() {
        let env = environment();
        for bad in ["..", ".", "a/b", "", "sp ace"] {
            assert!(resolve_session_paths(Some(bad), &env).is_err(), "{bad:?}");
        }
        let mut env = environment();
        env.nagi_socket_path = Some("relative.sock".into());
        assert!(matches!(
            resolve_session_paths(None, &env),
            Err(PathError::InvalidSocketPath(_))
        ));
    }
}
