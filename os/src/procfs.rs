//! `/proc/<pid>/stat`, parsed once.

/// The fields of `/proc/<pid>/stat` that nagi uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    /// The command name, without its parentheses.
    pub comm: String,
    /// Field 3: `R`, `S`, `D`, `Z`, `X`, ...
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Field 7, the controlling terminal as the kernel encodes it (0: none).
    pub tty_nr: u64,
    /// Field 22, in clock ticks since boot: with the pid, it names one process.
    pub start_time: u64,
}

impl ProcStat {
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }

    /// The controlling terminal as (major, minor), if the process has one.
    pub fn controlling_terminal(&self) -> Option<(u32, u32)> {
        if self.tty_nr == 0 {
            return None;
        }
        // The kernel's encoding: minor in bits 0–7 and 20–31, major in bits 8–19.
        let major = ((self.tty_nr >> 8) & 0xfff) as u32;
        let minor = ((self.tty_nr & 0xff) | ((self.tty_nr >> 12) & 0xfff00)) as u32;
        Some((major, minor))
    }
}

/// Parses the text of a `stat` file. `None` when it is not one.
pub fn parse_stat(pid: i32, text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    // The command name may itself hold parentheses and spaces: the last `)` ends it.
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // fields[0] is field 3 (state).
    Some(ProcStat {
        pid,
        comm,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        tty_nr: fields.get(4)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// The `stat` of `pid`, or `None` when the process is gone or unreadable.
pub fn read_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Every process visible in `/proc`.
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_stat)
        .collect()
}

/// Whether `pid` has ended (gone, or a zombie nobody reaped yet).
pub fn process_is_gone(pid: i32) -> bool {
    read_stat(pid).is_none_or(|stat| stat.is_zombie())
}

/// The parent pid of `pid`.
pub fn parent_pid(pid: i32) -> Option<i32> {
    read_stat(pid).map(|stat| stat.ppid)
}

/// Whether `pid` descends from `ancestor`, walking parent links (a subreaper keeps the
/// orphans of its children beneath it).
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
    fn a_command_name_with_spaces_and_parentheses_is_read_whole() {
        let text = "4242 (my (odd) name) S 1 4242 4242 34817 4242 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        let stat = parse_stat(4242, text).expect("a stat line");
        assert_eq!(stat.comm, "my (odd) name");
        assert_eq!(stat.state, 'S');
        assert_eq!((stat.ppid, stat.pgrp, stat.session), (1, 4242, 4242));
        assert_eq!(stat.tty_nr, 34817);
        assert_eq!(stat.controlling_terminal(), Some((136, 1)));
        assert_eq!(stat.start_time, 987654);
    }

    #[test]
    fn a_truncated_line_is_not_a_stat() {
        assert_eq!(parse_stat(1, "1 (init) S 0"), None);
        assert_eq!(parse_stat(1, "no parentheses at all"), None);
    }

    #[test]
    fn this_process_descends_from_its_parent_and_is_alive() {
        let me = std::process::id() as i32;
        let stat = read_stat(me).expect("our own stat");
        assert!(!stat.is_zombie());
        assert!(is_descendant_of(me, stat.ppid));
        assert!(!is_descendant_of(stat.ppid, me));
        assert!(!process_is_gone(me));
        assert!(all_processes().iter().any(|process| process.pid == me));
    }
}
