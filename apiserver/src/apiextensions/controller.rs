//! The CRD controller of one apiserver: it follows `customresourcedefinitions` (a list, then a watch from
//! the list's resourceVersion, relisting whenever the watch ends), and after every change
//!
//! 1. writes each CRD's status where it differs from [`naming::desired_status`] (accepted names,
//!    `NamesAccepted`, `Established`) — every apiserver of an HA cluster does, and a conflict only means
//!    another got there first;
//! 2. finalizes CRDs being deleted: marks them `Terminating`, deletes their custom resources, then removes
//!    the cleanup finalizer so that the CRD goes (apiextensions-apiserver's `finalizer` controller);
//! 3. serves exactly the established CRDs: their resources join this server's catalog with a registry
//!    each, kept while the CRD's generation and accepted names stay the same (so their watch caches live
//!    on), and leave when the CRD is gone.
//!
//! Apiservers learn of a CRD through their own watch, so a client of another apiserver can see a 404 for a
//! moment after the CRD is `Established` — as with upstream's HA apiservers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::apiextensions::{custom, naming};
use crate::apis::{ResourceInfo, StoreFactory};
use crate::endpoints::{ApiServer, Registry};
use crate::registry::meta;
use crate::registry::options::{DeleteOptions, UpdateOptions};
use crate::registry::rest::Rest;
use crate::registry::store::ListRequest;
use crate::registry::strategies::customresourcedefinitions::{self as crd, conditions};
use crate::registry::strategy::Subresource;
use crate::registry::system::rfc3339;
use crate::storage::WatchEvent;

/// What this server serves for one CRD, and what it was made from.
struct ServedCrd {
    /// The CRD's generation, accepted names, and whether it is being deleted: when any changes, the entries
    /// are made again.
    made_from: (i64, Value, bool),
    entries: Vec<(ResourceInfo, Arc<dyn Rest>)>,
}

/// Runs the controller until the process ends.
pub(crate) async fn run(server: Arc<ApiServer>, factory: StoreFactory) {
    let Some(crds) = server.rest(crd::GROUP, "v1", "customresourcedefinitions") else { return };
    let mut served: BTreeMap<String, ServedCrd> = BTreeMap::new();
    loop {
        let list = match crds.list("", &ListRequest::default()).await {
            Ok(list) => list,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let mut known: BTreeMap<String, Value> =
            list.items.iter().map(|o| (meta::get_str(o.value(), "name").to_string(), o.value().clone())).collect();
        let mut pending = reconcile(&server, crds.as_ref(), &factory, &known, &mut served).await;
        let request = ListRequest { resource_version: list.resource_version.to_string(), ..ListRequest::default() };
        let Ok(mut watcher) = crds.watch("", &request).await else {
            // Etcd or the cache is not answering; list again in a while rather than at once.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        loop {
            // A CRD left unfinished (its status write failed, or its custom resources are held by their
            // own finalizers) is reconciled again after a while, as upstream's controllers requeue it:
            // what unblocks it brings no CRD event.
            let event = if pending {
                match tokio::time::timeout(FINALIZE_RETRY, watcher.next()).await {
                    Ok(event) => event,
                    Err(_) => {
                        pending = reconcile(&server, crds.as_ref(), &factory, &known, &mut served).await;
                        continue;
                    }
                }
            } else {
                watcher.next().await
            };
            let Some(event) = event else { break };
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                    known.insert(meta::get_str(o.value(), "name").to_string(), o.value().clone());
                }
                WatchEvent::Deleted(o) => {
                    known.remove(meta::get_str(o.value(), "name"));
                }
                WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) => continue,
                WatchEvent::Error(_) => break,
            }
            pending = reconcile(&server, crds.as_ref(), &factory, &known, &mut served).await;
        }
    }
}

/// How long a CRD waits before it is reconciled again when a pass could not finish it: its status write
/// failed, or its custom resources are held by their own finalizers.
const FINALIZE_RETRY: Duration = Duration::from_millis(500);

/// One pass over every CRD this server knows of; whether a CRD is left unfinished (to try again).
async fn reconcile(
    server: &ApiServer,
    crds: &dyn Rest,
    factory: &StoreFactory,
    known: &BTreeMap<String, Value>,
    served: &mut BTreeMap<String, ServedCrd>,
) -> bool {
    let now = rfc3339(server.clock.now_unix_s());
    let mut pending = false;
    for (name, obj) in known {
        let deleting = !meta::get_str(obj, "deletionTimestamp").is_empty();
        if deleting {
            if meta::finalizers(obj).contains(&crd::CLEANUP_FINALIZER) {
                pending |= !finalize(crds, obj, served.get(name), &now).await;
            }
            continue;
        }
        let others: Vec<&Value> = known.iter().filter(|(n, _)| *n != name).map(|(_, v)| v).collect();
        let desired = naming::desired_status(obj, &others, &now);
        if obj.get("status") != Some(&desired) {
            let mut update = obj.clone();
            update["status"] = desired;
            // A conflict is another apiserver's write, whose event brings the next pass; any failure is
            // also tried again after a while, in case no event comes (etcd did not answer).
            if crds.update_subresource("", name, Subresource::Status, update, &UpdateOptions::default()).await.is_err()
            {
                pending = true;
            }
        }
    }

    // What to serve: every established CRD, made again when what it was made from changed.
    let mut changed = false;
    let mut next: BTreeMap<String, ServedCrd> = BTreeMap::new();
    for (name, obj) in known {
        if !conditions::established(obj) {
            continue;
        }
        let made_from = (
            meta::get(obj, "generation").and_then(Value::as_i64).unwrap_or(0),
            obj.pointer("/status/acceptedNames").cloned().unwrap_or(Value::Null),
            !meta::get_str(obj, "deletionTimestamp").is_empty(),
        );
        if let Some(existing) = served.remove(name).filter(|s| s.made_from == made_from) {
            next.insert(name.clone(), existing);
            continue;
        }
        let Some(infos) = custom::resource_infos(obj) else { continue };
        let rests = factory(&infos, &crd::storage_version(obj).unwrap_or_default());
        next.insert(name.clone(), ServedCrd { made_from, entries: infos.into_iter().zip(rests).collect() });
        changed = true;
    }
    changed |= !served.is_empty();
    *served = next;
    if changed {
        let entries: Vec<(ResourceInfo, Arc<dyn Rest>)> =
            served.values().flat_map(|s| s.entries.iter().cloned()).collect();
        server.replace_served(|current| {
            let mut catalog = current.catalog.clone();
            let mut registry: Registry = current.registry.clone();
            catalog.retain(|info| !info.custom);
            registry.retain(|key, _| catalog.get(&key.0, &key.1, &key.2).is_some());
            for (info, rest) in entries {
                let key = (info.resource.group.clone(), info.resource.version.clone(), info.resource.plural.clone());
                registry.insert(key, rest);
                catalog.add(info);
            }
            (catalog, registry)
        });
    }
    pending
}

/// Deletes a CRD's custom resources, then lets the CRD go by removing the cleanup finalizer; whether it
/// got that far.
async fn finalize(crds: &dyn Rest, obj: &Value, served: Option<&ServedCrd>, now: &str) -> bool {
    let name = meta::get_str(obj, "name");
    let mut status = obj.get("status").cloned().unwrap_or_else(|| serde_json::json!({}));
    let in_progress = conditions::condition(
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    );
    conditions::set_condition(&mut status, in_progress, now);
    if obj.get("status") != Some(&status) {
        let mut update = obj.clone();
        update["status"] = status.clone();
        if crds.update_subresource("", name, Subresource::Status, update, &UpdateOptions::default()).await.is_err() {
            return false;
        }
    }
    // The storage version's registry reads every object, whichever version wrote it.
    let storage = crd::storage_version(obj).unwrap_or_default();
    let rest = served
        .and_then(|s| s.entries.iter().find(|(info, _)| info.resource.version == storage).or(s.entries.first()))
        .map(|(_, rest)| rest.clone());
    if let Some(rest) = rest {
        let Ok(list) = rest.list("", &ListRequest::default()).await else { return false };
        for item in &list.items {
            let (ns, item_name) = (meta::get_str(item.value(), "namespace"), meta::get_str(item.value(), "name"));
            let _ = rest.delete(ns, item_name, &DeleteOptions::default()).await;
        }
        match rest.list("", &ListRequest::default()).await {
            Ok(left) if left.items.is_empty() => {}
            // Finalizers of custom resources hold them; the controller tries again later.
            _ => return false,
        }
    }
    let Ok(current) = crds.get("", name, &crate::storage::GetOptions::default()).await else { return false };
    let mut update = current;
    let finalizers: Vec<Value> =
        meta::finalizers(&update).into_iter().filter(|f| *f != crd::CLEANUP_FINALIZER).map(Value::from).collect();
    meta::set(&mut update, "finalizers", if finalizers.is_empty() { None } else { Some(Value::Array(finalizers)) });
    crds.update("", name, update, &UpdateOptions::default()).await.is_ok()
}
