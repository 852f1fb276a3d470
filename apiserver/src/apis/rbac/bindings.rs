//! The strategy of both binding kinds (`KK/pkg/registry/rbac/rolebinding` and `.../clusterrolebinding`):
//! they differ only in scope and in the kinds their roleRef may name. Names are path segments; an update
//! of a missing binding creates it; the v1 defaults apply as the request decodes; the roleRef never changes.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::strategy::{DeleteStrategy, Strategy};

use super::{canonicalize_subjects, default_binding, rbac_name, validate_binding, validate_role_ref_unchanged};

/// A binding kind's strategy: its scope and the kinds its roleRef may name.
pub(crate) struct Bindings {
    pub(super) namespaced: bool,
    pub(super) role_ref_kinds: &'static [&'static str],
}

impl Bindings {
    /// `ValidateRoleBinding` / `ValidateClusterRoleBinding`.
    fn validate_binding_object(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, self.namespaced, rbac_name);
        errs.extend(validate_binding(obj, self.namespaced, self.role_ref_kinds));
        errs
    }
}

impl Strategy for Bindings {
    fn namespace_scoped(&self) -> bool {
        self.namespaced
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
        self.validate_binding_object(obj)
    }

    /// The create checks and then the update's (which run them again, as upstream's 1.32 strategies do),
    /// with the roleRef immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_binding_object(new);
        errs.extend(self.validate_binding_object(new));
        errs.extend(meta::validate_object_meta_update(new, old, self.namespaced, rbac_name));
        errs.extend(validate_role_ref_unchanged(new, old));
        errs
    }
}

impl DeleteStrategy for Bindings {}
