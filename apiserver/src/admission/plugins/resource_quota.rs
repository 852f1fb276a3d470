//! The ResourceQuota plugin (`KK/staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/`): a
//! write that would take a namespace's usage past a quota's `hard` limits is refused with upstream's 403
//! (`exceeded quota: ...`), and an admitted one is charged to the quotas' `status.used` before it is
//! stored, with the quota's resourceVersion, so that two writes racing for the last unit cannot both
//! have it (a conflict reads the quotas again and judges once more, three times at most).
//!
//! What upstream leaves to the quota controller, which does not run here, the plugin does itself:
//! - a quota whose `status.hard` is not its `spec.hard` (new, or its limits changed) is counted first:
//!   `status.hard` becomes `spec.hard` and `status.used` what the namespace's objects use (the controller's
//!   sync, done when a request needs the quota rather than when the quota is written; a quota no request
//!   has needed yet shows no status);
//! - a delete releases what the object used (the controller's replenishment), on the first delete of the
//!   object only (not the final delete of a pod that was already terminating). A write that fails after
//!   admission keeps its charge, as upstream's does until the controller's next full count, which here
//!   never comes; a delete that fails after admission has released its usage all the same.
//!
//! Left out: the plugin's configuration file (limited resources), and the pod evaluator's clock (a pod
//! past its deletion grace period still counts).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::resource_quota_usage::{self as usage, Check, Evaluator, Usage};
use super::support::{self, forbidden, text};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::options::UpdateOptions;
use crate::registry::rest::{BoxFuture, Registry};
use crate::registry::strategy::Subresource;

const QUOTAS: (&str, &str, &str) = ("", "v1", "resourcequotas");
/// How many times the quotas are read and judged again after a status write lost a race.
const ATTEMPTS: usize = 3;

pub(crate) struct ResourceQuota;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(ResourceQuota)
}

/// Why writing the quotas' status did not succeed.
enum WriteError {
    /// Another write changed a quota first: read them again.
    Conflict(RegistryError),
    Other(RegistryError),
}

fn classify(e: RegistryError) -> WriteError {
    if e.to_status().code == Some(409) {
        WriteError::Conflict(e)
    } else {
        WriteError::Other(e)
    }
}

/// Which resource (group, plural) holds the objects a quota resource name counts, and its evaluator.
fn counted_by(name: &str) -> Option<(String, String, Evaluator)> {
    for (plural, ev) in
        [("pods", Evaluator::Pods), ("services", Evaluator::Services), ("persistentvolumeclaims", Evaluator::Claims)]
    {
        if ev.matching(&[name.to_string()]).len() == 1 {
            return Some((String::new(), plural.to_string(), ev));
        }
    }
    let (plural, group) = match name.strip_prefix("count/") {
        Some(rest) => rest.split_once('.').map_or((rest, ""), |(p, g)| (p, g)),
        None => (name, ""),
    };
    let ev = Evaluator::of(group, plural)?;
    (ev.matching(&[name.to_string()]).len() == 1).then(|| (group.to_string(), plural.to_string(), ev))
}

/// Writes a quota's status; the quota carries the resourceVersion it was read at.
async fn write_status(registry: &Registry, quota: &Value) -> Result<Value, WriteError> {
    let Some(rest) = registry.get(&(QUOTAS.0.to_string(), QUOTAS.1.to_string(), QUOTAS.2.to_string())) else {
        return Err(WriteError::Other(RegistryError::Internal("resourcequotas are not served".into())));
    };
    let (ns, name) = (text(quota, "/metadata/namespace"), text(quota, "/metadata/name"));
    rest.update_subresource(ns, name, Subresource::Status, quota.clone(), &UpdateOptions::default())
        .await
        .map_err(classify)
}

/// The quota controller's sync of one quota: `status.hard` from `spec.hard`, `status.used` counted from
/// the namespace's objects.
async fn count(registry: &Registry, quota: &Value) -> Result<Usage, RegistryError> {
    let ns = text(quota, "/metadata/namespace");
    let mut by_resource: BTreeMap<(String, String), Evaluator> = BTreeMap::new();
    let mut used = Usage::new();
    for name in usage::list_at(quota, "/spec/hard").keys() {
        match counted_by(name) {
            Some((group, plural, ev)) => {
                by_resource.insert((group, plural), ev);
            }
            // Nothing here counts it: no such object exists.
            None => {
                used.insert(name.clone(), crate::quantity::Quantity::zero());
            }
        }
    }
    for ((group, plural), ev) in by_resource {
        let objects = match support::served_version(registry, &group, &plural) {
            Some(version) => support::list_live(registry, (&group, &version, &plural), ns).await?,
            None => Vec::new(),
        };
        used = usage::add(&used, &crate::quota::calculate(quota, &ev, &objects, None));
    }
    Ok(used)
}

/// The namespace's quotas, each counted first when its status does not yet reflect its spec.
async fn synced(registry: &Registry, quotas: Vec<Value>) -> Result<Vec<Value>, WriteError> {
    let mut out = Vec::with_capacity(quotas.len());
    for mut quota in quotas {
        let spec_hard = usage::list_at(&quota, "/spec/hard");
        let status_hard = usage::list_at(&quota, "/status/hard");
        let same = spec_hard.len() == status_hard.len()
            && spec_hard.iter().all(|(k, v)| status_hard.get(k).is_some_and(|h| h == v));
        if !same {
            let used = count(registry, &quota).await.map_err(WriteError::Other)?;
            let hard = quota.pointer("/spec/hard").cloned().unwrap_or(json!({}));
            quota["status"] = json!({"hard": hard, "used": usage::to_json(&used)});
            quota = write_status(registry, &quota).await?;
        }
        out.push(quota);
    }
    Ok(out)
}

/// Writes the new usage of the quotas that changed.
async fn charge(registry: &Registry, quotas: &[Value], changes: BTreeMap<usize, Usage>) -> Result<(), WriteError> {
    for (i, used) in changes {
        let Some(quota) = quotas.get(i) else { continue };
        let mut quota = quota.clone();
        quota["status"]["used"] = usage::to_json(&used);
        write_status(registry, &quota).await?;
    }
    Ok(())
}

impl ResourceQuota {
    /// `Evaluate`: judge and charge a create or update.
    async fn evaluate(&self, req: &Request<'_>, ev: &Evaluator, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        let ns = req.attrs.namespace;
        let mut last = None;
        for attempt in 0..ATTEMPTS {
            // The first look is the cache's, as upstream's lister; after a lost race, storage's.
            let quotas = if attempt == 0 {
                support::list_cached(req.registry, QUOTAS, ns).await?
            } else {
                support::list_live(req.registry, QUOTAS, ns).await?
            };
            if quotas.is_empty() {
                return Ok(());
            }
            let quotas = match synced(req.registry, quotas).await {
                Ok(q) => q,
                Err(WriteError::Conflict(e)) => {
                    last = Some(e);
                    continue;
                }
                Err(WriteError::Other(e)) => return Err(e),
            };
            let check =
                Check { evaluator: ev, operation: req.attrs.operation, subresource: req.attrs.subresource, obj, old };
            let changes = usage::check_request(&quotas, &check).map_err(|why| forbidden(req, obj, why))?;
            if req.attrs.dry_run || changes.is_empty() {
                return Ok(());
            }
            match charge(req.registry, &quotas, changes).await {
                Ok(()) => return Ok(()),
                Err(WriteError::Conflict(e)) => last = Some(e),
                Err(WriteError::Other(e)) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| RegistryError::Internal("resource quota evaluation failed".into())))
    }

    /// The replenishment of a deleted object's usage.
    async fn release(&self, req: &Request<'_>, ev: &Evaluator, old: &Value) -> Result<(), RegistryError> {
        let ns = req.attrs.namespace;
        let freed = ev.usage(old, None);
        for attempt in 0..ATTEMPTS {
            let quotas = if attempt == 0 {
                support::list_cached(req.registry, QUOTAS, ns).await?
            } else {
                support::list_live(req.registry, QUOTAS, ns).await?
            };
            let mut changes = BTreeMap::new();
            for (i, quota) in quotas.iter().enumerate() {
                let hard: Vec<String> = usage::list_at(quota, "/status/hard").into_keys().collect();
                let tracked = ev.matching(&hard);
                if tracked.is_empty() || !ev.in_scopes(quota, old) {
                    continue;
                }
                let used = usage::list_at(quota, "/status/used");
                let mut released = used.clone();
                for resource in tracked.iter().filter(|r| used.contains_key(*r)) {
                    if let Some(q) = freed.get(resource) {
                        let left = used[resource] - *q;
                        let left = if left.is_negative() { crate::quantity::Quantity::zero() } else { left };
                        released.insert(resource.clone(), left);
                    }
                }
                if released.iter().any(|(k, v)| used.get(k).map(|q| q.to_text()) != Some(v.to_text())) {
                    changes.insert(i, released);
                }
            }
            match charge(req.registry, &quotas, changes).await {
                Ok(()) => return Ok(()),
                Err(WriteError::Conflict(_)) => {}
                Err(WriteError::Other(e)) => return Err(e),
            }
        }
        // Losing the race three times leaves the usage charged, as a missed replenishment upstream would.
        Ok(())
    }
}

impl Plugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            // Cluster-scoped writes, and so the creation of namespaces, are not counted.
            if req.attrs.namespace.is_empty() {
                return Ok(());
            }
            let r = req.attrs.resource;
            let Some(ev) = Evaluator::of(&r.group, &r.plural) else { return Ok(()) };
            if req.attrs.operation == Operation::Delete {
                let first_delete = old.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null);
                if req.attrs.dry_run || !req.attrs.subresource.is_empty() || !first_delete {
                    return Ok(());
                }
                return self.release(req, &ev, old).await;
            }
            if !ev.handles(req.attrs.operation, req.attrs.subresource) {
                return Ok(());
            }
            self.evaluate(req, &ev, obj, old).await
        })
    }
}

#[cfg(test)]
#[path = "resource_quota_tests.rs"]
mod tests;
