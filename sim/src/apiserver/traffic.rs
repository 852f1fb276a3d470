//! What the apiserver's clients do, in-process on the apiserver node, through the registry's configmap
//! store: random clients sharing a handful of configmaps, and one scripted client alone on its own.
//!
//! A random client creates, updates (with the last resourceVersion it saw as optimistic lock), deletes (with
//! or without a resourceVersion precondition), gets and lists consistently, and opens watches from the
//! resourceVersion of its last list or a little before it (informers resume like that; an older start may
//! have been compacted and must then get 410). The scripted client runs [`script`]'s steps on keys nobody
//! else writes, so that each step's outcome follows from the steps before it: the cache-parity check
//! compares them between a run with the watch cache and one without.

use std::collections::BTreeMap;
use std::time::Duration;

use apiserver::registry::{ListRequest, Store};
use apiserver::storage::{GetOptions, Preconditions, Storage};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::record::{configmap_key, resource_version, Answer, Recorder};
use crate::history::apiserver::{ApiCall, ApiOutcome, Refusal};

/// The namespace the random clients share.
pub const SHARED: &str = "shared";
/// The scripted client's own namespace.
pub const SCRIPTED: &str = "script";
/// The scripted client's name in the history.
pub const SCRIPT_CLIENT: &str = "script";

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

async fn pause(rng: &mut ChaCha8Rng, max_ms: u64) {
    tokio::time::sleep(Duration::from_millis(rng.random_range(0..max_ms))).await;
}

/// One random client: `ops` requests on the shared configmaps, and the watches it opened, until all end.
pub async fn random_client<S: Storage + Clone + 'static>(
    name: String,
    cms: Store<S>,
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
        let key = configmap_key(SHARED, n);
        let data = format!("{name}-{i}");
        let roll = rng.random_range(0..100);
        let outcome = if roll < 25 {
            let obj = configmap(SHARED, n, &data, None);
            rec.call(&name, ApiCall::Create { key }, async { cms.create(SHARED, obj).await.map(Answer::Object) }).await
        } else if roll < 45 {
            let rv = known.get(n).copied();
            let obj = configmap(SHARED, n, &data, rv);
            let update = async { cms.update(SHARED, n, obj).await.map(|(o, _)| Answer::Object(o)) };
            rec.call(&name, ApiCall::Update { key, rv }, update).await
        } else if roll < 55 {
            let rv = if rng.random_bool(0.5) { known.get(n).copied() } else { None };
            let pre = Preconditions { uid: None, resource_version: rv.map(|rv| rv.to_string()) };
            let delete =
                async { cms.delete(SHARED, n, &pre).await.map(|d| Answer::Deleted(resource_version(&d.body))) };
            rec.call(&name, ApiCall::Delete { key, rv }, delete).await
        } else if roll < 72 {
            let get = async { cms.get(SHARED, n, &GetOptions::default()).await.map(Answer::Object) };
            rec.call(&name, ApiCall::Get { key }, get).await
        } else if roll < 88 {
            let list = async {
                let list = cms.list(SHARED, &ListRequest::default()).await?;
                let items = list.items.iter().map(|o| (key_of(o), resource_version(o))).collect();
                Ok(Answer::List(list.resource_version.0, items))
            };
            let prefix = configmap_key(SHARED, "");
            rec.call(&name, ApiCall::List { prefix }, list).await
        } else {
            let from = last_list.saturating_sub(rng.random_range(0..8)).max(1);
            let duration = Duration::from_millis(rng.random_range(300..2000));
            let (cms, rec, client) = (cms.clone(), rec.clone(), name.clone());
            watches.push(tokio::spawn(async move {
                let request = ListRequest { resource_version: from.to_string(), ..ListRequest::default() };
                rec.watch(&client, SHARED, from, cms.watch(SHARED, &request), duration).await;
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
                    if let Some(rv) = items.get(&configmap_key(SHARED, n)) {
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

fn key_of(obj: &Value) -> String {
    let field = |f: &str| obj["metadata"][f].as_str().unwrap_or_default().to_string();
    configmap_key(&field("namespace"), &field("name"))
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

/// Runs the script, one step at a time, on configmaps `s0` and `s1` of its own namespace.
pub async fn scripted_client<S: Storage + Clone + 'static>(
    cms: Store<S>,
    rec: Recorder,
    steps: Vec<(usize, Step)>,
    mut rng: ChaCha8Rng,
) {
    // Every resourceVersion seen per key, oldest first, without repeats.
    let mut seen: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for (i, (k, step)) in steps.into_iter().enumerate() {
        // Half the steps follow the previous one at once, as `kubectl replace` right after a create does:
        // the watch cache may not have seen the previous write yet (races-catalog.md B1).
        if rng.random_bool(0.5) {
            pause(&mut rng, 60).await;
        }
        let n = format!("s{k}");
        let key = configmap_key(SCRIPTED, &n);
        let data = format!("step{i}");
        let latest = seen.get(&k).and_then(|s| s.last()).copied();
        let oldest = seen.get(&k).and_then(|s| s.first()).copied();
        let outcome = match step {
            Step::Create => {
                let obj = configmap(SCRIPTED, &n, &data, None);
                let create = async { cms.create(SCRIPTED, obj).await.map(Answer::Object) };
                rec.call(SCRIPT_CLIENT, ApiCall::Create { key }, create).await
            }
            Step::UpdateLatest | Step::UpdateStale | Step::UpdateUnconditional => {
                let rv = match step {
                    Step::UpdateLatest => latest,
                    Step::UpdateStale => oldest,
                    _ => None,
                };
                let obj = configmap(SCRIPTED, &n, &data, rv);
                let update = async { cms.update(SCRIPTED, &n, obj).await.map(|(o, _)| Answer::Object(o)) };
                rec.call(SCRIPT_CLIENT, ApiCall::Update { key, rv }, update).await
            }
            Step::Delete | Step::DeleteLatest | Step::DeleteStale => {
                let rv = match step {
                    Step::DeleteLatest => latest,
                    Step::DeleteStale => oldest,
                    _ => None,
                };
                let pre = Preconditions { uid: None, resource_version: rv.map(|rv| rv.to_string()) };
                let delete =
                    async { cms.delete(SCRIPTED, &n, &pre).await.map(|d| Answer::Deleted(resource_version(&d.body))) };
                rec.call(SCRIPT_CLIENT, ApiCall::Delete { key, rv }, delete).await
            }
            Step::Get => {
                let get = async { cms.get(SCRIPTED, &n, &GetOptions::default()).await.map(Answer::Object) };
                rec.call(SCRIPT_CLIENT, ApiCall::Get { key }, get).await
            }
        };
        if let ApiOutcome::Written { rv, .. } | ApiOutcome::Found { rv, .. } = outcome {
            let seen = seen.entry(k).or_default();
            if !seen.contains(&rv) {
                seen.push(rv);
            }
        }
    }
}
