//! Fleet mode at `nagi server`'s start: `--fleet ADDRESS --host NAME` and `[fleet]` in
//! config.toml, merged (the flags win), checked before anything is written, and handed to
//! `nagi-fleet` when this binary was built with the `fleet` feature. A binary built without
//! it refuses to start in fleet mode: `feature_unavailable`.

use nagi_engine::config::{FleetSettings, UserConfig};

use crate::exit::CliError;

/// The stable code of a fleet request this binary cannot serve.
pub const FLEET_UNAVAILABLE_CODE: &str = "feature_unavailable";

fn built_without_fleet() -> CliError {
    CliError::Remote {
        code: FLEET_UNAVAILABLE_CODE.into(),
        message: "this nagi was built without fleet support (cargo feature `fleet`): \
                  `--fleet`, `--host` and a `[fleet]` table in config.toml need a binary \
                  built with `cargo build -p nagi --features fleet`; nothing was started"
            .into(),
    }
}

/// Fleet mode as asked for: where the Temporal service is, and this host's name. Only a
/// binary built with the `fleet` feature reads it (the default build refuses first).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "fleet"), allow(dead_code))]
pub struct FleetRequest {
    pub settings: FleetSettings,
    pub address: String,
    pub host: String,
}

/// `None` when neither the flags nor `[fleet]` ask for fleet mode: nothing changes then.
pub fn resolve(
    address_flag: Option<String>,
    host_flag: Option<String>,
    user: &UserConfig,
) -> Result<Option<FleetRequest>, CliError> {
    // A `[fleet]` table that names only other hosts' sockets (`[fleet.hosts.NAME]`, for
    // `nagi pane attach --host`) does not make this server a host of a fleet.
    let table_asks = user.fleet.as_ref().is_some_and(|fleet| {
        fleet.address.is_some()
            || fleet.host.is_some()
            || fleet.namespace.is_some()
            || fleet.api_key.is_some()
            || fleet.host_gone_after_seconds.is_some()
    });
    if address_flag.is_none() && host_flag.is_none() && !table_asks {
        return Ok(None);
    }
    if !cfg!(feature = "fleet") {
        return Err(built_without_fleet());
    }
    let mut settings = user.fleet.clone().unwrap_or_default();
    if address_flag.is_some() {
        settings.address = address_flag;
    }
    if host_flag.is_some() {
        settings.host = host_flag;
    }
    let address = settings.address.clone().ok_or_else(|| {
        CliError::Usage(
            "fleet mode needs the Temporal address: `--fleet HOST:PORT` or `address` in [fleet]"
                .into(),
        )
    })?;
    let host = settings.host.clone().ok_or_else(|| {
        CliError::Usage(
            "fleet mode needs this host's name: `--host NAME` or `host` in [fleet]".into(),
        )
    })?;
    FleetSettings::check_host(&host).map_err(CliError::Usage)?;
    Ok(Some(FleetRequest {
        settings,
        address,
        host,
    }))
}

/// Connects to the Temporal service (before anything is written) and returns the worker
/// that starts and stops with the engine.
#[cfg(feature = "fleet")]
pub fn attachment(
    request: FleetRequest,
) -> Result<Box<dyn nagi_engine::daemon::ServerAttachment>, CliError> {
    let options = nagi_fleet::FleetOptions {
        address: request.address,
        namespace: request
            .settings
            .namespace
            .unwrap_or_else(|| "default".into()),
        host: request.host,
        api_key: request.settings.api_key,
        tls_ca: request.settings.tls_ca,
        tls_cert: request.settings.tls_cert,
        tls_key: request.settings.tls_key,
        host_gone_after_seconds: request
            .settings
            .host_gone_after_seconds
            .unwrap_or(nagi_fleet::DEFAULT_HOST_GONE_AFTER_SECONDS)
            .max(1),
    };
    let worker = nagi_fleet::FleetWorker::connect(options).map_err(CliError::Unreachable)?;
    Ok(Box::new(worker))
}

#[cfg(not(feature = "fleet"))]
pub fn attachment(
    _request: FleetRequest,
) -> Result<Box<dyn nagi_engine::daemon::ServerAttachment>, CliError> {
    Err(built_without_fleet())
}
