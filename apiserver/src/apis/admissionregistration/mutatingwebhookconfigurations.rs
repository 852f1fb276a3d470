//! MutatingWebhookConfigurations, `admissionregistration.k8s.io/v1`
//! (`KK/pkg/registry/admissionregistration/mutatingwebhookconfiguration`,
//! `KK/pkg/apis/admissionregistration/validation`, `KK/pkg/apis/admissionregistration/v1/defaults.go`):
//! cluster-scoped, category `api-extensions`, names are DNS subdomains. Each webhook is validated and defaulted
//! as [`super::webhooks`] describes, plus its `reinvocationPolicy` (`Never` by default, or `IfNeeded`); the
//! generation follows the webhooks; an update must name the resourceVersion it replaces.
//!
//! Stored and served only, never enforced: kube-apiserver would call these webhooks, and apply their
//! patches, on every matching request; that is issue 27's work.

use std::sync::Arc;

use serde_json::Value;

use super::webhooks::{self, Options};
use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::resource::Resource;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        categories: &["api-extensions"],
        namespaced: false,
        ..ResourceInfo::new(resource(), "mutatingwebhookconfiguration", Arc::new(Mutating), webhooks::printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        kind: "MutatingWebhookConfiguration".into(),
        plural: "mutatingwebhookconfigurations".into(),
        etcd_prefix: "mutatingwebhookconfigurations".into(),
    }
}

/// The MutatingWebhookConfiguration strategy.
struct Mutating;

impl Strategy for Mutating {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        webhooks::prepare_for_create(obj, true);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        webhooks::prepare_for_update(new, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        webhooks::validate(obj, true, Options::create())
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        webhooks::validate_update(new, old, true)
    }
}

impl DeleteStrategy for Mutating {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    fn config() -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "adm-mutating"},
            "webhooks": [{"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://hooks.example.com/mutate"}}]})
    }

    #[test]
    fn a_configuration_is_defaulted_and_validated() {
        let s = Mutating;
        let mut obj = config();
        s.prepare_for_create(&mut obj);
        assert_eq!(obj["metadata"]["generation"], 1);
        assert_eq!(obj["webhooks"][0]["reinvocationPolicy"], "Never");
        assert_eq!(messages(s.validate(&obj)), Vec::<String>::new());
        obj["webhooks"][0]["reinvocationPolicy"] = json!("Sometimes");
        assert_eq!(
            messages(s.validate(&obj)),
            ["webhooks[0].reinvocationPolicy: Unsupported value: \"Sometimes\": supported values: \"IfNeeded\", \"Never\""]
        );
        let mut bad = config();
        bad["metadata"]["name"] = json!("Adm");
        s.prepare_for_create(&mut bad);
        assert_eq!(messages(s.validate(&bad)).len(), 1);
    }

    #[test]
    fn updates_are_conditional_and_bump_the_generation() {
        let s = Mutating;
        assert!(!s.allow_unconditional_update());
        let mut old = config();
        s.prepare_for_create(&mut old);
        let mut new = old.clone();
        new["webhooks"][0]["reinvocationPolicy"] = json!("IfNeeded");
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(messages(s.validate_update(&new, &old)), Vec::<String>::new());
    }
}
