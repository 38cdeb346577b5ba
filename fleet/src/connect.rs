//! The connection to the Temporal service, from `[fleet]` / `--fleet`.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use temporalio_client::{
    Client, ClientOptions, ClientTlsOptions, Connection, ConnectionOptions, TlsOptions, Url,
};

/// How long the first connection may take before the server's start fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Fleet mode's settings, checked by the caller (the host name follows the id rule).
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// `host:port` or a URL.
    pub address: String,
    pub namespace: String,
    pub host: String,
    pub api_key: Option<String>,
    pub tls_ca: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `[fleet] host_gone_after_seconds` (`lifecycle::DEFAULT_HOST_GONE_AFTER_SECONDS`).
    pub host_gone_after_seconds: u64,
}

impl FleetOptions {
    /// The address as a URL: a bare `host:port` is plain `http://` (TLS comes from the
    /// `tls_*` settings or an API key).
    pub fn url(&self) -> Result<Url, String> {
        let text = if self.address.contains("://") {
            self.address.clone()
        } else {
            let scheme = if self.uses_tls() { "https" } else { "http" };
            format!("{scheme}://{}", self.address)
        };
        Url::from_str(&text)
            .map_err(|error| format!("the fleet address {:?} is not valid: {error}", self.address))
    }

    fn uses_tls(&self) -> bool {
        self.api_key.is_some() || self.tls_ca.is_some() || self.tls_cert.is_some()
    }

    fn tls(&self) -> Result<Option<TlsOptions>, String> {
        if self.tls_ca.is_none() && self.tls_cert.is_none() && self.tls_key.is_none() {
            return Ok(None);
        }
        let read = |path: &PathBuf| {
            std::fs::read(path).map_err(|error| {
                format!("cannot read the fleet TLS file {}: {error}", path.display())
            })
        };
        let mut tls = TlsOptions::default();
        if let Some(ca) = &self.tls_ca {
            tls.server_root_ca_cert = Some(read(ca)?);
        }
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                tls.client_tls_options = Some(
                    ClientTlsOptions::builder()
                        .client_cert(read(cert)?)
                        .client_private_key(read(key)?)
                        .build(),
                );
            }
            (None, None) => {}
            _ => return Err("fleet TLS needs both tls_cert and tls_key, or neither".into()),
        }
        Ok(Some(tls))
    }
}

/// Connects to the Temporal service and checks that it answers; an unreachable service is
/// an error within [`CONNECT_TIMEOUT`].
pub async fn connect(options: &FleetOptions) -> Result<Client, String> {
    let url = options.url()?;
    let connection_options = ConnectionOptions::new(url)
        .identity(format!("nagi-host-{}", options.host))
        .maybe_api_key(options.api_key.clone())
        .maybe_tls_options(options.tls()?)
        .connect_timeout(CONNECT_TIMEOUT)
        .build();
    let connection = tokio::time::timeout(CONNECT_TIMEOUT, Connection::connect(connection_options))
        .await
        .map_err(|_| {
            format!(
                "the Temporal service at {} did not answer within {} s",
                options.address,
                CONNECT_TIMEOUT.as_secs()
            )
        })?
        .map_err(|error| {
            format!(
                "cannot reach the Temporal service at {}: {error}",
                options.address
            )
        })?;
    Client::new(
        connection,
        ClientOptions::new(options.namespace.clone()).build(),
    )
    .map_err(|error| {
        format!(
            "cannot open the Temporal namespace {}: {error}",
            options.namespace
        )
    })
}
