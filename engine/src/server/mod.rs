//! The socket server, built as `run(listener, engine)`: accept with a connection limit,
//! one task per connection, shutdown by broadcast, and a drain of in-flight requests.

pub mod connection;
pub mod direct;
pub mod framing;
pub mod line_budget;
pub mod live_events;
pub mod reply_poll;
pub mod session;
pub mod socket;

use std::sync::Arc;
use std::time::Duration;

use nagi_schema::codes::ErrorCode;
use nagi_schema::envelope::ErrorResponse;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixListener;
use tokio::sync::{Semaphore, mpsc};

use crate::engine::Engine;

/// How long shutdown waits for connections to finish their in-flight requests.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(listener: UnixListener, engine: Arc<Engine>) {
    let permits = Arc::new(Semaphore::new(engine.config.current().max_connections));
    let (alive_sender, mut all_done) = mpsc::channel::<()>(1);
    let polling = Arc::new(reply_poll::ReplyPolling::new(Duration::from_micros(
        engine.config.current().user.server.reply_poll_microseconds,
    )));
    let budget = line_budget::PartialLineBudget::new(
        engine.config.current().user.server.partial_line_budget_mib as usize * 1024 * 1024,
    );
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = engine.shutdown.wait() => break,
        };
        match accepted {
            Ok((mut stream, _)) => match permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    let engine = engine.clone();
                    let alive = alive_sender.clone();
                    let polling = polling.clone();
                    let budget = budget.clone();
                    tokio::spawn(async move {
                        connection::serve_connection(engine, stream, &polling, &budget).await;
                        drop(permit);
                        drop(alive);
                    });
                }
                Err(_) => {
                    tokio::spawn(async move {
                        let line = ErrorResponse::new(
                            "",
                            ErrorCode::ServerUnavailable,
                            "the server has reached its connection limit; try again shortly",
                        )
                        .to_line();
                        let _ = stream.write_all(format!("{line}\n").as_bytes()).await;
                    });
                }
            },
            Err(error) => {
                // Out of file descriptors and similar: back off instead of spinning.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    drop(listener);
    drop(alive_sender);
    if tokio::time::timeout(DRAIN_TIMEOUT, all_done.recv())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within the drain timeout");
    }
}
