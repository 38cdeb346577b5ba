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

/// The start of a report's window (`--since`): a span back from `now_millis` (`7d`, `24h`,
/// `90m`, `2 weeks`), a UTC date (`2026-12-01`, from its midnight) or a timestamp
/// (`2026-12-01T10:00:00Z`).
pub fn parse_since(text: &str, now_millis: u64) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(timestamp) = text.parse::<jiff::Timestamp>() {
        return u64::try_from(timestamp.as_millisecond())
            .map_err(|_| format!("{text} is before 1970"));
    }
    if let Ok(date) = text.parse::<jiff::civil::Date>() {
        let midnight = date
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .map_err(|error| format!("{text}: {error}"))?;
        return u64::try_from(midnight.timestamp().as_millisecond())
            .map_err(|_| format!("{text} is before 1970"));
    }
    let span: jiff::Span = text.parse().map_err(|_| {
        format!("{text:?} is neither a span (7d, 24h, 90m) nor a date (2026-12-01) nor a timestamp (2026-12-01T10:00:00Z)")
    })?;
    let back = span
        .total((jiff::Unit::Millisecond, jiff::civil::date(2000, 1, 1)))
        .map_err(|error| format!("{text}: {error}"))?;
    if back < 0.0 {
        return Err(format!("{text} reaches into the future"));
    }
    Ok(now_millis.saturating_sub(back as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_report_window_starts_at_a_span_ago_a_date_or_a_timestamp() {
        let now = 1_796_167_361_999;
        assert_eq!(super::parse_since("24h", now), Ok(now - 86_400_000));
        assert_eq!(super::parse_since("7d", now), Ok(now - 7 * 86_400_000));
        assert_eq!(super::parse_since("2026-12-01", now), Ok(1_796_083_200_000));
        assert_eq!(
            super::parse_since("2026-12-01T10:00:00Z", now),
            Ok(1_796_119_200_000)
        );
        assert!(super::parse_since("yesterday-ish", now).is_err());
    }

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
