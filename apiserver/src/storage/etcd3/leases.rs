//! [`LeaseManager`]: the etcd leases objects with a time to live are written under (events, kube's
//! `--event-ttl`), reused between writes as upstream's `lease_manager.go` reuses them, so that a burst of
//! events costs one `LeaseGrant`, not one per event.
//!
//! A lease granted for a TTL of `ttl` lives `ttl + reuse` seconds, where `reuse` is 5% of the TTL, at most
//! 60 s. A later write with the same TTL reuses it while the lease still outlives the write's own TTL and
//! will expire within `reuse` of it: no object lives shorter than its TTL, none more than `reuse` longer.
//! The clock is the runtime's (virtual time under simulation).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb::LeaseGrantRequest;
use tokio::time::Instant;

use super::client::EtcdClient;
use crate::storage::error::StorageError;

/// At most this much longer than asked may a reused lease live (`leaseReuseDurationSeconds`).
const MAX_REUSE_S: i64 = 60;
/// The fraction of the TTL a lease may outlive it by (`leaseReuseDurationPercent`).
const REUSE_PERCENT: f64 = 0.05;

/// Grants and reuses the leases of one store.
#[derive(Clone)]
pub struct LeaseManager {
    client: EtcdClient,
    last: Arc<Mutex<Option<Granted>>>,
}

/// The lease granted last.
#[derive(Clone, Copy, Debug)]
struct Granted {
    id: i64,
    expires: Instant,
}

impl LeaseManager {
    pub(crate) fn new(client: EtcdClient) -> LeaseManager {
        LeaseManager { client, last: Arc::new(Mutex::new(None)) }
    }

    /// The lease a write with time to live `ttl_s` goes under.
    pub(crate) async fn lease(&self, ttl_s: i64) -> Result<i64, StorageError> {
        let reuse_s = reuse_s(ttl_s);
        let now = Instant::now();
        let wanted = now + Duration::from_secs(ttl_s.max(0) as u64);
        if let Some(last) = *self.last.lock().expect("the lease lock is never poisoned") {
            let outlives = wanted < last.expires;
            let close_enough = wanted + Duration::from_secs(reuse_s as u64) > last.expires;
            if outlives && close_enough {
                return Ok(last.id);
            }
        }
        let granted = self
            .client
            .lease_grant(LeaseGrantRequest { ttl: ttl_s + reuse_s, id: 0 })
            .await
            .map_err(|status| super::etcd_error::storage_error(status, ""))?;
        let expires = now + Duration::from_secs((ttl_s + reuse_s).max(0) as u64);
        *self.last.lock().expect("the lease lock is never poisoned") = Some(Granted { id: granted.id, expires });
        Ok(granted.id)
    }
}

/// How much longer than `ttl_s` a lease may live.
fn reuse_s(ttl_s: i64) -> i64 {
    ((ttl_s as f64 * REUSE_PERCENT) as i64).min(MAX_REUSE_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_outlive_their_ttl_by_at_most_a_minute() {
        assert_eq!(reuse_s(3600), 60);
        assert_eq!(reuse_s(600), 30);
        assert_eq!(reuse_s(10), 0);
    }
}
