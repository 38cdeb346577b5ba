//! Kernel confinement of a provider process tree with Landlock.
//!
//! The provider's own read-only setting is a promise made by the provider; Landlock is a
//! promise made by the kernel. When the engine asks for [`Confinement`], the ruleset is
//! built here in the parent (opening paths and allocating is fine there), and the child only
//! runs two async-signal-safe system calls between `fork` and `exec`:
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self`. The restriction is inherited
//! by everything the provider starts, and cannot be lifted by it.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};

use crate::spec::Confinement;

/// The newest Landlock ABI this crate knows how to use. Rights of newer kernels are ignored;
/// rights an older kernel lacks are dropped (best effort), because the read/write split
/// that matters (write, remove, make, truncate) exists since ABI 1–3.
const NEWEST_KNOWN_ABI: ABI = ABI::V6;

/// The Landlock ABI version the running kernel offers, or `None` when Landlock is not
/// available (not built, not enabled at boot, or blocked by a seccomp filter).
///
/// The engine reports this with a run so the user can see which enforcement applied.
pub fn landlock_abi_version() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    // SAFETY: with a null attribute pointer, zero size and the VERSION flag the kernel only
    // returns the ABI number; no memory is read or written.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        Some(version as u32)
    } else {
        None
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfinementError {
    #[error(
        "Landlock is not available on this kernel, so the requested confinement cannot be applied"
    )]
    Unavailable,
    #[error("confinement path {path} cannot be opened: {message}")]
    Path { path: PathBuf, message: String },
    #[error("the Landlock ruleset cannot be built: {0}")]
    Ruleset(String),
}

/// A ruleset built in the parent, waiting to be applied in the child.
#[derive(Debug)]
pub struct PreparedConfinement {
    ruleset: OwnedFd,
}

impl PreparedConfinement {
    /// Builds a ruleset: read and execute beneath `read_paths`, every file-system right
    /// beneath `write_paths`, nothing anywhere else.
    pub fn prepare(confinement: &Confinement) -> Result<PreparedConfinement, ConfinementError> {
        if landlock_abi_version().is_none() {
            return Err(ConfinementError::Unavailable);
        }
        let abi = NEWEST_KNOWN_ABI;
        let ruleset_error =
            |error: landlock::RulesetError| ConfinementError::Ruleset(error.to_string());
        let mut created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .map_err(ruleset_error)?
            .create()
            .map_err(ruleset_error)?;
        for path in &confinement.read_paths {
            created = created
                .add_rule(PathBeneath::new(open_path(path)?, AccessFs::from_read(abi)))
                .map_err(ruleset_error)?;
        }
        for path in &confinement.write_paths {
            created = created
                .add_rule(PathBeneath::new(open_path(path)?, AccessFs::from_all(abi)))
                .map_err(ruleset_error)?;
        }
        let ruleset: Option<OwnedFd> = created.into();
        let ruleset = ruleset.ok_or(ConfinementError::Unavailable)?;
        Ok(PreparedConfinement { ruleset })
    }

    /// The raw ruleset descriptor, for [`restrict_current_thread`].
    pub fn raw_fd(&self) -> RawFd {
        self.ruleset.as_raw_fd()
    }
}

fn open_path(path: &Path) -> Result<PathFd, ConfinementError> {
    PathFd::new(path).map_err(|error| ConfinementError::Path {
        path: path.to_path_buf(),
        message: error.to_string(),
    })
}

/// Applies a prepared ruleset to the calling thread (and every process it starts from then
/// on); it cannot be undone.
///
/// # Safety
///
/// It only performs two system calls and touches no memory that another thread could hold,
/// so it is async-signal-safe and may also run in a `pre_exec` hook. `ruleset_fd` must be
/// the descriptor of a live [`PreparedConfinement`], and the calling thread must not be
/// one that is reused for other work (a pooled thread would stay confined).
pub unsafe fn restrict_current_thread(ruleset_fd: RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset_fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
