//! Roles, `rbac.authorization.k8s.io/v1` (`KK/pkg/registry/rbac/role`, `ValidateRole`): namespaced, names
//! are path segments, every rule valid and none about non-resource URLs. An update of a missing role creates
//! it. Printed by kube's default table (name, creation time): upstream has no Role printer.

use std::sync::Arc;

use serde_json::Value;

use crate::apis::printers::default_printer;
use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::strategy::{DeleteStrategy, Strategy};

use super::{canonicalize_rules, rbac_name, validate_rules};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(super::resource("Role", "roles"), "role", Arc::new(Roles), default_printer())
}

/// The Role strategy.
struct Roles;

/// `ValidateRole`.
fn validate_role(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, true, rbac_name);
    errs.extend(validate_rules(obj, true));
    errs
}

impl Strategy for Roles {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize_rules(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_role(obj)
    }

    /// Upstream's strategy runs `ValidateRole` and then `ValidateRoleUpdate`, which runs it again: a bad rule
    /// is reported twice in the causes (once in the message).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_role(new);
        errs.extend(validate_role(new));
        errs.extend(meta::validate_object_meta_update(new, old, true, rbac_name));
        errs
    }
}

impl DeleteStrategy for Roles {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    #[test]
    fn roles_are_validated_as_upstream_validates_them() {
        let ok = json!({"metadata": {"name": "pod:reader", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
        assert_eq!(messages(Roles.validate(&ok)), Vec::<String>::new());
        let bad = json!({"metadata": {"name": "a/b", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert_eq!(
            messages(Roles.validate(&bad)),
            [
                "metadata.name: Invalid value: \"a/b\": may not contain '/'",
                "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs",
            ]
        );
        let mut new = ok.clone();
        new["rules"][0]["verbs"] = json!([]);
        assert_eq!(
            messages(Roles.validate_update(&new, &ok)),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].verbs: Required value: verbs must contain at least one value",
            ]
        );
        assert!(Roles.allow_create_on_update());
    }
}
