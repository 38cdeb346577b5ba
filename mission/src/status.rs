//! The status transition table of contract §4.2.

use nagi_schema::mission::MissionStatus::{self, *};

/// Generic status changes: the only ones a plain status change may perform. Sealed and
/// run-bearing transitions have their own events.
pub fn generic_transition_allowed(from: MissionStatus, to: MissionStatus) -> bool {
    matches!(
        (from, to),
        (Draft, Preparing)
            | (Preparing, Active | Blocked | Failed)
            | (Active, ReviewRequired | Blocked | Failed)
            | (Blocked, Preparing | Active | Failed)
            // nagi extension: `mission.verify` of a blocked mission whose run is over
            // (`run::decide_reverify_blocked`).
            | (Blocked, ReviewRequired)
            | (ReviewRequired, Active | Blocked | Failed)
            | (ReadyToClose, Active | Blocked)
    )
}

/// Statuses a handoff (or a new run, nagi extension) may start from.
pub fn run_can_follow(status: MissionStatus) -> bool {
    matches!(status, Blocked | Failed | ReviewRequired | ReadyToClose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_generic_change_reaches_a_sealed_status() {
        for from in MissionStatus::ALL {
            assert!(!generic_transition_allowed(from, ReadyToClose));
            assert!(!generic_transition_allowed(from, Archived));
            assert!(
                !generic_transition_allowed(Archived, from),
                "archived is terminal"
            );
        }
        assert!(!generic_transition_allowed(Draft, Active));
        assert!(
            !generic_transition_allowed(Failed, Preparing),
            "failed is left only by a new run"
        );
    }
}
