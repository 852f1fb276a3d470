//! The local APIServices: one per group version this server serves itself (`v1.`, `v1.apps`, ...), which
//! kube-apiserver's autoregister controller creates at start (labelled
//! `kube-aggregator.kubernetes.io/automanaged: onstart`, no `service`) and its availability controller marks
//! `Available` (`Local`). Their priorities are kube-apiserver 1.32's table (`KK/pkg/controlplane/apiserver/
//! aggregator.go`, `apiVersionPriorities` and `DefaultGenericAPIServicePriorities`), which also orders
//! `/apis` (see `GROUP_PRIORITY` in `apis/mod.rs`).
//!
//! kubesim creates them with their status and leaves them: it has no aggregator that would act on them,
//! and custom resources' group versions (which the CRD registration controller adds) are not added.

use serde_json::{json, Value};

/// `(group, version, groupPriorityMinimum, versionPriority)` of every built-in group version 1.32 serves by
/// default, and `apiregistration.k8s.io` itself.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apiregistration.k8s.io", "v1", 18000, 15),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// The local APIService of each served group version with a known priority: the object to create, and
/// the status to write on it once created.
pub(crate) fn apiservices(served: &[(String, String)]) -> Vec<(Value, Value)> {
    PRIORITIES
        .iter()
        .filter(|(g, v, _, _)| served.iter().any(|(sg, sv)| sg == g && sv == v))
        .map(|&(group, version, group_priority, version_priority)| {
            let object = json!({
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {
                    "name": format!("{version}.{group}"),
                    "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                },
                "spec": {
                    "group": group,
                    "version": version,
                    "groupPriorityMinimum": group_priority,
                    "versionPriority": version_priority,
                },
            });
            (object, available())
        })
        .collect()
}

/// The availability controller's verdict on a local APIService (its transition time is the writer's).
fn available() -> Value {
    json!({"conditions": [{
        "type": "Available",
        "status": "True",
        "reason": "Local",
        "message": "Local APIServices are always available",
    }]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_group_version_gets_one_named_version_dot_group() {
        let served =
            vec![("".to_string(), "v1".to_string()), ("apps".into(), "v1".into()), ("example.com".into(), "v1".into())];
        let made = apiservices(&served);
        let names: Vec<&str> = made.iter().map(|(o, _)| o["metadata"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["v1.", "v1.apps"], "custom groups are not local built-ins");
        assert_eq!(
            made[1].0["spec"],
            json!({"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15})
        );
        assert_eq!(made[0].1["conditions"][0]["reason"], "Local");
    }

    #[test]
    fn the_table_agrees_with_the_order_of_apis() {
        let mut previous = i64::MAX;
        for (group, _, priority, _) in PRIORITIES.iter().filter(|(g, ..)| !g.is_empty()) {
            assert!(*priority <= previous, "{group} is out of order");
            previous = *priority;
        }
    }
}
