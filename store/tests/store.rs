//! The store against real SQLite files in temp dirs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use nagi_store::*;

fn mission(id: &str) -> MissionRow {
    MissionRow {
        mission_id: id.into(),
        title: format!("title {id}"),
        repository_path: "/repo".into(),
        status: "draft".into(),
        unresolved_attention_count: 0,
        updated_at_millis: 1,
        live_run: false,
        doc: format!("{{\"id\":\"{id}\"}}"),
    }
}

/// The last sequence the commit listeners were given (0 before any).
fn last_committed_sequence(store: &Store) -> Arc<AtomicU64> {
    let seen = Arc::new(AtomicU64::new(0));
    let seen_by_listener = seen.clone();
    store.add_commit_listener(Arc::new(move |seq| {
        seen_by_listener.store(seq, Ordering::SeqCst)
    }));
    seen
}

fn open(dir: &tempfile::TempDir) -> Store {
    Store::open(StoreConfig::new(dir.path().join("nagi.db"))).expect("open store")
}

#[test]
fn a_failing_job_leaves_no_trace_and_does_not_disturb_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir));
    let mut receivers = Vec::new();
    for index in 0..50 {
        let (sender, receiver) = std::sync::mpsc::channel();
        store.submit(
            move |writer: &Writer<'_>| -> Result<u64, String> {
                writer
                    .put_mission(&mission(&format!("m{index:02}")))
                    .map_err(|e| e.to_string())?;
                let seq = writer
                    .append_event(&format!("e{index}"), &format!("m{index:02}"), "k", "{}", 1)
                    .unwrap();
                if index % 5 == 0 {
                    Err(format!("job {index} refuses"))
                } else {
                    Ok(seq)
                }
            },
            move |outcome| sender.send(outcome).unwrap(),
        );
        receivers.push(receiver);
    }
    let outcomes: Vec<_> = receivers
        .into_iter()
        .map(|receiver| receiver.recv().unwrap().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|outcome| outcome.is_err()).count(),
        10
    );
    let summaries = store.read(|reader| reader.mission_summaries()).unwrap();
    assert_eq!(summaries.len(), 40);
    assert!(
        summaries
            .iter()
            .all(|row| !row.mission_id.ends_with('0') && !row.mission_id.ends_with('5'))
    );
    // Sequences stay contiguous: rolled-back jobs consume none.
    let events = store.read(|reader| reader.events_after(0, 1000)).unwrap();
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=40).collect::<Vec<u64>>());
}

#[test]
fn a_database_from_a_newer_nagi_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nagi.db");
    drop(Store::open(StoreConfig::new(&path)).unwrap());
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection.pragma_update(None, "user_version", 999).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let error = Store::open(StoreConfig::new(&path))
        .err()
        .expect("a newer database must be refused");
    assert_eq!(error.kind, StoreErrorKind::NewerSchema);
    assert!(error.message.contains("999"), "{}", error.message);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nagi.db");
    std::fs::write(
        &path,
        b"this is not sqlite, just some text that is long enough to be a header",
    )
    .unwrap();
    let error = Store::open(StoreConfig::new(&path))
        .err()
        .expect("garbage must be refused");
    assert_eq!(error.kind, StoreErrorKind::Corrupt, "{error}");
}

#[test]
fn a_full_database_fails_the_write_and_recovers_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nagi.db");
    drop(Store::open(StoreConfig::new(&path)).unwrap());
    let mut config = StoreConfig::new(&path);
    config.max_page_count = Some(12);
    let store = Store::open(config).unwrap();
    let big = "x".repeat(2000);
    let mut failure = None;
    for index in 0..200 {
        let mut row = mission(&format!("m{index}"));
        row.doc = big.clone();
        match store.write_blocking(move |writer| writer.put_mission(&row)) {
            Ok(Ok(())) => continue,
            Ok(Err(error)) | Err(error) => {
                failure = Some((index, error));
                break;
            }
        }
    }
    let (written, error) = failure.expect("a 12-page database must fill up");
    assert_eq!(error.kind, StoreErrorKind::Full, "{error}");
    drop(store);
    let store = open(&dir);
    let count = store.read(|reader| reader.mission_count()).unwrap();
    assert_eq!(
        count, written as u64,
        "every acknowledged write survives, nothing else"
    );
    store
        .write_blocking(|writer| writer.put_mission(&mission("after")))
        .unwrap()
        .unwrap();
}

#[test]
fn commit_listeners_see_the_last_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let seen = last_committed_sequence(&store);
    for index in 0..3 {
        store
            .write_blocking(move |writer| {
                writer.append_event(&format!("e{index}"), "m", "k", "{}", 1)
            })
            .unwrap()
            .unwrap();
    }
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[test]
fn an_idle_writer_commits_a_lone_job_on_the_calling_thread_before_returning() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    assert!(store.writer_is_idle());
    let caller = std::thread::current().id();
    let (sender, receiver) = std::sync::mpsc::channel();
    store.run_or_submit(
        move |writer: &Writer<'_>| -> Result<std::thread::ThreadId, String> {
            writer
                .put_mission(&mission("inline"))
                .map_err(|e| e.to_string())?;
            Ok(std::thread::current().id())
        },
        move |outcome| sender.send(outcome).unwrap(),
    );
    // The reply came before run_or_submit returned, from this very thread, and the
    // write is committed: a separate reader connection sees it.
    let ran_on = receiver
        .try_recv()
        .expect("answered before returning")
        .unwrap()
        .unwrap();
    assert_eq!(ran_on, caller);
    let doc = store.read(|reader| reader.mission_doc("inline")).unwrap();
    assert!(doc.is_some());
}

#[test]
fn jobs_keep_their_submission_order_whichever_path_commits_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir));
    // Each job appends an event naming its index; submitted from one thread alternating
    // the queued and the inline path, the event log must list them in submission order.
    let mut receivers = Vec::new();
    for index in 0..200u64 {
        let (sender, receiver) = std::sync::mpsc::channel();
        let job = move |writer: &Writer<'_>| -> Result<u64, String> {
            writer
                .append_event(&format!("e{index}"), "ordered", "k", &index.to_string(), 1)
                .map_err(|e| e.to_string())
        };
        let reply = move |outcome| sender.send(outcome).unwrap();
        if index % 3 == 0 {
            store.run_or_submit(job, reply);
        } else {
            store.submit(job, reply);
        }
        receivers.push(receiver);
    }
    for receiver in receivers {
        receiver.recv().unwrap().unwrap().unwrap();
    }
    let events = store.read(|reader| reader.events_after(0, 1000)).unwrap();
    let payloads: Vec<u64> = events
        .iter()
        .map(|event| event.payload.parse().unwrap())
        .collect();
    assert_eq!(payloads, (0..200).collect::<Vec<u64>>());
}

#[test]
fn a_lone_job_that_fails_or_panics_leaves_no_trace_and_the_next_one_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let seen = last_committed_sequence(&store);
    // Each runs alone on an idle writer: the path without a savepoint.
    let refused = store
        .write_blocking(|writer| -> Result<(), String> {
            writer.put_mission(&mission("refused")).unwrap();
            writer
                .append_event("e-refused", "refused", "k", "{}", 1)
                .unwrap();
            Err("the job refuses".into())
        })
        .unwrap();
    assert_eq!(refused, Err("the job refuses".to_string()));
    let panicked = store.write_blocking(|writer| -> Result<(), String> {
        writer.put_mission(&mission("panicked")).unwrap();
        writer
            .append_event("e-panicked", "panicked", "k", "{}", 1)
            .unwrap();
        panic!("a job panics")
    });
    assert!(panicked.unwrap_err().message.contains("panicked"));
    assert_eq!(seen.load(Ordering::SeqCst), 0, "nothing was committed");
    let kept = store
        .write_blocking(|writer| {
            writer.put_mission(&mission("kept"))?;
            writer.append_event("e-kept", "kept", "k", "{}", 1)
        })
        .unwrap()
        .unwrap();
    assert_eq!(kept, 1, "the failed jobs consumed no sequence number");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    let missions = store.read(|reader| reader.mission_summaries()).unwrap();
    let ids: Vec<&str> = missions.iter().map(|row| row.mission_id.as_str()).collect();
    assert_eq!(ids, ["kept"]);
}

#[test]
fn a_version_2_event_log_keeps_its_sequences_through_migration_3() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nagi.db");
    {
        // A database as nagi left it before migration 3 (AUTOINCREMENT event log).
        let connection = rusqlite::Connection::open(&path).unwrap();
        for sql in &migrations::MIGRATIONS[..2] {
            connection.execute_batch(sql).unwrap();
        }
        connection.pragma_update(None, "user_version", 2).unwrap();
        for index in 1..=5 {
            connection
                .execute(
                    "INSERT INTO events (event_id, mission_id, kind, payload, at_millis) VALUES (?1, 'm', 'k', '{}', 1)",
                    [format!("e{index}")],
                )
                .unwrap();
        }
    }
    let store = Store::open(StoreConfig::new(&path)).unwrap();
    let events = store.read(|reader| reader.events_after(0, 100)).unwrap();
    let kept: Vec<(u64, &str)> = events
        .iter()
        .map(|event| (event.seq, event.event_id.as_str()))
        .collect();
    assert_eq!(
        kept,
        [(1, "e1"), (2, "e2"), (3, "e3"), (4, "e4"), (5, "e5")]
    );
    let next = store
        .write_blocking(|writer| writer.append_event("e-next", "m", "k", "{}", 2))
        .unwrap()
        .unwrap();
    assert_eq!(next, 6, "the log continues after its largest sequence");
}

#[test]
fn migration_5_records_the_run_ids_of_stored_missions_and_the_first_mission_keeps_a_shared_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nagi.db");
    {
        // A database as nagi left it before migration 5, with two missions that share r1.
        let connection = rusqlite::Connection::open(&path).unwrap();
        for sql in &migrations::MIGRATIONS[..4] {
            connection.execute_batch(sql).unwrap();
        }
        connection.pragma_update(None, "user_version", 4).unwrap();
        for (mission, doc) in [
            (
                "b",
                r#"{"run": {"run_id": "r1"}, "run_history": [{"run_id": "r0"}]}"#,
            ),
            ("a", r#"{"run": {"run_id": "r1"}, "run_history": []}"#),
            ("c", r#"{"run_history": []}"#),
        ] {
            connection
                .execute(
                    "INSERT INTO missions (mission_id, title, repository_path, status, unresolved_attention_count, updated_at_millis, live_run, doc) VALUES (?1, 't', '/r', 'draft', 0, 1, 0, ?2)",
                    [mission, doc],
                )
                .unwrap();
        }
    }
    let store = Store::open(StoreConfig::new(&path)).unwrap();
    let owner = |run_id: &str| store.read(|reader| reader.run_mission(run_id)).unwrap();
    assert_eq!(owner("r1").as_deref(), Some("a"));
    assert_eq!(owner("r0").as_deref(), Some("b"), "from the run history");
    assert_eq!(owner("r9"), None);
    // A run id recorded again keeps its mission; deleting the mission frees it.
    store
        .write_blocking(|writer| writer.put_run_index("r1", "b"))
        .unwrap()
        .unwrap();
    assert_eq!(owner("r1").as_deref(), Some("a"));
    store
        .write_blocking(|writer| writer.delete_mission("a"))
        .unwrap()
        .unwrap();
    assert_eq!(owner("r1"), None);
}

/// Acknowledged means durable: the connection every write goes through runs in WAL mode
/// with `synchronous=FULL`, which a SIGKILL test cannot tell from NORMAL (the page cache
/// survives a killed process), so it is read from SQLite itself.
#[test]
fn the_write_connection_is_wal_with_synchronous_full() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig::new(dir.path().join("nagi.db"))).unwrap();
    let (journal, synchronous) = store.durability().unwrap();
    assert_eq!(journal.to_ascii_lowercase(), "wal");
    assert_eq!(
        synchronous, 2,
        "synchronous must be FULL (2), not NORMAL (1)"
    );
}
