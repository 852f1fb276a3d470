//! What `PodsAsSpecifiedAtQuiescence` judges (`checker::replicas`), read from etcd once the faults have
//! stopped and the run has settled: every simulated second, the registry as etcd holds it, until every
//! workload has the pods its spec asks for or [`BOUND`] has passed; the last read's verdict is the
//! run's. Only runs with controller managers are read (without them nothing makes pods). The reads go from
//! the control node straight to the first member that answers.

use std::time::Duration;

use serde_json::Value;

use super::registry;
use crate::checker::replicas::{pods_as_specified, Verdict};
use crate::cluster::Cluster;

/// How often the registry is read.
const POLL: Duration = Duration::from_secs(1);

/// How long the controllers get to converge after the settle time. A sync that failed is retried with
/// the work queues' exponential backoff from 1 s (the Job and EndpointSlice controllers' queues, doubling
/// per failure), so five failures in a row are retried within 1 + 2 + 4 + 8 + 16 = 31 s; a kubelet
/// reports a pod's phase within its one-second status loop, and a Deployment's status follows its
/// ReplicaSets' within a sync. 45 s covers that with margin, and is still short beside a scenario's own
/// time limit; a count still wrong after it is wrong for good.
pub const BOUND: Duration = Duration::from_secs(45);

/// The last verdict, or why the registry could not be read.
pub type PodsSettled = Result<Verdict, String>;

/// Reads the registry from the control node until the workloads' pods are as specified or the bound passed.
pub(super) async fn watch(cluster: &Cluster, timeout: Duration) -> PodsSettled {
    let endpoints = cluster.endpoints();
    let polled = cluster.control.spawn(async move { poll(&endpoints, timeout).await }).await;
    polled.unwrap_or_else(|_| Err("the pod count reader panicked".into()))
}

async fn poll(endpoints: &[String], timeout: Duration) -> PodsSettled {
    let started = tokio::time::Instant::now();
    loop {
        let verdict = match registry::read(endpoints, timeout, 0).await {
            Ok(read) => Ok(pods_as_specified(&read.objects.into_values().collect::<Vec<Value>>())),
            Err(err) => Err(err.to_string()),
        };
        let settled = matches!(&verdict, Ok(v) if v.violations.is_empty());
        if settled || started.elapsed() >= BOUND {
            return verdict;
        }
        tokio::time::sleep(POLL).await;
    }
}
