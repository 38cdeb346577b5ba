//! Who is connecting: SO_PEERCRED, and whether the peer is one of the server's own
//! descendants (a process in a managed pane, however it detached).

use std::path::Path;

/// The parent pid of `pid`, from `/proc/<pid>/stat`.
pub fn parent_pid(pid: i32) -> Option<i32> {
    let stat =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    // The command name is in parentheses and may contain spaces; fields after it are fixed.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` descends from `ancestor` (walking parent links; the server is a
/// subreaper, so orphans of its children stay beneath it).
pub fn is_descendant_of(pid: i32, ancestor: i32) -> bool {
    let mut current = pid;
    for _ in 0..4096 {
        if current == ancestor {
            return true;
        }
        match parent_pid(current) {
            Some(parent) if parent > 0 && parent != current => current = parent,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_process_descends_from_us_and_we_do_not_descend_from_it() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let child_pid = child.id() as i32;
        assert_eq!(parent_pid(child_pid), Some(me));
        assert!(is_descendant_of(child_pid, me));
        assert!(!is_descendant_of(me, child_pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
