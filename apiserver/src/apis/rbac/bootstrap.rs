//! The bootstrap policy: the cluster roles and cluster role bindings kube-apiserver 1.32's
//! `rbac/bootstrap-roles` post-start hook creates when they are missing
//! (`KK/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`), carried as data in `bootstrap.yaml` (the
//! objects of upstream's fixtures `cluster-roles.yaml` and `cluster-role-bindings.yaml`; the file says what
//! it leaves to `bootstrap.rs` and how it was adjusted to 1.32's default feature gates).
//!
//! Every object gets upstream's `kubernetes.io/bootstrapping: rbac-defaults` label and
//! `rbac.authorization.kubernetes.io/autoupdate: "true"` annotation. The aggregated roles (`admin`, `edit`,
//! `view`) carry the rules the clusterrole-aggregation controller gives them in a running cluster (the
//! fixture shows them before it runs, with `rules: null`): the rules of the roles their selectors match,
//! roles in name order, each rule once, to the fixed point the controller reaches.
//!
//! Not carried: the controllers' roles and bindings (`controller-roles.yaml`, `controller-role-bindings.yaml`:
//! `system:controller:*`, bound to kube-system's service accounts) and the namespaced roles of
//! `namespace-roles.yaml`, which the same hook creates.

use serde_json::{json, Map, Value};

use crate::registry::strategies::workloads::selector_matches;

use super::GROUP;

/// The policy, as `bootstrap.yaml` writes it.
const DATA: &str = include_str!("bootstrap.yaml");

/// `bootstrappolicy.Label`: on every bootstrap object.
const BOOTSTRAPPING_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");
/// `rbacv1.AutoUpdateAnnotationKey`: the hook reconciles the object at every start while it is "true".
const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";

fn data() -> Value {
    serde_yaml::from_str(DATA).expect("bootstrap.yaml is the policy's YAML")
}

/// The items of `key` in the data.
fn items(key: &str) -> Vec<Value> {
    data().get(key).and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The metadata every bootstrap object has: its name, the bootstrapping label (and `labels` of its own), the
/// autoupdate annotation.
fn metadata(entry: &Value) -> Value {
    let mut labels = Map::new();
    labels.insert(BOOTSTRAPPING_LABEL.0.into(), Value::from(BOOTSTRAPPING_LABEL.1));
    if let Some(own) = entry.get("labels").and_then(Value::as_object) {
        labels.extend(own.clone());
    }
    json!({
        "name": entry["name"],
        "labels": labels,
        "annotations": {AUTOUPDATE_ANNOTATION: "true"},
    })
}

/// The bootstrap cluster roles, aggregated roles with their aggregated rules.
pub(crate) fn cluster_roles() -> Vec<Value> {
    let mut roles: Vec<Value> = items("clusterRoles")
        .iter()
        .map(|entry| {
            let mut role = json!({
                "apiVersion": format!("{GROUP}/v1"),
                "kind": "ClusterRole",
                "metadata": metadata(entry),
                "rules": entry.get("rules").cloned().unwrap_or_else(|| json!([])),
            });
            if let Some(rule) = entry.get("aggregationRule") {
                role["aggregationRule"] = rule.clone();
            }
            role
        })
        .collect();
    aggregate(&mut roles);
    roles
}

/// The bootstrap cluster role bindings.
pub(crate) fn cluster_role_bindings() -> Vec<Value> {
    items("clusterRoleBindings")
        .iter()
        .map(|entry| {
            let mut binding = json!({
                "apiVersion": format!("{GROUP}/v1"),
                "kind": "ClusterRoleBinding",
                "metadata": metadata(entry),
                "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": entry["role"]},
            });
            if let Some(subjects) = entry.get("subjects") {
                binding["subjects"] = subjects.clone();
            }
            binding
        })
        .collect()
}

fn role_name(role: &Value) -> &str {
    role.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

/// What the clusterrole-aggregation controller does to `roles` until nothing changes (`syncClusterRole`): an
/// aggregated role's rules are, selector by selector, the rules of the other roles the selector matches, in
/// name order, each rule once. The RBAC authorizer runs it over the stored cluster roles at every
/// evaluation, in place of the controller. Every role must be a JSON object.
pub(crate) fn aggregate(roles: &mut [Value]) {
    loop {
        let mut changed = false;
        for i in 0..roles.len() {
            let Some(selectors) =
                roles[i].pointer("/aggregationRule/clusterRoleSelectors").and_then(Value::as_array).cloned()
            else {
                continue;
            };
            let name = role_name(&roles[i]).to_string();
            let mut rules: Vec<Value> = Vec::new();
            for selector in &selectors {
                let mut matched: Vec<&Value> = roles
                    .iter()
                    .filter(|r| role_name(r) != name)
                    .filter(|r| {
                        let empty = Map::new();
                        let labels = r.pointer("/metadata/labels").and_then(Value::as_object).unwrap_or(&empty);
                        selector_matches(selector, labels)
                    })
                    .collect();
                matched.sort_by(|a, b| role_name(a).cmp(role_name(b)));
                for role in matched {
                    for rule in role.get("rules").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
                        if !rules.contains(rule) {
                            rules.push(rule.clone());
                        }
                    }
                }
            }
            let rules = Value::Array(rules);
            if roles[i]["rules"] != rules {
                roles[i]["rules"] = rules;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::rbac::clusterrolebindings::CLUSTER_ROLE_BINDINGS;
    use crate::apis::rbac::clusterroles::ClusterRoles;
    use crate::registry::field_error::messages;
    use crate::registry::strategy::Strategy;

    fn find<'a>(objects: &'a [Value], name: &str) -> &'a Value {
        objects.iter().find(|o| role_name(o) == name).unwrap_or_else(|| panic!("no {name}"))
    }

    #[test]
    fn every_bootstrap_object_validates() {
        let roles = cluster_roles();
        assert_eq!(roles.len(), 31);
        for mut role in roles {
            ClusterRoles.prepare_for_create(&mut role);
            assert_eq!(messages(ClusterRoles.validate(&role)), Vec::<String>::new(), "{role}");
        }
        let bindings = cluster_role_bindings();
        assert_eq!(bindings.len(), 12);
        for mut binding in bindings {
            let before = binding.clone();
            CLUSTER_ROLE_BINDINGS.decode(&mut binding);
            assert_eq!(binding, before, "the data carries the defaults already");
            assert_eq!(messages(CLUSTER_ROLE_BINDINGS.validate(&binding)), Vec::<String>::new(), "{binding}");
        }
    }

    #[test]
    fn every_binding_binds_a_bootstrap_role_and_objects_carry_upstreams_metadata() {
        let roles = cluster_roles();
        let bindings = cluster_role_bindings();
        for binding in &bindings {
            find(&roles, binding["roleRef"]["name"].as_str().unwrap());
        }
        for object in roles.iter().chain(&bindings) {
            assert_eq!(object.pointer("/metadata/labels/kubernetes.io~1bootstrapping"), Some(&json!("rbac-defaults")));
            assert_eq!(
                object.pointer("/metadata/annotations/rbac.authorization.kubernetes.io~1autoupdate"),
                Some(&json!("true"))
            );
        }
        assert_eq!(
            find(&bindings, "system:public-info-viewer")["subjects"],
            json!([{"apiGroup": GROUP, "kind": "Group", "name": "system:authenticated"},
                {"apiGroup": GROUP, "kind": "Group", "name": "system:unauthenticated"}])
        );
        assert!(find(&bindings, "system:node").get("subjects").is_none());
    }

    #[test]
    fn admin_edit_and_view_hold_the_aggregated_rules() {
        let roles = cluster_roles();
        let rules = |name: &str| find(&roles, name)["rules"].as_array().unwrap().clone();
        let view = rules("view");
        assert_eq!(view, rules("system:aggregate-to-view"));
        let edit = rules("edit");
        let mut want = rules("system:aggregate-to-edit");
        want.extend(view.iter().filter(|r| !want.contains(r)).cloned().collect::<Vec<_>>());
        assert_eq!(edit, want);
        let admin = rules("admin");
        let mut want = edit.clone();
        want.extend(rules("system:aggregate-to-admin"));
        assert_eq!(admin, want);
        assert_eq!(
            find(&roles, "admin")["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]})
        );
        assert_eq!(
            find(&roles, "edit").pointer("/metadata/labels/rbac.authorization.k8s.io~1aggregate-to-admin"),
            Some(&json!("true"))
        );
        assert_eq!(
            rules("system:discovery"),
            vec![json!({"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]})]
        );
    }

    #[test]
    fn aggregation_reaches_the_controllers_fixed_point_in_any_order() {
        let role = |name: &str, labels: Value, rules: Value, selector: Option<&str>| {
            let mut r = json!({"metadata": {"name": name, "labels": labels}, "rules": rules});
            if let Some(label) = selector {
                r["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]});
            }
            r
        };
        let r1 = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let r2 = json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]});
        // The outer role comes first, so its first pass sees the inner one still empty.
        let mut roles = vec![
            role("outer", json!({}), json!(null), Some("to-outer")),
            role("inner", json!({"to-outer": "true"}), json!(null), Some("to-inner")),
            role("b", json!({"to-inner": "true"}), json!([r2, r1]), None),
            role("a", json!({"to-inner": "true", "to-outer": "true"}), json!([r1]), None),
        ];
        aggregate(&mut roles);
        assert_eq!(roles[1]["rules"], json!([r1, r2]));
        assert_eq!(roles[0]["rules"], json!([r1, r2]));
    }
}
