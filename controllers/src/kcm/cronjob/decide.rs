//! What one sync of a CronJob decides about starting a Job, once its Jobs are accounted for
//! (`syncCronJob` of `pkg/controller/cronjob/cronjob_controllerv2.go`, 1.32, from the time zone check to
//! the concurrency policy, and `formatSchedule`): an unknown `timeZone` or a suspended CronJob starts
//! nothing and is not requeued; an unparseable schedule neither; otherwise the most recent activation not
//! yet run is started unless it is past `startingDeadlineSeconds`, already run, or blocked by
//! `concurrencyPolicy: Forbid` while a Job is active; `Replace` deletes the active Jobs first. Every
//! outcome but those comes with the wait until the next activation.
//!
//! Sans-IO: the CronJob's JSON and the time in, the events to record and the verdict out.

use std::time::Duration;

use serde_json::Value;

use super::jobs::job_name;
use super::timing::{next_schedule_time, next_schedule_time_duration, rfc1123z_utc, too_late, Times};
use crate::runtime::events::EventType;
use crate::runtime::time::parse_time_us;
use apiserver::cron::{load_location, Schedule, Zone};

/// An event to record about the CronJob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: EventType,
    pub reason: &'static str,
    pub message: String,
}

fn warning(reason: &'static str, message: String) -> Note {
    Note { kind: EventType::Warning, reason, message }
}

/// What to do about the CronJob's schedule now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Start nothing; look again after this long (never, for `None`).
    Wait(Option<Duration>),
    /// Start the Job of the activation at `scheduled_s` (stamped in `zone`), after deleting the active
    /// Jobs if `replace`.
    Start { scheduled_s: i64, zone: Zone, replace: bool, schedule: Schedule },
}

/// The decision and the events that explain it, in upstream's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub notes: Vec<Note>,
    pub verdict: Verdict,
}

/// `spec.concurrencyPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concurrency {
    Allow,
    Forbid,
    Replace,
}

pub fn concurrency(cronjob: &Value) -> Concurrency {
    match cronjob.pointer("/spec/concurrencyPolicy").and_then(Value::as_str) {
        Some("Forbid") => Concurrency::Forbid,
        Some("Replace") => Concurrency::Replace,
        _ => Concurrency::Allow,
    }
}

/// What the schedule computation reads of `cronjob`.
pub fn times(cronjob: &Value) -> Times {
    let time_at = |pointer: &str| cronjob.pointer(pointer).and_then(Value::as_str).and_then(parse_time_us);
    Times {
        creation_us: time_at("/metadata/creationTimestamp").unwrap_or(0),
        last_schedule_us: time_at("/status/lastScheduleTime"),
        starting_deadline_s: cronjob.pointer("/spec/startingDeadlineSeconds").and_then(Value::as_i64),
    }
}

/// `spec.timeZone`, when set.
pub fn time_zone(cronjob: &Value) -> Option<&str> {
    cronjob.pointer("/spec/timeZone").and_then(Value::as_str)
}

/// `spec.schedule`.
pub fn schedule_text(cronjob: &Value) -> &str {
    cronjob.pointer("/spec/schedule").and_then(Value::as_str).unwrap_or("")
}

/// `formatSchedule`: the schedule with the `timeZone` as a `TZ=` prefix. A schedule that names a zone
/// itself is used as written (with an `UnsupportedSchedule` warning when `warn`); a `timeZone` that does
/// not load is left out (the sync refuses it before).
pub fn format_schedule(cronjob: &Value, warn: bool, notes: &mut Vec<Note>) -> String {
    let schedule = schedule_text(cronjob);
    if schedule.contains("TZ") {
        if warn {
            notes.push(warning(
                "UnsupportedSchedule",
                format!(
                    "CRON_TZ or TZ used in schedule {schedule:?} is not officially supported, see \
                     https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
                ),
            ));
        }
        return schedule.to_string();
    }
    match time_zone(cronjob) {
        Some(zone) if load_location(zone).is_ok() => format!("TZ={zone} {schedule}"),
        _ => schedule.to_string(),
    }
}

/// The active Jobs (`status.active`).
pub fn active(cronjob: &Value) -> &[Value] {
    cronjob.pointer("/status/active").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The part of `syncCronJob` after the Jobs are reconciled, for a CronJob not being deleted.
pub fn decide(cronjob: &Value, now_us: i64) -> Decision {
    let mut notes = Vec::new();
    let wait = |notes, after| Decision { notes, verdict: Verdict::Wait(after) };
    if let Some(zone) = time_zone(cronjob) {
        if let Err(err) = load_location(zone) {
            notes.push(warning("UnknownTimeZone", format!("invalid timeZone: {zone:?}: {err}")));
            return wait(notes, None);
        }
    }
    if cronjob.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return wait(notes, None);
    }
    let text = format_schedule(cronjob, true, &mut notes);
    let schedule = match Schedule::parse_standard(&text) {
        Ok(schedule) => schedule,
        Err(err) => {
            let written = schedule_text(cronjob);
            notes.push(warning("UnparseableSchedule", format!("unparseable schedule: {written:?} : {err}")));
            return wait(notes, None);
        }
    };
    let times = times(cronjob);
    let due = match next_schedule_time(&times, now_us, &schedule) {
        Ok(due) => due,
        Err(err) => {
            let written = schedule_text(cronjob);
            notes.push(warning("InvalidSchedule", format!("invalid schedule: {written} : {err}")));
            return wait(notes, None);
        }
    };
    let requeue = next_schedule_time_duration(&times, now_us, &schedule);
    let Some(due) = due else { return wait(notes, requeue) };
    if due.too_many_missed {
        notes.push(warning(
            "TooManyMissedTimes",
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew".into(),
        ));
    }
    if too_late(due.scheduled_s, times.starting_deadline_s, now_us) {
        notes.push(warning(
            "MissSchedule",
            format!("Missed scheduled time to start a job: {}", rfc1123z_utc(due.scheduled_s)),
        ));
        return wait(notes, requeue);
    }
    let name = job_name(cronjob.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""), due.scheduled_s);
    let namespace = cronjob.pointer("/metadata/namespace").cloned().unwrap_or(Value::Null);
    let already_active = active(cronjob).iter().any(|r| r["name"] == name.as_str() && r["namespace"] == namespace);
    if already_active || times.last_schedule_us == Some(due.scheduled_s * 1_000_000) {
        return wait(notes, requeue);
    }
    let policy = concurrency(cronjob);
    if policy == Concurrency::Forbid && !active(cronjob).is_empty() {
        notes.push(Note {
            kind: EventType::Normal,
            reason: "JobAlreadyActive",
            message: "Not starting job because prior execution is running and concurrency policy is Forbid".into(),
        });
        return wait(notes, requeue);
    }
    let verdict = Verdict::Start {
        scheduled_s: due.scheduled_s,
        zone: schedule.zone(),
        replace: policy == Concurrency::Replace,
        schedule,
    };
    Decision { notes, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 22:14:00Z, the first minute after the CronJob's creation at 22:13:20Z.
    const M1: i64 = 1_700_000_040;

    fn cronjob(spec: Value, status: Value) -> Value {
        let mut cj = json!({
            "metadata": {"name": "cj", "namespace": "ns", "uid": "u", "creationTimestamp": "2023-11-14T22:13:20Z"},
            "spec": {"schedule": "*/1 * * * *", "concurrencyPolicy": "Allow", "jobTemplate": {"spec": {}}},
            "status": status,
        });
        if let (Some(target), Value::Object(extra)) = (cj["spec"].as_object_mut(), spec) {
            target.extend(extra);
        }
        cj
    }

    fn active_job(name: &str) -> Value {
        json!({"kind": "Job", "namespace": "ns", "name": name, "uid": format!("{name}-uid"), "apiVersion": "batch/v1"})
    }

    fn us(s: i64) -> i64 {
        s * 1_000_000
    }

    fn start(scheduled_s: i64, replace: bool) -> Option<(i64, bool)> {
        Some((scheduled_s, replace))
    }

    #[test]
    fn concurrency_and_schedule_decisions() {
        let running = json!({"active": [active_job("cj-28333333")], "lastScheduleTime": "2023-11-14T22:13:00Z"});
        // (name, spec, status, now, what starts, the reasons recorded, the wait after a non-start)
        let cases: Vec<(&str, Value, Value, i64, Option<(i64, bool)>, Vec<&str>, Option<u64>)> = vec![
            ("nothing due", json!({}), json!({}), us(M1 - 10), None, vec![], Some(10_100)),
            ("first minute", json!({}), json!({}), us(M1) + 5, start(M1, false), vec![], None),
            ("allow runs beside an active job", json!({}), running.clone(), us(M1 + 1), start(M1, false), vec![], None),
            (
                "forbid waits for the active job",
                json!({"concurrencyPolicy": "Forbid"}),
                running.clone(),
                us(M1 + 1),
                None,
                vec!["JobAlreadyActive"],
                Some(59_100),
            ),
            (
                "forbid with nothing active",
                json!({"concurrencyPolicy": "Forbid"}),
                json!({"active": []}),
                us(M1 + 1),
                start(M1, false),
                vec![],
                None,
            ),
            (
                "replace",
                json!({"concurrencyPolicy": "Replace"}),
                running.clone(),
                us(M1 + 1),
                start(M1, true),
                vec![],
                None,
            ),
            (
                "already run",
                json!({}),
                json!({"lastScheduleTime": "2023-11-14T22:14:00Z"}),
                us(M1 + 1),
                None,
                vec![],
                Some(59_100),
            ),
            (
                "already active by name",
                json!({}),
                json!({"active": [active_job("cj-28333334")]}),
                us(M1 + 1),
                None,
                vec![],
                Some(59_100),
            ),
            ("suspended", json!({"suspend": true}), json!({}), us(M1 + 1), None, vec![], None),
            // The deadline raises the earliest time looked at, so an activation past it is never found (and
            // upstream's `MissSchedule` branch is out of reach); the wait is counted without the deadline.
            (
                "past the deadline",
                json!({"startingDeadlineSeconds": 10}),
                json!({}),
                us(M1 + 15),
                None,
                vec![],
                Some(45_100),
            ),
            (
                "within the deadline",
                json!({"startingDeadlineSeconds": 10}),
                json!({}),
                us(M1 + 9),
                start(M1, false),
                vec![],
                None,
            ),
            (
                "many missed",
                json!({}),
                json!({}),
                us(M1 + 200 * 60),
                start(M1 + 200 * 60, false),
                vec!["TooManyMissedTimes"],
                None,
            ),
            (
                "unknown zone",
                json!({"timeZone": "Mars/Olympus"}),
                json!({}),
                us(M1 + 1),
                None,
                vec!["UnknownTimeZone"],
                None,
            ),
            (
                "unparseable",
                json!({"schedule": "*/0 * * * *"}),
                json!({}),
                us(M1 + 1),
                None,
                vec!["UnparseableSchedule"],
                None,
            ),
            (
                "impossible",
                json!({"schedule": "59 23 31 2 *"}),
                json!({}),
                us(M1 + 1),
                None,
                vec!["InvalidSchedule"],
                None,
            ),
            (
                "zone in the schedule",
                json!({"schedule": "TZ=UTC */1 * * * *"}),
                json!({}),
                us(M1 + 1),
                start(M1, false),
                vec!["UnsupportedSchedule"],
                None,
            ),
        ];
        for (name, spec, status, now_us, want_start, want_reasons, want_wait_ms) in cases {
            let decision = decide(&cronjob(spec, status), now_us);
            let reasons: Vec<&str> = decision.notes.iter().map(|n| n.reason).collect();
            assert_eq!(reasons, want_reasons, "{name}");
            match decision.verdict {
                Verdict::Start { scheduled_s, replace, .. } => {
                    assert_eq!(Some((scheduled_s, replace)), want_start, "{name}")
                }
                Verdict::Wait(after) => {
                    assert_eq!(want_start, None, "{name}: nothing started");
                    assert_eq!(after, want_wait_ms.map(Duration::from_millis), "{name}");
                }
            }
        }
    }

    #[test]
    fn event_texts_match_upstream() {
        let forbid = cronjob(json!({"concurrencyPolicy": "Forbid"}), json!({"active": [active_job("cj-1")]}));
        let blocked = decide(&forbid, us(M1));
        assert_eq!(blocked.notes[0].kind, EventType::Normal);
        assert_eq!(
            blocked.notes[0].message,
            "Not starting job because prior execution is running and concurrency policy is Forbid"
        );
        let zone = decide(&cronjob(json!({"timeZone": "Mars/Olympus"}), json!({})), us(M1));
        assert_eq!(zone.notes[0].message, "invalid timeZone: \"Mars/Olympus\": unknown time zone Mars/Olympus");
        let bad = decide(&cronjob(json!({"schedule": "*/0 * * * *"}), json!({})), us(M1));
        assert_eq!(
            bad.notes[0].message,
            "unparseable schedule: \"*/0 * * * *\" : step of range should be a positive number: */0"
        );
        // A zone shifts the schedule: midnight five hours west is 05:00Z.
        let daily = cronjob(json!({"schedule": "0 0 * * *", "timeZone": "Etc/GMT+5"}), json!({}));
        let decision = decide(&daily, us(1_700_024_400 + 1));
        let Verdict::Start { scheduled_s, zone, .. } = decision.verdict else { panic!("{:?}", decision.verdict) };
        assert_eq!((scheduled_s, zone.offset_at(scheduled_s)), (1_700_024_400, -18_000));
        let mut notes = Vec::new();
        assert_eq!(format_schedule(&daily, true, &mut notes), "TZ=Etc/GMT+5 0 0 * * *");
        assert!(notes.is_empty());
    }
}
