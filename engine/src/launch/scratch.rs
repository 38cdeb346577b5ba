//! A run's private scratch folder, its `TMPDIR`.
//!
//! Each run gets a folder of its own under the server's temp dir,
//! `<temp>/nagi-run-<session>/<digest of mission and run>/tmp`: never inside nagi's config or data folders
//! (no provider may write those), never shared between runs, and short, whatever the ids'
//! lengths, so that a Unix socket a provider makes in it stays under the kernel's limit of
//! 108 bytes. The folder is removed when the run's supervision ends; the session's folder
//! is removed when the server stops, after its providers, and at start-up, once the
//! processes a killed server left are ended. A provider's scratch files (OpenCode unpacks
//! about 11 MB of libraries per run) do not pile up in `/tmp`.

use std::path::{Path, PathBuf};

use crate::paths::SessionPaths;

/// This session's folder of run scratch folders: `<temp>/nagi-run-<12 hex>`, named by the
/// session's marker digest (which names no folder of the person's).
pub fn session_scratch_root(paths: &SessionPaths) -> PathBuf {
    let session = crate::leftovers::session_marker_value(&paths.data_dir);
    std::env::temp_dir().join(format!("nagi-run-{}", &session[..12]))
}

/// The folder of one run of one mission, named by 16 hex digits of the digest of both ids:
/// two missions may each have a run of the same id.
fn run_folder(paths: &SessionPaths, mission_id: &str, run_id: &str) -> PathBuf {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(mission_id.as_bytes());
    hasher.update([0]);
    hasher.update(run_id.as_bytes());
    let digest = hasher.finalize();
    session_scratch_root(paths).join(hex::encode(&digest[..8]))
}

/// The run's `TMPDIR`. The launch creates it (mode 0700).
pub fn run_scratch_dir(paths: &SessionPaths, mission_id: &str, run_id: &str) -> PathBuf {
    run_folder(paths, mission_id, run_id).join("tmp")
}

/// Removes the run's scratch folder and all it holds. A folder already gone is not an
/// error; any other failure is logged, and the folder is left for the next server.
pub fn remove_run_scratch(paths: &SessionPaths, mission_id: &str, run_id: &str) {
    remove_logged(&run_folder(paths, mission_id, run_id));
}

/// Removes the session's folder and every run scratch folder in it. Only while no provider
/// of the session runs: at start-up, after the previous server's processes were ended, and
/// when the server stops, after its providers.
pub fn remove_session_scratch(paths: &SessionPaths) {
    remove_logged(&session_scratch_root(paths));
}

fn remove_logged(folder: &Path) {
    // `remove_dir_all` does not follow symbolic links, so a link a provider left in its
    // folder removes the link, not what it points to.
    match std::fs::remove_dir_all(folder) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(folder = %folder.display(), %error, "a run's scratch folder could not be removed")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn session_in(dir: &Path) -> SessionPaths {
        SessionPaths {
            config_dir: dir.join("config"),
            socket_path: dir.join("data/nagi.sock"),
            data_dir: dir.join("data"),
            session_name: None,
        }
    }

    #[test]
    fn runs_of_the_same_id_in_two_missions_get_two_folders() {
        let dir = tempfile::tempdir().unwrap();
        let paths = session_in(dir.path());
        let first = run_scratch_dir(&paths, "mission-a", "r1");
        let second = run_scratch_dir(&paths, "mission-b", "r1");
        assert_ne!(first, second);
        assert!(first.starts_with(session_scratch_root(&paths)));
        // Long ids still give a short path.
        let long = run_scratch_dir(&paths, &"m".repeat(128), &"r".repeat(128));
        assert_eq!(
            long.as_os_str().len(),
            first.as_os_str().len(),
            "{}",
            long.display()
        );
    }

    #[test]
    fn removing_a_run_folder_keeps_other_runs_and_what_links_point_to() {
        let dir = tempfile::tempdir().unwrap();
        let paths = session_in(dir.path());
        let kept_outside = dir.path().join("outside");
        std::fs::create_dir_all(&kept_outside).unwrap();
        std::fs::write(kept_outside.join("keep"), b"mine").unwrap();
        let ended = run_scratch_dir(&paths, "mission-a", "r1");
        let other = run_scratch_dir(&paths, "mission-b", "r1");
        for folder in [&ended, &other] {
            std::fs::create_dir_all(folder.join("nested")).unwrap();
            std::fs::write(folder.join("nested/lib.so"), vec![0u8; 4096]).unwrap();
        }
        symlink(&kept_outside, ended.join("link")).unwrap();

        remove_run_scratch(&paths, "mission-a", "r1");
        assert!(!ended.parent().unwrap().exists());
        assert!(other.join("nested/lib.so").exists());
        assert_eq!(std::fs::read(kept_outside.join("keep")).unwrap(), b"mine");
        // Twice is not an error.
        remove_run_scratch(&paths, "mission-a", "r1");

        remove_session_scratch(&paths);
        assert!(!session_scratch_root(&paths).exists());
        assert!(kept_outside.join("keep").exists());
    }
}
