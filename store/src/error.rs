//! Store errors, classified so the engine can give each a stable wire code.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The disk or the database page limit is full.
    Full,
    /// The database file or its directory cannot be written.
    ReadOnly,
    /// An I/O error from the file system.
    Io,
    /// The file is not a nagi database, or it is damaged.
    Corrupt,
    /// The database was written by a newer nagi.
    NewerSchema,
    /// The writer thread is gone (the server is shutting down).
    Closed,
    /// Anything else SQLite reports.
    Other,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    pub kind: StoreErrorKind,
    pub message: String,
}

impl StoreError {
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
        }
    }

    pub fn closed() -> StoreError {
        StoreError::new(
            StoreErrorKind::Closed,
            "the store is closed (the server is shutting down)",
        )
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        use rusqlite::ffi::ErrorCode as Code;
        let kind = match error.sqlite_error_code() {
            Some(Code::DiskFull) => StoreErrorKind::Full,
            Some(Code::ReadOnly) => StoreErrorKind::ReadOnly,
            Some(Code::SystemIoFailure) | Some(Code::CannotOpen) => StoreErrorKind::Io,
            Some(Code::DatabaseCorrupt) | Some(Code::NotADatabase) => StoreErrorKind::Corrupt,
            _ => StoreErrorKind::Other,
        };
        let message = match kind {
            StoreErrorKind::Full => format!("the database is full: {error}"),
            StoreErrorKind::ReadOnly => format!("the database cannot be written: {error}"),
            StoreErrorKind::Io => format!("database I/O failed: {error}"),
            StoreErrorKind::Corrupt => {
                format!("the database file is damaged or not a nagi database: {error}")
            }
            _ => format!("database error: {error}"),
        };
        StoreError { kind, message }
    }
}
