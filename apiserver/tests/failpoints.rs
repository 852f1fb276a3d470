//! The apiserver's failpoints, each shown firing and having its effect: the reflector held between its list
//! and its watch still caches a write that lands in the gap; a delay before dispatch delays watchers and a
//! drop loses the event; an error before a guaranteed update's re-read fails the update with `Unreachable`,
//! and a drop there lets a stale suggestion's conflict stand.
//! Runs on fake-etcd in-process (real build).
#![cfg(not(madsim))]

// This suite runs on fake-etcd only; the real-etcd starter goes unused.
#[allow(dead_code)]
#[path = "support/etcd_server.rs"]
mod etcd_server;

use std::time::Duration;

use apiserver::failpoint::{Action, Arm, Failpoints, Point};
use apiserver::storage::cacher::{Cacher, CacherConfig};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::{GetOptions, GroupResource, ListOptions, Storage, StorageError, WatchEvent};
use etcd_server::{start, Server};
use serde_json::{json, Value};

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": {"v": value}})
}

fn resource() -> GroupResource {
    GroupResource::new("", "configmaps")
}

async fn store(endpoint: &str, prefix: &str, failpoints: &Failpoints) -> Etcd3Store {
    let mut config = Etcd3Config::new(prefix, resource());
    config.failpoints = failpoints.clone();
    Etcd3Store::connect(endpoint, config).await.unwrap()
}

fn cacher(store: Etcd3Store, failpoints: &Failpoints) -> Cacher {
    let mut config = CacherConfig::new("/configmaps", resource());
    config.failpoints = failpoints.clone();
    Cacher::new(store, config)
}

/// Waits (real time, bounded) until `cond` holds.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn data_of(obj: &Value) -> &str {
    obj["data"]["v"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_write_between_the_cachers_list_and_watch_still_reaches_the_cache() {
    let etcd = start(Server::FakeEtcd, "fp-gap").await;
    let fp = Failpoints::new();
    let point = Point::CacherBetweenListAndWatch;
    fp.arm(point, Arm { action: Action::Hold, skip: 0, times: Some(1) });
    let writer = store(&etcd.endpoint, "/registry-gap/", &Failpoints::new()).await;
    writer.create("/configmaps/ns/before", configmap("before", "1")).await.unwrap();
    let cacher = cacher(store(&etcd.endpoint, "/registry-gap/", &fp).await, &fp);
    eventually("the reflector to stop between list and watch", || fp.held(point) == 1).await;
    // The list is done; this write lands in the gap before the watch opens.
    let gap = writer.create("/configmaps/ns/gap", configmap("gap", "2")).await.unwrap();
    fp.release(point);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await);
    let any = GetOptions { resource_version: "0".into() };
    eventually("the cache to reach the gap write", || {
        cacher.resource_version().0 >= gap["metadata"]["resourceVersion"].as_str().unwrap().parse::<u64>().unwrap()
    })
    .await;
    let got = cacher.get("/configmaps/ns/gap", &any).await.expect("the gap write is in the cache");
    assert_eq!(data_of(&got), "2");
    assert_eq!(fp.fired(point), 1);
}

#[tokio::test]
async fn a_failing_list_and_watch_round_relists() {
    let etcd = start(Server::FakeEtcd, "fp-gap-error").await;
    let fp = Failpoints::new();
    let point = Point::CacherBetweenListAndWatch;
    fp.arm(point, Arm { action: Action::Error, skip: 0, times: Some(1) });
    let mut config = CacherConfig::new("/configmaps", resource());
    config.failpoints = fp.clone();
    config.relist_period = Duration::from_millis(50);
    let cacher = Cacher::new(store(&etcd.endpoint, "/registry-gap-error/", &fp).await, config);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await, "the second round makes the cache ready");
    assert_eq!(fp.fired(point), 1);
}

#[tokio::test]
async fn a_delay_before_dispatch_holds_watchers_back_and_a_drop_loses_the_event() {
    let etcd = start(Server::FakeEtcd, "fp-dispatch").await;
    let fp = Failpoints::new();
    let point = Point::BeforeCacherDispatch;
    let writer = store(&etcd.endpoint, "/registry-dispatch/", &Failpoints::new()).await;
    let cacher = cacher(store(&etcd.endpoint, "/registry-dispatch/", &fp).await, &fp);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await);
    let from = cacher.resource_version().0.to_string();
    let opts = ListOptions { resource_version: from, ..ListOptions::default() };
    let mut watch = cacher.watch("/configmaps", &opts).await.unwrap();

    fp.arm(point, Arm { action: Action::Delay(Duration::from_millis(300)), skip: 0, times: Some(1) });
    writer.create("/configmaps/ns/slow", configmap("slow", "1")).await.unwrap();
    let written = tokio::time::Instant::now();
    let Some(WatchEvent::Added(obj)) = watch.next().await else { panic!("expected the ADDED event") };
    assert_eq!(obj["metadata"]["name"], "slow");
    assert!(written.elapsed() >= Duration::from_millis(250), "delivered after {:?}", written.elapsed());

    // Drop the next event: the watcher sees the one after it and never the lost one.
    fp.arm(point, Arm { action: Action::Drop, skip: 0, times: Some(1) });
    writer.create("/configmaps/ns/lost", configmap("lost", "2")).await.unwrap();
    writer.create("/configmaps/ns/seen", configmap("seen", "3")).await.unwrap();
    let Some(WatchEvent::Added(obj)) = watch.next().await else { panic!("expected an ADDED event") };
    assert_eq!(obj["metadata"]["name"], "seen", "the dropped event must not be delivered");
    assert_eq!(fp.fired(point), 1);
    let any = GetOptions { resource_version: "0".into() };
    assert!(matches!(cacher.get("/configmaps/ns/lost", &any).await, Err(StorageError::KeyNotFound { .. })));
}

/// Writes `name` twice through `writer` and returns its first state: a stale copy, as a lagging cache holds.
async fn stale_copy(writer: &Etcd3Store, key: &str, name: &str) -> Value {
    let first = writer.create(key, configmap(name, "1")).await.unwrap();
    let set = |v: &'static str| {
        move |mut obj: Value, _| {
            obj["data"]["v"] = json!(v);
            Ok(obj)
        }
    };
    writer.guaranteed_update(key, false, None, set("2"), None).await.unwrap();
    first
}

#[tokio::test]
async fn an_error_before_the_reread_fails_the_update_and_a_delay_only_slows_it() {
    let etcd = start(Server::FakeEtcd, "fp-reread").await;
    let fp = Failpoints::new();
    let point = Point::BeforeUpdateReread;
    let store = store(&etcd.endpoint, "/registry-reread/", &fp).await;
    let set = |v: &'static str| {
        move |mut obj: Value, _| {
            obj["data"]["v"] = json!(v);
            Ok(obj)
        }
    };

    // The stale suggestion makes the txn lose its compare: the retry's re-read fails.
    let stale = stale_copy(&store, "/configmaps/ns/a", "a").await;
    fp.arm(point, Arm::always(Action::Error));
    let err = store.guaranteed_update("/configmaps/ns/a", false, None, set("3"), Some(stale)).await.unwrap_err();
    assert_eq!(
        err,
        StorageError::Unreachable {
            key: "/registry-reread/configmaps/ns/a".into(),
            message: "apiserver: failpoint before-guaranteed-update-reread injected a failure".into()
        }
    );
    let status = err.to_status(apiserver::storage::Operation::Update, &resource(), "a");
    assert!(status.code.is_some_and(|c| c >= 500), "{status:?}");
    assert_eq!(fp.fired(point), 1);
    let now = store.get("/configmaps/ns/a", &GetOptions::default()).await.unwrap();
    assert_eq!(data_of(&now), "2", "the failed update wrote nothing");

    // Without a conflict there is no re-read: the point does not fire.
    store.guaranteed_update("/configmaps/ns/a", false, None, set("4"), None).await.unwrap();
    assert_eq!(fp.fired(point), 1);

    // A delay only slows the retry, which then succeeds on the fresh state.
    let stale = stale_copy(&store, "/configmaps/ns/b", "b").await;
    fp.arm(point, Arm::always(Action::Delay(Duration::from_millis(100))));
    let updated = store.guaranteed_update("/configmaps/ns/b", false, None, set("3"), Some(stale)).await.unwrap();
    assert_eq!(data_of(&updated), "3");
    assert_eq!(fp.fired(point), 1);

    // A drop skips the re-read: the stale suggestion's verdict stands (the bug upstream fixed, B1). The update
    // function refuses the stale copy's resourceVersion as a client's optimistic lock would.
    let stale = stale_copy(&store, "/configmaps/ns/c", "c").await;
    let stale_rv = stale["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    fp.arm(point, Arm::always(Action::Drop));
    let locked = |mut obj: Value, meta: apiserver::storage::ResponseMeta| {
        if meta.resource_version.0.to_string() == stale_rv {
            return Err(StorageError::ResourceVersionConflicts { key: "stale".into(), rv: 0 });
        }
        obj["data"]["v"] = json!("3");
        Ok(obj)
    };
    let err = store.guaranteed_update("/configmaps/ns/c", false, None, locked, Some(stale.clone())).await.unwrap_err();
    assert!(matches!(err, StorageError::ResourceVersionConflicts { .. }), "{err:?}");
    fp.disarm(point);
    let updated = store.guaranteed_update("/configmaps/ns/c", false, None, set("4"), Some(stale)).await.unwrap();
    assert_eq!(data_of(&updated), "4", "without the drop the update retries on fresh data");
}
