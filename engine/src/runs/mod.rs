//! Provider runs: claims, launch, the transcript pane, and the supervisor that turns
//! provider reports into durable mission transitions.

pub mod checks;
pub mod handoff;
pub mod recipe;
pub mod recovery;
pub mod respond;
pub mod start;
pub mod supervisor;

/// Releases a run's claim: the store row, then the OS lock.
pub async fn release_claim(
    engine: &std::sync::Arc<crate::engine::Engine>,
    mission_id: &str,
    run_id: &str,
    claim_key: &str,
) -> Result<(), crate::errors::EngineError> {
    let (mission, run, key) = (
        mission_id.to_string(),
        run_id.to_string(),
        claim_key.to_string(),
    );
    let released = engine
        .missions
        .transact(move |writer| Ok(writer.release_claim(&key, &mission, &run)?))
        .await;
    engine.claim_locks.release(claim_key);
    released.map(|_| ())
}

