//! Expiry of metadata with `ttl_ms`: one task per host sleeps until the earliest deadline,
//! drops what expired and emits `pane_updated` / `workspace_metadata_updated`.

use std::sync::{Arc, Weak};
use std::time::Instant;

use nagi_schema::pane_events::PaneEventData;
use tokio::sync::Notify;

use super::core::lock;
use super::host::PaneHost;

impl PaneHost {
    /// Drops expired metadata now; returns the next deadline.
    pub(crate) fn expire_metadata(&self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut updated_panes = Vec::new();
        let mut updated_workspaces = Vec::new();
        {
            let mut registry = self.registry();
            for (index, workspace) in registry.workspaces.iter_mut().enumerate() {
                if workspace.metadata.tokens.expire(now) {
                    updated_workspaces.push(index);
                }
                next = [next, workspace.metadata.tokens.next_deadline()]
                    .into_iter()
                    .flatten()
                    .min();
            }
            for pane in registry.all_panes() {
                let mut meta = lock(&pane.meta);
                if meta.metadata.expire(now) {
                    updated_panes.push(pane.clone());
                }
                next = [next, meta.metadata.next_deadline()]
                    .into_iter()
                    .flatten()
                    .min();
            }
            let workspaces: Vec<_> = updated_workspaces
                .iter()
                .map(|index| registry.workspace_info(*index))
                .collect();
            drop(registry);
            for workspace in workspaces {
                self.events
                    .emit(PaneEventData::WorkspaceMetadataUpdated { workspace });
            }
        }
        for pane in updated_panes {
            pane.bump_revision();
            pane.emit_updated();
        }
        next
    }
}

/// Runs until the host is dropped (its `Drop` wakes this task one last time).
pub(crate) async fn run_metadata_expiry(host: Weak<PaneHost>, changed: Arc<Notify>) {
    loop {
        let next = match host.upgrade() {
            Some(host) => host.expire_metadata(Instant::now()),
            None => return,
        };
        match next {
            Some(deadline) => {
                tokio::select! {
                    () = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {}
                    () = changed.notified() => {}
                }
            }
            None => changed.notified().await,
        }
    }
}

impl Drop for PaneHost {
    fn drop(&mut self) {
        self.metadata_changed.notify_one();
    }
}
