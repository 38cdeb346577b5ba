//! The single writer. One write connection, guarded by a mutex, applies queued jobs in
//! group commits: every job waiting when a transaction begins goes into it, each inside its
//! own savepoint so that a failing job leaves no trace and does not disturb the others, and
//! every job's reply is delivered only after the COMMIT has returned (with
//! `synchronous=FULL`, after the WAL is on disk).
//!
//! Two threads may hold the connection, never at once: the writer thread, which drains the
//! queue, and a caller that finds the writer idle and nothing queued, which commits its one
//! job itself (see [`Store::run_or_submit`](crate::Store::run_or_submit)). The second path
//! saves the two thread hand-offs of a lone request (a large share of its commit);
//! under load every job goes through the queue and is group-committed.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Connection;

use crate::access::Writer;
use crate::error::{StoreError, StoreErrorKind};

pub(crate) type Finish = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// What a job leaves behind once it has run: whether its writes are kept, and how to tell
/// its caller the outcome of the commit.
pub(crate) struct JobDone {
    pub keep: bool,
    pub finish: Finish,
}

pub(crate) struct Job {
    pub run: Box<dyn FnOnce(&Writer<'_>) -> JobDone + Send>,
    /// Tells the caller the job never ran (or panicked) and why.
    pub abort: Box<dyn FnOnce(StoreError) + Send>,
}

/// Called after every successful commit with the highest committed event sequence.
pub type CommitListener = Arc<dyn Fn(u64) + Send + Sync>;

/// What the writer thread and the callers that commit themselves share.
pub(crate) struct WriteSide {
    pub connection: Mutex<Connection>,
    /// Jobs sent to the queue and not yet taken into a batch. It drops only once the
    /// writer thread holds the connection, so a caller that sees zero while holding the
    /// connection knows no earlier job is waiting: committing its own first keeps the
    /// order in which jobs were submitted.
    pub queued: AtomicUsize,
    pub listeners: Mutex<Vec<CommitListener>>,
}

impl WriteSide {
    pub fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the connection can only come from outside a job (jobs run
        // under catch_unwind); the connection itself is still consistent.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The connection, if no one holds it and nothing is queued.
    pub fn idle_connection(&self) -> Option<MutexGuard<'_, Connection>> {
        if self.queued.load(Ordering::SeqCst) != 0 {
            return None;
        }
        let guard = match self.connection.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        (self.queued.load(Ordering::SeqCst) == 0).then_some(guard)
    }

    /// Commits `batch` on `connection`, lets go of the connection, then tells the commit
    /// listeners and the jobs' callers.
    pub fn commit_batch(&self, connection: MutexGuard<'_, Connection>, batch: Vec<Job>) {
        let (committed_seq, finishes) = run_batch(&connection, batch);
        drop(connection);
        // Listeners first: once a caller sees its reply, the head it can observe
        // already includes its events.
        if let Some(seq) = committed_seq {
            let listeners = self
                .listeners
                .lock()
                .map(|guard| guard.clone())
                .unwrap_or_default();
            for listener in listeners {
                listener(seq);
            }
        }
        for (finish, outcome) in finishes {
            finish(outcome);
        }
    }
}

pub(crate) struct WriterLoop {
    pub side: Arc<WriteSide>,
    pub jobs: Receiver<Job>,
    pub max_batch: usize,
}

impl WriterLoop {
    pub fn run(self) {
        let WriterLoop {
            side,
            jobs,
            max_batch,
        } = self;
        while let Ok(first) = jobs.recv() {
            let connection = side.lock();
            let mut batch = vec![first];
            while batch.len() < max_batch {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            side.queued.fetch_sub(batch.len(), Ordering::SeqCst);
            side.commit_batch(connection, batch);
        }
    }
}

type Replies = Vec<(Finish, Result<(), StoreError>)>;

/// Runs one group commit. Returns the last event sequence it committed (none when it
/// appended no event or did not commit), and the replies still to deliver (after the
/// commit listeners ran).
fn run_batch(connection: &Connection, batch: Vec<Job>) -> (Option<u64>, Replies) {
    if batch.len() == 1 {
        let job = batch.into_iter().next().expect("one job");
        return run_lone_job(connection, job);
    }
    if let Err(error) = cached(connection, "BEGIN IMMEDIATE") {
        let error = StoreError::from(error);
        for job in batch {
            (job.abort)(error.clone());
        }
        return (None, Vec::new());
    }
    let mut finishes: Vec<Finish> = Vec::with_capacity(batch.len());
    let mut last_seq: Option<u64> = None;
    let mut jobs = batch.into_iter();
    while let Some(job) = jobs.next() {
        if connection.is_autocommit()
            && let Err(error) = cached(connection, "BEGIN IMMEDIATE")
        {
            let error = StoreError::from(error);
            (job.abort)(error.clone());
            for job in jobs.by_ref() {
                (job.abort)(error.clone());
            }
            break;
        }
        let ran = run_job_in_savepoint(connection, job);
        if connection.is_autocommit() {
            // SQLite rolled the whole transaction back (it does so on a full disk and on
            // some I/O errors). The writes of the earlier jobs are gone: they are told so
            // and were never acknowledged. Later jobs run in a fresh transaction.
            let error = ran.error.unwrap_or_else(rolled_back);
            for earlier in finishes.drain(..) {
                earlier(Err(error.clone()));
            }
            last_seq = None;
            if let Some(finish) = ran.finish {
                finish(Ok(()));
            }
            continue;
        }
        last_seq = last_seq.max(ran.kept_seq);
        if let Some(finish) = ran.finish {
            finishes.push(finish);
        }
    }
    if connection.is_autocommit() {
        return (
            None,
            finishes
                .into_iter()
                .map(|finish| (finish, Ok(())))
                .collect(),
        );
    }
    let commit = cached(connection, "COMMIT").map_err(StoreError::from);
    if commit.is_err() {
        let _ = connection.execute_batch("ROLLBACK");
    }
    let replies = finishes
        .into_iter()
        .map(|finish| (finish, commit.clone()))
        .collect();
    (commit.is_ok().then_some(last_seq).flatten(), replies)
}

/// What the caller of a job that panicked is told (after its writes were rolled back).
fn panicked() -> StoreError {
    tracing::error!("a store job panicked; its writes were rolled back");
    StoreError::new(
        StoreErrorKind::Other,
        "internal error: a store job panicked; nothing was written",
    )
}

fn rolled_back() -> StoreError {
    StoreError::new(
        StoreErrorKind::Other,
        "the transaction was rolled back by SQLite; nothing was written",
    )
}

/// A batch of one job: its transaction is its own, so it needs no savepoint (two
/// statements fewer per lone write); a failing job rolls the transaction back.
fn run_lone_job(connection: &Connection, job: Job) -> (Option<u64>, Replies) {
    let Job { run, abort } = job;
    if let Err(error) = cached(connection, "BEGIN IMMEDIATE") {
        abort(StoreError::from(error));
        return (None, Vec::new());
    }
    let writer = Writer::new(connection);
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| run(&writer)));
    let job_error = writer.last_error.borrow_mut().take();
    let appended = writer.last_event_seq.get();
    match outcome {
        Err(_) => {
            if !connection.is_autocommit() {
                let _ = cached(connection, "ROLLBACK");
            }
            abort(panicked());
            (None, Vec::new())
        }
        Ok(done) if connection.is_autocommit() => {
            // SQLite rolled the transaction back by itself (a full disk, some I/O errors).
            let outcome = if done.keep {
                Err(job_error.unwrap_or_else(rolled_back))
            } else {
                Ok(())
            };
            (None, vec![(done.finish, outcome)])
        }
        Ok(done) if !done.keep => {
            let _ = cached(connection, "ROLLBACK");
            (None, vec![(done.finish, Ok(()))])
        }
        Ok(done) => {
            let commit = cached(connection, "COMMIT").map_err(StoreError::from);
            if commit.is_err() {
                let _ = connection.execute_batch("ROLLBACK");
            }
            let committed_seq = commit.is_ok().then_some(appended).flatten();
            (committed_seq, vec![(done.finish, commit)])
        }
    }
}

/// Runs a transaction or savepoint statement through the statement cache (they run for
/// every batch or job; parsing them each time cost ~5% of a commit's CPU).
fn cached(connection: &Connection, sql: &str) -> rusqlite::Result<()> {
    connection.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// What running one job of a batch left: its finish callback (or `None` when the job was
/// already told it failed), the last store error its statements produced, and the last
/// event sequence it appended if its writes are kept.
struct RanJob {
    finish: Option<Finish>,
    error: Option<StoreError>,
    kept_seq: Option<u64>,
}

/// Runs one job of a batch in its own savepoint.
fn run_job_in_savepoint(connection: &Connection, job: Job) -> RanJob {
    let Job { run, abort } = job;
    if let Err(error) = cached(connection, "SAVEPOINT job") {
        let error = StoreError::from(error);
        abort(error.clone());
        return RanJob {
            finish: None,
            error: Some(error),
            kept_seq: None,
        };
    }
    let writer = Writer::new(connection);
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| run(&writer)));
    let job_error = writer.last_error.borrow_mut().take();
    let appended = writer.last_event_seq.get();
    let ran = |finish, kept_seq| RanJob {
        finish,
        error: job_error.clone(),
        kept_seq,
    };
    match outcome {
        Ok(done) if connection.is_autocommit() => {
            if done.keep {
                // The job thinks it succeeded, but its writes went with the rollback.
                (done.finish)(Err(job_error.clone().unwrap_or_else(rolled_back)));
                ran(None, None)
            } else {
                ran(Some(done.finish), None)
            }
        }
        Ok(done) => {
            let release = if done.keep {
                cached(connection, "RELEASE job")
            } else {
                connection.execute_batch("ROLLBACK TO job; RELEASE job")
            };
            match release {
                Ok(()) => ran(Some(done.finish), appended.filter(|_| done.keep)),
                Err(error) => {
                    let error = StoreError::from(error);
                    let _ = connection.execute_batch("ROLLBACK TO job; RELEASE job");
                    (done.finish)(Err(error.clone()));
                    RanJob {
                        finish: None,
                        error: Some(error),
                        kept_seq: None,
                    }
                }
            }
        }
        Err(_) => {
            if !connection.is_autocommit() {
                let _ = connection.execute_batch("ROLLBACK TO job; RELEASE job");
            }
            abort(panicked());
            ran(None, None)
        }
    }
}
