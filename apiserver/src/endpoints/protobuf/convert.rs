//! A message and its JSON: walks the message's descriptor (rust-protobuf reflection) so that any kind
//! converts without code of its own. Field names are the JSON names (Kubernetes' `.proto` files are
//! generated from the Go types' JSON tags). Integers are JSON numbers and bytes base64, as Go's encoder
//! writes them; the apimachinery types whose JSON is not their message's shape convert by name: `Time`
//! (RFC 3339, seconds) and `MicroTime` (microseconds), `Quantity` (its string), `IntOrString` (a number or a
//! string), `RawExtension` and `FieldsV1` (embedded JSON), `Duration` (Go's `1h0m0s`).
//!
//! A Go struct embedded with `json:",inline"` is one nested field in the message but its fields sit in the
//! outer JSON object ([`INLINE`]): `Probe`'s `handler`, `Volume`'s `volumeSource`.
//!
//! Decoding keeps every field the message carries, as Go's decoder fills every field it reads, except
//! what Go's JSON encoder would leave out because it is an `omitempty` field at its zero value (the
//! protobuf encoder writes non-pointer fields even when zero): `generateName: ""`, `generation: 0`,
//! `stdin: false`, a zero `creationTimestamp`. kube's OpenAPI lists exactly the fields without
//! `omitempty` as required, so those keep their zero values (`containerPort: 0`). A JSON field the message does not have is dropped, as Go's decoder drops it.

use base64::Engine;
use protobuf::reflect::{MessageDescriptor, ReflectValueBox, ReflectValueRef, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;
use serde_json::{Map, Value};

/// Go's zero `time.Time` as Unix seconds (January 1, year 1, UTC): metav1.Time's "no time".
const GO_ZERO_TIME_S: i64 = -62_135_596_800;

/// Encodes `value` as the message `desc`.
pub(crate) fn encode(desc: &MessageDescriptor, value: &Value) -> Result<Vec<u8>, String> {
    let message = to_message(desc, value)?;
    message.write_to_bytes_dyn().map_err(|e| e.to_string())
}

/// Decodes `bytes` as the message `desc` into JSON.
pub(crate) fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<Value, String> {
    let message = desc.parse_from_bytes(bytes).map_err(|e| e.to_string())?;
    Ok(to_json(&*message, desc))
}

/// The embedded Go structs (`json:",inline"`) of the served groups, by message and field. The
/// `inline_fields_are_the_ones_json_flattens` test compares every served message with the kind's OpenAPI
/// schema, so a missing entry fails there.
pub(crate) const INLINE: &[(&str, &str)] = &[
    ("api.core.v1.Probe", "handler"),
    ("api.core.v1.Volume", "volumeSource"),
    ("api.core.v1.PersistentVolumeSpec", "persistentVolumeSource"),
    ("api.core.v1.EphemeralContainer", "ephemeralContainerCommon"),
    ("api.core.v1.ConfigMapEnvSource", "localObjectReference"),
    ("api.core.v1.ConfigMapKeySelector", "localObjectReference"),
    ("api.core.v1.ConfigMapProjection", "localObjectReference"),
    ("api.core.v1.ConfigMapVolumeSource", "localObjectReference"),
    ("api.core.v1.SecretEnvSource", "localObjectReference"),
    ("api.core.v1.SecretKeySelector", "localObjectReference"),
    ("api.core.v1.SecretProjection", "localObjectReference"),
    ("api.admissionregistration.v1.NamedRuleWithOperations", "ruleWithOperations"),
    ("api.admissionregistration.v1.RuleWithOperations", "rule"),
    ("api.networking.v1.IngressRule", "ingressRuleValue"),
];

/// Fields whose JSON name is not their `.proto` name (go-to-protobuf took the Go field name).
pub(crate) const RENAMED: &[(&str, &str, &str)] = &[
    ("api.authentication.v1.BoundObjectReference", "uID", "uid"),
    ("api.admissionregistration.v1.MutatingWebhookConfiguration", "Webhooks", "webhooks"),
    ("api.admissionregistration.v1.ValidatingWebhookConfiguration", "Webhooks", "webhooks"),
    ("api.admissionregistration.v1.Validation", "Expression", "expression"),
    ("api.admissionregistration.v1.Variable", "Name", "name"),
    ("api.admissionregistration.v1.Variable", "Expression", "expression"),
    ("api.networking.v1.IngressClassParametersReference", "aPIGroup", "apiGroup"),
    (SCHEMA_PROPS, "ref", "$ref"),
    (SCHEMA_PROPS, "schema", "$schema"),
    (SCHEMA_PROPS, "xKubernetesPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields"),
    (SCHEMA_PROPS, "xKubernetesEmbeddedResource", "x-kubernetes-embedded-resource"),
    (SCHEMA_PROPS, "xKubernetesIntOrString", "x-kubernetes-int-or-string"),
    (SCHEMA_PROPS, "xKubernetesListMapKeys", "x-kubernetes-list-map-keys"),
    (SCHEMA_PROPS, "xKubernetesListType", "x-kubernetes-list-type"),
    (SCHEMA_PROPS, "xKubernetesMapType", "x-kubernetes-map-type"),
    (SCHEMA_PROPS, "xKubernetesValidations", "x-kubernetes-validations"),
];

/// A CRD schema's message. (CRDs are served in JSON only: the schema's unions — `JSON`,
/// `JSONSchemaPropsOrBool`, `...OrArray`, `...OrStringArray` — have no protobuf conversion here.)
const SCHEMA_PROPS: &str = "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

/// The JSON name of `field` of `desc`.
pub(crate) fn json_name<'a>(desc: &MessageDescriptor, field: &'a str) -> &'a str {
    RENAMED.iter().find(|(m, f, _)| *m == desc.full_name() && *f == field).map_or(field, |(_, _, json)| json)
}

fn is_inline(desc: &MessageDescriptor, field: &str) -> bool {
    INLINE.iter().any(|(message, name)| *message == desc.full_name() && *name == field)
}

fn to_message(desc: &MessageDescriptor, value: &Value) -> Result<Box<dyn MessageDyn>, String> {
    let mut message = desc.new_instance();
    if fill_special(desc, value, &mut *message)? {
        return Ok(message);
    }
    let Value::Object(map) = value else {
        return Err(format!("{}: expected an object, got {value}", desc.name()));
    };
    for field in desc.fields() {
        let key = field.name();
        if is_inline(desc, key) {
            let RuntimeFieldType::Singular(RuntimeType::Message(inner)) = field.runtime_field_type() else {
                return Err(format!("{}.{key}: an inline field must be a message", desc.name()));
            };
            field.set_singular_field(&mut *message, ReflectValueBox::Message(to_message(&inner, value)?));
            continue;
        }
        let Some(v) = map.get(json_name(desc, key)) else { continue };
        if v.is_null() {
            continue;
        }
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => field.set_singular_field(&mut *message, to_reflect(&t, v, key)?),
            RuntimeFieldType::Repeated(t) => {
                let Value::Array(items) = v else { return Err(format!("{key}: expected an array")) };
                let mut repeated = field.mut_repeated(&mut *message);
                for item in items {
                    repeated.push(to_reflect(&t, item, key)?);
                }
            }
            RuntimeFieldType::Map(_, t) => {
                let Value::Object(entries) = v else { return Err(format!("{key}: expected an object")) };
                let mut out = field.mut_map(&mut *message);
                for (k, item) in entries {
                    if !item.is_null() {
                        out.insert(ReflectValueBox::String(k.clone()), to_reflect(&t, item, key)?);
                    }
                }
            }
        }
    }
    Ok(message)
}

fn to_reflect(t: &RuntimeType, v: &Value, key: &str) -> Result<ReflectValueBox, String> {
    let int = || v.as_i64().ok_or_else(|| format!("{key}: expected an integer, got {v}"));
    Ok(match t {
        RuntimeType::String => {
            ReflectValueBox::String(v.as_str().ok_or_else(|| format!("{key}: expected a string"))?.to_string())
        }
        RuntimeType::Bool => ReflectValueBox::Bool(v.as_bool().ok_or_else(|| format!("{key}: expected a boolean"))?),
        RuntimeType::I32 => ReflectValueBox::I32(i32::try_from(int()?).map_err(|e| format!("{key}: {e}"))?),
        RuntimeType::I64 => ReflectValueBox::I64(int()?),
        RuntimeType::U32 => ReflectValueBox::U32(u32::try_from(int()?).map_err(|e| format!("{key}: {e}"))?),
        RuntimeType::U64 => {
            ReflectValueBox::U64(v.as_u64().ok_or_else(|| format!("{key}: expected an unsigned integer"))?)
        }
        RuntimeType::F32 => ReflectValueBox::F32(v.as_f64().ok_or_else(|| format!("{key}: expected a number"))? as f32),
        RuntimeType::F64 => ReflectValueBox::F64(v.as_f64().ok_or_else(|| format!("{key}: expected a number"))?),
        RuntimeType::VecU8 => {
            let text = v.as_str().ok_or_else(|| format!("{key}: expected base64 text"))?;
            ReflectValueBox::Bytes(
                base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("{key}: {e}"))?,
            )
        }
        RuntimeType::Enum(e) => ReflectValueBox::Enum(e.clone(), i32::try_from(int()?).map_err(|e| e.to_string())?),
        RuntimeType::Message(m) => ReflectValueBox::Message(to_message(m, v)?),
    })
}

/// Sets the fields of the apimachinery types whose JSON is not their message's shape; false for others.
fn fill_special(desc: &MessageDescriptor, value: &Value, message: &mut dyn MessageDyn) -> Result<bool, String> {
    let set = |message: &mut dyn MessageDyn, name: &str, v: ReflectValueBox| {
        let field = desc.field_by_name(name).expect("apimachinery's messages have their fields");
        field.set_singular_field(message, v);
    };
    let text =
        || value.as_str().map(str::to_string).ok_or_else(|| format!("{}: expected a string, got {value}", desc.name()));
    match special_kind(desc) {
        Some(Special::Time) | Some(Special::MicroTime) => {
            let (secs, nanos) =
                parse_rfc3339(&text()?).ok_or_else(|| format!("{}: not an RFC 3339 time: {value}", desc.name()))?;
            set(message, "seconds", ReflectValueBox::I64(secs));
            if nanos > 0 {
                set(message, "nanos", ReflectValueBox::I32(nanos as i32));
            }
        }
        Some(Special::Quantity) => set(message, "string", ReflectValueBox::String(text()?)),
        Some(Special::IntOrString) => match value {
            Value::Number(n) => {
                set(message, "type", ReflectValueBox::I64(0));
                let n = n.as_i64().and_then(|n| i32::try_from(n).ok()).ok_or("IntOrString: not an int32")?;
                set(message, "intVal", ReflectValueBox::I32(n));
            }
            Value::String(s) => {
                set(message, "type", ReflectValueBox::I64(1));
                set(message, "strVal", ReflectValueBox::String(s.clone()));
            }
            other => return Err(format!("IntOrString: expected a number or a string, got {other}")),
        },
        Some(Special::RawExtension) => {
            set(message, "raw", ReflectValueBox::Bytes(serde_json::to_vec(value).expect("JSON values serialize")))
        }
        Some(Special::FieldsV1) => {
            set(message, "Raw", ReflectValueBox::Bytes(serde_json::to_vec(value).expect("JSON values serialize")))
        }
        Some(Special::ExtraValue) => {
            let Value::Array(items) = value else {
                return Err(format!("{}: expected an array, got {value}", desc.name()));
            };
            let field = desc.field_by_name("items").expect("ExtraValue has its items");
            let mut repeated = field.mut_repeated(message);
            for item in items {
                let item = item.as_str().ok_or_else(|| format!("{}: expected strings", desc.name()))?;
                repeated.push(ReflectValueBox::String(item.to_string()));
            }
        }
        Some(Special::Duration) => {
            let nanos = parse_go_duration(&text()?).ok_or_else(|| format!("Duration: not a duration: {value}"))?;
            set(message, "duration", ReflectValueBox::I64(nanos));
        }
        None => return Ok(false),
    }
    Ok(true)
}

/// The apimachinery types converted by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    Time,
    MicroTime,
    Quantity,
    IntOrString,
    RawExtension,
    FieldsV1,
    Duration,
    /// `ExtraValue` (of users in the authentication, authorization and certificates groups): a message
    /// around a string list whose JSON is the list.
    ExtraValue,
}

fn special_kind(desc: &MessageDescriptor) -> Option<Special> {
    Some(match desc.full_name() {
        "apimachinery.pkg.apis.meta.v1.Time" => Special::Time,
        "apimachinery.pkg.apis.meta.v1.MicroTime" => Special::MicroTime,
        "apimachinery.pkg.api.resource.Quantity" => Special::Quantity,
        "apimachinery.pkg.util.intstr.IntOrString" => Special::IntOrString,
        "apimachinery.pkg.runtime.RawExtension" => Special::RawExtension,
        "apimachinery.pkg.apis.meta.v1.FieldsV1" => Special::FieldsV1,
        "apimachinery.pkg.apis.meta.v1.Duration" => Special::Duration,
        name if name.ends_with(".ExtraValue") => Special::ExtraValue,
        _ => return None,
    })
}

fn to_json(message: &dyn MessageDyn, desc: &MessageDescriptor) -> Value {
    if let Some(special) = special_kind(desc) {
        return special_to_json(special, message, desc);
    }
    let mut out = Map::new();
    let definition = definition_name(desc);
    for field in desc.fields() {
        let value = match field.runtime_field_type() {
            RuntimeFieldType::Singular(_) => match field.get_singular(message) {
                Some(v) if is_go_zero(&v) && omits_zero(desc, &definition, json_name(desc, field.name()), &v) => {
                    continue
                }
                Some(v) if field.has_field(message) => reflect_to_json(v),
                _ => continue,
            },
            RuntimeFieldType::Repeated(_) => {
                let repeated = field.get_repeated(message);
                if repeated.is_empty() {
                    continue;
                }
                Value::Array((0..repeated.len()).map(|i| reflect_to_json(repeated.get(i))).collect())
            }
            RuntimeFieldType::Map(_, _) => {
                let map = field.get_map(message);
                if map.is_empty() {
                    continue;
                }
                let mut entries = Map::new();
                for (k, v) in &map {
                    let key = match k {
                        ReflectValueRef::String(s) => s.to_string(),
                        other => other.to_string(),
                    };
                    entries.insert(key, reflect_to_json(v));
                }
                Value::Object(entries)
            }
        };
        match value {
            Value::Null => {}
            Value::Object(inner) if is_inline(desc, field.name()) => out.extend(inner),
            value => {
                out.insert(json_name(desc, field.name()).to_string(), value);
            }
        }
    }
    Value::Object(out)
}

/// The OpenAPI definition of a message: `api.core.v1.Container` is `io.k8s.api.core.v1.Container`.
fn definition_name(desc: &MessageDescriptor) -> String {
    format!("io.k8s.{}", desc.full_name())
}

/// Whether a scalar is its type's zero value (false, 0, ""), which Go's JSON encoder leaves out of an
/// `omitempty` field although the protobuf encoder writes it.
fn is_go_zero(value: &ReflectValueRef<'_>) -> bool {
    match value {
        ReflectValueRef::Bool(b) => !b,
        ReflectValueRef::I32(v) => *v == 0,
        ReflectValueRef::I64(v) => *v == 0,
        ReflectValueRef::U32(v) => *v == 0,
        ReflectValueRef::U64(v) => *v == 0,
        ReflectValueRef::F32(v) => *v == 0.0,
        ReflectValueRef::F64(v) => *v == 0.0,
        ReflectValueRef::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Whether Go's JSON encoder leaves `field` out at its zero value `v`. Strings: unless the schema requires
/// the field (kube's OpenAPI requires exactly the fields without `omitempty`; a string behind a pointer
/// that a client sends empty is rare). Booleans and numbers: only the non-pointer `omitempty` fields of
/// [`NON_POINTER_SCALARS`], since a pointer set to `false` or `0` is written (`replicas: 0`,
/// `automountServiceAccountToken: false`) and the wire does not say which fields are pointers.
fn omits_zero(desc: &MessageDescriptor, definition: &str, field: &str, v: &ReflectValueRef<'_>) -> bool {
    match v {
        ReflectValueRef::String(_) => !crate::registry::schema::schemas().is_required(definition, field),
        _ => NON_POINTER_SCALARS.iter().any(|(message, name)| *message == desc.full_name() && *name == field),
    }
}

/// The non-pointer `omitempty` booleans and numbers (Go `bool`, `int32`, `int64` fields) of the messages
/// clients send, whose zero the protobuf encoder writes and Go's JSON encoder omits: taken from the Go
/// types of k8s.io/api and apimachinery. Fields not listed keep a zero they arrive with.
pub(crate) const NON_POINTER_SCALARS: &[(&str, &str)] = &[
    ("apimachinery.pkg.apis.meta.v1.ObjectMeta", "generation"),
    ("apimachinery.pkg.apis.meta.v1.ListMeta", "remainingItemCount"),
    ("api.core.v1.Container", "stdin"),
    ("api.core.v1.Container", "stdinOnce"),
    ("api.core.v1.Container", "tty"),
    ("api.core.v1.EphemeralContainerCommon", "stdin"),
    ("api.core.v1.EphemeralContainerCommon", "stdinOnce"),
    ("api.core.v1.EphemeralContainerCommon", "tty"),
    ("api.core.v1.ContainerPort", "hostPort"),
    ("api.core.v1.Probe", "initialDelaySeconds"),
    ("api.core.v1.Probe", "timeoutSeconds"),
    ("api.core.v1.Probe", "periodSeconds"),
    ("api.core.v1.Probe", "successThreshold"),
    ("api.core.v1.Probe", "failureThreshold"),
    ("api.core.v1.PodSpec", "hostNetwork"),
    ("api.core.v1.PodSpec", "hostPID"),
    ("api.core.v1.PodSpec", "hostIPC"),
    ("api.core.v1.VolumeMount", "readOnly"),
    ("api.core.v1.ConfigMapKeySelector", "optional"),
    ("api.core.v1.ServicePort", "nodePort"),
    ("api.core.v1.ServiceSpec", "publishNotReadyAddresses"),
    ("api.core.v1.ServiceSpec", "healthCheckNodePort"),
    ("api.core.v1.NodeSpec", "unschedulable"),
    ("api.core.v1.ContainerStatus", "restartCount"),
    ("api.core.v1.ContainerStatus", "ready"),
    ("api.core.v1.Event", "count"),
    ("api.apps.v1.DeploymentSpec", "minReadySeconds"),
    ("api.apps.v1.DeploymentSpec", "paused"),
    ("api.apps.v1.ReplicaSetSpec", "minReadySeconds"),
    ("api.apps.v1.StatefulSetSpec", "minReadySeconds"),
    ("api.apps.v1.DaemonSetSpec", "minReadySeconds"),
    ("api.apps.v1.DeploymentStatus", "observedGeneration"),
    ("api.apps.v1.DeploymentStatus", "replicas"),
    ("api.apps.v1.DeploymentStatus", "updatedReplicas"),
    ("api.apps.v1.DeploymentStatus", "readyReplicas"),
    ("api.apps.v1.DeploymentStatus", "availableReplicas"),
    ("api.apps.v1.DeploymentStatus", "unavailableReplicas"),
    ("api.apps.v1.ReplicaSetStatus", "fullyLabeledReplicas"),
    ("api.apps.v1.ReplicaSetStatus", "readyReplicas"),
    ("api.apps.v1.ReplicaSetStatus", "availableReplicas"),
    ("api.apps.v1.ReplicaSetStatus", "observedGeneration"),
    ("api.batch.v1.JobStatus", "active"),
    ("api.batch.v1.JobStatus", "succeeded"),
    ("api.batch.v1.JobStatus", "failed"),
    ("api.autoscaling.v1.ScaleSpec", "replicas"),
];

fn reflect_to_json(value: ReflectValueRef<'_>) -> Value {
    match value {
        ReflectValueRef::U32(v) => Value::from(v),
        ReflectValueRef::U64(v) => Value::from(v),
        ReflectValueRef::I32(v) => Value::from(v),
        ReflectValueRef::I64(v) => Value::from(v),
        ReflectValueRef::F32(v) => Value::from(f64::from(v)),
        ReflectValueRef::F64(v) => Value::from(v),
        ReflectValueRef::Bool(v) => Value::from(v),
        ReflectValueRef::String(v) => Value::from(v),
        ReflectValueRef::Bytes(v) => Value::from(base64::engine::general_purpose::STANDARD.encode(v)),
        ReflectValueRef::Enum(_, v) => Value::from(v),
        ReflectValueRef::Message(m) => {
            let desc = m.descriptor_dyn();
            to_json(&*m, &desc)
        }
    }
}

fn special_to_json(special: Special, message: &dyn MessageDyn, desc: &MessageDescriptor) -> Value {
    let get = |name: &str| desc.field_by_name(name).and_then(|f| f.get_singular(message));
    let int = |name: &str| match get(name) {
        Some(ReflectValueRef::I64(v)) => v,
        Some(ReflectValueRef::I32(v)) => i64::from(v),
        _ => 0,
    };
    let text = |name: &str| match get(name) {
        Some(ReflectValueRef::String(s)) => s.to_string(),
        _ => String::new(),
    };
    let bytes = |name: &str| match get(name) {
        Some(ReflectValueRef::Bytes(b)) => b.to_vec(),
        _ => Vec::new(),
    };
    match special {
        Special::Time => {
            let secs = int("seconds");
            if secs == GO_ZERO_TIME_S
                || (secs == 0
                    && int("nanos") == 0
                    && !desc.field_by_name("seconds").is_some_and(|f| f.has_field(message)))
            {
                return Value::Null;
            }
            Value::from(crate::registry::system::rfc3339(secs))
        }
        Special::MicroTime => {
            let secs = int("seconds");
            if secs == GO_ZERO_TIME_S {
                return Value::Null;
            }
            let micros = int("nanos") / 1000;
            let base = crate::registry::system::rfc3339(secs);
            Value::from(format!("{}.{micros:06}Z", base.trim_end_matches('Z')))
        }
        Special::Quantity => Value::from(text("string")),
        Special::IntOrString => {
            if int("type") == 1 {
                Value::from(text("strVal"))
            } else {
                Value::from(int("intVal"))
            }
        }
        Special::RawExtension => {
            let raw = bytes("raw");
            serde_json::from_slice(&raw)
                .unwrap_or_else(|_| Value::from(base64::engine::general_purpose::STANDARD.encode(raw)))
        }
        Special::FieldsV1 => serde_json::from_slice(&bytes("Raw")).unwrap_or(Value::Null),
        Special::Duration => Value::from(go_duration(int("duration"))),
        Special::ExtraValue => {
            let field = desc.field_by_name("items").expect("ExtraValue has its items");
            let items = field.get_repeated(message);
            Value::Array(
                (0..items.len())
                    .filter_map(|i| match items.get(i) {
                        ReflectValueRef::String(s) => Some(Value::from(s)),
                        _ => None,
                    })
                    .collect(),
            )
        }
    }
}

/// Parses RFC 3339 in the forms clients send (`Z` or an offset, with or without fractions) into Unix
/// seconds and nanoseconds.
pub(crate) fn parse_rfc3339(text: &str) -> Option<(i64, u32)> {
    let (date_time, offset_s) = if let Some(rest) = text.strip_suffix('Z').or_else(|| text.strip_suffix('z')) {
        (rest, 0i64)
    } else {
        let at = text.len().checked_sub(6)?;
        let (dt, off) = text.split_at(at);
        let sign = match off.as_bytes().first()? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let hours: i64 = off.get(1..3)?.parse().ok()?;
        let minutes: i64 = off.get(4..6)?.parse().ok()?;
        (dt, sign * (hours * 3600 + minutes * 60))
    };
    let (whole, fraction) = match date_time.split_once('.') {
        Some((w, f)) => (w, f),
        None => (date_time, ""),
    };
    let secs = crate::registry::system::parse_rfc3339(&format!("{whole}Z"))?;
    let nanos = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction.chars().take(9).collect();
        digits.parse::<u32>().ok()? * 10u32.pow(9 - digits.len() as u32)
    };
    Some((secs - offset_s, nanos))
}

/// Go's `time.Duration.String()` of `nanos`.
pub(crate) fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000 {
        return format!("{sign}{n}ns");
    }
    if n < 1_000_000 {
        return format!("{sign}{}µs", trim_fraction(n as f64 / 1e3));
    }
    if n < 1_000_000_000 {
        return format!("{sign}{}ms", trim_fraction(n as f64 / 1e6));
    }
    let (hours, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (minutes, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = trim_fraction(rest as f64 / 1e9);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

fn trim_fraction(v: f64) -> String {
    let text = format!("{v:.9}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Parses Go duration text (`1h30m`, `90s`, `1.5s`, `500ms`) into nanoseconds.
pub(crate) fn parse_go_duration(text: &str) -> Option<i64> {
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let (number, tail) = rest.split_at(digits);
        let value: f64 = number.parse().ok()?;
        let unit_len = tail.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += value * scale;
        rest = tail;
    }
    Some((sign * total) as i64)
}
