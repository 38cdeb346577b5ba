//! Provider runs: claims, launch, the transcript pane, and the supervisor that turns
//! provider reports into durable mission transitions.

pub mod abandon;
pub mod checks;
pub mod handoff;
pub mod land;
pub mod launch_run;
pub mod recipe;
pub mod recovery;
pub mod respond;
pub mod settle;
pub mod start;
pub mod steer;
pub mod steps;
pub mod supervisor;
pub mod sync;
pub mod worktree;

/// A claim on a checkout as its holder names it: the store row's mission and run, and the
/// checkout's key, which also names the OS lock.
#[derive(Debug, Clone, Copy)]
pub struct HeldClaim<'a> {
    pub mission_id: &'a str,
    pub run_id: &'a str,
    pub checkout_key: &'a str,
}

/// Releases a run's claim: the store row, then the OS lock.
pub async fn release_claim(
    engine: &std::sync::Arc<crate::engine::Engine>,
    claim: HeldClaim<'_>,
) -> Result<(), crate::errors::EngineError> {
    let (mission, run, key) = (
        claim.mission_id.to_string(),
        claim.run_id.to_string(),
        claim.checkout_key.to_string(),
    );
    let released = engine
        .missions
        .transact(move |writer| Ok(writer.release_claim(&key, &mission, &run)?))
        .await;
    engine.claim_locks.release(claim.checkout_key);
    released.map(|_| ())
}
