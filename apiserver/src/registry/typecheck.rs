//! What kube-apiserver's decoder refuses before the registry sees a body: a `kind` or `apiVersion` other
//! than the resource's, and fields whose JSON type does not fit the Go type (a number where a string
//! belongs). Both are 400 BadRequest with the decoder's texts (`transformDecodeError` in
//! `AS/endpoints/handlers/rest.go`):
//! `<Kind> in version "<v>" cannot be handled as a <ResourceKind>: <decoder error>`.
//!
//! Objects stay JSON, so that custom resources fit; typed decoding is a check. Built-in resources name a
//! [`Typed`] decoder: the body must decode into the k8s-openapi type (the authority on what decodes), and
//! when it does not, a walk over the Go types of the fields kube checks most often finds the field and
//! words the error as Go's `encoding/json` does (`json: cannot unmarshal number into Go struct field
//! ConfigMap.data of type string`). Custom resources (a non-empty API group) only get the apiVersion
//! check, as their handler words it.

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::resource::Resource;

/// The scheme kube-apiserver names when a kind is not registered for a version.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// Kinds registered in core `v1` (those a client is likely to send to the wrong resource): a body of one
/// of them decodes, then fails to convert into the resource's type.
const CORE_V1_KINDS: &[&str] = &[
    "Binding",
    "ConfigMap",
    "Endpoints",
    "Event",
    "LimitRange",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Pod",
    "PodTemplate",
    "ReplicationController",
    "ResourceQuota",
    "Secret",
    "Service",
    "ServiceAccount",
];

/// A built-in type the body must decode into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    ConfigMap,
    Namespace,
    Pod,
}

/// Checks `obj`'s `kind` and `apiVersion` against `resource` and, for built-in types, that it decodes as
/// `typed`.
pub fn check(resource: &Resource, typed: Option<Typed>, obj: &Value) -> Result<(), RegistryError> {
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
    if !resource.group.is_empty() {
        // Custom resources: the handler compares the group and version only.
        if api_version != expected {
            return Err(RegistryError::BadRequest(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({expected})"
            )));
        }
        return Ok(());
    }
    let version = api_version.rsplit('/').next().unwrap_or("");
    let cannot = |why: String| {
        RegistryError::BadRequest(format!(
            "{kind} in version {version:?} cannot be handled as a {}: {why}",
            resource.kind
        ))
    };
    if api_version != "v1" || !CORE_V1_KINDS.contains(&kind.as_str()) {
        return Err(cannot(format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme {LEGACY_SCHEME:?}"
        )));
    }
    if kind != resource.kind {
        return Err(cannot(format!("converting (v1.{kind}) to (core.{}): unknown conversion", resource.kind)));
    }
    match typed.map(|t| decodes(t, obj)) {
        Some(Err(why)) => Err(cannot(why)),
        _ => Ok(()),
    }
}

/// Whether `obj` decodes as `typed`; the error is Go's text for the first field found not to fit, or
/// serde's when the walk finds none.
fn decodes(typed: Typed, obj: &Value) -> Result<(), String> {
    use k8s_openapi::api::core::v1;
    let result = match typed {
        Typed::ConfigMap => serde_json::from_value::<v1::ConfigMap>(obj.clone()).map(drop),
        Typed::Namespace => serde_json::from_value::<v1::Namespace>(obj.clone()).map(drop),
        Typed::Pod => serde_json::from_value::<v1::Pod>(obj.clone()).map(drop),
    };
    let Err(err) = result else { return Ok(()) };
    let root = match typed {
        Typed::ConfigMap => &CONFIG_MAP,
        Typed::Namespace => &NAMESPACE,
        Typed::Pod => &POD,
    };
    if let Some(go) = go_type_error(root, obj, "") {
        return Err(go);
    }
    // k8s-openapi requires fields that Go leaves at their zero value (a container's name, a pod's
    // containers); kube decodes those and lets validation report them as 422s, so they pass here.
    if err.to_string().starts_with("missing field") {
        return Ok(());
    }
    Err(err.to_string())
}

/// A Go type, as far as the walk needs it.
enum GoType {
    String,
    /// A named string type (`v1.FinalizerName`).
    NamedString(&'static str),
    Int64,
    Bool,
    /// `map[string]<elem>`.
    Map(&'static GoType),
    /// `[]<elem>`.
    List(&'static GoType),
    Struct(&'static GoStruct),
}

/// A Go struct: its package-qualified name and the JSON names and types of the fields walked.
struct GoStruct {
    /// As Go prints the type (`v1.ObjectMeta`).
    name: &'static str,
    fields: &'static [(&'static str, GoType)],
}

impl GoType {
    fn name(&self) -> String {
        match self {
            GoType::String => "string".into(),
            GoType::NamedString(name) => (*name).into(),
            GoType::Int64 => "int64".into(),
            GoType::Bool => "bool".into(),
            GoType::Map(elem) => format!("map[string]{}", elem.name()),
            GoType::List(elem) => format!("[]{}", elem.name()),
            GoType::Struct(s) => s.name.into(),
        }
    }
}

const OWNER_REFERENCE: GoStruct = GoStruct {
    name: "v1.OwnerReference",
    fields: &[
        ("apiVersion", GoType::String),
        ("kind", GoType::String),
        ("name", GoType::String),
        ("uid", GoType::String),
        ("controller", GoType::Bool),
        ("blockOwnerDeletion", GoType::Bool),
    ],
};

const OBJECT_META: GoStruct = GoStruct {
    name: "v1.ObjectMeta",
    fields: &[
        ("name", GoType::String),
        ("generateName", GoType::String),
        ("namespace", GoType::String),
        ("uid", GoType::String),
        ("resourceVersion", GoType::String),
        ("generation", GoType::Int64),
        ("deletionGracePeriodSeconds", GoType::Int64),
        ("labels", GoType::Map(&GoType::String)),
        ("annotations", GoType::Map(&GoType::String)),
        ("ownerReferences", GoType::List(&GoType::Struct(&OWNER_REFERENCE))),
        ("finalizers", GoType::List(&GoType::String)),
    ],
};

const CONFIG_MAP: GoStruct = GoStruct {
    name: "v1.ConfigMap",
    fields: &[
        ("metadata", GoType::Struct(&OBJECT_META)),
        ("data", GoType::Map(&GoType::String)),
        ("immutable", GoType::Bool),
    ],
};

const NAMESPACE_SPEC: GoStruct =
    GoStruct { name: "v1.NamespaceSpec", fields: &[("finalizers", GoType::List(&FINALIZER_NAME))] };
const FINALIZER_NAME: GoType = GoType::NamedString("v1.FinalizerName");

const NAMESPACE: GoStruct = GoStruct {
    name: "v1.Namespace",
    fields: &[("metadata", GoType::Struct(&OBJECT_META)), ("spec", GoType::Struct(&NAMESPACE_SPEC))],
};

const CONTAINER: GoStruct = GoStruct {
    name: "v1.Container",
    fields: &[("name", GoType::String), ("image", GoType::String), ("command", GoType::List(&GoType::String))],
};

const POD_SPEC: GoStruct = GoStruct {
    name: "v1.PodSpec",
    fields: &[
        ("containers", GoType::List(&GoType::Struct(&CONTAINER))),
        ("nodeName", GoType::String),
        ("terminationGracePeriodSeconds", GoType::Int64),
        ("nodeSelector", GoType::Map(&GoType::String)),
    ],
};

const POD: GoStruct = GoStruct {
    name: "v1.Pod",
    fields: &[("metadata", GoType::Struct(&OBJECT_META)), ("spec", GoType::Struct(&POD_SPEC))],
};

/// The JSON type name Go's decoder reports.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `UnmarshalTypeError` for the first field of `s` (at JSON path `path`) whose value does not fit:
/// `json: cannot unmarshal <json type> into Go struct field <Struct>.<path> of type <Go type>`, where
/// Struct is the innermost struct and the path runs from the root (map keys and list indexes left out).
fn go_type_error(s: &GoStruct, obj: &Value, path: &str) -> Option<String> {
    for (field, ty) in s.fields {
        let Some(value) = obj.get(field) else { continue };
        let here = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
        if let Some(err) = mismatch(s, ty, value, &here) {
            return Some(err);
        }
    }
    None
}

fn mismatch(owner: &GoStruct, ty: &GoType, value: &Value, path: &str) -> Option<String> {
    if value.is_null() {
        // null leaves a Go value at its zero value.
        return None;
    }
    let short = owner.name.rsplit('.').next().unwrap_or(owner.name);
    // Go names a number that does not fit an integer by its literal (`number 1.5`).
    let shown = match (ty, value) {
        (GoType::Int64, Value::Number(n)) => format!("number {n}"),
        _ => json_type(value).to_string(),
    };
    let wrong =
        || Some(format!("json: cannot unmarshal {shown} into Go struct field {short}.{path} of type {}", ty.name()));
    match (ty, value) {
        (GoType::String | GoType::NamedString(_), Value::String(_)) | (GoType::Bool, Value::Bool(_)) => None,
        (GoType::Int64, Value::Number(n)) if n.is_i64() => None,
        (GoType::Map(elem), Value::Object(map)) => map.values().find_map(|v| mismatch(owner, elem, v, path)),
        (GoType::List(elem), Value::Array(items)) => items.iter().find_map(|v| mismatch(owner, elem, v, path)),
        (GoType::Struct(inner), Value::Object(_)) => go_type_error(inner, value, path),
        _ => wrong(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn go_texts() {
        let cm = json!({"metadata": {"name": "a", "labels": {"x": 1}}, "data": {"k": "v"}});
        assert_eq!(
            go_type_error(&CONFIG_MAP, &cm, "").unwrap(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        );
        let pod = json!({"spec": {"containers": [{"name": "c", "image": 5}]}});
        assert_eq!(
            go_type_error(&POD, &pod, "").unwrap(),
            "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"
        );
        let data = json!({"data": "x"});
        assert_eq!(
            go_type_error(&CONFIG_MAP, &data, "").unwrap(),
            "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"
        );
    }
}
