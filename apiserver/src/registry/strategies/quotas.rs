//! ResourceQuotas and LimitRanges (`KK/pkg/registry/core/resourcequota/strategy.go`,
//! `KK/pkg/registry/core/limitrange/strategy.go`): namespaced, names are DNS subdomains; a quota's status
//! belongs to `/status`. kubectl's `describe namespace` lists both. No quota controller runs: the
//! ResourceQuota admission plugin counts a quota's usage itself when a request first needs it and keeps
//! `status.used` as it charges writes; the LimitRanger plugin applies and enforces limit ranges.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `resourcequotas`.
pub(crate) fn resourcequotas() -> Resource {
    Resource::core("ResourceQuota", "resourcequotas")
}

/// The descriptor of `limitranges`.
pub(crate) fn limitranges() -> Resource {
    Resource::core("LimitRange", "limitranges")
}

/// The ResourceQuota strategy.
pub(crate) struct ResourceQuotas;

/// The LimitRange strategy.
pub(crate) struct LimitRanges;

impl Strategy for ResourceQuotas {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        meta::validate_object_meta(obj, true, names::name_is_dns_subdomain)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain)
    }
}

/// The resourcequotas store answers a delete with the deleted object (`ReturnDeletedObject`).
impl crate::registry::strategy::DeleteStrategy for ResourceQuotas {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

impl Strategy for LimitRanges {
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

impl crate::registry::strategy::DeleteStrategy for LimitRanges {}
