//! What kube-apiserver's decoder refuses before the registry sees a body: a `kind` or `apiVersion` other
//! than the resource's, and fields whose JSON type does not fit the Go type (a number where a string
//! belongs). Both are 400 BadRequest with the decoder's texts (`transformDecodeError` in
//! `AS/endpoints/handlers/rest.go`):
//! `<Kind> in version "<v>" cannot be handled as a <ResourceKind>: <decoder error>`. It also lists the
//! fields the type does not have, which `fieldValidation` turns into an error or warnings.
//!
//! Objects stay JSON, so that custom resources fit; typed decoding is a check against the kind's schema
//! ([`crate::registry::schema`]). A built-in kind is one of [`crate::registry::kinds`]; other resources
//! (custom resources) only get the apiVersion check, as their handler words it.

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::kinds;
use crate::registry::resource::Resource;
use crate::registry::schema::schemas;

/// The scheme kube-apiserver names when a kind is not registered for a version.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// Whether `resource` is a built-in kind, whose bodies decode into a Go type.
pub(crate) fn is_builtin(resource: &Resource) -> bool {
    schemas().kind(&resource.group, &resource.version, &resource.kind).is_some()
}

/// Checks `obj`'s `kind` and `apiVersion` against `resource` and, for built-in kinds, that its fields
/// decode into the kind's Go type.
pub(crate) fn check(resource: &Resource, obj: &Value) -> Result<(), RegistryError> {
    let text = |field: &str| obj.get(field).and_then(Value::as_str).unwrap_or("");
    let expected = resource.api_version();
    // A missing kind or apiVersion is defaulted from the request's resource.
    let api_version = match text("apiVersion") {
        "" => expected.clone(),
        v => v.to_string(),
    };
    let kind = match text("kind") {
        "" => resource.kind.clone(),
        k => k.to_string(),
    };
    let Some(definition) = schemas().kind(&resource.group, &resource.version, &resource.kind) else {
        // Custom resources: the handler compares the group and version only.
        if api_version != expected {
            return Err(RegistryError::BadRequest(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({expected})"
            )));
        }
        return Ok(());
    };
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version.as_str()),
    };
    let cannot = |why: String| {
        RegistryError::BadRequest(format!(
            "{kind} in version {version:?} cannot be handled as a {}: {why}",
            resource.kind
        ))
    };
    if kinds::find(group, version, &kind).is_none() {
        return Err(cannot(format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme {LEGACY_SCHEME:?}"
        )));
    }
    if kind != resource.kind || group != resource.group {
        return Err(cannot(format!(
            "converting ({version}.{kind}) to ({}.{}): unknown conversion",
            internal_package(&resource.group),
            resource.kind
        )));
    }
    match schemas().type_error(definition, obj) {
        Some(why) => Err(cannot(why)),
        None => Ok(()),
    }
}

/// [`check`], then the object as Go's decoder leaves it: without the fields its kind does not have
/// (whatever `fieldValidation` said about them, they are never stored).
pub(crate) fn decode(resource: &Resource, mut obj: Value) -> Result<Value, RegistryError> {
    check(resource, &obj)?;
    if let Some(definition) = schemas().kind(&resource.group, &resource.version, &resource.kind) {
        schemas().prune(definition, &mut obj);
    }
    Ok(obj)
}

/// The fields of `obj` that `resource`'s kind does not have, as the strict decoder names them
/// (`spec.containers[0].imagePullPolcy`); none for custom resources, whose schema keeps every field.
pub(crate) fn unknown_fields(resource: &Resource, obj: &Value) -> Vec<String> {
    match schemas().kind(&resource.group, &resource.version, &resource.kind) {
        Some(definition) => schemas().unknown_fields(definition, obj),
        None => Vec::new(),
    }
}

/// The strict decoder's error for unknown fields (`runtime.NewStrictDecodingError`).
pub(crate) fn strict_decoding_error(fields: &[String]) -> String {
    let list: Vec<String> = fields.iter().map(|f| format!("unknown field {f:?}")).collect();
    format!("strict decoding error: {}", list.join(", "))
}

/// The internal API package a group's objects convert into (`core` for the core group, else the
/// group's first label: `apps`, `batch`).
fn internal_package(group: &str) -> &str {
    if group.is_empty() {
        "core"
    } else {
        group.split('.').next().unwrap_or(group)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kinds_and_versions_are_checked_as_the_decoder_checks_them() {
        let deployments = Resource {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            etcd_prefix: "deployments".into(),
        };
        let configmaps = Resource::core("ConfigMap", "configmaps");
        let message = |r: &Resource, obj: Value| match check(r, &obj) {
            Err(err) => err.to_status().message.unwrap(),
            Ok(()) => "ok".into(),
        };
        let cases = [
            (&deployments, json!({"apiVersion": "apps/v1", "kind": "Deployment"}), "ok"),
            (
                &deployments,
                json!({"apiVersion": "apps/v1", "kind": "ReplicaSet"}),
                r#"ReplicaSet in version "v1" cannot be handled as a Deployment: converting (v1.ReplicaSet) to (apps.Deployment): unknown conversion"#,
            ),
            (
                &deployments,
                json!({"apiVersion": "apps/v2", "kind": "Deployment"}),
                r#"Deployment in version "v2" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v2" in scheme "pkg/api/legacyscheme/scheme.go:30""#,
            ),
            (
                &deployments,
                json!({"apiVersion": "batch/v1", "kind": "Job"}),
                r#"Job in version "v1" cannot be handled as a Deployment: converting (v1.Job) to (apps.Deployment): unknown conversion"#,
            ),
            (
                &configmaps,
                json!({"apiVersion": "v1", "kind": "Pod"}),
                r#"Pod in version "v1" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion"#,
            ),
            (
                &configmaps,
                json!({"kind": "ConfigMap", "data": {"a": 1}}),
                r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"#,
            ),
        ];
        for (resource, obj, want) in cases {
            assert_eq!(message(resource, obj.clone()), want, "{obj}");
        }
        assert_eq!(
            strict_decoding_error(&["a".into(), "spec.b".into()]),
            r#"strict decoding error: unknown field "a", unknown field "spec.b""#
        );
    }
}
