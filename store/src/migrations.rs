//! Numbered, append-only migrations applied at open. `PRAGMA user_version` records how
//! many have been applied. A database from a newer nagi is refused, never rewritten.

use rusqlite::Connection;

use crate::error::{StoreError, StoreErrorKind};

/// Migration `n` (1-based) is `MIGRATIONS[n - 1]`. Never edit an entry; append a new one.
pub const MIGRATIONS: &[&str] = &[
    // 1: missions, the event log, indexes for attention and live runs, claims, consents,
    // content-addressed blobs (evidence packs).
    r#"
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT;

    CREATE TABLE missions (
        mission_id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        repository_path TEXT NOT NULL,
        status TEXT NOT NULL,
        unresolved_attention_count INTEGER NOT NULL,
        updated_at_millis INTEGER NOT NULL,
        live_run INTEGER NOT NULL,
        doc TEXT NOT NULL
    ) STRICT;
    CREATE INDEX missions_with_live_runs ON missions(live_run) WHERE live_run = 1;

    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL,
        mission_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_millis INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE attention (
        attention_id TEXT PRIMARY KEY,
        mission_id TEXT NOT NULL
    ) STRICT;

    CREATE TABLE claims (
        checkout_key TEXT PRIMARY KEY,
        checkout_root TEXT NOT NULL,
        mission_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        nonce TEXT NOT NULL,
        claimed_at_millis INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE consents (
        consent_id TEXT PRIMARY KEY,
        mission_id TEXT,
        subject TEXT NOT NULL,
        digest TEXT NOT NULL,
        actor TEXT NOT NULL,
        decision TEXT NOT NULL,
        detail TEXT NOT NULL,
        at_millis INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE blobs (
        digest TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        mission_id TEXT,
        body BLOB NOT NULL,
        created_at_millis INTEGER NOT NULL
    ) STRICT;
    "#,
    // 2: durable port leases of project-recipe services (contract §11): one port per
    // (mission, run, service), unique across the session, with the process that serves it
    // (pid + kernel start time) so a restarted server can adopt it.
    r#"
    CREATE TABLE port_leases (
        lease_id TEXT PRIMARY KEY,
        mission_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        service_id TEXT NOT NULL,
        port INTEGER NOT NULL UNIQUE,
        pid INTEGER,
        process_start_time INTEGER,
        leased_at_millis INTEGER NOT NULL,
        UNIQUE (mission_id, run_id, service_id)
    ) STRICT;
    "#,
    // 3: the event log without AUTOINCREMENT. Events are never deleted, so the largest
    // `seq` plus one (SQLite's plain rowid rule) is already strictly increasing, and every
    // commit no longer rewrites a `sqlite_sequence` page: one WAL frame fewer per write.
    r#"
    CREATE TABLE events_v3 (
        seq INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL,
        mission_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_millis INTEGER NOT NULL
    ) STRICT;
    INSERT INTO events_v3 (seq, event_id, mission_id, kind, payload, at_millis)
        SELECT seq, event_id, mission_id, kind, payload, at_millis FROM events;
    DROP TABLE events;
    ALTER TABLE events_v3 RENAME TO events;
    "#,
    // 4: what became of a consent. A consent is recorded before the action it approves is
    // carried out (the action names it); the outcome says whether that action was then
    // performed or failed. Rows from before this migration say `unrecorded`.
    r#"
    ALTER TABLE consents ADD COLUMN outcome TEXT NOT NULL DEFAULT 'unrecorded';
    ALTER TABLE consents ADD COLUMN outcome_detail TEXT;
    "#,
    // 5: which mission each run id names. Attention ids are derived from the run id and
    // the provider's request id alone (contract §5.10), so a run id used by two missions
    // gives their first requests one attention id; `mission.start` refuses a run id that
    // another mission used. Filled from the stored missions, current runs first, then their
    // histories, each by mission id; where two already share a run id, the first found keeps
    // it.
    r#"
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        mission_id TEXT NOT NULL
    ) STRICT;
    INSERT OR IGNORE INTO runs (run_id, mission_id)
        SELECT json_extract(doc, '$.run.run_id'), mission_id FROM missions
        WHERE json_extract(doc, '$.run.run_id') IS NOT NULL
        ORDER BY mission_id;
    INSERT OR IGNORE INTO runs (run_id, mission_id)
        SELECT json_extract(history.value, '$.run_id'), missions.mission_id
        FROM missions, json_each(missions.doc, '$.run_history') AS history
        WHERE json_extract(history.value, '$.run_id') IS NOT NULL
        ORDER BY missions.mission_id;
    "#,
];

/// Brings the database up to the newest schema, or refuses a newer one.
pub fn apply_migrations(connection: &mut Connection) -> Result<(), StoreError> {
    let applied: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if applied > known {
        return Err(StoreError::new(
            StoreErrorKind::NewerSchema,
            format!(
                "the database has schema version {applied}, but this nagi knows versions up to {known}; \
                 it was written by a newer nagi and is left untouched"
            ),
        ));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(applied as usize) {
        let version = index + 1;
        let transaction = connection.transaction()?;
        transaction.execute_batch(sql)?;
        transaction.pragma_update(None, "user_version", version as i64)?;
        transaction.commit()?;
    }
    Ok(())
}
