//! When a CronJob's next Job is due (`pkg/controller/cronjob/utils.go`, 1.32: `mostRecentScheduleTime`,
//! `nextScheduleTimeDuration`, `nextScheduleTime`): the most recent activation not yet run, how many were
//! missed (more than 100 is "many", worth a `TooManyMissedTimes` warning), and how long to wait for the next
//! one (plus upstream's `nextScheduleDelta` of 100 ms against clock skew).
//!
//! Sans-IO: times come in as unix microseconds; the schedule is [`Schedule`]. Upstream estimates the
//! number of missed activations from the gap between the first two after the earliest time, then walks
//! only the last couple of them; so does this.

use std::time::Duration;

use apiserver::cron::{Civil, Schedule, Zone};

/// `nextScheduleDelta`: requeues land this long after the activation.
pub const NEXT_SCHEDULE_DELTA_US: i64 = 100_000;
/// Above this many missed activations, the controller warns (`TooManyMissedTimes`).
pub const MANY_MISSED: i64 = 100;

/// What the schedule computation reads of a CronJob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    pub creation_us: i64,
    pub last_schedule_us: Option<i64>,
    pub starting_deadline_s: Option<i64>,
}

/// `missedSchedulesType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missed {
    None,
    Few,
    Many,
}

/// `mostRecentScheduleTime`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MostRecent {
    /// The last schedule time (else the creation time), raised to the starting deadline if asked.
    pub earliest_us: i64,
    /// The most recent activation at or before now, in unix seconds.
    pub most_recent_s: Option<i64>,
    pub missed: Missed,
}

/// The error upstream reports for a schedule that never fires twice (Feb 31st).
pub const TOO_CLOSE: &str = "time difference between two schedules is less than 1 second";

/// `mostRecentScheduleTime`.
pub fn most_recent_schedule_time(
    times: &Times,
    now_us: i64,
    schedule: &Schedule,
    include_starting_deadline: bool,
) -> Result<MostRecent, String> {
    let mut earliest_us = times.last_schedule_us.unwrap_or(times.creation_us);
    if let (true, Some(deadline_s)) = (include_starting_deadline, times.starting_deadline_s) {
        // Nothing older than the deadline will be started any more.
        earliest_us = earliest_us.max(now_us - deadline_s * 1_000_000);
    }
    let none = MostRecent { earliest_us, most_recent_s: None, missed: Missed::None };
    // Go's zero time (robfig giving up) is before any now: treat it as the error case below.
    let (Some(t1), Some(t2)) =
        (schedule.next(earliest_us), schedule.next(earliest_us).and_then(|t| schedule.next(t * 1_000_000)))
    else {
        return Err(TOO_CLOSE.into());
    };
    if now_us < t1 * 1_000_000 {
        return Ok(none);
    }
    if now_us < t2 * 1_000_000 {
        return Ok(MostRecent { most_recent_s: Some(t1), ..none });
    }
    let between_s = t2 - t1;
    if between_s < 1 {
        return Err(TOO_CLOSE.into());
    }
    // A rough count: how many gaps of the first interval fit between the first activation and now.
    let elapsed_s = (now_us - t1 * 1_000_000) / 1_000_000;
    let missed_count = elapsed_s / between_s + 1;
    // Start two intervals back so that irregular schedules still find their true last activation.
    let potential_earliest_s = t1 + (missed_count - 2) * between_s;
    let mut most_recent_s = None;
    let mut t = schedule.next(potential_earliest_s * 1_000_000);
    while let Some(at) = t.filter(|at| at * 1_000_000 <= now_us) {
        most_recent_s = Some(at);
        t = schedule.next(at * 1_000_000);
    }
    let missed = match missed_count {
        n if n > MANY_MISSED => Missed::Many,
        n if n > 0 => Missed::Few,
        _ => Missed::None,
    };
    Ok(MostRecent { earliest_us, most_recent_s, missed })
}

/// `nextScheduleTimeDuration`: how long until the activation after the most recent one, plus
/// [`NEXT_SCHEDULE_DELTA_US`]; `None` when the schedule never fires again. A time already past waits 0.
pub fn next_schedule_time_duration(times: &Times, now_us: i64, schedule: &Schedule) -> Option<Duration> {
    let from_us = match most_recent_schedule_time(times, now_us, schedule, false) {
        Err(_) => now_us,
        Ok(MostRecent { most_recent_s: Some(s), .. }) => s * 1_000_000,
        Ok(MostRecent { most_recent_s: None, missed: Missed::None, earliest_us }) => earliest_us,
        Ok(MostRecent { most_recent_s: None, .. }) => now_us,
    };
    let next_s = schedule.next(from_us)?;
    let delay_us = next_s * 1_000_000 + NEXT_SCHEDULE_DELTA_US - now_us;
    Some(Duration::from_micros(delay_us.max(0) as u64))
}

/// `nextScheduleTime`'s answer: the activation to run now, and whether many were missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub scheduled_s: i64,
    pub too_many_missed: bool,
}

/// `nextScheduleTime`: the activation to run now (at or before now, after the last one run and within the
/// starting deadline), if any.
pub fn next_schedule_time(times: &Times, now_us: i64, schedule: &Schedule) -> Result<Option<Due>, String> {
    let recent = most_recent_schedule_time(times, now_us, schedule, true)?;
    Ok(recent
        .most_recent_s
        .filter(|s| s * 1_000_000 <= now_us)
        .map(|scheduled_s| Due { scheduled_s, too_many_missed: recent.missed == Missed::Many }))
}

/// Whether the activation at `scheduled_s` is past its starting deadline (`tooLate`).
pub fn too_late(scheduled_s: i64, starting_deadline_s: Option<i64>, now_us: i64) -> bool {
    starting_deadline_s.is_some_and(|d| (scheduled_s + d) * 1_000_000 < now_us)
}

/// Go's `time.RFC3339` of `unix_s` on `zone`'s wall clock (`Z` for a zero offset).
pub fn rfc3339_in(unix_s: i64, zone: Zone) -> String {
    let offset_s = zone.offset_at(unix_s);
    let c = Civil::of(unix_s + offset_s);
    let offset = match offset_s {
        0 => "Z".to_string(),
        off => format!("{}{:02}:{:02}", if off < 0 { '-' } else { '+' }, off.abs() / 3_600, off.abs() % 3_600 / 60),
    };
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{offset}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// Go's `time.RFC1123Z` of `unix_s` in UTC ("Tue, 14 Nov 2023 22:14:00 +0000"), as `MissSchedule` says it.
pub fn rfc1123z_utc(unix_s: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let c = Civil::of(unix_s);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} +0000",
        DAYS[c.weekday as usize],
        c.day,
        MONTHS[c.month as usize - 1],
        c.year,
        c.hour,
        c.minute,
        c.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20Z.
    const T0_S: i64 = 1_700_000_000;
    const MIN: i64 = 60;

    fn us(s: i64) -> i64 {
        s * 1_000_000
    }

    fn times(creation_s: i64, last_s: Option<i64>, deadline_s: Option<i64>) -> Times {
        Times { creation_us: us(creation_s), last_schedule_us: last_s.map(us), starting_deadline_s: deadline_s }
    }

    /// 22:14:00, the first whole minute after T0.
    const M1: i64 = T0_S + 40;

    #[test]
    fn most_recent_schedule_time_counts_misses() {
        let minutely = Schedule::parse_standard("*/1 * * * *").unwrap();
        let hourly = Schedule::parse_standard("0 * * * *").unwrap();
        let weekday_mornings = Schedule::parse_standard("30 6-16/4 * * 1-5").unwrap();
        // (name, schedule, times, now, with deadline, earliest, most recent, missed)
        let cases = [
            ("before the first", &minutely, times(T0_S, None, None), T0_S + 10, false, T0_S, None, Missed::None),
            ("exactly the first", &minutely, times(T0_S, None, None), M1, false, T0_S, Some(M1), Missed::None),
            (
                "between first and second",
                &minutely,
                times(T0_S, None, None),
                M1 + 30,
                false,
                T0_S,
                Some(M1),
                Missed::None,
            ),
            ("two missed", &minutely, times(T0_S, None, None), M1 + MIN + 5, false, T0_S, Some(M1 + MIN), Missed::Few),
            (
                "from the last run",
                &minutely,
                times(T0_S, Some(M1 + 5 * MIN), None),
                M1 + 5 * MIN + 1,
                false,
                M1 + 5 * MIN,
                None,
                Missed::None,
            ),
            (
                "a hundred missed",
                &minutely,
                times(T0_S, None, None),
                M1 + 99 * MIN,
                false,
                T0_S,
                Some(M1 + 99 * MIN),
                Missed::Few,
            ),
            (
                "a hundred and one missed",
                &minutely,
                times(T0_S, None, None),
                M1 + 100 * MIN,
                false,
                T0_S,
                Some(M1 + 100 * MIN),
                Missed::Many,
            ),
            (
                "years missed",
                &hourly,
                times(T0_S, None, None),
                T0_S + 3 * 365 * 86_400,
                false,
                T0_S,
                Some(1_794_607_200),
                Missed::Many,
            ),
            // The deadline raises the earliest time: only the last two minutes count.
            (
                "deadline",
                &minutely,
                times(T0_S, None, Some(120)),
                M1 + 500 * MIN + 30,
                true,
                M1 + 498 * MIN + 30,
                Some(M1 + 500 * MIN),
                Missed::Few,
            ),
            (
                "deadline ignored",
                &minutely,
                times(T0_S, None, Some(120)),
                M1 + 500 * MIN + 30,
                false,
                T0_S,
                Some(M1 + 500 * MIN),
                Missed::Many,
            ),
            // An irregular schedule: from Tuesday 22:13 to Wednesday 12:00 the last is 10:30.
            (
                "irregular",
                &weekday_mornings,
                times(T0_S, None, None),
                T0_S + 13 * 3_600 + 46 * MIN + 40,
                false,
                T0_S,
                Some(1_700_044_200),
                Missed::Few,
            ),
        ];
        for (name, schedule, times, now_s, deadline, earliest_s, most_recent_s, missed) in cases {
            let got = most_recent_schedule_time(&times, us(now_s), schedule, deadline).unwrap();
            assert_eq!(got, MostRecent { earliest_us: us(earliest_s), most_recent_s, missed }, "{name}");
        }
        let impossible = Schedule::parse_standard("59 23 31 2 *").unwrap();
        assert_eq!(
            most_recent_schedule_time(&times(T0_S, None, None), us(T0_S), &impossible, false),
            Err(TOO_CLOSE.into())
        );
    }

    #[test]
    fn next_schedule_time_applies_the_deadline() {
        let minutely = Schedule::parse_standard("*/1 * * * *").unwrap();
        let cases = [
            ("nothing due yet", times(T0_S, None, None), T0_S + 1, None),
            (
                "the first minute",
                times(T0_S, None, None),
                M1 + 2,
                Some(Due { scheduled_s: M1, too_many_missed: false }),
            ),
            ("already run", times(T0_S, Some(M1), None), M1 + 2, None),
            (
                "many missed",
                times(T0_S, None, None),
                M1 + 200 * MIN,
                Some(Due { scheduled_s: M1 + 200 * MIN, too_many_missed: true }),
            ),
            (
                "many missed within a deadline",
                times(T0_S, None, Some(300)),
                M1 + 200 * MIN,
                Some(Due { scheduled_s: M1 + 200 * MIN, too_many_missed: false }),
            ),
        ];
        for (name, times, now_s, want) in cases {
            assert_eq!(next_schedule_time(&times, us(now_s), &minutely), Ok(want), "{name}");
        }
        assert!(too_late(M1, Some(10), us(M1 + 11)));
        assert!(!too_late(M1, Some(10), us(M1 + 10)));
        assert!(!too_late(M1, None, us(M1 + 10_000)));
    }

    #[test]
    fn requeues_wait_for_the_next_activation_plus_the_delta() {
        let minutely = Schedule::parse_standard("*/1 * * * *").unwrap();
        let cases = [
            // From creation: the first minute, 40 s away.
            ("fresh", times(T0_S, None, None), us(T0_S), 40_100_000),
            // Just after a run: the next minute.
            ("after a run", times(T0_S, Some(M1), None), us(M1) + 500_000, 59_600_000),
            // Missed runs: the minute after the most recent one.
            ("missed", times(T0_S, None, None), us(M1 + 3 * MIN + 15), 45_100_000),
        ];
        for (name, times, now_us, want_us) in cases {
            assert_eq!(
                next_schedule_time_duration(&times, now_us, &minutely),
                Some(Duration::from_micros(want_us)),
                "{name}"
            );
        }
    }

    #[test]
    fn timestamps_format_as_go() {
        assert_eq!(rfc3339_in(M1, Zone::UTC), "2023-11-14T22:14:00Z");
        assert_eq!(rfc3339_in(M1, Zone::Fixed { offset_s: -5 * 3_600 }), "2023-11-14T17:14:00-05:00");
        assert_eq!(rfc3339_in(M1, Zone::Fixed { offset_s: 5 * 3_600 + 1_800 }), "2023-11-15T03:44:00+05:30");
        assert_eq!(rfc1123z_utc(M1), "Tue, 14 Nov 2023 22:14:00 +0000");
    }
}
