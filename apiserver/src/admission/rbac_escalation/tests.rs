//! Tests of the escalation check: rule coverage case by case, upstream's refusal texts, and each path of the
//! four storages against RBAC objects served from memory.

use serde_json::{json, Value};

use super::*;
use crate::apis::rbac::authorizer::tests::{binding, registry, role, user, with_bootstrap};
use crate::registry::admission::Attributes as AdmissionAttributes;
use crate::registry::authorizer::Mode;
use crate::registry::resource::Resource;

/// `covers` as upstream's `policy_comparator_test.go` cases put it: the owner's rules, the servant's, and
/// whether they are covered.
#[test]
fn coverage_is_upstreams_rule_by_rule() {
    let get_pods = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
    let cases: Vec<(&str, Vec<Value>, Vec<Value>, bool)> = vec![
        ("same rule", vec![get_pods.clone()], vec![get_pods.clone()], true),
        (
            "more verbs held",
            vec![json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})],
            vec![get_pods.clone()],
            true,
        ),
        (
            "a verb not held",
            vec![get_pods.clone()],
            vec![json!({"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]})],
            false,
        ),
        (
            "the star verb covers any",
            vec![json!({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]})],
            vec![json!({"verbs": ["escalate"], "apiGroups": [""], "resources": ["pods"]})],
            true,
        ),
        (
            "a verb is not the star",
            vec![get_pods.clone()],
            vec![json!({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]})],
            false,
        ),
        (
            "another group",
            vec![get_pods.clone()],
            vec![json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]})],
            false,
        ),
        (
            "the star group",
            vec![json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["pods"]})],
            vec![json!({"verbs": ["get"], "apiGroups": ["apps", ""], "resources": ["pods"]})],
            true,
        ),
        (
            "the star resource",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]})],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "pods/log", "secrets"]})],
            true,
        ),
        (
            "a subresource is not its resource",
            vec![get_pods.clone()],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]})],
            false,
        ),
        (
            "star slash subresource",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/scale"]})],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["deployments/scale", "rs/scale"]})],
            true,
        ),
        (
            "star slash subresource is not the resource",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/scale"]})],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["deployments"]})],
            false,
        ),
        (
            "names held cover those names",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a", "b"]})],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["b"]})],
            true,
        ),
        (
            "names held do not cover every name",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]})],
            vec![get_pods.clone()],
            false,
        ),
        (
            "names held do not cover another name",
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]})],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["c"]})],
            false,
        ),
        (
            "no names held covers any name",
            vec![get_pods.clone()],
            vec![json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["c"]})],
            true,
        ),
        (
            "a URL prefix",
            vec![json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})],
            vec![json!({"verbs": ["get"], "nonResourceURLs": ["/apis/apps", "/apis/"]})],
            true,
        ),
        (
            "a URL outside the prefix",
            vec![json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})],
            vec![json!({"verbs": ["get"], "nonResourceURLs": ["/api"]})],
            false,
        ),
        (
            "the star URL",
            vec![json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
            vec![json!({"verbs": ["get", "post"], "nonResourceURLs": ["/healthz", "/metrics"]})],
            true,
        ),
        (
            "resource rules do not cover URLs",
            vec![json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
            vec![json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]})],
            false,
        ),
        (
            "URL rules do not cover resources",
            vec![json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
            vec![get_pods.clone()],
            false,
        ),
        (
            "split across owner rules",
            vec![get_pods.clone(), json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]})],
            vec![json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})],
            true,
        ),
        ("nothing asked", vec![], vec![], true),
        ("nothing held", vec![], vec![get_pods.clone()], false),
    ];
    for (name, owner, servant, expected) in cases {
        assert_eq!(crate::apis::rbac::authorizer::rules::covers(&owner, &servant).0, expected, "{name}");
    }
}

#[test]
fn the_uncovered_rules_are_broken_down_to_single_tuples() {
    let owner = [json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})];
    let servant = [
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a", "b"]}),
        json!({"verbs": ["get"], "nonResourceURLs": ["/x"]}),
    ];
    let (covered, missing) = crate::apis::rbac::authorizer::rules::covers(&owner, &servant);
    assert!(!covered);
    assert_eq!(
        missing,
        [
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"], "resourceNames": ["a"]}),
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"], "resourceNames": ["b"]}),
            json!({"nonResourceURLs": ["/x"], "verbs": ["get"]}),
        ]
    );
}

#[test]
fn compact_strings_print_each_non_empty_list_in_upstreams_order() {
    let cases = [
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"]}),
            r#"{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}"#,
        ),
        (
            json!({"verbs": ["get", "post"], "nonResourceURLs": ["/a\"b"]}),
            r#"{NonResourceURLs:["/a\"b"], Verbs:["get" "post"]}"#,
        ),
        (json!({"apiGroups": [], "verbs": []}), "{}"),
    ];
    for (rule, expected) in cases {
        assert_eq!(compact_string(&rule), expected);
    }
}

#[test]
fn compacting_merges_the_verbs_of_one_group_and_resource_only() {
    let rules = vec![
        json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}),
        json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"], "resourceNames": ["a"]}),
        json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}),
        json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}),
        json!({"nonResourceURLs": ["/x"], "verbs": ["get"]}),
    ];
    assert_eq!(
        compact_rules(rules),
        [
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"], "resourceNames": ["a"]}),
            json!({"nonResourceURLs": ["/x"], "verbs": ["get"]}),
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "delete"]}),
            json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}),
        ]
    );
}

#[test]
fn the_refusal_lists_the_missing_rules_sorted_and_then_the_resolution_errors() {
    let bob = user("bob", &["dev", "system:authenticated"]);
    let owner = [json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})];
    let asked = [
        json!({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["secrets", "pods"]}),
        json!({"verbs": ["get"], "nonResourceURLs": ["/metrics"]}),
    ];
    assert_eq!(confirm_no_escalation(&bob, &owner, &[], &owner), Ok(()));
    let head = "user \"bob\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant RBAC permissions not \
                currently held:\n";
    let missing = "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\" \"watch\"]}\n\
                   {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\" \"watch\"]}\n\
                   {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}";
    assert_eq!(confirm_no_escalation(&bob, &owner, &[], &asked), Err(format!("{head}{missing}")));
    let one = ["roles.rbac.authorization.k8s.io \"gone\" not found".to_string()];
    assert_eq!(
        confirm_no_escalation(&bob, &owner, &one, &asked),
        Err(format!("{head}{missing}; resolution errors: [roles.rbac.authorization.k8s.io \"gone\" not found]"))
    );
    let two = [one[0].clone(), "clusterroles.rbac.authorization.k8s.io \"x\" not found".to_string()];
    assert!(confirm_no_escalation(&bob, &owner, &two, &asked).unwrap_err().ends_with(
        "; resolution errors: [[roles.rbac.authorization.k8s.io \"gone\" not found, \
         clusterroles.rbac.authorization.k8s.io \"x\" not found]]"
    ));
    let nobody = user("nobody", &[]);
    assert!(confirm_no_escalation(&nobody, &[], &[], &owner).unwrap_err().starts_with("user \"nobody\" (groups=[]) "));
}

#[test]
fn an_update_of_only_the_garbage_collectors_fields_is_not_checked() {
    let old = json!({"metadata": {"name": "r", "namespace": "team", "resourceVersion": "5"},
        "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
    let with_meta = |meta: Value| {
        let mut obj = old.clone();
        for (k, v) in meta.as_object().into_iter().flatten() {
            obj["metadata"][k] = v.clone();
        }
        obj
    };
    let mut more_rules = old.clone();
    more_rules["rules"][0]["verbs"] = json!(["get", "list"]);
    let cases = [
        ("unchanged", old.clone(), true),
        ("finalizers", with_meta(json!({"finalizers": ["x"]})), true),
        ("owner references", with_meta(json!({"ownerReferences": [{"uid": "u", "name": "o"}]})), true),
        ("managed fields", with_meta(json!({"managedFields": [{"manager": "m"}]})), true),
        ("an empty list is none", with_meta(json!({"labels": {}})), true),
        ("labels", with_meta(json!({"labels": {"a": "b"}})), false),
        ("rules", more_rules, false),
    ];
    for (name, obj, expected) in cases {
        assert_eq!(only_gc_fields_change(&obj, &old), expected, "{name}");
    }
    assert!(!only_gc_fields_change(&old, &Value::Null));
}

// ---- the check against RBAC objects -------------------------------------------------------------------

/// In namespace `team`: `editor` lets group `dev` read and write pods and configmaps and write roles and
/// role bindings; `binder` lets bob bind the cluster role `viewer-plus` there; `ghost` binds bob to a
/// role that does not exist. `escalator` may escalate roles in `team`.
fn objects() -> Vec<Value> {
    let edit_rules = json!([
        {"verbs": ["get", "list", "watch", "create", "update", "delete"], "apiGroups": [""], "resources": ["pods", "configmaps"]},
        {"verbs": ["create", "update"], "apiGroups": [GROUP], "resources": ["roles", "rolebindings"]},
    ]);
    with_bootstrap(vec![
        role("Role", "team", "editor", edit_rules),
        binding("RoleBinding", "team", "dev-editor", "Role", "editor", json!([{"kind": "Group", "name": "dev"}])),
        role(
            "ClusterRole",
            "",
            "viewer-plus",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]),
        ),
        role(
            "Role",
            "team",
            "binder",
            json!([{"verbs": ["bind"], "apiGroups": [GROUP], "resources": ["clusterroles"], "resourceNames": ["viewer-plus"]}]),
        ),
        binding("RoleBinding", "team", "bob-binder", "Role", "binder", json!([{"kind": "User", "name": "bob"}])),
        role(
            "Role",
            "team",
            "escalate",
            json!([{"verbs": ["escalate"], "apiGroups": [GROUP], "resources": ["roles"]}]),
        ),
        binding("RoleBinding", "team", "esc", "Role", "escalate", json!([{"kind": "User", "name": "escalator"}])),
    ])
}

/// One write through the check, as the chain runs it.
fn write(
    who: &UserInfo,
    op: Operation,
    plural: &str,
    namespace: &str,
    obj: Value,
    old: Value,
) -> Result<(), RegistryError> {
    write_with(&objects(), who, op, plural, namespace, obj, old)
}

fn write_with(
    objects: &[Value],
    who: &UserInfo,
    op: Operation,
    plural: &str,
    namespace: &str,
    mut obj: Value,
    old: Value,
) -> Result<(), RegistryError> {
    let kind = match plural {
        "roles" => "Role",
        "clusterroles" => "ClusterRole",
        "rolebindings" => "RoleBinding",
        _ => "ClusterRoleBinding",
    };
    let resource = Resource::group(GROUP, "v1", kind, plural);
    let stores = registry(objects.to_vec());
    let name = str_at(&obj, "/metadata/name").to_string();
    let attrs = AdmissionAttributes {
        operation: op,
        resource: &resource,
        subresource: "",
        namespace,
        name: &name,
        dry_run: false,
    };
    let req = Request { attrs, user: who, registry: &stores, now_unix_s: 0 };
    let plugin = make(&Modes(vec![Mode::Node, Mode::Rbac])).expect("on with RBAC");
    futures::executor::block_on(plugin.admit(&req, &mut obj, &old))
}

fn new_role(kind: &str, ns: &str, name: &str, rules: Value) -> Value {
    role(kind, ns, name, rules)
}

fn pods(verbs: &[&str]) -> Value {
    json!([{"verbs": verbs, "apiGroups": [""], "resources": ["pods"]}])
}

#[test]
fn the_check_is_on_only_with_rbac() {
    assert!(make(&Modes(vec![Mode::AlwaysAllow])).is_none());
    assert!(make(&Modes(vec![Mode::Node, Mode::Rbac])).is_some());
}

#[test]
fn a_role_within_the_writers_rights_is_written_and_one_beyond_them_refused() {
    let bob = user("bob", &["dev", "system:authenticated"]);
    let within = new_role("Role", "team", "pod-reader", pods(&["get", "list"]));
    assert_eq!(write(&bob, Operation::Create, "roles", "team", within, Value::Null), Ok(()));

    let beyond =
        new_role("Role", "team", "x", json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "secrets"]}]));
    let err = write(&bob, Operation::Create, "roles", "team", beyond.clone(), Value::Null).unwrap_err();
    assert_eq!(
        err.to_string(),
        "roles.rbac.authorization.k8s.io \"x\" is forbidden: user \"bob\" (groups=[\"dev\" \"system:authenticated\"]) is \
         attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
    );
    assert_eq!(err.to_status().code, Some(403));
    // Elsewhere bob holds only what every authenticated user does.
    let elsewhere = new_role("Role", "other", "pod-reader", pods(&["get"]));
    assert!(write(&bob, Operation::Create, "roles", "other", elsewhere, Value::Null).is_err());
    // A member of system:masters and a user who may escalate roles write anything.
    let admin = user("root", &["system:masters"]);
    assert_eq!(write(&admin, Operation::Create, "roles", "team", beyond.clone(), Value::Null), Ok(()));
    let escalator = user("escalator", &[]);
    assert_eq!(write(&escalator, Operation::Create, "roles", "team", beyond.clone(), Value::Null), Ok(()));
    // Nothing else is checked: a delete, another group's resource.
    assert_eq!(write(&bob, Operation::Delete, "roles", "team", Value::Null, beyond), Ok(()));
}

#[test]
fn an_update_is_checked_unless_it_changes_only_finalizers() {
    let bob = user("bob", &["dev"]);
    let old = new_role("Role", "team", "wide", json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]));
    let mut finalized = old.clone();
    finalized["metadata"]["finalizers"] = json!(["example.com/keep"]);
    assert_eq!(write(&bob, Operation::Update, "roles", "team", finalized, old.clone()), Ok(()));
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    let err = write(&bob, Operation::Update, "roles", "team", labelled, old).unwrap_err().to_string();
    assert!(
        err.starts_with("roles.rbac.authorization.k8s.io \"wide\" is forbidden: user \"bob\" (groups=[\"dev\"])"),
        "{err}"
    );
    assert!(err.ends_with("\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"), "{err}");
}

#[test]
fn a_rule_that_does_not_resolve_is_named_after_the_missing_rules() {
    let mut objects = objects();
    objects.push(binding("RoleBinding", "team", "ghost", "Role", "gone", json!([{"kind": "User", "name": "bob"}])));
    let bob = user("bob", &["dev"]);
    let obj = new_role("Role", "team", "x", json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]));
    let err = write_with(&objects, &bob, Operation::Create, "roles", "team", obj, Value::Null).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}; resolution errors: \
             [roles.rbac.authorization.k8s.io \"gone\" not found]"
        ),
        "{err}"
    );
}

#[test]
fn a_generated_name_is_refused_without_a_name() {
    let bob = user("bob", &["dev"]);
    let obj =
        json!({"kind": "Role", "metadata": {"generateName": "x-", "namespace": "team"}, "rules": pods(&["patch"])});
    let status = write(&bob, Operation::Create, "roles", "team", obj, Value::Null).unwrap_err().to_status();
    assert_eq!(
        status.message.as_deref(),
        Some(
            "roles.rbac.authorization.k8s.io is forbidden: user \"bob\" (groups=[\"dev\"]) is attempting to grant RBAC \
             permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"patch\"]}"
        )
    );
    assert_eq!((status.code, status.reason.as_deref()), (Some(403), Some("Forbidden")));
    assert_eq!(status.details.and_then(|d| d.name), None);
}

#[test]
fn an_aggregation_rule_needs_every_right() {
    // bob may write cluster roles and holds what the aggregated role asks for, but not everything.
    let mut objects = objects();
    objects.push(role(
        "ClusterRole",
        "",
        "role-writer",
        json!([{"verbs": ["create", "update"], "apiGroups": [GROUP], "resources": ["clusterroles"]}]),
    ));
    objects.push(binding(
        "ClusterRoleBinding",
        "",
        "bob-writes",
        "ClusterRole",
        "role-writer",
        json!([{"kind": "User", "name": "bob"}]),
    ));
    let bob = user("bob", &[]);
    let mut aggregated = new_role("ClusterRole", "", "agg", json!([]));
    aggregated["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]});
    let err = write_with(&objects, &bob, Operation::Create, "clusterroles", "", aggregated.clone(), Value::Null);
    assert_eq!(
        err.unwrap_err().to_string(),
        "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the \
         aggregationRule"
    );
    // Dropping an aggregation rule needs it too; a plain cluster role within bob's rights does not.
    let plain = new_role("ClusterRole", "", "agg", json!([]));
    assert!(write_with(&objects, &bob, Operation::Update, "clusterroles", "", plain.clone(), aggregated).is_err());
    assert_eq!(write_with(&objects, &bob, Operation::Create, "clusterroles", "", plain, Value::Null), Ok(()));
}

#[test]
fn a_binding_needs_the_roles_rules_or_bind() {
    let bob = user("bob", &["dev"]);
    let carol = user("carol", &["dev"]);
    let to = |name: &str, kind: &str, role: &str| {
        binding("RoleBinding", "team", name, kind, role, json!([{"kind": "User", "name": "eve"}]))
    };
    // Bob holds the rules of `editor`, so he may bind it; he may bind `viewer-plus` by `bind`.
    assert_eq!(write(&bob, Operation::Create, "rolebindings", "team", to("a", "Role", "editor"), Value::Null), Ok(()));
    assert_eq!(
        write(&bob, Operation::Create, "rolebindings", "team", to("b", "ClusterRole", "viewer-plus"), Value::Null),
        Ok(())
    );
    // Carol may do neither for `viewer-plus`.
    let err =
        write(&carol, Operation::Create, "rolebindings", "team", to("b", "ClusterRole", "viewer-plus"), Value::Null);
    assert_eq!(
        err.unwrap_err().to_string(),
        "rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"carol\" (groups=[\"dev\"]) is attempting to \
         grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
    );
    // Bob's `bind` is for `viewer-plus` in `team` only.
    let cluster_wide = binding("ClusterRoleBinding", "", "c", "ClusterRole", "viewer-plus", json!([]));
    let err = write(&bob, Operation::Create, "clusterrolebindings", "", cluster_wide, Value::Null).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("clusterrolebindings.rbac.authorization.k8s.io \"c\" is forbidden: user \"bob\""));
    // A role that does not exist is the store's 404; a kind that is no role, upstream's bare error.
    let err =
        write(&carol, Operation::Create, "rolebindings", "team", to("d", "Role", "nope"), Value::Null).unwrap_err();
    assert_eq!(err.to_string(), "roles.rbac.authorization.k8s.io \"nope\" not found");
    assert_eq!(err.to_status().code, Some(404));
    let err = write(&carol, Operation::Create, "rolebindings", "team", to("e", "Group", "x"), Value::Null).unwrap_err();
    assert_eq!(err, RegistryError::Unconverted("unsupported role reference kind: \"Group\"".into()));
    // An update of the finalizers alone passes; one that changes subjects is checked.
    let old = to("b", "ClusterRole", "viewer-plus");
    let mut finalized = old.clone();
    finalized["metadata"]["finalizers"] = json!(["x"]);
    assert_eq!(write(&carol, Operation::Update, "rolebindings", "team", finalized, old.clone()), Ok(()));
    let mut more = old.clone();
    more["subjects"] = json!([{"kind": "User", "name": "mallory"}]);
    assert!(write(&carol, Operation::Update, "rolebindings", "team", more, old).is_err());
}
