//! The API priority and fairness objects kube-apiserver 1.32 creates at start (`k8s.io/apiserver`
//! `pkg/apis/flowcontrol/bootstrap/default.go`, v0.32): the mandatory `exempt` and `catch-all` priority
//! levels and flow schemas, whose specs the validation pins, and the suggested ones (`system`, `node-high`,
//! `leader-election`, `workload-high`, `workload-low`, `global-default` and their flow schemas). Each
//! carries `apf.kubernetes.io/autoupdate-spec: "true"`. kube-apiserver's config producer also puts a changed
//! spec back; here they are only created when missing, as every bootstrap object is.

use serde_json::{json, Value};

/// The annotation that lets kube-apiserver rewrite a bootstrap object's spec.
pub(crate) const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";

fn metadata(name: &str) -> Value {
    json!({"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}})
}

/// A limited level: name, nominal concurrency shares, lendable percent, and its queuing (queues, hand
/// size, queue length limit) or `None` to reject.
type Limited = (&'static str, i64, i64, Option<(i64, i64, i64)>);

/// The limited levels: `catch-all` (mandatory) and the suggested ones.
const LIMITED_LEVELS: &[Limited] = &[
    ("catch-all", 5, 0, None),
    ("system", 30, 33, Some((64, 6, 50))),
    ("node-high", 40, 25, Some((64, 6, 50))),
    ("leader-election", 10, 0, Some((16, 4, 50))),
    ("workload-high", 40, 50, Some((128, 6, 50))),
    ("workload-low", 100, 90, Some((128, 6, 50))),
    ("global-default", 20, 50, Some((128, 6, 50))),
];

/// The spec of a limited level.
fn limited_spec(&(_, shares, lendable, queuing): &Limited) -> Value {
    let limit_response = match queuing {
        None => json!({"type": "Reject"}),
        Some((queues, hand_size, queue_length_limit)) => json!({"type": "Queue", "queuing": {
            "queues": queues, "handSize": hand_size, "queueLengthLimit": queue_length_limit}}),
    };
    json!({"type": "Limited", "limited": {"nominalConcurrencyShares": shares, "limitResponse": limit_response,
        "lendablePercent": lendable}})
}

/// The spec of the `exempt` level.
fn exempt_level_spec() -> Value {
    json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})
}

/// The spec kube-apiserver pins for a mandatory priority level, if `name` is one.
pub(crate) fn mandatory_priority_level_spec(name: &str) -> Option<Value> {
    match name {
        "exempt" => Some(exempt_level_spec()),
        "catch-all" => Some(limited_spec(&LIMITED_LEVELS[0])),
        _ => None,
    }
}

/// Every priority level created at start.
pub(crate) fn priority_levels() -> Vec<Value> {
    let exempt = std::iter::once(("exempt", exempt_level_spec()));
    let limited = LIMITED_LEVELS.iter().map(|level| (level.0, limited_spec(level)));
    exempt
        .chain(limited)
        .map(|(name, spec)| {
            json!({"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration", "metadata": metadata(name),
                "spec": spec})
        })
        .collect()
}

fn groups(names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| json!({"kind": "Group", "group": {"name": n}})).collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| json!({"kind": "User", "user": {"name": n}})).collect()
}

fn kube_system_service_accounts(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": n}}))
        .collect()
}

fn resource_rule(verbs: &[&str], groups: &[&str], resources: &[&str], cluster_scope: bool) -> Value {
    let mut rule = json!({"verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": ["*"]});
    if cluster_scope {
        rule["clusterScope"] = json!(true);
    }
    rule
}

fn everything() -> (Vec<Value>, Vec<Value>) {
    (vec![resource_rule(&["*"], &["*"], &["*"], true)], vec![json!({"verbs": ["*"], "nonResourceURLs": ["*"]})])
}

fn flow_schema_spec(
    level: &str,
    precedence: i64,
    distinguisher: Option<&str>,
    subjects: Vec<Value>,
    (resource_rules, non_resource_rules): (Vec<Value>, Vec<Value>),
) -> Value {
    let mut rule = json!({"subjects": subjects});
    if !resource_rules.is_empty() {
        rule["resourceRules"] = Value::Array(resource_rules);
    }
    if !non_resource_rules.is_empty() {
        rule["nonResourceRules"] = Value::Array(non_resource_rules);
    }
    let mut spec = json!({"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
        "rules": [rule]});
    if let Some(method) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": method});
    }
    spec
}

/// The spec kube-apiserver pins for a mandatory flow schema, if `name` is one.
pub(crate) fn mandatory_flow_schema_spec(name: &str) -> Option<Value> {
    match name {
        "exempt" => Some(flow_schema_spec("exempt", 1, None, groups(&["system:masters"]), everything())),
        "catch-all" => Some(flow_schema_spec(
            "catch-all",
            10000,
            Some("ByUser"),
            groups(&["system:unauthenticated", "system:authenticated"]),
            everything(),
        )),
        _ => None,
    }
}

/// The suggested flow schemas: name and spec.
fn suggested_flow_schemas() -> Vec<(&'static str, Value)> {
    let get_create_update = ["get", "create", "update"];
    let mut controller_and_scheduler = users(&["system:kube-controller-manager", "system:kube-scheduler"]);
    controller_and_scheduler.extend(kube_system_service_accounts(&["*"]));
    let mut endpoint_controllers = users(&["system:kube-controller-manager"]);
    endpoint_controllers
        .extend(kube_system_service_accounts(&["endpoint-controller", "endpointslicemirroring-controller"]));
    vec![
        (
            "probes",
            flow_schema_spec(
                "exempt",
                2,
                None,
                groups(&["system:unauthenticated", "system:authenticated"]),
                (vec![], vec![json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]})]),
            ),
        ),
        (
            "system-leader-election",
            flow_schema_spec(
                "leader-election",
                100,
                Some("ByUser"),
                controller_and_scheduler,
                (vec![resource_rule(&get_create_update, &["coordination.k8s.io"], &["leases"], false)], vec![]),
            ),
        ),
        (
            "endpoint-controller",
            flow_schema_spec(
                "workload-high",
                150,
                Some("ByUser"),
                endpoint_controllers,
                (vec![resource_rule(&get_create_update, &[""], &["endpoints"], false)], vec![]),
            ),
        ),
        (
            "workload-leader-election",
            flow_schema_spec(
                "leader-election",
                200,
                Some("ByUser"),
                kube_system_service_accounts(&["*"]),
                (
                    vec![
                        resource_rule(&get_create_update, &[""], &["endpoints", "configmaps"], false),
                        resource_rule(&get_create_update, &["coordination.k8s.io"], &["leases"], false),
                    ],
                    vec![],
                ),
            ),
        ),
        (
            "system-node-high",
            flow_schema_spec(
                "node-high",
                400,
                Some("ByUser"),
                groups(&["system:nodes"]),
                (
                    vec![
                        resource_rule(&["*"], &[""], &["nodes", "nodes/status"], true),
                        resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], false),
                    ],
                    vec![],
                ),
            ),
        ),
        ("system-nodes", flow_schema_spec("system", 500, Some("ByUser"), groups(&["system:nodes"]), everything())),
        (
            "kube-controller-manager",
            flow_schema_spec(
                "workload-high",
                800,
                Some("ByNamespace"),
                users(&["system:kube-controller-manager"]),
                everything(),
            ),
        ),
        (
            "kube-scheduler",
            flow_schema_spec(
                "workload-high",
                800,
                Some("ByNamespace"),
                users(&["system:kube-scheduler"]),
                everything(),
            ),
        ),
        (
            "kube-system-service-accounts",
            flow_schema_spec(
                "workload-high",
                900,
                Some("ByNamespace"),
                kube_system_service_accounts(&["*"]),
                everything(),
            ),
        ),
        (
            "service-accounts",
            flow_schema_spec("workload-low", 9000, Some("ByUser"), groups(&["system:serviceaccounts"]), everything()),
        ),
        (
            "global-default",
            flow_schema_spec(
                "global-default",
                9900,
                Some("ByUser"),
                groups(&["system:unauthenticated", "system:authenticated"]),
                everything(),
            ),
        ),
    ]
}

/// Every flow schema created at start.
pub(crate) fn flow_schemas() -> Vec<Value> {
    let mandatory = ["exempt", "catch-all"].map(|name| (name, mandatory_flow_schema_spec(name).unwrap_or_default()));
    mandatory
        .into_iter()
        .chain(suggested_flow_schemas())
        .map(|(name, spec)| {
            json!({"apiVersion": API_VERSION, "kind": "FlowSchema", "metadata": metadata(name), "spec": spec})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirteen_schemas_and_eight_levels_each_annotated() {
        let schemas = flow_schemas();
        let levels = priority_levels();
        assert_eq!(schemas.len(), 13);
        assert_eq!(levels.len(), 8);
        for obj in schemas.iter().chain(&levels) {
            assert_eq!(obj["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION], "true", "{obj}");
        }
        // Every schema names a level that exists.
        let level_names: Vec<&str> = levels.iter().map(|l| l["metadata"]["name"].as_str().unwrap()).collect();
        for fs in &schemas {
            let level = fs["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap();
            assert!(level_names.contains(&level), "{fs}");
        }
    }

    #[test]
    fn the_specs_are_upstreams() {
        let catch_all = mandatory_priority_level_spec("catch-all").unwrap();
        assert_eq!(
            catch_all,
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                "limitResponse": {"type": "Reject"}}})
        );
        let probes = flow_schemas().into_iter().find(|f| f["metadata"]["name"] == "probes").unwrap();
        assert_eq!(probes["spec"]["matchingPrecedence"], 2);
        assert!(probes["spec"].get("distinguisherMethod").is_none());
        assert!(probes["spec"]["rules"][0].get("resourceRules").is_none());
        let nodes = flow_schemas().into_iter().find(|f| f["metadata"]["name"] == "system-node-high").unwrap();
        assert_eq!(
            nodes["spec"]["rules"][0]["resourceRules"][1],
            json!({"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "namespaces": ["*"]})
        );
    }
}
