//! Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), what kubectl 1.32's typed clients send and
//! ask for (`kubectl create configmap`, `describe`, `scale`): objects, lists, `Status` errors and watch
//! streams in kube's wire format (k8s.io/apimachinery `pkg/runtime/serializer/protobuf`).
//!
//! - A document is the magic `k8s\0` and a `runtime.Unknown` envelope naming the object's `apiVersion` and
//!   `kind`, whose `raw` is the object's own message ([`envelope`]).
//! - A watch is a stream of frames, each a 4-byte big-endian length and a `metav1.WatchEvent` without
//!   envelope whose `object.raw` is the event's object as a document.
//! - The messages come from Kubernetes' own `.proto` contract, as the `k8s-rs-pb` crate carries it (its
//!   rust-protobuf code embeds the descriptors). [`convert`] walks a message's descriptor to turn it into
//!   the JSON the rest of the server works with, and back, so every built-in kind is covered without code
//!   per type; the handful of apimachinery types whose JSON form is not their message's (`Time`,
//!   `MicroTime`, `Quantity`, `IntOrString`, `RawExtension`, `FieldsV1`, `Duration`) are converted by
//!   name ([`descriptors`] finds a kind's message).
//!
//! Custom resources have no protobuf form: their endpoints never negotiate it.

pub(crate) mod convert;
pub(crate) mod descriptors;
pub(crate) mod envelope;

use bytes::Bytes;
use serde_json::Value;

use crate::endpoints::error::ApiError;

/// Decodes a request body into the JSON object it carries, with its `apiVersion` and `kind`; `expected` is
/// the kind the endpoint takes, named in errors as kube's decoder names it.
pub fn decode(body: &[u8], expected: &str) -> Result<Value, ApiError> {
    let unknown = envelope::open(body).map_err(|why| unrecognized(expected, &why, body))?;
    let (api_version, kind) = (unknown.api_version.as_str(), unknown.kind.as_str());
    if kind.is_empty() {
        return Err(unrecognized(expected, &format!("Object 'Kind' is missing in '{}'", hex(&unknown.raw)), body));
    }
    let version = api_version.rsplit('/').next().unwrap_or("");
    let cannot = |why: String| {
        ApiError::BadRequest(format!("{kind} in version {version:?} cannot be handled as a {expected}: {why}"))
    };
    let Some(message) = descriptors::message(api_version, kind) else {
        return Err(cannot(format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        )));
    };
    let mut value = convert::decode(&message, &unknown.raw).map_err(|why| cannot(format!("proto: {why}")))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(api_version));
        map.insert("kind".into(), Value::from(kind));
    }
    Ok(value)
}

/// Encodes an object that carries its `apiVersion` and `kind` as a protobuf document.
pub fn encode(obj: &Value) -> Result<Bytes, ApiError> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    encode_as(obj, api_version, kind)
}

/// Encodes `obj` as a document of `api_version`/`kind` (lists and statuses whose JSON does not say).
pub(crate) fn encode_as(obj: &Value, api_version: &str, kind: &str) -> Result<Bytes, ApiError> {
    let message = descriptors::message(api_version, kind)
        .ok_or_else(|| ApiError::Internal(format!("no protobuf message for {api_version} {kind}")))?;
    let raw = convert::encode(&message, obj).map_err(ApiError::Internal)?;
    Ok(Bytes::from(envelope::seal(api_version, kind, &raw)))
}

/// One frame of a protobuf watch stream: the event `kind` (`ADDED`, ...) and its object as a document.
pub(crate) fn watch_frame(event_kind: &str, object: &Value, api_version: &str, kind: &str) -> Result<Bytes, ApiError> {
    let document = encode_as(object, api_version, kind)?;
    Ok(Bytes::from(envelope::watch_frame(event_kind, &document)))
}

/// Reads one frame of a protobuf watch stream back (without its length): the event kind and its object as
/// JSON.
pub fn read_watch_frame(frame: &[u8]) -> Result<(String, Value), String> {
    let (kind, document) = envelope::read_watch_event(frame)?;
    let object = decode(&document, "WatchEvent").map_err(|e| e.to_status().message.unwrap_or_default())?;
    Ok((kind, object))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// kube's `transformDecodeError` when the body names no kind it could read.
fn unrecognized(expected: &str, why: &str, body: &[u8]) -> ApiError {
    let summary = crate::go_text::summarize_data(body, 30);
    ApiError::BadRequest(format!("the object provided is unrecognized (must be of type {expected}): {why} ({summary})"))
}

#[cfg(test)]
mod tests;
