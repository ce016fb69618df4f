//! `Retry-After` parsing: delta-seconds or an HTTP-date (RFC 9110 §10.2.3),
//! plus the hints providers put in error messages ("try again in 500ms").
//!
//! Peers get this wrong in both directions (one reads seconds as
//! milliseconds, another turns an HTTP-date into NaN and retries at once),
//! so it lives in one tested function. Time is an argument: `unix_now` is
//! the wall clock, needed only for the date form.

use std::time::Duration;

/// Parses a `Retry-After` header value. Dates in the past mean "now".
/// Returns `None` for anything unparseable (the caller falls back to its
/// own backoff rather than trusting garbage).
pub fn parse_retry_after(value: &str, unix_now: Duration) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if v.bytes().all(|b| b.is_ascii_digit()) {
        // Huge digit strings saturate instead of failing.
        return Some(Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX)));
    }
    if let Some(secs) = crate::ranges::decimal(v) {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
    }
    let at = parse_http_date(v)?;
    Some(Duration::from_secs(at.saturating_sub(unix_now.as_secs())))
}

/// Extracts "try again in 250ms" / "retry in 2s" / "backoff_seconds: 1"
/// style hints from an error message.
pub fn hint_from_message(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    for marker in ["try again in", "retry in", "retry after", "backoff_seconds"] {
        let Some(pos) = crate::text::find(&lower, marker) else { continue };
        let rest = crate::text::from(&lower, pos + marker.len()).trim_start_matches([' ', ':', '"', '=']);
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let Some(n) = crate::ranges::decimal(&digits) else { continue };
        if !n.is_finite() || n < 0.0 {
            continue;
        }
        let unit = crate::text::from(rest, digits.len()).trim_start();
        let secs = if unit.starts_with("ms") || unit.starts_with("millisecond") { n / 1000.0 } else { n };
        return Duration::try_from_secs_f64(secs).ok();
    }
    None
}

/// Parses IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete
/// RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`) into Unix seconds.
pub fn parse_http_date(value: &str) -> Option<u64> {
    let tokens: Vec<&str> = value.split([' ', ',', '-']).filter(|t| !t.is_empty()).collect();
    let (day, month, year, time) = match tokens.as_slice() {
        [_, d, m, y, t, "GMT"] if !d.chars().any(|c| c.is_ascii_alphabetic()) => (*d, *m, *y, *t),
        [_, m, d, t, y] => (*d, *m, *y, *t),
        _ => return None,
    };
    let day: u64 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as u64 + 1;
    let mut year: u64 = year.parse().ok()?;
    if year < 100 {
        // RFC 850 two-digit years: RFC 9110 says pick the century that is
        // not more than 50 years in the future; 2000-based is good to 2069.
        year += if year < 70 { 2000 } else { 1900 };
    }
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || !(1970..=9999).contains(&year)
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// Days since 1970-01-01 of a proleptic Gregorian date (year ≥ 1970).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn delta_seconds_are_seconds_not_milliseconds() {
        assert_eq!(parse_retry_after("2", NOW), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 120 ", NOW), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("1.5", NOW), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("99999999999999999999999", NOW), Some(Duration::from_secs(u64::MAX)));
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(784_111_777));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", NOW), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", NOW), Some(Duration::ZERO));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"), Some(1_835_438_400));
    }

    #[test]
    fn two_digit_years_and_the_edges_of_each_field() {
        let date = |d: &str| parse_http_date(d);
        // RFC 850 years: 70–99 are 19xx, 00–69 are 20xx; three digits are taken as written.
        assert_eq!(date("Thursday, 01-Jan-70 00:00:00 GMT"), Some(0));
        assert_eq!(date("Friday, 31-Dec-99 23:59:59 GMT"), date("Fri, 31 Dec 1999 23:59:59 GMT"));
        assert_eq!(date("Sunday, 01-Jan-69 00:00:00 GMT"), date("Sun, 01 Jan 2069 00:00:00 GMT"));
        assert_eq!(date("Saturday, 01-Jan-00 00:00:00 GMT"), date("Sat, 01 Jan 2000 00:00:00 GMT"));
        assert_eq!(date("Sat, 01 Jan 100 00:00:00 GMT"), None, "year 100 is before 1970");
        // The last valid value of each field, and one past it.
        assert!(date("Sun, 06 Nov 1994 23:59:60 GMT").is_some(), "a leap second");
        assert_eq!(date("Sun, 06 Nov 1994 23:59:61 GMT"), None);
        assert_eq!(date("Sun, 06 Nov 1994 23:60:00 GMT"), None);
        assert_eq!(date("Sun, 06 Nov 1994 24:00:00 GMT"), None);
        assert!(date("Sun, 31 Dec 9999 23:59:59 GMT").is_some());
        assert_eq!(date("Sun, 00 Nov 1994 08:49:37 GMT"), None);
        assert!(date("Sun, 31 Dec 1994 08:49:37 GMT").is_some());
    }

    #[test]
    fn garbage_is_none_not_a_panic() {
        for bad in [
            "",
            "soon",
            "-1",
            "NaN",
            "inf",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37:01 GMT",
            "a b c d e",
        ] {
            assert_eq!(parse_retry_after(bad, NOW), None, "{bad:?}");
        }
    }

    #[test]
    fn message_hints() {
        assert_eq!(hint_from_message("rate limited, try again in 250ms"), Some(Duration::from_millis(250)));
        assert_eq!(hint_from_message("Too many requests. Retry in 2s"), Some(Duration::from_secs(2)));
        assert_eq!(hint_from_message("{\"backoff_seconds\": 1.5}"), Some(Duration::from_millis(1500)));
        assert_eq!(hint_from_message("execution reverted"), None);
        assert_eq!(hint_from_message("try again in a moment"), None);
        assert_eq!(hint_from_message("try again in 0ms"), Some(Duration::ZERO), "zero is a hint too");
        // A number too large for a duration is no hint; a later marker may still be one.
        let huge = "9".repeat(400);
        assert_eq!(hint_from_message(&format!("try again in {huge} ms")), None);
        assert_eq!(hint_from_message(&format!("try again in {huge} ms, or retry in 2s")), Some(Duration::from_secs(2)));
    }
}
