//! Timestamps as objects carry them: `Time` (RFC 3339 seconds, the apiserver's `rfc3339`) and `MicroTime`
//! (`RFC3339Micro`, as Leases and Events carry them), to and from unix microseconds. Controllers read and
//! compare them (availability, backoff, lease expiry); the clock itself is always handed in.

/// Formats unix microseconds as a MicroTime (`RFC3339Micro` in UTC): "2026-01-02T03:04:05.123456Z".
pub fn format_micro_time(unix_us: i64) -> String {
    // The apiserver's RFC 3339 seconds, with the microseconds put in before the `Z`.
    let seconds = apiserver::registry::system::rfc3339(unix_us.div_euclid(1_000_000));
    format!("{}.{:06}Z", seconds.trim_end_matches('Z'), unix_us.rem_euclid(1_000_000))
}

/// An RFC 3339 timestamp (`2023-11-14T22:13:20Z`, with optional fractional seconds and a `Z` or `±hh:mm`
/// offset) as microseconds since the epoch; `None` for anything else.
pub fn parse_time_us(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(range)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut micros = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        // Only the first six digits count; finer digits are truncated, as Go's microsecond view of them.
        for (i, c) in frac[..digits].bytes().take(6).enumerate() {
            micros += i64::from(c - b'0') * 10i64.pow(5 - i as u32);
        }
        rest = &frac[digits..];
    }
    let offset_s = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[0..1], "+" | "-") && &rest[3..4] == ":" => {
            let hours: i64 = rest.get(1..3)?.parse().ok()?;
            let minutes: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3_600 + minutes * 60)
        }
        _ => return None,
    };
    // Days from the civil date (the proleptic Gregorian calendar).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_s;
    Some(seconds * 1_000_000 + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000_000;
    const EPOCH_US: i64 = 1_767_323_045_123_456;

    #[test]
    fn timestamps_parse_to_microseconds() {
        let cases = [
            ("2023-11-14T22:13:20Z", Some(T0)),
            ("2023-11-14T22:13:20.5Z", Some(T0 + 500_000)),
            ("2023-11-14T22:13:20.1234567Z", Some(T0 + 123_456)),
            ("2023-11-15T00:13:20+02:00", Some(T0)),
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2023-11-14 22:13:20Z", None),
            ("2023-11-14T22:13:20", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_time_us(text), want, "{text}");
        }
    }

    #[test]
    fn micro_times_format_and_parse() {
        let cases = [
            (0, "1970-01-01T00:00:00.000000Z"),
            (-1, "1969-12-31T23:59:59.999999Z"),
            (EPOCH_US, "2026-01-02T03:04:05.123456Z"),
            (1_709_208_000_500_000, "2024-02-29T12:00:00.500000Z"),
        ];
        for (unix_us, text) in cases {
            assert_eq!(format_micro_time(unix_us), text);
            assert_eq!(parse_time_us(text), Some(unix_us), "{text}");
        }
        let parsed = [
            ("2026-01-02T05:04:05.123456+02:00", Some(EPOCH_US)),
            ("2026-01-02T03:04:05.123456789Z", Some(EPOCH_US)),
            ("2026-01-02T03:04:05Z", Some(EPOCH_US - 123_456)),
            ("2026-01-02T03:04:05.1Z", Some(EPOCH_US - 23_456)),
            ("2026-01-02 03:04:05Z", None),
            ("2026-13-02T03:04:05Z", None),
            ("2026-01-02T03:04:05.Z", None),
            ("2026-01-02T03:04:05", None),
            ("garbage", None),
        ];
        for (text, want) in parsed {
            assert_eq!(parse_time_us(text), want, "{text}");
        }
    }
}
