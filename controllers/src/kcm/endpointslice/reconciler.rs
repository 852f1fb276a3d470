//! Which EndpointSlices to create, update and delete for one Service (1.32,
//! `staging/src/k8s.io/endpointslice/reconciler.go` `Reconcile`, `reconcileByAddressType`,
//! `reconcileByPortMapping`, `finalize`; `utils.go` `getSliceToFill`). Sans-IO: the Service, its pods,
//! the nodes and the existing slices in, a [`Plan`] and the per-pod errors out.
//!
//! Slices are grouped by address type and then by their exact set of ports. Within a group the reconciler
//! keeps churn low, as upstream's: endpoints stay in the slice that has them (updated in place when only
//! their conditions, node or zone changed); slices that changed anyway are topped up first, fullest
//! first; what is left goes into the unchanged slice it fills best, or into new slices of at most
//! `max_endpoints` each. A slice left empty is deleted, but a Service with nothing to publish keeps one
//! empty placeholder slice. Before writing, slices to create take over the names of slices to delete.
//! Upstream pops desired endpoints from a Go map in random order; here they go in key order.
//!
//! Left out: topology hints (`service.kubernetes.io/topology-mode`, `trafficDistribution`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::endpoint::{
    address_types, endpoint_ports, endpoints_of, new_slice, owned_by, pod_to_endpoint, port_map_key, slice_labels,
    Endpoint, EndpointKey,
};
use super::util::{format_rfc3339_nano, meta, should_pod_be_in_endpoints, LAST_CHANGE_TRIGGER_TIME};

/// What one sync writes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub create: Vec<Value>,
    pub update: Vec<Value>,
    pub delete: Vec<Value>,
}

fn name(slice: &Value) -> &str {
    meta(slice, "name")
}

fn address_type(slice: &Value) -> &str {
    slice.get("addressType").and_then(Value::as_str).unwrap_or("")
}

fn endpoint_count(slice: &Value) -> usize {
    slice.get("endpoints").and_then(Value::as_array).map_or(0, Vec::len)
}

fn push_endpoint(slice: &mut Value, endpoint: &Endpoint) {
    if !slice.get("endpoints").is_some_and(Value::is_array) {
        slice["endpoints"] = json!([]);
    }
    if let Some(list) = slice.get_mut("endpoints").and_then(Value::as_array_mut) {
        list.push(endpoint.to_json());
    }
}

/// `Reconcile`: the plan for `service` over `pods` (those its selector selects), looking nodes up with
/// `node`, given the slices this controller manages for it.
pub fn reconcile(
    service: &Value,
    pods: &[&Value],
    node: &dyn Fn(&str) -> Option<Value>,
    existing: &[Value],
    max_endpoints: usize,
) -> (Plan, Vec<String>) {
    let supported = address_types(service);
    let mut plan = Plan::default();
    let mut errors = Vec::new();
    let mut by_type: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut unsupported = Vec::new();
    for slice in existing {
        if supported.contains(address_type(slice)) {
            by_type.entry(address_type(slice).to_string()).or_default().push(slice.clone());
        } else {
            unsupported.push(slice.clone());
        }
    }
    for kind in &supported {
        let slices = by_type.remove(kind).unwrap_or_default();
        let (part, errs) = by_address_type(service, pods, node, &slices, kind, max_endpoints);
        let part = finalize(service, part);
        plan.create.extend(part.create);
        plan.update.extend(part.update);
        plan.delete.extend(part.delete);
        errors.extend(errs);
    }
    plan.delete.extend(unsupported);
    (plan, errors)
}

/// `reconcileByAddressType`.
fn by_address_type(
    service: &Value,
    pods: &[&Value],
    node: &dyn Fn(&str) -> Option<Value>,
    existing: &[Value],
    kind: &str,
    max_endpoints: usize,
) -> (Plan, Vec<String>) {
    let mut plan = Plan::default();
    let mut errors = Vec::new();
    let mut existing_by_ports: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for slice in existing {
        if owned_by(slice, service) {
            let ports: Vec<Value> = slice.get("ports").and_then(Value::as_array).cloned().unwrap_or_default();
            existing_by_ports.entry(port_map_key(&ports)).or_default().push(slice.clone());
        } else {
            plan.delete.push(slice.clone());
        }
    }
    let publish = service.pointer("/spec/publishNotReadyAddresses").and_then(Value::as_bool) == Some(true);
    let mut desired: BTreeMap<String, (Vec<Value>, BTreeMap<EndpointKey, Endpoint>)> = BTreeMap::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod, true) {
            continue;
        }
        let ports = endpoint_ports(service, pod);
        let group = desired.entry(port_map_key(&ports)).or_insert_with(|| (ports, BTreeMap::new()));
        let node_name = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
        let found = node(node_name);
        if found.is_none() && !publish {
            // The pod's node is unknown: leave the pod out for now, and have the sync retried.
            errors.push(format!(
                "skipping Pod {} for Service {}/{}: Node {node_name} Not Found",
                meta(pod, "name"),
                meta(service, "namespace"),
                meta(service, "name")
            ));
            continue;
        }
        let endpoint = pod_to_endpoint(pod, found.as_ref(), service, kind);
        if !endpoint.addresses.is_empty() {
            group.1.insert(endpoint.key(), endpoint);
        }
    }
    for (key, (ports, endpoints)) in desired.iter_mut() {
        let slices = existing_by_ports.get(key).cloned().unwrap_or_default();
        let part = by_port_mapping(service, &slices, std::mem::take(endpoints), ports, kind, max_endpoints);
        plan.create.extend(part.create);
        plan.update.extend(part.update);
        plan.delete.extend(part.delete);
    }
    for (key, slices) in existing_by_ports {
        if !desired.contains_key(&key) {
            plan.delete.extend(slices);
        }
    }
    // A Service with nothing to publish keeps one empty placeholder slice.
    if existing.len() == plan.delete.len() && plan.create.is_empty() {
        let placeholder = new_slice(service, &[], kind);
        if plan.delete.len() == 1 && is_placeholder_like(&plan.delete[0], &placeholder) {
            plan.delete.clear();
        } else {
            plan.create.push(placeholder);
        }
    }
    (plan, errors)
}

/// `placeholderSliceCompare`: same namespace, labels, address type, and no endpoints or ports.
fn is_placeholder_like(slice: &Value, placeholder: &Value) -> bool {
    let labels = |s: &Value| s.pointer("/metadata/labels").cloned().unwrap_or(json!({}));
    meta(slice, "namespace") == meta(placeholder, "namespace")
        && labels(slice) == labels(placeholder)
        && address_type(slice) == address_type(placeholder)
        && endpoint_count(slice) == 0
        && slice.get("ports").and_then(Value::as_array).is_none_or(Vec::is_empty)
}

/// `reconcileByPortMapping`: one group of slices (one port set) against its desired endpoints.
fn by_port_mapping(
    service: &Value,
    existing: &[Value],
    mut desired: BTreeMap<EndpointKey, Endpoint>,
    ports: &[Value],
    kind: &str,
    max_endpoints: usize,
) -> Plan {
    let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
    let mut unchanged: BTreeSet<String> = BTreeSet::new();
    let mut to_update: BTreeSet<String> = BTreeSet::new();
    let mut to_delete: BTreeSet<String> = BTreeSet::new();
    // 1. Keep what is still desired where it is, updated to its desired state.
    for slice in existing {
        let current = endpoints_of(slice);
        let mut kept = Vec::new();
        let mut changed = false;
        for endpoint in &current {
            if let Some(want) = desired.remove(&endpoint.key()) {
                changed |= !want.equal_beyond_hash(endpoint);
                kept.push(want);
            }
        }
        let (labels, labels_changed) = slice_labels(slice, service);
        let mut copy = slice.clone();
        if changed || kept.len() != current.len() {
            if kept.is_empty() {
                to_delete.insert(name(slice).to_string());
            } else {
                copy["endpoints"] = Value::Array(kept.iter().map(Endpoint::to_json).collect());
                copy["metadata"]["labels"] = Value::Object(labels);
                to_update.insert(name(slice).to_string());
            }
        } else if labels_changed {
            copy["metadata"]["labels"] = Value::Object(labels);
            to_update.insert(name(slice).to_string());
        } else {
            unchanged.insert(name(slice).to_string());
        }
        by_name.insert(name(slice).to_string(), copy);
    }
    // 2. Top up the slices that change anyway, the fullest first.
    if !desired.is_empty() && !to_update.is_empty() {
        let mut order: Vec<String> = to_update.iter().cloned().collect();
        order.sort_by_key(|n| std::cmp::Reverse(endpoint_count(&by_name[n])));
        for slice_name in order {
            let slice = by_name.get_mut(&slice_name).expect("a known slice");
            while endpoint_count(slice) < max_endpoints {
                let Some((_, endpoint)) = desired.pop_first() else { break };
                push_endpoint(slice, &endpoint);
            }
        }
    }
    // 3. The rest: into the unchanged slice it fills best, else into new slices.
    let mut create = Vec::new();
    while !desired.is_empty() {
        let mut target = None;
        if desired.len() < max_endpoints && !unchanged.is_empty() {
            target = slice_to_fill(unchanged.iter().map(|n| &by_name[n]), desired.len(), max_endpoints);
        }
        let mut slice = match &target {
            Some(slice_name) => by_name[slice_name].clone(),
            None => new_slice(service, ports, kind),
        };
        while endpoint_count(&slice) < max_endpoints {
            let Some((_, endpoint)) = desired.pop_first() else { break };
            push_endpoint(&mut slice, &endpoint);
        }
        match target {
            Some(slice_name) => {
                unchanged.remove(&slice_name);
                to_update.insert(slice_name.clone());
                by_name.insert(slice_name, slice);
            }
            None => create.push(slice),
        }
    }
    Plan {
        create,
        update: to_update.iter().map(|n| by_name[n].clone()).collect(),
        delete: to_delete.iter().map(|n| by_name[n].clone()).collect(),
    }
}

/// `getSliceToFill`: the slice `count` more endpoints leave closest to full (without overflowing it).
fn slice_to_fill<'a>(slices: impl Iterator<Item = &'a Value>, count: usize, max_endpoints: usize) -> Option<String> {
    let mut closest_diff = max_endpoints;
    let mut closest = None;
    for slice in slices {
        let filled = count + endpoint_count(slice);
        if filled <= max_endpoints && max_endpoints - filled < closest_diff {
            closest_diff = max_endpoints - filled;
            closest = Some(name(slice).to_string());
            if closest_diff == 0 {
                break;
            }
        }
    }
    closest
}

/// `finalize`'s first step: a slice to create takes over the name of a slice of the same address type,
/// owned by the Service, that was to be deleted, and becomes an update of it.
fn finalize(service: &Value, mut plan: Plan) -> Plan {
    let mut i = 0;
    while i < plan.delete.len() && !plan.create.is_empty() {
        let doomed = &plan.delete[i];
        let last = plan.create.last().expect("not empty");
        if address_type(doomed) == address_type(last) && owned_by(doomed, service) {
            let mut slice = plan.create.pop().expect("not empty");
            let doomed = plan.delete.remove(i);
            let meta_out = slice["metadata"].as_object_mut().expect("a slice has metadata");
            meta_out.remove("generateName");
            meta_out.insert("name".into(), json!(name(&doomed)));
            // The update answers to the version it replaces, so that a concurrent change makes it conflict.
            meta_out.insert("resourceVersion".into(), json!(meta(&doomed, "resourceVersion")));
            plan.update.push(slice);
        } else {
            i += 1;
        }
    }
    plan
}

/// `addTriggerTimeAnnotation`: sets (or, with no trigger time, removes) the annotation on a slice to write.
pub fn set_trigger_time(slice: &mut Value, trigger_us: Option<i64>) {
    if !slice.pointer("/metadata/annotations").is_some_and(Value::is_object) {
        slice["metadata"]["annotations"] = json!({});
    }
    let annotations = slice["metadata"]["annotations"].as_object_mut().expect("an object");
    match trigger_us {
        Some(at) => annotations.insert(LAST_CHANGE_TRIGGER_TIME.into(), json!(format_rfc3339_nano(at))),
        None => annotations.remove(LAST_CHANGE_TRIGGER_TIME),
    };
}

#[cfg(test)]
#[path = "reconciler_tests.rs"]
mod tests;
