//! One client connection: framing, decoding, dispatch, and the replies in request order.
//! A subscription or an `events.wait` keeps the connection for itself until it ends, and
//! a session-protocol line (`type`, no `method`) turns it into an attach connection
//! (`session.rs`).

use std::sync::Arc;
use std::time::Duration;

use nagi_schema::MAX_REQUEST_LINE_BYTES;
use nagi_schema::codes::ErrorCode;
use nagi_schema::envelope::{ErrorResponse, RequestId, SuccessResponse};
use nagi_schema::methods::{EventMatch, EventsSubscribeParams, EventsWaitParams, Subscription};
use nagi_schema::pane_events::PaneEventMatch;
use nagi_schema::results::ResponseResult;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;

use std::os::fd::AsRawFd;

use super::framing::{Frame, LineReader};
use super::line_budget::PartialLineBudget;
use super::live_events::{self, LiveEvents};
use super::reply_poll::{ConnectionPoll, ReplyPolling, Serving};
use super::socket::{self, SocketRead, SocketWrite};
use crate::api::{self, Peer, Reply};
use crate::consent::peer::judge_connection;
use crate::engine::Engine;
use crate::errors::{EngineError, wire_error};
use nagi_os::peer::PeerProcess;

pub(super) type Lines = LineReader<BufReader<SocketRead>>;
pub(super) type Output = BufWriter<SocketWrite>;

async fn write_line(output: &mut Output, line: &str) -> std::io::Result<()> {
    output.write_all(line.as_bytes()).await?;
    output.write_all(b"\n").await
}

pub(super) fn error_line(id: &RequestId, error: &EngineError) -> String {
    let (code, message) = wire_error(error);
    ErrorResponse::new(id, code, message).to_line()
}

/// The success line of any serializable result: a `ResponseResult` of the engine or the
/// pane host's result object.
fn result_line<T: serde::Serialize>(id: &RequestId, result: &T) -> String {
    serde_json::to_string(&SuccessResponse {
        id: id.clone(),
        result,
    })
    .unwrap_or_else(|error| {
        ErrorResponse::new(
            id,
            ErrorCode::SerializationFailed,
            format!("response encoding failed: {error}"),
        )
        .to_line()
    })
}

pub async fn serve_connection(
    engine: Arc<Engine>,
    stream: UnixStream,
    polling: &ReplyPolling,
    budget: &PartialLineBudget,
) {
    let credentials = stream.peer_cred();
    // The consent verdict is taken now, from a pidfd of the connecting process, and never
    // again: a socket passed on to another process keeps the verdict of the one that
    // connected, and a process gone by now is refused.
    let verdict = credentials.as_ref().ok().map(|credentials| {
        let process = PeerProcess::of_socket(stream.as_raw_fd(), credentials.pid());
        judge_connection(&engine, credentials.uid(), process)
    });
    let (read_half, write_half) = match socket::split(stream) {
        Ok(halves) => halves,
        Err(error) => {
            tracing::warn!(%error, "cannot register the connection; closing it");
            return;
        }
    };
    let mut output: Output = BufWriter::with_capacity(64 * 1024, write_half);
    let peer = match (credentials, verdict) {
        (Ok(credentials), Some(consent)) if credentials.uid() == engine.server_uid => Peer {
            uid: credentials.uid(),
            pid: credentials.pid(),
            consent,
        },
        (Ok(credentials), _) => {
            let error = EngineError::PermissionDenied(format!(
                "this nagi server belongs to uid {}; uid {} may not use it",
                engine.server_uid,
                credentials.uid()
            ));
            let _ = write_line(&mut output, &error_line(&RequestId::unknown(), &error)).await;
            let _ = output.flush().await;
            return;
        }
        (Err(error), _) => {
            tracing::warn!(%error, "cannot read peer credentials; closing the connection");
            return;
        }
    };
    let mut lines: Lines = LineReader::with_budget(
        BufReader::with_capacity(64 * 1024, read_half),
        MAX_REQUEST_LINE_BYTES,
        Some(budget.clone()),
    );
    let idle = engine.config.current().idle_timeout;
    let mut poll = ConnectionPoll::default();
    loop {
        let polled = poll.poll(polling, &mut lines);
        let frame = tokio::select! {
            frame = tokio::time::timeout(idle, lines.next_frame()) => frame,
            _ = engine.shutdown.wait() => break,
        };
        let bytes = match frame {
            Err(_) | Ok(Err(_)) | Ok(Ok(Frame::End)) => break,
            Ok(Ok(Frame::TooLong)) => {
                let error = EngineError::RequestTooLarge(MAX_REQUEST_LINE_BYTES);
                let _ = write_line(&mut output, &error_line(&RequestId::unknown(), &error)).await;
                let _ = output.flush().await;
                drain_briefly(&mut lines).await;
                break;
            }
            Ok(Ok(Frame::BudgetSpent)) => {
                let _ = write_line(
                    &mut output,
                    &error_line(&RequestId::unknown(), &budget_spent_error(budget)),
                )
                .await;
                let _ = output.flush().await;
                break;
            }
            Ok(Ok(Frame::Line(bytes))) => bytes,
        };
        poll.request_read(polling, &polled);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let read_at = std::time::Instant::now();
        let serving = polling.serving();
        let keep_open = handle_line(&engine, &bytes, peer, &mut lines, &mut output, serving).await;
        if output.flush().await.is_err() || !keep_open {
            break;
        }
        poll.replied(read_at);
    }
    let _ = output.flush().await;
}

/// The refusal of a line that the shared budget of unfinished lines could not hold.
pub(super) fn budget_spent_error(budget: &PartialLineBudget) -> EngineError {
    EngineError::ServerUnavailable(format!(
        "the server holds too many unfinished request lines ({} MiB across connections); \
         this connection's line was dropped: send complete lines, or try again shortly",
        budget.limit_bytes() / (1024 * 1024)
    ))
}

/// After an over-long line, reads and discards what the peer is still sending for a
/// moment, so that it can finish writing and read the error instead of seeing a reset.
async fn drain_briefly(lines: &mut Lines) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let mut frames = 0;
    while frames < 8 {
        match tokio::time::timeout_at(deadline, lines.next_frame()).await {
            Ok(Ok(Frame::End)) | Ok(Err(_)) | Err(_) => return,
            Ok(Ok(_)) => frames += 1,
        }
    }
}

/// Handles one request line. Returns whether the connection stays open. `serving` marks
/// the request as being served until its answer is decided (a subscription or a wait
/// then goes on unmarked).
async fn handle_line(
    engine: &Arc<Engine>,
    bytes: &[u8],
    peer: Peer,
    lines: &mut Lines,
    output: &mut Output,
    serving: Serving<'_>,
) -> bool {
    let request = match api::decode::decode_request(bytes) {
        Ok(request) => request,
        Err(rejected) => {
            if let Ok(text) = std::str::from_utf8(bytes)
                && super::session::is_session_message(text)
            {
                drop(serving);
                let client_id = super::session::new_client_id(peer);
                super::session::serve_session(
                    engine,
                    &client_id,
                    &peer,
                    bytes.to_vec(),
                    lines,
                    output,
                )
                .await;
                return false;
            }
            return write_line(output, &error_line(&rejected.id, &rejected.error))
                .await
                .is_ok();
        }
    };
    let id = request.id;
    let reply = api::dispatch(engine, request.params, peer).await;
    drop(serving);
    match reply {
        Ok(Reply::Result(result)) => write_line(output, &result_line(&id, &result)).await.is_ok(),
        Ok(Reply::Value(result)) => write_line(output, &result_line(&id, &result)).await.is_ok(),
        Ok(Reply::StopServer) => {
            let _ = write_line(output, &result_line(&id, &ResponseResult::Ok)).await;
            let _ = output.flush().await;
            engine.shutdown.trigger();
            false
        }
        Ok(Reply::Subscribe(params)) => {
            stream_subscription(engine, &id, params, lines, output).await
        }
        Ok(Reply::Wait(params)) => {
            let line = match wait(engine, params).await {
                Ok(result) => result_line(&id, &result),
                Err(error) => error_line(&id, &error),
            };
            write_line(output, &line).await.is_ok()
        }
        Err(error) => write_line(output, &error_line(&id, &error)).await.is_ok(),
    }
}

async fn wait(
    engine: &Arc<Engine>,
    params: EventsWaitParams,
) -> Result<ResponseResult, EngineError> {
    let timeout = Duration::from_millis(params.timeout_ms.unwrap_or(30_000));
    let matcher = match params.match_event {
        EventMatch::Mission(matcher) => matcher,
        EventMatch::Pane(matcher) => return wait_for_pane_event(engine, &matcher, timeout).await,
    };
    let kinds: Vec<String> = matcher.kind.iter().cloned().collect();
    api::events::check_mission_filter(matcher.mission_id.as_deref(), &kinds)?;
    let waited = tokio::select! {
        found = tokio::time::timeout(timeout, api::events::wait_for_mission_event(engine, &matcher)) => found,
        _ = engine.shutdown.wait() => return Err(EngineError::ServerUnavailable("the server is shutting down".into())),
    };
    match waited {
        Ok(Ok(event)) => {
            let envelope = nagi_schema::events::MissionEventEnvelope::new(event);
            Ok(ResponseResult::WaitMatched {
                event: serde_json::to_value(envelope).unwrap_or_default(),
            })
        }
        Ok(Err(error)) => Err(error),
        Err(_) => Err(EngineError::Timeout(format!(
            "no matching event within {} ms",
            timeout.as_millis()
        ))),
    }
}

async fn wait_for_pane_event(
    engine: &Arc<Engine>,
    matcher: &PaneEventMatch,
    timeout: Duration,
) -> Result<ResponseResult, EngineError> {
    let waited = tokio::select! {
        found = tokio::time::timeout(timeout, live_events::wait_for_pane_event(&engine.panes, matcher)) => found,
        _ = engine.shutdown.wait() => return Err(EngineError::ServerUnavailable("the server is shutting down".into())),
    };
    match waited {
        Ok(Ok(event)) => Ok(ResponseResult::WaitMatched {
            event: serde_json::to_value(event).unwrap_or_default(),
        }),
        Ok(Err(error)) => Err(error),
        Err(_) => Err(EngineError::Timeout(format!(
            "no matching event within {} ms",
            timeout.as_millis()
        ))),
    }
}

/// The next line of the live part of a subscription; never resolves when there is none.
async fn next_live_line(live: &mut Option<LiveEvents>) -> Option<String> {
    match live {
        Some(live) => live.next_line().await,
        None => std::future::pending().await,
    }
}

/// Acknowledges a subscription, replays logged mission events after `after_seq`, then
/// streams new mission events and live pane events until the peer goes away or the server
/// stops. An invalid pane subscription is answered with an error and nothing is started;
/// only then does the connection stay open (the return value).
async fn stream_subscription(
    engine: &Arc<Engine>,
    id: &RequestId,
    params: EventsSubscribeParams,
    lines: &mut Lines,
    output: &mut Output,
) -> bool {
    let mut mission_filters = Vec::new();
    let mut pane_filters = Vec::new();
    for subscription in params.subscriptions {
        match subscription {
            Subscription::Mission(mission) => {
                if let Err(error) =
                    api::events::check_mission_filter(mission.mission_id.as_deref(), &mission.kinds)
                {
                    return write_line(output, &error_line(id, &error)).await.is_ok();
                }
                mission_filters.push(mission)
            }
            Subscription::Pane(pane) => {
                if let Some(event) = pane.never_emitted() {
                    let error = EngineError::FeatureUnavailable(format!(
                        "{event} is never emitted by nagi (it has no layouts or agent detection); subscribe to the events it emits"
                    ));
                    return write_line(output, &error_line(id, &error)).await.is_ok();
                }
                pane_filters.push(pane)
            }
        }
    }
    let mut live = None;
    if !pane_filters.is_empty() {
        match LiveEvents::start(&engine.panes, pane_filters) {
            Ok(started) => live = Some(started),
            Err(error) => return write_line(output, &error_line(id, &error)).await.is_ok(),
        }
    }
    let mut head = engine.missions.head();
    let head_seq = *head.borrow_and_update();
    let mut cursor = params.after_seq.unwrap_or(head_seq);
    let ack = ResponseResult::SubscriptionStarted {
        head_seq: Some(head_seq),
    };
    if write_line(output, &result_line(id, &ack)).await.is_err() || output.flush().await.is_err() {
        return false;
    }
    let wants_missions = !mission_filters.is_empty();
    let mut missions_pending = wants_missions;
    loop {
        if missions_pending {
            let (events, next, more) = match api::events::read_after(engine, cursor) {
                Ok(batch) => batch,
                Err(error) => {
                    tracing::warn!(%error, "subscription read failed");
                    return false;
                }
            };
            cursor = next;
            missions_pending = more;
            for event in events {
                if mission_filters.iter().any(|filter| filter.matches(&event))
                    && write_line(output, &api::events::envelope_line(event))
                        .await
                        .is_err()
                {
                    return false;
                }
            }
        }
        if output.flush().await.is_err() {
            return false;
        }
        if missions_pending {
            continue;
        }
        tokio::select! {
            changed = head.changed(), if wants_missions => match changed {
                Ok(()) => missions_pending = true,
                Err(_) => return false,
            },
            line = next_live_line(&mut live) => match line {
                Some(line) => if write_line(output, &line).await.is_err() { return false },
                None => return false,
            },
            frame = lines.next_frame() => match frame {
                // Further lines on a subscription are ignored; the end of input ends it.
                Ok(Frame::Line(_)) | Ok(Frame::TooLong) => {}
                Ok(Frame::End) | Ok(Frame::BudgetSpent) | Err(_) => return false,
            },
            _ = engine.shutdown.wait() => return false,
        }
    }
}
