//! The workspace, tab, pane and session methods. The pane host decodes their params
//! (unknown fields ignored, as in the reference) and answers them (`pane::dispatch`); this
//! module hands them over and turns its errors into engine errors, so that
//! `errors::wire_error` stays the one place that assigns wire codes.
//!
//! Methods of the protocol that nagi does not offer (layouts, splits, zoom, graphics,
//! plugins) are in the pane method table too, and answer `feature_unavailable` naming the
//! method.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::pane;

/// Whether the pane host answers `method` (offered or not).
pub fn is_pane_method(method: &str) -> bool {
    pane::find_pane_method(method).is_some()
}

/// Answers a pane-host method; the value is the whole `result` object, `type` included.
pub async fn dispatch(
    engine: &Arc<Engine>,
    method: &str,
    params: &RawValue,
) -> Result<serde_json::Value, EngineError> {
    let params: serde_json::Value = serde_json::from_str(params.get())
        .map_err(|error| EngineError::InvalidRequest(error.to_string()))?;
    let answer = pane::dispatch(&engine.panes, method, params);
    // A wait may last as long as the client asked; the server's shutdown ends it, so that
    // the connection drain does not have to time out.
    let outcome = tokio::select! {
        outcome = answer => outcome,
        _ = engine.shutdown.wait(), if method == "pane.wait_for_output" => {
            return Err(EngineError::ServerUnavailable("the server is shutting down".into()));
        }
    };
    match outcome {
        Some(result) => result.map_err(EngineError::Pane),
        None => Err(EngineError::InvalidRequest(format!(
            "unknown method {method:?}"
        ))),
    }
}
