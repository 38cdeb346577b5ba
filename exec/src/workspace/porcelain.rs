//! Parsers for the machine-readable git outputs the scan reads:
//! `git status --porcelain=v2 -z --branch` and `git ls-files -s -v -z`.
//!
//! Parsing is where the fail-closed conditions visible in git's own answer are
//! detected: submodules, unmerged entries, intent-to-add entries,
//! skip-worktree and assume-unchanged flags, non-UTF-8 paths and paths that
//! are not plain relative paths inside the checkout.

use super::WorkspaceError;

/// One changed tracked path (`1` record of porcelain v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedPath {
    pub path: String,
    /// `X`: index compared with HEAD (`.` unchanged).
    pub index_status: u8,
    /// `Y`: working tree compared with the index (`.` unchanged).
    pub worktree_status: u8,
}

/// Parsed `git status --porcelain=v2 -z --branch --no-renames` output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PorcelainStatus {
    /// `# branch.oid`; `None` for an unborn branch.
    pub head: Option<String>,
    pub changed: Vec<ChangedPath>,
    pub untracked: Vec<String>,
    pub ignored: Vec<String>,
}

/// One stage-0 index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub path: String,
    /// Octal Git mode, e.g. `0o100644`, `0o100755`, `0o120000`.
    pub mode: u32,
    pub blob_id: String,
}

fn malformed(command: &str, detail: impl Into<String>) -> WorkspaceError {
    WorkspaceError::MalformedGitOutput {
        command: command.to_owned(),
        detail: detail.into(),
    }
}

/// Refuses paths that are empty, absolute, contain `..` or lie under `.git`.
pub fn check_relative_path(path: &str) -> Result<(), WorkspaceError> {
    // The substring tests are fast and almost always false; only then are
    // components compared.
    let suspicious = path.contains("..") || path.contains(".git");
    let escapes = path.is_empty()
        || path.starts_with('/')
        || (suspicious
            && path
                .split('/')
                .any(|component| component == ".." || component == ".git"));
    if escapes {
        return Err(WorkspaceError::PathOutsideWorkspace {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Converts a raw git path to a checked relative UTF-8 path.
pub fn checked_path(raw: &[u8]) -> Result<String, WorkspaceError> {
    let path = std::str::from_utf8(raw).map_err(|_| WorkspaceError::NonUtf8Path {
        lossy: String::from_utf8_lossy(raw).into_owned(),
    })?;
    check_relative_path(path)?;
    Ok(path.to_owned())
}

const STATUS_COMMAND: &str = "git status --porcelain=v2";

/// Parses porcelain v2 status (`-z`, `--branch`, `--no-renames`).
pub fn parse_status(output: &[u8]) -> Result<PorcelainStatus, WorkspaceError> {
    let mut status = PorcelainStatus::default();
    let mut records = output
        .split(|byte| *byte == 0)
        .filter(|record| !record.is_empty());
    while let Some(record) = records.next() {
        match record[0] {
            b'#' => {
                if let Some(oid) = record.strip_prefix(b"# branch.oid ") {
                    let oid = std::str::from_utf8(oid)
                        .map_err(|_| malformed(STATUS_COMMAND, "branch.oid is not UTF-8"))?;
                    status.head = (oid != "(initial)").then(|| oid.to_owned());
                }
            }
            b'1' | b'2' => {
                // `1 XY sub mH mI mW hH hI path`; `2` adds a score and an
                // original path (only without --no-renames; handled anyway).
                let field_count = if record[0] == b'1' { 9 } else { 10 };
                let fields: Vec<&[u8]> = record.splitn(field_count, |byte| *byte == b' ').collect();
                if fields.len() != field_count || fields[1].len() != 2 {
                    return Err(malformed(STATUS_COMMAND, "short changed-entry record"));
                }
                let path = checked_path(fields[field_count - 1])?;
                let submodule_field = fields[2];
                if submodule_field.first() == Some(&b'S') {
                    return Err(WorkspaceError::Submodule { path });
                }
                let (index_status, worktree_status) = (fields[1][0], fields[1][1]);
                if index_status == b'.' && worktree_status == b'A' {
                    return Err(WorkspaceError::IntentToAdd { path });
                }
                status.changed.push(ChangedPath {
                    path,
                    index_status,
                    worktree_status,
                });
                if record[0] == b'2' {
                    let original = records
                        .next()
                        .ok_or_else(|| malformed(STATUS_COMMAND, "rename without original path"))?;
                    let original_path = checked_path(original)?;
                    status.changed.push(ChangedPath {
                        path: original_path,
                        index_status: b'D',
                        worktree_status: b'.',
                    });
                }
            }
            b'u' => {
                let fields: Vec<&[u8]> = record.splitn(11, |byte| *byte == b' ').collect();
                let raw_path = fields.last().copied().unwrap_or_default();
                return Err(WorkspaceError::UnmergedEntry {
                    path: String::from_utf8_lossy(raw_path).into_owned(),
                });
            }
            b'?' => status
                .untracked
                .push(checked_path(record.get(2..).unwrap_or_default())?),
            b'!' => status
                .ignored
                .push(checked_path(record.get(2..).unwrap_or_default())?),
            other => {
                return Err(malformed(
                    STATUS_COMMAND,
                    format!("unknown record type {:?}", other as char),
                ));
            }
        }
    }
    Ok(status)
}

const LS_FILES_COMMAND: &str = "git ls-files -s -v -z";

/// Parses `git ls-files -s -v -z`: `TAG MODE OID STAGE\tPATH` records. The
/// tag is `H` for a normal entry, `S` for skip-worktree, lowercase for
/// assume-unchanged. Written for 100,000-entry indexes: `memchr` finds the
/// record ends and fields are taken from the fixed-width header.
pub fn parse_index(output: &[u8]) -> Result<Vec<IndexEntry>, WorkspaceError> {
    let mut entries = Vec::with_capacity(output.len() / 64);
    let mut rest = output;
    while !rest.is_empty() {
        let record_end = memchr::memchr(0, rest).unwrap_or(rest.len());
        let record = &rest[..record_end];
        rest = rest.get(record_end + 1..).unwrap_or_default();
        if record.is_empty() {
            continue;
        }
        entries.push(parse_index_record(record)?);
    }
    Ok(entries)
}

fn parse_index_record(record: &[u8]) -> Result<IndexEntry, WorkspaceError> {
    let tab = memchr::memchr(b'\t', record)
        .ok_or_else(|| malformed(LS_FILES_COMMAND, "record without tab"))?;
    let (header, raw_path) = (&record[..tab], &record[tab + 1..]);
    let path = checked_path(raw_path)?;
    // `T MODE OID STAGE`: one tag byte, a six-digit mode, a 40- or 64-hex
    // object id and a one-digit stage, separated by single spaces.
    let header_length = header.len();
    let well_formed = (header_length == 51 || header_length == 75)
        && header[1] == b' '
        && header[8] == b' '
        && header[header_length - 2] == b' ';
    if !well_formed {
        return Err(malformed(
            LS_FILES_COMMAND,
            format!("bad record header for {path}"),
        ));
    }
    let tag = header[0];
    let mode_text = &header[2..8];
    let blob_id = &header[9..header_length - 2];
    let stage = header[header_length - 1];
    match tag {
        b'H' => {}
        b'S' | b's' => return Err(WorkspaceError::SkipWorktree { path }),
        tag if tag.is_ascii_lowercase() => return Err(WorkspaceError::AssumeUnchanged { path }),
        _ => {
            return Err(malformed(
                LS_FILES_COMMAND,
                format!("unexpected tag for {path}"),
            ));
        }
    }
    if stage != b'0' {
        return Err(WorkspaceError::UnmergedEntry { path });
    }
    let mode = match mode_text {
        b"100644" => 0o100644,
        b"100755" => 0o100755,
        b"120000" => 0o120000,
        other => std::str::from_utf8(other)
            .ok()
            .and_then(|text| u32::from_str_radix(text, 8).ok())
            .ok_or_else(|| malformed(LS_FILES_COMMAND, format!("bad mode for {path}")))?,
    };
    if mode == 0o160000 {
        return Err(WorkspaceError::Submodule { path });
    }
    if !blob_id.iter().all(u8::is_ascii_hexdigit) {
        return Err(malformed(
            LS_FILES_COMMAND,
            format!("bad object id for {path}"),
        ));
    }
    // Checked to be ASCII hex just above.
    let blob_id = String::from_utf8(blob_id.to_vec()).expect("hex is UTF-8");
    Ok(IndexEntry {
        path,
        mode,
        blob_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_are_classified() {
        let output = b"# branch.oid e866ed215cc9a30fb2dc802f583931790242f197\0# branch.head main\0\
1 MM N... 100644 100644 100644 7898 9382 a file.txt\0\
1 .D N... 100644 100644 000000 6178 6178 gone\0? new dir/x\0! target/out\0";
        let status = parse_status(output).unwrap();
        assert_eq!(
            status.head.as_deref(),
            Some("e866ed215cc9a30fb2dc802f583931790242f197")
        );
        assert_eq!(status.changed.len(), 2);
        assert_eq!(status.changed[0].path, "a file.txt");
        assert_eq!(
            (
                status.changed[0].index_status,
                status.changed[0].worktree_status
            ),
            (b'M', b'M')
        );
        assert_eq!(status.untracked, vec!["new dir/x"]);
        assert_eq!(status.ignored, vec!["target/out"]);
        assert_eq!(
            parse_status(b"# branch.oid (initial)\0").unwrap().head,
            None
        );
    }

    #[test]
    fn fail_closed_records_are_errors() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"1 .A N... 000000 000000 100644 0000 0000 ita\0",
                "intent-to-add",
            ),
            (b"1 .M SC.. 160000 160000 160000 1 1 sub\0", "submodule"),
            (
                b"u UU N... 100644 100644 100644 100644 1 2 3 conflict\0",
                "merge conflicts",
            ),
            (b"? ../escape\0", "escapes"),
            (b"? a/.git/config\0", "escapes"),
            (b"? bad\xff\0", "UTF-8"),
        ];
        for (output, fragment) in cases {
            let message = parse_status(output).unwrap_err().to_string();
            assert!(
                message.contains(fragment),
                "{message} should mention {fragment}"
            );
        }
    }

    #[test]
    fn index_records_are_parsed_and_flags_refused() {
        let output = b"H 100755 93829c7b4af9dfbeea3b31395b042a614d7a190d 0\trun.sh\0\
H 120000 2e65efe2a145dda7ee51d1741299f848e5bf752e 0\tlink\0";
        let entries = parse_index(output).unwrap();
        assert_eq!(entries[0].mode, 0o100755);
        assert_eq!(entries[1].path, "link");
        let cases: &[(&[u8], &str)] = &[
            (
                b"S 100644 61780798228d17af2d34fce4cfbdf35556832472 0\tb\0",
                "skip-worktree",
            ),
            (
                b"h 100644 61780798228d17af2d34fce4cfbdf35556832472 0\tb\0",
                "assume-unchanged",
            ),
            (
                b"H 160000 61780798228d17af2d34fce4cfbdf35556832472 0\tsub\0",
                "submodule",
            ),
            (
                b"H 100644 61780798228d17af2d34fce4cfbdf35556832472 2\tc\0",
                "merge conflicts",
            ),
            (b"H 100644 6178 0\tshort\0", "bad record header"),
        ];
        for (output, fragment) in cases {
            let message = parse_index(output).unwrap_err().to_string();
            assert!(
                message.contains(fragment),
                "{message} should mention {fragment}"
            );
        }
    }
}
