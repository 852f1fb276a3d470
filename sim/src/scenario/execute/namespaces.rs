//! What `DeletedNamespacesGone` judges (`checker::namespace`), watched in etcd once the faults have stopped
//! and the run has settled: every second, the registry as etcd holds it, until no namespace is being deleted
//! or [`BOUND_MS`] has passed. Each namespace seen with a `deletionTimestamp` is recorded with when it was
//! gone (or its conditions, if it never was); when the watch ends, every object whose namespace no longer
//! exists is a leftover. Only runs with controller managers are watched: without them nothing deletes a
//! namespace's content. The reads go from the control node straight to the first member that answers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;

use super::registry::{self, Registry};
use crate::checker::namespace::{Deleting, NamespaceWatch, BOUND_MS};
use crate::cluster::Cluster;

/// How often the registry is read.
const POLL: Duration = Duration::from_secs(1);

/// One read of the registry, as the checker needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Survey {
    /// Every namespace that exists.
    pub namespaces: BTreeSet<String>,
    /// The namespaces being deleted, each with its failing conditions (`Type=True: message`).
    pub deleting: BTreeMap<String, Vec<String>>,
    /// Objects whose namespace does not exist: key by namespace.
    pub leftovers: BTreeMap<String, Vec<String>>,
}

/// What one registry read says about namespaces.
pub fn survey(registry: &Registry) -> Survey {
    let mut out = Survey::default();
    for (_, ns) in registry.of_kind("Namespace") {
        let Some(name) = ns.pointer("/metadata/name").and_then(Value::as_str) else { continue };
        out.namespaces.insert(name.to_string());
        if ns.pointer("/metadata/deletionTimestamp").and_then(Value::as_str).is_some_and(|t| !t.is_empty()) {
            out.deleting.insert(name.to_string(), failing_conditions(ns));
        }
    }
    for (key, object) in &registry.objects {
        let Some(namespace) = object.pointer("/metadata/namespace").and_then(Value::as_str) else { continue };
        if !namespace.is_empty() && !out.namespaces.contains(namespace) {
            out.leftovers.entry(namespace.to_string()).or_default().push(key.clone());
        }
    }
    out
}

/// A namespace's conditions that say something is wrong (status `True`), with their messages.
fn failing_conditions(ns: &Value) -> Vec<String> {
    let conditions = ns.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    conditions
        .iter()
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        .map(|c| {
            let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            format!("{}=True: {}", field("type"), field("message"))
        })
        .collect()
}

/// Watches the namespaces being deleted from the control node until none is left or the bound passed.
pub(super) async fn watch(cluster: &Cluster, timeout: Duration) -> NamespaceWatch {
    let endpoints = cluster.endpoints();
    let watched = cluster.control.spawn(async move { poll(&endpoints, timeout).await }).await;
    watched.unwrap_or_else(|_| NamespaceWatch {
        bound_ms: BOUND_MS,
        unreadable: Some("the namespace watch panicked".into()),
        ..NamespaceWatch::default()
    })
}

async fn poll(endpoints: &[String], timeout: Duration) -> NamespaceWatch {
    let started = tokio::time::Instant::now();
    let mut deleting: BTreeMap<String, Deleting> = BTreeMap::new();
    loop {
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let read = registry::read(endpoints, timeout, 0).await;
        let now = match read {
            Ok(registry) => survey(&registry),
            Err(err) if elapsed_ms >= BOUND_MS => return finished(&deleting, BTreeMap::new(), Some(err.to_string())),
            Err(_) => {
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        for (name, conditions) in &now.deleting {
            let entry = deleting.entry(name.clone()).or_insert_with(|| Deleting {
                name: name.clone(),
                gone_after_ms: None,
                conditions: Vec::new(),
            });
            entry.conditions = conditions.clone();
        }
        for ns in deleting.values_mut() {
            if ns.gone_after_ms.is_none() && !now.namespaces.contains(&ns.name) {
                ns.gone_after_ms = Some(elapsed_ms);
            }
        }
        if now.deleting.is_empty() || elapsed_ms >= BOUND_MS {
            return finished(&deleting, now.leftovers, None);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// What the watch saw, once it ends.
fn finished(
    deleting: &BTreeMap<String, Deleting>,
    leftovers: BTreeMap<String, Vec<String>>,
    unreadable: Option<String>,
) -> NamespaceWatch {
    NamespaceWatch { bound_ms: BOUND_MS, deleting: deleting.values().cloned().collect(), leftovers, unreadable }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_survey_finds_deleting_namespaces_and_objects_left_without_one() {
        let mut registry = Registry::default();
        let objects = [
            ("/registry/namespaces/a", json!({"kind": "Namespace", "metadata": {"name": "a"}})),
            (
                "/registry/namespaces/b",
                json!({"kind": "Namespace", "metadata": {"name": "b", "deletionTimestamp": "2023-11-14T22:13:20Z"},
                       "status": {"conditions": [
                           {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "message": "Discovery failed"},
                           {"type": "NamespaceDeletionContentFailure", "status": "False", "message": "All content"}]}}),
            ),
            ("/registry/configmaps/a/x", json!({"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "a"}})),
            ("/registry/configmaps/c/y", json!({"kind": "ConfigMap", "metadata": {"name": "y", "namespace": "c"}})),
            (
                "/registry/example.com/widgets/c/w",
                json!({"kind": "Widget", "metadata": {"name": "w", "namespace": "c"}}),
            ),
            ("/registry/nodes/n", json!({"kind": "Node", "metadata": {"name": "n"}})),
        ];
        for (key, object) in objects {
            registry.objects.insert(key.into(), object);
        }
        let found = survey(&registry);
        assert_eq!(found.namespaces, BTreeSet::from(["a".to_string(), "b".to_string()]));
        assert_eq!(
            found.deleting,
            BTreeMap::from([(
                "b".to_string(),
                vec!["NamespaceDeletionDiscoveryFailure=True: Discovery failed".into()]
            )])
        );
        assert_eq!(
            found.leftovers,
            BTreeMap::from([(
                "c".to_string(),
                vec!["/registry/configmaps/c/y".to_string(), "/registry/example.com/widgets/c/w".to_string()]
            )])
        );
    }
}
