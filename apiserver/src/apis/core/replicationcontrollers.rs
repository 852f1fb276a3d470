//! ReplicationControllers, core `v1` (`KK/pkg/registry/core/replicationcontroller`,
//! `KK/pkg/apis/core/validation`: `ValidateReplicationController`, `ValidateReplicationControllerStatus`;
//! `KK/pkg/apis/core/v1/defaults.go`: `SetDefaults_ReplicationController`): namespaced, names are DNS
//! subdomains. The selector is a plain label map: when absent it is the template's labels, as are the
//! controller's own labels when it has none; one replica by default. The selector is required (not
//! empty) and must match the template's labels; the template is required, its pods restart `Always`
//! and may not carry `activeDeadlineSeconds`; counts are not negative. Unlike `apps/v1` workloads, the
//! selector may change. The status belongs to `/status` (counts not negative nor above
//! `status.replicas`), the generation follows the spec, and `/scale` is an `autoscaling/v1` Scale whose
//! `status.selector` is the selector map's text. No controller runs: a controller creates no pods.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::apis::printers::apps::{template_cells, template_columns};
use crate::apis::printers::core::selector_text;
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::{scale, status, Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation, workloads};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["rc"],
        categories: &["all"],
        subresources: vec![scale(), status("ReplicationController")],
        ..ResourceInfo::new(resource(), "replicationcontroller", Arc::new(ReplicationControllers), printer())
    }
}

fn resource() -> Resource {
    Resource { etcd_prefix: "controllers".into(), ..Resource::core("ReplicationController", "replicationcontrollers") }
}

/// The ReplicationController strategy.
struct ReplicationControllers;

/// `SetDefaults_ReplicationController`, then the template's pod defaults.
fn set_defaults(obj: &mut Value) {
    let template_labels =
        obj.pointer("/spec/template/metadata/labels").filter(|l| !l.is_null()).and_then(Value::as_object).cloned();
    if let Some(labels) = template_labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
        if empty(obj.pointer("/spec/selector")) {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("selector".into(), Value::Object(labels.clone()));
            }
        }
        if empty(meta::get(obj, "labels")) {
            meta::set(obj, "labels", Some(Value::Object(labels)));
        }
    }
    workloads::default_spec_field(obj, "replicas", json!(1));
    workloads::default_template(obj);
}

fn labels_match(selector: &Map<String, Value>, labels: Option<&Map<String, Value>>) -> bool {
    selector.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

/// `ValidateReplicationControllerSpec` with `ValidatePodTemplateSpecForRC`.
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(workloads::validate_non_negative(obj, "/spec/minReadySeconds", "spec.minReadySeconds"));
    let selector = obj.pointer("/spec/selector").and_then(Value::as_object).filter(|s| !s.is_empty());
    if selector.is_none() {
        errs.push(FieldError::required("spec.selector", ""));
    }
    errs.extend(workloads::validate_non_negative(obj, "/spec/replicas", "spec.replicas"));
    let Some(template) = obj.pointer("/spec/template").filter(|t| !t.is_null()) else {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    };
    if let Some(selector) = selector {
        let labels = template.pointer("/metadata/labels").and_then(Value::as_object);
        if !labels_match(selector, labels) {
            errs.push(FieldError {
                kind: FieldErrorType::Invalid,
                field: "spec.template.metadata.labels".into(),
                value: BadValue::GoSyntax(workloads::go_string_map(template.pointer("/metadata/labels"))),
                detail: "`selector` does not match template `labels`".into(),
            });
        }
    }
    errs.extend(workloads::validate_template_spec(obj, &["Always"]));
    if template.pointer("/spec/activeDeadlineSeconds").is_some_and(|d| !d.is_null()) {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}

/// `ValidateReplicationControllerStatus`.
fn validate_status(obj: &Value) -> Vec<FieldError> {
    let count = |field: &str| obj.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0);
    let mut errs = Vec::new();
    for field in ["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"] {
        errs.extend(workloads::validate_non_negative(obj, &format!("/status/{field}"), &format!("status.{field}")));
    }
    let replicas = count("replicas");
    for field in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
        if count(field) > replicas {
            errs.push(FieldError::invalid_int(
                &format!("status.{field}"),
                count(field),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if count("availableReplicas") > count("readyReplicas") {
        errs.push(FieldError::invalid_int(
            "status.availableReplicas",
            count("availableReplicas"),
            "cannot be greater than readyReplicas",
        ));
    }
    errs
}

impl Strategy for ReplicationControllers {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        matches!(sub, Subresource::Status | Subresource::Scale)
    }

    /// `scaleFromRC`: the selector map reads as `labels.SelectorFromSet(...).String()`.
    fn to_scale(&self, obj: &Value) -> Option<Value> {
        let mut view = obj.clone();
        if let Some(selector) = obj.pointer("/spec/selector").filter(|s| !s.is_null()) {
            view["spec"]["selector"] = json!({"matchLabels": selector});
        }
        Some(workloads::to_scale(&view))
    }

    fn apply_scale(&self, obj: &Value, scale: &Value) -> Option<Value> {
        Some(workloads::apply_scale(obj, scale))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        obj["status"] = json!({"replicas": 0});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    /// `/status` keeps the stored spec (labels may change); `/scale` is a main update of the replicas.
    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        workloads::prepare_subresource_update(sub, new, old, false, |n, o| self.prepare_for_update(n, o));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs
    }

    fn validate_subresource_update(&self, sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        if sub != Subresource::Status {
            return self.validate_update(new, old);
        }
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_status(new));
        errs
    }
}

impl DeleteStrategy for ReplicationControllers {}

/// `printReplicationController`: desired, current and ready replicas; containers, images and the
/// selector with `-o wide`.
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.core.v1.ReplicationControllerSpec";
    const STATUS: &str = "io.k8s.api.core.v1.ReplicationControllerStatus";
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            doc_column("Desired", "integer", SPEC, "replicas", 0),
            doc_column("Current", "integer", STATUS, "replicas", 0),
            doc_column("Ready", "integer", STATUS, "readyReplicas", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", SPEC, "selector", 1),
        ],
        cells: |obj, now, _| {
            let int = |p: &str| Value::from(obj.pointer(p).and_then(Value::as_i64).unwrap_or(0));
            let [containers, images] = template_cells(obj);
            vec![
                name(obj),
                int("/spec/replicas"),
                int("/status/replicas"),
                int("/status/readyReplicas"),
                age(obj, now),
                containers,
                images,
                Value::from(selector_text(obj.pointer("/spec/selector"))),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn rc(body: Value) -> Value {
        let mut obj = json!({"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": "web", "namespace": "default"}});
        obj["spec"] = body;
        obj
    }

    fn template(labels: Value) -> Value {
        json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    }

    fn created(body: Value) -> Value {
        let mut obj = rc(body);
        ReplicationControllers.prepare_for_create(&mut obj);
        obj
    }

    #[test]
    fn the_selector_labels_and_replicas_default_from_the_template() {
        let obj = created(json!({"template": template(json!({"app": "web"}))}));
        assert_eq!(obj["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(obj["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(obj["spec"]["replicas"], 1);
        assert_eq!(obj["status"], json!({"replicas": 0}));
        assert_eq!(obj["metadata"]["generation"], 1);
        assert_eq!(obj["spec"]["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(obj["spec"]["template"]["metadata"]["creationTimestamp"], Value::Null);
        // A selector and labels of its own are kept.
        let mut own = rc(json!({"selector": {"app": "web"}, "template": template(json!({"app": "web", "v": "1"}))}));
        own["metadata"]["labels"] = json!({"team": "a"});
        ReplicationControllers.prepare_for_create(&mut own);
        assert_eq!(own["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(own["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(messages(ReplicationControllers.validate(&own)), Vec::<String>::new());
    }

    #[test]
    fn controllers_are_validated_as_upstream_validates_them() {
        let cases: &[(Value, &[&str])] = &[
            (json!({"template": template(json!({"app": "web"}))}), &[]),
            (json!({"replicas": 2}), &["spec.selector: Required value", "spec.template: Required value"]),
            (
                json!({"selector": {"app": "db"}, "template": template(json!({"app": "web"}))}),
                &["spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"],
            ),
            (
                json!({"replicas": -1, "minReadySeconds": -2, "template": template(json!({"app": "web"}))}),
                &[
                    "spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0",
                    "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                ],
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Never", "activeDeadlineSeconds": 30, "containers": [{"name": "c", "image": "i"}]}}}),
                &[
                    "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                    "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
                ],
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}),
                &["spec.template.spec.containers: Required value"],
            ),
        ];
        for (spec, want) in cases {
            let obj = created(spec.clone());
            assert_eq!(messages(ReplicationControllers.validate(&obj)), *want, "{spec}");
        }
    }

    #[test]
    fn updates_bump_the_generation_keep_the_status_and_may_change_the_selector() {
        let old = created(json!({"template": template(json!({"app": "web"}))}));
        let mut new = old.clone();
        new["status"] = json!({"replicas": 9});
        new["spec"]["replicas"] = json!(3);
        new["spec"]["selector"] = json!({"app": "web2"});
        new["spec"]["template"]["metadata"]["labels"] = json!({"app": "web2"});
        ReplicationControllers.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"replicas": 0}));
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(messages(ReplicationControllers.validate_update(&new, &old)), Vec::<String>::new());
        let mut same = old.clone();
        ReplicationControllers.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
    }

    #[test]
    fn the_status_subresource_keeps_the_spec_and_checks_the_counts() {
        let old = created(json!({"template": template(json!({"app": "web"}))}));
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(7);
        new["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "fullyLabeledReplicas": -1});
        let s = ReplicationControllers;
        s.prepare_for_subresource_update(Subresource::Status, &mut new, &old);
        assert_eq!(new["spec"]["replicas"], 1);
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &new, &old)),
            [
                "status.fullyLabeledReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ]
        );
    }

    #[test]
    fn scale_reads_the_selector_map_as_text() {
        let mut obj = created(
            json!({"replicas": 2, "selector": {"b": "2", "a": "1"}, "template": template(json!({"a": "1", "b": "2"}))}),
        );
        obj["metadata"]["resourceVersion"] = json!("4");
        let scale = ReplicationControllers.to_scale(&obj).unwrap();
        assert_eq!(scale["spec"], json!({"replicas": 2}));
        assert_eq!(scale["status"], json!({"replicas": 0, "selector": "a=1,b=2"}));
        let scaled = ReplicationControllers.apply_scale(&obj, &json!({"spec": {"replicas": 5}})).unwrap();
        assert_eq!(scaled["spec"]["replicas"], 5);
        assert_eq!(scaled["spec"]["selector"], json!({"a": "1", "b": "2"}));
    }

    #[test]
    fn the_printer_shows_replicas_and_wide_columns() {
        let obj = created(json!({"replicas": 2, "template": template(json!({"app": "web", "tier": "fe"}))}));
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("web"),
                json!(2),
                json!(0),
                json!(0),
                json!("<unknown>"),
                json!("c"),
                json!("nginx:1.27"),
                json!("app=web,tier=fe")
            ]
        );
        let names: Vec<_> = printer().columns.iter().map(|c| (c.name.to_string(), c.priority)).collect();
        assert_eq!(names[1], ("Desired".to_string(), 0));
        assert_eq!(names[7], ("Selector".to_string(), 1));
    }
}
