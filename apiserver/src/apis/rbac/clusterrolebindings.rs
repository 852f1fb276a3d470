//! ClusterRoleBindings, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/clusterrolebinding`,
//! `ValidateClusterRoleBinding`): cluster-scoped, names are path segments; the roleRef names a ClusterRole of
//! the RBAC group (an empty group defaults to it) and never changes; a service account subject names its
//! namespace. An update of a missing binding creates it. Printed by `printClusterRoleBinding`. kube-apiserver
//! creates the bootstrap policy's bindings at start ([`super::bootstrap`]).

use std::sync::Arc;

use serde_json::Value;

use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::strategy::{DeleteStrategy, Strategy};

use super::{canonicalize_subjects, default_binding, rbac_name, validate_binding, validate_role_ref_unchanged};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        bootstrap: super::bootstrap::cluster_role_bindings,
        ..ResourceInfo::new(
            super::resource("ClusterRoleBinding", "clusterrolebindings"),
            "clusterrolebinding",
            Arc::new(ClusterRoleBindings),
            super::binding_printer("clusterRoleBinding"),
        )
    }
}

/// The ClusterRoleBinding strategy.
pub(crate) struct ClusterRoleBindings;

/// `ValidateClusterRoleBinding`.
fn validate_cluster_role_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, rbac_name);
    errs.extend(validate_binding(obj, false, &["ClusterRole"]));
    errs
}

impl Strategy for ClusterRoleBindings {
    fn namespace_scoped(&self) -> bool {
        false
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
        validate_cluster_role_binding(obj)
    }

    /// `ValidateClusterRoleBinding` and then `ValidateClusterRoleBindingUpdate` (which runs it again, as
    /// upstream's 1.32 strategy does) with the roleRef immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_cluster_role_binding(new);
        errs.extend(validate_cluster_role_binding(new));
        errs.extend(meta::validate_object_meta_update(new, old, false, rbac_name));
        errs.extend(validate_role_ref_unchanged(new, old));
        errs
    }
}

impl DeleteStrategy for ClusterRoleBindings {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    #[test]
    fn cluster_bindings_name_cluster_roles_and_namespaced_service_accounts() {
        let mut ok = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"},
                {"kind": "Group", "name": "system:authenticated"}]});
        ClusterRoleBindings.decode(&mut ok);
        assert_eq!(messages(ClusterRoleBindings.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a%b"},
            "subjects": [{"kind": "ServiceAccount", "name": "default"}]});
        assert_eq!(
            messages(ClusterRoleBindings.validate(&bad)),
            [
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "roleRef.name: Invalid value: \"a%b\": may not contain '%'",
                "subjects[0].namespace: Required value",
            ]
        );
    }
}
