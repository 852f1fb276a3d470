//! ClusterRoles, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/clusterrole`, `ValidateClusterRole`):
//! cluster-scoped, names are path segments, every rule valid, an aggregation rule (when present) with at least
//! one valid label selector. An update may keep selector label values that were already invalid in the stored
//! role (`hasInvalidLabelValueInLabelSelector`). An update of a missing role creates it. Printed by kube's
//! default table. kube-apiserver creates the bootstrap policy's cluster roles at start ([`super::bootstrap`]).

use std::sync::Arc;

use serde_json::Value;

use crate::apis::printers::default_printer;
use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::strategy::{DeleteStrategy, Strategy};

use super::{canonicalize_rules, has_invalid_selector, rbac_name, validate_aggregation_rule, validate_rules};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        bootstrap: super::bootstrap::cluster_roles,
        ..ResourceInfo::new(
            super::resource("ClusterRole", "clusterroles"),
            "clusterrole",
            Arc::new(ClusterRoles),
            default_printer(),
        )
    }
}

/// The ClusterRole strategy.
pub(crate) struct ClusterRoles;

/// `ValidateClusterRole` with `AllowInvalidLabelValueInSelector`.
fn validate_cluster_role(obj: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, rbac_name);
    errs.extend(validate_rules(obj, false));
    errs.extend(validate_aggregation_rule(obj, allow_invalid_values));
    errs
}

impl Strategy for ClusterRoles {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize_rules(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_cluster_role(obj, false)
    }

    /// `ValidateClusterRole` and then `ValidateClusterRoleUpdate`, which runs it again (as upstream's 1.32
    /// strategy does: each error is twice in the causes).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let allow = has_invalid_selector(old);
        let mut errs = validate_cluster_role(new, allow);
        errs.extend(validate_cluster_role(new, allow));
        errs.extend(meta::validate_object_meta_update(new, old, false, rbac_name));
        errs
    }
}

impl DeleteStrategy for ClusterRoles {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    #[test]
    fn cluster_roles_may_name_urls_and_aggregate() {
        let ok = json!({"metadata": {"name": "system:probe"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate-to-probe": "true"}}]}});
        assert_eq!(messages(ClusterRoles.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "x", "namespace": "ns"}, "rules": [{"verbs": ["get"]}],
            "aggregationRule": {"clusterRoleSelectors": []}});
        assert_eq!(
            messages(ClusterRoles.validate(&bad)),
            [
                "metadata.namespace: Forbidden: not allowed on this type",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
                "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
            ]
        );
    }

    #[test]
    fn an_update_keeps_selector_values_that_were_already_invalid() {
        let role = |value: &str| {
            json!({"metadata": {"name": "r", "resourceVersion": "1"}, "aggregationRule": {"clusterRoleSelectors": [
                {"matchExpressions": [{"key": "k", "operator": "In", "values": [value]}]}]}})
        };
        let valid = role("ok");
        let invalid = role("not ok");
        let value_error =
            "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]: Invalid value: \"not ok\"";
        let from_valid = messages(ClusterRoles.validate_update(&invalid, &valid));
        assert!(from_valid.iter().any(|m| m.starts_with(value_error)), "{from_valid:?}");
        let from_invalid = messages(ClusterRoles.validate_update(&invalid, &invalid));
        assert!(!from_invalid.iter().any(|m| m.starts_with(value_error)), "{from_invalid:?}");
    }
}
