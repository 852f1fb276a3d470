//! Tests of the access reviews: upstream's validation, then the authorizer's answer under `AlwaysAllow`,
//! `AlwaysDeny` and RBAC over the bootstrap policy.

use serde_json::json;

use super::*;
use crate::apis::rbac::authorizer::tests::{binding, registry, role, user, with_bootstrap};
use crate::registry::authorizer::{Mode, Modes};
use crate::registry::rest::Registry;
use crate::registry::tokens::ServiceAccountTokens;

/// The answer of a review kind to `obj`, created in `namespace` by `requester`.
fn run(
    info: ResourceInfo,
    namespace: &str,
    requester: &UserInfo,
    modes: &Modes,
    stores: &Registry,
    obj: Value,
) -> Result<Value, String> {
    let tokens = ServiceAccountTokens::from_seed(0);
    let ctx = ReviewContext {
        namespace,
        user: requester,
        now_unix_s: 0,
        tokens: &tokens,
        stores,
        dry_run: &[],
        authorization: modes,
        static_tokens: crate::registry::token_file::TokenFile::empty(),
    };
    let review = info.review.expect("an access review is a review kind");
    futures::executor::block_on(review.review(ctx, obj)).map_err(|e| e.to_string())
}

/// A registry with the bootstrap policy, alice reading pods in `ns`, and a service account there that may
/// list deployments.
fn stores() -> Registry {
    registry(with_bootstrap(vec![
        role("Role", "ns", "pod-reader", json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])),
        binding("RoleBinding", "ns", "alice-reads", "Role", "pod-reader", json!([{"kind": "User", "name": "alice"}])),
        role(
            "Role",
            "ns",
            "deployer",
            json!([{"verbs": ["list"], "apiGroups": ["apps"], "resources": ["deployments"]}]),
        ),
        binding(
            "RoleBinding",
            "ns",
            "sa-deploys",
            "Role",
            "deployer",
            json!([{"kind": "ServiceAccount", "name": "sa"}]),
        ),
    ]))
}

fn rbac() -> Modes {
    Modes(vec![Mode::Node, Mode::Rbac])
}

#[test]
fn subject_access_reviews_are_checked_then_allowed_under_always_allow() {
    let anonymous = UserInfo::anonymous();
    let none = Registry::new();
    let cases: Vec<(Value, Result<Value, &str>)> = vec![
        (
            json!({"spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}}),
            Ok(
                json!({"metadata": {"creationTimestamp": null}, "spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}, "status": {"allowed": true}}),
            ),
        ),
        (
            json!({"spec": {"groups": ["devs"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}),
            Ok(
                json!({"metadata": {"creationTimestamp": null}, "spec": {"groups": ["devs"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}, "status": {"allowed": true}}),
            ),
        ),
        (
            json!({"spec": {}}),
            Err(
                r#"SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]"#,
            ),
        ),
        (
            json!({"spec": {"user": "a", "resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}}),
            Err(
                r#"SubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes"#,
            ),
        ),
    ];
    for (obj, want) in cases {
        let got = run(subjectaccessreviews::info(), "", &anonymous, &Modes::default(), &none, obj.clone());
        assert_eq!(got, want.map_err(str::to_string), "{obj}");
    }
    let named = json!({"metadata": {"name": "x"}, "spec": {"user": "a", "resourceAttributes": {}}});
    let message = run(subjectaccessreviews::info(), "", &anonymous, &Modes::default(), &none, named).unwrap_err();
    assert!(
        message.starts_with(r#"SubjectAccessReview.authorization.k8s.io "" is invalid: metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"""#),
        "{message}"
    );
    assert!(message.ends_with(": must be empty"), "{message}");
}

#[test]
fn subject_access_reviews_ask_the_chain_about_the_specs_user() {
    let requester = user("admin", &["system:masters"]);
    let stores = stores();
    let status = |modes: &Modes, spec: Value| {
        run(subjectaccessreviews::info(), "", &requester, modes, &stores, json!({"spec": spec}))
            .map(|a| a["status"].clone())
    };
    let get_pods = |ns: &str| json!({"namespace": ns, "verb": "get", "resource": "pods"});
    let cases: Vec<(Modes, Value, Value)> = vec![
        (
            rbac(),
            json!({"user": "alice", "resourceAttributes": get_pods("ns")}),
            json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "alice-reads/ns" of Role "pod-reader" to User "alice""#}),
        ),
        (rbac(), json!({"user": "alice", "resourceAttributes": get_pods("other")}), json!({"allowed": false})),
        // The requester's own rights do not matter; the spec's groups do.
        (
            rbac(),
            json!({"user": "bob", "groups": ["system:masters"], "uid": "1", "extra": {"k": ["v"]}, "resourceAttributes": get_pods("other")}),
            json!({"allowed": true}),
        ),
        (
            rbac(),
            json!({"groups": ["system:authenticated"], "nonResourceAttributes": {"path": "/apis/apps", "verb": "get"}}),
            json!({"allowed": true, "reason": r#"RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#}),
        ),
        (
            rbac(),
            json!({"user": "system:serviceaccount:ns:sa", "resourceAttributes": {"namespace": "ns", "verb": "list", "group": "apps", "resource": "deployments"}}),
            json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "sa-deploys/ns" of Role "deployer" to ServiceAccount "sa/ns""#}),
        ),
        (
            Modes(vec![Mode::AlwaysDeny]),
            json!({"user": "alice", "resourceAttributes": get_pods("ns")}),
            json!({"allowed": false, "reason": "Everything is forbidden."}),
        ),
        (Modes::default(), json!({"user": "alice", "resourceAttributes": get_pods("other")}), json!({"allowed": true})),
    ];
    for (modes, spec, want) in cases {
        assert_eq!(status(&modes, spec.clone()), Ok(want), "{modes:?} {spec}");
    }
}

#[test]
fn local_reviews_are_confined_to_their_namespace() {
    let anonymous = UserInfo::anonymous();
    let none = Registry::new();
    let local =
        |ns: &str, obj: Value| run(localsubjectaccessreviews::info(), ns, &anonymous, &Modes::default(), &none, obj);
    let ok = json!({"metadata": {"namespace": "ns"}, "spec": {"user": "a", "resourceAttributes": {"namespace": "ns", "verb": "get", "resource": "pods"}}});
    assert_eq!(local("ns", ok.clone()).unwrap()["status"], json!({"allowed": true}));
    assert_eq!(local("other", ok).unwrap_err(), "spec.resourceAttributes.namespace must match namespace: other");
    let mismatch =
        json!({"metadata": {"namespace": "ns"}, "spec": {"user": "a", "resourceAttributes": {"namespace": "x"}}});
    assert_eq!(
        local("ns", mismatch).unwrap_err(),
        r#"LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "x": must match metadata.namespace"#
    );
    let non_resource = json!({"metadata": {"namespace": "ns"}, "spec": {"user": "a", "nonResourceAttributes": {"path": "/x", "verb": "get"}}});
    assert_eq!(
        local("ns", non_resource).unwrap_err(),
        r#"LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: disallowed on this kind of request"#
    );

    // Under RBAC the answer is about the namespace of the review.
    let stores = stores();
    let ask = |ns: &str, who: &str| {
        let obj = json!({"metadata": {"namespace": ns}, "spec": {"user": who, "resourceAttributes": {"namespace": ns, "verb": "list", "resource": "pods"}}});
        run(localsubjectaccessreviews::info(), ns, &anonymous, &rbac(), &stores, obj).map(|a| a["status"].clone())
    };
    assert_eq!(
        ask("ns", "alice"),
        Ok(
            json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "alice-reads/ns" of Role "pod-reader" to User "alice""#})
        )
    );
    assert_eq!(ask("other", "alice"), Ok(json!({"allowed": false})));
}

#[test]
fn self_reviews_ask_about_the_requesting_user() {
    let none = Registry::new();
    let anonymous = UserInfo::anonymous();
    let ok = json!({"spec": {"resourceAttributes": {"namespace": "ns", "verb": "create", "resource": "pods"}}});
    let answer = run(selfsubjectaccessreviews::info(), "", &anonymous, &Modes::default(), &none, ok);
    assert_eq!(answer.unwrap()["status"], json!({"allowed": true}));
    assert_eq!(
        run(selfsubjectaccessreviews::info(), "", &anonymous, &Modes::default(), &none, json!({"spec": {}}))
            .unwrap_err(),
        r#"SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#
    );

    let stores = stores();
    let sa = UserInfo::service_account("ns", "sa", "u", "");
    let ask = |who: &UserInfo, spec: Value| {
        run(selfsubjectaccessreviews::info(), "", who, &rbac(), &stores, json!({"spec": spec}))
            .map(|a| a["status"].clone())
    };
    assert_eq!(
        ask(
            &sa,
            json!({"resourceAttributes": {"namespace": "ns", "verb": "list", "group": "apps", "resource": "deployments"}})
        ),
        Ok(
            json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "sa-deploys/ns" of Role "deployer" to ServiceAccount "sa/ns""#})
        )
    );
    assert_eq!(
        ask(
            &sa,
            json!({"resourceAttributes": {"namespace": "ns", "verb": "delete", "group": "apps", "resource": "deployments"}})
        ),
        Ok(json!({"allowed": false}))
    );
    assert_eq!(
        ask(&anonymous, json!({"nonResourceAttributes": {"path": "/api", "verb": "get"}})),
        Ok(json!({"allowed": false}))
    );
    assert_eq!(
        ask(&anonymous, json!({"nonResourceAttributes": {"path": "/readyz", "verb": "get"}})),
        Ok(
            json!({"allowed": true, "reason": r#"RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated""#})
        )
    );
}

#[test]
fn rules_reviews_list_what_the_user_may_do_in_the_namespace() {
    let none = Registry::new();
    let alice = user("alice", &["system:authenticated"]);
    let review = |modes: &Modes, stores: &Registry, obj: Value| {
        run(selfsubjectrulesreviews::info(), "", &alice, modes, stores, obj)
    };
    assert_eq!(review(&Modes::default(), &none, json!({"spec": {}})), Err("no namespace on request".to_string()));
    assert_eq!(
        review(&Modes::default(), &none, json!({"metadata": {"name": "x"}, "spec": {"namespace": "default"}})),
        Ok(json!({
            "kind": "SelfSubjectRulesReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": {},
            "status": {
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            },
        }))
    );
    let stores = stores();
    let status = review(&rbac(), &stores, json!({"spec": {"namespace": "ns"}})).unwrap()["status"].clone();
    assert_eq!(
        status["resourceRules"],
        json!([
            {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
        ])
    );
    assert_eq!(status["nonResourceRules"].as_array().map(Vec::len), Some(2));
    assert_eq!(status["incomplete"], json!(false));
    assert_eq!(status.get("evaluationError"), None);
}
