//! The workload controllers' guarantee at quiescence: `PodsAsSpecifiedAtQuiescence`. Once the run has
//! settled, every ReplicaSet and Deployment has exactly the active pods its spec asks for, every Job has
//! at most `parallelism` active pods while it runs and, once Complete, exactly `completions` successes
//! (never more: a success past them is a pod made twice, kubernetes #120790), and every Service's
//! EndpointSlices are one per address type while its endpoints fit in one, naming only pods that exist
//! (duplicates from a stale cache, kubernetes #92928). A pure function of the objects etcd holds.
//!
//! The counts mean what upstream's controllers mean by them: a pod is a workload's when its controller
//! owner reference carries the workload's uid; it is active unless it is being deleted or has finished
//! (`controller.FilterActivePods`); a Job's successes are its `status.succeeded` and its pods that
//! succeeded, whichever is more (its pods may since have been removed, its status may lag none at
//! quiescence).

use std::collections::BTreeMap;

use serde_json::Value;

/// The guarantee's statement, as findings quote it.
pub const STATEMENT: &str =
    "at quiescence every ReplicaSet, Deployment and Job has exactly the pods its spec asks for, and every Service's endpoints are in one EndpointSlice per address type naming only pods that exist";

/// `maxEndpointsPerSlice`'s default: a Service with more endpoints may rightly have several slices.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// The EndpointSlice controller's `managed-by` label value.
const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

/// One object whose pods (or slices) are not as its spec asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub details: String,
}

/// What a judgement covered and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// How many objects were judged (ReplicaSets, Deployments, Jobs, Services).
    pub judged: usize,
    pub violations: Vec<Violation>,
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn kind(obj: &Value) -> &str {
    text(obj, "/kind")
}

fn name(obj: &Value) -> String {
    format!("{}/{}", text(obj, "/metadata/namespace"), text(obj, "/metadata/name"))
}

fn deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null())
}

/// An integer field, or `default` when unset.
fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(default)
}

/// The uid of `obj`'s controller owner reference, if it has one.
fn controller_uid(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

fn phase(pod: &Value) -> &str {
    text(pod, "/status/phase")
}

/// `controller.IsPodActive`: not finished and not being deleted.
fn active(pod: &Value) -> bool {
    !deleting(pod) && !matches!(phase(pod), "Succeeded" | "Failed")
}

/// A Job's terminal condition (`Complete` or `Failed`) that is true, if any.
fn finished(job: &Value) -> Option<&str> {
    job.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        .filter_map(|c| c.get("type").and_then(Value::as_str))
        .find(|t| matches!(*t, "Complete" | "Failed"))
}

/// Judges every workload and Service among `objects` (everything etcd holds, in any order).
pub fn pods_as_specified(objects: &[Value]) -> Verdict {
    let mut pods_by_owner: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for pod in objects.iter().filter(|o| kind(o) == "Pod") {
        if let Some(uid) = controller_uid(pod) {
            pods_by_owner.entry(uid).or_default().push(pod);
        }
    }
    let owned = |uid: &str| pods_by_owner.get(uid).cloned().unwrap_or_default();
    let active_of = |uid: &str| owned(uid).into_iter().filter(|p| active(p)).count();
    let mut verdict = Verdict::default();
    let mut fail = |details: String| verdict.violations.push(Violation { details });
    let mut judged = 0;
    for obj in objects {
        let uid = text(obj, "/metadata/uid");
        match kind(obj) {
            "ReplicaSet" if !deleting(obj) => {
                judged += 1;
                let (wanted, found) = (int(obj, "/spec/replicas", 1), active_of(uid));
                if usize::try_from(wanted).ok() != Some(found) {
                    fail(format!("ReplicaSet {} wants {wanted} active pods, has {found}", name(obj)));
                }
            }
            "Deployment" if !deleting(obj) && obj.pointer("/spec/paused") != Some(&Value::Bool(true)) => {
                judged += 1;
                let wanted = int(obj, "/spec/replicas", 1);
                let found: usize = objects
                    .iter()
                    .filter(|rs| kind(rs) == "ReplicaSet" && controller_uid(rs) == Some(uid))
                    .map(|rs| active_of(text(rs, "/metadata/uid")))
                    .sum();
                let reported = int(obj, "/status/replicas", 0);
                if usize::try_from(wanted).ok() != Some(found) || reported != wanted {
                    fail(format!(
                        "Deployment {} wants {wanted} active pods, has {found} (status.replicas {reported})",
                        name(obj)
                    ));
                }
            }
            "Job" if !deleting(obj) => {
                judged += 1;
                let pods = owned(uid);
                let running = pods.iter().filter(|p| active(p)).count();
                let succeeded_pods = pods.iter().filter(|p| phase(p) == "Succeeded").count();
                let succeeded = int(obj, "/status/succeeded", 0).max(i64::try_from(succeeded_pods).unwrap_or(0));
                let parallelism = int(obj, "/spec/parallelism", 1);
                let completions = obj.pointer("/spec/completions").and_then(Value::as_i64);
                match finished(obj) {
                    Some("Complete") => match completions {
                        Some(wanted) if succeeded != wanted || running > 0 => fail(format!(
                            "Job {} is Complete and wants {wanted} succeeded pods, has {succeeded} ({running} still active)",
                            name(obj)
                        )),
                        None if succeeded < 1 || running > 0 => fail(format!(
                            "Job {} is Complete and wants at least 1 succeeded pod, has {succeeded} ({running} still active)",
                            name(obj)
                        )),
                        _ => {}
                    },
                    Some(_) if running > 0 => {
                        fail(format!("Job {} has Failed and wants no active pods, has {running}", name(obj)))
                    }
                    Some(_) => {}
                    None => {
                        if i64::try_from(running).unwrap_or(i64::MAX) > parallelism {
                            fail(format!(
                                "Job {} runs with parallelism {parallelism}, has {running} active pods",
                                name(obj)
                            ));
                        }
                        if let Some(wanted) = completions.filter(|w| succeeded > *w) {
                            fail(format!("Job {} wants {wanted} succeeded pods, has {succeeded}", name(obj)));
                        }
                    }
                }
            }
            "Service" if !deleting(obj) && has_selector(obj) => {
                judged += 1;
                for details in slices_of(obj, objects) {
                    fail(details);
                }
            }
            _ => {}
        }
    }
    verdict.judged = judged;
    verdict
}

/// A Service the EndpointSlice controller keeps slices for: a selector, and not `ExternalName`.
fn has_selector(service: &Value) -> bool {
    text(service, "/spec/type") != "ExternalName"
        && service.pointer("/spec/selector").and_then(Value::as_object).is_some_and(|s| !s.is_empty())
}

/// What is wrong with `service`'s managed slices: several for one address type while its endpoints fit in
/// one, or an endpoint naming a pod that is gone.
fn slices_of(service: &Value, objects: &[Value]) -> Vec<String> {
    let namespace = text(service, "/metadata/namespace");
    let service_name = text(service, "/metadata/name");
    let mut by_type: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for slice in objects.iter().filter(|o| kind(o) == "EndpointSlice" && !deleting(o)) {
        let labels = slice.pointer("/metadata/labels");
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        if text(slice, "/metadata/namespace") == namespace
            && label("kubernetes.io/service-name") == Some(service_name)
            && label("endpointslice.kubernetes.io/managed-by") == Some(MANAGED_BY)
        {
            by_type.entry(text(slice, "/addressType")).or_default().push(slice);
        }
    }
    let pods: BTreeMap<(&str, &str), &str> = objects
        .iter()
        .filter(|o| kind(o) == "Pod")
        .map(|p| ((text(p, "/metadata/namespace"), text(p, "/metadata/name")), text(p, "/metadata/uid")))
        .collect();
    let mut out = Vec::new();
    for (address_type, slices) in by_type {
        let endpoints: Vec<&Value> =
            slices.iter().filter_map(|s| s.get("endpoints").and_then(Value::as_array)).flatten().collect();
        if slices.len() > 1 && endpoints.len() <= MAX_ENDPOINTS_PER_SLICE {
            let names: Vec<&str> = slices.iter().map(|s| text(s, "/metadata/name")).collect();
            out.push(format!(
                "Service {} wants its {} {address_type} endpoints in 1 EndpointSlice, has {} ({})",
                name(service),
                endpoints.len(),
                slices.len(),
                names.join(", ")
            ));
        }
        for endpoint in endpoints {
            let Some(target) = endpoint.get("targetRef").filter(|t| text(t, "/kind") == "Pod") else { continue };
            let pod_name = text(target, "/name");
            let pod_ns = Some(text(target, "/namespace")).filter(|n| !n.is_empty()).unwrap_or(namespace);
            let uid = text(target, "/uid");
            match pods.get(&(pod_ns, pod_name)) {
                Some(found) if uid.is_empty() || *found == uid => {}
                _ => out.push(format!(
                    "Service {} has an EndpointSlice naming pod {pod_ns}/{pod_name}, which no longer exists",
                    name(service)
                )),
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "replicas_tests.rs"]
mod tests;
