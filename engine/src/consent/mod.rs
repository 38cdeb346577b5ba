//! Consent: who may grant it (`peer`), what a consent covers and its digest (`preview`),
//! and the durable record every decision leaves (`record`).

pub mod land_preview;
pub mod peer;
pub mod preview;

use std::sync::Arc;

use nagi_schema::cockpit::CockpitDecision;
use nagi_store::ConsentRow;

use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_mission::MissionEvent;
use nagi_mission::clock::now_millis;
use nagi_mission::digest::stable_runtime_id;

/// Stores a consent decision durably: the consent row, and a `ConsentRecorded` event in the
/// mission's log when the consent concerns a mission. Returns the consent id.
pub async fn record(
    engine: &Arc<Engine>,
    mission_id: Option<&str>,
    subject: &str,
    digest: &str,
    decision: CockpitDecision,
    detail: serde_json::Value,
) -> Result<String, EngineError> {
    let at = now_millis();
    let decision_text = match decision {
        CockpitDecision::Approve => "approve",
        CockpitDecision::Deny => "deny",
    };
    let consent_id = stable_runtime_id(
        "consent",
        &[subject, digest, &at.to_string(), decision_text],
    );
    let row = ConsentRow {
        consent_id: consent_id.clone(),
        mission_id: mission_id.map(str::to_string),
        subject: subject.to_string(),
        digest: digest.to_string(),
        actor: nagi_mission::attention::LOCAL_ACTOR.into(),
        decision: decision_text.into(),
        detail: detail.to_string(),
        at_millis: at,
        outcome: match decision {
            CockpitDecision::Approve => "pending".into(),
            CockpitDecision::Deny => "denied".into(),
        },
        outcome_detail: None,
    };
    let mission_id = mission_id.map(str::to_string);
    let id = consent_id.clone();
    match mission_id {
        Some(mission_id) => {
            engine
                .missions
                .mutate_writing(&mission_id, move |writer, mission| {
                    writer.insert_consent(&row)?;
                    let events = match mission {
                        Some(_) => vec![MissionEvent::ConsentRecorded {
                            consent_id: id,
                            subject: row.subject.clone(),
                            decision: row.decision.clone(),
                            at_millis: at,
                        }],
                        None => Vec::new(),
                    };
                    Ok((events, ()))
                })
                .await?;
        }
        None => {
            engine
                .missions
                .transact(move |writer| Ok(writer.insert_consent(&row)?))
                .await?;
        }
    }
    Ok(consent_id)
}

/// Records what became of an approved consent's action: performed (with its summary) or
/// failed (with the error a person was shown).
pub async fn settle(
    engine: &Arc<Engine>,
    consent_id: &str,
    outcome: Result<&str, &str>,
) -> Result<(), EngineError> {
    let (outcome, detail) = match outcome {
        Ok(summary) => ("performed", summary.to_string()),
        Err(reason) => ("failed", reason.to_string()),
    };
    let consent_id = consent_id.to_string();
    engine
        .missions
        .transact(move |writer| {
            writer.settle_consent(&consent_id, outcome, &detail)?;
            Ok(())
        })
        .await
}
