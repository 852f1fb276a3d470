//! ServiceAccounts (`KK/pkg/registry/core/serviceaccount/strategy.go`): namespaced, names are DNS
//! subdomains, nothing else is checked (the token controller, which would fill `secrets`, does not run).

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::Strategy;

/// The descriptor of `serviceaccounts`.
pub(crate) fn resource() -> Resource {
    Resource::core("ServiceAccount", "serviceaccounts")
}

/// The ServiceAccount strategy.
pub(crate) struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        meta::validate_object_meta(obj, true, names::name_is_dns_subdomain)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain)
    }
}

/// The serviceaccounts store answers a delete with the deleted object (`ReturnDeletedObject`).
impl crate::registry::strategy::DeleteStrategy for ServiceAccounts {
    fn return_deleted_object(&self) -> bool {
        true
    }
}
