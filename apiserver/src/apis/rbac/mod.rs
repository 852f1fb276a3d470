//! `rbac.authorization.k8s.io/v1`: roles, cluster roles and their bindings, as kube-apiserver 1.32 serves
//! them (`KK/pkg/apis/rbac/validation`, `KK/pkg/apis/rbac/v1/defaults.go`, `KK/pkg/registry/rbac/*`).
//!
//! What the four kinds share lives here: the policy rule and subject checks (`ValidatePolicyRule`,
//! `ValidateRoleBindingSubject`), the roleRef checks of both bindings, the label selector checks of an
//! aggregation rule (`metav1validation.ValidateLabelSelector`), the defaults (a binding's `roleRef.apiGroup`,
//! a subject's `apiGroup`), Go's `%#v` of the values the messages show, and the bindings' printer.
//!
//! Left out: the escalation checks of upstream's RBAC REST wrappers (`KK/pkg/registry/rbac/*/policybased`:
//! a user may only create or update a role holding rules they hold themselves, and only bind a role they
//! could grant) need the requesting user, which authentication and authorization (issue 27) bring. Until then
//! every client is treated as the privileged loopback client upstream lets through unchecked.
//! The clusterrole-aggregation controller is not run either: the bootstrap roles `admin`, `edit` and `view`
//! are created with the rules it would give them ([`bootstrap`]), and a user's aggregated cluster role keeps
//! the rules it is written with.

pub(crate) mod authorizer;
pub(crate) mod bindings;
pub(crate) mod bootstrap;
pub(crate) mod clusterrolebindings;
pub(crate) mod clusterroles;
pub(crate) mod rolebindings;
pub(crate) mod roles;

use serde_json::{Map, Value};

use crate::apis::printers::{age, age_column, column, name, name_column, Column};
use crate::apis::Printer;
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::names;
use crate::registry::resource::Resource;

/// `rbac.GroupName`.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";
const VERSION: &str = "v1";

/// A resource of the group, stored under its plural as upstream stores it (`/registry/clusterroles/...`).
fn resource(kind: &str, plural: &str) -> Resource {
    Resource {
        group: GROUP.into(),
        version: VERSION.into(),
        kind: kind.into(),
        plural: plural.into(),
        etcd_prefix: plural.into(),
    }
}

/// `ValidateRBACName`: role and binding names (and a roleRef's name) need only be path segments.
pub(crate) fn rbac_name(name: &str, is_prefix: bool) -> Vec<String> {
    names::path_segment_name(name, is_prefix)
}

/// The strings of `obj[key]`, or none when it is absent or not a list.
fn strings<'a>(obj: &'a Value, key: &str) -> Vec<&'a str> {
    obj.get(key).and_then(Value::as_array).map_or(Vec::new(), |list| list.iter().filter_map(Value::as_str).collect())
}

/// The length of the list `obj[key]` (0 when absent or null), as Go's `len` of a nil slice.
fn list_len(obj: &Value, key: &str) -> usize {
    obj.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// `obj[key]` as a string, "" when absent.
fn str_field<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Go's `%#v` of a `[]string`.
fn go_strings(values: &[&str]) -> String {
    let shown: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]string{{{}}}", shown.join(", "))
}

fn invalid_go(field: &str, go_value: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(go_value),
        detail: detail.into(),
    }
}

/// `ValidatePolicyRule`: verbs always; then either non-resource URLs (never in a namespaced role, never with
/// resources) or at least one API group and one resource.
pub(crate) fn validate_policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_len(rule, "verbs") == 0 {
        errs.push(FieldError::required(&format!("{path}.verbs"), "verbs must contain at least one value"));
    }
    let urls = strings(rule, "nonResourceURLs");
    if list_len(rule, "nonResourceURLs") > 0 {
        let field = format!("{path}.nonResourceURLs");
        if namespaced {
            errs.push(invalid_go(&field, go_strings(&urls), "namespaced rules cannot apply to non-resource URLs"));
        }
        if list_len(rule, "apiGroups") > 0 || list_len(rule, "resources") > 0 || list_len(rule, "resourceNames") > 0 {
            errs.push(invalid_go(
                &field,
                go_strings(&urls),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if list_len(rule, "apiGroups") == 0 {
        errs.push(FieldError::required(
            &format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_len(rule, "resources") == 0 {
        errs.push(FieldError::required(
            &format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// Every rule of `obj.rules`.
pub(crate) fn validate_rules(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let rules = obj.get("rules").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    rules
        .iter()
        .enumerate()
        .flat_map(|(i, rule)| validate_policy_rule(rule, namespaced, &format!("rules[{i}]")))
        .collect()
}

/// `rbac.ServiceAccountKind`, `rbac.UserKind`, `rbac.GroupKind`.
const SUBJECT_KINDS: &[&str] = &["ServiceAccount", "User", "Group"];

/// `ValidateRoleBindingSubject`: a name always; a service account's is a DNS subdomain in the core group (and,
/// bound cluster-wide, needs its namespace); users and groups belong to the RBAC group.
pub(crate) fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_field(subject, "name");
    let api_group = str_field(subject, "apiGroup");
    if name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), ""));
    }
    match str_field(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in names::name_is_dns_subdomain(name, false) {
                    errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
                }
            }
            if !api_group.is_empty() {
                errs.push(FieldError::not_supported(&format!("{path}.apiGroup"), api_group, &[""]));
            }
            if !namespaced && str_field(subject, "namespace").is_empty() {
                errs.push(FieldError::required(&format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if api_group != GROUP {
                errs.push(FieldError::not_supported(&format!("{path}.apiGroup"), api_group, &[GROUP]));
            }
        }
        other => errs.push(FieldError::not_supported(&format!("{path}.kind"), other, SUBJECT_KINDS)),
    }
    errs
}

/// The roleRef and subjects of a binding (`ValidateRoleBinding` and `ValidateClusterRoleBinding` after the
/// metadata): the RBAC group, a kind among `kinds`, a name that is a path segment, valid subjects.
pub(crate) fn validate_binding(obj: &Value, namespaced: bool, kinds: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Object(Map::new());
    let role_ref = obj.get("roleRef").filter(|r| r.is_object()).unwrap_or(&empty);
    let api_group = str_field(role_ref, "apiGroup");
    if api_group != GROUP {
        errs.push(FieldError::not_supported("roleRef.apiGroup", api_group, &[GROUP]));
    }
    let kind = str_field(role_ref, "kind");
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = str_field(role_ref, "name");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for msg in rbac_name(name, false) {
            errs.push(FieldError::invalid("roleRef.name", name, &msg));
        }
    }
    let subjects = obj.get("subjects").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, subject) in subjects.iter().enumerate() {
        errs.extend(validate_subject(subject, namespaced, &format!("subjects[{i}]")));
    }
    errs
}

/// The roleRef as the internal `rbac.RoleRef` compares and prints: group, kind, name.
fn role_ref(obj: &Value) -> (&str, &str, &str) {
    let r = obj.get("roleRef").unwrap_or(&Value::Null);
    (str_field(r, "apiGroup"), str_field(r, "kind"), str_field(r, "name"))
}

/// The update rule of both bindings: `cannot change roleRef`, with the new roleRef as Go's `%#v` of the
/// internal struct shows it.
pub(crate) fn validate_role_ref_unchanged(new: &Value, old: &Value) -> Option<FieldError> {
    let (group, kind, name) = role_ref(new);
    (role_ref(new) != role_ref(old)).then(|| {
        invalid_go(
            "roleRef",
            format!("rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}", quote(group), quote(kind), quote(name)),
            "cannot change roleRef",
        )
    })
}

/// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`: an empty roleRef
/// group is the RBAC group; a user's or group's empty subject group is the RBAC group.
pub(crate) fn default_binding(obj: &mut Value) {
    if let Some(role_ref) = obj.get_mut("roleRef").and_then(Value::as_object_mut) {
        if role_ref.get("apiGroup").and_then(Value::as_str).unwrap_or("").is_empty() {
            role_ref.insert("apiGroup".into(), Value::from(GROUP));
        }
    }
    let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) else { return };
    for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
        if !subject.get("apiGroup").and_then(Value::as_str).unwrap_or("").is_empty() {
            continue;
        }
        if matches!(subject.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
            subject.insert("apiGroup".into(), Value::from(GROUP));
        }
    }
}

/// What the protobuf round trip through etcd makes of a role's rules: an empty list comes back nil, and nil
/// `rules` (no `omitempty`) is written `null`, as upstream answers every read.
pub(crate) fn canonicalize_rules(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    if map.get("rules").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        map.insert("rules".into(), Value::Null);
    }
}

/// The same round trip for a binding: empty `subjects` come back nil, which `omitempty` leaves out.
pub(crate) fn canonicalize_subjects(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    if map.get("subjects").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        map.remove("subjects");
    }
}

/// `ValidateLabelSelector` of one aggregation selector, with `LabelSelectorAsSelector`'s refusal after it
/// (`invalid label selector.`; the shadowed selector it shows is nil, printed `"null"`).
fn validate_selector(selector: &Value, allow_invalid_values: bool, path: &str) -> Vec<FieldError> {
    let mut errs = label_selector_errors(selector, allow_invalid_values, path);
    let strict_ok =
        if allow_invalid_values { label_selector_errors(selector, false, path).is_empty() } else { errs.is_empty() };
    if !strict_ok {
        errs.push(FieldError::invalid(path, "null", "invalid label selector."));
    }
    errs
}

/// `metav1validation.ValidateLabelSelector`: match labels as labels, each expression's operator and values,
/// its key a qualified name, and (unless allowed) its values label values.
fn label_selector_errors(selector: &Value, allow_invalid_values: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        let field = format!("{path}.matchLabels");
        for (key, value) in labels {
            for msg in names::qualified_name(key) {
                errs.push(FieldError::invalid(&field, key, &msg));
            }
            let value = value.as_str().unwrap_or("");
            for msg in names::label_value(value) {
                errs.push(FieldError::invalid(&field, value, &msg));
            }
        }
    }
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, expr) in expressions.iter().enumerate() {
        let base = format!("{path}.matchExpressions[{i}]");
        let values = strings(expr, "values");
        let operator = str_field(expr, "operator");
        match operator {
            "In" | "NotIn" if list_len(expr, "values") == 0 => errs.push(FieldError::required(
                &format!("{base}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if list_len(expr, "values") > 0 => errs.push(FieldError::forbidden(
                &format!("{base}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => errs.push(FieldError::invalid(&format!("{base}.operator"), operator, "not a valid selector operator")),
        }
        let key = str_field(expr, "key");
        for msg in names::qualified_name(key) {
            errs.push(FieldError::invalid(&format!("{base}.key"), key, &msg));
        }
        if !allow_invalid_values {
            for (j, value) in values.iter().enumerate() {
                for msg in names::label_value(value) {
                    errs.push(FieldError::invalid(&format!("{base}.values[{j}]"), value, &msg));
                }
            }
        }
    }
    errs
}

/// The aggregation rule of a cluster role (`ValidateClusterRole` after its rules): when present, at least one
/// selector, each valid.
pub(crate) fn validate_aggregation_rule(obj: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let Some(rule) = obj.get("aggregationRule").filter(|r| !r.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    let selectors = rule.get("clusterRoleSelectors").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if selectors.is_empty() {
        errs.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, selector) in selectors.iter().enumerate() {
        errs.extend(validate_selector(
            selector,
            allow_invalid_values,
            &format!("aggregationRule.clusterRoleSelectors[{i}]"),
        ));
    }
    errs
}

/// `hasInvalidLabelValueInLabelSelector` of the cluster role strategy: whether a stored role's selectors fail
/// the strict check, in which case its updates may keep invalid label values.
pub(crate) fn has_invalid_selector(obj: &Value) -> bool {
    let Some(rule) = obj.get("aggregationRule").filter(|r| !r.is_null()) else { return false };
    let selectors = rule.get("clusterRoleSelectors").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    selectors.iter().any(|s| !label_selector_errors(s, false, "").is_empty())
}

/// `rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]`, which upstream's printer takes its Role column's
/// description from (the v1beta1 text, without v1's "This field is immutable.").
const ROLE_BINDING_ROLE_REF: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the \
global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";
/// `rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]`.
const CLUSTER_ROLE_BINDING_ROLE_REF: &str = "RoleRef can only reference a ClusterRole in the global namespace. If \
the RoleRef cannot be resolved, the Authorizer must return an error.";

/// `rbac.SubjectsStrings`: users, groups and service accounts (`namespace/name`); other kinds are dropped.
fn subjects_strings(obj: &Value) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    let subjects = obj.get("subjects").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for subject in subjects {
        let name = str_field(subject, "name").to_string();
        match str_field(subject, "kind") {
            "ServiceAccount" => sas.push(format!("{}/{name}", str_field(subject, "namespace"))),
            "User" => users.push(name),
            "Group" => groups.push(name),
            _ => {}
        }
    }
    (users, groups, sas)
}

/// `printRoleBinding` and `printClusterRoleBinding`: name, `Kind/name` of the role, age, and (wide) the users,
/// groups and service accounts bound; `what` is how the descriptions name the kind (`roleBinding`).
fn binding_printer(what: &'static str) -> Printer {
    let (role_doc, users, groups, sas) = match what {
        "roleBinding" => (
            ROLE_BINDING_ROLE_REF,
            "Users in the roleBinding",
            "Groups in the roleBinding",
            "ServiceAccounts in the roleBinding",
        ),
        _ => (
            CLUSTER_ROLE_BINDING_ROLE_REF,
            "Users in the clusterRoleBinding",
            "Groups in the clusterRoleBinding",
            "ServiceAccounts in the clusterRoleBinding",
        ),
    };
    let columns: Vec<Column> = vec![
        name_column(),
        column("Role", "string", role_doc, 0),
        age_column(),
        column("Users", "string", users, 1),
        column("Groups", "string", groups, 1),
        column("ServiceAccounts", "string", sas, 1),
    ];
    Printer {
        columns,
        cells: |obj, now, _| {
            let (_, kind, role) = role_ref(obj);
            let (users, groups, sas) = subjects_strings(obj);
            vec![
                name(obj),
                Value::from(format!("{kind}/{role}")),
                age(obj, now),
                Value::from(users.join(", ")),
                Value::from(groups.join(", ")),
                Value::from(sas.join(", ")),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    #[test]
    fn policy_rules_are_checked_as_upstream_checks_them() {
        let cases: &[(Value, bool, &[&str])] = &[
            (json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}), true, &[]),
            (json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}), false, &[]),
            (
                json!({}),
                false,
                &[
                    "r.verbs: Required value: verbs must contain at least one value",
                    "r.apiGroups: Required value: resource rules must supply at least one api group",
                    "r.resources: Required value: resource rules must supply at least one resource",
                ],
            ),
            (
                json!({"verbs": ["get"], "nonResourceURLs": ["/a", "/b"], "resources": ["pods"]}),
                true,
                &[
                    "r.nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: namespaced rules cannot apply to non-resource URLs",
                    "r.nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: rules cannot apply to both regular resources and non-resource URLs",
                ],
            ),
            // Resource names with several resources are allowed since upstream dropped that check.
            (json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "secrets"], "resourceNames": ["a"]}), true, &[]),
        ];
        for (rule, namespaced, want) in cases {
            assert_eq!(messages(validate_policy_rule(rule, *namespaced, "r")), *want, "{rule}");
        }
    }

    #[test]
    fn subjects_are_checked_by_kind() {
        let cases: &[(Value, bool, &[&str])] = &[
            (json!({"kind": "User", "apiGroup": GROUP, "name": "jane"}), true, &[]),
            (json!({"kind": "ServiceAccount", "name": "default"}), true, &[]),
            (
                json!({"kind": "ServiceAccount", "name": "default"}),
                false,
                &["s.namespace: Required value"],
            ),
            (
                json!({"kind": "ServiceAccount", "name": "Bad", "apiGroup": GROUP, "namespace": "x"}),
                true,
                &[
                    "s.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "s.apiGroup: Unsupported value: \"rbac.authorization.k8s.io\": supported values: \"\"",
                ],
            ),
            (
                json!({"kind": "Group", "name": ""}),
                true,
                &[
                    "s.name: Required value",
                    "s.apiGroup: Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"",
                ],
            ),
            (
                json!({"kind": "Robot", "name": "r2"}),
                true,
                &["s.kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""],
            ),
        ];
        for (subject, namespaced, want) in cases {
            assert_eq!(messages(validate_subject(subject, *namespaced, "s")), *want, "{subject}");
        }
    }

    #[test]
    fn bindings_default_their_groups() {
        let mut b = json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [
            {"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "n"}, {"kind": "User", "name": "v", "apiGroup": "other"}]});
        default_binding(&mut b);
        assert_eq!(b["roleRef"]["apiGroup"], GROUP);
        assert_eq!(b["subjects"][0]["apiGroup"], GROUP);
        assert_eq!(b["subjects"][1]["apiGroup"], GROUP);
        assert!(b["subjects"][2].get("apiGroup").is_none());
        assert_eq!(b["subjects"][3]["apiGroup"], "other");
    }

    #[test]
    fn empty_lists_are_stored_as_the_protobuf_round_trip_leaves_them() {
        let mut role = json!({"rules": []});
        canonicalize_rules(&mut role);
        assert_eq!(role, json!({"rules": null}));
        let mut role = json!({});
        canonicalize_rules(&mut role);
        assert_eq!(role, json!({"rules": null}));
        let mut binding = json!({"subjects": []});
        canonicalize_subjects(&mut binding);
        assert_eq!(binding, json!({}));
    }

    #[test]
    fn aggregation_selectors_are_label_selectors() {
        let role = |rule: Value| json!({"aggregationRule": rule});
        assert!(validate_aggregation_rule(&role(json!(null)), false).is_empty());
        assert_eq!(
            messages(validate_aggregation_rule(&role(json!({})), false)),
            ["aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"]
        );
        let bad = role(json!({"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Near", "values": ["x y"]}]}]}));
        assert_eq!(
            messages(validate_aggregation_rule(&bad, false)),
            [
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[1].operator: Invalid value: \"Near\": not a valid selector operator",
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[1].values[0]: Invalid value: \"x y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
            ]
        );
        assert!(has_invalid_selector(&bad));
        let allowed = role(
            json!({"clusterRoleSelectors": [{"matchExpressions": [{"key": "b", "operator": "In", "values": ["x y"]}]}]}),
        );
        assert_eq!(
            messages(validate_aggregation_rule(&allowed, true)),
            ["aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector."]
        );
    }

    #[test]
    fn a_changed_role_ref_prints_as_the_internal_struct() {
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "a"}});
        let new = json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "b"}});
        assert!(validate_role_ref_unchanged(&old, &old).is_none());
        assert_eq!(
            validate_role_ref_unchanged(&new, &old).unwrap().to_string(),
            "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"b\"}: cannot change roleRef"
        );
    }

    #[test]
    fn the_binding_printer_shows_the_role_and_the_subjects() {
        let b = json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u1"}, {"kind": "User", "name": "u2"}, {"kind": "Group", "name": "g"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}, {"kind": "Robot", "name": "r"}]});
        let printer = binding_printer("roleBinding");
        let names: Vec<&str> = printer.columns.iter().map(|c| c.name.as_ref()).collect();
        assert_eq!(names, ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]);
        let priorities: Vec<i32> = printer.columns.iter().map(|c| c.priority).collect();
        assert_eq!(priorities, [0, 0, 0, 1, 1, 1]);
        assert_eq!(
            (printer.cells)(&b, 0, &[]),
            vec![
                json!("b"),
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!("u1, u2"),
                json!("g"),
                json!("ns/sa")
            ]
        );
    }
}
