//! The garbage collector's monitors: which resources it watches, the REST mapping it resolves owner
//! references with, and the one ordered feed of graph changes their informers produce.
//!
//! Upstream: kube-controller-manager 1.32, `pkg/controller/garbagecollector/garbagecollector.go` (`Sync`,
//! `GetDeletableResources`, `resyncMonitors`), `graph_builder.go` (`syncMonitors`, `startMonitors`,
//! `IsSynced`, `IsResourceSynced`, `controllerFor`'s handlers, `ignoredResources`) and
//! `cmd/kube-controller-manager/app/core.go` (`garbageCollector.Sync` every 30 s).
//!
//! Every [`SYNC_PERIOD`] the sync loop reads discovery: the preferred version of every group, keeping the
//! resources that support `delete`, `list` and `watch`. A round that finds nothing is skipped; a partial
//! round keeps the monitors of resources in the group versions that failed, if they have synced; an
//! unchanged set changes nothing. A changed set starts a monitor (a subscription to the manager's shared
//! informer) for each new resource but the ignored Events, stops the monitors of resources discovery no
//! longer lists, and then waits up to a period for every monitor to sync, as upstream does before its
//! next round. The REST mapper is refreshed from every successful round; upstream's resets on a change and
//! otherwise re-discovers on a miss, which refreshing every round stands in for.
//!
//! Upstream funnels every monitor's events, and the virtual delete events the workers produce, into one
//! `graphChanges` queue that a single goroutine drains in order. [`GraphFeed`] is that queue: one future
//! polls the virtual events first, then each monitor's subscription in turn (in resource order, starting
//! after the one served last, so that no resource starves the others). Each informer event carries the
//! monitor's group, version and kind, as upstream's `event.gvk` does, whatever the object says.

use std::collections::{BTreeMap, BTreeSet};
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::graph::{GraphEvent, ObjectRef};
use super::Shared;
use crate::client::discovery::{preferred_resources, Discovered};
use crate::client::ApiResource;
use crate::runtime::informer::{Delta, Informers};
use crate::runtime::store::Notice;

/// kube-controller-manager's period of `garbageCollector.Sync`, which is also how long each round waits
/// for its monitors to sync.
pub const SYNC_PERIOD: Duration = Duration::from_secs(30);
/// The verbs a resource must support to be monitored (`GetDeletableResources`).
pub const DELETABLE_VERBS: [&str; 3] = ["delete", "list", "watch"];
/// `DefaultIgnoredResources` (group, resource): the garbage collector never watches Events.
pub const IGNORED_RESOURCES: [(&str, &str); 2] = [("", "events"), ("events.k8s.io", "events")];
/// How often a wait for the monitors to sync looks again (`WaitForCacheSync`'s poll).
pub const SYNC_POLL: Duration = Duration::from_millis(100);

/// Whether upstream's `ignoredResources` holds `resource`.
pub fn is_ignored(resource: &ApiResource) -> bool {
    IGNORED_RESOURCES.iter().any(|(group, name)| resource.group == *group && resource.resource == *name)
}

/// `GetDeletableResources`: the discovered resources supporting every one of [`DELETABLE_VERBS`].
pub fn deletable_resources(found: &[Discovered]) -> BTreeSet<ApiResource> {
    found.iter().filter(|d| DELETABLE_VERBS.iter().all(|v| d.supports(v))).map(|d| d.resource.clone()).collect()
}

/// One round of `Sync`'s decision: the resources to monitor from now on, or `None` to leave the monitors
/// as they are (discovery found nothing, or nothing changed). `failed` are the group versions discovery
/// could not read (`v1`, `apps/v1`); a resource of one of those is kept if `synced` says its monitor has
/// synced.
pub fn next_resources(
    old: &BTreeSet<ApiResource>,
    mut found: BTreeSet<ApiResource>,
    failed: &[String],
    synced: impl Fn(&ApiResource) -> bool,
) -> Option<BTreeSet<ApiResource>> {
    if found.is_empty() {
        return None;
    }
    for resource in old {
        if failed.contains(&resource.api_version()) && synced(resource) {
            found.insert(resource.clone());
        }
    }
    (found != *old).then_some(found)
}

/// `printDiff`: what a round added and removed, for the log.
fn print_diff(old: &BTreeSet<ApiResource>, new: &BTreeSet<ApiResource>) -> String {
    let name = |r: &ApiResource| format!("{}/{}, Resource={}", r.group, r.version, r.resource);
    let added: Vec<String> = new.difference(old).map(name).collect();
    let removed: Vec<String> = old.difference(new).map(name).collect();
    format!("added: {added:?}, removed: {removed:?}")
}

/// The REST mapper: a kind at an apiVersion to its resource, from discovery's preferred versions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestMapper {
    by_kind: BTreeMap<(String, String), ApiResource>,
}

impl RestMapper {
    /// Folds in one discovery round: the group versions that answered replace what was known of them,
    /// those in `failed` keep what an earlier round found.
    pub fn refreshed(&self, found: &[Discovered], failed: &[String]) -> RestMapper {
        let mut by_kind: BTreeMap<(String, String), ApiResource> = self
            .by_kind
            .iter()
            .filter(|((api_version, _), _)| failed.contains(api_version))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for d in found {
            let key = (d.resource.api_version(), d.resource.kind.clone());
            // The first resource of a kind is its main one; later ones of the same kind are aliases.
            by_kind.entry(key).or_insert_with(|| d.resource.clone());
        }
        RestMapper { by_kind }
    }

    /// The resource serving `kind` at `api_version`.
    pub fn resource_for(&self, api_version: &str, kind: &str) -> Option<&ApiResource> {
        self.by_kind.get(&(api_version.to_string(), kind.to_string()))
    }

    /// The kind's scope (`None`: no mapping), as `after_get` asks for it.
    pub fn namespaced(&self, api_version: &str, kind: &str) -> Option<bool> {
        self.resource_for(api_version, kind).map(|r| r.namespaced)
    }

    /// The object's resource and path (`resourceDefaultNamespace`: a cluster-scoped kind ignores the
    /// namespace), or upstream's `restMappingError` text.
    pub fn locate(&self, target: &ObjectRef) -> Result<(ApiResource, String), String> {
        let Some(resource) = self.resource_for(&target.api_version, &target.kind) else {
            return Err(format!("unable to get REST mapping for {}/{}.", target.api_version, target.kind));
        };
        let namespace = target.namespace.as_deref().filter(|_| resource.namespaced);
        Ok((resource.clone(), resource.object_path(namespace, &target.name)))
    }
}

/// A change to the set of monitors the feed reads.
pub enum MonitorChange {
    Start { resource: ApiResource, deltas: UnboundedReceiver<Delta> },
    Stop(ApiResource),
}

/// Upstream's `controllerFor` handlers: one informer notification as a graph event of `resource`'s
/// kind; `None` for something that is not an object (upstream cannot read its metadata either).
pub fn graph_event(resource: &ApiResource, delta: Delta) -> Option<GraphEvent> {
    let stamp = |mut object: Value| {
        let map = object.as_object_mut()?;
        map.insert("apiVersion".into(), Value::String(resource.api_version()));
        map.insert("kind".into(), Value::String(resource.kind.clone()));
        Some(object)
    };
    let object = stamp(delta.object)?;
    let namespaced = resource.namespaced;
    Some(match (delta.notice, delta.old.and_then(stamp)) {
        (Notice::Add, _) | (Notice::Update, None) => GraphEvent::added(object, namespaced),
        (Notice::Update, Some(old)) => GraphEvent::updated(old, object, namespaced),
        // A tombstone carries the last state the informer knew, which is all upstream unwraps either.
        (Notice::Delete | Notice::DeleteTombstone, _) => GraphEvent::deleted(object, namespaced),
    })
}

/// Upstream's `graphChanges` queue: virtual delete events and every monitor's informer events, in order.
pub struct GraphFeed {
    virtual_events: UnboundedReceiver<GraphEvent>,
    changes: UnboundedReceiver<MonitorChange>,
    monitors: BTreeMap<ApiResource, UnboundedReceiver<Delta>>,
    /// Where the next look at the monitors starts.
    next: usize,
}

impl GraphFeed {
    pub fn new(virtual_events: UnboundedReceiver<GraphEvent>, changes: UnboundedReceiver<MonitorChange>) -> Self {
        GraphFeed { virtual_events, changes, monitors: BTreeMap::new(), next: 0 }
    }

    /// The next graph change; waits until there is one.
    pub async fn next(&mut self) -> GraphEvent {
        poll_fn(|cx| self.poll_next(cx)).await
    }

    fn poll_next(&mut self, cx: &mut TaskContext<'_>) -> Poll<GraphEvent> {
        while let Poll::Ready(Some(change)) = self.changes.poll_recv(cx) {
            match change {
                MonitorChange::Start { resource, deltas } => {
                    self.monitors.insert(resource, deltas);
                }
                MonitorChange::Stop(resource) => {
                    self.monitors.remove(&resource);
                }
            }
        }
        if let Poll::Ready(Some(event)) = self.virtual_events.poll_recv(cx) {
            return Poll::Ready(event);
        }
        let count = self.monitors.len();
        let start = if count == 0 { 0 } else { self.next % count };
        let mut closed = Vec::new();
        // Every subscription is polled (from `start`, wrapping around) so each registers for a wake-up.
        let order = (start..count).chain(0..start);
        let mut found = None;
        for index in order {
            let (resource, deltas) = self.monitors.iter_mut().nth(index).expect("index within the map");
            loop {
                match deltas.poll_recv(cx) {
                    Poll::Ready(Some(delta)) => match graph_event(resource, delta) {
                        Some(event) => {
                            found = Some((index, event));
                            break;
                        }
                        None => continue,
                    },
                    Poll::Ready(None) => {
                        closed.push(resource.clone());
                        break;
                    }
                    Poll::Pending => break,
                }
            }
            if found.is_some() {
                break;
            }
        }
        for resource in closed {
            self.monitors.remove(&resource);
        }
        match found {
            Some((index, event)) => {
                self.next = index + 1;
                Poll::Ready(event)
            }
            None => Poll::Pending,
        }
    }
}

/// Upstream's `Sync`, for as long as the future lives: a discovery round every `period` after the last
/// one ended.
pub(super) async fn sync(
    shared: &Shared,
    informers: &Informers,
    changes: &UnboundedSender<MonitorChange>,
    period: Duration,
) {
    let mut old: BTreeSet<ApiResource> = BTreeSet::new();
    loop {
        sync_round(shared, informers, changes, period, &mut old).await;
        tokio::time::sleep(period).await;
    }
}

async fn sync_round(
    shared: &Shared,
    informers: &Informers,
    changes: &UnboundedSender<MonitorChange>,
    period: Duration,
    old: &mut BTreeSet<ApiResource>,
) {
    let discovery = match preferred_resources(&shared.client).await {
        Ok(discovery) => discovery,
        Err(err) => {
            tracing::info!(controller = "garbagecollector", "failed to discover preferred resources: {err}");
            tracing::debug!("no resources reported by discovery, skipping garbage collector sync");
            return;
        }
    };
    let failed: Vec<String> = discovery.failed.iter().map(|(gv, _)| gv.clone()).collect();
    if !failed.is_empty() {
        tracing::info!(controller = "garbagecollector", groups = ?failed, "failed to discover some groups");
    }
    let mapper = shared.mapper().refreshed(&discovery.resources, &failed);
    *shared.mapper.lock().expect("never poisoned") = Arc::new(mapper);
    let found = deletable_resources(&discovery.resources);
    if found.is_empty() {
        tracing::debug!("no resources reported by discovery, skipping garbage collector sync");
        return;
    }
    let Some(new) = next_resources(old, found, &failed, |r| shared.is_resource_synced(r)) else {
        return;
    };
    tracing::debug!(diff = %print_diff(old, &new), "syncing garbage collector with updated resources from discovery");
    sync_monitors(shared, informers, changes, &new);
    if tokio::time::timeout(period, wait_synced(shared)).await.is_ok() {
        tracing::debug!("synced garbage collector");
    } else {
        tracing::warn!("timed out waiting for dependency graph builder sync during GC sync");
    }
    *old = new;
}

/// `syncMonitors` and `startMonitors`: a monitor for each resource of `resources` but the ignored ones,
/// none for the rest.
fn sync_monitors(
    shared: &Shared,
    informers: &Informers,
    changes: &UnboundedSender<MonitorChange>,
    resources: &BTreeSet<ApiResource>,
) {
    let mut monitors = shared.monitors.lock().expect("never poisoned");
    let wanted: BTreeSet<&ApiResource> = resources.iter().filter(|r| !is_ignored(r)).collect();
    let gone: Vec<ApiResource> = monitors.keys().filter(|r| !wanted.contains(r)).cloned().collect();
    for resource in gone {
        monitors.remove(&resource);
        let _ = changes.send(MonitorChange::Stop(resource.clone()));
        informers.stop(&resource);
    }
    let (mut added, kept) = (0, monitors.len());
    for resource in wanted {
        if monitors.contains_key(resource) {
            continue;
        }
        let informer = informers.get(resource);
        let deltas = informer.subscribe();
        let _ = changes.send(MonitorChange::Start { resource: resource.clone(), deltas });
        monitors.insert(resource.clone(), informer);
        added += 1;
    }
    tracing::debug!(added, kept, "synced monitors");
}

/// `WaitForCacheSync` on `IsSynced`: returns once there are monitors and every one has synced.
pub(super) async fn wait_synced(shared: &Shared) {
    while !shared.is_synced() {
        tokio::time::sleep(SYNC_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::sync::mpsc::unbounded_channel;

    use super::*;

    fn discovered(group: &str, resource: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> Discovered {
        Discovered {
            resource: ApiResource::new(group, "v1", resource, kind, namespaced),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn names(set: &BTreeSet<ApiResource>) -> Vec<&str> {
        set.iter().map(|r| r.resource.as_str()).collect()
    }

    #[test]
    fn deletable_resources_need_delete_list_and_watch() {
        let all = ["create", "delete", "get", "list", "watch"];
        let found = [
            discovered("", "configmaps", "ConfigMap", true, &all),
            discovered("", "bindings", "Binding", true, &["create"]),
            discovered("", "componentstatuses", "ComponentStatus", false, &["get", "list"]),
            discovered(
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
                "SelfSubjectAccessReview",
                false,
                &["create"],
            ),
            discovered("", "events", "Event", true, &all),
        ];
        let deletable = deletable_resources(&found);
        // Events are deletable; they are ignored only when monitors are started.
        assert_eq!(names(&deletable), vec!["configmaps", "events"]);
        let ignored: Vec<bool> = deletable.iter().map(is_ignored).collect();
        assert_eq!(ignored, vec![false, true]);
        assert!(is_ignored(&ApiResource::new("events.k8s.io", "v1", "events", "Event", true)));
        assert!(!is_ignored(&ApiResource::new("example.com", "v1", "events", "Event", true)));
    }

    #[test]
    fn sync_rounds_follow_upstream() {
        let cm = ApiResource::new("", "v1", "configmaps", "ConfigMap", true);
        let widgets = ApiResource::new("example.com", "v1", "widgets", "Widget", true);
        let gizmos = ApiResource::new("example.com", "v1", "gizmos", "Gizmo", true);
        let set = |items: &[&ApiResource]| items.iter().map(|r| (*r).clone()).collect::<BTreeSet<_>>();
        let yes = |_: &ApiResource| true;
        let no = |_: &ApiResource| false;
        let failed = vec!["example.com/v1".to_string()];
        // (case, old, found, failed group versions, monitors synced, want)
        type Case<'a> = (
            &'a str,
            BTreeSet<ApiResource>,
            BTreeSet<ApiResource>,
            &'a [String],
            &'a dyn Fn(&ApiResource) -> bool,
            Option<BTreeSet<ApiResource>>,
        );
        let cases: Vec<Case> = vec![
            ("first round", set(&[]), set(&[&cm]), &[], &yes, Some(set(&[&cm]))),
            ("nothing found: skipped", set(&[&cm]), set(&[]), &[], &yes, None),
            ("unchanged", set(&[&cm, &widgets]), set(&[&cm, &widgets]), &[], &yes, None),
            ("a CRD appears", set(&[&cm]), set(&[&cm, &widgets]), &[], &yes, Some(set(&[&cm, &widgets]))),
            ("a CRD goes", set(&[&cm, &widgets]), set(&[&cm]), &[], &yes, Some(set(&[&cm]))),
            ("failed group keeps synced monitors", set(&[&cm, &widgets, &gizmos]), set(&[&cm]), &failed, &yes, None),
            (
                "failed group drops unsynced monitors",
                set(&[&cm, &widgets]),
                set(&[&cm]),
                &failed,
                &no,
                Some(set(&[&cm])),
            ),
        ];
        for (name, old, found, failed, synced, want) in cases {
            assert_eq!(next_resources(&old, found, failed, synced), want, "{name}");
        }
    }

    #[test]
    fn rest_mapper_resolves_kinds_and_scopes() {
        let all = ["delete", "list", "watch"];
        let first = RestMapper::default().refreshed(
            &[
                discovered("", "configmaps", "ConfigMap", true, &all),
                discovered("", "namespaces", "Namespace", false, &all),
                discovered("example.com", "widgets", "Widget", true, &all),
            ],
            &[],
        );
        assert_eq!(first.namespaced("v1", "ConfigMap"), Some(true));
        assert_eq!(first.namespaced("v1", "Namespace"), Some(false));
        assert_eq!(first.namespaced("v2", "ConfigMap"), None);
        let target = |api_version: &str, kind: &str, ns: Option<&str>| ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: ns.map(str::to_string),
            name: "x".into(),
            uid: "u".into(),
        };
        let path = |mapper: &RestMapper, t: ObjectRef| mapper.locate(&t).map(|(_, p)| p);
        assert_eq!(
            path(&first, target("v1", "ConfigMap", Some("ns"))),
            Ok("/api/v1/namespaces/ns/configmaps/x".into())
        );
        // A cluster-scoped kind ignores the namespace a virtual node inherited from its dependent.
        assert_eq!(path(&first, target("v1", "Namespace", Some("ns"))), Ok("/api/v1/namespaces/x".into()));
        assert_eq!(path(&first, target("v1", "Gadget", None)), Err("unable to get REST mapping for v1/Gadget.".into()));
        // A failed group version keeps its mappings; one that answered without a kind loses it.
        let second =
            first.refreshed(&[discovered("", "configmaps", "ConfigMap", true, &all)], &["example.com/v1".into()]);
        assert_eq!(second.namespaced("example.com/v1", "Widget"), Some(true));
        assert_eq!(second.namespaced("v1", "Namespace"), None);
    }

    #[test]
    fn informer_notifications_become_graph_events_of_the_monitors_kind() {
        let cm = ApiResource::new("", "v1", "configmaps", "ConfigMap", true);
        let object = json!({"apiVersion": "wrong/v9", "metadata": {"name": "a", "namespace": "ns", "uid": "u1"}});
        let delta =
            |notice: Notice, old: Option<Value>| Delta { notice, key: "ns/a".into(), old, object: object.clone() };
        use super::super::graph::EventType;
        let cases = [
            (delta(Notice::Add, None), Some(EventType::Added)),
            (delta(Notice::Update, Some(object.clone())), Some(EventType::Updated)),
            (delta(Notice::Update, None), Some(EventType::Added)),
            (delta(Notice::Delete, None), Some(EventType::Deleted)),
            (delta(Notice::DeleteTombstone, None), Some(EventType::Deleted)),
            (Delta { notice: Notice::Add, key: "x".into(), old: None, object: Value::Null }, None),
        ];
        for (delta, want) in cases {
            let event = graph_event(&cm, delta);
            assert_eq!(event.as_ref().map(|e| e.event_type), want);
            if let Some(event) = event {
                let identity = event.identity();
                assert_eq!((identity.api_version.as_str(), identity.kind.as_str()), ("v1", "ConfigMap"));
                assert_eq!(identity.namespace.as_deref(), Some("ns"));
                assert!(!event.is_virtual);
                if let Some(old) = &event.old_object {
                    assert_eq!(old["kind"], "ConfigMap");
                }
            }
        }
    }

    #[tokio::test]
    async fn the_feed_serves_virtual_events_first_and_monitors_in_turn() {
        let (virtual_tx, virtual_rx) = unbounded_channel();
        let (change_tx, change_rx) = unbounded_channel();
        let mut feed = GraphFeed::new(virtual_rx, change_rx);
        let resources = [
            ApiResource::new("", "v1", "configmaps", "ConfigMap", true),
            ApiResource::new("", "v1", "secrets", "Secret", true),
        ];
        let mut senders = Vec::new();
        for resource in &resources {
            let (tx, rx) = unbounded_channel();
            change_tx.send(MonitorChange::Start { resource: resource.clone(), deltas: rx }).unwrap();
            senders.push(tx);
        }
        let add = |name: &str| Delta {
            notice: Notice::Add,
            key: name.into(),
            old: None,
            object: json!({"metadata": {"name": name, "namespace": "ns", "uid": name}}),
        };
        for name in ["c1", "c2"] {
            senders[0].send(add(name)).unwrap();
        }
        for name in ["s1", "s2"] {
            senders[1].send(add(name)).unwrap();
        }
        let owner =
            ObjectRef { api_version: "v1".into(), kind: "ConfigMap".into(), uid: "v".into(), ..Default::default() };
        virtual_tx.send(GraphEvent::virtual_delete(&owner)).unwrap();
        let mut seen = Vec::new();
        for _ in 0..5 {
            let event = feed.next().await;
            seen.push(format!("{}:{}", event.identity().kind, event.identity().uid));
        }
        assert_eq!(seen, vec!["ConfigMap:v", "ConfigMap:c1", "Secret:s1", "ConfigMap:c2", "Secret:s2"]);
        // A stopped monitor's pending notifications are dropped.
        senders[0].send(add("c3")).unwrap();
        senders[1].send(add("s3")).unwrap();
        change_tx.send(MonitorChange::Stop(resources[0].clone())).unwrap();
        assert_eq!(feed.next().await.identity().uid, "s3");
    }
}
