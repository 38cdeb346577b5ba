//! Field rules of contract §2 and §5.1. Limits are UTF-8 byte counts.

use nagi_schema::mission::MissionPathRule;

pub use nagi_schema::ids::MAX_ID_BYTES;
pub const MAX_TITLE_BYTES: usize = 256;
pub const MAX_OBJECTIVE_BYTES: usize = 8192;
pub const MAX_CRITERION_BYTES: usize = 1024;
pub const MAX_CRITERIA: usize = 16;
pub const MAX_PATH_BYTES: usize = 4096;
pub const MAX_CHECKS: usize = 32;
pub const MAX_PROGRAM_BYTES: usize = 1024;
pub const MAX_ARGS: usize = 128;
pub const MAX_ARG_BYTES: usize = 4096;
pub const MAX_PATH_RULES: usize = 64;
pub const MAX_ARTIFACTS: usize = 32;
pub const MAX_REVIEWERS: usize = 32;
pub const MAX_COVERED: usize = 32;

/// The id rule (`nagi_schema::ids`): 1–128 bytes of `A–Z a–z 0–9 _ . : -`, and not `.` or
/// `..` (ids name files and folders: transcripts, a run's scratch dir).
pub fn id_is_valid(id: &str) -> bool {
    nagi_schema::ids::check_id_text(id).is_ok()
}

pub fn check_id(field: &str, id: &str) -> Result<(), String> {
    nagi_schema::ids::check_id_text(id).map_err(|fault| fault.describe(field, id))
}

/// Text fields: non-blank after trimming, within the byte limit, and without control
/// characters other than `\n`, `\r` and `\t`.
pub fn check_text(field: &str, text: &str, max_bytes: usize) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!("{field} must not be empty or blank"));
    }
    if text.len() > max_bytes {
        return Err(format!(
            "{field} is {} bytes long; the limit is {max_bytes}",
            text.len()
        ));
    }
    if let Some(bad) = text
        .chars()
        .find(|character| character.is_control() && !matches!(character, '\n' | '\r' | '\t'))
    {
        return Err(format!(
            "{field} contains the control character U+{:04X}",
            bad as u32
        ));
    }
    if let Some((position, bad, kind)) =
        text.chars().enumerate().find_map(|(position, character)| {
            hidden_character_kind(character).map(|kind| (position, character, kind))
        })
    {
        return Err(format!(
            "{field} contains U+{:04X} ({kind}) at character {}; what a person reads could differ from what is stored, so it is refused",
            bad as u32,
            position + 1
        ));
    }
    Ok(())
}

/// Characters that change how text is shown without showing themselves: bidirectional
/// controls (which can reorder what a person reads), zero-width and other invisible
/// characters, and the Unicode line and paragraph separators (a line break most views do
/// not draw as one). Emoji variation selectors and tag characters are allowed: they only
/// pick how an emoji is drawn.
pub fn hidden_character_kind(character: char) -> Option<&'static str> {
    match character {
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some("a bidirectional control"),
        '\u{200B}'..='\u{200D}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{180E}'
        | '\u{00AD}'
        | '\u{034F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{FFA0}' => Some("an invisible character"),
        '\u{2028}' | '\u{2029}' => Some("a line or paragraph separator"),
        _ => None,
    }
}

/// Normalises a workspace-relative path (§5.1). `allow_root` says whether "nothing left"
/// becomes `.` (cwd, prefix) or is invalid (exact paths, artifacts).
pub fn normalise_relative_path(raw: &str, allow_root: bool) -> Result<String, String> {
    if raw.is_empty() {
        return Err("the path is empty".into());
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(format!(
            "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
            raw.len()
        ));
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    if raw.contains('\\') {
        return Err(format!("the path {raw:?} contains a backslash; use '/'"));
    }
    if raw.contains(':') {
        return Err(format!(
            "the path {raw:?} contains ':'; paths are workspace-relative"
        ));
    }
    if raw.starts_with('/') {
        return Err(format!(
            "the path {raw:?} is absolute; paths are workspace-relative"
        ));
    }
    let mut parts = Vec::new();
    for component in raw.split('/') {
        match component {
            "" | "." => continue,
            ".." => return Err(format!("the path {raw:?} leaves the workspace with '..'")),
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return if allow_root {
            Ok(".".into())
        } else {
            Err(format!("the path {raw:?} names the workspace root"))
        };
    }
    Ok(parts.join("/"))
}

/// Normalises a path rule: a prefix that normalises to the root becomes `all`.
pub fn normalise_path_rule(rule: &MissionPathRule) -> Result<MissionPathRule, String> {
    match rule {
        MissionPathRule::All => Ok(MissionPathRule::All),
        MissionPathRule::Exact { path } => {
            let path = normalise_relative_path(path, false)
                .map_err(|error| format!("exact path rule: {error}"))?;
            Ok(MissionPathRule::Exact { path })
        }
        MissionPathRule::Prefix { prefix } => {
            let prefix = normalise_relative_path(prefix, true)
                .map_err(|error| format!("prefix path rule: {error}"))?;
            Ok(if prefix == "." {
                MissionPathRule::All
            } else {
                MissionPathRule::Prefix { prefix }
            })
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn bidirectional_invisible_and_separator_characters_are_refused_with_their_place() {
        for (text, code_point, kind, position) in [
            ("Fix \u{202E}nigol", "U+202E", "bidirectional control", 5),
            ("a\u{2066}b", "U+2066", "bidirectional control", 2),
            ("zero\u{200B}width", "U+200B", "invisible character", 5),
            ("\u{FEFF}bom", "U+FEFF", "invisible character", 1),
            ("soft\u{00AD}hyphen", "U+00AD", "invisible character", 5),
            (
                "line\u{2028}separator",
                "U+2028",
                "line or paragraph separator",
                5,
            ),
            ("para\u{2029}", "U+2029", "line or paragraph separator", 5),
        ] {
            let error = check_text("objective", text, 1024).unwrap_err();
            assert!(error.starts_with("objective contains"), "{error}");
            assert!(error.contains(code_point), "{error}");
            assert!(error.contains(kind), "{error}");
            assert!(
                error.contains(&format!("at character {position};")),
                "{error}"
            );
        }
        assert!(check_text("title", "Fix the ❤️ and 🇫🇷 icons, naïve café", 256).is_ok());
    }
    use super::*;

    #[test]
    fn ids_follow_the_id_rule() {
        assert!(id_is_valid("mission-1.a:b_c"));
        assert!(id_is_valid(&"a".repeat(128)));
        assert!(!id_is_valid(&"a".repeat(129)));
        assert!(!id_is_valid(""));
        assert!(!id_is_valid("../escape"));
        assert!(!id_is_valid("has space"));
        assert!(!id_is_valid("ünicode"));
    }

    #[test]
    fn text_rules_count_bytes_and_refuse_control_characters() {
        assert!(check_text("title", "Fix\tlogin\r\n", 256).is_ok());
        assert!(check_text("title", "   ", 256).is_err());
        assert!(
            check_text("title", "bell\u{7}", 256)
                .unwrap_err()
                .contains("U+0007")
        );
        let two_byte = "é".repeat(129); // 258 bytes, 129 characters
        assert!(
            check_text("title", &two_byte, 256)
                .unwrap_err()
                .contains("258 bytes")
        );
    }

    #[test]
    fn paths_normalise_as_the_contract_says() {
        assert_eq!(
            normalise_relative_path("./src//nested/", true).unwrap(),
            "src/nested"
        );
        assert_eq!(
            normalise_relative_path("./src//lib.rs/", false).unwrap(),
            "src/lib.rs"
        );
        assert_eq!(
            normalise_relative_path("./crates//core/", true).unwrap(),
            "crates/core"
        );
        assert_eq!(normalise_relative_path("./", true).unwrap(), ".");
        for bad in [
            "../src/lib.rs",
            "/src",
            "C:/src",
            "C:\\src",
            "\\\\server\\share",
            "src\\..\\secret",
            "",
        ] {
            assert!(
                normalise_relative_path(bad, true).is_err(),
                "{bad:?} must be rejected"
            );
        }
        assert!(normalise_relative_path(".", false).is_err());
        assert_eq!(
            normalise_path_rule(&MissionPathRule::Prefix {
                prefix: "./".into()
            })
            .unwrap(),
            MissionPathRule::All
        );
        assert!(normalise_path_rule(&MissionPathRule::Exact { path: ".".into() }).is_err());
    }
}
