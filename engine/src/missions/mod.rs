//! The mission service: runs state-machine decisions inside store write jobs, so each
//! mutation and its events commit together, and answers reads from the store.

pub mod repository;

use std::sync::Arc;

use nagi_store::{MissionRow, Reader, Store, Writer};
use tokio::sync::{oneshot, watch};

use crate::errors::EngineError;
use nagi_mission::apply::fold;
use nagi_mission::{Mission, MissionError, MissionEvent, StoredEvent};

/// What a committed mutation produced.
#[derive(Debug)]
pub struct Committed<R> {
    pub mission: Option<Mission>,
    pub outcome: R,
    /// The appended events with their sequence numbers.
    pub events: Vec<(u64, StoredEvent)>,
}

pub struct Missions {
    store: Arc<Store>,
    head: watch::Sender<u64>,
    /// Writes submitted through [`Missions::transact`] and not yet answered.
    writes_in_flight: std::sync::atomic::AtomicUsize,
}

/// Counts a write as in flight while it lives.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The stored mission `mission_id`, if there is one.
pub fn load(reader: &Reader<'_>, mission_id: &str) -> Result<Option<Mission>, EngineError> {
    parse_doc(reader.mission_doc(mission_id)?)
}

fn parse_doc(doc: Option<String>) -> Result<Option<Mission>, EngineError> {
    match doc {
        None => Ok(None),
        Some(doc) => Ok(Some(Mission::from_document(&doc)?)),
    }
}

/// The stored mission `mission_id`; `mission_not_found` when there is none.
pub fn load_existing(reader: &Reader<'_>, mission_id: &str) -> Result<Mission, EngineError> {
    load(reader, mission_id)?.ok_or_else(|| MissionError::no_mission(mission_id).into())
}

/// The mission as written, and its appended events with their sequence numbers.
pub type Written = (Option<Mission>, Vec<(u64, StoredEvent)>);

/// A decision made outside the writer: the stored document it was made on, the rows it
/// prepared, and its outcome.
struct EarlyDecision<R> {
    snapshot: Option<String>,
    prepared: PreparedEvents,
    outcome: R,
}

/// Runs `decide` on `current` and writes what it decided, in the caller's store job.
fn decide_and_persist<R>(
    writer: &Writer<'_>,
    current: Option<Mission>,
    decide: impl FnOnce(Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError>,
) -> Result<Committed<R>, EngineError> {
    let (events, outcome) = decide(current.as_ref())?;
    let (mission, events) = persist_events(writer, current, events)?;
    Ok(Committed {
        mission,
        outcome,
        events,
    })
}

/// Events folded onto a mission and serialized, ready to be written: everything of a
/// mutation but the store writes, so it can be made outside the writer.
struct PreparedEvents {
    mission: Option<Mission>,
    records: Vec<PreparedRecord>,
    row: Option<MissionRow>,
    /// The mission these events deleted (its projection row goes).
    deleted: Option<String>,
}

struct PreparedRecord {
    mission_id: String,
    event_id: String,
    payload: String,
    record: StoredEvent,
}

/// Folds `events` onto `mission` and serializes the records and the new projection.
fn prepare_events(
    mut mission: Option<Mission>,
    events: Vec<MissionEvent>,
) -> Result<PreparedEvents, EngineError> {
    let mut records = Vec::with_capacity(events.len());
    let mut deleted = None;
    for event in events {
        // Only a creation starts a mission; any other event needs one to fold onto. A
        // decision that got this wrong is refused here rather than folded.
        if mission.is_none() && !matches!(event, MissionEvent::MissionCreated { .. }) {
            return Err(MissionError::Runtime(format!(
                "a {} event was decided for a mission that does not exist",
                event.kind()
            ))
            .into());
        }
        let before = mission.take();
        let (mission_id, revision, status_after) = match &before {
            Some(previous) => (
                previous.mission_id.to_string(),
                previous.revision + 1,
                previous.status,
            ),
            None => (String::new(), 1, nagi_schema::mission::MissionStatus::Draft),
        };
        let next = fold(before, &event);
        let (mission_id, revision, status_after) = match &next {
            Some(next) => (next.mission_id.to_string(), next.revision, next.status),
            None => {
                deleted = Some(mission_id.clone());
                (mission_id, revision, status_after)
            }
        };
        let record = StoredEvent {
            status_after,
            event,
        };
        let payload = serde_json::to_string(&record)
            .map_err(|error| MissionError::Runtime(error.to_string()))?;
        records.push(PreparedRecord {
            event_id: format!("{mission_id}#{revision}"),
            mission_id,
            payload,
            record,
        });
        mission = next;
    }
    let row = match &mission {
        Some(mission) if !records.is_empty() => Some(MissionRow {
            mission_id: mission.mission_id.to_string(),
            title: mission.title.clone(),
            repository_path: mission.repository_path.clone(),
            status: mission.status.as_str().to_string(),
            unresolved_attention_count: mission.unresolved_attention_count() as u64,
            updated_at_millis: mission.updated_at_millis,
            live_run: mission.has_live_run(),
            doc: serde_json::to_string(mission)
                .map_err(|error| MissionError::Runtime(error.to_string()))?,
        }),
        _ => None,
    };
    Ok(PreparedEvents {
        deleted: deleted.filter(|_| mission.is_none()),
        mission,
        records,
        row,
    })
}

/// Writes prepared events and the projection in the caller's store job.
fn write_prepared(writer: &Writer<'_>, prepared: PreparedEvents) -> Result<Written, EngineError> {
    let mut stored = Vec::with_capacity(prepared.records.len());
    for PreparedRecord {
        mission_id,
        event_id,
        payload,
        record,
    } in prepared.records
    {
        let seq = writer.append_event(
            &event_id,
            &mission_id,
            record.event.kind(),
            &payload,
            record.event.at_millis(),
        )?;
        match &record.event {
            MissionEvent::AttentionOpened { attention, .. } => {
                writer.put_attention_index(&attention.attention_id, &mission_id)?;
            }
            MissionEvent::RunStarted { run, .. } => {
                writer.put_run_index(run.run_id.as_str(), &mission_id)?;
            }
            _ => {}
        }
        stored.push((seq, record));
    }
    if let Some(row) = &prepared.row {
        writer.put_mission(row)?;
    } else if let Some(mission_id) = &prepared.deleted {
        writer.delete_mission(mission_id)?;
    }
    Ok((prepared.mission, stored))
}

/// Folds `events` onto `mission` and writes them with the new projection, in the
/// caller's store job. Private: every write of events goes through a decision of
/// `mutate`, `mutate_with` or `mutate_concurrently`.
fn persist_events(
    writer: &Writer<'_>,
    mission: Option<Mission>,
    events: Vec<MissionEvent>,
) -> Result<Written, EngineError> {
    write_prepared(writer, prepare_events(mission, events)?)
}

impl Missions {
    pub fn new(store: Arc<Store>) -> Result<Arc<Missions>, EngineError> {
        let last = store.read(|reader| reader.last_event_seq())?;
        let (head, _) = watch::channel(last);
        let missions = Arc::new(Missions {
            store: store.clone(),
            head,
            writes_in_flight: Default::default(),
        });
        let notifier = missions.head.clone();
        store.add_commit_listener(Arc::new(move |seq| {
            notifier.send_if_modified(|current| {
                if seq > *current {
                    *current = seq;
                    true
                } else {
                    false
                }
            });
        }));
        Ok(missions)
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The last committed event sequence; changes after every commit with events.
    pub fn head(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }

    /// Runs an arbitrary store job and waits for its commit.
    pub async fn transact<T, F>(&self, job: F) -> Result<T, EngineError>
    where
        T: Send + 'static,
        F: FnOnce(&Writer<'_>) -> Result<T, EngineError> + Send + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        let reply = move |outcome| {
            let _ = sender.send(outcome);
        };
        // A lone write commits on this thread, without leaving the task: the hand-offs to
        // the writer thread and back are a large share of a lone commit, and handing this
        // worker's scheduler to another thread for the duration (`block_in_place`) costs
        // more still. Only one caller at a time finds the writer idle, so at most one
        // worker is held by a commit while the others go on serving; when other writes
        // are in flight, the writer thread group-commits them all instead. On a
        // current-thread runtime the only thread is never held: the job is queued.
        let others = self
            .writes_in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _in_flight = InFlight(&self.writes_in_flight);
        let multi_threaded = tokio::runtime::Handle::try_current().is_ok_and(|handle| {
            handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if others == 0 && multi_threaded && self.store.writer_is_idle() {
            self.store.run_or_submit(job, reply);
        } else {
            self.store.submit(job, reply);
        }
        match receiver.await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(store_error)) => Err(store_error.into()),
            Err(_) => Err(EngineError::ServerUnavailable(
                "the store stopped before answering".into(),
            )),
        }
    }

    /// Decides on the current state of one mission and commits the resulting events with
    /// the new projection in one transaction. The reply comes after the COMMIT.
    pub async fn mutate<R, F>(
        &self,
        mission_id: &str,
        decide: F,
    ) -> Result<Committed<R>, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError> + Send + 'static,
    {
        let mission_id = mission_id.to_string();
        self.transact(move |writer| {
            decide_and_persist(writer, load(&writer.reader(), &mission_id)?, decide)
        })
        .await
    }

    /// As [`Missions::mutate`], for a decision whose transaction writes rows of its own too
    /// (a claim, a consent record) before its events: `decide` gets the writer for those,
    /// and its events commit with them, or nothing does.
    pub async fn mutate_writing<R, F>(
        &self,
        mission_id: &str,
        decide: F,
    ) -> Result<Committed<R>, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&Writer<'_>, Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError>
            + Send
            + 'static,
    {
        let mission_id = mission_id.to_string();
        self.transact(move |writer| {
            let current = load(&writer.reader(), &mission_id)?;
            decide_and_persist(writer, current, |mission| decide(writer, mission))
        })
        .await
    }

    /// As [`Missions::mutate`], for a decision that may be made more than once. When the
    /// write will wait in the writer's queue anyway (other writes are in flight), the
    /// decision is made here, on the last committed state, and its records and projection
    /// are serialized here too, in parallel with the writer's commit of the writes ahead;
    /// inside the writer only the stored document is compared with the one decided on,
    /// and on a match the prepared rows are written. If the mission changed in between, or
    /// the early decision failed, `decide` runs again inside the writer on the current
    /// state, exactly as `mutate` would. Under a steady load of concurrent writes this
    /// takes the decision and the JSON work (half of a create's time in the writer) off
    /// the one thread every write passes through.
    pub async fn mutate_concurrently<R, F>(
        &self,
        mission_id: &str,
        decide: F,
    ) -> Result<Committed<R>, EngineError>
    where
        R: Send + 'static,
        F: Fn(Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError> + Send + 'static,
    {
        let busy = self
            .writes_in_flight
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0;
        let early = if busy {
            self.decide_on_snapshot(mission_id, &decide)
        } else {
            None
        };
        let mission_id = mission_id.to_string();
        self.transact(move |writer| {
            let stored = writer.reader().mission_doc(&mission_id)?;
            if let Some(early) = early
                && early.snapshot == stored
            {
                let (mission, events) = write_prepared(writer, early.prepared)?;
                return Ok(Committed {
                    mission,
                    outcome: early.outcome,
                    events,
                });
            }
            decide_and_persist(writer, parse_doc(stored)?, decide)
        })
        .await
    }

    /// The early decision of [`Missions::mutate_concurrently`], or `None` when it cannot
    /// be made here.
    fn decide_on_snapshot<R, F>(&self, mission_id: &str, decide: &F) -> Option<EarlyDecision<R>>
    where
        F: Fn(Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError>,
    {
        let snapshot = self
            .store
            .read(|reader| reader.mission_doc(mission_id))
            .ok()?;
        let current = parse_doc(snapshot.clone()).ok()?;
        let (events, outcome) = decide(current.as_ref()).ok()?;
        let prepared = prepare_events(current, events).ok()?;
        Some(EarlyDecision {
            snapshot,
            prepared,
            outcome,
        })
    }

    /// As [`Missions::mutate`], and then `also` runs in the same transaction with the
    /// mission as the events left it, for store rows that must change together with them.
    pub async fn mutate_with<R, F, G>(
        &self,
        mission_id: &str,
        decide: F,
        also: G,
    ) -> Result<Committed<R>, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(Option<&Mission>) -> Result<(Vec<MissionEvent>, R), EngineError> + Send + 'static,
        G: FnOnce(&Writer<'_>, Option<&Mission>) -> Result<(), EngineError> + Send + 'static,
    {
        let mission_id = mission_id.to_string();
        self.transact(move |writer| {
            let committed =
                decide_and_persist(writer, load(&writer.reader(), &mission_id)?, decide)?;
            also(writer, committed.mission.as_ref())?;
            Ok(committed)
        })
        .await
    }

    pub fn get(&self, mission_id: &str) -> Result<Option<Mission>, EngineError> {
        self.store
            .read(|reader| reader.mission_doc(mission_id))
            .map_err(EngineError::from)
            .and_then(parse_doc)
    }

    /// A mission named by a reading method: an id that breaks the ID rule is
    /// `invalid_mission`, before the store is asked.
    pub fn get_checked(&self, mission_id: &str) -> Result<Mission, EngineError> {
        let mission_id = nagi_schema::ids::MissionId::parse(mission_id).map_err(|fault| {
            MissionError::InvalidMission(fault.describe("mission_id", mission_id))
        })?;
        self.get_existing(&mission_id)
    }

    /// The stored mission `mission_id`; `mission_not_found` when there is none.
    pub fn get_existing(&self, mission_id: &str) -> Result<Mission, EngineError> {
        self.get(mission_id)?
            .ok_or_else(|| MissionError::no_mission(mission_id).into())
    }

    /// The mission of this host's attention item `attention_id`; `attention_not_found`
    /// when there is none, or when `named_mission_id` names another mission (attention ids
    /// are facts of the host that raised the item, and in a fleet another host's item may
    /// share this one's id).
    pub fn attention_item_mission(
        &self,
        attention_id: &str,
        named_mission_id: Option<&str>,
    ) -> Result<String, EngineError> {
        let mission_id = self
            .read(|reader| reader.attention_mission(attention_id))?
            .ok_or_else(|| {
                MissionError::AttentionNotFound(format!("no attention item {attention_id:?}"))
            })?;
        match named_mission_id {
            Some(named) if named != mission_id => Err(MissionError::AttentionNotFound(format!(
                "mission {named} has no attention item {attention_id:?} on this host"
            ))
            .into()),
            _ => Ok(mission_id),
        }
    }

    pub fn read<T>(
        &self,
        read: impl FnOnce(&Reader<'_>) -> Result<T, nagi_store::StoreError>,
    ) -> Result<T, EngineError> {
        Ok(self.store.read(read)?)
    }

    /// Every mission with a run to reconcile, for recovery.
    pub fn missions_with_live_runs(&self) -> Result<Vec<Mission>, EngineError> {
        let docs = self.store.read(|reader| reader.live_run_mission_docs())?;
        docs.iter()
            .map(|doc| Ok(Mission::from_document(doc)?))
            .collect()
    }
}
