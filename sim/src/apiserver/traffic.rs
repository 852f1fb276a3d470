//! What an apiserver workload's clients do, each on a node of its own, over HTTP to the apiservers: random
//! clients sharing a handful of configmaps, and one scripted client alone on its own.
//!
//! A random client creates, updates (with the last resourceVersion it saw as optimistic lock), deletes (with
//! or without a resourceVersion precondition), gets and lists consistently, and opens watches from the
//! resourceVersion of its last list or a little before it (informers resume like that; an older start may
//! have been compacted and must then get 410). The scripted client runs [`script`]'s steps on keys nobody
//! else writes, so that each step's outcome follows from the steps before it: the cache-parity check
//! compares them between a run with the watch cache and one without.

use std::collections::BTreeMap;
use std::time::Duration;

use std::sync::Arc;

use http::Method;
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::record::{configmap_key, resource_version, Answer, Recorder};
use super::rest_client::{ClientError, KubeClient};
use crate::history::apiserver::{ApiCall, ApiOutcome, Refusal};

fn configmap(namespace: &str, name: &str, data: &str, rv: Option<u64>) -> Value {
    let mut obj = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"v": data},
    });
    if let Some(rv) = rv {
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
    }
    obj
}

/// The path of a namespace's configmaps, or of one of them.
fn path(namespace: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("/api/v1/namespaces/{namespace}/configmaps/{name}"),
        None => format!("/api/v1/namespaces/{namespace}/configmaps"),
    }
}

/// `POST`: a create.
async fn create(client: &KubeClient, namespace: &str, obj: Value) -> Result<Answer, ClientError> {
    client.send(Method::POST, &path(namespace, None), Some(&obj)).await.map(Answer::Object)
}

/// `PUT`: an update, the body's resourceVersion as the lock.
async fn update(client: &KubeClient, namespace: &str, name: &str, obj: Value) -> Result<Answer, ClientError> {
    client.send(Method::PUT, &path(namespace, Some(name)), Some(&obj)).await.map(Answer::Object)
}

/// `DELETE`, with a resourceVersion precondition if `rv` is given.
async fn delete(client: &KubeClient, namespace: &str, name: &str, rv: Option<u64>) -> Result<Answer, ClientError> {
    let options = rv.map(
        |rv| json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": rv.to_string()}}),
    );
    let answer = client.send(Method::DELETE, &path(namespace, Some(name)), options.as_ref()).await?;
    Ok(Answer::Deleted(resource_version(&answer)))
}

/// `GET` of one object, a consistent read.
async fn get(client: &KubeClient, namespace: &str, name: &str) -> Result<Answer, ClientError> {
    client.send(Method::GET, &path(namespace, Some(name)), None).await.map(Answer::Object)
}

/// `GET` of the collection, a consistent list.
async fn list(client: &KubeClient, namespace: &str) -> Result<Answer, ClientError> {
    let list = client.send(Method::GET, &path(namespace, None), None).await?;
    let rv = list["metadata"]["resourceVersion"].as_str().and_then(|r| r.parse().ok()).unwrap_or(0);
    let items = list["items"].as_array().map_or(&[][..], Vec::as_slice);
    let items = items.iter().map(|o| (key_of(namespace, o), resource_version(o))).collect();
    Ok(Answer::List(rv, items))
}

async fn pause(rng: &mut ChaCha8Rng, max_ms: u64) {
    tokio::time::sleep(Duration::from_millis(rng.random_range(0..max_ms))).await;
}

/// One random client: `ops` requests on the configmaps `a`..`d` of `namespace` (which must exist), and the
/// watches it opened, until all end.
pub async fn random_client_in(
    namespace: &str,
    name: String,
    client: Arc<KubeClient>,
    rec: Recorder,
    mut rng: ChaCha8Rng,
    ops: usize,
) {
    const NAMES: [&str; 4] = ["a", "b", "c", "d"];
    // The last resourceVersion seen for each name, and the last list's.
    let mut known: BTreeMap<&str, u64> = BTreeMap::new();
    let mut last_list = 0u64;
    let mut watches = Vec::new();
    for i in 0..ops {
        pause(&mut rng, 40).await;
        let n = *NAMES.choose(&mut rng).expect("names");
        let key = configmap_key(namespace, n);
        let data = format!("{name}-{i}");
        let roll = rng.random_range(0..100);
        let outcome = if roll < 25 {
            let obj = configmap(namespace, n, &data, None);
            rec.call(&name, ApiCall::Create { key }, create(&client, namespace, obj)).await
        } else if roll < 45 {
            let rv = known.get(n).copied();
            let obj = configmap(namespace, n, &data, rv);
            rec.call(&name, ApiCall::Update { key, rv }, update(&client, namespace, n, obj)).await
        } else if roll < 55 {
            let rv = if rng.random_bool(0.5) { known.get(n).copied() } else { None };
            rec.call(&name, ApiCall::Delete { key, rv }, delete(&client, namespace, n, rv)).await
        } else if roll < 72 {
            rec.call(&name, ApiCall::Get { key }, get(&client, namespace, n)).await
        } else if roll < 88 {
            let prefix = configmap_key(namespace, "");
            rec.call(&name, ApiCall::List { prefix }, list(&client, namespace)).await
        } else {
            let from = last_list.saturating_sub(rng.random_range(0..8)).max(1);
            let duration = Duration::from_millis(rng.random_range(300..2000));
            let (client, rec, who, ns) = (client.clone(), rec.clone(), name.clone(), namespace.to_string());
            watches.push(tokio::spawn(async move {
                let path = format!("{}?watch=true&resourceVersion={from}", path(&ns, None));
                rec.watch(&who, &ns, from, client.watch(&path), duration).await;
            }));
            continue;
        };
        match outcome {
            ApiOutcome::Written { rv, .. } | ApiOutcome::Found { rv, .. } => {
                known.insert(n, rv);
            }
            ApiOutcome::Deleted { .. } | ApiOutcome::Refused(Refusal::NotFound) => {
                known.remove(n);
            }
            ApiOutcome::Listed { rv, items } => {
                last_list = rv;
                known.clear();
                for n in NAMES {
                    if let Some(rv) = items.get(&configmap_key(namespace, n)) {
                        known.insert(n, *rv);
                    }
                }
            }
            _ => {}
        }
    }
    for w in watches {
        w.await.expect("a watch task panicked");
    }
}

/// The etcd key of a listed object. List items carry their name; their namespace is the list's.
fn key_of(namespace: &str, obj: &Value) -> String {
    configmap_key(namespace, obj["metadata"]["name"].as_str().unwrap_or_default())
}

/// One step of the scripted client. `Latest` and `Stale` name which resourceVersion the step sends: the
/// newest the script has seen for the key, or the oldest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Create,
    UpdateLatest,
    UpdateStale,
    UpdateUnconditional,
    Delete,
    DeleteLatest,
    DeleteStale,
    Get,
}

/// The scripted client's steps, drawn from its own stream: (key index, step).
pub fn script(rng: &mut ChaCha8Rng, steps: usize) -> Vec<(usize, Step)> {
    const STEPS: [Step; 8] = [
        Step::Create,
        Step::UpdateLatest,
        Step::UpdateStale,
        Step::UpdateUnconditional,
        Step::Delete,
        Step::DeleteLatest,
        Step::DeleteStale,
        Step::Get,
    ];
    (0..steps).map(|_| (rng.random_range(0..2), *STEPS.choose(rng).expect("steps"))).collect()
}

/// Runs the script as client `name`, one step at a time, on configmaps `s0` and `s1` of `namespace` (which
/// must exist, and where no other client may touch them).
pub async fn scripted_client(
    namespace: &str,
    name: String,
    client: Arc<KubeClient>,
    rec: Recorder,
    steps: Vec<(usize, Step)>,
    mut rng: ChaCha8Rng,
) {
    // Every resourceVersion seen per key, oldest first, without repeats.
    let mut seen: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for (i, (k, step)) in steps.into_iter().enumerate() {
        // Half the steps follow the previous one at once, as `kubectl replace` right after a create does:
        // the watch cache may not have seen the previous write yet (kubernetes #82303).
        if rng.random_bool(0.5) {
            pause(&mut rng, 60).await;
        }
        let n = format!("s{k}");
        let key = configmap_key(namespace, &n);
        let data = format!("step{i}");
        let latest = seen.get(&k).and_then(|s| s.last()).copied();
        let oldest = seen.get(&k).and_then(|s| s.first()).copied();
        let outcome = match step {
            Step::Create => {
                let obj = configmap(namespace, &n, &data, None);
                rec.call(&name, ApiCall::Create { key }, create(&client, namespace, obj)).await
            }
            Step::UpdateLatest | Step::UpdateStale | Step::UpdateUnconditional => {
                let rv = match step {
                    Step::UpdateLatest => latest,
                    Step::UpdateStale => oldest,
                    _ => None,
                };
                let obj = configmap(namespace, &n, &data, rv);
                rec.call(&name, ApiCall::Update { key, rv }, update(&client, namespace, &n, obj)).await
            }
            Step::Delete | Step::DeleteLatest | Step::DeleteStale => {
                let rv = match step {
                    Step::DeleteLatest => latest,
                    Step::DeleteStale => oldest,
                    _ => None,
                };
                rec.call(&name, ApiCall::Delete { key, rv }, delete(&client, namespace, &n, rv)).await
            }
            Step::Get => rec.call(&name, ApiCall::Get { key }, get(&client, namespace, &n)).await,
        };
        if let ApiOutcome::Written { rv, .. } | ApiOutcome::Found { rv, .. } = outcome {
            let seen = seen.entry(k).or_default();
            if !seen.contains(&rv) {
                seen.push(rv);
            }
        }
    }
}
