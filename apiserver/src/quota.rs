//! What objects use, as Kubernetes' quota counts it (`pkg/quota/v1/evaluator/core` 1.32: `pods.go`,
//! `services.go`, `persistent_volume_claims.go`, `registry.go`; `pkg/quota/v1/generic` object counts;
//! `pkg/quota/v1/resources.go`): one port for the two places that count, the ResourceQuota admission plugin
//! (`admission::plugins`) and the quota controller (the controllers crate).
//!
//! Pods count `pods`, `count/pods` and their compute requests and limits (`cpu`, `memory`,
//! `ephemeral-storage`, `requests.*`, `limits.*`, hugepages, extended requests); a terminal pod, or one past
//! its deletion grace period when a clock is given, keeps only `count/pods`. Services count themselves, their
//! load balancers and node ports; claims themselves and their storage, also per storage class. Every other
//! resource counts its objects (`count/<resource>.<group>`, with the legacy names `configmaps`, `secrets`,
//! `resourcequotas`, `replicationcontrollers`). A quota's scopes (`Terminating`, `NotTerminating`,
//! `BestEffort`, `NotBestEffort`, `PriorityClass`, `CrossNamespacePodAffinity`, also through
//! `scopeSelector`) select pods; a scoped quota counts nothing of another kind.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::quantity::Quantity;

/// A `ResourceList`: quantities by resource name.
pub type Usage = BTreeMap<String, Quantity>;

/// `storageClassSuffix`.
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// `podResources`: what the pod evaluator tracks besides hugepages and extended requests.
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

/// `legacyObjectCountAliases`: core resources whose count also goes by their plain name.
const LEGACY_ALIASES: &[&str] = &["configmaps", "resourcequotas", "replicationcontrollers", "secrets"];

/// How one resource's usage is measured (one evaluator of the controller's registry).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evaluator {
    Pods,
    Services,
    Claims,
    /// The object count of `resource` in `group`.
    Count {
        group: String,
        resource: String,
    },
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn items<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// `IsExtendedResourceName`: a name in a domain other than kubernetes.io's, and not a quota name.
fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// `ObjectCountQuotaResourceNameFor`.
pub fn count_name(group: &str, resource: &str) -> String {
    if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }
}

impl Evaluator {
    /// The evaluator of a resource, as the admission plugin picks it; `None` for those quota ignores.
    pub fn of(group: &str, resource: &str) -> Option<Evaluator> {
        if IGNORED.contains(&(group, resource)) {
            return None;
        }
        Some(match (group, resource) {
            ("", "pods") => Evaluator::Pods,
            ("", "services") => Evaluator::Services,
            ("", "persistentvolumeclaims") => Evaluator::Claims,
            _ => Evaluator::Count { group: group.to_string(), resource: resource.to_string() },
        })
    }

    /// `MatchingResources`: which of `names` this evaluator counts.
    pub fn matching(&self, names: &[String]) -> Vec<String> {
        names.iter().filter(|n| self.counts(n)).cloned().collect()
    }

    /// The evaluator that counts the quota resource `name`, if any.
    pub fn for_name(name: &str) -> Option<Evaluator> {
        for ev in [Evaluator::Pods, Evaluator::Services, Evaluator::Claims] {
            if ev.counts(name) {
                return Some(ev);
            }
        }
        if LEGACY_ALIASES.contains(&name) {
            return Some(Evaluator::Count { group: String::new(), resource: name.to_string() });
        }
        let rest = name.strip_prefix("count/")?;
        let (resource, group) = rest.split_once('.').unwrap_or((rest, ""));
        (!resource.is_empty()).then(|| Evaluator::Count { group: group.to_string(), resource: resource.to_string() })
    }

    /// The `(group, resource)` whose objects this evaluator lists.
    pub fn group_resource(&self) -> (String, String) {
        match self {
            Evaluator::Pods => (String::new(), "pods".into()),
            Evaluator::Services => (String::new(), "services".into()),
            Evaluator::Claims => (String::new(), "persistentvolumeclaims".into()),
            Evaluator::Count { group, resource } => (group.clone(), resource.clone()),
        }
    }

    /// Whether this evaluator tracks the quota resource `name` (`MatchingResources` of one name).
    pub fn counts(&self, name: &str) -> bool {
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
            Evaluator::Count { group, resource } => {
                name == count_name(group, resource)
                    || (group.is_empty() && LEGACY_ALIASES.contains(&resource.as_str()) && name == resource)
            }
        }
    }

    /// `Usage`: what `obj` uses at `now_us` (unix microseconds; `None`: no clock, see [`pod_is_charged`]).
    pub fn usage(&self, obj: &Value, now_us: Option<i64>) -> Usage {
        match self {
            Evaluator::Pods => pod_usage(obj, now_us),
            Evaluator::Services => service_usage(obj),
            Evaluator::Claims => claim_usage(obj),
            Evaluator::Count { group, resource } => {
                let mut out = Usage::new();
                out.insert(count_name(group, resource), Quantity::int(1));
                if group.is_empty() && LEGACY_ALIASES.contains(&resource.as_str()) {
                    out.insert(resource.clone(), Quantity::int(1));
                }
                out
            }
        }
    }

    /// Whether `obj` falls within every scope of `quota` (`Matches` less its resource test). Only pods have
    /// scopes (`MatchesNoScopeFunc` for the rest).
    pub fn in_scopes(&self, quota: &Value, obj: &Value) -> bool {
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

/// The BestEffort QoS class: no container requests or limits cpu or memory.
fn is_best_effort(pod: &Value) -> bool {
    ["/spec/containers", "/spec/initContainers"].iter().flat_map(|l| items(pod, l)).all(|c| {
        ["requests", "limits"].iter().all(|kind| resources(c, kind).keys().all(|r| r != "cpu" && r != "memory"))
    })
}

/// One container's requests or limits.
pub fn resources(container: &Value, kind: &str) -> Usage {
    let Some(list) = container.pointer(&format!("/resources/{kind}")).and_then(Value::as_object) else {
        return Usage::new();
    };
    list.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// `quota.Add`.
pub fn add(a: &Usage, b: &Usage) -> Usage {
    let mut out = a.clone();
    for (k, v) in b {
        let sum = out.get(k).map_or(*v, |q| *q + *v);
        out.insert(k.clone(), sum);
    }
    out
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
/// the restartable init containers started before it), plus the overhead.
pub fn pod_total(pod: &Value, kind: &str) -> Usage {
    let mut total = Usage::new();
    for c in items(pod, "/spec/containers") {
        total = add(&total, &resources(c, kind));
    }
    let (mut sidecars, mut init_max) = (Usage::new(), Usage::new());
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
    match pod.pointer("/spec/overhead").and_then(Value::as_object) {
        Some(o) => add(&total, &o.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()),
        None => total,
    }
}

/// `podComputeUsageHelper`.
pub fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut out = Usage::from([("pods".to_string(), Quantity::int(1))]);
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(resource) {
            out.insert(resource.into(), *q);
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

/// `QuotaV1Pod`: a pod still uses compute resources unless it finished, or its deletion grace period ran
/// out by `now_us` (a pod stuck terminating on a lost node is not charged). Without a clock (`None`: the
/// admission plugin, which charges only pods being created) a terminating pod is charged still.
pub fn pod_is_charged(pod: &Value, now_us: Option<i64>) -> bool {
    if matches!(text(pod, "/status/phase"), "Failed" | "Succeeded") {
        return false;
    }
    let Some(now_us) = now_us else { return true };
    let deletion = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.timestamp_micros());
    let grace = pod.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64);
    match (deletion, grace) {
        (Some(at), Some(grace)) => now_us <= at + grace * 1_000_000,
        _ => true,
    }
}

/// `PodUsageFunc`: every pod counts toward `count/pods`; a charged one also its compute resources.
fn pod_usage(pod: &Value, now_us: Option<i64>) -> Usage {
    let out = Usage::from([("count/pods".to_string(), Quantity::int(1))]);
    if !pod_is_charged(pod, now_us) {
        return out;
    }
    add(&out, &compute_usage(&pod_total(pod, "requests"), &pod_total(pod, "limits")))
}

/// The service evaluator's `Usage`.
fn service_usage(svc: &Value) -> Usage {
    let ports = items(svc, "/spec/ports");
    let count = |n: usize| Quantity::int(i64::try_from(n).unwrap_or(i64::MAX));
    let mut out = Usage::from([
        ("count/services".to_string(), Quantity::int(1)),
        ("services".to_string(), Quantity::int(1)),
        ("services.loadbalancers".to_string(), Quantity::zero()),
        ("services.nodeports".to_string(), Quantity::zero()),
    ]);
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

/// The claim evaluator's `Usage`: the claim and its storage (the larger of request and allocation), each
/// also charged to its storage class.
fn claim_usage(pvc: &Value) -> Usage {
    let mut out = Usage::from([
        ("persistentvolumeclaims".to_string(), Quantity::int(1)),
        ("count/persistentvolumeclaims".to_string(), Quantity::int(1)),
    ]);
    let class = match pvc.pointer("/spec/storageClassName").and_then(Value::as_str) {
        Some(class) => class,
        None => text(pvc, "/metadata/annotations/volume.beta.kubernetes.io~1storage-class"),
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

/// `quota.SubtractWithNonNegativeResult`.
pub fn subtract_non_negative(a: &Usage, b: &Usage) -> Usage {
    a.iter()
        .map(|(k, v)| {
            let diff = match b.get(k) {
                Some(other) => *v - *other,
                None => *v,
            };
            (k.clone(), if diff.is_negative() { Quantity::zero() } else { diff })
        })
        .collect()
}

/// `quota.Mask`: the resources of `usage` named in `names`.
pub fn mask(usage: &Usage, names: &[String]) -> Usage {
    usage.iter().filter(|(k, _)| names.contains(k)).map(|(k, v)| (k.clone(), *v)).collect()
}

/// A quota's resource list at `pointer` (`spec.hard`, `status.hard`, `status.used`).
pub fn list_at(quota: &Value, pointer: &str) -> Usage {
    let Some(list) = quota.pointer(pointer).and_then(Value::as_object) else { return Usage::new() };
    list.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// A resource list as JSON holds it.
pub fn to_json(usage: &Usage) -> Value {
    Value::Object(usage.iter().map(|(k, v)| (k.clone(), Value::from(v.to_text()))).collect())
}

/// `CalculateUsageStats` of one evaluator for one quota: zero for each resource of the quota it tracks,
/// plus the usage of every object within the quota's scopes, kept to the tracked resources.
pub fn calculate(quota: &Value, evaluator: &Evaluator, objects: &[Value], now_us: Option<i64>) -> Usage {
    let tracked: Vec<String> = list_at(quota, "/spec/hard").into_keys().filter(|n| evaluator.counts(n)).collect();
    let mut used: Usage = tracked.iter().map(|r| (r.clone(), Quantity::zero())).collect();
    for obj in objects.iter().filter(|o| evaluator.in_scopes(quota, o)) {
        used = add(&used, &evaluator.usage(obj, now_us));
    }
    used.retain(|k, _| tracked.contains(k));
    used
}
