//! Value rules of the recipe (contract §11). Each returns `Err(message)`
//! describing the first thing wrong with one value.

/// The id rule of every id (`nagi_schema::ids`): 1–128 bytes of `A–Z a–z 0–9 _ . : -`,
/// and neither `.` nor `..` (a service id names its log file).
pub fn check_id(value: &str) -> Result<(), String> {
    use nagi_schema::ids::IdFault;
    nagi_schema::ids::check_id_text(value).map_err(|fault| {
        match fault {
            IdFault::Empty | IdFault::TooLong { .. } => "must be 1 to 128 characters",
            IdFault::DotSegment => "must not be `.` or `..`",
            IdFault::Character => "may only contain letters, digits, `_`, `.`, `:` and `-`",
        }
        .to_owned()
    })
}

fn has_line_breaks_or_nul(value: &str) -> bool {
    value.contains(['\0', '\r', '\n'])
}

/// One argv entry: non-empty, ≤ 4096 bytes, no NUL/CR/LF.
pub fn check_argument(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if value.len() > 4096 {
        return Err(format!(
            "is {} bytes; an argument may be at most 4096 bytes",
            value.len()
        ));
    }
    if has_line_breaks_or_nul(value) {
        return Err("must not contain NUL, CR or LF".to_owned());
    }
    Ok(())
}

/// `[worktree].location`: relative, only normal components, no trailing
/// separator.
pub fn check_worktree_location(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if has_line_breaks_or_nul(value) {
        return Err("must not contain NUL, CR or LF".to_owned());
    }
    if value.ends_with(['/', '\\']) {
        return Err("must not end with `/` or `\\`".to_owned());
    }
    if value.starts_with('/') || value.starts_with('\\') || value.contains(':') {
        return Err("must be a relative path".to_owned());
    }
    if value
        .split(['/', '\\'])
        .any(|component| matches!(component, "" | "." | ".."))
    {
        return Err("may only contain normal path components (no empty, `.` or `..`)".to_owned());
    }
    Ok(())
}

/// `[worktree].base`: non-blank, ≤ 256 bytes, no NUL/CR/LF.
pub fn check_worktree_base(value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err("must not be blank".to_owned());
    }
    if value.len() > 256 {
        return Err(format!(
            "is {} bytes; at most 256 bytes are allowed",
            value.len()
        ));
    }
    if has_line_breaks_or_nul(value) {
        return Err("must not contain NUL, CR or LF".to_owned());
    }
    Ok(())
}

/// Whether a file name looks like it holds secrets (compared case-insensitively).
pub fn is_secret_looking_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const TEMPLATE_SUFFIXES: &[&str] = &[".env.example", ".env.sample", ".env.template"];
    const EXACT_NAMES: &[&str] = &[
        ".npmrc",
        ".netrc",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_ed25519",
        "secrets",
        "secrets.json",
    ];
    const SECRET_EXTENSIONS: &[&str] = &[".pem", ".key", ".p12", ".pfx"];
    if name.starts_with(".env")
        && !TEMPLATE_SUFFIXES
            .iter()
            .any(|suffix| name.ends_with(suffix))
    {
        return true;
    }
    EXACT_NAMES.contains(&name.as_str())
        || SECRET_EXTENSIONS
            .iter()
            .any(|extension| name.ends_with(extension))
}

/// One `[worktree].copy_ignored` entry: an exact relative path of a file
/// that is not secret-looking.
pub fn check_copy_ignored_path(value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > 1024 {
        return Err("must be 1 to 1024 bytes".to_owned());
    }
    if has_line_breaks_or_nul(value) {
        return Err("must not contain NUL, CR or LF".to_owned());
    }
    if value.contains(['*', '?', '[', ']', '{', '}']) {
        return Err("must be an exact path; globs (`* ? [ ] { }`) are not allowed".to_owned());
    }
    if value.starts_with(['/', '\\']) || value.contains(':') {
        return Err("must be a relative path".to_owned());
    }
    if value.ends_with(['/', '\\']) {
        return Err("must name a file, not end with a separator".to_owned());
    }
    let components: Vec<&str> = value.split(['/', '\\']).collect();
    if components.contains(&"..") {
        return Err("must not contain `..`".to_owned());
    }
    if components
        .iter()
        .any(|component| component.is_empty() || *component == ".")
    {
        return Err("must be a normalised path (no empty or `.` components)".to_owned());
    }
    if let Some(secret) = components
        .iter()
        .find(|component| is_secret_looking_name(component))
    {
        return Err(format!(
            "`{secret}` looks like a secret; secret files are never copied into worktrees"
        ));
    }
    Ok(())
}

/// `services.<id>.port_env`: `[A-Za-z_][A-Za-z0-9_]*`, ≤ 128 bytes.
pub fn check_port_env(value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > 128 {
        return Err("must be 1 to 128 characters".to_owned());
    }
    let mut bytes = value.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|byte| byte.is_ascii_alphabetic() || byte == b'_');
    if !first_ok || !bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_') {
        return Err("must be an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`)".to_owned());
    }
    Ok(())
}

/// `services.<id>.health`: a local HTTP URL template with `{port}` once.
///
/// After the `http://127.0.0.1:{port}` / `http://localhost:{port}` prefix only
/// the end, `/`, `?` or `#` may follow, so the rendered URL's host is always
/// the loopback host (`…:{port}@evil.example` would make it a user name).
pub fn check_health_url(value: &str) -> Result<(), String> {
    if value.len() > 2048 {
        return Err(format!(
            "is {} bytes; at most 2048 bytes are allowed",
            value.len()
        ));
    }
    if value
        .chars()
        .any(|character| character.is_whitespace() || character.is_control())
    {
        return Err("must not contain whitespace or control characters".to_owned());
    }
    let occurrences = value.matches("{port}").count();
    if occurrences != 1 {
        return Err(format!(
            "must contain `{{port}}` exactly once (found {occurrences})"
        ));
    }
    let rest = ["http://127.0.0.1:{port}", "http://localhost:{port}"]
        .iter()
        .find_map(|prefix| value.strip_prefix(prefix));
    match rest {
        None => {
            Err("must start with `http://127.0.0.1:{port}` or `http://localhost:{port}`".to_owned())
        }
        Some(rest) if !(rest.is_empty() || rest.starts_with(['/', '?', '#'])) => {
            Err("only a path, query or fragment may follow `{port}`".to_owned())
        }
        Some(_) => Ok(()),
    }
}

/// One `[[checks]].covers` label: non-blank, ≤ 1024 bytes.
pub fn check_cover_label(value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err("must not be blank".to_owned());
    }
    if value.len() > 1024 {
        return Err(format!(
            "is {} bytes; at most 1024 bytes are allowed",
            value.len()
        ));
    }
    Ok(())
}
