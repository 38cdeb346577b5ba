//! Wall-clock milliseconds. Mission time is logical on top of it: `updated_at_millis` only
//! moves forward (see `mission::apply`).

pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}
