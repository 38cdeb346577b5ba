//! SQLite persistence for nagi.
//!
//! One database file per session. WAL with `synchronous=FULL`; numbered migrations at
//! open; a single writer thread that group-commits queued jobs (see [`writer`]); readers
//! on separate WAL connections. Every SQL statement lives in [`access`]; the rows it takes
//! and returns are plain data, and the engine's JSON documents are opaque here.

pub mod access;
pub mod error;
pub mod migrations;
pub mod rows;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};

pub use access::{Reader, Writer};
pub use error::{StoreError, StoreErrorKind};
pub use rows::*;
pub use writer::CommitListener;
use writer::{Job, JobDone, WriteSide, WriterLoop};

#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub path: PathBuf,
    /// Most jobs in one group commit.
    pub max_batch: usize,
    /// SQLite `max_page_count` for the writer (tests simulate a full disk with it).
    pub max_page_count: Option<u64>,
    /// How the database is checked before it is used: a damaged one is refused, never
    /// served (reads would fail while writes seemed to succeed).
    pub integrity_check: IntegrityCheck,
}

/// The check of a database at open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntegrityCheck {
    /// `PRAGMA quick_check`: every b-tree page is well formed (linear in the file size;
    /// it skips the index-content cross-check).
    #[default]
    Quick,
    /// `PRAGMA integrity_check`: also that every index matches its table.
    Full,
}

impl StoreConfig {
    pub fn new(path: impl Into<PathBuf>) -> StoreConfig {
        StoreConfig {
            path: path.into(),
            max_batch: 256,
            max_page_count: None,
            integrity_check: IntegrityCheck::Quick,
        }
    }
}

/// Runs the integrity check; a damaged database is a `Corrupt` error that names the first
/// problems SQLite found.
fn check_integrity(
    connection: &Connection,
    path: &Path,
    check: IntegrityCheck,
) -> Result<(), StoreError> {
    let pragma = match check {
        IntegrityCheck::Quick => "quick_check",
        IntegrityCheck::Full => "integrity_check",
    };
    let findings: Vec<String> = connection
        .prepare(&format!("PRAGMA {pragma}(8)"))
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get::<_, String>(0))?
                .collect::<Result<Vec<String>, _>>()
        })
        .map_err(|error| {
            StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "the database {} is damaged ({pragma}: {error}); move it aside or restore a backup; nothing was changed",
                    path.display()
                ),
            )
        })?;
    if findings.len() == 1 && findings[0] == "ok" {
        return Ok(());
    }
    Err(StoreError::new(
        StoreErrorKind::Corrupt,
        format!(
            "the database {} is damaged ({pragma}: {}); move it aside or restore a backup; nothing was changed",
            path.display(),
            findings.join("; ")
        ),
    ))
}

pub struct Store {
    path: PathBuf,
    side: Arc<WriteSide>,
    /// Unbounded, so that queueing never blocks the (async) caller: the jobs in flight are
    /// bounded by the server's connection limit, as each connection waits for its reply.
    jobs: Mutex<Option<Sender<Job>>>,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    readers: Mutex<Vec<Connection>>,
}

fn configure_writer(connection: &Connection, config: &StoreConfig) -> Result<(), StoreError> {
    connection.busy_timeout(std::time::Duration::from_secs(5))?;
    let mode: String = connection.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            format!("the database refused WAL mode (got {mode})"),
        ));
    }
    connection.pragma_update(None, "synchronous", "FULL")?;
    // Read back: an acknowledged write must survive power loss, so a connection that did
    // not take FULL (2) is refused rather than used.
    let synchronous: i64 = connection.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
    if synchronous != 2 {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            format!("the database refused synchronous=FULL (got {synchronous})"),
        ));
    }
    connection.pragma_update(None, "foreign_keys", "ON")?;
    // Each job runs in a savepoint; keep its statement journal in memory, not in a temp file.
    connection.pragma_update(None, "temp_store", "MEMORY")?;
    if let Some(pages) = config.max_page_count {
        connection.query_row(&format!("PRAGMA max_page_count={pages}"), [], |_| Ok(()))?;
    }
    Ok(())
}

/// Creates the database file with mode 0600 before SQLite opens it, so the WAL and shm
/// files inherit private permissions.
fn create_private_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.exists() {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map(|_| ())
        .map_err(|error| {
            StoreError::new(
                StoreErrorKind::Io,
                format!("cannot create {}: {error}", path.display()),
            )
        })
}

impl Store {
    /// Opens (creating if needed) and migrates the database, and starts the writer.
    pub fn open(config: StoreConfig) -> Result<Store, StoreError> {
        create_private_file(&config.path)?;
        let mut connection = Connection::open(&config.path)?;
        check_integrity(&connection, &config.path, config.integrity_check)?;
        configure_writer(&connection, &config)?;
        // A file that is not SQLite fails here with a clear "not a database" error.
        migrations::apply_migrations(&mut connection)?;
        let (sender, receiver) = channel::<Job>();
        let side = Arc::new(WriteSide {
            connection: Mutex::new(connection),
            queued: AtomicUsize::new(0),
            listeners: Mutex::default(),
        });
        let writer = WriterLoop {
            side: side.clone(),
            jobs: receiver,
            max_batch: config.max_batch.max(1),
        };
        let writer_thread = std::thread::Builder::new()
            .name("nagi-store-writer".into())
            .spawn(move || writer.run())
            .map_err(|error| {
                StoreError::new(
                    StoreErrorKind::Other,
                    format!("cannot start the writer thread: {error}"),
                )
            })?;
        Ok(Store {
            path: config.path,
            side,
            jobs: Mutex::new(Some(sender)),
            writer_thread: Mutex::new(Some(writer_thread)),
            readers: Mutex::new(Vec::new()),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Registers a callback run after every commit with the last event sequence.
    pub fn add_commit_listener(&self, listener: CommitListener) {
        if let Ok(mut listeners) = self.side.listeners.lock() {
            listeners.push(listener);
        }
    }

    /// Queues a write job. It runs inside the next group commit, in its own savepoint:
    /// `Ok` keeps its writes, `Err` rolls them back. `reply` is called after the COMMIT
    /// with the job's outcome, or with the store error that prevented the commit.
    pub fn submit<T, E, F, R>(&self, job: F, reply: R)
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Writer<'_>) -> Result<T, E> + Send + 'static,
        R: FnOnce(Result<Result<T, E>, StoreError>) + Send + 'static,
    {
        self.enqueue(make_job(job, reply));
    }

    /// Whether a job submitted now would find the writer idle with nothing queued (a hint
    /// for [`Store::run_or_submit`]; the answer may change at once).
    pub fn writer_is_idle(&self) -> bool {
        self.side.idle_connection().is_some()
    }

    /// Like [`Store::submit`], but when the writer is idle and nothing is queued the job is
    /// committed on the calling thread, alone, before this returns; `reply` has then been
    /// called. Otherwise the job is queued and this returns at once. Blocks the caller for
    /// a commit (an async caller that may do so holds its worker for that long: see
    /// `Missions::transact` in the engine).
    pub fn run_or_submit<T, E, F, R>(&self, job: F, reply: R)
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Writer<'_>) -> Result<T, E> + Send + 'static,
        R: FnOnce(Result<Result<T, E>, StoreError>) + Send + 'static,
    {
        let job = make_job(job, reply);
        let open = self.jobs.lock().map(|jobs| jobs.is_some()).unwrap_or(false);
        if !open {
            (job.abort)(StoreError::closed());
            return;
        }
        match self.side.idle_connection() {
            Some(connection) => self.side.commit_batch(connection, vec![job]),
            None => self.enqueue(job),
        }
    }

    fn enqueue(&self, job: Job) {
        let sender = self.jobs.lock().ok().and_then(|guard| guard.clone());
        match sender {
            Some(sender) => {
                // Counted before it is sent: see `WriteSide::queued`.
                self.side.queued.fetch_add(1, Ordering::SeqCst);
                if let Err(failed) = sender.send(job) {
                    self.side.queued.fetch_sub(1, Ordering::SeqCst);
                    (failed.0.abort)(StoreError::closed());
                }
            }
            None => (job.abort)(StoreError::closed()),
        }
    }

    /// The durability settings of the write connection, as SQLite reports them:
    /// (`journal_mode`, `synchronous`), which nagi requires to be ("wal", 2 = FULL).
    pub fn durability(&self) -> Result<(String, i64), StoreError> {
        self.write_blocking(|writer| {
            let journal: String =
                writer
                    .connection
                    .query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
            let synchronous: i64 =
                writer
                    .connection
                    .query_row("PRAGMA synchronous", [], |row| row.get(0))?;
            Ok::<_, StoreError>((journal, synchronous))
        })?
    }

    /// Runs a write job and waits for its commit (for start-up work and tests; async
    /// callers use [`Store::submit`]).
    pub fn write_blocking<T, E, F>(&self, job: F) -> Result<Result<T, E>, StoreError>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Writer<'_>) -> Result<T, E> + Send + 'static,
    {
        let (sender, receiver) = std::sync::mpsc::channel();
        self.run_or_submit(job, move |outcome| {
            let _ = sender.send(outcome);
        });
        receiver
            .recv()
            .unwrap_or_else(|_| Err(StoreError::closed()))
    }

    /// Runs a read on a pooled WAL reader connection. It sees the last committed state.
    pub fn read<T>(
        &self,
        read: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let pooled = self
            .readers
            .lock()
            .ok()
            .and_then(|mut readers| readers.pop());
        let connection = match pooled {
            Some(connection) => connection,
            None => {
                let connection = Connection::open_with_flags(
                    &self.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                connection.busy_timeout(std::time::Duration::from_secs(5))?;
                connection
            }
        };
        let outcome = read(&Reader {
            connection: &connection,
        });
        if let Ok(mut readers) = self.readers.lock()
            && readers.len() < 16
        {
            readers.push(connection);
        }
        outcome
    }

    /// Stops accepting jobs, lets the writer finish every queued one, and waits for it.
    pub fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        if let Some(thread) = self
            .writer_thread
            .lock()
            .ok()
            .and_then(|mut thread| thread.take())
        {
            let _ = thread.join();
        }
    }
}

/// Wraps a typed job and its reply into the writer's untyped job.
fn make_job<T, E, F, R>(job: F, reply: R) -> Job
where
    T: Send + 'static,
    E: Send + 'static,
    F: FnOnce(&Writer<'_>) -> Result<T, E> + Send + 'static,
    R: FnOnce(Result<Result<T, E>, StoreError>) + Send + 'static,
{
    let reply_slot = Arc::new(Mutex::new(Some(reply)));
    let abort_slot = reply_slot.clone();
    Job {
        run: Box::new(move |writer| {
            let outcome = job(writer);
            let keep = outcome.is_ok();
            JobDone {
                keep,
                finish: Box::new(move |commit| {
                    if let Some(reply) = reply_slot.lock().ok().and_then(|mut slot| slot.take()) {
                        reply(commit.map(|()| outcome));
                    }
                }),
            }
        }),
        abort: Box::new(move |error| {
            if let Some(reply) = abort_slot.lock().ok().and_then(|mut slot| slot.take()) {
                reply(Err(error));
            }
        }),
    }
}

/// Reads an existing database without opening a writer or migrating it (for tools that
/// inspect a session while no server runs). A newer database is refused.
pub fn read_existing<T>(
    path: &Path,
    read: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    if !path.exists() {
        return Err(StoreError::new(
            StoreErrorKind::Io,
            format!("no database at {}", path.display()),
        ));
    }
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(std::time::Duration::from_secs(5))?;
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > migrations::MIGRATIONS.len() as i64 {
        return Err(StoreError::new(
            StoreErrorKind::NewerSchema,
            format!("the database has schema version {version}, newer than this nagi"),
        ));
    }
    read(&Reader {
        connection: &connection,
    })
}

impl Drop for Store {
    fn drop(&mut self) {
        self.close();
    }
}

/// The `kind` of a kept handoff artifact in the `blobs` table (its compact JSON, keyed by
/// its `artifact_sha256`).
pub const HANDOFF_ARTIFACT_BLOB: &str = "handoff_artifact";
