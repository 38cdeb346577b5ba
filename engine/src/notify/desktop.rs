//! A desktop notification through the freedesktop Notifications service
//! (`org.freedesktop.Notifications.Notify`) on the session bus, with zbus. No session bus
//! (`DBUS_SESSION_BUS_ADDRESS` unset, as on a server) is not an error worth more than a
//! debug line: there is no desktop to tell.

use std::collections::HashMap;

use super::Notification;

/// How long the service shows it, in milliseconds (the service may ignore it).
const EXPIRE_MILLIS: i32 = 10_000;

pub async fn show(notification: &Notification) -> Result<(), String> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into());
    }
    let connection = zbus::Connection::session()
        .await
        .map_err(|error| format!("cannot reach the session bus: {error}"))?;
    let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::from([(
        "urgency",
        zbus::zvariant::Value::U8(match notification.kind {
            super::settings::NotifyKind::Attention | super::settings::NotifyKind::Failed => 2,
            _ => 1,
        }),
    )]);
    let actions: Vec<&str> = Vec::new();
    connection
        .call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "Notify",
            &(
                "nagi",
                0u32,
                "",
                notification.title.as_str(),
                notification.body.as_str(),
                actions,
                hints,
                EXPIRE_MILLIS,
            ),
        )
        .await
        .map_err(|error| format!("the Notifications service refused: {error}"))?;
    Ok(())
}
