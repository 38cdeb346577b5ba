//! The durable port allocator of recipe services (contract §11).
//!
//! A lease is a row of the store's `port_leases` table keyed by (mission, run, service),
//! with the port unique across the session. Leasing runs inside one store write job, so two
//! launches can never be handed the same port, and asking again for the same key returns
//! the same lease (a retried or recovered launch keeps its port). A port is only leased
//! when nobody else uses it: the allocator binds `127.0.0.1:<port>` and lets go at once.

use std::collections::BTreeSet;

use nagi_store::access::PortLeaseRow;
use nagi_store::{StoreError, Writer};

use super::RunTarget;
use crate::engine::Engine;
use crate::errors::RecipeExecError;
use nagi_mission::clock::now_millis;

/// Ports the allocator may hand out (inclusive); default 41000–49000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub first: u16,
    pub last: u16,
}

impl Default for PortRange {
    fn default() -> PortRange {
        PortRange {
            first: 41000,
            last: 49000,
        }
    }
}

/// Whether nothing listens on (or holds) `127.0.0.1:<port>` right now.
pub fn port_is_free(port: u16) -> bool {
    std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).is_ok()
}

/// Runs a store write job and waits for its commit.
pub(super) async fn store_job<T, F>(engine: &Engine, job: F) -> Result<T, RecipeExecError>
where
    T: Send + 'static,
    F: FnOnce(&Writer<'_>) -> Result<T, RecipeExecError> + Send + 'static,
{
    let (sender, receiver) = tokio::sync::oneshot::channel();
    engine.missions.store().submit(job, move |outcome| {
        let _ = sender.send(outcome);
    });
    match receiver.await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(store_error)) => Err(store_error.into()),
        Err(_) => Err(StoreError::closed().into()),
    }
}

fn new_lease_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// The lease of (mission, run, service): the existing one, or a new one on `preferred` if
/// that port is free, else on a free port of `range`. The search starts at a random port
/// of the range and wraps around: leases are per session, so two nagi sessions (or two
/// servers of a test suite) starting services at the same moment would otherwise both
/// probe the lowest port, find it free, and collide on it.
pub async fn lease_port(
    engine: &Engine,
    target: &RunTarget,
    service_id: &str,
    range: PortRange,
    preferred: Option<u16>,
) -> Result<PortLeaseRow, RecipeExecError> {
    let (mission_id, run_id, service_id) = (
        target.mission_id.clone(),
        target.run_id.clone(),
        service_id.to_owned(),
    );
    store_job(engine, move |writer| {
        let reader = writer.reader();
        if let Some(existing) = reader.port_lease(&mission_id, &run_id, &service_id)? {
            return Ok(existing);
        }
        let leased: BTreeSet<u16> = reader
            .port_leases()?
            .iter()
            .map(|lease| lease.port)
            .collect();
        let span = u32::from(range.last.saturating_sub(range.first)) + 1;
        let start = rand::random::<u32>() % span;
        let in_range = (0..span).map(|step| range.first + ((start + step) % span) as u16);
        let candidates = preferred.into_iter().chain(in_range);
        let Some(port) = candidates
            .filter(|port| !leased.contains(port))
            .find(|port| port_is_free(*port))
        else {
            return Err(RecipeExecError::PortsExhausted {
                service_id,
                first: range.first,
                last: range.last,
            });
        };
        let lease = PortLeaseRow {
            lease_id: new_lease_id(),
            mission_id: mission_id.to_string(),
            run_id: run_id.to_string(),
            service_id,
            port,
            pid: None,
            process_start_time: None,
            leased_at_millis: now_millis(),
        };
        writer.insert_port_lease(&lease)?;
        Ok(lease)
    })
    .await
}

/// Records the process that serves a lease (durable before the service counts as healthy).
pub async fn record_service_process(
    engine: &Engine,
    lease_id: &str,
    pid: Option<u32>,
    start_time: Option<u64>,
) -> Result<(), RecipeExecError> {
    let lease_id = lease_id.to_owned();
    store_job(engine, move |writer| {
        Ok(writer
            .set_port_lease_process(&lease_id, pid, start_time)
            .map(|_| ())?)
    })
    .await
}

/// Releases a lease; releasing one that is already gone is not an error.
pub async fn release_port_lease(engine: &Engine, lease_id: &str) -> Result<(), RecipeExecError> {
    let lease_id = lease_id.to_owned();
    store_job(engine, move |writer| {
        Ok(writer.release_port_lease(&lease_id).map(|_| ())?)
    })
    .await
}

/// The leases of one run, by service id.
pub fn leases_of_run(
    engine: &Engine,
    mission_id: &str,
    run_id: &str,
) -> Result<Vec<PortLeaseRow>, RecipeExecError> {
    Ok(engine
        .missions
        .store()
        .read(|reader| reader.port_leases_of_run(mission_id, run_id))?)
}
