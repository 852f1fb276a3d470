//! The sans-IO core of the ResourceQuota plugin: what an object uses (the evaluators of
//! `KK/pkg/quota/v1/evaluator/core`: pods, services, persistent volume claims, and the object count of
//! everything else), which quotas it falls under (resources and pod scopes), and `CheckRequest`
//! (`KK/staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`): the new usage of
//! each quota, or upstream's refusal.
//!
//! Go iterates maps in random order where a message lists several resources; here they are in name order,
//! which is also what upstream's sorted lists (`prettyPrint`) print.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::quantity::Quantity;
use super::support::{items, text};
use crate::registry::admission::Operation;

/// A `ResourceList`: quantities by resource name.
pub(crate) type Usage = BTreeMap<String, Quantity>;

/// `storageClassSuffix`.
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// The resources the pod evaluator tracks (`podResources`).
const POD_RESOURCES: &[&str] = &[
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "pods",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// The resources whose every container must state a request or limit when a quota limits them
/// (`validationSet`).
const VALIDATION_SET: &[&str] = &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// Resources quota never counts (`ignoredResources`): virtual or unstored.
const IGNORED: &[(&str, &str)] = &[
    ("", "bindings"),
    ("", "componentstatuses"),
    ("", "events"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
];

/// The core resources whose count also has a name without `count/` (`legacyObjectCountAliases`).
const LEGACY_ALIASES: &[&str] = &["configmaps", "resourcequotas", "replicationcontrollers", "secrets"];

/// How a resource's usage is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Evaluator {
    Pods,
    Services,
    Claims,
    /// The object count: `count/<resource>[.<group>]`, and the legacy alias if any.
    Count {
        names: Vec<String>,
    },
}

/// `ObjectCountQuotaResourceNameFor`.
pub(crate) fn count_name(group: &str, plural: &str) -> String {
    if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    }
}

impl Evaluator {
    /// The evaluator of a resource; `None` for those quota ignores.
    pub(crate) fn of(group: &str, plural: &str) -> Option<Evaluator> {
        if IGNORED.contains(&(group, plural)) {
            return None;
        }
        Some(match (group, plural) {
            ("", "pods") => Evaluator::Pods,
            ("", "services") => Evaluator::Services,
            ("", "persistentvolumeclaims") => Evaluator::Claims,
            _ => {
                let mut names = vec![count_name(group, plural)];
                if group.is_empty() && LEGACY_ALIASES.contains(&plural) {
                    names.push(plural.to_string());
                }
                Evaluator::Count { names }
            }
        })
    }

    /// `Handles`: whether the operation can change what the resource uses. Pods are counted on create
    /// only (resizing in place is off in 1.32); services and claims also on update (a type change, an
    /// expansion); anything else on create.
    pub(crate) fn handles(&self, op: Operation, subresource: &str) -> bool {
        match self {
            Evaluator::Pods => subresource.is_empty() && op == Operation::Create,
            Evaluator::Services | Evaluator::Claims => matches!(op, Operation::Create | Operation::Update),
            Evaluator::Count { .. } => op == Operation::Create,
        }
    }

    /// `MatchingResources`: which of `names` this evaluator counts.
    pub(crate) fn matching(&self, names: &[String]) -> Vec<String> {
        names.iter().filter(|n| self.counts(n)).cloned().collect()
    }

    fn counts(&self, name: &str) -> bool {
        match self {
            Evaluator::Pods => {
                POD_RESOURCES.contains(&name)
                    || name.starts_with("hugepages-")
                    || name.strip_prefix("requests.").is_some_and(|r| r.starts_with("hugepages-") || is_extended(r))
            }
            Evaluator::Services => {
                ["count/services", "services", "services.loadbalancers", "services.nodeports"].contains(&name)
            }
            Evaluator::Claims => {
                ["count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage"].contains(&name)
                    || name
                        .split_once(STORAGE_CLASS_SUFFIX)
                        .is_some_and(|(_, r)| r == "requests.storage" || r == "persistentvolumeclaims")
            }
            Evaluator::Count { names } => names.iter().any(|n| n == name),
        }
    }

    /// `Usage`: what `obj` uses.
    pub(crate) fn usage(&self, obj: &Value) -> Usage {
        match self {
            Evaluator::Pods => pod_usage(obj),
            Evaluator::Services => service_usage(obj),
            Evaluator::Claims => claim_usage(obj),
            Evaluator::Count { names } => names.iter().map(|n| (n.clone(), Quantity::int(1))).collect(),
        }
    }

    /// `Constraints`: the pod evaluator's demand that every container state what a quota limits.
    pub(crate) fn constraints(&self, required: &[String], obj: &Value) -> Result<(), String> {
        if *self != Evaluator::Pods {
            return Ok(());
        }
        let required: BTreeSet<&str> =
            required.iter().map(String::as_str).filter(|r| VALIDATION_SET.contains(r)).collect();
        let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for list in ["/spec/containers", "/spec/initContainers"] {
            for container in items(obj, list) {
                let usage = compute_usage(&resources(container, "requests"), &resources(container, "limits"));
                for resource in required.iter().filter(|r| !usage.contains_key(**r)) {
                    missing.entry(resource.to_string()).or_default().insert(text(container, "/name").to_string());
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let parts: Vec<String> = missing
            .iter()
            .map(|(resource, names)| format!("{resource} for: {}", names.iter().cloned().collect::<Vec<_>>().join(",")))
            .collect();
        Err(format!("must specify {}", parts.join("; ")))
    }

    /// `Matches` less its resource test: whether `obj` is within the quota's scopes. Only pods have
    /// scopes; a scoped quota covers no other kind (`MatchesNoScopeFunc`).
    pub(crate) fn in_scopes(&self, quota: &Value, obj: &Value) -> bool {
        let mut selectors: Vec<(String, String, Vec<String>)> = items(quota, "/spec/scopes")
            .iter()
            .filter_map(Value::as_str)
            .map(|s| (s.to_string(), "Exists".to_string(), Vec::new()))
            .collect();
        for expr in items(quota, "/spec/scopeSelector/matchExpressions") {
            let values = items(expr, "/values").iter().filter_map(Value::as_str).map(str::to_string).collect();
            selectors.push((text(expr, "/scopeName").to_string(), text(expr, "/operator").to_string(), values));
        }
        selectors.iter().all(|(scope, op, values)| *self == Evaluator::Pods && pod_in_scope(obj, scope, op, values))
    }
}

/// `IsExtendedResourceName`: a name with a domain other than kubernetes.io's, not a quota name.
fn is_extended(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native && !name.starts_with("requests.")
}

/// `podMatchesScopeFunc`.
fn pod_in_scope(pod: &Value, scope: &str, op: &str, values: &[String]) -> bool {
    let terminating = pod.pointer("/spec/activeDeadlineSeconds").and_then(Value::as_i64).is_some_and(|s| s >= 0);
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = text(pod, "/spec/priorityClassName");
            match op {
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
            ["requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"]
                .iter()
                .flat_map(|when| items(pod, &format!("/spec/affinity/{kind}/{when}")))
                .map(|term| term.get("podAffinityTerm").unwrap_or(term))
                .any(|term| !items(term, "/namespaces").is_empty() || term.get("namespaceSelector").is_some())
        }),
        _ => false,
    }
}

/// A pod with no CPU or memory request or limit in any container (the BestEffort QoS class).
fn is_best_effort(pod: &Value) -> bool {
    ["/spec/containers", "/spec/initContainers"].iter().flat_map(|l| items(pod, l)).all(|c| {
        ["requests", "limits"].iter().all(|kind| resources(c, kind).keys().all(|r| r != "cpu" && r != "memory"))
    })
}

/// One container's requests or limits.
pub(crate) fn resources(container: &Value, kind: &str) -> Usage {
    let Some(list) = container.pointer(&format!("/resources/{kind}")).and_then(Value::as_object) else {
        return Usage::new();
    };
    list.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// `quota.Add`.
pub(crate) fn add(a: &Usage, b: &Usage) -> Usage {
    let mut out = a.clone();
    for (k, v) in b {
        let sum = match out.get(k) {
            Some(q) => q.add(*v),
            None => *v,
        };
        out.insert(k.clone(), sum);
    }
    out
}

/// `quota.SubtractWithNonNegativeResult`.
pub(crate) fn subtract_non_negative(a: &Usage, b: &Usage) -> Usage {
    a.iter()
        .map(|(k, v)| {
            let diff = match b.get(k) {
                Some(other) => v.sub(*other),
                None => *v,
            };
            (k.clone(), if diff.is_negative() { Quantity::zero() } else { diff })
        })
        .collect()
}

/// The larger of each resource of two lists.
fn max_of(a: &Usage, b: &Usage) -> Usage {
    let mut out = a.clone();
    for (k, v) in b {
        if out.get(k).is_none_or(|q| q < v) {
            out.insert(k.clone(), *v);
        }
    }
    out
}

/// `resourcehelper.PodRequests` / `PodLimits`: the containers' sum, at least each init container's (with
/// the sidecars started before it), plus the overhead. Limits count only the containers that state one.
pub(crate) fn pod_total(pod: &Value, kind: &str) -> Usage {
    let mut total = Usage::new();
    for c in items(pod, "/spec/containers") {
        total = add(&total, &resources(c, kind));
    }
    let mut sidecars = Usage::new();
    let mut init_max = Usage::new();
    for c in items(pod, "/spec/initContainers") {
        let own = resources(c, kind);
        let during = if text(c, "/restartPolicy") == "Always" {
            total = add(&total, &own);
            sidecars = add(&sidecars, &own);
            sidecars.clone()
        } else {
            add(&own, &sidecars)
        };
        init_max = max_of(&init_max, &during);
    }
    let total = max_of(&total, &init_max);
    let overhead = pod
        .pointer("/spec/overhead")
        .and_then(Value::as_object)
        .map(|o| o.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect::<Usage>());
    match overhead {
        Some(overhead) => add(&total, &overhead),
        None => total,
    }
}

/// `podComputeUsageHelper`.
fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut out = Usage::new();
    out.insert("pods".into(), Quantity::int(1));
    for (resource, plain) in [("cpu", true), ("memory", true), ("ephemeral-storage", true)] {
        if let Some(q) = requests.get(resource) {
            if plain {
                out.insert(resource.into(), *q);
            }
            out.insert(format!("requests.{resource}"), *q);
        }
        if let Some(q) = limits.get(resource) {
            out.insert(format!("limits.{resource}"), *q);
        }
    }
    for (resource, q) in requests {
        if resource.starts_with("hugepages-") {
            out.insert(resource.clone(), *q);
            out.insert(format!("requests.{resource}"), *q);
        }
        if is_extended(resource) {
            out.insert(format!("requests.{resource}"), *q);
        }
    }
    out
}

/// `QuotaV1Pod`: whether a pod still uses compute resources; one that finished does not. (A pod past its
/// deletion grace period is counted still: no clock is consulted.)
fn pod_is_live(pod: &Value) -> bool {
    !matches!(text(pod, "/status/phase"), "Failed" | "Succeeded")
}

/// `PodUsageFunc`.
fn pod_usage(pod: &Value) -> Usage {
    let mut out = Usage::from([("count/pods".to_string(), Quantity::int(1))]);
    if pod_is_live(pod) {
        out = add(&out, &compute_usage(&pod_total(pod, "requests"), &pod_total(pod, "limits")));
    }
    out
}

/// The service evaluator's `Usage`.
fn service_usage(svc: &Value) -> Usage {
    let ports = items(svc, "/spec/ports");
    let mut out = Usage::from([
        ("count/services".to_string(), Quantity::int(1)),
        ("services".to_string(), Quantity::int(1)),
        ("services.loadbalancers".to_string(), Quantity::zero()),
        ("services.nodeports".to_string(), Quantity::zero()),
    ]);
    let count = |n: usize| Quantity::int(i64::try_from(n).unwrap_or(i64::MAX));
    match text(svc, "/spec/type") {
        "NodePort" => {
            out.insert("services.nodeports".into(), count(ports.len()));
        }
        "LoadBalancer" => {
            let node_ports = if svc.pointer("/spec/allocateLoadBalancerNodePorts") == Some(&Value::Bool(false)) {
                ports.iter().filter(|p| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0).count()
            } else {
                ports.len()
            };
            out.insert("services.nodeports".into(), count(node_ports));
            out.insert("services.loadbalancers".into(), Quantity::int(1));
        }
        _ => {}
    }
    out
}

/// The claim evaluator's `Usage`: the claim, its storage (the larger of the request and what was
/// allocated), both also charged to its class.
fn claim_usage(pvc: &Value) -> Usage {
    let mut out = Usage::from([
        ("persistentvolumeclaims".to_string(), Quantity::int(1)),
        ("count/persistentvolumeclaims".to_string(), Quantity::int(1)),
    ]);
    let class = match pvc.pointer("/spec/storageClassName").and_then(Value::as_str) {
        Some(class) => class.to_string(),
        None => super::support::meta_map(pvc, "annotations")
            .get("volume.beta.kubernetes.io/storage-class")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    };
    if !class.is_empty() {
        out.insert(format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"), Quantity::int(1));
    }
    let request = pvc.pointer("/spec/resources/requests/storage").and_then(Quantity::from_json);
    let allocated = pvc.pointer("/status/allocatedResources/storage").and_then(Quantity::from_json);
    let storage = match (request, allocated) {
        (Some(r), Some(a)) => Some(if a > r { a } else { r }),
        (r, a) => r.or(a),
    };
    if let Some(storage) = storage {
        out.insert("requests.storage".into(), storage);
        if !class.is_empty() {
            out.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), storage);
        }
    }
    out
}

/// A quota's hard limits or usage (`status.hard`, `status.used`, `spec.hard`).
pub(crate) fn list_at(quota: &Value, pointer: &str) -> Usage {
    let Some(list) = quota.pointer(pointer).and_then(Value::as_object) else { return Usage::new() };
    list.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// A resource list as JSON holds it.
pub(crate) fn to_json(usage: &Usage) -> Value {
    Value::Object(usage.iter().map(|(k, v)| (k.clone(), Value::from(v.to_text()))).collect())
}

/// `prettyPrint`: `name=quantity` pairs in name order.
fn pretty(usage: &Usage) -> String {
    usage.iter().map(|(k, v)| format!("{k}={}", v.to_text())).collect::<Vec<_>>().join(",")
}

/// `quota.Mask`.
fn mask(usage: &Usage, names: &[String]) -> Usage {
    usage.iter().filter(|(k, _)| names.contains(k)).map(|(k, v)| (k.clone(), *v)).collect()
}

/// The request `CheckRequest` judges.
pub(crate) struct Check<'a> {
    pub(crate) evaluator: &'a Evaluator,
    pub(crate) operation: Operation,
    pub(crate) subresource: &'a str,
    pub(crate) obj: &'a Value,
    /// The object before an update (`Null` on create).
    pub(crate) old: &'a Value,
}

/// `CheckRequest` over the namespace's quotas: the new `status.used` of each quota the request changes
/// (by index), or why the request is refused (the Forbidden's reason).
pub(crate) fn check_request(quotas: &[Value], check: &Check<'_>) -> Result<BTreeMap<usize, Usage>, String> {
    let ev = check.evaluator;
    let mut interesting = Vec::new();
    for (i, quota) in quotas.iter().enumerate() {
        let hard_names: Vec<String> = list_at(quota, "/status/hard").into_keys().collect();
        let restricted = ev.matching(&hard_names);
        if restricted.is_empty() || !ev.in_scopes(quota, check.obj) {
            continue;
        }
        let name = text(quota, "/metadata/name");
        ev.constraints(&restricted, check.obj).map_err(|e| format!("failed quota: {name}: {e}"))?;
        let used = list_at(quota, "/status/used");
        if !restricted.iter().all(|r| used.contains_key(r)) {
            let mut names = restricted.clone();
            names.sort();
            return Err(format!("status unknown for quota: {name}, resources: {}", names.join(",")));
        }
        interesting.push(i);
    }
    if interesting.is_empty() {
        return Ok(BTreeMap::new());
    }
    let input = ev.usage(check.obj);
    let negative: Vec<String> = input.iter().filter(|(_, q)| q.is_negative()).map(|(k, _)| k.clone()).collect();
    if !negative.is_empty() {
        return Err(format!("quota usage is negative for resource(s): {}", negative.join(",")));
    }
    let mut deltas: BTreeMap<usize, Usage> = interesting.iter().map(|i| (*i, input.clone())).collect();
    let has_rv = !text(check.old, "/metadata/resourceVersion").is_empty();
    if check.operation == Operation::Update && has_rv {
        let delta = subtract_non_negative(&input, &ev.usage(check.old));
        for i in &interesting {
            let hard_names: Vec<String> = list_at(&quotas[*i], "/status/hard").into_keys().collect();
            if !ev.matching(&hard_names).is_empty() && ev.in_scopes(&quotas[*i], check.old) {
                deltas.insert(*i, delta.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for (i, delta) in deltas {
        let delta: Usage = delta.into_iter().filter(|(_, q)| !q.is_zero()).collect();
        if delta.is_empty() {
            continue;
        }
        let quota = &quotas[i];
        let hard = list_at(quota, "/status/hard");
        let used = list_at(quota, "/status/used");
        let hard_names: Vec<String> = hard.keys().cloned().collect();
        let requested = mask(&delta, &hard_names);
        let new_used = add(&used, &requested);
        if check.subresource != "status" {
            let exceeded: Vec<String> = requested
                .keys()
                .filter(|k| matches!((new_used.get(*k), hard.get(*k)), (Some(u), Some(h)) if u > h))
                .cloned()
                .collect();
            if !exceeded.is_empty() {
                return Err(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    text(quota, "/metadata/name"),
                    pretty(&mask(&requested, &exceeded)),
                    pretty(&mask(&used, &exceeded)),
                    pretty(&mask(&hard, &exceeded)),
                ));
            }
        }
        if new_used != used || requested.keys().any(|k| !used.contains_key(k)) {
            out.insert(i, new_used);
        }
    }
    Ok(out)
}

/// The quota controller's count for one quota: zero for each resource it limits that `evaluator` counts,
/// plus the usage of every object in `objects` within its scopes (`CalculateUsageStats`).
pub(crate) fn count_usage(quota: &Value, evaluator: &Evaluator, objects: &[Value]) -> Usage {
    let hard_names: Vec<String> = list_at(quota, "/spec/hard").into_keys().collect();
    let tracked = evaluator.matching(&hard_names);
    let mut used: Usage = tracked.iter().map(|r| (r.clone(), Quantity::zero())).collect();
    for obj in objects.iter().filter(|o| evaluator.in_scopes(quota, o)) {
        used = add(&used, &mask(&evaluator.usage(obj), &tracked));
    }
    used
}
