//! `mission.create`, `mission.list`, `mission.get` and `attention.list` as fleet mode
//! changes them (contract extension, README "Fleet mode"). On a lone host (no
//! `Engine::fleet`) they are the plain handlers of `missions.rs` and `attention.rs`, bar a
//! `host` param, which is refused.
//!
//! In fleet mode every create goes through the mission's workflow, which creates the
//! mission on its pinned host (this one when `host` is absent); list and get answer for the
//! whole fleet: this host's missions from its own store, the others' as their workflows
//! last recorded them, each with its `host`. `attention.list` without `mission_id` adds the
//! open items of the other hosts' missions, each read from its host through the mission's
//! workflow (with `mission_id` it is routed like any method on one mission).

use std::collections::BTreeSet;
use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::create::decide_create;
use nagi_schema::attention::AttentionItemV1;
use nagi_schema::fleet::{RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{
    AttentionListParams, MissionCreateParams, MissionStatus, MissionTarget,
};
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;

pub async fn create(
    engine: &Arc<Engine>,
    mut params: MissionCreateParams,
) -> Result<ResponseResult, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        if params.host.is_some() {
            return Err(EngineError::FeatureUnavailable(
                "`host` pins a mission to a host of a fleet, and this server is not in fleet \
                 mode (nagi server --fleet ADDRESS --host NAME); nothing was created"
                    .into(),
            ));
        }
        return super::missions::create(engine, params).await;
    };
    let host = params
        .host
        .take()
        .unwrap_or_else(|| fleet.host().to_string());
    if let Err(fault) = nagi_schema::ids::check_id_text(&host) {
        return Err(EngineError::InvalidParams(fault.describe("host", &host)));
    }
    // The field rules are checked here, before a workflow is started; the repository is
    // checked on the pinned host, where the path is.
    decide_create(None, &params, &params.repository_path, 0)?;
    let (mut mission, created) = fleet.create(params, host.clone()).await?;
    mission.host = Some(host);
    Ok(ResponseResult::MissionCreated { mission, created })
}

pub async fn list(engine: &Arc<Engine>) -> Result<ResponseResult, EngineError> {
    let local = super::on_blocking_pool(engine, super::missions::list).await?;
    let Some(fleet) = engine.fleet.get() else {
        return Ok(local);
    };
    let ResponseResult::MissionList { missions: mut own } = local else {
        return Err(MissionError::Runtime("mission.list answered no list".into()).into());
    };
    let host = fleet.host().to_string();
    for summary in &mut own {
        summary.host = Some(host.clone());
    }
    let own_ids: BTreeSet<String> = own.iter().map(|m| m.mission_id.clone()).collect();
    let mut missions = own;
    for summary in fleet.list().await? {
        if summary.host.as_deref() == Some(&host) {
            continue;
        }
        if own_ids.contains(&summary.mission_id) {
            // This host's archived copy of a mission handed to another host while this
            // one was gone: the fleet lists the mission where it went on.
            if let Some(own) = missions
                .iter_mut()
                .find(|own| own.mission_id == summary.mission_id)
                && own.status == MissionStatus::Archived
            {
                *own = summary;
            }
            continue;
        }
        missions.push(summary);
    }
    missions.sort_by(|a, b| a.mission_id.cmp(&b.mission_id));
    Ok(ResponseResult::MissionList { missions })
}

pub async fn get(
    engine: &Arc<Engine>,
    params: MissionTarget,
) -> Result<ResponseResult, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        return super::missions::get(engine, params);
    };
    match super::missions::get(engine, params.clone()) {
        Ok(ResponseResult::MissionInfo { mut mission }) => {
            if mission.status == MissionStatus::Archived
                && let Some(remote) = fleet.get(params.mission_id.clone()).await?
                && remote.host != fleet.host()
            {
                let mut mission = remote.view;
                mission.host = Some(remote.host);
                return Ok(ResponseResult::MissionInfo { mission });
            }
            mission.host = Some(fleet.host().to_string());
            Ok(ResponseResult::MissionInfo { mission })
        }
        Err(error) if is_not_found(&error) => match fleet.get(params.mission_id).await? {
            Some(remote) => {
                let mut mission = remote.view;
                mission.host = Some(remote.host);
                Ok(ResponseResult::MissionInfo { mission })
            }
            None => Err(error),
        },
        other => other,
    }
}

/// `attention.list`: this host's items and, in fleet mode and without `mission_id`, the
/// items of every other host's mission that reports an unresolved one (every mission not
/// archived, with `include_closed`), asked of its host through the mission's workflow, all
/// sorted by mission and attention id; in fleet mode every item names its `host`. A
/// host that does not answer is left out and logged: its missions show `blocked` in
/// `mission.list` once it is gone, and this host's items are still answered.
pub async fn attention_list(
    engine: &Arc<Engine>,
    params: AttentionListParams,
    peer: super::Peer,
) -> Result<ResponseResult, EngineError> {
    let include_closed = params.include_closed;
    let mission_id = params.mission_id.clone();
    let local =
        super::on_blocking_pool(engine, move |engine| super::attention::list(engine, params))
            .await?;
    let Some(fleet) = engine.fleet.get() else {
        return Ok(local);
    };
    let ResponseResult::AttentionList { mut items } = local else {
        return Err(MissionError::Runtime("attention.list answered no list".into()).into());
    };
    let host = fleet.host().to_string();
    for item in &mut items {
        item.host = Some(host.clone());
    }
    if mission_id.is_some() {
        return Ok(ResponseResult::AttentionList { items });
    }
    for summary in fleet.list().await? {
        let theirs = summary.host.as_deref().is_some_and(|other| other != host);
        let asks = if include_closed {
            summary.status != MissionStatus::Archived
        } else {
            summary.unresolved_attention_count > 0
        };
        if !theirs || !asks || engine.missions.get(&summary.mission_id)?.is_some() {
            continue;
        }
        let request = RoutedRequest {
            method: "attention.list".into(),
            params: serde_json::json!({
                "mission_id": summary.mission_id,
                "include_closed": include_closed,
            }),
            origin_host: host.clone(),
            origin_uid: peer.uid,
            consent_checked: false,
        };
        let answer = fleet.act(summary.mission_id.clone(), request).await;
        match remote_items(answer) {
            Ok(remote) => items.extend(remote.into_iter().map(|mut item| {
                // A host answering through the workflow names itself; one from before
                // this field is named from the mission's pin.
                item.host = item.host.or_else(|| summary.host.clone());
                item
            })),
            Err(reason) => tracing::warn!(
                mission_id = %summary.mission_id,
                host = summary.host.as_deref().unwrap_or_default(),
                %reason,
                "attention.list leaves out a mission of another host"
            ),
        }
    }
    // Sorted as one host sorts its own (contract §2.11), whichever host holds the item.
    items.sort_by(|left, right| {
        (&left.mission_id, &left.attention_id).cmp(&(&right.mission_id, &right.attention_id))
    });
    Ok(ResponseResult::AttentionList { items })
}

/// `attention.get`: this host's item, naming this host in fleet mode (a fleet routes a
/// request that names the item's mission to the mission's host first). In fleet mode, an
/// item not found here without a named mission may be another host's: the error says how
/// to ask for it.
pub fn attention_get(
    engine: &Arc<Engine>,
    params: nagi_schema::mission::AttentionTarget,
) -> Result<ResponseResult, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        return super::attention::get(engine, params);
    };
    let unnamed = params.mission_id.is_none();
    match super::attention::get(engine, params) {
        Ok(ResponseResult::AttentionInfo { mut item }) => {
            item.host = Some(fleet.host().to_string());
            Ok(ResponseResult::AttentionInfo { item })
        }
        Err(EngineError::Mission(MissionError::AttentionNotFound(message))) if unnamed => {
            Err(MissionError::AttentionNotFound(format!(
                "{message} on host {}; an item of another host is asked for with its mission \
                 (`mission_id`, or `nagi attention get ID --mission MISSION`)",
                fleet.host()
            ))
            .into())
        }
        other => other,
    }
}

fn remote_items(answer: Result<RoutedAnswer, EngineError>) -> Result<Vec<AttentionItemV1>, String> {
    match answer.map_err(|error| error.to_string())? {
        RoutedAnswer::Answered { result } => match serde_json::from_value(result) {
            Ok(ResponseResult::AttentionList { items }) => Ok(items),
            Ok(other) => Err(format!("the host answered {other:?}")),
            Err(error) => Err(format!("the host's answer does not decode: {error}")),
        },
        RoutedAnswer::Refused { code, message } => Err(format!("{code}: {message}")),
    }
}

pub(super) fn is_not_found(error: &EngineError) -> bool {
    matches!(error, EngineError::Mission(MissionError::NotFound(_)))
}

/// How the reason of a mission this host archived because it was handed to another host
/// while this one was gone begins ([`retire_handed_away`]).
const HANDED_AWAY: &str = "handed to host ";

/// Whether `mission` is this host's archived copy of a mission handed to another host.
pub fn handed_away(mission: &nagi_mission::Mission) -> bool {
    mission.status == MissionStatus::Archived
        && mission
            .abandoned_reason
            .as_deref()
            .is_some_and(|reason| reason.starts_with(HANDED_AWAY))
}

/// How long a server's start waits for the fleet to say where its missions are. A query
/// is answered by any host's worker of the shared queue; with no other host up it would
/// wait 30 s, so the start waits this long at most, once, for all of its missions.
const RETIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// At a fleet host's start, before recovery: every mission of this host's store that the
/// fleet handed to another host while this one was gone is archived here, with the reason
/// (its worktree is kept when it holds changes), so that recovery does not resume a run
/// that now goes on elsewhere. The missions are asked about together; a fleet that does
/// not answer within 5 s (no other host up) leaves them as they are, and the log says so.
/// Answers the ids it archived.
pub async fn retire_handed_away(engine: &Arc<Engine>) -> Vec<String> {
    let Some(fleet) = engine.fleet.get().cloned() else {
        return Vec::new();
    };
    let summaries = match engine.missions.read(|reader| reader.mission_summaries()) {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(%error, "cannot list this host's missions to ask the fleet where they are");
            return Vec::new();
        }
    };
    let mut asks = tokio::task::JoinSet::new();
    for summary in summaries {
        if summary.status == MissionStatus::Archived.as_str() {
            continue;
        }
        let fleet = fleet.clone();
        asks.spawn(async move {
            let answer = fleet.get_after_restart(summary.mission_id.clone()).await;
            (summary.mission_id, answer)
        });
    }
    let deadline = tokio::time::Instant::now() + RETIRE_TIMEOUT;
    let asked = asks.len();
    let mut retired = Vec::new();
    loop {
        let (mission_id, answer) = match tokio::time::timeout_at(deadline, asks.join_next()).await {
            Ok(Some(Ok(joined))) => joined,
            Ok(Some(Err(error))) => {
                tracing::warn!(%error, "a question to the fleet failed");
                continue;
            }
            Ok(None) => {
                if asked > 0 {
                    tracing::info!(
                        asked,
                        "the fleet said where this host's missions are before recovery"
                    );
                }
                break;
            }
            Err(_) => {
                tracing::warn!(
                    unanswered = asks.len(),
                    "the fleet did not say where this host's missions are within 5 s (is another host up?); they stay as this host holds them"
                );
                asks.abort_all();
                break;
            }
        };
        let remote = match answer {
            Ok(remote) => remote,
            Err(error) => {
                tracing::warn!(%mission_id, %error, "cannot ask the fleet where the mission is; it stays as this host holds it");
                continue;
            }
        };
        let Some(remote) = remote.filter(|remote| remote.host != fleet.host()) else {
            continue;
        };
        let reason = format!(
            "{HANDED_AWAY}{} while this host ({}) was gone; it goes on there",
            remote.host,
            fleet.host()
        );
        let params = nagi_schema::mission::MissionAbandonParams {
            mission_id: mission_id.clone(),
            reason,
        };
        match crate::runs::abandon::abandon(engine, params).await {
            Ok(_) => {
                tracing::info!(%mission_id, host = %remote.host, "archived a mission the fleet handed to another host");
                retired.push(mission_id);
            }
            Err(error) => {
                tracing::warn!(%mission_id, %error, "cannot archive a mission the fleet handed to another host")
            }
        }
    }
    retired
}
