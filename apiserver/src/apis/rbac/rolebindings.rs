//! RoleBindings, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/rolebinding`, `ValidateRoleBinding`):
//! namespaced, names are path segments; the roleRef names a Role or a ClusterRole of the RBAC group (an empty
//! group defaults to it) and never changes; users and groups default to the RBAC group. An update of a missing
//! binding creates it. Printed by `printRoleBinding`.

use std::sync::Arc;

use serde_json::Value;

use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::strategy::{DeleteStrategy, Strategy};

use super::{canonicalize_subjects, default_binding, rbac_name, validate_binding, validate_role_ref_unchanged};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(
        super::resource("RoleBinding", "rolebindings"),
        "rolebinding",
        Arc::new(RoleBindings),
        super::binding_printer("roleBinding"),
    )
}

/// The RoleBinding strategy.
struct RoleBindings;

/// `ValidateRoleBinding`.
fn validate_role_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, true, rbac_name);
    errs.extend(validate_binding(obj, true, &["Role", "ClusterRole"]));
    errs
}

impl Strategy for RoleBindings {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// The v1 defaults apply as the request decodes, as upstream's codec applies them: the managed fields
    /// count the defaulted groups as the writer's.
    fn decode(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize_subjects(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_role_binding(obj)
    }

    /// `ValidateRoleBinding` and then `ValidateRoleBindingUpdate` (which runs it again, as upstream's 1.32
    /// strategy does) with the roleRef immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_role_binding(new);
        errs.extend(validate_role_binding(new));
        errs.extend(meta::validate_object_meta_update(new, old, true, rbac_name));
        errs.extend(validate_role_ref_unchanged(new, old));
        errs
    }
}

impl DeleteStrategy for RoleBindings {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    fn binding(kind: &str, name: &str) -> Value {
        json!({"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "1"},
            "roleRef": {"kind": kind, "name": name}, "subjects": [{"kind": "User", "name": "jane"}]})
    }

    #[test]
    fn bindings_are_defaulted_and_validated() {
        let mut ok = binding("Role", "reader");
        RoleBindings.decode(&mut ok);
        assert_eq!(ok["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(ok["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(messages(RoleBindings.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": "example.com", "kind": "Pod", "name": ""},
            "subjects": [{"kind": "ServiceAccount", "name": "default"}]});
        assert_eq!(
            messages(RoleBindings.validate(&bad)),
            [
                "roleRef.apiGroup: Unsupported value: \"example.com\": supported values: \"rbac.authorization.k8s.io\"",
                "roleRef.kind: Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"",
                "roleRef.name: Required value",
            ]
        );
    }

    #[test]
    fn the_role_ref_never_changes() {
        let mut old = binding("Role", "reader");
        RoleBindings.decode(&mut old);
        let mut new = binding("ClusterRole", "reader");
        RoleBindings.decode(&mut new);
        assert_eq!(
            messages(RoleBindings.validate_update(&new, &old)),
            ["roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"reader\"}: cannot change roleRef"]
        );
        let mut same = binding("Role", "reader");
        RoleBindings.decode(&mut same);
        assert_eq!(messages(RoleBindings.validate_update(&same, &old)), Vec::<String>::new());
    }
}
