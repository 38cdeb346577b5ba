//! Every SQL statement of nagi. `Reader` works on any connection (a reader or the writer's
//! open transaction); `Writer` adds the mutations and exists only inside a write job.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::rows::*;

pub struct Reader<'a> {
    pub(crate) connection: &'a Connection,
}

fn mission_summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<MissionSummaryRow> {
    Ok(MissionSummaryRow {
        mission_id: row.get(0)?,
        title: row.get(1)?,
        repository_path: row.get(2)?,
        status: row.get(3)?,
        unresolved_attention_count: row.get::<_, i64>(4)? as u64,
        updated_at_millis: row.get::<_, i64>(5)? as u64,
    })
}

fn event_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        seq: row.get::<_, i64>(0)? as u64,
        event_id: row.get(1)?,
        mission_id: row.get(2)?,
        kind: row.get(3)?,
        payload: row.get(4)?,
        at_millis: row.get::<_, i64>(5)? as u64,
    })
}

fn claim_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ClaimRow> {
    Ok(ClaimRow {
        checkout_key: row.get(0)?,
        checkout_root: row.get(1)?,
        mission_id: row.get(2)?,
        run_id: row.get(3)?,
        request_id: row.get(4)?,
        nonce: row.get(5)?,
        claimed_at_millis: row.get::<_, i64>(6)? as u64,
    })
}

fn consent_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ConsentRow> {
    Ok(ConsentRow {
        consent_id: row.get(0)?,
        mission_id: row.get(1)?,
        subject: row.get(2)?,
        digest: row.get(3)?,
        actor: row.get(4)?,
        decision: row.get(5)?,
        detail: row.get(6)?,
        at_millis: row.get::<_, i64>(7)? as u64,
        outcome: row.get(8)?,
        outcome_detail: row.get(9)?,
    })
}

impl<'a> Reader<'a> {
    pub fn mission_doc(&self, mission_id: &str) -> Result<Option<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT doc FROM missions WHERE mission_id = ?1")?;
        Ok(statement
            .query_row([mission_id], |row| row.get(0))
            .optional()?)
    }

    /// Every mission's summary, ordered by id in byte order.
    pub fn mission_summaries(&self) -> Result<Vec<MissionSummaryRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT mission_id, title, repository_path, status, unresolved_attention_count, updated_at_millis
             FROM missions ORDER BY mission_id",
        )?;
        let rows = statement.query_map([], mission_summary)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn mission_count(&self) -> Result<u64, StoreError> {
        Ok(self
            .connection
            .query_row("SELECT count(*) FROM missions", [], |row| {
                row.get::<_, i64>(0)
            })? as u64)
    }

    /// Documents of missions with a run to reconcile at start.
    pub fn live_run_mission_docs(&self) -> Result<Vec<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT doc FROM missions WHERE live_run = 1 ORDER BY mission_id")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Every mission document, ordered by id.
    pub fn all_mission_docs(&self) -> Result<Vec<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT doc FROM missions ORDER BY mission_id")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The highest committed event sequence (0 for an empty log).
    pub fn last_event_seq(&self) -> Result<u64, StoreError> {
        let seq: Option<i64> =
            self.connection
                .query_row("SELECT max(seq) FROM events", [], |row| row.get(0))?;
        Ok(seq.unwrap_or(0) as u64)
    }

    /// The last committed event, if any.
    pub fn last_event(&self) -> Result<Option<EventRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT seq, event_id, mission_id, kind, payload, at_millis FROM events ORDER BY seq DESC LIMIT 1",
        )?;
        Ok(statement.query_row([], event_row).optional()?)
    }

    /// Events with `seq > after`, oldest first, at most `limit`.
    pub fn events_after(&self, after: u64, limit: u64) -> Result<Vec<EventRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT seq, event_id, mission_id, kind, payload, at_millis FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = statement.query_map(params![after as i64, limit as i64], event_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The events of one mission, oldest first. A scan of the log: it serves rebuild checks
    /// and recovery tools, not the request path, and an index for it would cost every
    /// commit one more page.
    pub fn mission_events(&self, mission_id: &str) -> Result<Vec<EventRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT seq, event_id, mission_id, kind, payload, at_millis FROM events WHERE mission_id = ?1 ORDER BY seq",
        )?;
        let rows = statement.query_map([mission_id], event_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The events of one kind that happened at or after `since_millis`, oldest first. A
    /// scan of the log, for reports (`mission.usage`), not the request path of a mission.
    pub fn events_of_kind_since(
        &self,
        kind: &str,
        since_millis: u64,
    ) -> Result<Vec<EventRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT seq, event_id, mission_id, kind, payload, at_millis FROM events WHERE kind = ?1 AND at_millis >= ?2 ORDER BY seq",
        )?;
        let rows = statement.query_map(params![kind, since_millis as i64], event_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn attention_mission(&self, attention_id: &str) -> Result<Option<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT mission_id FROM attention WHERE attention_id = ?1")?;
        Ok(statement
            .query_row([attention_id], |row| row.get(0))
            .optional()?)
    }

    /// The mission whose run `run_id` is (a run id names one run in a store).
    pub fn run_mission(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT mission_id FROM runs WHERE run_id = ?1")?;
        Ok(statement.query_row([run_id], |row| row.get(0)).optional()?)
    }

    /// Missions that have attention items, by id.
    pub fn attention_mission_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT DISTINCT mission_id FROM attention ORDER BY mission_id")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn claim(&self, checkout_key: &str) -> Result<Option<ClaimRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT checkout_key, checkout_root, mission_id, run_id, request_id, nonce, claimed_at_millis
             FROM claims WHERE checkout_key = ?1",
        )?;
        Ok(statement.query_row([checkout_key], claim_row).optional()?)
    }

    pub fn claims(&self) -> Result<Vec<ClaimRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT checkout_key, checkout_root, mission_id, run_id, request_id, nonce, claimed_at_millis
             FROM claims ORDER BY checkout_key",
        )?;
        let rows = statement.query_map([], claim_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn consents_for_mission(&self, mission_id: &str) -> Result<Vec<ConsentRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT consent_id, mission_id, subject, digest, actor, decision, detail, at_millis,
                    outcome, outcome_detail
             FROM consents WHERE mission_id = ?1 ORDER BY at_millis, consent_id",
        )?;
        let rows = statement.query_map([mission_id], consent_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn consent(&self, consent_id: &str) -> Result<Option<ConsentRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT consent_id, mission_id, subject, digest, actor, decision, detail, at_millis,
                    outcome, outcome_detail
             FROM consents WHERE consent_id = ?1",
        )?;
        Ok(statement.query_row([consent_id], consent_row).optional()?)
    }

    pub fn blob(&self, digest: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT body FROM blobs WHERE digest = ?1")?;
        Ok(statement.query_row([digest], |row| row.get(0)).optional()?)
    }

    /// A blob by digest, only when it is of `kind`.
    pub fn blob_of_kind(&self, digest: &str, kind: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT body FROM blobs WHERE digest = ?1 AND kind = ?2")?;
        Ok(statement
            .query_row([digest, kind], |row| row.get(0))
            .optional()?)
    }

    /// Every blob of `kind` kept for a mission, oldest first: `(digest, body)`.
    pub fn mission_blobs(
        &self,
        mission_id: &str,
        kind: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT digest, body FROM blobs WHERE mission_id = ?1 AND kind = ?2 ORDER BY created_at_millis, digest",
        )?;
        let rows = statement.query_map([mission_id, kind], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

pub struct Writer<'a> {
    pub(crate) connection: &'a Connection,
    /// The last error a statement of this job produced, so that the writer can tell
    /// other jobs of the batch why SQLite rolled their transaction back.
    pub(crate) last_error: std::cell::RefCell<Option<StoreError>>,
    /// The sequence of the last event this job appended, for the commit listeners.
    pub(crate) last_event_seq: std::cell::Cell<Option<u64>>,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(connection: &'a Connection) -> Writer<'a> {
        Writer {
            connection,
            last_error: std::cell::RefCell::new(None),
            last_event_seq: std::cell::Cell::new(None),
        }
    }

    fn noted<T>(&self, outcome: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(error) = &outcome {
            *self.last_error.borrow_mut() = Some(error.clone());
        }
        outcome
    }

    /// Reads see this job's own uncommitted writes and those of earlier jobs in the batch.
    pub fn reader(&self) -> Reader<'a> {
        Reader {
            connection: self.connection,
        }
    }

    fn put_mission_sql(&self, row: &MissionRow) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare_cached(
            "INSERT INTO missions (mission_id, title, repository_path, status, unresolved_attention_count,
                                   updated_at_millis, live_run, doc)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(mission_id) DO UPDATE SET
                 title = excluded.title, repository_path = excluded.repository_path, status = excluded.status,
                 unresolved_attention_count = excluded.unresolved_attention_count,
                 updated_at_millis = excluded.updated_at_millis, live_run = excluded.live_run, doc = excluded.doc",
        )?;
        statement.execute(params![
            row.mission_id,
            row.title,
            row.repository_path,
            row.status,
            row.unresolved_attention_count as i64,
            row.updated_at_millis as i64,
            row.live_run as i64,
            row.doc
        ])?;
        Ok(())
    }

    fn append_event_sql(
        &self,
        event_id: &str,
        mission_id: &str,
        kind: &str,
        payload: &str,
        at_millis: u64,
    ) -> Result<u64, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "INSERT INTO events (event_id, mission_id, kind, payload, at_millis) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        statement.execute(params![
            event_id,
            mission_id,
            kind,
            payload,
            at_millis as i64
        ])?;
        Ok(self.connection.last_insert_rowid() as u64)
    }

    fn delete_mission_sql(&self, mission_id: &str) -> Result<(), StoreError> {
        self.connection
            .prepare_cached("DELETE FROM missions WHERE mission_id = ?1")?
            .execute([mission_id])?;
        self.connection
            .prepare_cached("DELETE FROM attention WHERE mission_id = ?1")?
            .execute([mission_id])?;
        self.connection
            .prepare_cached("DELETE FROM runs WHERE mission_id = ?1")?
            .execute([mission_id])?;
        Ok(())
    }

    fn put_run_index_sql(&self, run_id: &str, mission_id: &str) -> Result<(), StoreError> {
        self.connection
            .prepare_cached("INSERT OR IGNORE INTO runs (run_id, mission_id) VALUES (?1, ?2)")?
            .execute(params![run_id, mission_id])?;
        Ok(())
    }

    fn put_attention_index_sql(
        &self,
        attention_id: &str,
        mission_id: &str,
    ) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare_cached(
            "INSERT OR REPLACE INTO attention (attention_id, mission_id) VALUES (?1, ?2)",
        )?;
        statement.execute(params![attention_id, mission_id])?;
        Ok(())
    }

    fn claim_checkout_sql(&self, claim: &ClaimRow) -> Result<ClaimOutcome, StoreError> {
        if let Some(existing) = self.reader().claim(&claim.checkout_key)? {
            let same_owner = existing.mission_id == claim.mission_id
                && existing.run_id == claim.run_id
                && existing.request_id == claim.request_id;
            return Ok(if same_owner {
                ClaimOutcome::AlreadyHeld(existing)
            } else {
                ClaimOutcome::HeldByOther(existing)
            });
        }
        let mut statement = self.connection.prepare_cached(
            "INSERT INTO claims (checkout_key, checkout_root, mission_id, run_id, request_id, nonce, claimed_at_millis)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        statement.execute(params![
            claim.checkout_key,
            claim.checkout_root,
            claim.mission_id,
            claim.run_id,
            claim.request_id,
            claim.nonce,
            claim.claimed_at_millis as i64
        ])?;
        Ok(ClaimOutcome::Claimed)
    }

    fn release_claim_sql(
        &self,
        checkout_key: &str,
        mission_id: &str,
        run_id: &str,
    ) -> Result<bool, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "DELETE FROM claims WHERE checkout_key = ?1 AND mission_id = ?2 AND run_id = ?3",
        )?;
        Ok(statement.execute(params![checkout_key, mission_id, run_id])? > 0)
    }

    fn release_claims_of_mission_sql(&self, mission_id: &str) -> Result<u64, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("DELETE FROM claims WHERE mission_id = ?1")?;
        Ok(statement.execute([mission_id])? as u64)
    }

    fn insert_consent_sql(&self, consent: &ConsentRow) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare_cached(
            "INSERT INTO consents (consent_id, mission_id, subject, digest, actor, decision, detail, at_millis,
                                   outcome, outcome_detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        statement.execute(params![
            consent.consent_id,
            consent.mission_id,
            consent.subject,
            consent.digest,
            consent.actor,
            consent.decision,
            consent.detail,
            consent.at_millis as i64,
            consent.outcome,
            consent.outcome_detail
        ])?;
        Ok(())
    }

    fn settle_consent_sql(
        &self,
        consent_id: &str,
        outcome: &str,
        detail: &str,
    ) -> Result<bool, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "UPDATE consents SET outcome = ?2, outcome_detail = ?3
             WHERE consent_id = ?1 AND outcome = 'pending'",
        )?;
        Ok(statement.execute(params![consent_id, outcome, detail])? == 1)
    }

    fn put_blob_sql(
        &self,
        digest: &str,
        kind: &str,
        mission_id: Option<&str>,
        body: &[u8],
        at_millis: u64,
    ) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare_cached(
            "INSERT OR IGNORE INTO blobs (digest, kind, mission_id, body, created_at_millis) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        statement.execute(params![digest, kind, mission_id, body, at_millis as i64])?;
        Ok(())
    }

    pub fn put_mission(&self, row: &MissionRow) -> Result<(), StoreError> {
        self.noted(self.put_mission_sql(row))
    }

    /// Appends an event and returns its sequence number. Event ids are not indexed: the
    /// engine derives them from the mission's revision, which the single writer advances, so
    /// they cannot repeat; an index would cost every commit a page at a random place.
    pub fn append_event(
        &self,
        event_id: &str,
        mission_id: &str,
        kind: &str,
        payload: &str,
        at_millis: u64,
    ) -> Result<u64, StoreError> {
        let seq =
            self.noted(self.append_event_sql(event_id, mission_id, kind, payload, at_millis))?;
        self.last_event_seq.set(Some(seq));
        Ok(seq)
    }

    /// Removes a deleted mission's projection, attention index and run ids; its events stay.
    pub fn delete_mission(&self, mission_id: &str) -> Result<(), StoreError> {
        self.noted(self.delete_mission_sql(mission_id))
    }

    /// Records that `run_id` names a run of `mission_id` (a run started again keeps it).
    pub fn put_run_index(&self, run_id: &str, mission_id: &str) -> Result<(), StoreError> {
        self.noted(self.put_run_index_sql(run_id, mission_id))
    }

    pub fn put_attention_index(
        &self,
        attention_id: &str,
        mission_id: &str,
    ) -> Result<(), StoreError> {
        self.noted(self.put_attention_index_sql(attention_id, mission_id))
    }

    /// Takes the claim on a checkout atomically (the primary key makes it exclusive).
    pub fn claim_checkout(&self, claim: &ClaimRow) -> Result<ClaimOutcome, StoreError> {
        self.noted(self.claim_checkout_sql(claim))
    }

    /// Releases the claim if `mission_id`/`run_id` own it. Returns whether a row was removed.
    pub fn release_claim(
        &self,
        checkout_key: &str,
        mission_id: &str,
        run_id: &str,
    ) -> Result<bool, StoreError> {
        self.noted(self.release_claim_sql(checkout_key, mission_id, run_id))
    }

    pub fn release_claims_of_mission(&self, mission_id: &str) -> Result<u64, StoreError> {
        self.noted(self.release_claims_of_mission_sql(mission_id))
    }

    pub fn insert_consent(&self, consent: &ConsentRow) -> Result<(), StoreError> {
        self.noted(self.insert_consent_sql(consent))
    }

    /// Records what became of a pending consent's action (`performed` or `failed`); false
    /// when the consent is not pending.
    pub fn settle_consent(
        &self,
        consent_id: &str,
        outcome: &str,
        detail: &str,
    ) -> Result<bool, StoreError> {
        self.noted(self.settle_consent_sql(consent_id, outcome, detail))
    }

    /// Stores a content-addressed blob; storing the same digest again is a no-op.
    pub fn put_blob(
        &self,
        digest: &str,
        kind: &str,
        mission_id: Option<&str>,
        body: &[u8],
        at_millis: u64,
    ) -> Result<(), StoreError> {
        self.noted(self.put_blob_sql(digest, kind, mission_id, body, at_millis))
    }
}

// ---------------------------------------------------------------------------------------
// Port leases of project-recipe services (migration 2). Choosing a free port is the
// engine's business (it probes the port by binding it); the store only keeps the leases
// and makes (mission, run, service) and the port each unique.

/// One leased port and the service process that uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortLeaseRow {
    pub lease_id: String,
    pub mission_id: String,
    pub run_id: String,
    pub service_id: String,
    pub port: u16,
    /// The service's process-group leader, once started.
    pub pid: Option<u32>,
    /// Its start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a reused
    /// pid is never taken for the service.
    pub process_start_time: Option<u64>,
    pub leased_at_millis: u64,
}

const PORT_LEASE_COLUMNS: &str =
    "lease_id, mission_id, run_id, service_id, port, pid, process_start_time, leased_at_millis";

fn port_lease_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<PortLeaseRow> {
    Ok(PortLeaseRow {
        lease_id: row.get(0)?,
        mission_id: row.get(1)?,
        run_id: row.get(2)?,
        service_id: row.get(3)?,
        port: row.get::<_, i64>(4)? as u16,
        pid: row.get::<_, Option<i64>>(5)?.map(|pid| pid as u32),
        process_start_time: row.get::<_, Option<i64>>(6)?.map(|ticks| ticks as u64),
        leased_at_millis: row.get::<_, i64>(7)? as u64,
    })
}

impl<'a> Reader<'a> {
    pub fn port_lease(
        &self,
        mission_id: &str,
        run_id: &str,
        service_id: &str,
    ) -> Result<Option<PortLeaseRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(&format!(
            "SELECT {PORT_LEASE_COLUMNS} FROM port_leases WHERE mission_id = ?1 AND run_id = ?2 AND service_id = ?3"
        ))?;
        Ok(statement
            .query_row(params![mission_id, run_id, service_id], port_lease_row)
            .optional()?)
    }

    /// The leases of one run, by service id.
    pub fn port_leases_of_run(
        &self,
        mission_id: &str,
        run_id: &str,
    ) -> Result<Vec<PortLeaseRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(&format!(
            "SELECT {PORT_LEASE_COLUMNS} FROM port_leases WHERE mission_id = ?1 AND run_id = ?2 ORDER BY service_id"
        ))?;
        let rows = statement.query_map(params![mission_id, run_id], port_lease_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Every lease, by port.
    pub fn port_leases(&self) -> Result<Vec<PortLeaseRow>, StoreError> {
        let mut statement = self.connection.prepare_cached(&format!(
            "SELECT {PORT_LEASE_COLUMNS} FROM port_leases ORDER BY port"
        ))?;
        let rows = statement.query_map([], port_lease_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

impl<'a> Writer<'a> {
    fn insert_port_lease_sql(&self, lease: &PortLeaseRow) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare_cached(&format!(
            "INSERT INTO port_leases ({PORT_LEASE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        ))?;
        statement.execute(params![
            lease.lease_id,
            lease.mission_id,
            lease.run_id,
            lease.service_id,
            lease.port as i64,
            lease.pid.map(|pid| pid as i64),
            lease.process_start_time.map(|ticks| ticks as i64),
            lease.leased_at_millis as i64
        ])?;
        Ok(())
    }

    fn set_port_lease_process_sql(
        &self,
        lease_id: &str,
        pid: Option<u32>,
        process_start_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "UPDATE port_leases SET pid = ?2, process_start_time = ?3 WHERE lease_id = ?1",
        )?;
        Ok(statement.execute(params![
            lease_id,
            pid.map(|pid| pid as i64),
            process_start_time.map(|ticks| ticks as i64)
        ])? > 0)
    }

    fn release_port_lease_sql(&self, lease_id: &str) -> Result<bool, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("DELETE FROM port_leases WHERE lease_id = ?1")?;
        Ok(statement.execute([lease_id])? > 0)
    }

    /// Records a new lease. A second lease for the same (mission, run, service) or the same
    /// port is refused by the table's unique constraints (a constraint error).
    pub fn insert_port_lease(&self, lease: &PortLeaseRow) -> Result<(), StoreError> {
        self.noted(self.insert_port_lease_sql(lease))
    }

    /// Records (or clears) the process serving a lease. Returns whether the lease exists.
    pub fn set_port_lease_process(
        &self,
        lease_id: &str,
        pid: Option<u32>,
        process_start_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        self.noted(self.set_port_lease_process_sql(lease_id, pid, process_start_time))
    }

    /// Removes a lease; its port becomes free for others. Returns whether it existed.
    pub fn release_port_lease(&self, lease_id: &str) -> Result<bool, StoreError> {
        self.noted(self.release_port_lease_sql(lease_id))
    }
}
