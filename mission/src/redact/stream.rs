//! Redaction of text that arrives in pieces (an agent's message as the model streams it),
//! released for display as early as no rule of [`super::redact`] could still need what
//! follows.
//!
//! A secret may be split across pieces: `ghp_aBc` then `DeF…`. Redacting each piece alone
//! would miss it, and holding everything until the message ends would show nothing while
//! the agent talks. [`StreamRedactor`] releases text up to the first place where a secret
//! could still begin or continue, and redacts each released chunk whole:
//!
//! - A complete word (whitespace after it) is released whole: every token rule matches
//!   within one word.
//! - A word that may open a rule spanning words (`Bearer`, `password`, `API_KEY =`, a word
//!   with `:` or `=`, …) holds the rest of its line, released once the line ends.
//! - `-----BEGIN …` holds everything until the block's `-----END …-----`.
//! - The last word, still growing, is released only while it is plain letters that neither
//!   begin nor could grow into the published prefix of a token (`sk-`, `ghp_`, `AKIA`,
//!   `eyJ`, …), so the first word of an answer shows at once in the common case.
//!
//! Whatever is held is released, redacted, by [`StreamRedactor::finish`].

/// The published starts of the tokens the redaction rules match, and the words that
/// name a secret. A growing word that could still become one of them is held.
const SECRET_STARTS: &[&str] = &[
    "sk-",
    "sk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "xox",
    "aiza",
    "eyj",
    "npm_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glcbt-",
    "gloas-",
    "glsoat-",
    "glft-",
    "glimt-",
    "glagent-",
    "glsa_",
    "glc_",
    "hf_",
    "sg.",
    "key-",
    "dop_",
    "doo_",
    "dor_",
    "shpat_",
    "shpca_",
    "shppa_",
    "shpss_",
    "pypi-",
    "ya29.",
    "dp.",
    "hvs.",
    "hvb.",
    "sq0",
    "whsec_",
    "lin_api_",
    "pmak-",
    "nrak-",
    "age-secret-key-",
    "sntrys_",
    "dapi",
    "figd_",
    "sbp_",
    "pul-",
    "atatt3",
    "http",
    "https",
    "hooks",
    "discord",
    "bearer",
    "basic",
    "authorization",
    "password",
    "passwd",
    "token",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "private",
];

/// Parts of a word that names a secret: such a word may start an assignment whose value
/// comes after it on the line (`DB_PASSWORD = …`, `secret key is …`).
const SECRET_NAME_PARTS: &[&str] = &[
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "auth",
    "credential",
    "bearer",
];

const KEY_BLOCK_START: &str = "-----BEGIN";
const KEY_BLOCK_END: &str = "-----END";

/// Held text longer than this is released anyway (redacted as it is): a line that never
/// ends must not hold the console back for ever.
const MAX_HELD_BYTES: usize = 16 * 1024;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Words are judged one by one.
    #[default]
    Words,
    /// The rest of the line is held (a word that may open a rule spanning words).
    RestOfLine,
    /// A private-key block is held until its end.
    KeyBlock,
}

/// Streamed text, released redacted as early as it is safe to.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    held: String,
    hold: Hold,
    /// The released text's last word, when the release ended inside it: what comes next
    /// continues that word, so it is redacted with it (`postgres` then `://user:pw@…`).
    shown_word: String,
}

/// The longest word kept as [`StreamRedactor::shown_word`].
const MAX_SHOWN_WORD_BYTES: usize = 256;

impl StreamRedactor {
    /// Takes the next piece; returns what can be shown now, redacted (may be empty).
    pub fn push(&mut self, piece: &str) -> String {
        self.held.push_str(piece);
        let releasable = if self.held.len() > MAX_HELD_BYTES {
            self.hold = Hold::Words;
            self.held.len()
        } else {
            self.releasable()
        };
        let released: String = self.held.drain(..releasable).collect();
        self.redact_continuing(&released)
    }

    /// Releases everything held (the message ended), redacted.
    pub fn finish(&mut self) -> String {
        self.hold = Hold::Words;
        let released = std::mem::take(&mut self.held);
        let redacted = self.redact_continuing(&released);
        self.shown_word.clear();
        redacted
    }

    /// Redacts released text together with the word it continues, and returns the part
    /// after that word.
    fn redact_continuing(&mut self, released: &str) -> String {
        if released.is_empty() {
            return String::new();
        }
        let with_word = format!("{}{released}", self.shown_word);
        let redacted = super::redact(&with_word).into_owned();
        let shown = match redacted.strip_prefix(self.shown_word.as_str()) {
            Some(rest) => rest.to_string(),
            // The shown word itself turned out to start a secret: the rest is shown
            // redacted in full (the word's start stays as it was shown).
            None => redacted,
        };
        match released.rfind(char::is_whitespace) {
            Some(at) => {
                let blank = released[at..].chars().next().map_or(1, char::len_utf8);
                self.shown_word = released[at + blank..].to_string();
            }
            None => self.shown_word.push_str(released),
        }
        if self.shown_word.len() > MAX_SHOWN_WORD_BYTES {
            self.shown_word.clear();
        }
        shown
    }

    /// How many bytes at the start of the held text can be released.
    fn releasable(&mut self) -> usize {
        let text = self.held.as_str();
        let mut released = 0;
        let mut at = 0;
        while at < text.len() {
            match self.hold {
                Hold::KeyBlock => match key_block_end(&text[at..]) {
                    Some(end) => {
                        at += end;
                        released = at;
                        self.hold = Hold::Words;
                    }
                    None => return released,
                },
                Hold::RestOfLine => match text[at..].find('\n') {
                    Some(newline) => {
                        at += newline + 1;
                        released = at;
                        self.hold = Hold::Words;
                    }
                    None => return released,
                },
                Hold::Words => {
                    let rest = &text[at..];
                    let blank = rest.len() - rest.trim_start().len();
                    if blank > 0 {
                        at += blank;
                        released = at;
                        continue;
                    }
                    let length = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    let word = &rest[..length];
                    let complete = length < rest.len();
                    if word.starts_with(KEY_BLOCK_START) {
                        self.hold = Hold::KeyBlock;
                        continue;
                    }
                    if !complete && KEY_BLOCK_START.starts_with(word) {
                        // Maybe a key block's first line: wait and see.
                        return released;
                    }
                    if opens_words_rule(word) {
                        self.hold = Hold::RestOfLine;
                        continue;
                    }
                    if !complete && !is_plain_growing_word(word) {
                        return released;
                    }
                    at += length;
                    released = at;
                }
            }
        }
        released
    }
}

/// Where a private-key block that starts `text` ends (after its closing dashes), if it
/// ended.
fn key_block_end(text: &str) -> Option<usize> {
    let end = text.find(KEY_BLOCK_END)?;
    let after_label = end + KEY_BLOCK_END.len();
    let closing = text[after_label..].find("-----")?;
    Some(after_label + closing + "-----".len())
}

/// Whether a word may start a rule whose secret comes in later words: it names a secret,
/// or assigns (`:` or `=`).
fn opens_words_rule(word: &str) -> bool {
    let lowercase = word.to_lowercase();
    word.contains([':', '='])
        || SECRET_NAME_PARTS
            .iter()
            .any(|part| lowercase.contains(part))
}

/// Whether a word still growing can be shown: only letters, and no token's start that it
/// begins with or could grow into. A capital M, N or O may start a Discord token.
fn is_plain_growing_word(word: &str) -> bool {
    if word.is_empty() || !word.chars().all(char::is_alphabetic) {
        return false;
    }
    // Case-sensitive starts: Discord's capital M, N or O; Twilio's `SK` and `AC`.
    if word.starts_with(['M', 'N', 'O'])
        || ["SK", "AC"]
            .iter()
            .any(|start| start.starts_with(word) || word.starts_with(start))
    {
        return false;
    }
    let lowercase = word.to_lowercase();
    !SECRET_STARTS
        .iter()
        .any(|start| start.starts_with(&lowercase) || lowercase.starts_with(start))
}

#[cfg(test)]
mod tests;
