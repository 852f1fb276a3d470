//! The LimitRanger plugin (`KK/plugin/pkg/admission/limitranger/admission.go`): a new pod's containers
//! take the `default` limits and `defaultRequest` requests of the namespace's LimitRanges where they state
//! none (and the pod is annotated with what was set), then pods and claims are held to the ranges'
//! `min`, `max` and `maxLimitRequestRatio`, with upstream's 403.
//!
//! The ranges' own v1 defaults (`SetDefaults_LimitRangeItem`: a container's default limit from its max,
//! its default request from its default limit or its min) are applied as they are read, and a pod's
//! requests default to its limits before the ranges' defaults apply, as v1 decoding does before admission
//! upstream. Ranges are taken in name order, and the resources of one range in name order, where Go's map
//! order is random; several violations are listed as upstream's aggregate lists them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::resource_quota_usage::{pod_total, resources, Usage};
use super::support::{self, forbidden, items, text};
use crate::admission::{Plugin, Request};
use crate::quantity::Quantity;
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;

/// `limitRangerAnnotation`.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";
const RANGES: (&str, &str, &str) = ("", "v1", "limitranges");

pub(crate) struct LimitRanger;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(LimitRanger)
}

/// One item of a range, its v1 defaults applied.
#[derive(Debug, Default)]
pub(crate) struct Item {
    pub(crate) kind: String,
    pub(crate) min: Usage,
    pub(crate) max: Usage,
    pub(crate) default: Usage,
    pub(crate) default_request: Usage,
    pub(crate) ratio: Usage,
}

fn quantities(item: &Value, field: &str) -> Usage {
    let Some(list) = item.get(field).and_then(Value::as_object) else { return Usage::new() };
    list.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// The items of a range, with `SetDefaults_LimitRangeItem` applied to its container items.
pub(crate) fn range_items(range: &Value) -> Vec<Item> {
    items(range, "/spec/limits")
        .iter()
        .map(|i| {
            let mut item = Item {
                kind: text(i, "/type").to_string(),
                min: quantities(i, "min"),
                max: quantities(i, "max"),
                default: quantities(i, "default"),
                default_request: quantities(i, "defaultRequest"),
                ratio: quantities(i, "maxLimitRequestRatio"),
            };
            if item.kind == "Container" {
                for (k, v) in &item.max {
                    item.default.entry(k.clone()).or_insert(*v);
                }
                for (k, v) in &item.default {
                    item.default_request.entry(k.clone()).or_insert(*v);
                }
                for (k, v) in &item.min {
                    item.default_request.entry(k.clone()).or_insert(*v);
                }
            }
            item
        })
        .collect()
}

/// `defaultContainerResourceRequirements`: the container items' default requests and limits.
fn container_defaults(items: &[Item]) -> (Usage, Usage) {
    let (mut requests, mut limits) = (Usage::new(), Usage::new());
    for item in items.iter().filter(|i| i.kind == "Container") {
        requests.extend(item.default_request.iter().map(|(k, v)| (k.clone(), *v)));
        limits.extend(item.default.iter().map(|(k, v)| (k.clone(), *v)));
    }
    (requests, limits)
}

/// The v1 default of a container's requests: its limits where it requests nothing.
fn default_requests_to_limits(container: &mut Map<String, Value>) {
    let Some(resources) = container.get_mut("resources").and_then(Value::as_object_mut) else { return };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else { return };
    let requests = resources.entry("requests").or_insert_with(|| json!({}));
    if requests.is_null() {
        *requests = json!({});
    }
    if let Some(requests) = requests.as_object_mut() {
        for (name, quantity) in limits {
            requests.entry(name).or_insert(quantity);
        }
    }
}

/// `mergeContainerResources`: what one container lacks, from the defaults; the annotation's parts.
fn merge_container(
    container: &mut Map<String, Value>,
    requests: &Usage,
    limits: &Usage,
    what: &str,
    notes: &mut Vec<String>,
) {
    let name = container.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let resources = container.entry("resources").or_insert_with(|| json!({}));
    let Some(resources) = resources.as_object_mut() else { return };
    let mut set = |kind: &str, defaults: &Usage| -> Vec<String> {
        let mut added = Vec::new();
        if defaults.is_empty() {
            return added;
        }
        let list = resources.entry(kind).or_insert_with(|| json!({}));
        if list.is_null() {
            *list = json!({});
        }
        let Some(list) = list.as_object_mut() else { return added };
        for (k, v) in defaults {
            if !list.contains_key(k) {
                list.insert(k.clone(), Value::from(v.to_text()));
                added.push(k.clone());
            }
        }
        added
    };
    let set_limits = set("limits", limits);
    let set_requests = set("requests", requests);
    if !set_requests.is_empty() {
        notes.push(format!("{} request for {what} {name}", set_requests.join(", ")));
    }
    if !set_limits.is_empty() {
        notes.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
    }
}

/// `PodMutateLimitFunc` for one range.
pub(crate) fn default_pod(pod: &mut Value, items: &[Item]) {
    let (requests, limits) = container_defaults(items);
    let mut notes = Vec::new();
    for (list, what) in [("containers", "container"), ("initContainers", "init container")] {
        let Some(containers) = pod.pointer_mut(&format!("/spec/{list}")).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            default_requests_to_limits(container);
            merge_container(container, &requests, &limits, what, &mut notes);
        }
    }
    if notes.is_empty() {
        return;
    }
    let Some(meta) = pod.as_object_mut().map(|p| p.entry("metadata").or_insert_with(|| json!({}))) else { return };
    let Some(meta) = meta.as_object_mut() else { return };
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(ANNOTATION.into(), Value::from(format!("LimitRanger plugin set: {}", notes.join("; "))));
    }
}

/// `requestLimitEnforcedValues`: milli units unless a value is too large for them.
fn observed(request: Option<Quantity>, limit: Option<Quantity>, enforced: Quantity) -> (i64, i64, i64) {
    let zero = Quantity::zero();
    let (r, l) = (request.unwrap_or(zero), limit.unwrap_or(zero));
    // `MaxMilliValue`.
    const MAX_MILLI: i64 = i64::MAX / 1000;
    if r.value() <= MAX_MILLI && l.value() <= MAX_MILLI && enforced.value() <= MAX_MILLI {
        (r.milli_value(), l.milli_value(), enforced.milli_value())
    } else {
        (r.value(), l.value(), enforced.value())
    }
}

/// `minConstraint`.
fn min_constraint(kind: &str, name: &str, enforced: Quantity, requests: &Usage, limits: &Usage) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let (r, l, e) = observed(req, lim, enforced);
    let enforced = enforced.to_text();
    match (req, lim) {
        (None, _) => Some(format!("minimum {name} usage per {kind} is {enforced}.  No request is specified")),
        (Some(req), _) if r < e => {
            Some(format!("minimum {name} usage per {kind} is {enforced}, but request is {}", req.to_text()))
        }
        (_, Some(lim)) if l < e => {
            Some(format!("minimum {name} usage per {kind} is {enforced}, but limit is {}", lim.to_text()))
        }
        _ => None,
    }
}

/// `maxConstraint`.
fn max_constraint(kind: &str, name: &str, enforced: Quantity, requests: &Usage, limits: &Usage) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let (r, l, e) = observed(req, lim, enforced);
    let enforced = enforced.to_text();
    match (req, lim) {
        (_, None) => Some(format!("maximum {name} usage per {kind} is {enforced}.  No limit is specified")),
        (_, Some(lim)) if l > e => {
            Some(format!("maximum {name} usage per {kind} is {enforced}, but limit is {}", lim.to_text()))
        }
        (Some(req), _) if r > e => {
            Some(format!("maximum {name} usage per {kind} is {enforced}, but request is {}", req.to_text()))
        }
        _ => None,
    }
}

/// `maxRequestConstraint`: a claim's max, against its request.
fn max_request_constraint(kind: &str, name: &str, enforced: Quantity, requests: &Usage) -> Option<String> {
    let req = requests.get(name).copied();
    let (r, _, e) = observed(req, None, enforced);
    let enforced = enforced.to_text();
    match req {
        None => Some(format!("maximum {name} usage per {kind} is {enforced}.  No request is specified")),
        Some(req) if r > e => {
            Some(format!("maximum {name} usage per {kind} is {enforced}, but request is {}", req.to_text()))
        }
        _ => None,
    }
}

/// `limitRequestRatioConstraint`.
fn ratio_constraint(kind: &str, name: &str, enforced: Quantity, requests: &Usage, limits: &Usage) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let (r, l, _) = observed(req, lim, enforced);
    let text = enforced.to_text();
    if req.is_none() || r == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {text}, but no request is specified or request is 0"
        ));
    }
    if lim.is_none() || l == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {text}, but no limit is specified or limit is 0"
        ));
    }
    let ratio = l as f64 / r as f64;
    let (observed_ratio, max) = if enforced.value() <= i64::MAX / 1000 {
        (ratio * 1000.0, enforced.milli_value() as f64)
    } else {
        (ratio, enforced.value() as f64)
    };
    (observed_ratio > max)
        .then(|| format!("{name} max limit to request ratio per {kind} is {text}, but provided ratio is {ratio:.6}"))
}

/// `PodValidateLimitFunc` for one range.
pub(crate) fn validate_pod(pod: &Value, items: &[Item]) -> Vec<String> {
    let mut errs = Vec::new();
    for item in items {
        let kind = item.kind.as_str();
        let mut check = |requests: &Usage, limits: &Usage| {
            errs.extend(item.min.iter().filter_map(|(k, v)| min_constraint(kind, k, *v, requests, limits)));
            errs.extend(item.max.iter().filter_map(|(k, v)| max_constraint(kind, k, *v, requests, limits)));
            errs.extend(item.ratio.iter().filter_map(|(k, v)| ratio_constraint(kind, k, *v, requests, limits)));
        };
        match kind {
            "Container" => {
                for c in items_of(pod) {
                    check(&resources(c, "requests"), &resources(c, "limits"));
                }
            }
            "Pod" => check(&pod_total(pod, "requests"), &pod_total(pod, "limits")),
            _ => {}
        }
    }
    errs
}

fn items_of(pod: &Value) -> impl Iterator<Item = &Value> {
    items(pod, "/spec/containers").iter().chain(items(pod, "/spec/initContainers"))
}

/// `PersistentVolumeClaimValidateLimitFunc` for one range.
pub(crate) fn validate_claim(pvc: &Value, items: &[Item]) -> Vec<String> {
    let requests: Usage = pvc
        .pointer("/spec/resources/requests")
        .and_then(Value::as_object)
        .map(|o| o.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect())
        .unwrap_or_default();
    let mut errs = Vec::new();
    for item in items.iter().filter(|i| i.kind == "PersistentVolumeClaim") {
        let kind = item.kind.as_str();
        errs.extend(item.min.iter().filter_map(|(k, v)| min_constraint(kind, k, *v, &requests, &BTreeMap::new())));
        errs.extend(item.max.iter().filter_map(|(k, v)| max_request_constraint(kind, k, *v, &requests)));
    }
    errs
}

/// `SupportsAttributes`: pods on create, claims on create and update, never a subresource.
fn supports(req: &Request<'_>) -> Option<&'static str> {
    let op = req.attrs.operation;
    if support::is_main(req, "", "pods") && op == Operation::Create {
        return Some("pods");
    }
    let claim = support::is_main(req, "", "persistentvolumeclaims");
    (claim && matches!(op, Operation::Create | Operation::Update)).then_some("persistentvolumeclaims")
}

impl LimitRanger {
    /// The namespace's ranges in name order, unless the request is not one the plugin judges (an update
    /// of an object being deleted is not).
    async fn ranges(&self, req: &Request<'_>, old: &Value) -> Result<Vec<Vec<Item>>, RegistryError> {
        if old.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
            return Ok(Vec::new());
        }
        let mut ranges = support::list_cached(req.registry, RANGES, req.attrs.namespace).await?;
        ranges.sort_by(|a, b| text(a, "/metadata/name").cmp(text(b, "/metadata/name")));
        Ok(ranges.iter().map(range_items).collect())
    }
}

impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if supports(req) != Some("pods") || !obj.is_object() {
                return Ok(());
            }
            for items in self.ranges(req, old).await? {
                default_pod(obj, &items);
            }
            Ok(())
        })
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            let Some(kind) = supports(req) else { return Ok(()) };
            for items in self.ranges(req, old).await? {
                let errs = if kind == "pods" { validate_pod(obj, &items) } else { validate_claim(obj, &items) };
                if !errs.is_empty() {
                    return Err(forbidden(req, obj, support::aggregate(&errs)));
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
#[path = "limit_ranger_tests.rs"]
mod tests;
