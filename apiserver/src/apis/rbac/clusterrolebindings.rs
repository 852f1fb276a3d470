//! ClusterRoleBindings, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/clusterrolebinding`,
//! `ValidateClusterRoleBinding`): cluster-scoped, names are path segments; the roleRef names a ClusterRole of
//! the RBAC group (an empty group defaults to it) and never changes; a service account subject names its
//! namespace. An update of a missing binding creates it. Printed by `printClusterRoleBinding`. kube-apiserver
//! creates the bootstrap policy's bindings at start ([`super::bootstrap`]).

use std::sync::Arc;

use crate::apis::ResourceInfo;

use super::bindings::Bindings;

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        bootstrap: super::bootstrap::cluster_role_bindings,
        ..ResourceInfo::new(
            super::resource("ClusterRoleBinding", "clusterrolebindings"),
            "clusterrolebinding",
            Arc::new(CLUSTER_ROLE_BINDINGS),
            super::binding_printer("clusterRoleBinding"),
        )
    }
}

/// The ClusterRoleBinding strategy.
pub(crate) const CLUSTER_ROLE_BINDINGS: Bindings = Bindings { namespaced: false, role_ref_kinds: &["ClusterRole"] };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use crate::registry::strategy::Strategy;
    use serde_json::json;

    #[test]
    fn cluster_bindings_name_cluster_roles_and_namespaced_service_accounts() {
        let mut ok = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"},
                {"kind": "Group", "name": "system:authenticated"}]});
        CLUSTER_ROLE_BINDINGS.decode(&mut ok);
        assert_eq!(messages(CLUSTER_ROLE_BINDINGS.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a%b"},
            "subjects": [{"kind": "ServiceAccount", "name": "default"}]});
        assert_eq!(
            messages(CLUSTER_ROLE_BINDINGS.validate(&bad)),
            [
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "roleRef.name: Invalid value: \"a%b\": may not contain '%'",
                "subjects[0].namespace: Required value",
            ]
        );
    }
}
