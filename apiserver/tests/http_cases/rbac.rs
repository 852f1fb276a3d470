//! `rbac.authorization.k8s.io/v1` over HTTP: the bootstrap policy kube-apiserver creates at start, and what the
//! four strategies default, refuse and print, with kube-apiserver 1.32's codes and texts. Cluster-scoped
//! objects are named after the case's namespace so that they do not collide with other cases'.

use serde_json::json;

use super::{case, delete, get, patch, post, put, Case};

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "rbac: the bootstrap policy exists at start, labelled, annotated and aggregated",
            vec![
                get(&format!("{RBAC}/clusterroles/cluster-admin"))
                    .field("/metadata/labels/kubernetes.io~1bootstrapping", json!("rbac-defaults"))
                    .field("/metadata/annotations/rbac.authorization.kubernetes.io~1autoupdate", json!("true"))
                    .field("/rules/0", json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}))
                    .field("/rules/1", json!({"nonResourceURLs": ["*"], "verbs": ["*"]})),
                get(&format!("{RBAC}/clusterroles/admin"))
                    .field(
                        "/aggregationRule",
                        json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]}),
                    )
                    .contains(r#""resources":["rolebindings","roles"]"#)
                    .contains(r#""resources":["pods/attach","pods/exec","pods/portforward","pods/proxy","secrets","services/proxy"]"#),
                get(&format!("{RBAC}/clusterroles/view"))
                    .field("/metadata/labels/rbac.authorization.k8s.io~1aggregate-to-edit", json!("true"))
                    .field("/rules/0/resources/0", json!("configmaps")),
                get(&format!("{RBAC}/clusterroles/system:aggregate-to-view"))
                    .field("/metadata/labels/rbac.authorization.k8s.io~1aggregate-to-view", json!("true")),
                get(&format!("{RBAC}/clusterroles/system:public-info-viewer")).field(
                    "/rules",
                    json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
                ),
                get(&format!("{RBAC}/clusterrolebindings/system:public-info-viewer"))
                    .field("/roleRef", json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:public-info-viewer"}))
                    .field("/subjects/1", json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"})),
                get(&format!("{RBAC}/clusterrolebindings/cluster-admin"))
                    .field("/subjects", json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}])),
                get(&format!("{RBAC}/clusterrolebindings/system:discovery"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Role"))
                    .field("/columnDefinitions/3/priority", json!(1))
                    .field("/rows/0/cells/1", json!("ClusterRole/system:discovery"))
                    .field("/rows/0/cells/4", json!("system:authenticated")),
            ],
        ),
        case(
            "rbac: a role's rules are checked; an update of a missing role creates it; roles print their creation time",
            vec![
                post(
                    &format!("{RBAC}/namespaces/{{ns}}/roles"),
                    r#"{"metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]}"#,
                )
                .field("/kind", json!("Role"))
                .field("/metadata/namespace", json!("{ns}")),
                post(
                    &format!("{RBAC}/namespaces/{{ns}}/roles"),
                    r#"{"metadata":{"name":"urls"},"rules":[{"nonResourceURLs":["/healthz"],"verbs":["get"]},{"apiGroups":[""]}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Role.rbac.authorization.k8s.io "urls" is invalid: [rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs, rules[1].verbs: Required value: verbs must contain at least one value, rules[1].resources: Required value: resource rules must supply at least one resource]"#,
                ),
                put(
                    &format!("{RBAC}/namespaces/{{ns}}/roles/made-by-put"),
                    r#"{"metadata":{"name":"made-by-put"},"rules":[]}"#,
                )
                .code(201),
                put(
                    &format!("{RBAC}/namespaces/{{ns}}/roles/pod-reader"),
                    r#"{"metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"]}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Role.rbac.authorization.k8s.io "pod-reader" is invalid: rules[0].verbs: Required value: verbs must contain at least one value"#,
                )
                // ValidateRole runs twice on an update in 1.32: the cause is listed twice.
                .field("/details/causes/1/field", json!("rules[0].verbs")),
                get(&format!("{RBAC}/namespaces/{{ns}}/roles/pod-reader"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Created At"))
                    .field("/columnDefinitions/1/type", json!("date")),
                delete(&format!("{RBAC}/namespaces/{{ns}}/roles/made-by-put")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "rbac: bindings default their groups, check their subjects and never change their roleRef",
            vec![
                post(
                    &format!("{RBAC}/namespaces/{{ns}}/rolebindings"),
                    r#"{"metadata":{"name":"readers"},"roleRef":{"kind":"Role","name":"pod-reader"},"subjects":[{"kind":"User","name":"jane"},{"kind":"Group","name":"devs"},{"kind":"ServiceAccount","name":"default","namespace":"{ns}"}]}"#,
                )
                .field("/roleRef/apiGroup", json!("rbac.authorization.k8s.io"))
                .field("/subjects/0/apiGroup", json!("rbac.authorization.k8s.io"))
                .field("/subjects/1/apiGroup", json!("rbac.authorization.k8s.io"))
                .field("/subjects/2/apiGroup", json!(null)),
                get(&format!("{RBAC}/namespaces/{{ns}}/rolebindings/readers"))
                    .header("Accept", TABLE)
                    .field("/rows/0/cells/1", json!("Role/pod-reader"))
                    .field("/rows/0/cells/3", json!("jane"))
                    .field("/rows/0/cells/4", json!("devs"))
                    .field("/rows/0/cells/5", json!("{ns}/default")),
                patch(
                    &format!("{RBAC}/namespaces/{{ns}}/rolebindings/readers"),
                    "application/merge-patch+json",
                    r#"{"roleRef":{"kind":"ClusterRole","name":"view"}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef"#,
                ),
                patch(
                    &format!("{RBAC}/namespaces/{{ns}}/rolebindings/readers"),
                    "application/merge-patch+json",
                    r#"{"subjects":[{"kind":"User","name":"joe"}]}"#,
                )
                .field("/subjects", json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "joe"}])),
                post(
                    &format!("{RBAC}/namespaces/{{ns}}/rolebindings"),
                    r#"{"metadata":{"name":"bad"},"roleRef":{"apiGroup":"example.com","kind":"Pod","name":"x"},"subjects":[{"kind":"Robot","name":"r2"},{"kind":"User","name":"u","apiGroup":"example.com"}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"RoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole", subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group", subjects[1].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"]"#,
                ),
                post(
                    &format!("{RBAC}/clusterrolebindings"),
                    r#"{"metadata":{"name":"{ns}-sa"},"roleRef":{"kind":"Role","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"default"}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ClusterRoleBinding.rbac.authorization.k8s.io "{ns}-sa" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]"#,
                ),
                post(
                    &format!("{RBAC}/clusterrolebindings"),
                    r#"{"metadata":{"name":"{ns}-viewers"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"default","namespace":"{ns}"}]}"#,
                )
                .field("/roleRef/apiGroup", json!("rbac.authorization.k8s.io")),
                delete(&format!("{RBAC}/clusterrolebindings/{{ns}}-viewers")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "rbac: a cluster role's aggregation rule needs a valid selector",
            vec![
                post(
                    &format!("{RBAC}/clusterroles"),
                    r#"{"metadata":{"name":"{ns}-empty"},"aggregationRule":{"clusterRoleSelectors":[]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ClusterRole.rbac.authorization.k8s.io "{ns}-empty" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"#,
                ),
                post(
                    &format!("{RBAC}/clusterroles"),
                    r#"{"metadata":{"name":"{ns}-bad"},"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"k","operator":"Near"}]}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ClusterRole.rbac.authorization.k8s.io "{ns}-bad" is invalid: [aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator, aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.]"#,
                ),
                post(
                    &format!("{RBAC}/clusterroles"),
                    r#"{"metadata":{"name":"{ns}-monitoring"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"example.com/aggregate-to-monitoring":"true"}}]},"rules":[{"nonResourceURLs":["/metrics"],"verbs":["get"]}]}"#,
                )
                .field("/rules/0/nonResourceURLs", json!(["/metrics"])),
                delete(&format!("{RBAC}/clusterroles/{{ns}}-monitoring")).field("/kind", json!("Status")),
            ],
        ),
    ]
}
