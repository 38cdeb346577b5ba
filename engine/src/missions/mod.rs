//! The mission service: runs state-machine decisions inside store write jobs, so each
//! mutation and its events commit together, and answers reads from the store.

pub mod repository;

use std::sync::Arc;

use nagi_store::{MissionRow, Reader, Store, Writer};
use tokio::sync::{oneshot, watch};

use crate::errors::EngineError;
use crate::mission::apply::apply;
use crate::mission::{Mission, MissionError, MissionEvent, StoredEvent};

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

fn load(reader: &Reader<'_>, mission_id: &str) -> Result<Option<Mission>, EngineError> {
    match reader.mission_doc(mission_id)? {
        None => Ok(None),
        Some(doc) => serde_json::from_str(&doc).map(Some).map_err(|error| {
            MissionError::Runtime(format!(
                "the stored mission {mission_id} cannot be read: {error}"
            ))
            .into()
        }),
    }
}

/// Folds `events` onto `mission` and writes them with the new projection, in the
/// caller's store job.
pub fn persist_events(
    writer: &Writer<'_>,
    mut mission: Option<Mission>,
    events: Vec<MissionEvent>,
) -> Result<(Option<Mission>, Vec<(u64, StoredEvent)>), EngineError> {
    let mut stored = Vec::with_capacity(events.len());
    for event in events {
        let next = apply(mission.take(), &event);
        let event_id = format!("{}#{}", next.mission_id, next.revision);
        let record = StoredEvent {
            status_after: next.status,
            event,
        };
        let payload = serde_json::to_string(&record)
            .map_err(|error| MissionError::Runtime(error.to_string()))?;
        let seq = writer.append_event(
            &event_id,
            &next.mission_id,
            record.event.kind(),
            &payload,
            record.event.at_millis(),
        )?;
        if let MissionEvent::AttentionOpened { attention, .. } = &record.event {
            writer.put_attention_index(&attention.attention_id, &next.mission_id)?;
        }
        stored.push((seq, record));
        mission = Some(next);
    }
    if let Some(mission) = &mission
        && !stored.is_empty()
    {
        let doc = serde_json::to_string(mission)
            .map_err(|error| MissionError::Runtime(error.to_string()))?;
        writer.put_mission(&MissionRow {
            mission_id: mission.mission_id.clone(),
            title: mission.title.clone(),
            repository_path: mission.repository_path.clone(),
            status: mission.status.as_str().to_string(),
            unresolved_attention_count: mission.unresolved_attention_count() as u64,
            updated_at_millis: mission.updated_at_millis,
            live_run: mission.has_live_run(),
            doc,
        })?;
    }
    Ok((mission, stored))
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
        // A lone write commits on this thread: the hand-off to the writer thread and back
        // costs ~100 µs here, 40% of a commit. When other writes are in flight, the writer
        // thread group-commits them all instead. `block_in_place` lets the runtime move
        // this worker's other tasks elsewhere meanwhile; it exists only on the
        // multi-threaded runtime the server uses.
        let others = self
            .writes_in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _in_flight = InFlight(&self.writes_in_flight);
        let multi_threaded = tokio::runtime::Handle::try_current().is_ok_and(|handle| {
            handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if others == 0 && multi_threaded && self.store.writer_is_idle() {
            tokio::task::block_in_place(|| self.store.run_or_submit(job, reply));
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
            let current = load(&writer.reader(), &mission_id)?;
            let (events, outcome) = decide(current.as_ref())?;
            let (mission, events) = persist_events(writer, current, events)?;
            Ok(Committed {
                mission,
                outcome,
                events,
            })
        })
        .await
    }

    pub fn get(&self, mission_id: &str) -> Result<Option<Mission>, EngineError> {
        self.store
            .read(|reader| Ok(reader.mission_doc(mission_id)?))
            .map_err(EngineError::from)
            .and_then(|doc| match doc {
                None => Ok(None),
                Some(doc) => serde_json::from_str(&doc).map(Some).map_err(|error| {
                    MissionError::Runtime(format!(
                        "the stored mission {mission_id} cannot be read: {error}"
                    ))
                    .into()
                }),
            })
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
            .map(|doc| {
                serde_json::from_str(doc)
                    .map_err(|error| MissionError::Runtime(error.to_string()).into())
            })
            .collect()
    }
}
