//! The sans-IO core of leader election: client-go 1.32's `LeaderElector` bookkeeping and its
//! `tryAcquireOrRenew` decision (`staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go`), and the
//! `LeaderElectionRecord` a `coordination.k8s.io/v1` Lease carries in its spec (`resourcelock/leaselock.go`).
//!
//! Nothing here performs a request or reads a clock. One try is `Elector::begin` (stamps the record we would
//! write), then the optimistic `Elector::fast_path` write if we lead, then, failing that, a GET whose answer
//! `Elector::try_acquire_or_renew` turns into a create, an update or "not acquired"; the caller performs the
//! write and feeds its outcome back (`write_succeeded` / `write_failed`).
//!
//! As upstream, expiry is judged only by the local clock: a lease is taken over once it has gone
//! `leaseDurationSeconds` (of the record last observed) without its record changing, however old the
//! record's own `renewTime` is. The holders' clocks may disagree; their stamps only signal a change.

use std::time::Duration;

use rand::Rng;
use serde_json::{json, Value};

use crate::runtime::time::{format_micro_time, parse_time_us};

/// client-go's `JitterFactor`: the acquire loop waits `retry_period * (1 + rand * 1.2)` between tries, and
/// the renew deadline must exceed `retry_period * 1.2`.
pub const JITTER_FACTOR: f64 = 1.2;

/// What the lease says about its holder (`resourcelock.LeaderElectionRecord`). The times are MicroTime
/// strings as the Lease carries them ("2026-01-02T03:04:05.123456Z"); empty when the lease has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    pub holder_identity: String,
    pub lease_duration_s: i32,
    pub acquire_time: String,
    pub renew_time: String,
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    /// `LeaseSpecToLeaderElectionRecord`: absent or null fields stay at their zero values.
    pub fn from_lease_spec(spec: &Value) -> LeaderElectionRecord {
        let text = |field: &str| spec.get(field).and_then(Value::as_str).unwrap_or_default().to_string();
        let int = |field: &str| spec.get(field).and_then(Value::as_i64).unwrap_or_default() as i32;
        LeaderElectionRecord {
            holder_identity: text("holderIdentity"),
            lease_duration_s: int("leaseDurationSeconds"),
            acquire_time: text("acquireTime"),
            renew_time: text("renewTime"),
            leader_transitions: int("leaseTransitions"),
        }
    }

    /// `LeaderElectionRecordToLeaseSpec`: every field is written; a zero time is null, as a zero MicroTime
    /// marshals.
    pub fn to_lease_spec(&self) -> Value {
        let time = |t: &str| if t.is_empty() { Value::Null } else { Value::String(t.to_string()) };
        json!({
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_s,
            "acquireTime": time(&self.acquire_time),
            "renewTime": time(&self.renew_time),
            "leaseTransitions": self.leader_transitions,
        })
    }

    /// The record and `metadata.resourceVersion` of a Lease object as a GET returns it.
    pub fn from_lease(lease: &Value) -> (LeaderElectionRecord, String) {
        let record = LeaderElectionRecord::from_lease_spec(lease.get("spec").unwrap_or(&Value::Null));
        let rv = lease.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
        (record, rv.to_string())
    }

    /// The Lease object a create (no `resource_version`) or an update (the version read) sends.
    pub fn to_lease(&self, namespace: &str, name: &str, resource_version: Option<&str>) -> Value {
        let mut metadata = json!({ "name": name, "namespace": namespace });
        if let Some(rv) = resource_version {
            metadata["resourceVersion"] = Value::String(rv.to_string());
        }
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": self.to_lease_spec(),
        })
    }

    /// What upstream compares to notice that the record changed: the JSON of its `LeaderElectionRecord`,
    /// whose times are `metav1.Time` and so marshal at whole seconds.
    fn raw(&self) -> RawRecord {
        RawRecord {
            holder_identity: self.holder_identity.clone(),
            lease_duration_s: self.lease_duration_s,
            acquire_time: TimeKey::of(&self.acquire_time),
            renew_time: TimeKey::of(&self.renew_time),
            leader_transitions: self.leader_transitions,
        }
    }
}

/// A record as upstream's `observedRawRecord` bytes tell records apart.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RawRecord {
    holder_identity: String,
    lease_duration_s: i32,
    acquire_time: TimeKey,
    renew_time: TimeKey,
    leader_transitions: i32,
}

/// A time at `metav1.Time`'s JSON precision. A string that does not parse is kept whole, so that a change
/// to it still counts as a change.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TimeKey {
    Zero,
    UnixS(i64),
    Unparsed(String),
}

impl TimeKey {
    fn of(time: &str) -> TimeKey {
        if time.is_empty() {
            return TimeKey::Zero;
        }
        match parse_time_us(time) {
            Some(unix_us) => TimeKey::UnixS(unix_us.div_euclid(1_000_000)),
            None => TimeKey::Unparsed(time.to_string()),
        }
    }
}

/// `wait.Jitter`: `duration + rand * max_factor * duration`, in whole nanoseconds as Go's `time.Duration`.
pub fn jitter(duration: Duration, max_factor: f64, rng: &mut impl Rng) -> Duration {
    let extra_ns = rng.random::<f64>() * max_factor * duration.as_nanos() as f64;
    duration + Duration::from_nanos(extra_ns as u64)
}

/// Why a lease lock operation failed. Upstream treats every failure alike (the try fails); the kind is
/// kept for the logs and for callers that care.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// 409: the lease changed since it was read (or, on create, someone created it first).
    #[error("{0}")]
    Conflict(String),
    /// 404: the lease is gone.
    #[error("{0}")]
    NotFound(String),
    /// Anything else: a timeout, a refused connection, a 5xx.
    #[error("{0}")]
    Other(String),
}

/// The election's timing and our identity (the parts of `LeaderElectionConfig` the decision uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElectorConfig {
    pub identity: String,
    /// How long a candidate waits, by its own clock, without seeing the record change before taking over.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a renewal before it gives up leading.
    pub renew_deadline: Duration,
    /// The pause between tries.
    pub retry_period: Duration,
}

impl ElectorConfig {
    /// kube-controller-manager's `--leader-elect-lease-duration` default.
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
    /// kube-controller-manager's `--leader-elect-renew-deadline` default.
    pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
    /// kube-controller-manager's `--leader-elect-retry-period` default.
    pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

    /// kube-controller-manager's defaults for `identity`.
    pub fn new(identity: impl Into<String>) -> ElectorConfig {
        ElectorConfig {
            identity: identity.into(),
            lease_duration: ElectorConfig::DEFAULT_LEASE_DURATION,
            renew_deadline: ElectorConfig::DEFAULT_RENEW_DEADLINE,
            retry_period: ElectorConfig::DEFAULT_RETRY_PERIOD,
        }
    }
}

/// A configuration `NewLeaderElector` refuses, with its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub &'static str);

/// What to do with the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The lease does not exist: create it with this record.
    Create(LeaderElectionRecord),
    /// Replace the lease's record, conditional on the resource version.
    Update(LeaderElectionRecord, String),
    /// Someone else holds a lease we have not yet seen expire: the try failed.
    NotAcquired,
}

/// One `tryAcquireOrRenew`: when it began and the record it would write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The local monotonic time the try began (upstream's `now`), against which expiry is judged.
    pub now: Duration,
    /// Us as holder, stamped with the try's start for both times, no transitions: what a create writes,
    /// and what an update writes once corrected.
    pub record: LeaderElectionRecord,
}

/// client-go's `LeaderElector` state: the record last observed and when, by the local clock.
#[derive(Clone, Debug)]
pub struct Elector {
    config: ElectorConfig,
    observed_record: LeaderElectionRecord,
    /// The last record a GET returned, as upstream compares it; `None` before any.
    observed_raw: Option<RawRecord>,
    /// Local monotonic time `observed_record` was last set.
    observed_time: Duration,
    /// The resource version of the lease object the lock last held (upstream's `LeaseLock.lease`): set by a
    /// GET or a successful write, lost when a GET or a create fails (the typed client then leaves an empty
    /// object, whose update never reaches the server).
    lease_rv: Option<String>,
}

impl Elector {
    /// `NewLeaderElector`'s checks, in its order and with its messages.
    pub fn new(config: ElectorConfig) -> Result<Elector, ConfigError> {
        // Go scales the retry period as a float64 count of nanoseconds and truncates it back to a Duration.
        let jittered_retry_ns = (JITTER_FACTOR * config.retry_period.as_nanos() as f64) as u128;
        if config.lease_duration <= config.renew_deadline {
            return Err(ConfigError("leaseDuration must be greater than renewDeadline"));
        }
        if config.renew_deadline.as_nanos() <= jittered_retry_ns {
            return Err(ConfigError("renewDeadline must be greater than retryPeriod*JitterFactor"));
        }
        if config.lease_duration.is_zero() {
            return Err(ConfigError("leaseDuration must be greater than zero"));
        }
        if config.renew_deadline.is_zero() {
            return Err(ConfigError("renewDeadline must be greater than zero"));
        }
        if config.retry_period.is_zero() {
            return Err(ConfigError("retryPeriod must be greater than zero"));
        }
        if config.identity.is_empty() {
            return Err(ConfigError("Lock identity is empty"));
        }
        Ok(Elector {
            config,
            observed_record: LeaderElectionRecord::default(),
            observed_raw: None,
            observed_time: Duration::ZERO,
            lease_rv: None,
        })
    }

    pub fn config(&self) -> &ElectorConfig {
        &self.config
    }

    /// `IsLeader`: the record last observed (read or written) names us.
    pub fn is_leader(&self) -> bool {
        self.observed_record.holder_identity == self.config.identity
    }

    /// `GetLeader`: the holder last observed, empty if none yet.
    pub fn leader(&self) -> &str {
        &self.observed_record.holder_identity
    }

    pub fn observed_record(&self) -> &LeaderElectionRecord {
        &self.observed_record
    }

    /// `isLeaseValid`: the observed record's lease duration has not yet run out since we observed it.
    /// The duration is the record's own, not our configuration's.
    pub fn is_lease_valid(&self, now: Duration) -> bool {
        let expiry_ns =
            self.observed_time.as_nanos() as i128 + i128::from(self.observed_record.lease_duration_s) * 1_000_000_000;
        expiry_ns > now.as_nanos() as i128
    }

    /// Starts a try at local time `now`, stamping its record with `now_unix_us`.
    pub fn begin(&self, now: Duration, now_unix_us: i64) -> Attempt {
        let stamp = format_micro_time(now_unix_us);
        Attempt {
            now,
            record: LeaderElectionRecord {
                holder_identity: self.config.identity.clone(),
                lease_duration_s: self.config.lease_duration.as_secs() as i32,
                acquire_time: stamp.clone(),
                renew_time: stamp,
                leader_transitions: 0,
            },
        }
    }

    /// Step 1, the fast path: while we lead and our lease is still valid, renew optimistically against
    /// the version we last wrote, without reading first. `None`: read the lease (`try_acquire_or_renew`).
    pub fn fast_path(&self, attempt: &Attempt) -> Option<Action> {
        if !self.is_leader() || !self.is_lease_valid(attempt.now) {
            return None;
        }
        let rv = self.lease_rv.clone()?;
        let record = LeaderElectionRecord {
            acquire_time: self.observed_record.acquire_time.clone(),
            leader_transitions: self.observed_record.leader_transitions,
            ..attempt.record.clone()
        };
        Some(Action::Update(record, rv))
    }

    /// Steps 2 to 4: what to do given the GET's answer (`None`: not found), received at local time `now`.
    pub fn try_acquire_or_renew(
        &mut self,
        attempt: &Attempt,
        got: Option<(LeaderElectionRecord, String)>,
        now: Duration,
    ) -> Action {
        let Some((current, rv)) = got else {
            self.lease_rv = None;
            return Action::Create(attempt.record.clone());
        };
        self.lease_rv = Some(rv.clone());
        // Only a change to the record restarts the expiry clock; a record seen again unchanged does not.
        let raw = current.raw();
        if self.observed_raw.as_ref() != Some(&raw) {
            self.observed_record = current.clone();
            self.observed_time = now;
            self.observed_raw = Some(raw);
        }
        if !current.holder_identity.is_empty() && self.is_lease_valid(attempt.now) && !self.is_leader() {
            return Action::NotAcquired;
        }
        let mut record = attempt.record.clone();
        if self.is_leader() {
            record.acquire_time = current.acquire_time;
            record.leader_transitions = current.leader_transitions;
        } else {
            record.leader_transitions = current.leader_transitions + 1;
        }
        Action::Update(record, rv)
    }

    /// A GET failed (not a 404): the try fails, and the lock holds no lease object any more.
    pub fn get_failed(&mut self) {
        self.lease_rv = None;
    }

    /// The write `action` asked for succeeded at local time `now`, leaving the lease at `new_rv`: we hold
    /// the lease, observed now.
    pub fn write_succeeded(&mut self, action: Action, new_rv: String, now: Duration) {
        let (Action::Create(record) | Action::Update(record, _)) = action else {
            return;
        };
        self.observed_record = record;
        self.observed_time = now;
        self.lease_rv = Some(new_rv);
    }

    /// The write `action` asked for failed (a conflict or anything else): the try fails and nothing
    /// observed changes. A failed create leaves the lock without a lease object.
    pub fn write_failed(&mut self, action: &Action) {
        if matches!(action, Action::Create(_)) {
            self.lease_rv = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    const ME: &str = "node-a_1";
    const OTHER: &str = "node-b_2";
    /// 2026-01-02T03:04:05.123456Z: the unix clock at local time zero.
    const EPOCH_US: i64 = 1_767_323_045_123_456;
    /// 2020-06-01T00:00:00Z: a stamp years older than any local time in these tests.
    const OLD_US: i64 = 1_590_969_600_000_000;

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    fn stamp(at: Duration) -> String {
        format_micro_time(EPOCH_US + at.as_micros() as i64)
    }

    fn record(holder: &str, lease_s: i32, renew_us: i64, transitions: i32) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: holder.to_string(),
            lease_duration_s: lease_s,
            acquire_time: format_micro_time(OLD_US),
            renew_time: format_micro_time(renew_us),
            leader_transitions: transitions,
        }
    }

    fn elector() -> Elector {
        Elector::new(ElectorConfig::new(ME)).unwrap()
    }

    /// One slow-path try at local time `at` whose GET answers `got` with resource version "7".
    fn slow(e: &mut Elector, at: Duration, got: Option<LeaderElectionRecord>) -> Action {
        let attempt = e.begin(at, EPOCH_US + at.as_micros() as i64);
        e.try_acquire_or_renew(&attempt, got.map(|r| (r, "7".to_string())), at)
    }

    /// Our record as a try at `at` writes it, with the given acquire time and transitions.
    fn ours(at: Duration, acquired: &str, transitions: i32) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: ME.to_string(),
            lease_duration_s: 15,
            acquire_time: acquired.to_string(),
            renew_time: stamp(at),
            leader_transitions: transitions,
        }
    }

    #[test]
    fn acquire_decisions_follow_the_observed_clock() {
        let r1 = record(OTHER, 15, OLD_US, 3);
        let r2 = record(OTHER, 15, OLD_US + 2_000_000, 3);
        let same_second = record(OTHER, 15, OLD_US + 700_000, 3);
        let takeover = |at: f64| Action::Update(ours(s(at), &stamp(s(at)), 4), "7".to_string());
        let cases: Vec<(&str, Vec<(f64, Option<LeaderElectionRecord>)>, Action)> = vec![
            ("absent: create", vec![(0.0, None)], Action::Create(ours(s(0.0), &stamp(s(0.0)), 0))),
            ("held, renewTime years old, first seen now", vec![(0.0, Some(r1.clone()))], Action::NotAcquired),
            (
                "unchanged for just under 15s",
                vec![(0.0, Some(r1.clone())), (14.999, Some(r1.clone()))],
                Action::NotAcquired,
            ),
            ("unchanged for 15s: take over", vec![(0.0, Some(r1.clone())), (15.0, Some(r1.clone()))], takeover(15.0)),
            (
                "a change restarts the clock",
                vec![(0.0, Some(r1.clone())), (10.0, Some(r2.clone())), (24.0, Some(r2.clone()))],
                Action::NotAcquired,
            ),
            (
                "15s after the change: take over",
                vec![(0.0, Some(r1.clone())), (10.0, Some(r2.clone())), (25.0, Some(r2.clone()))],
                takeover(25.0),
            ),
            (
                "the record's lease duration counts, not ours",
                vec![(0.0, Some(record(OTHER, 60, OLD_US, 3))), (59.0, Some(record(OTHER, 60, OLD_US, 3)))],
                Action::NotAcquired,
            ),
            ("a lease without holder is taken at once", vec![(0.0, Some(record("", 15, OLD_US, 3)))], takeover(0.0)),
            (
                "a renewTime change within the same second is not a change",
                vec![(0.0, Some(r1.clone())), (10.0, Some(same_second.clone())), (15.0, Some(same_second))],
                takeover(15.0),
            ),
        ];
        for (name, gets, want) in cases {
            let mut e = elector();
            let mut last = Action::NotAcquired;
            for (at, got) in gets {
                last = slow(&mut e, s(at), got);
            }
            assert_eq!(last, want, "{name}");
            assert!(!e.is_leader(), "{name}: nothing was written yet");
        }
    }

    #[test]
    fn renewals_keep_acquire_time_and_transitions() {
        // We took the lease over at 20s (transitions 3 -> 4) and wrote it as version "8".
        let mut e = elector();
        slow(&mut e, s(0.0), Some(record(OTHER, 15, OLD_US, 3)));
        let took = slow(&mut e, s(20.0), Some(record(OTHER, 15, OLD_US, 3)));
        assert_eq!(took, Action::Update(ours(s(20.0), &stamp(s(20.0)), 4), "7".to_string()));
        e.write_succeeded(took, "8".to_string(), s(20.1));
        assert!(e.is_leader());
        assert_eq!(e.leader(), ME);

        // Fast path, while our own observation is fresh: no read, the version we wrote.
        let at = s(22.0);
        let attempt = e.begin(at, EPOCH_US + at.as_micros() as i64);
        let fast = e.fast_path(&attempt);
        assert_eq!(fast, Some(Action::Update(ours(at, &stamp(s(20.0)), 4), "8".to_string())));
        e.write_succeeded(fast.unwrap(), "9".to_string(), s(22.1));
        assert_eq!(e.observed_record().renew_time, stamp(at));

        // Slow path (the fast write failed): the lease read back still names us.
        let at = s(24.0);
        let attempt = e.begin(at, EPOCH_US + at.as_micros() as i64);
        let fast = e.fast_path(&attempt).unwrap();
        e.write_failed(&fast);
        let read = ours(s(22.0), &stamp(s(20.0)), 4);
        let slow_action = e.try_acquire_or_renew(&attempt, Some((read, "9".to_string())), s(24.1));
        assert_eq!(slow_action, Action::Update(ours(at, &stamp(s(20.0)), 4), "9".to_string()));

        // Not written, but read at 24.1s: the fast path lasts until a whole lease after that reading.
        assert!(e.fast_path(&e.begin(s(24.1 + 14.9), 0)).is_some());
        assert_eq!(e.fast_path(&e.begin(s(24.1 + 15.0), 0)), None);
    }

    #[test]
    fn failed_writes_mean_not_acquired() {
        // A takeover whose update conflicts: still not the leader, and no fast path next time.
        let mut e = elector();
        slow(&mut e, s(0.0), Some(record(OTHER, 15, OLD_US, 3)));
        let takeover = slow(&mut e, s(15.0), Some(record(OTHER, 15, OLD_US, 3)));
        assert!(matches!(takeover, Action::Update(..)));
        e.write_failed(&takeover);
        assert!(!e.is_leader());
        assert_eq!(e.fast_path(&e.begin(s(16.0), 0)), None);
        // The other holder had renewed: the next read sees a change and backs off.
        assert_eq!(slow(&mut e, s(17.0), Some(record(OTHER, 15, OLD_US + 16_000_000, 3))), Action::NotAcquired);

        // A create that loses the race: not the leader, no lease object held.
        let mut e = elector();
        let create = slow(&mut e, s(0.0), None);
        e.write_failed(&create);
        assert!(!e.is_leader());
        assert_eq!(e.fast_path(&e.begin(s(1.0), 0)), None);

        // A leader whose fast renewal conflicts because another took over: the read shows the new holder.
        let mut e = elector();
        let create = slow(&mut e, s(0.0), None);
        e.write_succeeded(create, "1".to_string(), s(0.0));
        let attempt = e.begin(s(2.0), 0);
        let fast = e.fast_path(&attempt).unwrap();
        e.write_failed(&fast);
        assert!(e.is_leader(), "a failed write changes nothing observed");
        let after = e.try_acquire_or_renew(&attempt, Some((record(OTHER, 15, OLD_US, 1), "5".to_string())), s(2.0));
        assert_eq!(after, Action::NotAcquired);
        assert!(!e.is_leader());
        assert_eq!(e.leader(), OTHER);
    }

    #[test]
    fn config_validation_matches_new_leader_elector() {
        let config = |lease: f64, renew: f64, retry: f64, identity: &str| ElectorConfig {
            identity: identity.to_string(),
            lease_duration: s(lease),
            renew_deadline: s(renew),
            retry_period: s(retry),
        };
        let cases = [
            (config(15.0, 10.0, 2.0, ME), None),
            (config(10.0, 10.0, 2.0, ME), Some("leaseDuration must be greater than renewDeadline")),
            (config(0.0, 0.0, 0.0, ME), Some("leaseDuration must be greater than renewDeadline")),
            (config(15.0, 2.4, 2.0, ME), Some("renewDeadline must be greater than retryPeriod*JitterFactor")),
            (config(15.0, 2.401, 2.0, ME), None),
            (config(15.0, 10.0, 0.0, ME), Some("retryPeriod must be greater than zero")),
            (config(15.0, 10.0, 2.0, ""), Some("Lock identity is empty")),
        ];
        for (config, want) in cases {
            let got = Elector::new(config.clone()).err().map(|e| e.to_string());
            assert_eq!(got.as_deref(), want, "{config:?}");
        }
        assert_eq!(ElectorConfig::new(ME), config(15.0, 10.0, 2.0, ME));
    }

    #[test]
    fn records_convert_to_and_from_lease_specs() {
        let full = json!({
            "holderIdentity": ME, "leaseDurationSeconds": 15, "acquireTime": "2026-01-02T03:04:05.123456Z",
            "renewTime": "2026-01-02T03:04:07.000001Z", "leaseTransitions": 4,
        });
        let full_record = LeaderElectionRecord {
            holder_identity: ME.to_string(),
            lease_duration_s: 15,
            acquire_time: "2026-01-02T03:04:05.123456Z".to_string(),
            renew_time: "2026-01-02T03:04:07.000001Z".to_string(),
            leader_transitions: 4,
        };
        let cases = [
            (full.clone(), full_record.clone()),
            (json!({}), LeaderElectionRecord::default()),
            (
                json!({"holderIdentity": null, "renewTime": null, "leaseDurationSeconds": 60}),
                LeaderElectionRecord { lease_duration_s: 60, ..LeaderElectionRecord::default() },
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(LeaderElectionRecord::from_lease_spec(&spec), want, "{spec}");
        }
        assert_eq!(full_record.to_lease_spec(), full);
        let empty = LeaderElectionRecord::default().to_lease_spec();
        assert_eq!(
            empty,
            json!({"holderIdentity": "", "leaseDurationSeconds": 0, "acquireTime": null,
            "renewTime": null, "leaseTransitions": 0})
        );

        let lease = full_record.to_lease("kube-system", "kube-controller-manager", Some("42"));
        assert_eq!(
            lease["metadata"],
            json!({"name": "kube-controller-manager", "namespace": "kube-system",
            "resourceVersion": "42"})
        );
        assert_eq!(LeaderElectionRecord::from_lease(&lease), (full_record, "42".to_string()));
    }

    #[test]
    fn jitter_stays_within_client_go_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let draws: Vec<Duration> = (0..1000).map(|_| jitter(s(2.0), JITTER_FACTOR, &mut rng)).collect();
        assert!(draws.iter().all(|d| *d >= s(2.0) && *d < s(4.4)));
        assert!(draws.iter().any(|d| *d < s(2.5)) && draws.iter().any(|d| *d > s(3.9)));
        let mut again = ChaCha8Rng::seed_from_u64(7);
        assert_eq!(jitter(s(2.0), JITTER_FACTOR, &mut again), draws[0]);
    }
}
