//! Plain rows exchanged with the engine. The store does not interpret `doc` or `payload`:
//! they are the engine's JSON.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissionRow {
    pub mission_id: String,
    pub title: String,
    pub repository_path: String,
    pub status: String,
    pub unresolved_attention_count: u64,
    pub updated_at_millis: u64,
    /// The mission has a run the server must reconcile at start (preparing or active).
    pub live_run: bool,
    pub doc: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissionSummaryRow {
    pub mission_id: String,
    pub title: String,
    pub repository_path: String,
    pub status: String,
    pub unresolved_attention_count: u64,
    pub updated_at_millis: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub seq: u64,
    pub event_id: String,
    pub mission_id: String,
    pub kind: String,
    pub payload: String,
    pub at_millis: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRow {
    pub checkout_key: String,
    pub checkout_root: String,
    pub mission_id: String,
    pub run_id: String,
    pub request_id: String,
    pub nonce: String,
    pub claimed_at_millis: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    Claimed,
    /// The same owner and request already hold it (idempotent).
    AlreadyHeld(ClaimRow),
    /// Someone else holds it.
    HeldByOther(ClaimRow),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRow {
    pub consent_id: String,
    pub mission_id: Option<String>,
    pub subject: String,
    pub digest: String,
    pub actor: String,
    pub decision: String,
    pub detail: String,
    pub at_millis: u64,
    /// `denied`, `pending` (approved, the action not yet carried out), `performed` or
    /// `failed`; `unrecorded` for consents stored before outcomes were kept.
    pub outcome: String,
    /// What the action did, or why it failed.
    pub outcome_detail: Option<String>,
}
