//! The apiserver's bug switches, each shown putting its historical bug back: with the switch on the old
//! behaviour shows, with it off (the default) the fixed one. Runs on fake-etcd in-process (real build).
#![cfg(not(madsim))]

// This suite runs on fake-etcd only; the real-etcd starter goes unused.
#[allow(dead_code)]
#[path = "support/etcd_server.rs"]
mod etcd_server;

use apiserver::bug::{Bug, Bugs};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::{GroupResource, Preconditions, Storage, StorageError};
use etcd_server::{start, Server};
use serde_json::{json, Value};

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": {"v": value}})
}

async fn store(endpoint: &str, prefix: &str, bugs: Bugs) -> Etcd3Store {
    let mut config = Etcd3Config::new(prefix, GroupResource::new("", "configmaps"));
    config.bugs = bugs;
    Etcd3Store::connect(endpoint, config).await.unwrap()
}

/// Creates `name` and updates it once: the first state is what a lagging watch cache still holds.
async fn stale_copy(store: &Etcd3Store, key: &str, name: &str) -> Value {
    let first = store.create(key, configmap(name, "1")).await.unwrap();
    let set = |mut obj: Value, _| {
        obj["data"]["v"] = json!("2");
        Ok(obj)
    };
    store.guaranteed_update(key, false, None, set, None).await.unwrap();
    first
}

/// kubernetes #82303 (and #41892, #89828): a write judged against the watch cache's stale copy must be
/// judged again on fresh data before its failure is reported.
#[tokio::test]
async fn stale_suggestion_trusted_gives_spurious_conflicts_and_precondition_failures() {
    let etcd = start(Server::FakeEtcd, "bug-stale-suggestion").await;
    for on in [true, false] {
        let bugs = if on { Bugs::of(&[Bug::StaleSuggestionTrusted]) } else { Bugs::none() };
        let store = store(&etcd.endpoint, &format!("/registry-{on}/"), bugs).await;

        // An update function that refuses the stale copy's resourceVersion, as a client's optimistic lock
        // on fresher state would.
        let stale = stale_copy(&store, "/configmaps/ns/u", "u").await;
        let stale_rv = stale["metadata"]["resourceVersion"].as_str().unwrap().to_string();
        let locked = |mut obj: Value, meta: apiserver::storage::ResponseMeta| {
            if meta.resource_version.0.to_string() == stale_rv {
                return Err(StorageError::ResourceVersionConflicts { key: "stale".into(), rv: 0 });
            }
            obj["data"]["v"] = json!("3");
            Ok(obj)
        };
        let update = store.guaranteed_update("/configmaps/ns/u", false, None, locked, Some(stale)).await;
        assert_eq!(update.is_err(), on, "switch {on}: update {update:?}");

        // A delete whose uid precondition names the object as it is now, against a stale copy of an earlier
        // object of the same name.
        let old = store.create("/configmaps/ns/d", configmap("d", "1")).await.unwrap();
        store.delete("/configmaps/ns/d", None, |_| Ok(()), None).await.unwrap();
        let mut recreated = configmap("d", "2");
        recreated["metadata"]["uid"] = json!("uid-new");
        store.create("/configmaps/ns/d", recreated).await.unwrap();
        let pre = Preconditions { uid: Some("uid-new".into()), resource_version: None };
        let delete = store.delete("/configmaps/ns/d", Some(&pre), |_| Ok(()), Some(old)).await;
        assert_eq!(delete.is_err(), on, "switch {on}: delete {delete:?}");
    }
}
