//! Content fingerprints of the paths git reported as changed or untracked.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::WorkspaceError;
use super::snapshot::Fingerprint;

/// Per-scan hashing limits and the running total.
pub struct HashBudget {
    pub max_file_bytes: u64,
    pub max_total_bytes: u64,
    pub hashed_bytes: u64,
}

fn special_file_kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}

/// (inode, size, mtime ns, ctime ns): if any differs after reading, the file
/// changed while we hashed it.
fn change_marker(metadata: &std::fs::Metadata) -> (u64, u64, i64, i64, i64, i64) {
    (
        metadata.ino(),
        metadata.size(),
        metadata.mtime(),
        metadata.mtime_nsec(),
        metadata.ctime(),
        metadata.ctime_nsec(),
    )
}

fn io_error(path: &str, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Fingerprints `root/relative_path` without following a final symlink.
/// A directory where git reported a path (a file replaced by a directory) is
/// `Missing`: the file is gone, and the directory's files are listed on their
/// own.
pub fn fingerprint_path(
    root: &Path,
    relative_path: &str,
    budget: &mut HashBudget,
) -> Result<Fingerprint, WorkspaceError> {
    let full_path = root.join(relative_path);
    let metadata = match std::fs::symlink_metadata(&full_path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Fingerprint::Missing);
        }
        Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => {
            return Ok(Fingerprint::Missing);
        }
        Err(error) => return Err(io_error(relative_path, error)),
    };
    let file_type = metadata.file_type();
    if file_type.is_symlink() {
        let target =
            std::fs::read_link(&full_path).map_err(|error| io_error(relative_path, error))?;
        return Ok(Fingerprint::Symlink {
            target_sha256: hex::encode(Sha256::digest(target.as_os_str().as_bytes())),
        });
    }
    if file_type.is_dir() {
        return Ok(Fingerprint::Missing);
    }
    if !file_type.is_file() {
        return Err(WorkspaceError::SpecialFile {
            path: relative_path.to_owned(),
            kind: special_file_kind(file_type),
        });
    }
    let size = metadata.size();
    if size > budget.max_file_bytes {
        return Err(WorkspaceError::FileTooLarge {
            path: relative_path.to_owned(),
            size,
            limit: budget.max_file_bytes,
        });
    }
    budget.hashed_bytes += size;
    if budget.hashed_bytes > budget.max_total_bytes {
        return Err(WorkspaceError::TooMuchToHash {
            limit: budget.max_total_bytes,
        });
    }
    let mut file =
        open_without_following(&full_path).map_err(|error| io_error(relative_path, error))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0_u8; 256 * 1024];
    let mut read_total: u64 = 0;
    loop {
        let length = file
            .read(&mut buffer)
            .map_err(|error| io_error(relative_path, error))?;
        if length == 0 {
            break;
        }
        read_total += length as u64;
        if read_total > size {
            break;
        }
        hasher.update(&buffer[..length]);
    }
    let after =
        std::fs::symlink_metadata(&full_path).map_err(|error| io_error(relative_path, error))?;
    if read_total != size || change_marker(&after) != change_marker(&metadata) {
        return Err(WorkspaceError::ChangedDuringScan {
            detail: format!("`{relative_path}` changed while it was hashed"),
        });
    }
    Ok(Fingerprint::File {
        sha256: hex::encode(hasher.finalize()),
        executable: metadata.mode() & 0o100 != 0,
        size,
    })
}

fn open_without_following(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}
