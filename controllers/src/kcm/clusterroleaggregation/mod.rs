//! The `clusterrole-aggregation-controller` (kube-controller-manager 1.32,
//! `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`): a ClusterRole with an
//! `aggregationRule` holds the union of the rules of the ClusterRoles its `clusterRoleSelectors` select.
//!
//! The union is built selector by selector; each selector's roles are taken in name order, the aggregated
//! role itself skipped, and a rule already present (semantically: a missing list equals an empty one) is
//! not added again. When the union differs from the role's rules, the controller server-side applies it
//! with `fieldManager=clusterrole-aggregation-controller` and `force=true`, as 1.32 does (its fallback to a
//! plain update only served apiservers without apply).
//!
//! Any change to any ClusterRole enqueues every aggregated ClusterRole, since the dependency graph is not
//! known (upstream's `enqueue`); five workers reconcile them. The bootstrap policy's `admin`, `edit` and
//! `view` already carry the union this controller computes, so on a fresh cluster it writes nothing.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::replicaset::selector::label_selector_as_selector;
use super::Context;
use crate::client::resource::builtin;
use crate::client::{query_escape, Client, ClientError};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "clusterrole-aggregation-controller",
    aliases: &["clusterrole-aggregation"],
    disabled_by_default: false,
};

/// The workers kube-controller-manager starts for this controller (`Run(ctx, 5)`).
pub const WORKERS: usize = 5;

/// The field manager of the controller's apply.
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

/// The content type of a server-side apply.
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// The fields of a `PolicyRule`, in the order the apply configuration writes them.
const RULE_FIELDS: &[&str] = &["verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"];

/// A rule as `equality.Semantic.DeepEqual` compares it: each list of the rule, a missing list equal to an
/// empty one (apimachinery's forked `DeepEqual` treats nil and empty slices alike).
fn normalized(rule: &Value) -> Vec<Vec<String>> {
    RULE_FIELDS
        .iter()
        .map(|field| {
            rule.get(*field)
                .and_then(Value::as_array)
                .map(|list| list.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect())
                .unwrap_or_default()
        })
        .collect()
}

/// `toApplyPolicyRule`: the rule with its non-empty lists only (the apply configuration omits the rest).
fn apply_rule(rule: &Value) -> Value {
    let mut out = Map::new();
    for (field, values) in RULE_FIELDS.iter().zip(normalized(rule)) {
        if !values.is_empty() {
            out.insert((*field).to_string(), json!(values));
        }
    }
    Value::Object(out)
}

fn role_name(role: &Value) -> &str {
    role.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

/// `syncClusterRole`'s union for `role` over every ClusterRole in `all`: `None` when the role has no
/// aggregation rule, an error when one of its selectors does not parse.
pub fn aggregate(role: &Value, all: &[Value]) -> Result<Option<Vec<Value>>, String> {
    let Some(rule) = role.get("aggregationRule").filter(|r| !r.is_null()) else { return Ok(None) };
    let selectors = rule.get("clusterRoleSelectors").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let name = role_name(role);
    let mut rules: Vec<Value> = Vec::new();
    let mut seen: BTreeSet<Vec<Vec<String>>> = BTreeSet::new();
    for selector in selectors {
        let selector = label_selector_as_selector(Some(selector))?;
        let mut matched: Vec<&Value> = all.iter().filter(|r| selector.matches(r.pointer("/metadata/labels"))).collect();
        matched.sort_by(|a, b| role_name(a).cmp(role_name(b)));
        for other in matched.into_iter().filter(|r| role_name(r) != name) {
            for rule in other.get("rules").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]) {
                if seen.insert(normalized(rule)) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    Ok(Some(rules))
}

/// Whether `rules` are semantically the rules `role` holds now, in the same order.
pub fn rules_equal(role: &Value, rules: &[Value]) -> bool {
    let current = role.get("rules").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    current.len() == rules.len() && current.iter().zip(rules).all(|(a, b)| normalized(a) == normalized(b))
}

/// The apply body that gives the ClusterRole `name` exactly `rules` (`applyClusterRoles`).
pub fn apply_body(name: &str, rules: &[Value]) -> Value {
    let mut body = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
    });
    if !rules.is_empty() {
        body["rules"] = Value::Array(rules.iter().map(apply_rule).collect());
    }
    body
}

/// The keys (names) of the aggregated ClusterRoles among `all` (`enqueue`).
pub fn aggregated_keys(all: &[Value]) -> Vec<String> {
    all.iter()
        .filter(|r| r.get("aggregationRule").is_some_and(|a| !a.is_null()))
        .map(|r| role_name(r).to_string())
        .collect()
}

/// One reconcile of the ClusterRole `name`.
async fn sync(client: &Client, roles: &Informer, name: &str) -> Result<Outcome, String> {
    let Some(role) = roles.get(name) else { return Ok(Outcome::Done) };
    let all = roles.list();
    let Some(rules) = aggregate(&role, &all)? else { return Ok(Outcome::Done) };
    if rules_equal(&role, &rules) {
        return Ok(Outcome::Done);
    }
    let path = format!(
        "{}?fieldManager={}&force=true",
        builtin::cluster_roles().object_path(None, name),
        query_escape(FIELD_MANAGER)
    );
    client.patch(&path, &apply_body(name, &rules), APPLY_PATCH).await.map_err(|e: ClientError| e.to_string())?;
    Ok(Outcome::Done)
}

pub async fn run(ctx: Context) {
    let roles = ctx.informers.get(&builtin::cluster_roles());
    let queue: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let mut events = roles.subscribe();
    let feed = async {
        while events.recv().await.is_some() {
            for key in aggregated_keys(&roles.list()) {
                queue.add(key);
            }
        }
    };
    let work = async {
        roles.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, WORKERS, |key: String| {
            let (client, roles) = (ctx.client.clone(), roles.clone());
            async move { sync(&client, &roles, &key).await }
        })
        .await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str, labels: Value, rules: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    fn aggregated(name: &str, selectors: Value) -> Value {
        json!({"metadata": {"name": name}, "aggregationRule": {"clusterRoleSelectors": selectors}})
    }

    #[test]
    fn union_in_selector_then_name_order_without_duplicates() {
        let get_pods = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        let list_pods = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]});
        let urls = json!({"nonResourceURLs": ["/healthz"], "verbs": ["get"]});
        // The same rule as `urls`, with an empty list written out: semantically equal, so not added twice.
        let urls_again = json!({"apiGroups": [], "nonResourceURLs": ["/healthz"], "verbs": ["get"]});
        let all = vec![
            role("b", json!({"x": "1"}), json!([list_pods.clone(), get_pods.clone()])),
            role("a", json!({"x": "1"}), json!([get_pods.clone()])),
            role("c", json!({"y": "1"}), json!([urls.clone(), get_pods.clone()])),
            role("d", json!({"y": "1"}), json!([urls_again])),
            role("e", json!({"z": "1"}), json!([{"verbs": ["*"], "resources": ["*"], "apiGroups": ["*"]}])),
        ];
        let cases = [
            // Within one selector the roles go by name: a before b.
            (json!([{"matchLabels": {"x": "1"}}]), vec![get_pods.clone(), list_pods.clone()]),
            // Selector order decides before names: c's rules first, then a's and b's new ones.
            (
                json!([{"matchLabels": {"y": "1"}}, {"matchLabels": {"x": "1"}}]),
                vec![urls.clone(), get_pods.clone(), list_pods.clone()],
            ),
            (json!([{"matchLabels": {"none": "1"}}]), vec![]),
            (json!([]), vec![]),
        ];
        for (selectors, want) in cases {
            let agg = aggregated("agg", selectors.clone());
            assert_eq!(aggregate(&agg, &all).unwrap(), Some(want), "{selectors}");
        }
        assert_eq!(aggregate(&role("plain", json!({}), json!([])), &all).unwrap(), None);
        let bad = aggregated("agg", json!([{"matchExpressions": [{"key": "x", "operator": "Bogus"}]}]));
        assert!(aggregate(&bad, &all).is_err());
    }

    #[test]
    fn an_aggregated_role_never_takes_its_own_rules() {
        let mut own = role("self", json!({"x": "1"}), json!([{"verbs": ["get"], "resources": ["a"]}]));
        own["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"x": "1"}}]});
        let other = role("other", json!({"x": "1"}), json!([{"verbs": ["list"], "resources": ["b"]}]));
        let got = aggregate(&own, &[own.clone(), other]).unwrap().unwrap();
        assert_eq!(got, vec![json!({"verbs": ["list"], "resources": ["b"]})]);
    }

    #[test]
    fn equality_is_semantic_and_ordered() {
        let r1 = json!({"verbs": ["get"], "resources": ["pods"], "apiGroups": [""]});
        let r2 = json!({"verbs": ["list"], "resources": ["pods"], "apiGroups": [""]});
        let held = json!({"rules": [r1.clone(), r2.clone()]});
        let cases = [
            (vec![r1.clone(), r2.clone()], true),
            (vec![r2.clone(), r1.clone()], false),
            (
                vec![
                    json!({"verbs": ["get"], "resources": ["pods"], "apiGroups": [""], "resourceNames": []}),
                    r2.clone(),
                ],
                true,
            ),
            (vec![r1.clone()], false),
        ];
        for (rules, want) in cases {
            assert_eq!(rules_equal(&held, &rules), want, "{rules:?}");
        }
        assert!(rules_equal(&json!({}), &[]));
    }

    #[test]
    fn apply_body_writes_non_empty_lists_only() {
        let rules = vec![json!({"apiGroups": [], "nonResourceURLs": ["/x"], "verbs": ["get"]})];
        assert_eq!(
            apply_body("admin", &rules),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "admin"},
                "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}],
            })
        );
        assert!(apply_body("admin", &[]).get("rules").is_none());
        let all = vec![
            aggregated("a", json!([])),
            role("b", json!({}), json!([])),
            json!({"metadata": {"name": "c"}, "aggregationRule": null}),
        ];
        assert_eq!(aggregated_keys(&all), vec!["a".to_string()]);
    }
}
