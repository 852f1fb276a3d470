//! robfig/cron v3's standard schedules, as kube-apiserver validates them and the CronJob controller steps
//! them (`github.com/robfig/cron/v3` `ParseStandard`, `SpecSchedule.Next`, `ConstantDelaySchedule.Next`),
//! with the parser's error texts byte for byte. One port for both: the apiserver's CronJob validation asks
//! whether a schedule parses, the controller keeps each field's bit set and asks for the next activation.
//!
//! A schedule is five fields (minute, hour, day of month, month, day of week) or a descriptor (`@hourly`,
//! `@every 90s`), optionally after a `TZ=` / `CRON_TZ=` prefix naming its zone. Zones are Go's
//! `time.LoadLocation` over the IANA database (chrono-tz), `UTC` and `Local` (UTC, as kube-controller-manager's
//! containers run). All times are whole seconds here: robfig's `Next` first rounds its argument up to the
//! next second.

use std::str::FromStr;

use chrono::{Offset, TimeZone};

/// A time zone a schedule's fields are read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset east of UTC, in seconds.
    Fixed { offset_s: i64 },
    /// An IANA zone, its offset varying with daylight saving time.
    Named(chrono_tz::Tz),
}

impl Zone {
    pub const UTC: Zone = Zone::Fixed { offset_s: 0 };

    /// The zone's offset east of UTC at the instant `utc_s`, in seconds.
    pub fn offset_at(&self, utc_s: i64) -> i64 {
        match self {
            Zone::Fixed { offset_s } => *offset_s,
            Zone::Named(tz) => {
                let instant = chrono::DateTime::from_timestamp(utc_s, 0).unwrap_or_default().naive_utc();
                i64::from(tz.offset_from_utc_datetime(&instant).fix().local_minus_utc())
            }
        }
    }

    /// The instant at which the zone's wall clock reads `local_s` (seconds since the wall clock's epoch).
    /// A wall time a daylight-saving change repeats is its first occurrence; one it skips is read with the
    /// offset before the change.
    pub fn to_utc(&self, local_s: i64) -> i64 {
        match self {
            Zone::Fixed { offset_s } => local_s - offset_s,
            Zone::Named(tz) => {
                let wall = chrono::DateTime::from_timestamp(local_s, 0).unwrap_or_default().naive_utc();
                match tz.from_local_datetime(&wall).earliest() {
                    Some(instant) => instant.timestamp(),
                    None => local_s - self.offset_at(local_s - self.offset_at(local_s) - 86_400),
                }
            }
        }
    }
}

/// Go's `time.LoadLocation`: `""`, `UTC` and `Local` are UTC; other names load from the IANA zone database
/// (with its backward-compatible links), else "unknown time zone NAME".
pub fn load_location(name: &str) -> Result<Zone, String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(Zone::UTC);
    }
    if name.contains("..") || name.starts_with('/') || name.starts_with('\\') {
        return Err("time: invalid location name".into());
    }
    chrono_tz::Tz::from_str(name).map(Zone::Named).map_err(|_| format!("unknown time zone {name}"))
}

/// robfig's `starBit`: the field was `*` or `?` (it changes how day of month and day of week combine).
const STAR_BIT: u64 = 1 << 63;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Five fields (and robfig's implicit second 0) in a zone: one bit per allowed value.
    Spec { second: u64, minute: u64, hour: u64, dom: u64, month: u64, dow: u64, zone: Zone },
    /// `@every <duration>`: a whole number of seconds, at least one.
    Every { delay_s: i64 },
}

/// One field's bounds and the names it takes (`jan` is 1, `sun` is 0).
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
};
const DOW: Bounds = Bounds { min: 0, max: 6, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] };

fn bits(min: u32, max: u32, step: u32) -> u64 {
    (min..=max).step_by(step as usize).fold(0, |acc, i| acc | 1 << i)
}

/// robfig's `all`: every value of the field, marked as a star.
fn all(b: &Bounds) -> u64 {
    bits(b.min, b.max, 1) | STAR_BIT
}

impl Schedule {
    /// robfig/cron v3's `ParseStandard`, with its error texts.
    pub fn parse_standard(spec: &str) -> Result<Schedule, String> {
        if spec.is_empty() {
            return Err("empty spec string".into());
        }
        let mut spec = spec;
        let mut zone = Zone::UTC;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            let eq = spec.find('=').unwrap_or(0);
            let end = spec.find(' ').filter(|end| *end > eq).unwrap_or(spec.len());
            let name = &spec[eq + 1..end];
            zone = load_location(name).map_err(|err| format!("provided bad location {name}: {err}"))?;
            spec = spec[end..].trim();
        }
        if spec.starts_with('@') {
            return parse_descriptor(spec, zone);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
        }
        Ok(Schedule::Spec {
            second: 1,
            minute: parse_field(fields[0], &MINUTES)?,
            hour: parse_field(fields[1], &HOURS)?,
            dom: parse_field(fields[2], &DOM)?,
            month: parse_field(fields[3], &MONTHS)?,
            dow: parse_field(fields[4], &DOW)?,
            zone,
        })
    }

    /// The first activation strictly after `after_us` (unix microseconds), in unix seconds; `None` when
    /// robfig gives up (no match within five years: Go's zero time).
    pub fn next(&self, after_us: i64) -> Option<i64> {
        // robfig rounds up to the next whole second before searching.
        let start_s = after_us.div_euclid(1_000_000) + 1;
        match self {
            Schedule::Every { delay_s } => Some(start_s - 1 + delay_s),
            Schedule::Spec { second, minute, hour, dom, month, dow, zone } => {
                let day_matches = |c: &Civil| {
                    let dom_match = dom & (1 << c.day) != 0;
                    let dow_match = dow & (1 << c.weekday) != 0;
                    if dom & STAR_BIT != 0 || dow & STAR_BIT != 0 {
                        dom_match && dow_match
                    } else {
                        dom_match || dow_match
                    }
                };
                let mut t = start_s + zone.offset_at(start_s);
                let mut added = false;
                let year_limit = Civil::of(t).year + 5;
                'wrap: loop {
                    if Civil::of(t).year > year_limit {
                        return None;
                    }
                    while month & (1 << Civil::of(t).month) == 0 {
                        let c = Civil::of(t);
                        if !added {
                            added = true;
                            t = civil_seconds(c.year, c.month, 1, 0);
                        }
                        let c = Civil::of(t);
                        // Go's AddDate(0, 1, 0): the same day of the next month, normalised.
                        t = civil_seconds(c.year, c.month + 1, c.day, t.rem_euclid(86_400));
                        if Civil::of(t).month == 1 {
                            continue 'wrap;
                        }
                    }
                    while !day_matches(&Civil::of(t)) {
                        if !added {
                            added = true;
                            t -= t.rem_euclid(86_400);
                        }
                        t += 86_400;
                        if Civil::of(t).day == 1 {
                            continue 'wrap;
                        }
                    }
                    while hour & (1 << Civil::of(t).hour) == 0 {
                        if !added {
                            added = true;
                            t -= t.rem_euclid(3_600);
                        }
                        t += 3_600;
                        if Civil::of(t).hour == 0 {
                            continue 'wrap;
                        }
                    }
                    while minute & (1 << Civil::of(t).minute) == 0 {
                        if !added {
                            added = true;
                            t -= t.rem_euclid(60);
                        }
                        t += 60;
                        if Civil::of(t).minute == 0 {
                            continue 'wrap;
                        }
                    }
                    while second & (1 << Civil::of(t).second) == 0 {
                        added = true;
                        t += 1;
                        if Civil::of(t).second == 0 {
                            continue 'wrap;
                        }
                    }
                    return Some(zone.to_utc(t));
                }
            }
        }
    }

    /// The zone the schedule's fields are read in (UTC for `@every`).
    pub fn zone(&self) -> Zone {
        match self {
            Schedule::Spec { zone, .. } => *zone,
            Schedule::Every { .. } => Zone::UTC,
        }
    }
}

fn parse_descriptor(spec: &str, zone: Zone) -> Result<Schedule, String> {
    let (second, minute, hour) = (1, 1, 1);
    let spec_of =
        |hour: u64, dom: u64, month: u64, dow: u64| Schedule::Spec { second, minute, hour, dom, month, dow, zone };
    Ok(match spec {
        "@yearly" | "@annually" => spec_of(hour, 1 << 1, 1 << 1, all(&DOW)),
        "@monthly" => spec_of(hour, 1 << 1, all(&MONTHS), all(&DOW)),
        "@weekly" => spec_of(hour, all(&DOM), all(&MONTHS), 1),
        "@daily" | "@midnight" => spec_of(hour, all(&DOM), all(&MONTHS), all(&DOW)),
        "@hourly" => spec_of(all(&HOURS), all(&DOM), all(&MONTHS), all(&DOW)),
        _ => match spec.strip_prefix("@every ") {
            Some(text) => {
                let nanos = parse_go_duration(text).map_err(|err| format!("failed to parse duration {spec}: {err}"))?;
                // robfig's `Every`: at least a second, whole seconds.
                Schedule::Every { delay_s: i64::try_from((nanos / 1_000_000_000).max(1)).unwrap_or(i64::MAX) }
            }
            None => return Err(format!("unrecognized descriptor: {spec}")),
        },
    })
}

/// robfig's `getField`: a comma-separated list of ranges.
fn parse_field(field: &str, bounds: &Bounds) -> Result<u64, String> {
    let mut out = 0;
    for expr in field.split(',').filter(|e| !e.is_empty()) {
        out |= parse_range(expr, bounds)?;
    }
    Ok(out)
}

/// robfig's `getRange`: `*`, `?`, a number or name, or `a-b`, each with an optional `/step`.
fn parse_range(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let mut extra = 0;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        extra = STAR_BIT;
        (bounds.min, bounds.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], bounds.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, parse_int_or_name(low_and_high[1], bounds.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_non_negative(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            // A stepped star is not a star: `*/2` restricts the field.
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(bits(start, end, step) | extra)
}

fn parse_int_or_name(expr: &str, names: &[&str]) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    match names.iter().position(|n| !n.is_empty() && *n == lower) {
        Some(i) => Ok(i as u32),
        None => parse_non_negative(expr),
    }
}

/// `mustParseInt`: Go's `strconv.Atoi`, then not negative.
/// (Values past `u32` are out of every field's range anyway, and are reported as such.)
fn parse_non_negative(expr: &str) -> Result<u32, String> {
    let number = go_atoi(expr).map_err(|err| format!("failed to parse int from {expr}: {err}"))?;
    let number = u64::try_from(number).map_err(|_| format!("negative number ({number}) not allowed: {expr}"))?;
    Ok(u32::try_from(number).unwrap_or(u32::MAX))
}

/// Go's `strconv.Atoi` on a 64-bit machine, with its error text.
fn go_atoi(text: &str) -> Result<i64, String> {
    let quoted = crate::go_text::quote(text);
    let syntax = || format!("strconv.Atoi: parsing {quoted}: invalid syntax");
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(syntax());
    }
    let mut value: u64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return Err(syntax());
        }
        value = match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(c - b'0'))) {
            Some(v) => v,
            None => return Err(format!("strconv.Atoi: parsing {quoted}: value out of range")),
        };
    }
    let limit = if negative { 1u64 << 63 } else { (1u64 << 63) - 1 };
    if value > limit {
        return Err(format!("strconv.Atoi: parsing {quoted}: value out of range"));
    }
    Ok(if negative { (value as i64).wrapping_neg() } else { value as i64 })
}

/// The `time` package's own quoting: bytes outside printable ASCII as `\xNN`.
fn time_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if (c as u32) < 0x20 || (c as u32) >= 0x80 {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Go's `time.ParseDuration`, in nanoseconds, else its error text.
fn parse_go_duration(text: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {}", time_quote(text));
    let mut s = text.strip_prefix(['-', '+']).unwrap_or(text);
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        if !(s.starts_with('.') || s.as_bytes()[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let whole = digits(s);
        let integer: u128 = if whole > 0 { s[..whole].parse().map_err(|_| invalid())? } else { 0 };
        if integer > 1 << 63 {
            return Err(invalid());
        }
        s = &s[whole..];
        let mut fraction = 0;
        if let Some(rest) = s.strip_prefix('.') {
            fraction = digits(rest);
            s = &rest[fraction..];
        }
        if whole == 0 && fraction == 0 {
            return Err(invalid());
        }
        let unit_len = s.bytes().take_while(|c| *c != b'.' && !c.is_ascii_digit()).count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", time_quote(text)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let nanos: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(format!("time: unknown unit {} in duration {}", time_quote(unit), time_quote(text))),
        };
        total += integer * nanos;
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if !text.starts_with('-') && total > (1 << 63) - 1 {
        return Err(invalid());
    }
    let nanos = total as i128;
    Ok(if text.starts_with('-') { -nanos } else { nanos })
}

/// A civil (proleptic Gregorian) date and time of day, read from seconds on a zone's wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 is Sunday.
    pub weekday: u32,
}

impl Civil {
    /// The wall clock at `local_s` seconds since the epoch of that wall clock.
    pub fn of(local_s: i64) -> Civil {
        let days = local_s.div_euclid(86_400);
        let secs = local_s.rem_euclid(86_400) as u32;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Civil {
            year,
            month,
            day,
            hour: secs / 3_600,
            minute: secs % 3_600 / 60,
            second: secs % 60,
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }
}

/// Seconds at `year-month-day` plus `seconds_of_day`, normalising a month past 12 and a day past the
/// month's end as Go's `time.Date` does.
fn civil_seconds(year: i64, month: u32, day: u32, seconds_of_day: i64) -> i64 {
    let months = year * 12 + i64::from(month) - 1;
    let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
    let y_adj = if m <= 2 { y - 1 } else { y };
    let era = y_adj.div_euclid(400);
    let yoe = y_adj.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let first_of_month = era * 146_097 + doe - 719_468;
    (first_of_month + i64::from(day) - 1) * 86_400 + seconds_of_day
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20Z, a Tuesday.
    const T0_S: i64 = 1_700_000_000;

    fn at(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text).expect("a valid timestamp").timestamp()
    }

    #[test]
    fn next_activation_follows_robfig() {
        let cases = [
            ("*/1 * * * *", "2023-11-14T22:13:20Z", "2023-11-14T22:14:00Z"),
            ("*/1 * * * *", "2023-11-14T22:14:00Z", "2023-11-14T22:15:00Z"),
            ("*/15 * * * *", "2023-11-14T22:13:20Z", "2023-11-14T22:15:00Z"),
            ("0 * * * *", "2023-11-14T22:13:20Z", "2023-11-14T23:00:00Z"),
            ("30 6-16/4 * * 1-5", "2023-11-14T22:13:20Z", "2023-11-15T06:30:00Z"),
            ("0 0 * * sun", "2023-11-14T22:13:20Z", "2023-11-19T00:00:00Z"),
            // Day of month and day of week, neither a star: either matches.
            ("0 0 1 * mon", "2023-11-14T22:13:20Z", "2023-11-20T00:00:00Z"),
            // One of them a star: both must match.
            ("0 0 1 * *", "2023-11-14T22:13:20Z", "2023-12-01T00:00:00Z"),
            ("0 0 29 2 *", "2023-11-14T22:13:20Z", "2024-02-29T00:00:00Z"),
            ("@hourly", "2023-11-14T22:13:20Z", "2023-11-14T23:00:00Z"),
            ("@daily", "2023-11-14T22:13:20Z", "2023-11-15T00:00:00Z"),
            ("@weekly", "2023-11-14T22:13:20Z", "2023-11-19T00:00:00Z"),
            ("@monthly", "2023-11-14T22:13:20Z", "2023-12-01T00:00:00Z"),
            ("@yearly", "2023-11-14T22:13:20Z", "2024-01-01T00:00:00Z"),
            ("@every 90s", "2023-11-14T22:13:20Z", "2023-11-14T22:14:50Z"),
            ("@every 1ms", "2023-11-14T22:13:20Z", "2023-11-14T22:13:21Z"),
            // Five hours west: midnight there is 05:00 UTC.
            ("TZ=Etc/GMT+5 0 0 * * *", "2023-11-14T22:13:20Z", "2023-11-15T05:00:00Z"),
            ("CRON_TZ=UTC 0 0 * * *", "2023-11-14T22:13:20Z", "2023-11-15T00:00:00Z"),
        ];
        for (spec, after, want) in cases {
            let schedule = Schedule::parse_standard(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(schedule.next(at(after) * 1_000_000), Some(at(want)), "{spec} after {after}");
        }
        // A fraction of a second still rounds up to the next second first.
        let minutely = Schedule::parse_standard("* * * * *").unwrap();
        assert_eq!(minutely.next(T0_S * 1_000_000 + 999_999), Some(T0_S + 40));
        // An impossible day never comes: robfig gives up after five years.
        assert_eq!(Schedule::parse_standard("59 23 31 2 *").unwrap().next(T0_S * 1_000_000), None);
    }

    #[test]
    fn bad_schedules_are_refused_with_robfig_texts() {
        let cases = [
            ("", "empty spec string"),
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
            ("*/0 * * * *", "step of range should be a positive number: */0"),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("@often", "unrecognized descriptor: @often"),
            ("@every 5x", "failed to parse duration @every 5x: time: unknown unit \"x\" in duration \"5x\""),
            ("TZ=Mars/Base * * * * *", "provided bad location Mars/Base: unknown time zone Mars/Base"),
        ];
        for (spec, want) in cases {
            assert_eq!(Schedule::parse_standard(spec), Err(want.to_string()), "{spec:?}");
        }
    }

    #[test]
    fn zones_load_from_the_iana_database_with_their_offsets() {
        let summer = at("2024-07-01T12:00:00Z");
        let cases = [
            ("", Ok((0, 0))),
            ("UTC", Ok((0, 0))),
            ("Etc/UTC", Ok((0, 0))),
            ("Etc/GMT+5", Ok((-5 * 3_600, -5 * 3_600))),
            ("Etc/GMT-14", Ok((14 * 3_600, 14 * 3_600))),
            ("America/New_York", Ok((-5 * 3_600, -4 * 3_600))),
            ("Asia/Kolkata", Ok((5 * 3_600 + 1_800, 5 * 3_600 + 1_800))),
            ("Etc/GMT-15", Err("unknown time zone Etc/GMT-15".to_string())),
            ("Mars/Olympus", Err("unknown time zone Mars/Olympus".to_string())),
            ("../etc", Err("time: invalid location name".to_string())),
        ];
        for (name, want) in cases {
            assert_eq!(load_location(name).map(|z| (z.offset_at(T0_S), z.offset_at(summer))), want, "{name}");
        }
    }

    #[test]
    fn named_zones_step_across_daylight_saving_changes() {
        // New York springs forward at 2024-03-10 02:00 local (07:00Z) and falls back at 2024-11-03 02:00
        // local (06:00Z): a 9 a.m. job runs at 14:00Z in winter time and at 13:00Z from the change on.
        let cases = [
            ("TZ=America/New_York 0 3 * * *", "2024-03-10T12:00:00Z", "2024-03-11T07:00:00Z"),
            ("TZ=America/New_York 0 9 * * *", "2024-03-08T15:00:00Z", "2024-03-09T14:00:00Z"),
            ("TZ=America/New_York 0 9 * * *", "2024-03-09T15:00:00Z", "2024-03-10T13:00:00Z"),
            // 01:30 happens twice on the fall-back day: the first is taken.
            ("TZ=America/New_York 30 1 * * *", "2024-11-02T12:00:00Z", "2024-11-03T05:30:00Z"),
        ];
        for (spec, after, want) in cases {
            let schedule = Schedule::parse_standard(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(schedule.next(at(after) * 1_000_000), Some(at(want)), "{spec} after {after}");
        }
    }

    #[test]
    fn civil_dates_round_trip() {
        for s in [0, T0_S, at("2024-02-29T12:34:56Z"), at("1969-12-31T23:59:59Z")] {
            let c = Civil::of(s);
            let back = civil_seconds(c.year, c.month, c.day, i64::from(c.hour * 3_600 + c.minute * 60 + c.second));
            assert_eq!(back, s);
        }
        assert_eq!(Civil::of(T0_S).weekday, 2, "2023-11-14 is a Tuesday");
        // Go's normalisation: February 31st is March 3rd (2023 is not a leap year).
        assert_eq!(civil_seconds(2023, 2, 31, 0), at("2023-03-03T00:00:00Z"));
    }
}
