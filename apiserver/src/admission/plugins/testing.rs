//! The fixture the plugins' tests share: a registry of in-memory resources (reads, lists and status
//! writes with resourceVersion checks, which is all plugins do to other objects), and a request on it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::admission::{Plugin, Request};
use crate::registry::admission::{Attributes, Operation};
use crate::registry::error::{RegistryError, OPTIMISTIC_LOCK_MESSAGE};
use crate::registry::options::{CreateOptions, DeleteOptions, UpdateOptions};
use crate::registry::resource::Resource;
use crate::registry::rest::{BoxFuture, PatchFn, Registry, Rest};
use crate::registry::review::Unstored;
use crate::registry::store::{ApplyRequest, DeleteResult, ListRequest};
use crate::registry::strategy::{Strategy, Subresource};
use crate::registry::user::UserInfo;
use crate::storage::status::GroupResource;
use crate::storage::{GetOptions, ObjectList, ResourceVersion, SharedObject, Watcher};

/// One resource's objects by (namespace, name), with a revision counter for resourceVersions.
pub(crate) struct Memory {
    group: String,
    plural: String,
    strategy: Unstored,
    objects: Mutex<(u64, BTreeMap<(String, String), Value>)>,
}

impl Memory {
    fn resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// Every object stored, in key order.
    pub(crate) fn all(&self) -> Vec<Value> {
        self.objects.lock().map(|o| o.1.values().cloned().collect()).unwrap_or_default()
    }
}

fn unsupported<'a, T: Send + 'a>() -> BoxFuture<'a, Result<T, RegistryError>> {
    Box::pin(async { Err(RegistryError::Internal("not in the test fixture".into())) })
}

impl Rest for Memory {
    fn strategy(&self) -> &dyn Strategy {
        &self.strategy
    }

    fn get<'a>(&'a self, ns: &'a str, name: &'a str, _: &'a GetOptions) -> BoxFuture<'a, Result<Value, RegistryError>> {
        let found = self.objects.lock().ok().and_then(|o| o.1.get(&(ns.to_string(), name.to_string())).cloned());
        let resource = self.resource();
        Box::pin(async move { found.ok_or(RegistryError::NotFound { resource, name: name.to_string() }) })
    }

    fn list<'a>(&'a self, ns: &'a str, _: &'a ListRequest) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        let items: Vec<SharedObject> = self
            .all()
            .into_iter()
            .filter(|o| ns.is_empty() || o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns))
            .map(SharedObject::new)
            .collect();
        Box::pin(async move {
            Ok(ObjectList {
                items,
                resource_version: ResourceVersion(0),
                continue_token: None,
                remaining_item_count: None,
            })
        })
    }

    fn watch<'a>(&'a self, _: &'a str, _: &'a ListRequest) -> BoxFuture<'a, Result<Watcher, RegistryError>> {
        unsupported()
    }

    fn create<'a>(&'a self, _: &'a str, _: Value, _: &'a CreateOptions) -> BoxFuture<'a, Result<Value, RegistryError>> {
        unsupported()
    }

    fn update<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Value,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        unsupported()
    }

    /// A status write: refused with upstream's 409 when its resourceVersion is not the stored one.
    fn update_subresource<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        _: Subresource,
        mut obj: Value,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        let resource = self.resource();
        let result = match self.objects.lock() {
            Ok(mut guard) => {
                let (rev, objects) = &mut *guard;
                let key = (ns.to_string(), name.to_string());
                match objects.get(&key) {
                    None => Err(RegistryError::NotFound { resource, name: name.to_string() }),
                    Some(stored)
                        if stored.pointer("/metadata/resourceVersion") != obj.pointer("/metadata/resourceVersion") =>
                    {
                        Err(RegistryError::Conflict {
                            resource,
                            name: name.to_string(),
                            why: OPTIMISTIC_LOCK_MESSAGE.into(),
                        })
                    }
                    Some(_) => {
                        *rev += 1;
                        obj["metadata"]["resourceVersion"] = Value::from(rev.to_string());
                        objects.insert(key, obj.clone());
                        Ok(obj)
                    }
                }
            }
            Err(_) => Err(RegistryError::Internal("poisoned".into())),
        };
        Box::pin(async move { result })
    }

    fn patch<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Option<Subresource>,
        _: PatchFn<'a>,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        unsupported()
    }

    fn apply<'a>(
        &'a self,
        _: &'a str,
        _: Value,
        _: &'a ApplyRequest<'a>,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        unsupported()
    }

    fn delete<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<DeleteResult, RegistryError>> {
        unsupported()
    }

    fn delete_collection<'a>(
        &'a self,
        _: &'a str,
        _: &'a ListRequest,
        _: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        unsupported()
    }
}

/// Where each kind the plugins read is served: kind, group, version, plural, namespaced.
const KINDS: &[(&str, &str, &str, &str, bool)] = &[
    ("ServiceAccount", "", "v1", "serviceaccounts", true),
    ("Secret", "", "v1", "secrets", true),
    ("ConfigMap", "", "v1", "configmaps", true),
    ("Service", "", "v1", "services", true),
    ("Pod", "", "v1", "pods", true),
    ("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", true),
    ("LimitRange", "", "v1", "limitranges", true),
    ("ResourceQuota", "", "v1", "resourcequotas", true),
    ("Namespace", "", "v1", "namespaces", false),
    ("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", false),
    ("StorageClass", "storage.k8s.io", "v1", "storageclasses", false),
    ("Deployment", "apps", "v1", "deployments", true),
];

/// A registry serving `objects` (by kind) from memory, each with a resourceVersion.
pub(crate) fn registry(objects: Vec<Value>) -> Registry {
    let mut registry = Registry::new();
    for (kind, group, version, plural, namespaced) in KINDS {
        let mut stored = BTreeMap::new();
        let mut rev = 0;
        for mut obj in objects.iter().filter(|o| o["kind"] == *kind).cloned() {
            rev += 1;
            obj["metadata"]["resourceVersion"] = Value::from(rev.to_string());
            let meta =
                |k: &str| obj.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).unwrap_or("").to_string();
            stored.insert((meta("namespace"), meta("name")), obj);
        }
        let memory = Memory {
            group: group.to_string(),
            plural: plural.to_string(),
            strategy: Unstored { namespaced: *namespaced },
            objects: Mutex::new((rev, stored)),
        };
        registry.insert((group.to_string(), version.to_string(), plural.to_string()), Arc::new(memory));
    }
    registry
}

/// The stored objects of one resource of a fixture registry.
pub(crate) async fn stored(registry: &Registry, gvr: (&str, &str, &str)) -> Vec<Value> {
    crate::admission::webhook::list(registry, gvr, "").await.unwrap_or_default()
}

/// A request by an admin.
pub(crate) fn admin() -> UserInfo {
    UserInfo {
        username: "admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: BTreeMap::new(),
    }
}

/// The attributes of writing `resource` in `ns`.
pub(crate) fn attrs<'a>(resource: &'a Resource, op: Operation, ns: &'a str, name: &'a str) -> Attributes<'a> {
    Attributes { operation: op, resource, subresource: "", namespace: ns, name, dry_run: false }
}

/// Runs a plugin's both phases, as the chain runs them around the strategy (which the tests leave out).
pub(crate) async fn run(
    plugin: &dyn Plugin,
    req: &Request<'_>,
    obj: &mut Value,
    old: &Value,
) -> Result<(), RegistryError> {
    if req.attrs.operation != Operation::Delete {
        plugin.admit(req, obj, old).await?;
    }
    plugin.validate(req, obj, old).await
}

/// A refusal's message, or "" when the request was admitted.
pub(crate) fn message(result: &Result<(), RegistryError>) -> String {
    match result {
        Ok(()) => String::new(),
        Err(e) => e.to_status().message.unwrap_or_default(),
    }
}

/// A pod named `name` in `ns` with containers of the given names.
pub(crate) fn pod(ns: &str, name: &str, containers: &[&str]) -> Value {
    let containers: Vec<Value> = containers.iter().map(|c| serde_json::json!({"name": c, "image": "nginx"})).collect();
    serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": containers}})
}
