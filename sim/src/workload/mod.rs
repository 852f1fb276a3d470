//! Traffic generators: what each client does during a run. Every choice comes from the client's own
//! random stream (derived from the root seed), every request goes through the recording client, and every
//! written value is unique (`c3-17`), which keeps the linearizability search tractable.

pub mod key_value;
pub mod kubernetes;

use std::str::FromStr;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::client::watch::{record_watch, WatchSpec};
use crate::client::RecordingClient;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The apiserver's request shapes: optimistic creates, updates and deletes as txns, paged lists followed
    /// by a watch from the list revision, and an occasional compaction.
    Kubernetes,
    /// Plain puts, gets, deletes, value compare-and-swaps and prefix reads over a few keys.
    KeyValue,
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Workload, String> {
        match s {
            "kubernetes" | "k8s" => Ok(Workload::Kubernetes),
            "key-value" | "kv" => Ok(Workload::KeyValue),
            other => Err(format!("no workload is named {other:?} (known: kubernetes, key-value)")),
        }
    }
}

/// Runs `ops` requests of `workload` from one client, then waits for the watches it opened to close.
pub async fn run_client(workload: Workload, mut client: RecordingClient, mut rng: ChaCha8Rng, ops: usize) {
    let mut watches = Vec::new();
    match workload {
        Workload::Kubernetes => kubernetes::run(&mut client, &mut rng, ops, &mut watches).await,
        Workload::KeyValue => key_value::run(&mut client, &mut rng, ops, &mut watches).await,
    }
    for w in watches {
        // A watch task ends by itself when its time is up; a join error means it panicked, which is a bug.
        w.await.expect("watch task panicked");
    }
}

/// A short pause between requests, so that clients interleave.
pub(crate) async fn think(rng: &mut ChaCha8Rng) {
    madsim::time::sleep(Duration::from_millis(rng.random_range(1..30))).await;
}

/// Opens a recorded watch that runs beside the client's requests.
pub(crate) fn spawn_watch(
    client: &RecordingClient,
    create: etcd_proto::etcdserverpb::WatchCreateRequest,
    open_for: Duration,
) -> madsim::task::JoinHandle<()> {
    let spec = WatchSpec {
        token: None,
        client: client.id,
        name: client.name().to_string(),
        endpoint: client.endpoint().to_string(),
        create,
        open_for,
        control: None,
    };
    let (history, trace) = (client.history().clone(), client.trace().clone());
    madsim::task::spawn(async move {
        record_watch(spec, history, trace).await;
    })
}
