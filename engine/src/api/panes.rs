//! The workspace, tab, pane and session methods. The request decoder has already turned
//! their params into a `nagi_pane::PaneRequest` (unknown fields ignored, as in the
//! reference); this module hands it to the pane host and turns its errors into engine
//! errors, so that `errors::wire_error` stays the one place that assigns wire codes.

use std::sync::Arc;

use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_pane::{self as pane, PaneRequest};

/// Answers a decoded pane-host request; the value is the whole `result` object, `type`
/// included.
pub async fn dispatch(
    engine: &Arc<Engine>,
    request: PaneRequest,
) -> Result<serde_json::Value, EngineError> {
    let waits = matches!(request, PaneRequest::PaneWaitForOutput(_));
    let answer = pane::answer(&engine.panes, request);
    // A wait may last as long as the client asked; the server's shutdown ends it, so that
    // the connection drain does not have to time out.
    tokio::select! {
        outcome = answer => outcome.map_err(EngineError::Pane),
        _ = engine.shutdown.wait(), if waits => {
            Err(EngineError::ServerUnavailable("the server is shutting down".into()))
        }
    }
}
