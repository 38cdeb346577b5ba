//! Redaction of secrets from text that leaves the server (contract §6.3).
//!
//! [`redact`] applies, in order:
//!
//! 0. PEM private-key blocks (first, so no later rule can split a block and
//!    leave half a key behind; an unterminated block is redacted to the end,
//!    and so is one whose BEGIN line lost its closing dashes).
//! 1. `Bearer <token ≥ 12>` → `Bearer [REDACTED]` (contract rule 1), and
//!    `Authorization: Basic <credentials>`.
//! 2. Whole-word tokens `sk-…`, `gh[pousr]_…`, `AKIA…` (contract rule 2).
//! 3. Line-anchored `api_key|api-key|apikey|token|secret|password|authorization`
//!    assignments: the rest of the line (contract rule 3).
//! 4. `http(s)://user:password@` → `http(s)://[REDACTED]@` (contract rule 4),
//!    then the same for any other URL scheme (`postgres://`, `redis://:pw@`).
//! 5. Further provider tokens: `github_pat_…`, `ASIA…`, Slack `xox?-…`,
//!    Google `AIza…`, Stripe `sk_live_`/`rk_live_`/`*_test_`, JWTs, Slack and Discord
//!    webhook URLs, and the published prefixes of npm, GitLab, Hugging Face, Twilio,
//!    SendGrid, Mailgun, DigitalOcean, Shopify, Telegram, Discord, PyPI, Google OAuth,
//!    Doppler, Vault, Square, Stripe webhook, Linear, Postman, New Relic, age, Grafana,
//!    Sentry, Databricks, Figma, Supabase, Pulumi, Atlassian and Terraform tokens; then
//!    an AWS secret access key after words that name it.
//! 6. `.env`-style assignments of secret-looking names anywhere on a line
//!    (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_PASS`, `*CREDENTIAL*`,
//!    `api_key`, `auth`, …; `export` prefix, quoted names and values).
//! 7. High-entropy values after `=` or `:` (≥ 20 characters, mixed case and
//!    digits, high Shannon entropy; paths, hex revisions and digests excluded).
//!
//! The contract's four rules keep their relative order and their case
//! insensitivity; the extra rules only ever redact more. Every replacement
//! contains `[REDACTED]`, which no rule matches as a secret. A replacement can
//! still expose a neighbour to a rule that already ran (a token glued to the
//! one before it gains a word boundary once that one is `[REDACTED]`), so the
//! rules are repeated until the text no longer changes: redacting twice gives
//! the same text as redacting once.

mod stream;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

pub use stream::StreamRedactor;

/// What every secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("redaction pattern compiles")
}

static PRIVATE_KEY_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
    )
});
static BEARER_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{12,}"));
static BASIC_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)(\bauthorization[ \t]*:[ \t]*basic[ \t]+)[A-Za-z0-9+/=]{4,}"));
static WHOLE_WORD_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"(?i)\b(?:sk-[A-Za-z0-9_-]{12,}|gh[pousr]_[A-Za-z0-9_]{12,}|AKIA[0-9A-Z]{16})\b")
});
static LINE_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?im)^([ \t]*(?:api_key|api-key|apikey|token|secret|password|authorization)[ \t]*[:=][ \t]*)\S[^\r\n]*",
    )
});
static HTTP_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\b(https?://)[^/\s:@]+:[^@\s/]+@"));
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]*:[^@\s/]+@"));
static PROVIDER_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    // ASCII word boundaries: a Unicode `\b` keeps the fast DFA off any text that is
    // not pure ASCII, which made this alternation 40 times slower on a diff.
    compile(concat!(
        r"(?-u:\b)github_pat_[A-Za-z0-9_]{20,}",
        r"|(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
        r"|(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}",
        r"|(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        r"|(?-u:\b)(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}",
        r"|(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        // Webhook URLs carry their secret in the path.
        r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}",
        r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
        // Registry, forge and platform tokens, by their published prefixes.
        r"|(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        r"|(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
        r"|(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)",
        r"|(?-u:\b)(?:SK|AC)[0-9a-f]{32}(?-u:\b)",
        r"|(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        r"|(?-u:\b)key-[0-9a-f]{32}(?-u:\b)",
        r"|(?-u:\b)do[opr]_v1_[a-f0-9]{64}(?-u:\b)",
        r"|(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?-u:\b)",
        r"|(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?-u:\b)",
        r"|(?-u:\b)[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?-u:\b)",
        r"|(?-u:\b)pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        r"|(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}",
        r"|(?-u:\b)dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        r"|(?-u:\b)hv[sb]\.[A-Za-z0-9_-]{24,}",
        r"|(?-u:\b)sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}",
        r"|(?-u:\b)whsec_[A-Za-z0-9]{24,}",
        r"|(?-u:\b)lin_api_[A-Za-z0-9]{40}(?-u:\b)",
        r"|(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?-u:\b)",
        r"|(?-u:\b)NRAK-[A-Z0-9]{27}(?-u:\b)",
        r"|(?-u:\b)AGE-SECRET-KEY-1[0-9A-Z]{58}(?-u:\b)",
        r"|(?-u:\b)gl(?:sa|c)_[A-Za-z0-9_=+/-]{32,}",
        r"|(?-u:\b)sntrys_[A-Za-z0-9_=+/-]{40,}",
        r"|(?-u:\b)dapi[a-f0-9]{32}(?-u:\b)",
        r"|(?-u:\b)figd_[A-Za-z0-9_-]{40,}",
        r"|(?-u:\b)sbp_[a-f0-9]{40}(?-u:\b)",
        r"|(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)",
        r"|(?-u:\b)ATATT3[A-Za-z0-9_=-]{100,}",
        r"|(?-u:\b)[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}",
    ))
});
/// An AWS secret access key in free text: 40 base64 characters after words that name it
/// ("aws secret access key", "secret key", "aws_secret_access_key …").
static AWS_SECRET_KEY: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i)((?-u:\b)(?:aws[ _-]?)?secret[ _-]?(?:access[ _-]?)?key(?:[ _-]?id)?(?-u:\b)(?:[ \t]+(?:is|was))?[^A-Za-z0-9/+\r\n]{1,12})[A-Za-z0-9/+]{40}(?-u:\b)",
    )
});
static NAMED_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"\b(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<name_quote>["']?)(?P<separator>[ \t]*[:=][ \t]*)(?P<value>"[^"\r\n]*"|'[^'\r\n]*'|[^\s"'`,;&=][^\s"'`,;&]*)"#,
    )
});
static ASSIGNED_VALUE: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"(?P<lead>[=:][ \t]*["']?)(?P<value>[A-Za-z0-9+/_~.=-]{20,})"#));

/// Replaces every match of `pattern` using `replacement`, keeping the input
/// borrowed when nothing matched.
fn replace<'a>(
    text: Cow<'a, str>,
    pattern: &Regex,
    replacement: impl regex::Replacer,
) -> Cow<'a, str> {
    let replaced = match pattern.replace_all(&text, replacement) {
        // Closures may hand back a match unchanged; that is no replacement.
        Cow::Owned(owned) if owned != *text => Some(owned),
        _ => None,
    };
    match replaced {
        Some(owned) => Cow::Owned(owned),
        None => text,
    }
}

/// Names that are secrets whatever the separator (`DB_PASSWORD: x`).
fn is_secret_looking_name(lowercase_name: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        "_key", "-key", ".key", "_token", "-token", ".token", "_secret", "-secret", "_pass",
        "-pass", "_auth", "-auth", "_pat",
    ];
    const CONTAINED: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "credential",
        "api_key",
        "apikey",
        "api-key",
        "private_key",
        "privatekey",
        "access_key",
        "accesskey",
        "accountkey",
        "sharedaccesskey",
    ];
    SUFFIXES
        .iter()
        .any(|suffix| lowercase_name.ends_with(suffix))
        || CONTAINED.iter().any(|part| lowercase_name.contains(part))
        || lowercase_name.starts_with("auth_")
}

/// Bare words that are secrets only in assignment shape (`token=…`,
/// `"auth": "…"`), since they also occur in prose (`the token: expired`).
fn is_bare_secret_word(lowercase_name: &str) -> bool {
    matches!(
        lowercase_name,
        "token" | "auth" | "authorization" | "credentials"
    )
}

fn value_looks_like_a_credential(value: &str) -> bool {
    value.len() >= 12
        || value
            .chars()
            .any(|character| !character.is_ascii_alphabetic())
}

fn redact_named_assignment(captures: &Captures<'_>) -> String {
    let whole = &captures[0];
    let name = captures["name"].to_ascii_lowercase();
    let value = &captures["value"];
    let separator_is_equals = captures["separator"].trim() == "=";
    let quoted = !captures["name_quote"].is_empty() || value.starts_with(['"', '\'']);
    let secret = is_secret_looking_name(&name)
        || (is_bare_secret_word(&name)
            && (separator_is_equals || quoted || value_looks_like_a_credential(value)));
    if !secret {
        return whole.to_owned();
    }
    let prefix = &whole[..whole.len() - value.len()];
    match value.chars().next() {
        Some(quote @ ('"' | '\'')) if value.len() >= 2 => {
            format!("{prefix}{quote}{REDACTED}{quote}")
        }
        _ => format!("{prefix}{REDACTED}"),
    }
}

/// Shannon entropy in bits per character.
fn shannon_entropy(value: &str) -> f64 {
    let mut counts = [0_u32; 256];
    for byte in value.bytes() {
        counts[usize::from(byte)] += 1;
    }
    let length = value.len() as f64;
    counts
        .iter()
        .filter(|count| **count > 0)
        .map(|count| {
            let probability = f64::from(*count) / length;
            -probability * probability.log2()
        })
        .sum()
}

/// Whether an assigned value looks like a random secret rather than a word,
/// a path, a hex revision or a digest.
fn looks_high_entropy(value: &str) -> bool {
    let trimmed = value.trim_end_matches('=');
    if trimmed.len() < 20 || trimmed.contains('.') || trimmed.starts_with(['/', '~']) {
        return false;
    }
    if trimmed
        .bytes()
        .all(|byte| byte.is_ascii_hexdigit() || byte == b'-')
    {
        return false;
    }
    let digits = trimmed.bytes().filter(u8::is_ascii_digit).count();
    let has_lower = trimmed.bytes().any(|byte| byte.is_ascii_lowercase());
    let has_upper = trimmed.bytes().any(|byte| byte.is_ascii_uppercase());
    let class_of = |byte: u8| match byte {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let bytes = trimmed.as_bytes();
    let transitions = bytes
        .windows(2)
        .filter(|pair| class_of(pair[0]) != class_of(pair[1]))
        .count();
    let transition_ratio = transitions as f64 / (bytes.len() - 1) as f64;
    let minimum_digits = if trimmed.contains('/') { 2 } else { 1 };
    has_lower
        && has_upper
        && digits >= minimum_digits
        && transition_ratio >= 0.3
        && shannon_entropy(trimmed) >= 3.5
}

fn redact_high_entropy_value(captures: &Captures<'_>) -> String {
    let value = &captures["value"];
    if looks_high_entropy(value) {
        format!("{}{REDACTED}", &captures["lead"])
    } else {
        captures[0].to_owned()
    }
}

/// At most this many passes of the rules; in practice the second one finds nothing.
const MAX_PASSES: usize = 8;

/// Redacts secrets from `text`; borrows it unchanged when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut result = redact_once(text);
    for _ in 1..MAX_PASSES {
        let Cow::Owned(previous) = &result else { break };
        match redact_once(previous) {
            Cow::Borrowed(_) => break,
            Cow::Owned(again) => result = Cow::Owned(again),
        }
    }
    result
}

/// One pass of every rule, in order.
fn redact_once(text: &str) -> Cow<'_, str> {
    let mut result = Cow::Borrowed(text);
    result = replace(result, &PRIVATE_KEY_BLOCK, REDACTED);
    result = replace(
        result,
        &BEARER_TOKEN,
        format!("${{1}}${{2}}{REDACTED}").as_str(),
    );
    result = replace(
        result,
        &BASIC_CREDENTIALS,
        format!("${{1}}{REDACTED}").as_str(),
    );
    result = replace(result, &WHOLE_WORD_TOKEN, REDACTED);
    result = replace(
        result,
        &LINE_ASSIGNMENT,
        format!("${{1}}{REDACTED}").as_str(),
    );
    result = replace(
        result,
        &HTTP_CREDENTIALS,
        format!("${{1}}{REDACTED}@").as_str(),
    );
    result = replace(
        result,
        &URL_CREDENTIALS,
        format!("${{1}}{REDACTED}@").as_str(),
    );
    result = replace(result, &PROVIDER_TOKEN, REDACTED);
    result = replace(
        result,
        &AWS_SECRET_KEY,
        format!("${{1}}{REDACTED}").as_str(),
    );
    result = replace(result, &NAMED_ASSIGNMENT, redact_named_assignment);
    result = replace(result, &ASSIGNED_VALUE, redact_high_entropy_value);
    result
}

/// Redacts each string of a list.
pub fn redact_each(texts: &[String]) -> Vec<String> {
    texts.iter().map(|text| redact(text).into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (rule, input, expected output)
    pub(super) const CASES: &[(&str, &str, &str)] = &[
        (
            "bearer",
            "curl -H 'Bearer abcdefghijkl1234'",
            "curl -H 'Bearer [REDACTED]'",
        ),
        (
            "bearer keeps whitespace",
            "bearer\tAbC.dEf~123+456/789=",
            "bearer\t[REDACTED]",
        ),
        ("bearer short token kept", "Bearer short", "Bearer short"),
        (
            "basic auth",
            "Authorization: Basic dXNlcjpwYXNz",
            "Authorization: [REDACTED]",
        ),
        (
            "openai key",
            "key sk-abcdefghijklmnop here",
            "key [REDACTED] here",
        ),
        (
            "openai project key",
            "sk-proj-AbCdEfGh12345678_xyz",
            "[REDACTED]",
        ),
        (
            "anthropic key",
            "use sk-ant-api03-AbCdEfGhIjKlMnOp please",
            "use [REDACTED] please",
        ),
        (
            "github token",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "[REDACTED]",
        ),
        (
            "github server token",
            "(ghs_ABCDEFGHIJKL1234)",
            "([REDACTED])",
        ),
        (
            "github pat",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "[REDACTED]",
        ),
        (
            "aws access key",
            "id AKIAIOSFODNN7EXAMPLE end",
            "id [REDACTED] end",
        ),
        (
            "aws session key",
            "id ASIAIOSFODNN7EXAMPLE end",
            "id [REDACTED] end",
        ),
        (
            "aws secret",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED]",
        ),
        ("slack", "xoxb-123456789012-abcdefghij", "[REDACTED]"),
        (
            "google",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "[REDACTED]",
        ),
        (
            "stripe live",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "[REDACTED]",
        ),
        (
            "stripe restricted",
            "rk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "[REDACTED]",
        ),
        (
            "jwt",
            "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "cookie [REDACTED]",
        ),
        ("line token", "token = abc def ghi", "token = [REDACTED]"),
        (
            "line password indented",
            "  Password: hunter2 and more",
            "  Password: [REDACTED]",
        ),
        (
            "line api-key",
            "API-KEY=xyz\nnext line",
            "API-KEY=[REDACTED]\nnext line",
        ),
        (
            "line authorization",
            "authorization: Token abc",
            "authorization: [REDACTED]",
        ),
        (
            "http credentials",
            "https://alice:s3cret@example.com/repo",
            "https://[REDACTED]@example.com/repo",
        ),
        (
            "postgres credentials",
            "postgres://app:pw123@db:5432/app",
            "postgres://[REDACTED]@db:5432/app",
        ),
        (
            "redis password only",
            "redis://:hunter2@cache:6379",
            "redis://[REDACTED]@cache:6379",
        ),
        (
            "env export",
            "export DATABASE_PASSWORD=\"hunter2\"",
            "export DATABASE_PASSWORD=\"[REDACTED]\"",
        ),
        (
            "env key suffix",
            "run with OPENAI_KEY=abc123 now",
            "run with OPENAI_KEY=[REDACTED] now",
        ),
        (
            "env token suffix",
            "GITLAB_TOKEN: glpat-xyz",
            "GITLAB_TOKEN: [REDACTED]",
        ),
        (
            "env secret",
            "client_secret='abc'",
            "client_secret='[REDACTED]'",
        ),
        (
            "env credential",
            "GOOGLE_APPLICATION_CREDENTIALS=/etc/key.json",
            "GOOGLE_APPLICATION_CREDENTIALS=[REDACTED]",
        ),
        ("env pass", "SMTP_PASS=letmein", "SMTP_PASS=[REDACTED]"),
        (
            "mid-line token",
            "Fix login; token=abc123",
            "Fix login; token=[REDACTED]",
        ),
        (
            "json api key",
            r#"{"api_key": "abc", "n": 1}"#,
            r#"{"api_key": "[REDACTED]", "n": 1}"#,
        ),
        (
            "query string",
            "GET /x?auth=abc&page=2",
            "GET /x?auth=[REDACTED]&page=2",
        ),
        (
            "high entropy",
            "config value: q8Zr4TzP1nVb6KyW3mXs9Ld2",
            "config value: [REDACTED]",
        ),
        (
            "high entropy quoted",
            "x = \"Zq8r4TzP1nVb6KyW3mXs9Ld2\"",
            "x = \"[REDACTED]\"",
        ),
        (
            "pem block",
            "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\ndone",
            "key:\n[REDACTED]\ndone",
        ),
        (
            "unterminated pem",
            "-----BEGIN PRIVATE KEY-----\nMIIEvQ",
            "[REDACTED]",
        ),
        (
            "pem header without its closing dashes (found by fuzz/run redact)",
            "-----BEGIN RSA PRIVATE KEY\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nok",
            "[REDACTED]\nok",
        ),
        (
            "pem header cut at the end of the text",
            "-----BEGIN PRIVATE KEY",
            "[REDACTED]",
        ),
        (
            "high-entropy value after a doubled separator (found by fuzz/run redact)",
            "_pat==gNryP4J3jValueere23@",
            "_pat=[REDACTED]",
        ),
        (
            "a token glued to the one before it (found by the mixture property)",
            "AIzaSyA1234567890abcdefghijklmnopqrstuvxoxb-123456789012-abcdefghij",
            "[REDACTED][REDACTED]",
        ),
    ];

    /// Text that must come back unchanged.
    const PRESERVED: &[&str] = &[
        "Fix the login redirect so the test passes",
        "src/components/Button2.tsx and crates/core/src/lib.rs",
        "path: /home/user/project/src/main.rs",
        "dir: src/Components/Widgets2",
        "HEAD is at 3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1",
        "base: 3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1",
        "digest: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id: 123e4567-e89b-12d3-a456-426614174000",
        "the token: expired yesterday",
        "Use the API key from the settings page",
        "author: Jane Doe",
        "PWD=/home/user/project",
        "if token == expected { return }",
        " src/lib.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)",
        "see https://example.com/docs?page=2",
        "timestamp 2024-01-01T10:00:00Z",
        "",
    ];

    /// (format, secret) — each planted in free text; the secret must not survive.
    const SECRET_FORMATS: &[(&str, &str)] = &[
        ("AWS access key id", "AKIAIOSFODNN7EXAMPLE"),
        ("AWS temporary key id", "ASIAIOSFODNN7EXAMPLE"),
        (
            "GitHub classic token",
            "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        ),
        (
            "GitHub OAuth token",
            "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        ),
        (
            "GitHub server token",
            "ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        ),
        (
            "GitHub fine-grained token",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
        ),
        ("GitLab personal token", "glpat-AbCdEfGhIjKlMnOpQrSt"),
        (
            "Slack bot token",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        ),
        (
            "Slack webhook",
            "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/aBcDeFgHiJkLmNoPqRsTuVwX",
        ),
        (
            "Discord webhook",
            "https://discord.com/api/webhooks/123456789012345678/aBcDeFgHiJkLmNoPqRsTuVwXyZ_0123456789-aBcDeFgHiJkLmNoPqRsTuVwXyZ",
        ),
        (
            "Stripe live secret key",
            "sk_live_51AbCdEfGhIjKlMnOpQrStUvWx",
        ),
        (
            "Stripe restricted key",
            "rk_live_51AbCdEfGhIjKlMnOpQrStUvWx",
        ),
        (
            "Stripe webhook secret",
            "whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        ),
        ("OpenAI key", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        (
            "Anthropic key",
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-AbCdEf",
        ),
        ("Google API key", "AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456"),
        (
            "Google OAuth token",
            "ya29.a0AfH6SMBAbCdEfGhIjKlMnOpQrStUvWxYz",
        ),
        ("npm token", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        (
            "PyPI token",
            "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjEyLTM0NTYtNzg5MC1hYmNkLWVmMDEyMzQ1Njc4OQACKlsz",
        ),
        (
            "Hugging Face token",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        ),
        ("Twilio API key", "SK0123456789abcdef0123456789abcdef"),
        (
            "SendGrid key",
            "SG.AbCdEfGhIjKlMnOpQrSt.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef",
        ),
        ("Mailgun key", "key-0123456789abcdef0123456789abcdef"),
        (
            "DigitalOcean token",
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ),
        ("Shopify token", "shpat_0123456789abcdef0123456789abcdef"),
        (
            "Telegram bot token",
            "123456789:AAAbCdEfGhIjKlMnOpQrStUvWxYz0123456",
        ),
        (
            "Doppler token",
            "dp.pt.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
        ),
        ("Vault token", "hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123"),
        ("Square token", "sq0atp-AbCdEfGhIjKlMnOpQrStUv"),
        (
            "Linear key",
            "lin_api_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
        ),
        (
            "Postman key",
            "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01",
        ),
        ("New Relic key", "NRAK-ABCDEFGHIJKLMNOPQRSTUVWXYZ0"),
        (
            "age secret key",
            "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
        ),
        ("Databricks token", "dapi0123456789abcdef0123456789abcdef"),
        (
            "Supabase token",
            "sbp_0123456789abcdef0123456789abcdef01234567",
        ),
        (
            "JWT",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        (
            "URL credentials",
            "postgres://admin:hunter2hunter2@db.internal:5432/app",
        ),
        (
            "Azure storage key",
            "AccountKey=AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx==",
        ),
        (
            "password assignment",
            "DB_PASSWORD=correct-horse-battery-staple",
        ),
    ];

    #[test]
    fn a_corpus_of_secret_formats_in_free_text_is_redacted() {
        assert!(SECRET_FORMATS.len() >= 30);
        let mut leaked = Vec::new();
        for (format, secret) in SECRET_FORMATS {
            let text = format!("For the deploy, use {secret} as discussed. Thanks!");
            let redacted = redact(&text);
            // The secret's body: what follows its first 8 characters (a prefix such as
            // `AccountKey=` or `postgres://` may stay).
            let body = &secret[secret.len().min(12)..];
            if redacted.contains(body) || !redacted.contains(REDACTED) {
                leaked.push(format!("{format}: {redacted}"));
            }
        }
        for (format, text, secret) in [
            (
                "AWS secret key after its name",
                "aws secret access key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            (
                "AWS secret key in prose",
                "the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, keep it",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            (
                "PEM block",
                "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7v\n-----END RSA PRIVATE KEY-----\n",
                "MIIEpAIBAAKCAQEA7v",
            ),
            (
                "Bearer header",
                "curl -H 'Authorization: Bearer AbCdEfGhIjKlMnOp0123'",
                "AbCdEfGhIjKlMnOp0123",
            ),
        ] {
            let redacted = redact(text);
            if redacted.contains(secret) {
                leaked.push(format!("{format}: {redacted}"));
            }
        }
        assert!(
            leaked.is_empty(),
            "secrets survived:\n{}",
            leaked.join("\n")
        );
    }

    #[test]
    fn digests_revisions_and_ids_in_prose_are_not_taken_for_secrets() {
        for text in [
            "commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad fixed it",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 matches",
            "request 123e4567-e89b-12d3-a456-426614174000 failed",
            "see skill-based routing and key-value stores; the SKU is SK-12",
            "the secret key is stored in the vault, not here",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn each_rule_redacts_its_secret() {
        for (rule, input, expected) in CASES {
            assert_eq!(redact(input), *expected, "rule `{rule}`");
        }
    }

    #[test]
    fn normal_text_paths_revisions_and_digests_are_preserved() {
        for text in PRESERVED {
            let redacted = redact(text);
            assert!(
                matches!(redacted, Cow::Borrowed(_)),
                "{text:?} became {redacted:?}"
            );
        }
    }

    #[test]
    fn redacting_twice_changes_nothing() {
        for (rule, input, _) in CASES {
            let once = redact(input).into_owned();
            assert_eq!(redact(&once), once, "rule `{rule}` is not idempotent");
        }
        let all: String = CASES
            .iter()
            .map(|(_, input, _)| *input)
            .collect::<Vec<_>>()
            .join("\n");
        let once = redact(&all).into_owned();
        assert_eq!(redact(&once), once);
    }

    #[test]
    fn no_secret_survives() {
        let secrets = [
            "abcdefghijkl1234",
            "sk-abcdefghijklmnop",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "s3cret",
            "hunter2",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "q8Zr4TzP1nVb6KyW3mXs9Ld2",
            "MIIEow",
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ];
        let all: String = CASES
            .iter()
            .map(|(_, input, _)| *input)
            .collect::<Vec<_>>()
            .join("\n");
        let redacted = redact(&all);
        for secret in secrets {
            assert!(
                !redacted.contains(secret),
                "{secret} survived in:\n{redacted}"
            );
        }
    }

    proptest::proptest! {
        /// Any mix of secrets, safe text and punctuation redacts idempotently.
        #[test]
        fn redaction_is_idempotent_on_mixtures(
            pieces in proptest::collection::vec((0..CASES.len() + PRESERVED.len(), "[ =:\n\t\"'a-zA-Z0-9_/.@-]{0,12}"), 0..6)
        ) {
            let text: String = pieces
                .iter()
                .map(|(index, glue)| {
                    let piece = if *index < CASES.len() { CASES[*index].1 } else { PRESERVED[*index - CASES.len()] };
                    format!("{piece}{glue}")
                })
                .collect();
            let once = redact(&text).into_owned();
            proptest::prop_assert_eq!(redact(&once).into_owned(), once);
        }
    }

    #[test]
    fn contract_rules_are_case_insensitive() {
        assert_eq!(redact("BEARER abcdefghijkl1234"), "BEARER [REDACTED]");
        assert_eq!(redact("SK-ABCDEFGHIJKLMNOP"), "[REDACTED]");
        assert_eq!(redact("HTTPS://u:p@host"), "HTTPS://[REDACTED]@host");
        assert_eq!(redact("SECRET=x"), "SECRET=[REDACTED]");
    }
}
