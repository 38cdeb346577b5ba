//! Decisions about attention items that a person takes in the cockpit.

use crate::error::MissionError;
use crate::event::MissionEvent;
use nagi_schema::attention::AttentionFailureCodeV1;

use crate::model::{AttemptState, AttentionLifecycle, Mission};

/// The actor recorded for what a person did through the local cockpit.
pub const LOCAL_ACTOR: &str = "local-user";

/// Dismissing an attention item, decided on the mission as stored at the moment of the
/// commit: the item must still be unresolved. An item answered, expired or dismissed since
/// the person was shown it is refused, and nothing is written.
pub fn decide_dismiss(
    mission: Option<&Mission>,
    attention_id: &str,
    reason: &str,
    now_millis: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    let mission =
        mission.ok_or_else(|| MissionError::AttentionNotFound(attention_id.to_string()))?;
    let item = mission
        .attention
        .get(attention_id)
        .ok_or_else(|| MissionError::AttentionNotFound(attention_id.to_string()))?;
    if !item.is_unresolved() {
        return Err(MissionError::InvalidResponse(format!(
            "attention {attention_id} is already settled"
        )));
    }
    Ok(vec![MissionEvent::AttentionClosed {
        attention_id: attention_id.to_string(),
        expired: false,
        actor: LOCAL_ACTOR.to_string(),
        reason: reason.to_string(),
        at_millis: now_millis,
    }])
}

/// What a restart does to a mission's attention items: an open provider request ended with
/// the provider's process, so it expires (a resumed provider that still needs the decision
/// asks again); a response in flight has an unknown delivery.
pub fn settle_after_restart(mission: &Mission, now: u64) -> Vec<MissionEvent> {
    let mut events = Vec::new();
    for item in mission.attention.values() {
        match item.lifecycle {
            AttentionLifecycle::Open if item.provider_request_key.is_some() => events.push(MissionEvent::AttentionClosed {
                attention_id: item.attention_id.clone(),
                expired: true,
                actor: "nagi-recovery".into(),
                reason: "the server restarted; the provider's pending request ended with its process. If the resumed provider still \
                         needs a decision it asks again, and the item reopens"
                    .into(),
                at_millis: now,
            }),
            AttentionLifecycle::PendingResponse => {
                if let Some(attempt) = item.attempts.last() {
                    events.push(MissionEvent::ResponseSettled {
                        attention_id: item.attention_id.clone(),
                        attempt: attempt.attempt,
                        state: AttemptState::DeliveryUnknown { code: AttentionFailureCodeV1::TransportClosed },
                        at_millis: now,
                    });
                }
            }
            _ => {}
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use nagi_schema::attention::{AttentionKindV1, AttentionRiskV1};
    use nagi_schema::mission::MissionCreateParams;

    use super::*;
    use crate::apply::apply;
    use crate::create::{CreateDecision, decide_create};
    use crate::model::AttentionLifecycle;

    fn mission_with_a_notice() -> Mission {
        let params = MissionCreateParams {
            mission_id: "m1".into(),
            title: "Fix login".into(),
            repository_path: "/work/repo".into(),
            objective: "Fix the login redirect".into(),
            acceptance_criteria: vec!["Redirect test passes".into()],
            host: None,
        };
        let CreateDecision::Create(created) =
            decide_create(None, &params, "/work/repo", 10).unwrap()
        else {
            panic!("a new mission is created")
        };
        let mission = apply(None, &created);
        let opened = crate::run::notice(
            &mission,
            "run-1",
            "att-1",
            AttentionKindV1::SecurityWarning,
            AttentionRiskV1::High,
            "the workspace changed",
            11,
        );
        opened
            .iter()
            .fold(mission, |mission, event| apply(Some(mission), event))
    }

    #[test]
    fn an_open_item_is_dismissed_by_the_local_user_with_the_reason() {
        let mission = mission_with_a_notice();
        let events = decide_dismiss(Some(&mission), "att-1", "seen it", 12).unwrap();
        let mission = events
            .iter()
            .fold(mission, |mission, event| apply(Some(mission), event));
        let item = &mission.attention["att-1"];
        assert_eq!(item.lifecycle, AttentionLifecycle::Dismissed);
        assert_eq!(item.closed_by.as_deref(), Some(LOCAL_ACTOR));
        assert_eq!(item.closed_reason.as_deref(), Some("seen it"));
    }

    #[test]
    fn an_item_settled_since_it_was_shown_is_not_dismissed_again() {
        let mission = mission_with_a_notice();
        let first = decide_dismiss(Some(&mission), "att-1", "seen it", 12).unwrap();
        let mission = first
            .iter()
            .fold(mission, |mission, event| apply(Some(mission), event));
        let refused = decide_dismiss(Some(&mission), "att-1", "again", 13).unwrap_err();
        assert!(
            matches!(refused, MissionError::InvalidResponse(_)),
            "{refused:?}"
        );
        assert_eq!(
            mission.attention["att-1"].closed_reason.as_deref(),
            Some("seen it")
        );
    }

    #[test]
    fn a_missing_item_or_mission_is_not_found_rather_than_a_panic() {
        let mission = mission_with_a_notice();
        assert!(matches!(
            decide_dismiss(Some(&mission), "att-9", "x", 12),
            Err(MissionError::AttentionNotFound(_))
        ));
        assert!(matches!(
            decide_dismiss(None, "att-1", "x", 12),
            Err(MissionError::AttentionNotFound(_))
        ));
    }
}
