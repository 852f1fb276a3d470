//! A node's heartbeat Lease, as the kubelet's node lease controller keeps it
//! (`staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go`, `pkg/kubelet/nodelease`, 1.32):
//! the Lease `<node>` in `kube-node-lease`, held by the node's name for 40 s, its `renewTime` renewed every
//! 10 s (a quarter of the duration, with 4 % jitter), owned by the Node. A renewal updates the lease last
//! written, up to 5 times in a row; a conflict or five failures fall back to reading the lease (creating it
//! if missing, retried with a back-off from 100 ms doubling to 7 s), then updating that.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::runtime::time::format_micro_time;

/// Where node leases live.
pub const LEASE_NAMESPACE: &str = "kube-node-lease";
/// The kubelet's `nodeLeaseDurationSeconds` default.
pub const LEASE_DURATION_S: i64 = 40;
/// `NodeLeaseRenewIntervalFraction` (0.25) of the duration.
pub const RENEW_INTERVAL: Duration = Duration::from_secs(10);
/// `wait.JitterUntil`'s factor for the renewals.
pub const RENEW_JITTER: f64 = 0.04;
/// `maxUpdateRetries`.
const MAX_UPDATE_RETRIES: usize = 5;
/// `backoffEnsureLease`: the first wait and `maxBackoff`.
const ENSURE_BACKOFF_INITIAL: Duration = Duration::from_millis(100);
const ENSURE_BACKOFF_MAX: Duration = Duration::from_secs(7);

/// `newLease`: `base` (or a fresh lease held by `node`) renewed at `now_us`, owned by the Node once its UID
/// is known (`setNodeOwnerFunc`, which leaves existing owner references alone).
pub fn lease_object(node: &str, node_uid: Option<&str>, now_us: i64, base: Option<&Value>) -> Value {
    let mut lease = base.cloned().unwrap_or_else(|| {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": node, "namespace": LEASE_NAMESPACE},
            "spec": {"holderIdentity": node, "leaseDurationSeconds": LEASE_DURATION_S},
        })
    });
    lease["spec"]["renewTime"] = json!(format_micro_time(now_us));
    let owned = lease.pointer("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
    if let (false, Some(uid)) = (owned, node_uid) {
        lease["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid}]);
    }
    lease
}

/// One node's lease controller.
pub struct LeaseController {
    client: Arc<Client>,
    node: String,
    node_uid: Option<String>,
    now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// The lease as last written or read (`latestLease`).
    latest: Option<Value>,
}

impl LeaseController {
    pub fn new(
        client: Arc<Client>,
        node: &str,
        node_uid: Option<String>,
        now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    ) -> LeaseController {
        LeaseController { client, node: node.into(), node_uid, now_unix_us, latest: None }
    }

    fn path(&self) -> String {
        builtin::leases().object_path(Some(LEASE_NAMESPACE), &self.node)
    }

    /// One renewal (`sync`).
    pub async fn sync(&mut self) {
        if let Some(latest) = self.latest.clone() {
            // Nobody else writes a node's lease, so the last one written is almost always current: no read.
            if self.retry_update(&latest).await.is_ok() {
                return;
            }
        }
        let (lease, created) = self.backoff_ensure().await;
        self.latest = Some(lease.clone());
        if !created {
            if let Err(err) = self.retry_update(&lease).await {
                tracing::debug!(node = %self.node, "renewing the node lease failed, will retry: {err}");
            }
        }
    }

    /// `retryUpdateLease`: a conflict gives up at once, anything else is tried again, five times in all.
    async fn retry_update(&mut self, base: &Value) -> Result<(), ClientError> {
        let mut last = ClientError::Transport("no attempt".into());
        for _ in 0..MAX_UPDATE_RETRIES {
            let lease = lease_object(&self.node, self.node_uid.as_deref(), (self.now_unix_us)(), Some(base));
            match self.client.update(&self.path(), &lease).await {
                Ok(written) => {
                    self.latest = Some(written);
                    return Ok(());
                }
                Err(err) if err.is_conflict() => return Err(err),
                Err(err) => last = err,
            }
        }
        Err(last)
    }

    /// `backoffEnsureLease`: the lease read or created, however long that takes; whether it was created.
    async fn backoff_ensure(&mut self) -> (Value, bool) {
        let mut sleep = ENSURE_BACKOFF_INITIAL;
        loop {
            match self.ensure().await {
                Ok(found) => return found,
                Err(err) => {
                    tracing::debug!(node = %self.node, "ensuring the node lease failed: {err}");
                    sleep = (sleep * 2).min(ENSURE_BACKOFF_MAX);
                    tokio::time::sleep(sleep).await;
                }
            }
        }
    }

    async fn ensure(&self) -> Result<(Value, bool), ClientError> {
        match self.client.get(&self.path()).await {
            Ok(lease) => Ok((lease, false)),
            Err(err) if err.is_not_found() => {
                let lease = lease_object(&self.node, self.node_uid.as_deref(), (self.now_unix_us)(), None);
                let created =
                    self.client.create(&builtin::leases().collection_path(Some(LEASE_NAMESPACE)), &lease).await?;
                Ok((created, true))
            }
            Err(err) => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_US: i64 = 1_700_000_000_123_456;

    #[test]
    fn leases_are_held_by_the_node_and_owned_by_it() {
        // (node uid, base, expected owner references)
        let owned = json!({"metadata": {"name": "node-1", "namespace": LEASE_NAMESPACE,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "old"}]},
            "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40}});
        let cases = [
            (Some("u1"), None, json!([{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "u1"}])),
            (None, None, Value::Null),
            (Some("u1"), Some(owned.clone()), owned["metadata"]["ownerReferences"].clone()),
        ];
        for (uid, base, owners) in cases {
            let lease = lease_object("node-1", uid, NOW_US, base.as_ref());
            assert_eq!(lease["metadata"]["name"], "node-1");
            assert_eq!(lease["metadata"]["namespace"], "kube-node-lease");
            assert_eq!(lease["spec"]["holderIdentity"], "node-1");
            assert_eq!(lease["spec"]["leaseDurationSeconds"], 40);
            assert_eq!(lease["spec"]["renewTime"], "2023-11-14T22:13:20.123456Z");
            assert_eq!(lease.pointer("/metadata/ownerReferences").cloned().unwrap_or(Value::Null), owners, "{uid:?}");
        }
        assert_eq!(RENEW_INTERVAL.as_secs() as i64 * 4, LEASE_DURATION_S, "a quarter of the duration");
    }
}
