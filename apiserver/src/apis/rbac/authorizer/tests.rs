//! Tests of the RBAC evaluation, the authorization chain, the 403 message and the rules a user holds;
//! [`registry`] is the fixture the access reviews' tests read RBAC objects from too.

use std::sync::Arc;

use serde_json::{json, Value};

use super::rules::rule_allows;
use super::*;
use crate::apis::rbac::bootstrap;
use crate::registry::authorizer::ResourceAttributes;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext, ReviewRest, Unstored};
use crate::registry::system::FixedClock;
use crate::registry::tokens::ServiceAccountTokens;

/// A stand-in for a store: lists fixed objects, those of the namespace asked for.
struct Fixed(Vec<Value>);

impl Review for Fixed {
    fn read<'a>(&'a self, ctx: ReviewContext<'a>) -> BoxFuture<'a, Result<Vec<Value>, RegistryError>> {
        let ns = ctx.namespace.to_string();
        let items = self
            .0
            .iter()
            .filter(|o| ns.is_empty() || o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(&ns))
            .cloned()
            .collect();
        Box::pin(async move { Ok(items) })
    }
}

/// A registry serving the RBAC objects among `objects` (by kind) from memory.
pub(crate) fn registry(objects: Vec<Value>) -> Registry {
    let mut registry = Registry::new();
    for (kind, plural, namespaced) in [
        ("Role", "roles", true),
        ("ClusterRole", "clusterroles", false),
        ("RoleBinding", "rolebindings", true),
        ("ClusterRoleBinding", "clusterrolebindings", false),
    ] {
        let of_kind: Vec<Value> = objects.iter().filter(|o| o["kind"] == kind).cloned().collect();
        let rest = ReviewRest::new(
            Arc::new(Fixed(of_kind)),
            Arc::new(Unstored { namespaced }),
            Arc::new(ServiceAccountTokens::from_seed(0)),
            Arc::new(Registry::new()),
            Arc::new(FixedClock(0)),
            Modes::default(),
        );
        registry.insert((GROUP.into(), "v1".into(), plural.into()), Arc::new(rest));
    }
    registry
}

/// The bootstrap cluster roles and bindings with `more`.
pub(crate) fn with_bootstrap(more: Vec<Value>) -> Vec<Value> {
    let mut objects = bootstrap::cluster_roles();
    objects.extend(bootstrap::cluster_role_bindings());
    objects.extend(more);
    objects
}

pub(crate) fn role(kind: &str, ns: &str, name: &str, rules: Value) -> Value {
    json!({"kind": kind, "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

pub(crate) fn binding(kind: &str, ns: &str, name: &str, role_kind: &str, role: &str, subjects: Value) -> Value {
    json!({"kind": kind, "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role}, "subjects": subjects})
}

pub(crate) fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        username: name.into(),
        uid: String::new(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: Default::default(),
    }
}

fn policy(objects: Vec<Value>) -> Policy {
    let of = |kind: &str| objects.iter().filter(|o| o["kind"] == kind).cloned().collect::<Vec<_>>();
    Policy::new(of("Role"), of("ClusterRole"), of("RoleBinding"), of("ClusterRoleBinding"))
}

fn resource<'a>(verb: &'a str, ns: &'a str, group: &'a str, res: &'a str, sub: &'a str, name: &'a str) -> Request<'a> {
    Request { verb, resource: Some((ns, group, res, sub, name)), path: "" }
}

fn path<'a>(verb: &'a str, path: &'a str) -> Request<'a> {
    Request { verb, resource: None, path }
}

/// A request without its user.
#[derive(Clone, Copy)]
struct Request<'a> {
    verb: &'a str,
    resource: Option<(&'a str, &'a str, &'a str, &'a str, &'a str)>,
    path: &'a str,
}

impl<'a> Request<'a> {
    fn by(self, user: &'a UserInfo) -> Attributes<'a> {
        Attributes {
            user,
            verb: self.verb,
            resource: self.resource.map(|(namespace, api_group, resource, subresource, name)| ResourceAttributes {
                namespace,
                api_group,
                api_version: "v1",
                resource,
                subresource,
                name,
            }),
            path: self.path,
        }
    }
}

#[test]
fn rules_match_as_upstreams_helpers() {
    let nobody = user("u", &[]);
    let cases: Vec<(Value, Request, bool)> = vec![
        // Verbs: exact or "*".
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource("get", "ns", "", "pods", "", ""),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource("list", "ns", "", "pods", "", ""),
            false,
        ),
        (
            json!({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}),
            resource("delete", "", "", "pods", "", ""),
            true,
        ),
        // API groups: exact or "*"; "" is the core group only.
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["deployments"]}),
            resource("get", "ns", "apps", "deployments", "", ""),
            false,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["deployments"]}),
            resource("get", "ns", "apps", "deployments", "", ""),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}),
            resource("get", "ns", "apps", "deployments", "", ""),
            true,
        ),
        // Resources: "*" covers subresources; a plain resource does not; "resource/sub" and "*/sub" do.
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}),
            resource("get", "ns", "", "pods", "log", ""),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource("get", "ns", "", "pods", "log", ""),
            false,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}),
            resource("get", "ns", "", "pods", "log", ""),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}),
            resource("get", "ns", "", "pods", "", ""),
            false,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]}),
            resource("update", "ns", "apps", "deployments", "status", ""),
            true,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]}),
            resource("update", "ns", "apps", "deployments", "scale", ""),
            false,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]}),
            resource("update", "ns", "apps", "deployments", "", ""),
            false,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["x/status"]}),
            resource("update", "ns", "apps", "deployments", "status", ""),
            false,
        ),
        // Resource names: none means all; otherwise the name must be listed (a list has no name).
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            resource("get", "ns", "", "secrets", "", "a"),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            resource("get", "ns", "", "secrets", "", "b"),
            false,
        ),
        (
            json!({"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            resource("list", "ns", "", "secrets", "", ""),
            false,
        ),
        // Non-resource URLs: exact, "*", or a prefix before a trailing "*"; never for resource requests.
        (json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}), path("get", "/healthz"), true),
        (json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}), path("get", "/healthz/etcd"), false),
        (json!({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}), path("get", "/healthz/etcd"), true),
        (json!({"verbs": ["get"], "nonResourceURLs": ["/api*"]}), path("get", "/apis/apps"), true),
        (json!({"verbs": ["get"], "nonResourceURLs": ["*"]}), path("get", "/anything"), true),
        (json!({"verbs": ["get"], "nonResourceURLs": ["*"]}), path("post", "/anything"), false),
        (json!({"verbs": ["get"], "nonResourceURLs": ["*"]}), resource("get", "ns", "", "pods", "", ""), false),
        (json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}), path("get", "/api"), false),
    ];
    for (rule, request, want) in cases {
        let attrs = request.by(&nobody);
        assert_eq!(rule_allows(&attrs, &rule), want, "{rule} for {attrs:?}");
    }
}

#[test]
fn bindings_apply_to_their_subjects_and_scope() {
    let pods = json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]);
    let objects = vec![
        role("ClusterRole", "", "pod-reader", pods.clone()),
        role("Role", "ns", "local-reader", pods.clone()),
        role("Role", "other", "elsewhere", pods.clone()),
        binding(
            "ClusterRoleBinding",
            "",
            "crb",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "User", "name": "alice"}]),
        ),
        binding(
            "RoleBinding",
            "ns",
            "rb-cluster",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "Group", "name": "devs"}]),
        ),
        binding(
            "RoleBinding",
            "ns",
            "rb-sa",
            "Role",
            "local-reader",
            json!([{"kind": "ServiceAccount", "name": "robot"}]),
        ),
        binding(
            "RoleBinding",
            "ns",
            "rb-sa-other",
            "Role",
            "local-reader",
            json!([{"kind": "User", "name": "nobody"}, {"kind": "ServiceAccount", "name": "bot", "namespace": "other"}]),
        ),
    ];
    let policy = policy(objects);
    let robot = user("system:serviceaccount:ns:robot", &["system:serviceaccounts"]);
    let bot = user("system:serviceaccount:other:bot", &[]);
    let alice = user("alice", &[]);
    let dev = user("bob", &["devs"]);
    let (robotic, plain_robot) = (user("system:serviceaccount:ns:robotic", &[]), user("robot", &[]));
    let get_pods = |ns: &'static str| resource("get", ns, "", "pods", "", "");
    let cases: Vec<(&UserInfo, Request, &str)> = vec![
        (
            &alice,
            get_pods("ns"),
            r#"RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to User "alice""#,
        ),
        (
            &alice,
            get_pods(""),
            r#"RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to User "alice""#,
        ),
        (
            &dev,
            get_pods("ns"),
            r#"RBAC: allowed by RoleBinding "rb-cluster/ns" of ClusterRole "pod-reader" to Group "devs""#,
        ),
        (&dev, get_pods("other"), ""),
        (&dev, get_pods(""), ""),
        (
            &robot,
            get_pods("ns"),
            r#"RBAC: allowed by RoleBinding "rb-sa/ns" of Role "local-reader" to ServiceAccount "robot/ns""#,
        ),
        (
            &bot,
            get_pods("ns"),
            r#"RBAC: allowed by RoleBinding "rb-sa-other/ns" of Role "local-reader" to ServiceAccount "bot/other""#,
        ),
        (&robot, resource("list", "ns", "", "pods", "", ""), ""),
        (&robotic, get_pods("ns"), ""),
        (&plain_robot, get_pods("ns"), ""),
    ];
    for (who, request, want) in cases {
        let decision = policy.authorize(&request.by(who));
        assert_eq!(decision.allowed(), !want.is_empty(), "{} {:?}", who.username, request.resource);
        assert_eq!(decision.reason(), want);
    }
    // A cluster role binding's service account needs a namespace: none names every namespace's account.
    let bare = policy_of_crb(json!([{"kind": "ServiceAccount", "name": "robot"}]));
    assert!(!bare.authorize(&get_pods("ns").by(&robot)).allowed());
}

fn policy_of_crb(subjects: Value) -> Policy {
    policy(vec![
        role("ClusterRole", "", "all", json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])),
        binding("ClusterRoleBinding", "", "b", "ClusterRole", "all", subjects),
    ])
}

#[test]
fn missing_roles_are_the_reason_of_no_opinion() {
    let alice = user("alice", &["devs"]);
    let objects = vec![
        binding("ClusterRoleBinding", "", "a", "ClusterRole", "gone", json!([{"kind": "User", "name": "alice"}])),
        binding("ClusterRoleBinding", "", "b", "ClusterRole", "gone", json!([{"kind": "Group", "name": "devs"}])),
        binding("RoleBinding", "ns", "c", "Role", "absent", json!([{"kind": "User", "name": "alice"}])),
        binding("RoleBinding", "ns", "d", "Other", "x", json!([{"kind": "User", "name": "alice"}])),
    ];
    let policy = policy(objects.clone());
    let get = resource("get", "ns", "", "pods", "", "");
    assert_eq!(
        policy.authorize(&get.by(&alice)),
        Decision::NoOpinion {
            reason: r#"RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "absent" not found, unsupported role reference kind: "Other"]"#.into()
        }
    );
    // One error (or the same twice) is printed alone.
    let cluster_only = resource("get", "", "", "nodes", "", "");
    assert_eq!(
        policy.authorize(&cluster_only.by(&alice)).reason(),
        r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#
    );
    // An allowing rule found later wins, and the errors met before it are not reported.
    let mut more = objects;
    more.push(role("Role", "ns", "reader", json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])));
    more.push(binding("RoleBinding", "ns", "e", "Role", "reader", json!([{"kind": "User", "name": "alice"}])));
    assert_eq!(
        super::rules::aggregate_errors(&["x".into(), "x".into()]),
        "x",
        "duplicates are printed once, without brackets"
    );
    assert_eq!(
        policy_from(more).authorize(&get.by(&alice)).reason(),
        r#"RBAC: allowed by RoleBinding "e/ns" of Role "reader" to User "alice""#
    );
}

fn policy_from(objects: Vec<Value>) -> Policy {
    policy(objects)
}

#[test]
fn aggregated_cluster_roles_hold_the_rules_of_the_roles_they_select() {
    let objects = vec![
        json!({"kind": "ClusterRole", "metadata": {"name": "monitoring"}, "rules": null,
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate-to-monitoring": "true"}}]}}),
        json!({"kind": "ClusterRole", "metadata": {"name": "endpoints-reader", "labels": {"example.com/aggregate-to-monitoring": "true"}},
            "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["endpoints"]}]}),
        binding(
            "ClusterRoleBinding",
            "",
            "mon",
            "ClusterRole",
            "monitoring",
            json!([{"kind": "User", "name": "prom"}]),
        ),
    ];
    let prom = user("prom", &[]);
    let policy = policy(objects);
    assert_eq!(
        policy.authorize(&resource("list", "ns", "", "endpoints", "", "").by(&prom)).reason(),
        r#"RBAC: allowed by ClusterRoleBinding "mon" of ClusterRole "monitoring" to User "prom""#
    );
    assert!(!policy.authorize(&resource("get", "ns", "", "endpoints", "", "").by(&prom)).allowed());
}

#[test]
fn the_bootstrap_policy_grants_what_upstreams_does() {
    let policy = policy(with_bootstrap(vec![]));
    let authenticated = user("alice", &["system:authenticated"]);
    let anonymous = UserInfo::anonymous();
    let masters = user("admin", &["system:masters", "system:authenticated"]);
    let view_in_ns =
        binding("RoleBinding", "ns", "v", "ClusterRole", "view", json!([{"kind": "User", "name": "alice"}]));
    let edit_in_ns =
        binding("RoleBinding", "ns", "e", "ClusterRole", "edit", json!([{"kind": "User", "name": "alice"}]));
    let cases: Vec<(&UserInfo, Request, &str)> = vec![
        (
            &authenticated,
            path("get", "/api"),
            r#"RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#,
        ),
        (
            &authenticated,
            path("get", "/apis/apps/v1"),
            r#"RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#,
        ),
        (
            &anonymous,
            path("get", "/healthz"),
            r#"RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated""#,
        ),
        (&anonymous, path("get", "/api"), ""),
        (
            &authenticated,
            resource("create", "", "authorization.k8s.io", "selfsubjectaccessreviews", "", ""),
            r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated""#,
        ),
        (
            &authenticated,
            resource("create", "", "authentication.k8s.io", "selfsubjectreviews", "", ""),
            r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated""#,
        ),
        (&authenticated, resource("list", "ns", "", "pods", "", ""), ""),
        (
            &masters,
            resource("delete", "", "", "nodes", "", "n1"),
            r#"RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters""#,
        ),
        (
            &masters,
            path("post", "/whatever"),
            r#"RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters""#,
        ),
    ];
    for (who, request, want) in cases {
        let decision = policy.authorize(&request.by(who));
        assert_eq!(decision.reason(), want, "{} {:?} {}", who.username, request.resource, request.path);
        assert_eq!(decision.allowed(), !want.is_empty());
    }
    // The aggregated roles bound in a namespace: view reads, edit writes, neither touches roles.
    let policy = policy_from(with_bootstrap(vec![view_in_ns]));
    assert!(policy.authorize(&resource("list", "ns", "apps", "deployments", "", "").by(&authenticated)).allowed());
    assert!(!policy.authorize(&resource("create", "ns", "apps", "deployments", "", "").by(&authenticated)).allowed());
    assert!(!policy.authorize(&resource("get", "ns", "", "secrets", "", "").by(&authenticated)).allowed());
    let policy = policy_from(with_bootstrap(vec![edit_in_ns]));
    assert!(policy.authorize(&resource("create", "ns", "apps", "deployments", "", "").by(&authenticated)).allowed());
    assert!(policy.authorize(&resource("get", "ns", "", "secrets", "", "").by(&authenticated)).allowed());
    assert!(!policy.authorize(&resource("create", "ns", GROUP, "roles", "", "").by(&authenticated)).allowed());
    assert!(!policy
        .authorize(&resource("create", "other", "apps", "deployments", "", "").by(&authenticated))
        .allowed());
}

#[test]
fn the_chain_asks_each_mode_in_order() {
    let alice = user("alice", &[]);
    let masters = user("root", &["system:masters"]);
    let broken = policy(vec![binding(
        "ClusterRoleBinding",
        "",
        "b",
        "ClusterRole",
        "gone",
        json!([{"kind": "User", "name": "alice"}]),
    )]);
    let get = resource("get", "ns", "", "pods", "", "");
    let modes = |list: &str| Modes::parse(list).unwrap();
    let cases: Vec<(&str, &UserInfo, Decision)> = vec![
        ("AlwaysAllow", &alice, Decision::Allow { reason: "".into() }),
        ("AlwaysDeny", &alice, Decision::NoOpinion { reason: "Everything is forbidden.".into() }),
        ("AlwaysDeny", &masters, Decision::Allow { reason: "".into() }),
        ("AlwaysDeny,AlwaysAllow", &alice, Decision::Allow { reason: "".into() }),
        (
            "Node,RBAC",
            &alice,
            Decision::NoOpinion { reason: r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#.into() },
        ),
        ("Node,RBAC", &masters, Decision::Allow { reason: "".into() }),
        (
            "AlwaysDeny,RBAC",
            &alice,
            Decision::NoOpinion {
                reason: "Everything is forbidden.\nRBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found"
                    .into(),
            },
        ),
    ];
    for (list, who, want) in cases {
        assert_eq!(decide(&modes(list), &get.by(who), Some(&broken)), want, "{list} for {}", who.username);
    }
    assert!(reaches_rbac(&modes("Node,RBAC"), &alice));
    assert!(!reaches_rbac(&modes("Node,RBAC"), &masters));
    assert!(!reaches_rbac(&modes("AlwaysAllow,RBAC"), &alice));
    assert!(!reaches_rbac(&modes("AlwaysDeny"), &alice));
}

#[test]
fn the_chain_reads_the_policy_from_the_registry() {
    let stores = registry(with_bootstrap(vec![
        role("Role", "ns", "reader", json!([{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}])),
        binding("RoleBinding", "ns", "r", "Role", "reader", json!([{"kind": "ServiceAccount", "name": "sa"}])),
    ]));
    let sa = UserInfo::service_account("ns", "sa", "uid", "");
    let modes = Modes(vec![Mode::Node, Mode::Rbac]);
    let run = |attrs: Attributes| futures::executor::block_on(authorize(&modes, &stores, &attrs));
    assert_eq!(
        run(resource("list", "ns", "", "pods", "", "").by(&sa)).reason(),
        r#"RBAC: allowed by RoleBinding "r/ns" of Role "reader" to ServiceAccount "sa/ns""#
    );
    assert_eq!(run(resource("list", "other", "", "pods", "", "").by(&sa)), Decision::NoOpinion { reason: "".into() });
    assert!(run(path("get", "/version").by(&sa)).allowed());
    // A server that does not serve RBAC's kinds reads them as empty.
    let empty = Registry::new();
    let decision = futures::executor::block_on(authorize(&modes, &empty, &path("get", "/version").by(&sa)));
    assert_eq!(decision, Decision::NoOpinion { reason: "".into() });
}

#[test]
fn refusals_read_as_upstreams_403() {
    let sa = user("system:serviceaccount:ns:sa", &[]);
    let cases: Vec<(Request, &str)> = vec![
        (
            resource("list", "ns", "", "pods", "", ""),
            r#"User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns""#,
        ),
        (
            resource("get", "ns", "", "pods", "log", "p"),
            r#"User "system:serviceaccount:ns:sa" cannot get resource "pods/log" in API group "" in the namespace "ns""#,
        ),
        (
            resource("list", "", "apps", "deployments", "", ""),
            r#"User "system:serviceaccount:ns:sa" cannot list resource "deployments" in API group "apps" at the cluster scope"#,
        ),
        (path("get", "/foo"), r#"User "system:serviceaccount:ns:sa" cannot get path "/foo""#),
        (path("get", "/<b>&"), r#"User "system:serviceaccount:ns:sa" cannot get path "/&lt;b&gt;&amp;""#),
    ];
    for (request, want) in cases {
        assert_eq!(forbidden_message(&request.by(&sa)), want);
    }
    let odd = user("a\"b", &[]);
    assert_eq!(forbidden_message(&path("get", "/").by(&odd)), r#"User "a\"b" cannot get path "/""#);
}

#[test]
fn the_rules_a_user_holds_are_listed_in_upstreams_shape() {
    let objects = with_bootstrap(vec![
        role(
            "Role",
            "ns",
            "secrets",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s"]}]),
        ),
        binding("RoleBinding", "ns", "a", "Role", "secrets", json!([{"kind": "User", "name": "alice"}])),
        binding("RoleBinding", "ns", "b", "Role", "missing", json!([{"kind": "User", "name": "alice"}])),
    ]);
    let alice = user("alice", &["system:authenticated"]);
    let policy = policy(objects);
    let rbac = resolve_rules(&Modes(vec![Mode::Node, Mode::Rbac]), &alice, "ns", Some(&policy));
    assert_eq!(
        rbac.resource_rules,
        vec![
            json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}),
            json!({"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s"]}),
        ]
    );
    assert_eq!(
        rbac.non_resource_rules,
        vec![
            json!({"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}),
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]}),
        ]
    );
    assert!(!rbac.incomplete);
    assert_eq!(rbac.evaluation_error, r#"role.rbac.authorization.k8s.io "missing" not found"#);
    assert_eq!(rbac.status()["evaluationError"], json!(rbac.evaluation_error));

    // Elsewhere only the cluster-wide rules remain.
    let other = resolve_rules(&Modes(vec![Mode::Rbac]), &alice, "other", Some(&policy));
    assert_eq!(other.resource_rules.len(), 2);
    assert_eq!(other.status().get("evaluationError"), None);

    // AlwaysAllow's single rules; AlwaysDeny's none; a node's rules are not enumerable.
    let allow = resolve_rules(&Modes::default(), &alice, "ns", None);
    assert_eq!(
        allow.status(),
        json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": false})
    );
    let deny = resolve_rules(&Modes(vec![Mode::AlwaysDeny]), &alice, "ns", None);
    assert_eq!(deny.status(), json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false}));
    let node = user("system:node:n1", &["system:nodes"]);
    let as_node = resolve_rules(&Modes(vec![Mode::Node, Mode::Rbac]), &node, "ns", Some(&policy_from(vec![])));
    assert_eq!(
        as_node.status(),
        json!({"resourceRules": [], "nonResourceRules": [], "incomplete": true,
            "evaluationError": "node authorizer does not support user rule resolution"})
    );
}
