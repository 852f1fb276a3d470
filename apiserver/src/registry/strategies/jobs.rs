//! Jobs (`KK/pkg/registry/batch/job/strategy.go`, `KK/pkg/apis/batch/v1/defaults.go`, `ValidateJob`):
//! `batch/v1`, namespaced, names are DNS subdomains; v1's defaults (one completion, parallelism one, six
//! retries, non-indexed, not suspended, pods replaced once terminated or failed); unless
//! `manualSelector` is set, the server writes the selector and the template's labels from the job's uid
//! and name; the template's restart policy is `OnFailure` or `Never`; the status belongs to `/status`; the
//! selector, the completions and the template never change. Deleting a `batch/v1` job orphans its pods by
//! default, for compatibility (`DefaultGarbageCollectionPolicy`): with no garbage collector running, such
//! a delete leaves the job waiting on the `orphan` finalizer, as a kube-apiserver without its
//! controller-manager would.

use serde_json::{json, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation, workloads};
use crate::registry::strategy::{GcPolicy, Strategy, Subresource};

/// The descriptor of `jobs`.
pub(crate) fn resource() -> Resource {
    Resource::group("batch", "v1", "Job", "jobs")
}

/// The Job strategy.
pub(crate) struct Jobs;

/// The label every job's pods carry with the job's uid, and the legacy one beside it.
pub(crate) const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
/// The label with the job's name, and the legacy one beside it.
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

fn set_defaults(obj: &mut Value) {
    let has = |obj: &Value, field: &str| obj.pointer(&format!("/spec/{field}")).is_some_and(|v| !v.is_null());
    if !has(obj, "completions") && !has(obj, "parallelism") {
        workloads::default_spec_field(obj, "completions", json!(1));
    }
    workloads::default_spec_field(obj, "parallelism", json!(1));
    if !has(obj, "backoffLimitPerIndex") {
        workloads::default_spec_field(obj, "backoffLimit", json!(6));
    }
    workloads::default_spec_field(obj, "completionMode", json!("NonIndexed"));
    workloads::default_spec_field(obj, "suspend", json!(false));
    if !has(obj, "podFailurePolicy") {
        workloads::default_spec_field(obj, "podReplacementPolicy", json!("TerminatingOrFailed"));
    }
    workloads::default_template(obj);
}

/// `generateSelectorIfNeeded`: the job's own selector, from its uid, and the labels that match it.
fn generate_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let uid = meta::get_str(obj, "uid").to_string();
    let name = meta::get_str(obj, "name").to_string();
    if obj.pointer("/spec/selector").is_none_or(Value::is_null) {
        obj["spec"]["selector"] = json!({"matchLabels": {CONTROLLER_UID_LABEL: uid}});
    }
    let template = &mut obj["spec"]["template"];
    if !template.is_object() {
        *template = json!({});
    }
    let metadata =
        template.as_object_mut().expect("just made an object").entry("metadata").or_insert_with(|| json!({}));
    let labels = metadata.as_object_mut().map(|m| m.entry("labels").or_insert_with(|| json!({})));
    if let Some(Value::Object(labels)) = labels {
        for (key, value) in [
            (CONTROLLER_UID_LABEL, &uid),
            (JOB_NAME_LABEL, &name),
            (LEGACY_CONTROLLER_UID_LABEL, &uid),
            (LEGACY_JOB_NAME_LABEL, &name),
        ] {
            labels.entry(key).or_insert_with(|| Value::from(value.as_str()));
        }
    }
}

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (field, path) in [
        ("parallelism", "spec.parallelism"),
        ("completions", "spec.completions"),
        ("backoffLimit", "spec.backoffLimit"),
    ] {
        errs.extend(workloads::validate_non_negative(obj, &format!("/spec/{field}"), path));
    }
    errs.extend(workloads::validate_selector_and_template(obj, &["OnFailure", "Never"]));
    errs
}

/// A field that never changes, with its value shown as Go shows it.
fn immutable(
    new: &Value,
    old: &Value,
    pointer: &str,
    field: &str,
    shown: impl Fn(Option<&Value>) -> String,
) -> Option<FieldError> {
    let (a, b) = (new.pointer(pointer), old.pointer(pointer));
    (a != b).then(|| FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(shown(a)),
        detail: "field is immutable".into(),
    })
}

impl Strategy for Jobs {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        generate_selector(obj);
        obj["status"] = json!({});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs.extend(immutable(new, old, "/spec/selector", "spec.selector", workloads::go_label_selector));
        errs.extend(immutable(new, old, "/spec/completions", "spec.completions", |v| {
            v.map_or("(*int32)(nil)".to_string(), ToString::to_string)
        }));
        // Go prints the whole core.PodTemplateSpec here; kubesim names the type only.
        errs.extend(immutable(new, old, "/spec/template", "spec.template", |_| "core.PodTemplateSpec{...}".into()));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for Jobs {
    fn default_gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }
}
