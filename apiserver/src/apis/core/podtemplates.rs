//! PodTemplates, core `v1` (`KK/pkg/registry/core/podtemplate/strategy.go`,
//! `KK/pkg/apis/core/validation`: `ValidatePodTemplate`, `ValidatePodTemplateUpdate`): namespaced, names
//! are DNS subdomains; the template gets the pod spec's v1 defaults and must be a valid pod template
//! (containers with names and images, a known restart policy); the generation starts at 1 and follows
//! the template.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{start_generation, workloads};
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(resource(), "podtemplate", Arc::new(PodTemplates), printer())
}

fn resource() -> Resource {
    Resource::core("PodTemplate", "podtemplates")
}

/// The PodTemplate strategy.
struct PodTemplates;

/// The restart policies a pod spec may have (`validateRestartPolicy`).
const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];

/// The object's `template` seen where workloads keep theirs (`spec.template`), so that the workloads'
/// template defaults and checks apply to it.
fn as_workload(obj: &Value) -> Value {
    json!({"spec": {"template": obj.get("template").cloned().unwrap_or(json!({}))}})
}

/// The pod spec's defaults; the template is a struct in v1, so a missing one is defaulted as empty.
fn set_defaults(obj: &mut Value) {
    if !obj.is_object() {
        return;
    }
    if !obj.get("template").is_some_and(Value::is_object) {
        obj["template"] = json!({});
    }
    if !obj["template"].get("spec").is_some_and(Value::is_object) {
        obj["template"]["spec"] = json!({});
    }
    let mut view = as_workload(obj);
    workloads::default_template(&mut view);
    obj["template"] = view["spec"]["template"].take();
}

/// `ValidatePodTemplateSpec` of `template`.
fn validate_template(obj: &Value) -> Vec<FieldError> {
    let mut errs = workloads::validate_template_spec(&as_workload(obj), RESTART_POLICIES);
    for e in &mut errs {
        if let Some(rest) = e.field.strip_prefix("spec.template") {
            e.field = format!("template{rest}");
        }
    }
    errs
}

impl Strategy for PodTemplates {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        if new.get("template") != old.get("template") {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_template(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_template(new));
        errs
    }
}

impl DeleteStrategy for PodTemplates {}

/// `printPodTemplate`: the containers' names and images and the template's labels (no age).
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Containers", "string", "Names of each container in the template.", 0),
            column("Images", "string", "Images referenced by each container in the template.", 0),
            column("Pod Labels", "string", "The labels for the pod template.", 0),
        ],
        cells: |obj, _, _| {
            let containers =
                obj.pointer("/template/spec/containers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            let field = |f: &str| {
                containers.iter().map(|c| c.get(f).and_then(Value::as_str).unwrap_or("")).collect::<Vec<_>>().join(",")
            };
            let labels = crate::apis::printers::core::selector_text(obj.pointer("/template/metadata/labels"));
            vec![name(obj), Value::from(field("name")), Value::from(field("image")), Value::from(labels)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn pt(template: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "tpl", "namespace": "default"},
            "template": template})
    }

    fn created(template: Value) -> Value {
        let mut obj = pt(template);
        PodTemplates.prepare_for_create(&mut obj);
        obj
    }

    #[test]
    fn the_template_gets_pod_defaults_and_a_generation() {
        let obj = created(json!({"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}));
        assert_eq!(obj["metadata"]["generation"], 1);
        assert_eq!(obj["template"]["metadata"], json!({"creationTimestamp": null}));
        assert_eq!(obj["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(obj["template"]["spec"]["containers"][0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(messages(PodTemplates.validate(&obj)), Vec::<String>::new());
    }

    #[test]
    fn templates_are_validated_with_their_own_paths() {
        let cases: &[(Value, &[&str])] = &[
            (json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}), &[]),
            (json!({"spec": {"containers": []}}), &["template.spec.containers: Required value"]),
            (json!(null), &["template.spec.containers: Required value"]),
            (
                json!({"spec": {"restartPolicy": "Sometimes", "containers": [{"name": "C_1", "image": ""}]}}),
                &[
                    "template.spec.containers[0].name: Invalid value: \"C_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    "template.spec.containers[0].image: Required value",
                    "template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                ],
            ),
        ];
        for (template, want) in cases {
            assert_eq!(messages(PodTemplates.validate(&created(template.clone()))), *want, "{template}");
        }
    }

    #[test]
    fn the_generation_follows_the_template() {
        let old = created(json!({"spec": {"containers": [{"name": "c", "image": "i"}]}}));
        let mut same = old.clone();
        same["metadata"]["labels"] = json!({"a": "b"});
        PodTemplates.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut changed = old.clone();
        changed["template"]["spec"]["containers"][0]["image"] = json!("j");
        PodTemplates.prepare_for_update(&mut changed, &old);
        assert_eq!(changed["metadata"]["generation"], 2);
        assert_eq!(messages(PodTemplates.validate_update(&changed, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_shows_containers_images_and_labels() {
        let obj = created(
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}),
        );
        assert_eq!((printer().cells)(&obj, 0, &[]), vec![json!("tpl"), json!("a,b"), json!("x,y"), json!("app=web")]);
        let bare = created(json!({"spec": {"containers": [{"name": "a", "image": "x"}]}}));
        assert_eq!((printer().cells)(&bare, 0, &[])[3], json!("<none>"));
    }
}
