//! Agent state and display metadata of panes and workspaces: `pane.report_agent`,
//! `pane.report_agent_session`, `pane.report_metadata`, `workspace.report_metadata`,
//! with the seed's normalisation and limits.
//!
//! - Source ids (`source`, `applies_to_source`): 1–80 characters of `A–Z a–z 0–9 : . _ -`.
//! - Presentation text (title, display_agent, state labels, token values, messages):
//!   control characters removed, surrounding whitespace trimmed, capped at 80 characters.
//!   An empty normalised token value clears the token.
//! - Tokens: names `^[A-Za-z0-9_-]{1,32}$`, at most 16 per report, at most 32 retained.
//!   A string sets a token, `null` clears it; `ttl_ms` (1..=86400000) gives each token
//!   updated by that report its own deadline.
//! - `seq`: per source, a report whose `seq` is not greater than the last accepted one is
//!   accepted but ignored. At most 32 distinct sources may send sequenced reports to one
//!   pane or workspace during its lifetime.
//!
//! Every report is validated completely before anything changes.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use nagi_schema::pane::{
    AgentSessionInfo, AgentSessionRefKind, AgentStatus, PaneAgentState, PaneReportMetadataParams,
};

use super::error::PaneError;

pub const MAX_SOURCE_CHARS: usize = 80;
pub const MAX_TEXT_CHARS: usize = 80;
pub const MAX_TOKENS_PER_REPORT: usize = 16;
pub const MAX_RETAINED_TOKENS: usize = 32;
pub const MAX_TOKEN_NAME_CHARS: usize = 32;
pub const MAX_TTL_MS: u64 = 86_400_000;
pub const MAX_SEQUENCED_SOURCES: usize = 32;
const STATE_LABEL_KEYS: [&str; 5] = ["idle", "working", "blocked", "done", "unknown"];

pub fn validate_source(field: &str, value: &str) -> Result<(), PaneError> {
    let length = value.chars().count();
    if length == 0 || length > MAX_SOURCE_CHARS {
        return Err(PaneError::invalid(format!(
            "{field} must be 1 to {MAX_SOURCE_CHARS} characters, got {length}"
        )));
    }
    if let Some(bad) = value.chars().find(|character| {
        !(character.is_ascii_alphanumeric() || matches!(character, ':' | '.' | '_' | '-'))
    }) {
        return Err(PaneError::invalid(format!(
            "{field} may contain only ASCII letters, digits, ':', '.', '_' and '-'; found {bad:?}"
        )));
    }
    Ok(())
}

/// Trims, removes control characters and caps at 80 characters.
pub fn normalize_text(value: &str) -> String {
    let without_controls: String = value
        .chars()
        .filter(|character| !character.is_control())
        .collect();
    without_controls
        .trim()
        .chars()
        .take(MAX_TEXT_CHARS)
        .collect()
}

pub fn validate_token_name(name: &str) -> Result<(), PaneError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_TOKEN_NAME_CHARS
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if valid {
        Ok(())
    } else {
        Err(PaneError::invalid(format!(
            "token name {name:?} must match ^[A-Za-z0-9_-]{{1,32}}$"
        )))
    }
}

pub fn validate_ttl(ttl_ms: Option<u64>) -> Result<Option<Duration>, PaneError> {
    match ttl_ms {
        None => Ok(None),
        Some(ttl) if (1..=MAX_TTL_MS).contains(&ttl) => Ok(Some(Duration::from_millis(ttl))),
        Some(ttl) => Err(PaneError::invalid(format!(
            "ttl_ms must be between 1 and {MAX_TTL_MS}, got {ttl}"
        ))),
    }
}

/// Per-source `seq` bookkeeping.
#[derive(Debug, Default)]
pub struct SequenceGate {
    last_by_source: HashMap<String, u64>,
}

/// Whether a report is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Apply,
    /// Accepted by the API but stale: nothing changes.
    Ignore,
}

impl SequenceGate {
    /// Checks a report's `seq` without recording it.
    pub fn check(&self, source: &str, seq: Option<u64>) -> Result<Gate, PaneError> {
        let Some(seq) = seq else {
            return Ok(Gate::Apply);
        };
        match self.last_by_source.get(source) {
            Some(last) if seq <= *last => Ok(Gate::Ignore),
            Some(_) => Ok(Gate::Apply),
            None if self.last_by_source.len() >= MAX_SEQUENCED_SOURCES => {
                Err(PaneError::invalid(format!(
                    "at most {MAX_SEQUENCED_SOURCES} distinct sources may send sequenced reports; {source:?} would be one more"
                )))
            }
            None => Ok(Gate::Apply),
        }
    }

    pub fn record(&mut self, source: &str, seq: Option<u64>) {
        if let Some(seq) = seq {
            self.last_by_source.insert(source.to_string(), seq);
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    value: String,
    expires_at: Option<Instant>,
}

/// A validated token patch: `None` clears.
pub struct TokenPatch {
    entries: Vec<(String, Option<String>)>,
    ttl: Option<Duration>,
}

/// The tokens of a pane or workspace.
#[derive(Debug, Default)]
pub struct TokenMap {
    tokens: BTreeMap<String, Token>,
}

impl TokenMap {
    /// Validates a patch against the limits, including the 32 retained tokens.
    pub fn validate(
        &self,
        patch: &BTreeMap<String, Option<String>>,
        ttl_ms: Option<u64>,
        now: Instant,
    ) -> Result<TokenPatch, PaneError> {
        if patch.len() > MAX_TOKENS_PER_REPORT {
            return Err(PaneError::invalid(format!(
                "a report may mention at most {MAX_TOKENS_PER_REPORT} tokens, got {}",
                patch.len()
            )));
        }
        let ttl = validate_ttl(ttl_ms)?;
        let mut entries = Vec::new();
        for (name, value) in patch {
            validate_token_name(name)?;
            let value = value
                .as_deref()
                .map(normalize_text)
                .filter(|value| !value.is_empty());
            entries.push((name.clone(), value));
        }
        let mut retained: Vec<&str> = self
            .tokens
            .iter()
            .filter(|(_, token)| token.expires_at.is_none_or(|at| at > now))
            .map(|(name, _)| name.as_str())
            .collect();
        for (name, value) in &entries {
            retained.retain(|existing| existing != name);
            if value.is_some() {
                retained.push(name);
            }
        }
        if retained.len() > MAX_RETAINED_TOKENS {
            return Err(PaneError::invalid(format!(
                "at most {MAX_RETAINED_TOKENS} tokens may be retained; this report would leave {}",
                retained.len()
            )));
        }
        Ok(TokenPatch { entries, ttl })
    }

    /// Applies a validated patch; true when something changed.
    pub fn apply(&mut self, patch: TokenPatch, now: Instant) -> bool {
        let mut changed = false;
        let expires_at = patch.ttl.map(|ttl| now + ttl);
        for (name, value) in patch.entries {
            match value {
                None => changed |= self.tokens.remove(&name).is_some(),
                Some(value) => {
                    let previous = self.tokens.insert(
                        name,
                        Token {
                            value: value.clone(),
                            expires_at,
                        },
                    );
                    changed |= previous.is_none_or(|previous| previous.value != value);
                }
            }
        }
        changed
    }

    /// Drops expired tokens; true when any was dropped.
    pub fn expire(&mut self, now: Instant) -> bool {
        let before = self.tokens.len();
        self.tokens
            .retain(|_, token| token.expires_at.is_none_or(|at| at > now));
        self.tokens.len() != before
    }

    pub fn next_deadline(&self) -> Option<Instant> {
        self.tokens
            .values()
            .filter_map(|token| token.expires_at)
            .min()
    }

    pub fn snapshot(&self, now: Instant) -> BTreeMap<String, String> {
        self.tokens
            .iter()
            .filter(|(_, token)| token.expires_at.is_none_or(|at| at > now))
            .map(|(name, token)| (name.clone(), token.value.clone()))
            .collect()
    }
}

#[derive(Debug, Default, Clone)]
struct Presentation {
    title: Option<String>,
    display_agent: Option<String>,
    state_labels: BTreeMap<String, String>,
    expires_at: Option<Instant>,
}

/// The agent state and metadata of one pane.
#[derive(Debug, Default)]
pub struct PaneMetadata {
    agent: Option<String>,
    agent_status: AgentStatus,
    message: Option<String>,
    authority_source: Option<String>,
    agent_session: Option<AgentSessionInfo>,
    presentation: Presentation,
    tokens: TokenMap,
    sequence: SequenceGate,
}

/// The displayed metadata at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataView {
    pub agent: Option<String>,
    pub agent_status: AgentStatus,
    pub display_agent: Option<String>,
    pub title: Option<String>,
    pub state_labels: BTreeMap<String, String>,
    pub tokens: BTreeMap<String, String>,
    pub agent_session: Option<AgentSessionInfo>,
}

fn session_reference(
    source: &str,
    agent: &str,
    id: Option<&str>,
    path: Option<&str>,
) -> Result<Option<AgentSessionInfo>, PaneError> {
    let (kind, value) = match (id, path) {
        (Some(id), _) => (AgentSessionRefKind::Id, id),
        (None, Some(path)) => (AgentSessionRefKind::Path, path),
        (None, None) => return Ok(None),
    };
    if value.trim().is_empty() || value.chars().any(char::is_control) || value.len() > 4096 {
        return Err(PaneError::invalid(
            "agent_session_id / agent_session_path must be 1..4096 bytes without control characters",
        ));
    }
    Ok(Some(AgentSessionInfo {
        source: source.to_string(),
        agent: agent.to_string(),
        kind,
        value: value.to_string(),
    }))
}

fn agent_label(agent: &str) -> Result<String, PaneError> {
    let agent = normalize_text(agent);
    if agent.is_empty() {
        return Err(PaneError::invalid("agent must contain visible text"));
    }
    Ok(agent)
}

impl PaneMetadata {
    pub fn view(&self, now: Instant) -> MetadataView {
        let presentation_live = self.presentation.expires_at.is_none_or(|at| at > now);
        let presentation = if presentation_live {
            self.presentation.clone()
        } else {
            Presentation::default()
        };
        MetadataView {
            agent: self.agent.clone(),
            agent_status: self.agent_status,
            display_agent: presentation.display_agent,
            title: presentation.title,
            state_labels: presentation.state_labels,
            tokens: self.tokens.snapshot(now),
            agent_session: self.agent_session.clone(),
        }
    }

    pub fn agent_status(&self) -> AgentStatus {
        self.agent_status
    }

    /// `pane.report_agent`. Returns whether the semantic status changed.
    #[allow(clippy::too_many_arguments)]
    pub fn report_agent(
        &mut self,
        source: &str,
        agent: &str,
        state: PaneAgentState,
        message: Option<&str>,
        session_id: Option<&str>,
        session_path: Option<&str>,
        seq: Option<u64>,
    ) -> Result<bool, PaneError> {
        validate_source("source", source)?;
        let agent = agent_label(agent)?;
        let session = session_reference(source, &agent, session_id, session_path)?;
        if self.sequence.check(source, seq)? == Gate::Ignore {
            return Ok(false);
        }
        self.sequence.record(source, seq);
        let status = AgentStatus::from(state);
        let changed = self.agent_status != status || self.agent.as_deref() != Some(agent.as_str());
        self.agent = Some(agent);
        self.agent_status = status;
        self.message = message
            .map(normalize_text)
            .filter(|message| !message.is_empty());
        self.authority_source = Some(source.to_string());
        if session.is_some() {
            self.agent_session = session;
        }
        Ok(changed)
    }

    /// `pane.report_agent_session`: stores a native session reference only.
    pub fn report_agent_session(
        &mut self,
        source: &str,
        agent: &str,
        session_id: Option<&str>,
        session_path: Option<&str>,
        seq: Option<u64>,
    ) -> Result<(), PaneError> {
        validate_source("source", source)?;
        let agent = agent_label(agent)?;
        let session =
            session_reference(source, &agent, session_id, session_path)?.ok_or_else(|| {
                PaneError::invalid("agent_session_id or agent_session_path is required")
            })?;
        if self.sequence.check(source, seq)? == Gate::Ignore {
            return Ok(());
        }
        self.sequence.record(source, seq);
        self.agent_session = Some(session);
        Ok(())
    }

    /// `pane.report_metadata`. Returns whether anything visible changed.
    pub fn report_metadata(
        &mut self,
        params: &PaneReportMetadataParams,
        now: Instant,
    ) -> Result<bool, PaneError> {
        validate_source("source", &params.source)?;
        if let Some(applies_to) = &params.applies_to_source {
            validate_source("applies_to_source", applies_to)?;
        }
        if let Some(key) = params
            .state_labels
            .keys()
            .find(|key| !STATE_LABEL_KEYS.contains(&key.as_str()))
        {
            return Err(PaneError::invalid(format!(
                "state_labels key {key:?} must be one of idle, working, blocked, done, unknown"
            )));
        }
        let ttl = validate_ttl(params.ttl_ms)?;
        let patch = self.tokens.validate(&params.tokens, params.ttl_ms, now)?;
        if self.sequence.check(&params.source, params.seq)? == Gate::Ignore {
            return Ok(false);
        }
        self.sequence.record(&params.source, params.seq);
        let before = self.view(now);
        self.tokens.apply(patch, now);
        let agent_guard_holds = params
            .agent
            .as_deref()
            .is_none_or(|agent| self.agent.as_deref() == Some(normalize_text(agent).as_str()));
        let source_guard_holds = params
            .applies_to_source
            .as_deref()
            .is_none_or(|source| self.authority_source.as_deref() == Some(source));
        if agent_guard_holds && source_guard_holds {
            self.apply_presentation(params, ttl.map(|ttl| now + ttl), now);
        }
        Ok(self.view(now) != before)
    }

    fn apply_presentation(
        &mut self,
        params: &PaneReportMetadataParams,
        expires_at: Option<Instant>,
        now: Instant,
    ) {
        if self.presentation.expires_at.is_some_and(|at| at <= now) {
            self.presentation = Presentation::default();
        }
        let presentation = &mut self.presentation;
        if params.clear_title {
            presentation.title = None;
        }
        if let Some(title) = &params.title {
            presentation.title = Some(normalize_text(title)).filter(|title| !title.is_empty());
        }
        if params.clear_display_agent {
            presentation.display_agent = None;
        }
        if let Some(display_agent) = &params.display_agent {
            presentation.display_agent =
                Some(normalize_text(display_agent)).filter(|text| !text.is_empty());
        }
        if params.clear_state_labels {
            presentation.state_labels.clear();
        }
        for (key, label) in &params.state_labels {
            let label = normalize_text(label);
            if label.is_empty() {
                presentation.state_labels.remove(key);
            } else {
                presentation.state_labels.insert(key.clone(), label);
            }
        }
        presentation.expires_at = expires_at;
    }

    /// `pane.clear_agent_authority`. Returns whether the authority was cleared.
    pub fn clear_agent_authority(
        &mut self,
        source: Option<&str>,
        seq: Option<u64>,
    ) -> Result<bool, PaneError> {
        if let Some(source) = source {
            validate_source("source", source)?;
            if self.sequence.check(source, seq)? == Gate::Ignore {
                return Ok(false);
            }
            self.sequence.record(source, seq);
            if self.authority_source.as_deref() != Some(source) {
                return Ok(false);
            }
        }
        Ok(self.authority_source.take().is_some())
    }

    /// `pane.release_agent`: the source stops reporting this agent. Returns whether the
    /// semantic status changed.
    pub fn release_agent(
        &mut self,
        source: &str,
        agent: &str,
        seq: Option<u64>,
    ) -> Result<bool, PaneError> {
        validate_source("source", source)?;
        let agent = agent_label(agent)?;
        if self.sequence.check(source, seq)? == Gate::Ignore {
            return Ok(false);
        }
        self.sequence.record(source, seq);
        let owns = self.authority_source.as_deref() == Some(source)
            && self.agent.as_deref() == Some(agent.as_str());
        if !owns {
            return Ok(false);
        }
        let changed = self.agent_status != AgentStatus::Unknown;
        self.agent = None;
        self.agent_status = AgentStatus::Unknown;
        self.message = None;
        self.authority_source = None;
        Ok(changed)
    }

    /// Drops expired tokens and presentation; true when something visible changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        let mut changed = self.tokens.expire(now);
        if self.presentation.expires_at.is_some_and(|at| at <= now) {
            self.presentation = Presentation::default();
            changed = true;
        }
        changed
    }

    pub fn next_deadline(&self) -> Option<Instant> {
        [self.tokens.next_deadline(), self.presentation.expires_at]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The tokens of one workspace (`workspace.report_metadata`).
#[derive(Debug, Default)]
pub struct WorkspaceMetadata {
    pub tokens: TokenMap,
    sequence: SequenceGate,
}

impl WorkspaceMetadata {
    /// Returns whether the tokens changed.
    pub fn report(
        &mut self,
        source: &str,
        tokens: &BTreeMap<String, Option<String>>,
        ttl_ms: Option<u64>,
        seq: Option<u64>,
        now: Instant,
    ) -> Result<bool, PaneError> {
        validate_source("source", source)?;
        let patch = self.tokens.validate(tokens, ttl_ms, now)?;
        if self.sequence.check(source, seq)? == Gate::Ignore {
            return Ok(false);
        }
        self.sequence.record(source, seq);
        Ok(self.tokens.apply(patch, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata_params(source: &str) -> PaneReportMetadataParams {
        serde_json::from_value(serde_json::json!({"pane_id": "w1:p1", "source": source})).unwrap()
    }

    #[test]
    fn source_ids_follow_the_rules() {
        assert!(validate_source("source", "user:claude-title").is_ok());
        assert!(validate_source("source", "nagi:codex.v2_x").is_ok());
        assert!(validate_source("source", &"a".repeat(80)).is_ok());
        assert!(validate_source("source", &"a".repeat(81)).is_err());
        assert!(validate_source("source", "").is_err());
        assert!(validate_source("source", "has space").is_err());
        assert!(validate_source("source", "slash/no").is_err());
    }

    #[test]
    fn presentation_text_is_normalised() {
        assert_eq!(
            normalize_text("  Refactor\tauth\u{7} middleware \n"),
            "Refactorauth middleware"
        );
        assert_eq!(normalize_text(&"é".repeat(100)).chars().count(), 80);
    }

    #[test]
    fn metadata_is_applied_with_guards_and_limits() {
        let now = Instant::now();
        let mut metadata = PaneMetadata::default();
        metadata
            .report_agent(
                "nagi:codex",
                "codex",
                PaneAgentState::Working,
                Some("busy"),
                Some("abc"),
                None,
                None,
            )
            .unwrap();
        let mut params = metadata_params("user:hook");
        params.title = Some("  Refactor auth  ".into());
        params.display_agent = Some("Codex: auth".into());
        params
            .state_labels
            .insert("working".into(), "refactoring".into());
        params
            .tokens
            .insert("summary".into(), Some("refactor auth".into()));
        assert!(metadata.report_metadata(&params, now).unwrap());
        let view = metadata.view(now);
        assert_eq!(view.title.as_deref(), Some("Refactor auth"));
        assert_eq!(view.display_agent.as_deref(), Some("Codex: auth"));
        assert_eq!(view.state_labels["working"], "refactoring");
        assert_eq!(view.tokens["summary"], "refactor auth");
        assert_eq!(view.agent_session.unwrap().value, "abc");

        // The agent guard blocks presentation but not tokens.
        let mut guarded = metadata_params("user:hook");
        guarded.agent = Some("claude".into());
        guarded.title = Some("other".into());
        guarded.tokens.insert("model".into(), Some("opus".into()));
        metadata.report_metadata(&guarded, now).unwrap();
        let view = metadata.view(now);
        assert_eq!(view.title.as_deref(), Some("Refactor auth"));
        assert_eq!(view.tokens["model"], "opus");

        let mut bad_label = metadata_params("user:hook");
        bad_label
            .state_labels
            .insert("sleeping".into(), "zzz".into());
        assert!(
            matches!(metadata.report_metadata(&bad_label, now), Err(PaneError::InvalidParams(message)) if message.contains("sleeping"))
        );
    }

    #[test]
    fn token_limits_reject_the_whole_report() {
        let now = Instant::now();
        let mut metadata = PaneMetadata::default();
        let mut too_many = metadata_params("s");
        for index in 0..17 {
            too_many
                .tokens
                .insert(format!("t{index}"), Some("v".into()));
        }
        assert!(metadata.report_metadata(&too_many, now).is_err());
        assert!(metadata.view(now).tokens.is_empty(), "nothing was applied");
        for batch in 0..2 {
            let mut params = metadata_params("s");
            for index in 0..16 {
                params
                    .tokens
                    .insert(format!("b{batch}_{index}"), Some("v".into()));
            }
            metadata.report_metadata(&params, now).unwrap();
        }
        assert_eq!(metadata.view(now).tokens.len(), 32);
        let mut one_more = metadata_params("s");
        one_more.tokens.insert("extra".into(), Some("v".into()));
        assert!(metadata.report_metadata(&one_more, now).is_err());
        let mut swap = metadata_params("s");
        swap.tokens.insert("b0_0".into(), None);
        swap.tokens.insert("extra".into(), Some("v".into()));
        metadata.report_metadata(&swap, now).unwrap();
        assert_eq!(metadata.view(now).tokens.len(), 32);
        let mut bad_name = metadata_params("s");
        bad_name.tokens.insert("no spaces".into(), Some("v".into()));
        assert!(metadata.report_metadata(&bad_name, now).is_err());
        let mut empty_clears = metadata_params("s");
        empty_clears
            .tokens
            .insert("extra".into(), Some("   ".into()));
        metadata.report_metadata(&empty_clears, now).unwrap();
        assert!(!metadata.view(now).tokens.contains_key("extra"));
    }

    #[test]
    fn ttl_and_seq_rules() {
        let now = Instant::now();
        let mut metadata = PaneMetadata::default();
        let mut params = metadata_params("s");
        params.ttl_ms = Some(0);
        assert!(metadata.report_metadata(&params, now).is_err());
        params.ttl_ms = Some(86_400_001);
        assert!(metadata.report_metadata(&params, now).is_err());
        params.ttl_ms = Some(1_000);
        params.tokens.insert("short".into(), Some("lived".into()));
        params.seq = Some(5);
        metadata.report_metadata(&params, now).unwrap();
        assert_eq!(metadata.next_deadline(), Some(now + Duration::from_secs(1)));
        let later = now + Duration::from_millis(1_500);
        assert!(metadata.expire(later));
        assert!(metadata.view(later).tokens.is_empty());

        let mut stale = metadata_params("s");
        stale.seq = Some(5);
        stale.tokens.insert("stale".into(), Some("x".into()));
        assert!(
            !metadata.report_metadata(&stale, later).unwrap(),
            "accepted but ignored"
        );
        assert!(metadata.view(later).tokens.is_empty());

        for index in 0..31 {
            let mut params = metadata_params(&format!("source{index}"));
            params.seq = Some(1);
            metadata.report_metadata(&params, later).unwrap();
        }
        let mut thirty_third = metadata_params("source-last");
        thirty_third.seq = Some(1);
        assert!(metadata.report_metadata(&thirty_third, later).is_err());
        let unsequenced = metadata_params("source-last");
        assert!(
            metadata.report_metadata(&unsequenced, later).is_ok(),
            "the limit is on sequenced sources"
        );
    }

    #[test]
    fn release_and_authority() {
        let mut metadata = PaneMetadata::default();
        assert!(
            metadata
                .report_agent(
                    "a:src",
                    "bot",
                    PaneAgentState::Blocked,
                    None,
                    None,
                    None,
                    None
                )
                .unwrap()
        );
        assert!(!metadata.release_agent("other", "bot", None).unwrap());
        assert_eq!(metadata.agent_status(), AgentStatus::Blocked);
        assert!(metadata.release_agent("a:src", "bot", None).unwrap());
        assert_eq!(metadata.agent_status(), AgentStatus::Unknown);
        metadata
            .report_agent("a:src", "bot", PaneAgentState::Idle, None, None, None, None)
            .unwrap();
        assert!(!metadata.clear_agent_authority(Some("b:src"), None).unwrap());
        assert!(metadata.clear_agent_authority(Some("a:src"), None).unwrap());
        assert!(
            metadata
                .report_agent_session("a:src", "bot", None, None, None)
                .is_err()
        );
    }
}
