//! The terminal of another process, opened by the server that serves it directly (a
//! direct attach): `/proc/<pid>/fd/0` opened again, accepted only when it is a terminal
//! owned by the expected user and the process's stdout is the same terminal.

use std::fs::File;
use std::io::{Error, ErrorKind};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};

/// Opens the terminal on stdin of process `pid` for reading and writing, non-blocking,
/// without making it a controlling terminal, close-on-exec. The open goes through
/// `/proc/<pid>/fd/0`, so the caller needs the right to look at the process's descriptors
/// (same user, or root). Refused (with `InvalidInput` or `PermissionDenied`) when stdin
/// is not a terminal, when stdout is another file, or when the terminal does not belong
/// to `uid`.
pub fn open_process_terminal(pid: i32, uid: u32) -> std::io::Result<File> {
    if pid <= 0 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("no process {pid}"),
        ));
    }
    let stdin = format!("/proc/{pid}/fd/0");
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&stdin)?;
    // SAFETY: isatty only inspects the descriptor, which `terminal` keeps open.
    if unsafe { libc::isatty(terminal.as_raw_fd()) } != 1 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("stdin of process {pid} is not a terminal"),
        ));
    }
    let metadata = terminal.metadata()?;
    if metadata.uid() != uid {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "the terminal of process {pid} belongs to uid {}, not {uid}",
                metadata.uid()
            ),
        ));
    }
    // The output goes to the same descriptor: stdout must be that terminal too.
    let stdout = std::fs::metadata(format!("/proc/{pid}/fd/1"))?;
    if stdout.rdev() != metadata.rdev() || stdout.dev() != metadata.dev() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("stdout of process {pid} is not the terminal on its stdin"),
        ));
    }
    Ok(terminal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{FromRawFd as _, OwnedFd};
    use std::process::{Command, Stdio};

    /// A pseudo-terminal pair: (controller, terminal).
    fn open_pty() -> (OwnedFd, OwnedFd) {
        let (mut controller, mut terminal) = (0, 0);
        // SAFETY: openpty writes two descriptors; the name and settings are not asked for.
        let status = unsafe {
            libc::openpty(
                &mut controller,
                &mut terminal,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(status, 0, "openpty: {}", Error::last_os_error());
        // SAFETY: openpty succeeded; both descriptors are new and owned here.
        unsafe {
            (
                OwnedFd::from_raw_fd(controller),
                OwnedFd::from_raw_fd(terminal),
            )
        }
    }

    fn spawn_sleeper(stdin: Stdio, stdout: Stdio) -> std::process::Child {
        Command::new("sleep")
            .arg("30")
            .stdin(stdin)
            .stdout(stdout)
            .spawn()
            .expect("spawn sleep")
    }

    #[test]
    fn the_terminal_of_a_process_on_a_pty_is_opened_and_bytes_written_reach_the_pty() {
        use std::io::{Read as _, Write as _};
        let (controller, terminal) = open_pty();
        let mut child = spawn_sleeper(
            Stdio::from(terminal.try_clone().unwrap()),
            Stdio::from(terminal),
        );
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let result = open_process_terminal(child.id() as i32, uid);
        let other_user = open_process_terminal(child.id() as i32, uid + 1);
        child.kill().unwrap();
        child.wait().unwrap();
        let mut opened = result.expect("the child's terminal opens");
        opened.write_all(b"hello").unwrap();
        let mut controller = File::from(controller);
        let mut buffer = [0u8; 64];
        let count = controller.read(&mut buffer).unwrap();
        assert!(
            String::from_utf8_lossy(&buffer[..count]).contains("hello"),
            "{:?}",
            &buffer[..count]
        );
        assert_eq!(
            other_user.expect_err("another user's terminal").kind(),
            ErrorKind::PermissionDenied
        );
    }

    #[test]
    fn a_process_without_a_terminal_on_stdin_or_stdout_is_refused() {
        let mut piped = spawn_sleeper(Stdio::piped(), Stdio::null());
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let refused = open_process_terminal(piped.id() as i32, uid);
        piped.kill().unwrap();
        piped.wait().unwrap();
        assert_eq!(refused.unwrap_err().kind(), ErrorKind::InvalidInput);

        let (_controller, terminal) = open_pty();
        let mut split = spawn_sleeper(Stdio::from(terminal), Stdio::null());
        let refused = open_process_terminal(split.id() as i32, uid);
        split.kill().unwrap();
        split.wait().unwrap();
        let error = refused.unwrap_err();
        assert!(error.to_string().contains("stdout"), "{error}");
        assert!(open_process_terminal(0, uid).is_err());
    }
}
