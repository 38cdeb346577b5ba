//! Live (non-durable) pane, tab and workspace events, their `events.subscribe`
//! subscriptions and their `events.wait` matches.
//!
//! Two envelope shapes exist, as in the reference schema:
//! - lifecycle events `{"event": "pane_created", "data": {"type": "pane_created", ...}}`
//!   (`schemas.event`), where `data.type` equals `event`;
//! - subscription events `{"event": "pane.output_matched", "data": {...}}`
//!   (`schemas.subscription_event`), whose `data` has no `type`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::git_worktrees::WorktreeInfo;
use crate::pane::{
    AgentStatus, OutputMatch, PaneInfo, PaneReadResult, PaneScrollInfo, ReadSource, TabInfo,
    WorkspaceInfo,
};

/// The `data` of a lifecycle event, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PaneEventData {
    WorkspaceCreated {
        workspace: WorkspaceInfo,
    },
    WorkspaceUpdated {
        workspace: WorkspaceInfo,
    },
    WorkspaceMetadataUpdated {
        workspace: WorkspaceInfo,
    },
    WorkspaceClosed {
        workspace_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workspace: Option<WorkspaceInfo>,
    },
    WorkspaceRenamed {
        workspace_id: String,
        label: String,
    },
    WorkspaceMoved {
        workspace_id: String,
        insert_index: u64,
        workspaces: Vec<WorkspaceInfo>,
    },
    WorkspaceFocused {
        workspace_id: String,
    },
    /// `worktree.create` made a checkout and opened `workspace` in it.
    WorktreeCreated {
        workspace: WorkspaceInfo,
        worktree: WorktreeInfo,
    },
    /// `worktree.open` opened `workspace` in a checkout, or found it open.
    WorktreeOpened {
        workspace: WorkspaceInfo,
        worktree: WorktreeInfo,
        already_open: bool,
    },
    /// `worktree.remove` removed a linked checkout; `workspace` is its workspace's last
    /// snapshot.
    WorktreeRemoved {
        workspace_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workspace: Option<WorkspaceInfo>,
        worktree: WorktreeInfo,
        forced: bool,
    },
    TabCreated {
        tab: TabInfo,
    },
    TabClosed {
        tab_id: String,
        workspace_id: String,
    },
    TabRenamed {
        tab_id: String,
        workspace_id: String,
        label: String,
    },
    TabMoved {
        tab_id: String,
        workspace_id: String,
        insert_index: u64,
        tabs: Vec<TabInfo>,
    },
    TabFocused {
        tab_id: String,
        workspace_id: String,
    },
    PaneCreated {
        pane: PaneInfo,
    },
    PaneClosed {
        pane_id: String,
        workspace_id: String,
    },
    PaneUpdated {
        pane: PaneInfo,
    },
    PaneFocused {
        pane_id: String,
        workspace_id: String,
    },
    /// The pane's process ended. `exit_code` / `signal` are a nagi extension.
    PaneExited {
        pane_id: String,
        workspace_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    PaneAgentStatusChanged {
        pane_id: String,
        workspace_id: String,
        agent_status: AgentStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display_agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        state_labels: BTreeMap<String, String>,
    },
}

impl PaneEventData {
    /// The `event` / `data.type` name, e.g. `pane_created`.
    pub fn kind(&self) -> &'static str {
        match self {
            PaneEventData::WorkspaceCreated { .. } => "workspace_created",
            PaneEventData::WorkspaceUpdated { .. } => "workspace_updated",
            PaneEventData::WorkspaceMetadataUpdated { .. } => "workspace_metadata_updated",
            PaneEventData::WorkspaceClosed { .. } => "workspace_closed",
            PaneEventData::WorkspaceRenamed { .. } => "workspace_renamed",
            PaneEventData::WorkspaceMoved { .. } => "workspace_moved",
            PaneEventData::WorkspaceFocused { .. } => "workspace_focused",
            PaneEventData::WorktreeCreated { .. } => "worktree_created",
            PaneEventData::WorktreeOpened { .. } => "worktree_opened",
            PaneEventData::WorktreeRemoved { .. } => "worktree_removed",
            PaneEventData::TabCreated { .. } => "tab_created",
            PaneEventData::TabClosed { .. } => "tab_closed",
            PaneEventData::TabRenamed { .. } => "tab_renamed",
            PaneEventData::TabMoved { .. } => "tab_moved",
            PaneEventData::TabFocused { .. } => "tab_focused",
            PaneEventData::PaneCreated { .. } => "pane_created",
            PaneEventData::PaneClosed { .. } => "pane_closed",
            PaneEventData::PaneUpdated { .. } => "pane_updated",
            PaneEventData::PaneFocused { .. } => "pane_focused",
            PaneEventData::PaneExited { .. } => "pane_exited",
            PaneEventData::PaneAgentStatusChanged { .. } => "pane_agent_status_changed",
        }
    }

    /// The pane the event is about, if any.
    pub fn pane_id(&self) -> Option<&str> {
        match self {
            PaneEventData::PaneCreated { pane } | PaneEventData::PaneUpdated { pane } => {
                Some(&pane.pane_id)
            }
            PaneEventData::PaneClosed { pane_id, .. }
            | PaneEventData::PaneFocused { pane_id, .. }
            | PaneEventData::PaneExited { pane_id, .. }
            | PaneEventData::PaneAgentStatusChanged { pane_id, .. } => Some(pane_id),
            _ => None,
        }
    }

    /// The workspace the event is about.
    pub fn workspace_id(&self) -> &str {
        match self {
            PaneEventData::WorkspaceCreated { workspace }
            | PaneEventData::WorkspaceUpdated { workspace }
            | PaneEventData::WorkspaceMetadataUpdated { workspace }
            | PaneEventData::WorktreeCreated { workspace, .. }
            | PaneEventData::WorktreeOpened { workspace, .. } => &workspace.workspace_id,
            PaneEventData::WorktreeRemoved { workspace_id, .. } => workspace_id,
            PaneEventData::WorkspaceClosed { workspace_id, .. }
            | PaneEventData::WorkspaceRenamed { workspace_id, .. }
            | PaneEventData::WorkspaceMoved { workspace_id, .. }
            | PaneEventData::WorkspaceFocused { workspace_id }
            | PaneEventData::TabClosed { workspace_id, .. }
            | PaneEventData::TabRenamed { workspace_id, .. }
            | PaneEventData::TabMoved { workspace_id, .. }
            | PaneEventData::TabFocused { workspace_id, .. }
            | PaneEventData::PaneClosed { workspace_id, .. }
            | PaneEventData::PaneFocused { workspace_id, .. }
            | PaneEventData::PaneExited { workspace_id, .. }
            | PaneEventData::PaneAgentStatusChanged { workspace_id, .. } => workspace_id,
            PaneEventData::TabCreated { tab } => &tab.workspace_id,
            PaneEventData::PaneCreated { pane } | PaneEventData::PaneUpdated { pane } => {
                &pane.workspace_id
            }
        }
    }

    /// The tab the event is about, if any.
    pub fn tab_id(&self) -> Option<&str> {
        match self {
            PaneEventData::TabCreated { tab } => Some(&tab.tab_id),
            PaneEventData::TabClosed { tab_id, .. }
            | PaneEventData::TabRenamed { tab_id, .. }
            | PaneEventData::TabMoved { tab_id, .. }
            | PaneEventData::TabFocused { tab_id, .. } => Some(tab_id),
            PaneEventData::PaneCreated { pane } | PaneEventData::PaneUpdated { pane } => {
                Some(&pane.tab_id)
            }
            _ => None,
        }
    }
}

/// A lifecycle event line (`schemas.event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneLifecycleEnvelope {
    /// Equals `data.type`.
    pub event: String,
    pub data: PaneEventData,
}

impl PaneLifecycleEnvelope {
    pub fn new(data: PaneEventData) -> PaneLifecycleEnvelope {
        PaneLifecycleEnvelope {
            event: data.kind().to_string(),
            data,
        }
    }
}

/// The subscription an output match was produced for. `subscription_matches` compares it,
/// so that each subscriber receives the matches of its own pattern only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct OutputMatchedSubscription {
    pub pane_id: String,
    pub source: ReadSource,
    #[serde(rename = "match")]
    pub output_match: OutputMatch,
    #[serde(default)]
    pub lines: Option<u32>,
    #[serde(default = "default_true")]
    pub strip_ansi: bool,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneOutputMatchedEvent {
    pub pane_id: String,
    /// The last line of the read that matched.
    pub matched_line: String,
    pub read: PaneReadResult,
    /// Which subscription produced this match; not on the wire.
    #[serde(skip)]
    #[schemars(skip)]
    pub subscription: Option<OutputMatchedSubscription>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneAgentStatusChangedEvent {
    pub pane_id: String,
    pub workspace_id: String,
    pub agent_status: AgentStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub state_labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneScrollChangedEvent {
    pub pane_id: String,
    pub workspace_id: String,
    pub scroll: PaneScrollInfo,
}

/// A subscription event line (`schemas.subscription_event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", content = "data")]
pub enum PaneSubscriptionEnvelope {
    #[serde(rename = "pane.output_matched")]
    OutputMatched(PaneOutputMatchedEvent),
    #[serde(rename = "pane.agent_status_changed")]
    AgentStatusChanged(PaneAgentStatusChangedEvent),
    #[serde(rename = "pane.scroll_changed")]
    ScrollChanged(PaneScrollChangedEvent),
}

/// Every live event the pane host broadcasts.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PaneEventEnvelope {
    Lifecycle(PaneLifecycleEnvelope),
    Subscription(PaneSubscriptionEnvelope),
}

impl PaneEventEnvelope {
    pub fn lifecycle(data: PaneEventData) -> PaneEventEnvelope {
        PaneEventEnvelope::Lifecycle(PaneLifecycleEnvelope::new(data))
    }

    /// The `event` field: `pane_created`, `pane.output_matched`, …
    pub fn event_name(&self) -> &str {
        match self {
            PaneEventEnvelope::Lifecycle(envelope) => &envelope.event,
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(_)) => {
                "pane.output_matched"
            }
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::AgentStatusChanged(_)) => {
                "pane.agent_status_changed"
            }
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::ScrollChanged(_)) => {
                "pane.scroll_changed"
            }
        }
    }
}

/// What a subscriber missed when it fell behind the live event bus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventsLagged {
    /// How many live events were dropped for this subscriber.
    pub missed: u64,
    pub message: String,
}

/// nagi extension: a notice line on an `events.subscribe` stream, e.g.
/// `{"event": "events.lagged", "data": {"missed": 12, "message": "..."}}`. Live events
/// are not durable: a subscriber that falls behind loses some and is told so, and can
/// resynchronise with `session.snapshot`. Durable mission events are never dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", content = "data")]
pub enum SubscriptionNotice {
    #[serde(rename = "events.lagged")]
    Lagged(EventsLagged),
}

/// The pane, tab and workspace subscriptions of `events.subscribe`, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum PaneSubscription {
    #[serde(rename = "workspace.created")]
    WorkspaceCreated,
    #[serde(rename = "workspace.updated")]
    WorkspaceUpdated,
    #[serde(rename = "workspace.metadata_updated")]
    WorkspaceMetadataUpdated,
    #[serde(rename = "workspace.renamed")]
    WorkspaceRenamed,
    #[serde(rename = "workspace.moved")]
    WorkspaceMoved,
    #[serde(rename = "workspace.closed")]
    WorkspaceClosed,
    #[serde(rename = "workspace.focused")]
    WorkspaceFocused,
    #[serde(rename = "worktree.created")]
    WorktreeCreated,
    #[serde(rename = "worktree.opened")]
    WorktreeOpened,
    #[serde(rename = "worktree.removed")]
    WorktreeRemoved,
    #[serde(rename = "tab.created")]
    TabCreated,
    #[serde(rename = "tab.closed")]
    TabClosed,
    #[serde(rename = "tab.focused")]
    TabFocused,
    #[serde(rename = "tab.renamed")]
    TabRenamed,
    #[serde(rename = "tab.moved")]
    TabMoved,
    #[serde(rename = "pane.created")]
    PaneCreated,
    #[serde(rename = "pane.closed")]
    PaneClosed,
    #[serde(rename = "pane.updated")]
    PaneUpdated,
    #[serde(rename = "pane.focused")]
    PaneFocused,
    #[serde(rename = "pane.moved")]
    PaneMoved,
    #[serde(rename = "pane.exited")]
    PaneExited,
    #[serde(rename = "pane.agent_detected")]
    PaneAgentDetected,
    /// Output of one pane matched a pattern. The pane host must be told to watch it
    /// (`PaneHost::watch_output`), since matching needs the pane's screen.
    #[serde(rename = "pane.output_matched")]
    PaneOutputMatched(OutputMatchedSubscription),
    #[serde(rename = "pane.agent_status_changed")]
    PaneAgentStatusChanged {
        pane_id: String,
        #[serde(default)]
        agent_status: Option<AgentStatus>,
    },
    #[serde(rename = "pane.scroll_changed")]
    PaneScrollChanged { pane_id: String },
}

impl PaneSubscription {
    /// The event name of a subscription that nagi accepts in the protocol but never emits
    /// (no layouts to move panes, no agent detection), so that it can be refused rather
    /// than leave its subscriber waiting. `pane.scroll_changed` is emitted: an attach
    /// controller scrolls a pane's view of its history.
    pub fn never_emitted(&self) -> Option<&'static str> {
        match self {
            PaneSubscription::PaneMoved => Some("pane.moved"),
            PaneSubscription::PaneAgentDetected => Some("pane.agent_detected"),
            _ => None,
        }
    }
}

/// Whether `event` is pushed to a subscriber holding `subscription`.
pub fn subscription_matches(subscription: &PaneSubscription, event: &PaneEventEnvelope) -> bool {
    use PaneEventData as Data;
    match (subscription, event) {
        (
            PaneSubscription::PaneOutputMatched(wanted),
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(found)),
        ) => found.subscription.as_ref() == Some(wanted),
        (
            PaneSubscription::PaneAgentStatusChanged {
                pane_id,
                agent_status,
            },
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::AgentStatusChanged(found)),
        ) => {
            *pane_id == found.pane_id
                && agent_status.is_none_or(|status| status == found.agent_status)
        }
        (
            PaneSubscription::PaneScrollChanged { pane_id },
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::ScrollChanged(found)),
        ) => *pane_id == found.pane_id,
        (_, PaneEventEnvelope::Subscription(_)) => false,
        (subscription, PaneEventEnvelope::Lifecycle(envelope)) => matches!(
            (subscription, &envelope.data),
            (
                PaneSubscription::WorkspaceCreated,
                Data::WorkspaceCreated { .. }
            ) | (
                PaneSubscription::WorkspaceUpdated,
                Data::WorkspaceUpdated { .. }
            ) | (
                PaneSubscription::WorkspaceMetadataUpdated,
                Data::WorkspaceMetadataUpdated { .. }
            ) | (
                PaneSubscription::WorkspaceRenamed,
                Data::WorkspaceRenamed { .. }
            ) | (
                PaneSubscription::WorkspaceMoved,
                Data::WorkspaceMoved { .. }
            ) | (
                PaneSubscription::WorkspaceClosed,
                Data::WorkspaceClosed { .. }
            ) | (
                PaneSubscription::WorkspaceFocused,
                Data::WorkspaceFocused { .. }
            ) | (
                PaneSubscription::WorktreeCreated,
                Data::WorktreeCreated { .. }
            ) | (
                PaneSubscription::WorktreeOpened,
                Data::WorktreeOpened { .. }
            ) | (
                PaneSubscription::WorktreeRemoved,
                Data::WorktreeRemoved { .. }
            ) | (PaneSubscription::TabCreated, Data::TabCreated { .. })
                | (PaneSubscription::TabClosed, Data::TabClosed { .. })
                | (PaneSubscription::TabFocused, Data::TabFocused { .. })
                | (PaneSubscription::TabRenamed, Data::TabRenamed { .. })
                | (PaneSubscription::TabMoved, Data::TabMoved { .. })
                | (PaneSubscription::PaneCreated, Data::PaneCreated { .. })
                | (PaneSubscription::PaneClosed, Data::PaneClosed { .. })
                | (PaneSubscription::PaneUpdated, Data::PaneUpdated { .. })
                | (PaneSubscription::PaneFocused, Data::PaneFocused { .. })
                | (PaneSubscription::PaneExited, Data::PaneExited { .. })
        ),
    }
}

/// The pane, tab and workspace matches of `events.wait`, tagged by `event`. Optional
/// fields narrow the match; absent fields match anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum PaneEventMatch {
    WorkspaceCreated {
        #[serde(default)]
        workspace_id: Option<String>,
    },
    WorkspaceUpdated {
        workspace_id: String,
    },
    WorkspaceClosed {
        workspace_id: String,
    },
    WorkspaceRenamed {
        workspace_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    WorkspaceMoved {
        workspace_id: String,
    },
    WorkspaceFocused {
        workspace_id: String,
    },
    TabCreated {
        #[serde(default)]
        tab_id: Option<String>,
        #[serde(default)]
        workspace_id: Option<String>,
    },
    TabClosed {
        tab_id: String,
    },
    TabRenamed {
        tab_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    TabMoved {
        tab_id: String,
    },
    TabFocused {
        tab_id: String,
    },
    PaneCreated {
        #[serde(default)]
        pane_id: Option<String>,
        #[serde(default)]
        workspace_id: Option<String>,
    },
    PaneClosed {
        pane_id: String,
    },
    PaneFocused {
        pane_id: String,
    },
    PaneMoved {
        pane_id: String,
    },
    PaneExited {
        pane_id: String,
    },
    PaneAgentStatusChanged {
        pane_id: String,
        agent_status: AgentStatus,
    },
}

fn same_or_any(wanted: &Option<String>, found: &str) -> bool {
    wanted.as_deref().is_none_or(|wanted| wanted == found)
}

/// Whether a lifecycle event satisfies an `events.wait` match.
pub fn event_match_matches(wanted: &PaneEventMatch, event: &PaneEventEnvelope) -> bool {
    use PaneEventData as Data;
    use PaneEventMatch as Match;
    let PaneEventEnvelope::Lifecycle(envelope) = event else {
        return false;
    };
    match (wanted, &envelope.data) {
        (Match::WorkspaceCreated { workspace_id }, Data::WorkspaceCreated { workspace }) => {
            same_or_any(workspace_id, &workspace.workspace_id)
        }
        (Match::WorkspaceUpdated { workspace_id }, Data::WorkspaceUpdated { workspace }) => {
            *workspace_id == workspace.workspace_id
        }
        (
            Match::WorkspaceClosed {
                workspace_id: wanted,
            },
            Data::WorkspaceClosed { workspace_id, .. },
        )
        | (
            Match::WorkspaceMoved {
                workspace_id: wanted,
            },
            Data::WorkspaceMoved { workspace_id, .. },
        )
        | (
            Match::WorkspaceFocused {
                workspace_id: wanted,
            },
            Data::WorkspaceFocused { workspace_id },
        ) => wanted == workspace_id,
        (
            Match::WorkspaceRenamed {
                workspace_id: wanted,
                label: wanted_label,
            },
            Data::WorkspaceRenamed {
                workspace_id,
                label,
            },
        ) => wanted == workspace_id && same_or_any(wanted_label, label),
        (
            Match::TabCreated {
                tab_id,
                workspace_id,
            },
            Data::TabCreated { tab },
        ) => same_or_any(tab_id, &tab.tab_id) && same_or_any(workspace_id, &tab.workspace_id),
        (Match::TabClosed { tab_id: wanted }, Data::TabClosed { tab_id, .. })
        | (Match::TabMoved { tab_id: wanted }, Data::TabMoved { tab_id, .. })
        | (Match::TabFocused { tab_id: wanted }, Data::TabFocused { tab_id, .. }) => {
            wanted == tab_id
        }
        (
            Match::TabRenamed {
                tab_id: wanted,
                label: wanted_label,
            },
            Data::TabRenamed { tab_id, label, .. },
        ) => wanted == tab_id && same_or_any(wanted_label, label),
        (
            Match::PaneCreated {
                pane_id,
                workspace_id,
            },
            Data::PaneCreated { pane },
        ) => same_or_any(pane_id, &pane.pane_id) && same_or_any(workspace_id, &pane.workspace_id),
        (Match::PaneClosed { pane_id: wanted }, Data::PaneClosed { pane_id, .. })
        | (Match::PaneFocused { pane_id: wanted }, Data::PaneFocused { pane_id, .. })
        | (Match::PaneExited { pane_id: wanted }, Data::PaneExited { pane_id, .. }) => {
            wanted == pane_id
        }
        (
            Match::PaneAgentStatusChanged {
                pane_id: wanted,
                agent_status: wanted_status,
            },
            Data::PaneAgentStatusChanged {
                pane_id,
                agent_status,
                ..
            },
        ) => wanted == pane_id && wanted_status == agent_status,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::ReadFormat;

    fn exited(pane_id: &str) -> PaneEventEnvelope {
        PaneEventEnvelope::lifecycle(PaneEventData::PaneExited {
            pane_id: pane_id.into(),
            workspace_id: "w1".into(),
            exit_code: Some(3),
            signal: None,
        })
    }

    #[test]
    fn lifecycle_envelope_repeats_the_kind_in_data_type() {
        let value = serde_json::to_value(exited("w1:p1")).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"event": "pane_exited", "data": {"type": "pane_exited", "pane_id": "w1:p1", "workspace_id": "w1", "exit_code": 3}})
        );
    }

    #[test]
    fn subscriptions_decode_from_the_reference_names() {
        let subscription: PaneSubscription = serde_json::from_value(serde_json::json!({
            "type": "pane.agent_status_changed", "pane_id": "w1:p1", "agent_status": "blocked"
        }))
        .unwrap();
        assert_eq!(
            subscription,
            PaneSubscription::PaneAgentStatusChanged {
                pane_id: "w1:p1".into(),
                agent_status: Some(AgentStatus::Blocked)
            }
        );
        let subscription: PaneSubscription =
            serde_json::from_value(serde_json::json!({"type": "pane.exited"})).unwrap();
        assert!(subscription_matches(&subscription, &exited("w1:p1")));
        assert!(!subscription_matches(
            &PaneSubscription::PaneClosed,
            &exited("w1:p1")
        ));
    }

    #[test]
    fn output_matches_reach_only_their_own_subscription() {
        let mine = OutputMatchedSubscription {
            pane_id: "w1:p1".into(),
            source: ReadSource::Recent,
            output_match: OutputMatch::Substring {
                value: "done".into(),
            },
            lines: None,
            strip_ansi: true,
        };
        let theirs = OutputMatchedSubscription {
            output_match: OutputMatch::Substring {
                value: "fail".into(),
            },
            ..mine.clone()
        };
        let event = PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(
            PaneOutputMatchedEvent {
                pane_id: "w1:p1".into(),
                matched_line: "done".into(),
                read: PaneReadResult {
                    pane_id: "w1:p1".into(),
                    workspace_id: "w1".into(),
                    tab_id: "w1:t1".into(),
                    source: ReadSource::Recent,
                    format: ReadFormat::Text,
                    text: "done".into(),
                    revision: 1,
                    truncated: false,
                },
                subscription: Some(mine.clone()),
            },
        ));
        assert!(subscription_matches(
            &PaneSubscription::PaneOutputMatched(mine),
            &event
        ));
        assert!(!subscription_matches(
            &PaneSubscription::PaneOutputMatched(theirs),
            &event
        ));
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(value["event"], "pane.output_matched");
        assert!(value["data"].get("subscription").is_none());
        assert!(value["data"].get("type").is_none());
    }

    #[test]
    fn wait_matches_compare_ids() {
        let wanted: PaneEventMatch =
            serde_json::from_value(serde_json::json!({"event": "pane_exited", "pane_id": "w1:p1"}))
                .unwrap();
        assert!(event_match_matches(&wanted, &exited("w1:p1")));
        assert!(!event_match_matches(&wanted, &exited("w1:p2")));
    }
}
