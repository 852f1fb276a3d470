//! APIServices, `apiregistration.k8s.io/v1` (kube-aggregator's `pkg/registry/apiservice` and
//! `pkg/apis/apiregistration/validation`): cluster-scoped, in category `api-extensions`, with `/status`.
//! The name must be `<version>.<group>`; only `v1` may have an empty group; the priorities are bounded; a
//! local APIService (no `service`) may have neither a CA bundle nor `insecureSkipTLSVerify`; a service
//! reference names a namespace and a name and defaults to port 443.
//!
//! kubesim stores and serves them; nothing proxies to the services they name (there is no aggregation),
//! and the local APIServices kube-apiserver keeps for its own group versions are not created.

use std::sync::Arc;

use serde_json::Value;

use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        categories: &["api-extensions"],
        namespaced: false,
        subresources: vec![status("APIService")],
        ..ResourceInfo::new(resource(), "apiservice", Arc::new(ApiServices), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "apiregistration.k8s.io".into(),
        version: "v1".into(),
        kind: "APIService".into(),
        plural: "apiservices".into(),
        etcd_prefix: "apiregistration.k8s.io/apiservices".into(),
    }
}

/// The APIService strategy.
struct ApiServices;

/// `SetDefaults_ServiceReference`: a service reference's port is 443 unless given.
fn default(obj: &mut Value) {
    if let Some(service) = obj.pointer_mut("/spec/service").and_then(Value::as_object_mut) {
        service.entry("port").or_insert_with(|| Value::from(443));
    }
}

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/spec/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn invalid_bool(field: &str, value: bool, detail: &str) -> FieldError {
    let mut err = FieldError::invalid(field, "", detail);
    err.value = BadValue::GoSyntax(value.to_string());
    err
}

/// `ValidateAPIService`, metadata included.
fn validate_api_service(obj: &Value) -> Vec<FieldError> {
    let (group, version) = (spec_str(obj, "group"), spec_str(obj, "version"));
    let mut errs = meta::validate_object_meta(obj, false, names::path_segment_name);
    // The name check proper needs the spec, so it follows the path-segment one, in the same place.
    let name = meta::get_str(obj, "name");
    let required = format!("{version}.{group}");
    if !name.is_empty() && names::path_segment_name(name, false).is_empty() && name != required {
        let at = errs.iter().take_while(|e| e.field.starts_with("metadata.generateName")).count();
        let detail = format!("must be `spec.version+\".\"+spec.group`: {}", crate::go_text::quote(&required));
        errs.insert(at, FieldError::invalid("metadata.name", name, &detail));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required("spec.group", "only v1 may have an empty group and it better be legacy kube"));
    }
    if !group.is_empty() {
        for msg in names::dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", group, &msg));
        }
    }
    for msg in names::dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", version, &msg));
    }
    let int = |field: &str| obj.pointer(&format!("/spec/{field}")).and_then(Value::as_i64).unwrap_or(0);
    let group_priority = int("groupPriorityMinimum");
    if !(1..=20000).contains(&group_priority) {
        errs.push(FieldError::invalid_int(
            "spec.groupPriorityMinimum",
            group_priority,
            "must be positive and less than 20000",
        ));
    }
    let version_priority = int("versionPriority");
    if !(1..=1000).contains(&version_priority) {
        errs.push(FieldError::invalid_int(
            "spec.versionPriority",
            version_priority,
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = spec_str(obj, "caBundle");
    let insecure = obj.pointer("/spec/insecureSkipTLSVerify").and_then(Value::as_bool).unwrap_or(false);
    let Some(service) = obj.pointer("/spec/service").filter(|s| !s.is_null()) else {
        if !ca_bundle.is_empty() {
            // Go shows the length of the decoded bytes.
            let bytes = base64_len(ca_bundle);
            errs.push(FieldError::invalid(
                "spec.caBundle",
                &format!("{bytes} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(invalid_bool(
                "spec.insecureSkipTLSVerify",
                true,
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    if service.get("namespace").and_then(Value::as_str).unwrap_or("").is_empty() {
        errs.push(FieldError::required("spec.service.namespace", ""));
    }
    if service.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
        errs.push(FieldError::required("spec.service.name", ""));
    }
    if insecure && !ca_bundle.is_empty() {
        errs.push(invalid_bool("spec.insecureSkipTLSVerify", true, "may not be true if caBundle is present"));
    }
    errs
}

/// The length of the bytes a base64 text decodes to (a `[]byte` field travels as base64).
fn base64_len(text: &str) -> usize {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).map_or(0, |b| b.len())
}

impl Strategy for ApiServices {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), Value::Object(serde_json::Map::new()));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        default(new);
        common::keep_status(new, old);
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_api_service(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::path_segment_name);
        // `ValidateAPIServiceUpdate` runs the metadata checks of an update, then all of create's again.
        errs.extend(validate_api_service(new));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::path_segment_name);
        let conditions = new.pointer("/status/conditions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (i, condition) in conditions.iter().enumerate() {
            let status = condition.get("status").and_then(Value::as_str).unwrap_or("");
            if !matches!(status, "True" | "False" | "Unknown") {
                errs.push(FieldError::not_supported(
                    &format!("status.conditions[{i}].status"),
                    status,
                    &["True", "False", "Unknown"],
                ));
            }
        }
        errs
    }
}

impl DeleteStrategy for ApiServices {}

/// The aggregator's own table: the service (`Local` when none) and whether it is available.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Service", "string", "The reference to the service that hosts this API endpoint.", 0),
            column("Available", "string", "Whether this service is available.", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let service = match obj.pointer("/spec/service").filter(|s| !s.is_null()) {
                Some(s) => format!(
                    "{}/{}",
                    s.get("namespace").and_then(Value::as_str).unwrap_or(""),
                    s.get("name").and_then(Value::as_str).unwrap_or("")
                ),
                None => "Local".to_string(),
            };
            let conditions = obj.pointer("/status/conditions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            let available = conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("Available"));
            let shown = match available {
                None => "Unknown".to_string(),
                Some(c) => {
                    let status = c.get("status").and_then(Value::as_str).unwrap_or("");
                    let reason = c.get("reason").and_then(Value::as_str).unwrap_or("");
                    if status == "True" || reason.is_empty() {
                        status.to_string()
                    } else {
                        format!("{status} ({reason})")
                    }
                }
            };
            vec![name(obj), Value::from(service), Value::from(shown), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::field_error::messages;
    use serde_json::json;

    use super::*;

    fn api_service(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn api_services_are_validated_as_the_aggregator_validates_them() {
        let good = json!({"group": "metrics.example.com", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, "service": {"namespace": "kube-system", "name": "metrics"}});
        let cases: &[(Value, &[&str])] = &[
            (api_service("v1beta1.metrics.example.com", good.clone()), &[]),
            (
                api_service("wrong", good.clone()),
                &["metadata.name: Invalid value: \"wrong\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.example.com\""],
            ),
            (
                api_service("v2.", json!({"version": "v2", "groupPriorityMinimum": 0, "versionPriority": 1001})),
                &[
                    "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
                    "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                    "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                ],
            ),
            (
                api_service("v1.local.io", json!({"group": "local.io", "version": "v1", "groupPriorityMinimum": 1,
                    "versionPriority": 1, "caBundle": "YWJj", "insecureSkipTLSVerify": true})),
                &[
                    "spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle",
                    "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
                ],
            ),
            (
                api_service("v1.svc.io", json!({"group": "svc.io", "version": "v1", "groupPriorityMinimum": 1,
                    "versionPriority": 1, "service": {}, "caBundle": "YWJj", "insecureSkipTLSVerify": true})),
                &[
                    "spec.service.namespace: Required value",
                    "spec.service.name: Required value",
                    "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(ApiServices.validate(obj)), *want, "{obj}");
        }
    }

    #[test]
    fn a_service_reference_defaults_to_port_443_and_the_status_is_the_subresources() {
        let s = ApiServices;
        let mut obj = api_service("v1.a.io", json!({"service": {"namespace": "n", "name": "s"}}));
        obj["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
        s.prepare_for_create(&mut obj);
        assert_eq!(obj["spec"]["service"]["port"], 443);
        assert_eq!(obj["status"], json!({}));
        let mut update = obj.clone();
        update["status"] = json!({"conditions": [{"type": "Available", "status": "Maybe"}]});
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &update, &obj)),
            ["status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""]
        );
    }

    #[test]
    fn the_printer_shows_the_service_and_availability() {
        let cells = |obj: &Value| (printer().cells)(obj, 0, &[]);
        let local = api_service("v1.apps", json!({"group": "apps", "version": "v1"}));
        assert_eq!(cells(&local)[1..3], [json!("Local"), json!("Unknown")]);
        let mut remote = api_service(
            "v1beta1.metrics.k8s.io",
            json!({"service": {"namespace": "kube-system", "name": "metrics-server"}}),
        );
        remote["status"] =
            json!({"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]});
        assert_eq!(cells(&remote)[1..3], [json!("kube-system/metrics-server"), json!("False (MissingEndpoints)")]);
    }
}
