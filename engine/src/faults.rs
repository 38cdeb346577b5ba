//! A fault-injection seam for crash tests: `NAGI_FAULT_PAUSE=<point>:<millis>` makes the
//! server sleep at a named point of a multi-step write, so a test can SIGKILL it exactly
//! there and check what recovery does. Unset (always, outside tests), it costs one
//! environment lookup. Points: `land_prepared` (the landing is recorded, no branch moved),
//! `land_branch_moved` (the target branch moved, the checkout not yet), `land_applied`
//! (everything moved, the seal not yet committed).

/// Sleeps here if `NAGI_FAULT_PAUSE` names `point`.
pub fn pause_at(point: &str) {
    let Ok(setting) = std::env::var("NAGI_FAULT_PAUSE") else {
        return;
    };
    let Some((name, millis)) = setting.split_once(':') else {
        return;
    };
    if name == point
        && let Ok(millis) = millis.parse::<u64>()
    {
        tracing::warn!("NAGI_FAULT_PAUSE={setting}: pausing for a crash test");
        std::thread::sleep(std::time::Duration::from_millis(millis));
    }
}
