//! [`SystemFields`]: where the registry gets what kube-apiserver takes from the machine (a random
//! `generateName` suffix, a random uid, the wall clock for `creationTimestamp` and `deletionTimestamp`).
//! Here both come from the caller, a seeded generator and a [`Clock`], so the registry is deterministic:
//! the same seed and clock give the same names, uids and timestamps.

use std::sync::{Arc, Mutex};

use rand::RngCore;

use crate::registry::names;

/// The time source: seconds since the Unix epoch. Simulations pass their simulated clock.
pub trait Clock: Send + Sync {
    fn now_unix_s(&self) -> i64;
}

/// A clock that stands still at a given instant, for tests.
#[derive(Clone, Copy, Debug)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_unix_s(&self) -> i64 {
        self.0
    }
}

/// The registry's generators, shared by the stores of one apiserver. Clones share the generator.
#[derive(Clone)]
pub struct SystemFields {
    rng: Arc<Mutex<Box<dyn RngCore + Send>>>,
    clock: Arc<dyn Clock>,
}

impl SystemFields {
    /// Generators over `rng` (seeded by the caller, e.g. a ChaCha stream derived from the scenario seed)
    /// and `clock`.
    pub fn new(rng: Box<dyn RngCore + Send>, clock: Arc<dyn Clock>) -> SystemFields {
        SystemFields { rng: Arc::new(Mutex::new(rng)), clock }
    }

    /// A name for `generateName` = `prefix`.
    pub(crate) fn generate_name(&self, prefix: &str) -> String {
        let mut rng = self.rng.lock().expect("the generator lock is never poisoned");
        names::generate_name(prefix, &mut **rng)
    }

    /// A random (version 4) UUID, as kube-apiserver gives every new object.
    pub(crate) fn new_uid(&self) -> String {
        let mut bytes = [0u8; 16];
        self.rng.lock().expect("the generator lock is never poisoned").fill_bytes(&mut bytes);
        uuid_v4(bytes)
    }

    /// The current time as a `metav1.Time` is written on the wire (RFC 3339, seconds, UTC).
    pub(crate) fn now(&self) -> String {
        rfc3339(self.clock.now_unix_s())
    }

    /// `secs` seconds from now, as [`SystemFields::now`] writes it: a graceful deletion's
    /// `deletionTimestamp` is the instant its grace period ends.
    pub(crate) fn now_plus(&self, secs: i64) -> String {
        rfc3339(self.clock.now_unix_s() + secs)
    }
}

/// A version 4 UUID from 16 random bytes (kube's `uuid.NewUUID` for uids and token ids).
pub(crate) fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The seconds since the epoch of a `YYYY-MM-DDTHH:MM:SSZ` timestamp (the form [`rfc3339`] writes), or
/// `None` for any other text: the registry reads back only timestamps it wrote.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'Z'
    {
        return None;
    }
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // days-from-civil, the inverse of the conversion in `rfc3339`.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (the proleptic Gregorian calendar, via the
/// days-to-civil conversion).
pub fn rfc3339(unix_s: i64) -> String {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3_600, secs % 3_600 / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn timestamps_parse_back() {
        for t in [0, 951_782_400, 1_700_000_000, 1_700_000_030, -86_401] {
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t), "{}", rfc3339(t));
        }
        assert_eq!(parse_rfc3339("2023-11-14T22:13:20.5Z"), None);
    }
}
