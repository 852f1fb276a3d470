//! RoleBindings, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/rolebinding`, `ValidateRoleBinding`):
//! namespaced, names are path segments; the roleRef names a Role or a ClusterRole of the RBAC group (an empty
//! group defaults to it) and never changes; users and groups default to the RBAC group. An update of a missing
//! binding creates it. Printed by `printRoleBinding`.

use std::sync::Arc;

use crate::apis::ResourceInfo;

use super::bindings::Bindings;

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(
        super::resource("RoleBinding", "rolebindings"),
        "rolebinding",
        Arc::new(ROLE_BINDINGS),
        super::binding_printer("roleBinding"),
    )
}

/// The RoleBinding strategy.
pub(crate) const ROLE_BINDINGS: Bindings = Bindings { namespaced: true, role_ref_kinds: &["Role", "ClusterRole"] };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use crate::registry::strategy::Strategy;
    use serde_json::json;
    use serde_json::Value;

    fn binding(kind: &str, name: &str) -> Value {
        json!({"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "1"},
            "roleRef": {"kind": kind, "name": name}, "subjects": [{"kind": "User", "name": "jane"}]})
    }

    #[test]
    fn bindings_are_defaulted_and_validated() {
        let mut ok = binding("Role", "reader");
        ROLE_BINDINGS.decode(&mut ok);
        assert_eq!(ok["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(ok["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(messages(ROLE_BINDINGS.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": "example.com", "kind": "Pod", "name": ""},
            "subjects": [{"kind": "ServiceAccount", "name": "default"}]});
        assert_eq!(
            messages(ROLE_BINDINGS.validate(&bad)),
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
        ROLE_BINDINGS.decode(&mut old);
        let mut new = binding("ClusterRole", "reader");
        ROLE_BINDINGS.decode(&mut new);
        assert_eq!(
            messages(ROLE_BINDINGS.validate_update(&new, &old)),
            ["roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"reader\"}: cannot change roleRef"]
        );
        let mut same = binding("Role", "reader");
        ROLE_BINDINGS.decode(&mut same);
        assert_eq!(messages(ROLE_BINDINGS.validate_update(&same, &old)), Vec::<String>::new());
    }
}
