//! The commands a generated sequence is made of, their strategies, and the small model of
//! the mission that the test keeps on its own.

use std::collections::BTreeMap;

use nagi_mission::MissionEvent;
use nagi_mission::model::*;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
pub(crate) struct CheckSpec {
    /// Small, so that duplicate ids occur.
    pub(crate) id_index: u8,
    pub(crate) manual: bool,
    pub(crate) required: bool,
    pub(crate) covers: Vec<u64>,
    /// A value the validation must refuse (empty program, `..` cwd, no reviewer).
    pub(crate) broken: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Command {
    Create {
        criteria: usize,
        different_title: bool,
    },
    Configure {
        checks: Vec<CheckSpec>,
    },
    /// One required check that covers every criterion: the plan most missions have.
    ConfigureCovering {
        manual: bool,
    },
    StartRun {
        provider: usize,
    },
    ContinueRun {
        provider: usize,
    },
    AttachPane,
    BindSession,
    /// A status change to any status; the table refuses most.
    ChangeStatus {
        to: usize,
        ends_run: bool,
    },
    /// A status change to one of the statuses the table allows from the current one.
    Advance {
        pick: usize,
    },
    OpenAttention {
        kind: usize,
        risk: usize,
    },
    RequestResponse {
        pick: usize,
        decision: usize,
    },
    SettleResponse {
        pick: usize,
        outcome: usize,
    },
    CloseAttention {
        pick: usize,
        expired: bool,
    },
    StartChecks {
        count: u32,
    },
    FinishChecks,
    /// A whole check run: started, one piece of evidence per declared check, finished.
    CheckRun {
        passing: bool,
    },
    RecordEvidence {
        pick: usize,
        assessment: usize,
    },
    RecordPack,
    Seal,
    Consent,
}

pub(crate) fn check_spec() -> impl Strategy<Value = CheckSpec> {
    (
        0u8..4,
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop::collection::vec(0u64..4, 0..3),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(id_index, manual, required, covers, broken)| CheckSpec {
            id_index,
            manual,
            required,
            covers,
            broken,
        })
}

pub(crate) fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        2 => (1usize..4, prop::bool::weighted(0.3)).prop_map(|(criteria, different_title)| Command::Create { criteria, different_title }),
        2 => prop::collection::vec(check_spec(), 0..4).prop_map(|checks| Command::Configure { checks }),
        2 => any::<bool>().prop_map(|manual| Command::ConfigureCovering { manual }),
        2 => (0usize..4).prop_map(|provider| Command::StartRun { provider }),
        1 => (0usize..4).prop_map(|provider| Command::ContinueRun { provider }),
        1 => Just(Command::AttachPane),
        2 => Just(Command::BindSession),
        2 => (0usize..8, any::<bool>()).prop_map(|(to, ends_run)| Command::ChangeStatus { to, ends_run }),
        6 => (0usize..6).prop_map(|pick| Command::Advance { pick }),
        2 => (0usize..8, 0usize..4).prop_map(|(kind, risk)| Command::OpenAttention { kind, risk }),
        2 => (0usize..4, 0usize..5).prop_map(|(pick, decision)| Command::RequestResponse { pick, decision }),
        2 => (0usize..4, 0usize..4).prop_map(|(pick, outcome)| Command::SettleResponse { pick, outcome }),
        1 => (0usize..4, any::<bool>()).prop_map(|(pick, expired)| Command::CloseAttention { pick, expired }),
        1 => (1u32..4).prop_map(|count| Command::StartChecks { count }),
        1 => Just(Command::FinishChecks),
        2 => prop::bool::weighted(0.7).prop_map(|passing| Command::CheckRun { passing }),
        3 => (0usize..4, 0usize..8).prop_map(|(pick, assessment)| Command::RecordEvidence { pick, assessment }),
        1 => Just(Command::RecordPack),
        2 => Just(Command::Seal),
        1 => Just(Command::Consent),
    ]
}

/// Commands with the clock movement before each; the wall clock may step backwards.
/// Most sequences start by creating the mission (a sequence that does not is refused
/// until a create comes along, which is tested too).
pub(crate) fn timed_commands() -> impl Strategy<Value = Vec<(i64, Command)>> {
    let first = prop_oneof![
        9 => (1usize..4).prop_map(|criteria| Command::Create { criteria, different_title: false }),
        1 => command(),
    ];
    (
        first,
        prop::collection::vec((-2_000i64..5_000, command()), 0..80),
    )
        .prop_map(|(first, mut rest)| {
            rest.insert(0, (0, first));
            rest
        })
}

// ---------------------------------------------------------------------------------------
// The model the test keeps on its own
// ---------------------------------------------------------------------------------------

#[derive(Default)]
pub(crate) struct Model {
    /// attention id -> the lifecycle the item must have.
    pub(crate) attention: BTreeMap<String, AttentionLifecycle>,
    /// attention id -> the run that was current when it opened.
    pub(crate) attention_run: BTreeMap<String, String>,
    pub(crate) runs_started: usize,
    pub(crate) attention_opened: usize,
    pub(crate) authority_sequence: u64,
}

impl Model {
    pub(crate) fn unresolved(&self) -> u32 {
        self.attention
            .values()
            .filter(|lifecycle| {
                matches!(
                    lifecycle,
                    AttentionLifecycle::Open
                        | AttentionLifecycle::PendingResponse
                        | AttentionLifecycle::ReconciliationRequired
                )
            })
            .count() as u32
    }
}

/// Updates the test's own model with an accepted event.
pub(crate) fn record_in_model(model: &mut Model, event: &MissionEvent) {
    match event {
        MissionEvent::RunStarted { .. } | MissionEvent::RunContinued { .. } => {
            model.runs_started += 1
        }
        MissionEvent::AttentionOpened { attention, .. } => {
            model
                .attention
                .insert(attention.attention_id.clone(), AttentionLifecycle::Open);
            model
                .attention_run
                .insert(attention.attention_id.clone(), attention.run_id.clone());
        }
        MissionEvent::ResponseRequested { attention_id, .. } => {
            model
                .attention
                .insert(attention_id.clone(), AttentionLifecycle::PendingResponse);
        }
        MissionEvent::ResponseSettled {
            attention_id,
            state,
            ..
        } => {
            let lifecycle = match state {
                AttemptState::Requested => AttentionLifecycle::PendingResponse,
                AttemptState::Acknowledged => AttentionLifecycle::Resolved,
                AttemptState::DefinitelyNotApplied { .. } => AttentionLifecycle::Open,
                AttemptState::DeliveryUnknown { .. } => AttentionLifecycle::ReconciliationRequired,
            };
            model.attention.insert(attention_id.clone(), lifecycle);
        }
        MissionEvent::AttentionClosed {
            attention_id,
            expired,
            ..
        } => {
            let lifecycle = if *expired {
                AttentionLifecycle::Expired
            } else {
                AttentionLifecycle::Dismissed
            };
            model.attention.insert(attention_id.clone(), lifecycle);
        }
        _ => {}
    }
}
