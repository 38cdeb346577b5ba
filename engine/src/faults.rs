//! A fault-injection seam for crash and race tests: `NAGI_FAULT_PAUSE=<point>:<millis>`
//! makes the server sleep at a named point of a multi-step write, so a test can SIGKILL it
//! exactly there, or ask something of it there, and check what happens. Unset (always,
//! outside tests), it costs one environment lookup. Points: `land_prepared` (the landing is
//! recorded, no branch moved), `land_branch_moved` (the target branch moved, the checkout
//! not yet), `land_applied` (everything moved, the seal not yet committed), `checks_sealed`
//! (a check run's outcome is committed, its worker has not yet let go of the run).

use std::time::Duration;

/// How long to pause at `point`, if `NAGI_FAULT_PAUSE` names it.
fn pause_for(point: &str) -> Option<Duration> {
    let setting = std::env::var("NAGI_FAULT_PAUSE").ok()?;
    let (name, millis) = setting.split_once(':')?;
    let millis = millis.parse::<u64>().ok().filter(|_| name == point)?;
    tracing::warn!("NAGI_FAULT_PAUSE={setting}: pausing for a test");
    Some(Duration::from_millis(millis))
}

/// Sleeps the thread here if `NAGI_FAULT_PAUSE` names `point`.
pub fn pause_at(point: &str) {
    if let Some(pause) = pause_for(point) {
        std::thread::sleep(pause);
    }
}

/// Sleeps the task here if `NAGI_FAULT_PAUSE` names `point`.
pub async fn pause_task_at(point: &str) {
    if let Some(pause) = pause_for(point) {
        tokio::time::sleep(pause).await;
    }
}
