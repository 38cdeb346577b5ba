//! Wall-clock milliseconds. Mission time is logical on top of it: `updated_at_millis` only
//! moves forward (see `mission::apply`).

pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

/// A time as a person reads it, in UTC to the second (`2026-12-01 23:22:41 UTC`). The raw
/// milliseconds stay in JSON output.
pub fn format_utc(millis: u64) -> String {
    match i64::try_from(millis)
        .ok()
        .and_then(|millis| jiff::Timestamp::from_millisecond(millis).ok())
    {
        Some(timestamp) => timestamp.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => format!("{millis} ms after the epoch"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_render_as_utc_to_the_second() {
        assert_eq!(super::format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            super::format_utc(1_796_167_361_999),
            "2026-12-01 23:22:41 UTC"
        );
        assert_eq!(
            super::format_utc(u64::MAX),
            format!("{} ms after the epoch", u64::MAX)
        );
    }
}
